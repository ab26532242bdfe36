//! What the controller knows about one bank.

use crate::Cycle;

#[derive(Clone, Debug, Default)]
pub struct BankState {
    /// The open row, if any.
    pub open_row: Option<u32>,
    /// Cycle of the ACT that opened the current row (needed for auto-precharge timing).
    pub act_cycle: Cycle,
    /// Cycle of the latest ACT or column command (row-policy timeouts count from it).
    pub last_use: Cycle,
    /// Column commands served since the row opened (FR-FCFS-Cap counts them).
    pub hits_since_act: u32,
    /// Requests in either queue that target this bank.
    pub pending: u32,
    /// With `protect_activated`: the request whose ACT opened the row and whose column command
    /// has not issued yet (direction, arrival sequence number).
    pub activated: Option<(usize, u64)>,
}
