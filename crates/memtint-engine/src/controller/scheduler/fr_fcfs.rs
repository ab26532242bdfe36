//! FR-FCFS (Rixner et al., ISCA 2000): row hits first, then oldest first. A row with queued
//! hits is not closed for an older conflicting request.

use super::{no_periods, AgeOrder, Candidate, Scheduler, SchedulerInfo};
use crate::params::ParamSchema;

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "fr-fcfs",
    summary: "row hits first, then oldest (Rixner et al., ISCA 2000)",
    fast_path: true,
    params: ParamSchema::NONE,
    build: |_, _| Ok(Box::new(FrFcfs)),
    periods: no_periods,
};

pub struct FrFcfs;

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn key(&self, c: &Candidate) -> u64 {
        AgeOrder::FrFcfs.key(c)
    }
    fn may_close_row_with_hits(&self, hits_since_act: u32) -> bool {
        AgeOrder::FrFcfs.may_close_row_with_hits(hits_since_act)
    }
    fn age_order(&self) -> Option<AgeOrder> {
        Some(AgeOrder::FrFcfs)
    }
}
