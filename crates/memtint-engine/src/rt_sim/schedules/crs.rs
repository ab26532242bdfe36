//! `crs`: the Colored Refresh Server (Pan thesis ch. 5). Two servers with budgets, each with half
//! the ranks; each half is burst-refreshed once per window (the second server's at 0, the
//! first's at half the window) and its server is locked for that burst; EDF (or rate monotonic,
//! `server_schedule = "rm"`) inside a server (`realtime::crs`).

use super::{colour_bursts, Clock, Plan, RtSchedule, RtScheduleInfo};
use crate::error::Error;
use crate::realtime::schedulability::{self, Verdict};
use crate::realtime::task::Task;
use crate::{Cycle, NEVER};

/// Periods beyond this many units are refused (as the tasks' are).
const MAX_UNITS: u64 = super::super::MAX_UNITS;

pub(super) static INFO: RtScheduleInfo = RtScheduleInfo {
    name: "crs",
    summary: "Colored Refresh Server: two servers, each locked while its half of the ranks is burst-refreshed",
    build: |input| {
        let (tasks, spec, ranks) = (input.tasks, input.spec, input.ranks);
        if spec.servers.len() != 2 {
            return Err(Error::config("servers", format!("crs takes two servers, highest priority first; got {}", spec.servers.len())));
        }
        if ranks < 2 || ranks % 2 != 0 {
            return Err(Error::config("machine", format!("crs splits the ranks into two colours; this machine has {ranks}")));
        }
        let mut colour_of: Vec<Vec<usize>> = vec![vec![]; tasks.len()];
        let mut server_of = vec![0usize; tasks.len()];
        for (si, s) in spec.servers.iter().enumerate() {
            if s.period == 0 || s.budget == 0 || s.budget > s.period || s.period > MAX_UNITS {
                return Err(Error::config(
                    format!("servers[{si}].budget"),
                    format!("must be above 0 and at most its period ({}), got {}", s.period, s.budget),
                ));
            }
            for name in &s.tasks {
                let i = tasks
                    .iter()
                    .position(|t| &t.name == name)
                    .ok_or_else(|| Error::config(format!("servers[{si}].tasks"), format!("no task named '{name}'")))?;
                if !colour_of[i].is_empty() {
                    let other = server_of[i];
                    let where_else = if other == si { "listed twice there".to_string() } else { format!("in servers[{other}] too") };
                    return Err(Error::config(
                        format!("servers[{si}].tasks"),
                        format!("task '{name}' is {where_else}; a task runs in one server, once"),
                    ));
                }
                server_of[i] = si;
                // Colour 0 (refreshed at 0) is the second server's, colour 1 the first's.
                colour_of[i] = vec![1 - si];
            }
        }
        if let Some(i) = colour_of.iter().position(|c| c.is_empty()) {
            return Err(Error::config("servers", format!("task '{}' is in no server", tasks[i].name)));
        }
        let half = ranks / 2;
        let groups = vec![(0..half).collect(), (half..ranks).collect()];
        let plan = Plan {
            colours: 2,
            colour_frame: 0,
            scheme_refresh: colour_bursts(spec, &groups),
            groups,
            colour_of,
            server_of,
            tasks_choose_colours: false,
        };
        let servers = spec.servers.iter().map(|s| (s.period, s.budget)).collect();
        Ok(Box::new(Crs {
            plan,
            servers,
            by_period: spec.server_schedule == "rm",
            window: 0,
            lock: 0,
            budget: vec![0; 2],
            replenish: vec![0; 2],
            period_cycles: vec![0; 2],
            budget_cycles: vec![0; 2],
        }))
    },
};

struct Crs {
    plan: Plan,
    /// Per server: (period, budget), units.
    servers: Vec<(u64, u64)>,
    by_period: bool,
    window: Cycle,
    lock: Cycle,
    budget: Vec<Cycle>,
    replenish: Vec<Cycle>,
    period_cycles: Vec<Cycle>,
    budget_cycles: Vec<Cycle>,
}

impl Crs {
    /// A colour's refresh phase in the window: colour 0 at 0, colour 1 at half the window.
    fn phase(&self, colour: usize) -> Cycle {
        if colour == 0 {
            0
        } else {
            self.window / 2
        }
    }

    fn locked(&self, colour: usize, now: Cycle) -> bool {
        (now + self.window - self.phase(colour) % self.window) % self.window < self.lock
    }
}

impl RtSchedule for Crs {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn start(&mut self, clock: &Clock) {
        self.window = clock.window;
        self.lock = clock.lock;
        for (s, &(period, budget)) in self.servers.iter().enumerate() {
            self.period_cycles[s] = clock.cycles(period as f64);
            self.budget_cycles[s] = clock.cycles(budget as f64);
        }
    }
    fn at(&mut self, now: Cycle) {
        for s in 0..self.servers.len() {
            if self.replenish[s] <= now {
                self.budget[s] = self.budget_cycles[s];
                self.replenish[s] += self.period_cycles[s];
            }
        }
    }
    fn eligible(&self, now: Cycle, colours: &[usize], _instance: usize, server: usize) -> Option<usize> {
        (!self.locked(colours[0], now) && self.budget[server] > 0).then_some(0)
    }
    fn priority(&self, server: usize, deadline: Cycle, period: Cycle) -> (usize, Cycle) {
        (server, if self.by_period { period } else { deadline })
    }
    fn next_boundary(&self, now: Cycle) -> Cycle {
        let mut next = NEVER;
        for c in 0..2 {
            let phase = self.phase(c);
            let k = now.saturating_sub(phase) / self.window;
            for start in [phase + k * self.window, phase + (k + 1) * self.window] {
                for t in [start, start + self.lock] {
                    if t > now {
                        next = next.min(t);
                    }
                }
            }
        }
        next.min(self.replenish.iter().copied().min().unwrap_or(NEVER))
    }
    fn run_until(&self, now: Cycle, server: usize) -> Cycle {
        now + self.budget[server]
    }
    fn ran(&mut self, server: usize, cycles: Cycle) {
        self.budget[server] = self.budget[server].saturating_sub(cycles);
    }
    fn analysis(&self, tasks: &[Task]) -> Vec<(String, Verdict)> {
        // Each server's tasks against its periodic supply; its refresh lock is not counted.
        self.servers
            .iter()
            .enumerate()
            .map(|(s, &(p, e))| {
                let mine: Vec<Task> = tasks.iter().zip(&self.plan.server_of).filter(|(_, &o)| o == s).map(|(t, _)| t.clone()).collect();
                let names: Vec<&str> = mine.iter().map(|t| t.name.as_str()).collect();
                let verdict = if self.by_period {
                    schedulability::rm_in_server(&mine, p as f64, e as f64)
                } else {
                    schedulability::edf_in_server(&mine, p as f64, e as f64)
                };
                (format!("servers[{s}] ({})", names.join(", ")), verdict)
            })
            .collect()
    }
}
