//! memtint's simulation engine.
//!
//! A library with no global state: DRAM devices and their JEDEC timing (`dram`), the general
//! XOR address mapping (`mapping`), one memory controller per channel with pluggable scheduler,
//! row policy and refresh manager (`controller`), an independent timing checker (`checker`),
//! DRAM-level trace readers and generators (`trace`), statistics (`stats`), and the drivers that
//! tie them together (`memory_system`, `dram_sim`). On the CPU side: trace-driven out-of-order
//! cores (`cpu`), their workloads (`workload`) and the caches below them (`cache`).
//! See docs/ARCHITECTURE.md.

pub mod cache;
pub mod checker;
mod closed_loop;
pub mod config;
pub mod controller;
pub mod cpu;
pub mod dram;
pub mod dram_sim;
pub mod error;
pub mod mapping;
pub mod memory_system;
pub mod os;
pub mod presets;
pub mod registry;
pub mod stats;
pub mod system;
pub mod trace;
pub mod vector_isa;
pub mod workload;

pub use error::{Error, Result};

/// The engine's version and a hash of its sources and presets: what cached results are keyed
/// by, so results of an engine that simulates differently are never reused.
pub const MODEL_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("MEMTINT_MODEL_ID"));

/// A point in simulated time: DRAM clock cycles (tCK) in the memory system, core cycles in `cpu`
/// (`cpu::ClockRatio` converts).
pub type Cycle = u64;

/// A cycle that never comes: "no event pending".
pub const NEVER: Cycle = u64::MAX;
