//! Multi-programmed CPU-trace simulation: cores, the shared LLC, the operating-system page
//! allocator and the memory system wired together (the roadmap's capability 2, the experiments
//! of the BPM and HVR papers), and the metrics that compare a shared run with alone runs.

pub mod bank_parallelism;
mod barriers;
pub mod dram_export;
mod inflight_reads;
pub mod memory_hierarchy;
pub mod metrics;
pub mod multicore_sim;
pub mod numa_paths;
pub mod phase_sampling;
pub mod sampling;
pub mod sim_spec;

pub use bank_parallelism::BankParallelismCounters;
pub use dram_export::DramExportSpec;
pub use memory_hierarchy::{CoreMemoryStats, MemoryHierarchy, ThreadMigration};
pub use metrics::{metrics_json, MixMetrics, ProgramSpeed};
pub use multicore_sim::{
    pinned_threads, simulate_multicore, simulate_threads, simulate_threads_checked, simulate_threads_exported, simulate_threads_sampled,
    CoreResult, MulticoreResult, ThreadDef,
};
pub use sim_spec::{run_sim, run_sim_json, SimSpec};
