//! The schedules a real-time run can use, each a component in its own file (`INFO` and one line
//! in `RT_SCHEDULES`): what colours its tasks' pages get and the refresh that goes with them
//! (its `Plan`, before the memory system exists), then at run time which job may run, in what
//! order, and until when.

mod colored;
mod crs;
mod edf;
mod rm;

use super::RtRunSpec;
use crate::realtime::schedulability::Verdict;
use crate::realtime::task::Task;
use crate::registry::{Component, Registry};
use crate::{Cycle, NEVER};
use serde_json::Value;

/// What a schedule is planned from.
pub(crate) struct PlanInput<'a> {
    pub tasks: &'a [Task],
    pub spec: &'a RtRunSpec,
    pub ranks: u32,
    /// The retention window, task units.
    pub retention: u64,
}

/// A schedule's decisions before the run: colours, rank groups and refresh.
pub(crate) struct Plan {
    /// Colours the ranks are split into.
    pub colours: usize,
    /// Units per colour frame (0: no frames).
    pub colour_frame: u64,
    /// The ranks of each colour.
    pub groups: Vec<Vec<u32>>,
    /// Per task: the colour of each of its instances (a copy task has two).
    pub colour_of: Vec<Vec<usize>>,
    /// Per task: its server (0 without servers).
    pub server_of: Vec<usize>,
    /// `[controller]` settings for `refresh = "scheme"` (`Value::Null`: the machine's own).
    pub scheme_refresh: Value,
    /// Tasks may name their own bank colours (`tasks[].colours`).
    pub tasks_choose_colours: bool,
}

/// The run's clock, once the memory system's timing is known.
pub(crate) struct Clock {
    pub cycles_per_unit: f64,
    /// The retention window, DRAM cycles.
    pub window: Cycle,
    /// A colour's refresh burst with its precharge, DRAM cycles.
    pub lock: Cycle,
}

impl Clock {
    pub fn cycles(&self, units: f64) -> Cycle {
        (units * self.cycles_per_unit).round() as Cycle
    }
}

pub(crate) trait RtSchedule {
    fn plan(&self) -> &Plan;
    /// The run starts; times are known.
    fn start(&mut self, _clock: &Clock) {}
    /// Before each decision at `now` (a server's budget comes back).
    fn at(&mut self, _now: Cycle) {}
    /// The instance a job may run in at `now`, if any, given its task's instance colours, the
    /// instance in use and its server.
    fn eligible(&self, now: Cycle, colours: &[usize], instance: usize, server: usize) -> Option<usize>;
    /// Orders the eligible jobs, smallest first: (server, then deadline or period).
    fn priority(&self, server: usize, deadline: Cycle, period: Cycle) -> (usize, Cycle);
    /// The schedule's next decision point after `now` (a frame or lock edge, a replenishment).
    fn next_boundary(&self, _now: Cycle) -> Cycle {
        NEVER
    }
    /// When a job of `server` started at `now` must stop (its server's budget).
    fn run_until(&self, _now: Cycle, _server: usize) -> Cycle {
        NEVER
    }
    /// A job of `server` ran `cycles`.
    fn ran(&mut self, _server: usize, _cycles: Cycle) {}
    /// The task set judged analytically at its declared WCETs: (the tasks judged, verdict),
    /// one per server under servers.
    fn analysis(&self, tasks: &[Task]) -> Vec<(String, Verdict)>;
}

/// A schedule's declaration.
pub(crate) struct RtScheduleInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn(&PlanInput) -> crate::Result<Box<dyn RtSchedule>>,
}

impl Component for RtScheduleInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The real-time schedules, one line each.
pub(crate) static RT_SCHEDULES: Registry<RtScheduleInfo> = Registry::new("schedule", &[&edf::INFO, &rm::INFO, &colored::INFO, &crs::INFO]);

/// Every task's pages over every rank, one colour, the machine's refresh (`edf`, `rm`).
fn whole_machine(input: &PlanInput) -> Plan {
    let n = input.tasks.len();
    Plan {
        colours: 1,
        colour_frame: 0,
        groups: vec![(0..input.ranks).collect()],
        colour_of: vec![vec![0]; n],
        server_of: vec![0; n],
        scheme_refresh: Value::Null,
        tasks_choose_colours: true,
    }
}

/// The colour bursts of `colored` and `crs`: each colour's ranks burst-refreshed once a window.
fn colour_bursts(spec: &RtRunSpec, groups: &[Vec<u32>]) -> Value {
    serde_json::json!({"refresh": "burst", "burst": {
        "retention_ms": spec.retention_ms, "refs_per_window": spec.refs_per_window, "jedec": spec.jedec,
        "groups": groups,
    }})
}
