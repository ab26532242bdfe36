//! CPU-level workloads.
use crate::error::Result;
/// One trace record: `bubbles` non-memory instructions, then one memory instruction (a load of `read`), and optionally a dirty-line writeback address (not an instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuRecord { pub bubbles: u32, pub read: u64, pub writeback: Option<u64> }
pub trait CpuTraceSource: Send {
    fn next_record(&mut self) -> Result<Option<CpuRecord>>;
    /// Start again from the beginning (traces that end early wrap around).
    fn rewind(&mut self) -> Result<()>;
    fn name(&self) -> &str;
}
