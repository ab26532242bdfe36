//! FCFS: the oldest request with an issuable command goes first; row hits get no priority.

use super::{no_periods, AgeOrder, Candidate, Scheduler, SchedulerInfo};
use crate::params::ParamSchema;

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "fcfs",
    summary: "oldest request first",
    fast_path: true,
    params: ParamSchema::NONE,
    build: |_, _| Ok(Box::new(Fcfs)),
    periods: no_periods,
};

pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn key(&self, c: &Candidate) -> u64 {
        AgeOrder::Fcfs.key(c)
    }
    fn age_order(&self) -> Option<AgeOrder> {
        Some(AgeOrder::Fcfs)
    }
}
