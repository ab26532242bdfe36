//! `rm`: rate monotonic, preemptive (the shorter period first); pages as under `edf`. The Pan
//! thesis's ch. 2 deadline test.

use super::{whole_machine, Plan, RtSchedule, RtScheduleInfo};
use crate::realtime::schedulability::{self, Verdict};
use crate::realtime::task::Task;
use crate::Cycle;

pub(super) static INFO: RtScheduleInfo = RtScheduleInfo {
    name: "rm",
    summary: "rate monotonic over every rank, the machine's refresh",
    build: |input| Ok(Box::new(RateMonotonic { plan: whole_machine(input) })),
};

struct RateMonotonic {
    plan: Plan,
}

impl RtSchedule for RateMonotonic {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn eligible(&self, _now: Cycle, _colours: &[usize], _instance: usize, _server: usize) -> Option<usize> {
        Some(0)
    }
    fn priority(&self, _server: usize, _deadline: Cycle, period: Cycle) -> (usize, Cycle) {
        (0, period)
    }
    fn analysis(&self, tasks: &[Task]) -> Vec<(String, Verdict)> {
        vec![("every task".into(), schedulability::rm(tasks))]
    }
}
