//! The cores: a trace-driven out-of-order core model, its configuration, its interface to
//! the memory hierarchy, and the conversion between core and DRAM clocks.

mod clock;
mod core_config;
mod core_memory;
mod ooo_core;
mod slice_queue;

pub use clock::ClockRatio;
pub use core_config::CoreConfig;
pub use core_memory::{CoreMemory, LoadOutcome};
pub use ooo_core::{CoreStats, OooCore, RecordRest};
