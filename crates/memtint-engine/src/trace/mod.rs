//! DRAM-level workloads: trace readers (Ramulator, DRAMSim3 formats; gzip or plain; streamed,
//! never loaded whole) and seeded generators. All implement `TraceSource`.

pub mod dram_trace;
pub mod generator;
pub(crate) mod text_input;

pub use dram_trace::{DramTraceFormat, DramTraceReader};
pub use generator::{GeneratorKind, GeneratorSpec, RequestGenerator};

use crate::error::Result;
use crate::Cycle;

/// One memory request as a workload produces it: a physical byte address (line-aligned by the
/// consumer), read or write, and for timestamped traces the cycle it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramRequest {
    pub addr: u64,
    pub is_write: bool,
    /// Arrival cycle for timestamped traces (DRAMSim3 format); `None` in closed-loop mode.
    pub arrival: Option<Cycle>,
}

/// A stream of requests. `Ok(None)` marks the end; errors carry file, line and reason.
pub trait TraceSource {
    fn next_request(&mut self) -> Result<Option<DramRequest>>;
    /// What a user should know about how the input was read (none by default).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Requests held in memory (tests, and API users who build a workload in code).
pub struct VecSource {
    requests: std::vec::IntoIter<DramRequest>,
}

impl VecSource {
    pub fn new(requests: Vec<DramRequest>) -> Self {
        VecSource { requests: requests.into_iter() }
    }
}

impl TraceSource for VecSource {
    fn next_request(&mut self) -> Result<Option<DramRequest>> {
        Ok(self.requests.next())
    }
}
