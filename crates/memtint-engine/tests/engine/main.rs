//! The engine's integration tests, one module per subject, built as one test binary: each
//! binary links the whole engine, so one binary instead of three dozen cuts the test build's
//! compile and link time. Two suites stay binaries of their own: `fuzz` (`make fuzz` runs it
//! alone, in release) and `example_components` (it registers components in the global
//! registries, which would change what the catalogue tests here see).

mod activated;
mod bpm_direction;
mod checker_mutation;
mod common;
mod dram_timing;
mod dynamic;
mod energy;
mod fidelity;
mod golden;
mod hvr_classes;
mod hvr_online;
mod input_errors;
mod lanes_equal_general;
mod layers;
mod migration;
mod multicore;
mod node_colours;
mod numa;
mod open_mixes;
mod power_down;
mod prefetch;
mod randomized;
mod realtime;
mod refresh;
mod resctrl;
mod row_causes;
mod rt_sim;
mod sampling;
mod scheduler_direction;
mod scheduler_effect;
mod threads;
mod timing_rules;
mod vector_isa;
mod write_drain;
