//! The order of the age-ordered schedulers (FCFS, FR-FCFS, FR-FCFS-Cap) as plain data: their
//! key and their two row rules, without a virtual call. Those schedulers implement `Scheduler`
//! through it, and the lane controller (`controller/lane_controller.rs`) reads it instead of
//! calling the scheduler per candidate, so both controllers order requests by the same code.

use super::{hit_first_key, Candidate};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgeOrder {
    /// Oldest first; row hits get no priority.
    Fcfs,
    /// Row hits first, then oldest first; a row with queued hits is not closed.
    FrFcfs,
    /// FR-FCFS until a row has served `cap` column commands since its ACT.
    FrFcfsCap { cap: u32 },
}

impl AgeOrder {
    /// Key of a candidate (smaller issues first): `Scheduler::key`.
    #[inline(always)]
    pub fn key(self, c: &Candidate) -> u64 {
        match self {
            AgeOrder::Fcfs => c.seq,
            AgeOrder::FrFcfs | AgeOrder::FrFcfsCap { .. } => hit_first_key(c),
        }
    }

    /// `key` of a candidate that is a hit (`is_hit`, as `hit_counts_as_hit` says) for the
    /// request of arrival order `seq`: the only fields these keys read.
    #[inline(always)]
    pub fn key_of(self, is_hit: bool, seq: u64) -> u64 {
        let c = Candidate { command: crate::dram::Command::Act, is_hit, flat_bank: 0, arrival: 0, seq, source: 0, process: 0 };
        self.key(&c)
    }

    /// `Scheduler::may_close_row_with_hits`.
    #[inline(always)]
    pub fn may_close_row_with_hits(self, hits_since_act: u32) -> bool {
        match self {
            AgeOrder::Fcfs => true,
            AgeOrder::FrFcfs => false,
            AgeOrder::FrFcfsCap { cap } => hits_since_act >= cap,
        }
    }

    /// `Scheduler::hit_counts_as_hit`.
    #[inline(always)]
    pub fn hit_counts_as_hit(self, hits_since_act: u32) -> bool {
        match self {
            AgeOrder::FrFcfsCap { cap } => hits_since_act < cap,
            _ => true,
        }
    }

    /// Candidates a bank may offer at once: two when a row may be closed under its hits (the
    /// oldest hit's column command and the oldest non-hit's PRE), else one.
    pub fn candidates_per_bank(self) -> usize {
        match self {
            AgeOrder::FrFcfs => 1,
            AgeOrder::Fcfs | AgeOrder::FrFcfsCap { .. } => 2,
        }
    }
}
