//! FR-FCFS (Rixner et al., ISCA 2000): row hits first, then oldest first. A row with queued
//! hits is not closed for an older conflicting request.

use super::{hit_first_key, Candidate, Scheduler};

pub struct FrFcfs;

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "fr-fcfs"
    }
    fn key(&self, c: &Candidate) -> u64 {
        hit_first_key(c)
    }
    fn may_close_row_with_hits(&self, _hits_since_act: u32) -> bool {
        false
    }
}
