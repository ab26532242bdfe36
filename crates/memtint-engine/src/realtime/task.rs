//! Periodic real-time tasks T = (φ, p, e, D): phase, period, worst-case execution time and
//! relative deadline, in one integer time unit the caller chooses (µs for the thesis's task
//! sets, whose figures are tenths of a millisecond).

use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub name: String,
    pub phase: u64,
    pub period: u64,
    pub wcet: u64,
    pub deadline: u64,
}

impl Task {
    /// A task released at 0 with its deadline at the end of its period.
    pub fn new(name: &str, period: u64, wcet: u64) -> Self {
        Task { name: name.into(), phase: 0, period, wcet, deadline: period }
    }

    pub fn utilisation(&self) -> f64 {
        self.wcet as f64 / self.period as f64
    }
}

pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub fn lcm(a: u64, b: u64) -> u64 {
    // Saturates: a hyperperiod beyond u64 is "too long" to every caller, which bounds it.
    (a / gcd(a, b)).saturating_mul(b)
}

/// The least common multiple of the periods.
pub fn hyperperiod(tasks: &[Task]) -> u64 {
    tasks.iter().fold(1, |h, t| lcm(h, t.period))
}

pub fn utilisation(tasks: &[Task]) -> f64 {
    tasks.iter().map(Task::utilisation).sum()
}

/// EDF demand of `tasks` released together, over `[0, t]`: Σ max(0, ⌊(t − D) / p⌋ + 1) · e.
pub fn demand(tasks: &[Task], t: u64) -> u64 {
    tasks.iter().filter(|k| t >= k.deadline).map(|k| ((t - k.deadline) / k.period + 1) * k.wcet).sum()
}

/// How many absolute deadlines `tasks` released together have below `limit`.
pub fn deadline_count(tasks: &[Task], limit: u64) -> u64 {
    tasks.iter().map(|k| limit.saturating_sub(k.deadline).div_ceil(k.period)).sum()
}

/// The absolute deadlines of `tasks` released together, below `limit`, in order.
pub fn deadlines(tasks: &[Task], limit: u64) -> Vec<u64> {
    let mut points: Vec<u64> =
        tasks.iter().flat_map(|k| (0..).map(move |m| m * k.period + k.deadline).take_while(move |&d| d < limit)).collect();
    points.sort_unstable();
    points.dedup();
    points
}

/// Each task has a period, a WCET no longer than its deadline and a deadline no longer than its
/// period (the thesis's model); errors name the task and the value.
pub fn validate(tasks: &[Task]) -> Result<()> {
    if tasks.is_empty() {
        return Err(Error::config("tasks", "no task given"));
    }
    for (i, t) in tasks.iter().enumerate() {
        let key = |k: &str| format!("tasks[{i}].{k}");
        if t.period == 0 {
            return Err(Error::config(key("period"), format!("{}: must be above 0", t.name)));
        }
        if t.wcet == 0 || t.wcet > t.deadline {
            return Err(Error::config(
                key("wcet"),
                format!("{}: must be above 0 and at most its deadline ({}), got {}", t.name, t.deadline, t.wcet),
            ));
        }
        if t.deadline > t.period {
            return Err(Error::config(
                key("deadline"),
                format!("{}: must be at most its period ({}), got {}", t.name, t.period, t.deadline),
            ));
        }
    }
    Ok(())
}
