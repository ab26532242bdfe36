//! memtint's simulation engine, in layers (each imports only its own layer and lower ones;
//! `tests/engine/layers.rs` checks it). See docs/ARCHITECTURE.md.
//!
//! A library whose only global state is the component registries (`registry`), which a program
//! using it may extend, and the flag that stops runs from outside (`interrupt`).

// Drivers: what users run. A DRAM-trace run (`dram_sim`, with the bookkeeping and report the
// multicore run shares), a multicore CPU-trace run (`multicore`), the preset and component
// catalogue, the colour layouts the Linux tools use, and the simulated mapping probe.
pub mod catalogue;
pub mod dram_sim;
pub mod linux_layout;
pub mod mapping_probe;
pub mod multicore;
pub mod rt_sim;

// The memory system: the channels' controllers behind one address mapping.
pub mod memory_system;

// Configuration: machines as written (TOML) and resolved, and the embedded presets.
pub mod config;
pub mod presets;

// The host: workloads and their traces, out-of-order cores, caches, the OS model (page
// placement, scheduling).
pub mod cache;
pub mod cpu;
pub mod os;
pub mod realtime;
pub mod trace;
pub mod workload;

// DRAM: controllers (schedulers, row policies, refresh), the independent timing checker,
// address mapping, statistics, devices and their timing rules.
pub mod checker;
pub mod controller;
pub mod dram;
pub mod mapping;
pub mod stats;

// Plumbing.
pub mod error;
pub mod interrupt;
pub mod params;
pub mod registry;
pub mod vector_isa;

pub use error::{Error, Result};

/// The engine's version and a hash of its sources and presets: what cached results are keyed
/// by, so results of an engine that simulates differently are never reused.
pub const MODEL_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("MEMTINT_MODEL_ID"));

/// A point in simulated time: DRAM clock cycles (tCK) in the memory system, core cycles in `cpu`
/// (`cpu::ClockRatio` converts).
pub type Cycle = u64;

/// A cycle that never comes: "no event pending".
pub const NEVER: Cycle = u64::MAX;
