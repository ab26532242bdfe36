//! A memory request inside a controller, and its completion.

use crate::stats::RowCause;
use crate::Cycle;

/// How a request found its bank when its first command issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOutcome {
    /// The row was open: a column command was enough.
    Hit,
    /// The bank was closed: ACT, then the column command.
    Miss,
    /// Another row was open: PRE, ACT, then the column command.
    Conflict,
}

/// Who issued a request: the scheduling entity (`source`: a hardware thread, a core, or a DRAM
/// trace's stream) and the process whose address space it belongs to. Both travel with the request
/// from the front end to its completion, for application-aware schedulers and per-process statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    pub source: u32,
    pub process: u32,
}

impl Origin {
    /// A source that is its own process (a single-threaded program, a DRAM trace stream).
    pub fn single(source: u32) -> Self {
        Origin { source, process: source }
    }
}

/// A request queued at a channel controller, with its DRAM coordinates decoded once.
#[derive(Clone, Debug)]
pub struct Request {
    pub id: u64,
    /// Arrival order at this controller (ties in `arrival` broken by it): smaller is older.
    pub seq: u64,
    pub addr: u64,
    pub is_write: bool,
    /// Issuing agent (core, thread or trace); carried for application-aware schedulers.
    pub source: u32,
    /// The issuing agent's process (address space).
    pub process: u32,
    pub rank: u32,
    /// Bank group index within the channel (rank * bank_groups + group).
    pub group: u32,
    /// Bank index within the channel (rank * banks_per_rank + group * banks_per_group + bank).
    pub flat_bank: u32,
    pub row: u32,
    pub column: u32,
    /// Cycle the request entered the controller's queue.
    pub arrival: Cycle,
    /// First cycle the scheduler may consider it (arrival + front-end latency).
    pub ready_at: Cycle,
    pub outcome: Option<RowOutcome>,
    /// Who left the bank as the request found it (set with `outcome`).
    pub cause: RowCause,
}

/// A request whose data transfer has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub id: u64,
    pub source: u32,
    pub process: u32,
    pub is_write: bool,
    pub arrival: Cycle,
    /// Cycle the last data beat left the bus.
    pub done: Cycle,
    /// How the request found its bank (per-source row-buffer statistics are built from it).
    pub outcome: RowOutcome,
    /// Who left the bank so (per-process interference statistics are built from it).
    pub cause: RowCause,
    /// Its wait overlapped its rank's refresh (`RefreshState::met`).
    pub met_refresh: bool,
}
