//! `edf`: earliest deadline first, each task's pages spread over every rank (or in the bank
//! colours it names); the machine's refresh. The auto-refresh baseline.

use super::{whole_machine, Plan, RtSchedule, RtScheduleInfo};
use crate::realtime::schedulability::{self, Verdict};
use crate::realtime::task::Task;
use crate::Cycle;

pub(super) static INFO: RtScheduleInfo = RtScheduleInfo {
    name: "edf",
    summary: "earliest deadline first over every rank, the machine's refresh",
    build: |input| Ok(Box::new(Edf { plan: whole_machine(input) })),
};

struct Edf {
    plan: Plan,
}

impl RtSchedule for Edf {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn eligible(&self, _now: Cycle, _colours: &[usize], _instance: usize, _server: usize) -> Option<usize> {
        Some(0)
    }
    fn priority(&self, _server: usize, deadline: Cycle, _period: Cycle) -> (usize, Cycle) {
        (0, deadline)
    }
    fn analysis(&self, tasks: &[Task]) -> Vec<(String, Verdict)> {
        vec![("every task".into(), schedulability::edf(tasks))]
    }
}
