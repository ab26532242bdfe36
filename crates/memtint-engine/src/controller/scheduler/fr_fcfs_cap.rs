//! FR-FCFS-Cap (Mutlu & Moscibroda, MICRO 2007): FR-FCFS, but once a row has served `cap`
//! column commands since it was opened, its hits lose priority and it may be closed, so a
//! stream of hits cannot starve older requests to the same bank.

use super::{hit_first_key, Candidate, Scheduler};

pub struct FrFcfsCap {
    cap: u32,
}

impl FrFcfsCap {
    pub fn new(cap: u32) -> Self {
        FrFcfsCap { cap }
    }
}

impl Scheduler for FrFcfsCap {
    fn name(&self) -> &'static str {
        "fr-fcfs-cap"
    }
    fn key(&self, c: &Candidate) -> u64 {
        hit_first_key(c)
    }
    fn may_close_row_with_hits(&self, hits_since_act: u32) -> bool {
        hits_since_act >= self.cap
    }
    fn hit_counts_as_hit(&self, hits_since_act: u32) -> bool {
        hits_since_act < self.cap
    }
}
