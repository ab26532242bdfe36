//! What a core sees of the memory hierarchy: loads and dirty-line writebacks by virtual
//! address. The driver behind it translates addresses, looks up the caches and queues misses.

use crate::error::Result;
use crate::Cycle;

/// The answer to a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadOutcome {
    /// Served at a known latency (a cache hit); no `complete` will follow.
    Done { latency: u64 },
    /// Sent to memory; the driver calls `OooCore::complete(token)` when the data arrives.
    Pending,
    /// Not accepted (MSHRs or queues full): the core retries at `retry_at`.
    Refused,
}

pub trait CoreMemory {
    /// A load of virtual address `vaddr` by `core` at core cycle `now`.
    fn load(&mut self, core: u32, vaddr: u64, token: u64, now: Cycle) -> Result<LoadOutcome>;

    /// A dirty-line writeback; false if refused (the core retries at `retry_at`).
    fn writeback(&mut self, core: u32, vaddr: u64, now: Cycle) -> Result<bool>;

    /// After a refusal at `now`, the first cycle worth retrying. The default polls every
    /// cycle; a driver that knows when space frees up can return that cycle and let the
    /// core skip the wait (values not after `now` are taken as `now + 1`).
    fn retry_at(&self, _core: u32, now: Cycle) -> Cycle {
        now + 1
    }
}
