//! FR-FCFS (Rixner et al., ISCA 2000): row hits first, then oldest first. A row with queued
//! hits is not closed for an older conflicting request.

use super::{Candidate, Scheduler};
use crate::Cycle;

pub struct FrFcfs;

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "fr-fcfs"
    }
    fn select(&mut self, _now: Cycle, ready: &[Candidate]) -> usize {
        ready.iter().position(|c| c.is_hit).unwrap_or(0)
    }
    fn may_close_row_with_hits(&self, _hits_since_act: u32) -> bool {
        false
    }
}
