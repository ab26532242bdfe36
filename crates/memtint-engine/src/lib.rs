//! memtint's simulation engine.
//!
//! A library with no global state: DRAM devices and their JEDEC timing (`dram`), the general
//! XOR address mapping (`mapping`), one memory controller per channel with pluggable scheduler,
//! row policy and refresh manager (`controller`), an independent timing checker (`checker`),
//! DRAM-level trace readers and generators (`trace`), statistics (`stats`), and the drivers that
//! tie them together (`memory_system`, `dram_sim`). See docs/ARCHITECTURE.md.

pub mod checker;
pub mod config;
pub mod controller;
pub mod dram;
pub mod dram_sim;
pub mod error;
pub mod mapping;
pub mod memory_system;
pub mod presets;
pub mod stats;
pub mod trace;
pub mod workload;

pub use error::{Error, Result};

/// A point in simulated time, counted in DRAM clock cycles (tCK).
pub type Cycle = u64;

/// A cycle that never comes: "no event pending".
pub const NEVER: Cycle = u64::MAX;
