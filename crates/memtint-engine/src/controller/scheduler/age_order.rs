//! The order of the age-ordered schedulers (FCFS, FR-FCFS, FR-FCFS-Cap) as plain data: their
//! key and their two row rules, without a virtual call. Those schedulers implement `Scheduler`
//! through it, and the lane controller (`controller/lane_controller.rs`) reads it instead of
//! calling the scheduler per candidate, so both controllers order requests by the same code.

use super::{hit_first_key, Candidate};

/// Ages `AgeOrder::lane_key` takes are below this.
pub const LANE_AGES: u32 = (1 << 22) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgeOrder {
    /// Oldest first; row hits get no priority (a bank serves its requests in arrival order).
    Fcfs,
    /// Row hits first, then oldest first; a row with queued hits is not closed.
    FrFcfs,
    /// FR-FCFS until a row has served `cap` column commands since its ACT; then the bank's
    /// oldest request first, as FCFS.
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

    /// `key_of` in 23 bits, below `lanes::FIRST_KEYS` (the lane controller puts its activated
    /// requests before these keys), for a request whose age (its rank in arrival order among
    /// the requests it is compared with) is below `LANE_AGES`: ordered as `key_of` with the
    /// same hit flags.
    #[inline(always)]
    pub fn lane_key(self, is_hit: bool, age: u32) -> u32 {
        debug_assert!(age < LANE_AGES);
        match self {
            AgeOrder::Fcfs => age,
            AgeOrder::FrFcfs | AgeOrder::FrFcfsCap { .. } => ((!is_hit as u32) << 22) | age,
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::lanes::FIRST_KEYS;

    #[test]
    fn lane_keys_order_as_keys_and_fit_the_lanes() {
        let orders = [AgeOrder::Fcfs, AgeOrder::FrFcfs, AgeOrder::FrFcfsCap { cap: 4 }];
        let ages = [0, 1, 2, 1000, LANE_AGES - 2, LANE_AGES - 1];
        for order in orders {
            for (a, b) in ages.iter().flat_map(|&a| ages.iter().map(move |&b| (a, b))) {
                for (ha, hb) in [(false, false), (false, true), (true, false), (true, true)] {
                    let (lane, wide) =
                        (order.lane_key(ha, a).cmp(&order.lane_key(hb, b)), order.key_of(ha, a as u64).cmp(&order.key_of(hb, b as u64)));
                    assert_eq!(lane, wide, "{order:?}: ({ha}, {a}) against ({hb}, {b})");
                }
                assert!(order.lane_key(false, a) < FIRST_KEYS);
            }
        }
    }
}
