//! A channel controller's refresh bookkeeping, shared by both implementations: which ranks wait
//! for a REF (blocked to requests until it issues), when the manager next wants one, and each
//! rank's latest refresh block, so a request can be told it met one.

use super::{RefreshManager, RefreshObligation};
use crate::{Cycle, NEVER};

pub(crate) struct RefreshState {
    pub manager: Box<dyn RefreshManager>,
    /// `manager.next_due()`, read every tick; changes only when a REF issues.
    pub next_due: Cycle,
    /// Per rank: waiting for a REF (requests to it are held back).
    pub pending: Vec<bool>,
    /// Ranks waiting.
    pub count: u32,
    postpones: bool,
    pulls_in: bool,
    t_rfc: u64,
    /// Per rank: when its latest refresh block began (its REF fell due) and ends (tRFC after
    /// its last REF; `NEVER` while it waits). A burst's REFs, back to back, are one block.
    block: Vec<(Cycle, Cycle)>,
}

impl RefreshState {
    pub fn new(manager: Box<dyn RefreshManager>, ranks: u32, t_rfc: u64) -> Self {
        RefreshState {
            next_due: manager.next_due(),
            postpones: manager.postpones(),
            pulls_in: manager.pulls_in(),
            manager,
            pending: vec![false; ranks as usize],
            count: 0,
            t_rfc,
            block: vec![(NEVER, 0); ranks as usize],
        }
    }

    /// Marks the ranks whose REF is due at `now` as waiting, calling `on_pending` for each;
    /// a manager that postpones lets a rank with requests queued (`busy`) wait, and one that
    /// pulls in takes an idle rank's next REF early when it offers to.
    #[inline]
    pub fn mark_due(&mut self, now: Cycle, busy: impl Fn(usize) -> bool, mut on_pending: impl FnMut(usize)) {
        for r in 0..self.pending.len() {
            if self.pending[r] {
                continue;
            }
            if self.manager.due(r as u32) > now {
                if !(self.pulls_in && self.manager.pull_in_at(r as u32) <= now) {
                    continue;
                }
                if busy(r) {
                    self.manager.pull_in_declined(r as u32);
                    self.next_due = self.manager.next_due();
                    continue;
                }
            } else if self.postpones && self.manager.may_postpone(r as u32, now) && busy(r) {
                continue;
            }
            self.pending[r] = true;
            self.count += 1;
            let block = &mut self.block[r];
            // A REF falling due within tRFC of the last continues its block (a burst).
            if block.0 == NEVER || block.1 < now {
                block.0 = now;
            }
            block.1 = NEVER;
            on_pending(r);
        }
    }

    /// A REF issued to rank `r` at `now`.
    #[inline]
    pub fn refreshed(&mut self, r: usize, now: Cycle) {
        self.pending[r] = false;
        self.count -= 1;
        self.block[r].1 = now + self.t_rfc;
        self.manager.refreshed(r as u32, now);
        self.next_due = self.manager.next_due();
    }

    /// The next cycle after `now` at which a rank not already waiting may need a REF.
    #[inline]
    pub fn next_event(&self, now: Cycle) -> Cycle {
        if self.count == 0 {
            return self.next_due.max(now + 1);
        }
        let mut next = NEVER;
        for r in 0..self.pending.len() {
            if !self.pending[r] {
                next = next.min(self.manager.due(r as u32));
                if self.pulls_in {
                    next = next.min(self.manager.pull_in_at(r as u32));
                }
            }
        }
        next.max(now + 1)
    }

    /// Whether a request to `rank` that arrived at `arrival` and is served at `now` met a
    /// refresh: its wait overlapped its rank's latest refresh block.
    #[inline]
    pub fn met(&self, rank: usize, arrival: Cycle, now: Cycle) -> bool {
        let (start, end) = self.block[rank];
        arrival < end && now > start
    }

    pub fn obligation(&self) -> RefreshObligation {
        self.manager.obligation()
    }
}
