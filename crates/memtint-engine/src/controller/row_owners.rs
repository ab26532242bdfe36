//! Who left each bank of a channel as it is: the process whose request opened its row (set at
//! ACT) and the process whose request needed its last precharge (none for refresh's PREA and
//! the row policy's closes, and before the first). A request's `RowCause` is read here when its
//! row outcome is decided; both controllers keep one, so their statistics stay equal.

use super::RowOutcome;
use crate::stats::RowCause;

/// No process: the controller closed the bank (refresh, row policy), or it was never opened.
const NOBODY: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct RowOwners {
    /// Per bank: the process whose request's ACT opened the current (or last) row.
    opened_by: Vec<u32>,
    /// Per bank: the process whose request's PRE closed it last, or `NOBODY`.
    closed_by: Vec<u32>,
}

impl RowOwners {
    pub fn new(banks: usize) -> Self {
        RowOwners { opened_by: vec![NOBODY; banks], closed_by: vec![NOBODY; banks] }
    }

    /// An ACT for a request of `process` opened bank `b`'s row.
    #[inline(always)]
    pub fn activated(&mut self, b: usize, process: u32) {
        self.opened_by[b] = process;
    }

    /// A PRE for a request of `process` closed bank `b`.
    #[inline(always)]
    pub fn precharged_for(&mut self, b: usize, process: u32) {
        self.closed_by[b] = process;
    }

    /// The controller closed bank `b` on its own: refresh's PREA, or the row policy (an idle
    /// timeout, an auto-precharge).
    #[inline(always)]
    pub fn closed_by_controller(&mut self, b: usize) {
        self.closed_by[b] = NOBODY;
    }

    /// The cause of `outcome` for a request of `process` to bank `b`, read before its first
    /// command changes the bank.
    #[inline(always)]
    pub fn cause(&self, b: usize, outcome: RowOutcome, process: u32) -> RowCause {
        match outcome {
            RowOutcome::Hit => RowCause::Hit,
            RowOutcome::Conflict if self.opened_by[b] == process => RowCause::ConflictBySelf,
            RowOutcome::Conflict => RowCause::ConflictByOther,
            RowOutcome::Miss => match self.closed_by[b] {
                NOBODY => RowCause::MissAfterRefreshOrPolicy,
                p if p == process => RowCause::MissAfterSelf,
                _ => RowCause::MissAfterOther,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_names_who_opened_the_row_and_a_miss_who_closed_the_bank() {
        let mut o = RowOwners::new(2);
        assert_eq!(o.cause(0, RowOutcome::Miss, 3), RowCause::MissAfterRefreshOrPolicy, "never opened");
        o.activated(0, 3);
        assert_eq!(o.cause(0, RowOutcome::Conflict, 3), RowCause::ConflictBySelf);
        assert_eq!(o.cause(0, RowOutcome::Conflict, 4), RowCause::ConflictByOther);
        o.precharged_for(0, 4);
        assert_eq!(o.cause(0, RowOutcome::Miss, 4), RowCause::MissAfterSelf);
        assert_eq!(o.cause(0, RowOutcome::Miss, 3), RowCause::MissAfterOther);
        o.closed_by_controller(0);
        assert_eq!(o.cause(0, RowOutcome::Miss, 4), RowCause::MissAfterRefreshOrPolicy);
        assert_eq!(o.cause(1, RowOutcome::Hit, 4), RowCause::Hit);
    }
}
