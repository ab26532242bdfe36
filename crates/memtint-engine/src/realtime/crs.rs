//! The Colored Refresh Server's top-level schedule (Pan thesis §5.2), step by step in one
//! integer time unit: servers in fixed priority order, each with a budget replenished every
//! period (no carry-over) and a colour (a set of ranks); once per retention window each
//! colour is locked for the burst that refreshes its ranks (the lock and unlock tasks, whose
//! own cost is left out). A server runs when it has budget, a ready job and its colour is not
//! locked; inside it, jobs are chosen by RM (shortest period) or EDF (earliest deadline).
//!
//! The thesis's experiment refreshes S2's colour at phase 0 and S1's at half the window
//! (`two_servers`); its §5.3.8 swaps them (`pan-camc-tintmalloc-refresh.md` §8.4).

use super::task::{validate, Task};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Rm,
    Edf,
}

#[derive(Clone, Debug)]
pub struct Server {
    pub name: String,
    pub tasks: Vec<Task>,
    pub policy: Policy,
    pub period: u64,
    pub budget: u64,
    /// When its colour's burst starts in each retention window.
    pub lock_phase: u64,
}

/// Who ran in one time unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    Idle,
    /// Server index and the task (its index in the server) it ran.
    Run(usize, usize),
}

#[derive(Clone, Debug)]
pub struct CrsSchedule {
    pub slots: Vec<Slot>,
    /// (server, task, release) of each job that missed its deadline.
    pub misses: Vec<(usize, usize, u64)>,
    /// Units a server had budget and a ready job but its colour was locked: refresh the
    /// schedule could not hide (the thesis's ε).
    pub blocked_by_refresh: Vec<u64>,
}

/// Two servers, S1 above S2, with the thesis's lock phases: S2's colour at 0, S1's at R / 2.
pub fn two_servers(s1: (Vec<Task>, Policy, u64, u64), s2: (Vec<Task>, Policy, u64, u64), retention: u64) -> Vec<Server> {
    let server = |name: &str, (tasks, policy, period, budget): (Vec<Task>, Policy, u64, u64), lock_phase| Server {
        name: name.into(),
        tasks,
        policy,
        period,
        budget,
        lock_phase,
    };
    vec![server("S1", s1, retention / 2), server("S2", s2, 0)]
}

/// Runs `servers` (highest priority first) for `horizon` units, each colour locked for `lock`
/// units from its phase in every window of `retention`.
pub fn simulate(servers: &[Server], retention: u64, lock: u64, horizon: u64) -> Result<CrsSchedule> {
    for (i, s) in servers.iter().enumerate() {
        validate(&s.tasks).map_err(|e| match e {
            Error::Config { field, reason } => Error::config(format!("servers[{i}].{field}"), reason),
            e => e,
        })?;
        if s.period == 0 || s.budget == 0 || s.budget > s.period {
            return Err(Error::config(
                format!("servers[{i}].budget"),
                format!("{}: must be above 0 and at most its period ({}), got {}", s.name, s.period, s.budget),
            ));
        }
    }
    if retention == 0 || lock >= retention {
        return Err(Error::config("lock", format!("the refresh lock ({lock}) must be shorter than the retention window ({retention})")));
    }
    // Per server: budget left, and its jobs (task, release, deadline, work left).
    let mut budget = vec![0u64; servers.len()];
    let mut jobs: Vec<Vec<(usize, u64, u64, u64)>> = vec![Vec::new(); servers.len()];
    let mut out =
        CrsSchedule { slots: Vec::with_capacity(horizon as usize), misses: Vec::new(), blocked_by_refresh: vec![0; servers.len()] };
    for t in 0..horizon {
        for (i, s) in servers.iter().enumerate() {
            if t % s.period == 0 {
                budget[i] = s.budget;
            }
            for (k, task) in s.tasks.iter().enumerate() {
                if t >= task.phase && (t - task.phase) % task.period == 0 {
                    jobs[i].push((k, t, t + task.deadline, task.wcet));
                }
            }
            jobs[i].retain(|&(k, release, deadline, left)| {
                let missed = left > 0 && deadline <= t;
                if missed {
                    out.misses.push((i, k, release));
                }
                left > 0 && !missed
            });
        }
        let mut slot = Slot::Idle;
        for (i, s) in servers.iter().enumerate() {
            if budget[i] == 0 || jobs[i].is_empty() {
                continue;
            }
            if (t + retention - s.lock_phase % retention) % retention < lock {
                out.blocked_by_refresh[i] += 1;
                continue;
            }
            let pick = match s.policy {
                Policy::Rm => jobs[i].iter().enumerate().min_by_key(|(_, j)| (s.tasks[j.0].period, j.0, j.1)),
                Policy::Edf => jobs[i].iter().enumerate().min_by_key(|(_, j)| (j.2, j.0, j.1)),
            }
            .map(|(n, _)| n)
            .expect("a job is ready");
            jobs[i][pick].3 -= 1;
            budget[i] -= 1;
            slot = Slot::Run(i, jobs[i][pick].0);
            if jobs[i][pick].3 == 0 {
                jobs[i].remove(pick);
            }
            break;
        }
        out.slots.push(slot);
    }
    Ok(out)
}
