//! A channel controller's refresh bookkeeping, shared by both implementations: which targets
//! (ranks, or banks under a per-bank manager) wait for a refresh (blocked to requests until it
//! issues), when the manager next wants one, and each target's latest refresh block, so a
//! request can be told it met one.

use super::{RefreshManager, RefreshObligation, RefreshTargets};
use crate::dram::{Command, Organisation};
use crate::{Cycle, NEVER};

/// Targets are ranks, banks or bank indices (`RefreshTargets`).
#[derive(Clone, Copy)]
pub(crate) struct TargetLayout {
    targets: RefreshTargets,
    banks_per_rank: usize,
    banks_per_group: usize,
}

impl TargetLayout {
    /// The channel banks (flat indices) target `t` covers, lowest first.
    #[inline]
    pub fn banks(self, t: usize) -> impl Iterator<Item = usize> {
        let (bpr, bpg) = (self.banks_per_rank, self.banks_per_group);
        let (first, count, step) = match self.targets {
            RefreshTargets::Ranks => (t * bpr, bpr, 1),
            RefreshTargets::Banks => (t, 1, 1),
            RefreshTargets::BankIndices => (t / bpg * bpr + t % bpg, bpr / bpg, bpg),
        };
        (0..count).map(move |i| first + i * step)
    }

    /// The target whose refresh holds bank `b`.
    #[inline]
    pub fn target_of(self, b: usize) -> usize {
        match self.targets {
            RefreshTargets::Ranks => b / self.banks_per_rank,
            RefreshTargets::Banks => b,
            RefreshTargets::BankIndices => b / self.banks_per_rank * self.banks_per_group + b % self.banks_per_group,
        }
    }
}

pub(crate) struct RefreshState {
    pub manager: Box<dyn RefreshManager>,
    /// `manager.next_due()`, read every tick; changes only when a refresh issues.
    pub next_due: Cycle,
    /// Per target: waiting for a refresh (requests to it are held back).
    pub pending: Vec<bool>,
    /// Targets waiting.
    pub count: u32,
    /// What the targets are.
    pub targets: RefreshTargets,
    /// Per bank group of the channel: the banks held back for refresh (bit `bank within group`,
    /// as `CandidateSet` numbers its members): those waiting for one, or every bank while any
    /// target waits when the refresh holds the channel.
    pub blocked_banks: Vec<u64>,
    /// A waiting refresh holds every bank of the channel (`RefreshHold::Channel`), not only its
    /// target's.
    holds_channel: bool,
    banks_per_rank: usize,
    banks_per_group: usize,
    postpones: bool,
    pulls_in: bool,
    t_rfc: u64,
    /// Per target: when its latest refresh block began (its refresh fell due) and ends (tRFC
    /// after its last refresh; `NEVER` while it waits). A burst's REFs, back to back, are one
    /// block.
    block: Vec<(Cycle, Cycle)>,
}

impl RefreshState {
    /// `t_rfc`: how long one refresh holds its target (tRFC, or tRFCpb per bank);
    /// `holds_channel`: a waiting refresh holds every bank back, not only its target's.
    pub fn new(manager: Box<dyn RefreshManager>, org: &Organisation, t_rfc: u64, holds_channel: bool) -> Self {
        let targets = manager.targets();
        let count = match targets {
            RefreshTargets::Ranks => org.ranks,
            RefreshTargets::Banks => org.ranks * org.banks_per_rank(),
            RefreshTargets::BankIndices => org.ranks * org.banks_per_group,
        } as usize;
        RefreshState {
            next_due: manager.next_due(),
            postpones: manager.postpones(),
            pulls_in: manager.pulls_in(),
            manager,
            pending: vec![false; count],
            count: 0,
            targets,
            blocked_banks: vec![0; (org.ranks * org.bank_groups) as usize],
            holds_channel,
            banks_per_rank: org.banks_per_rank() as usize,
            banks_per_group: org.banks_per_group as usize,
            t_rfc,
            block: vec![(NEVER, 0); count],
        }
    }

    /// Whether targets are banks or bank indices (a bank refresh command) rather than ranks.
    #[inline]
    pub fn per_bank(&self) -> bool {
        self.targets != RefreshTargets::Ranks
    }

    /// The command that refreshes a target: REF, REFPB or REFSB.
    pub fn command(&self) -> Command {
        match self.targets {
            RefreshTargets::Ranks => Command::Ref,
            RefreshTargets::Banks => Command::RefPb,
            RefreshTargets::BankIndices => Command::RefSb,
        }
    }

    /// How targets map to banks, apart from the state (for closures beside `mark_due`).
    #[inline]
    pub fn layout(&self) -> TargetLayout {
        TargetLayout { targets: self.targets, banks_per_rank: self.banks_per_rank, banks_per_group: self.banks_per_group }
    }

    /// The target whose refresh holds bank `b` (flat within the channel).
    #[inline]
    pub fn target_of(&self, b: usize) -> usize {
        self.layout().target_of(b)
    }

    /// Whether bank `b` waits for refresh (its own, or its rank's).
    #[inline]
    pub fn bank_blocked(&self, b: usize) -> bool {
        self.pending[self.target_of(b)]
    }

    /// Whether a waiting refresh holds every bank of the channel back.
    #[inline]
    pub fn holds_channel(&self) -> bool {
        self.holds_channel
    }

    /// Target `t` starts (`blocked`) or stops waiting: its banks are held back or released,
    /// or, when refresh holds the channel, every bank as the first target starts or the last
    /// stops (`count` already counts the change).
    fn set_blocked(&mut self, t: usize, blocked: bool) {
        if self.holds_channel {
            if self.count == blocked as u32 {
                let all = if self.banks_per_group >= 64 { u64::MAX } else { (1u64 << self.banks_per_group) - 1 };
                self.blocked_banks.fill(if blocked { all } else { 0 });
            }
            return;
        }
        let bpg = self.banks_per_group;
        for b in self.layout().banks(t) {
            let bit = 1u64 << (b % bpg);
            let g = &mut self.blocked_banks[b / bpg];
            if blocked {
                *g |= bit;
            } else {
                *g &= !bit;
            }
        }
    }

    /// Marks the targets whose refresh is due at `now` as waiting, calling `on_pending` for
    /// each; a manager that postpones lets a target with requests queued (`busy`) wait, and
    /// one that pulls in takes an idle target's next refresh early when it offers to.
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
            self.set_blocked(r, true);
            let block = &mut self.block[r];
            // A refresh falling due within tRFC of the last continues its block (a burst).
            if block.0 == NEVER || block.1 < now {
                block.0 = now;
            }
            block.1 = NEVER;
            on_pending(r);
        }
    }

    /// A refresh issued to target `r` at `now`.
    #[inline]
    pub fn refreshed(&mut self, r: usize, now: Cycle) {
        self.pending[r] = false;
        self.count -= 1;
        self.set_blocked(r, false);
        self.block[r].1 = now + self.t_rfc;
        self.manager.refreshed(r as u32, now);
        self.next_due = self.manager.next_due();
    }

    /// The next cycle after `now` at which a target not already waiting may need a refresh.
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

    /// Whether a request to bank `b` (flat within the channel) that arrived at `arrival` and
    /// is served at `now` met a refresh: its wait overlapped its target's latest refresh block.
    #[inline]
    pub fn met(&self, b: usize, arrival: Cycle, now: Cycle) -> bool {
        let (start, end) = self.block[self.target_of(b)];
        arrival < end && now > start
    }

    /// How long one refresh holds its target (tRFC, or tRFCpb per bank).
    pub fn t_rfc(&self) -> u64 {
        self.t_rfc
    }

    pub fn obligation(&self) -> RefreshObligation {
        self.manager.obligation()
    }
}
