//! Analytic schedulability of a task set at its declared WCETs, beside what a run measures: EDF's
//! processor-demand test, rate monotonic's response times, and both inside a periodic server
//! (Shin and Lee's resource model, `servers`). Releases are taken as synchronous, the worst case
//! (with phases the tests are sufficient, not exact). Refresh, copies and context switches are
//! not counted: the run measures what they add.

use super::servers::{edf_shortfalls, longest_service, server_horizon};
use super::task::{deadline_count, deadlines, demand, hyperperiod, utilisation, Task};

/// Deadlines checked at most; past it the demand test uses Baruah's bound, or gives no verdict.
const MAX_POINTS: u64 = 1_000_000;

/// A time to four decimals, without trailing zeros.
fn figure(x: f64) -> String {
    format!("{}", (x * 1e4).round() / 1e4)
}

/// One test's verdict on a task set (or a server's tasks).
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The test, in words ("EDF processor demand").
    pub test: String,
    /// `None`: the test could not decide (too many deadlines to check).
    pub schedulable: Option<bool>,
    /// Why, with the figure that decided it.
    pub detail: String,
}

/// The interval the demand test must cover: the hyperperiod, or Baruah's bound
/// Σ (p − D) · U / (1 − U) when that has fewer deadlines; `None` when neither is small enough.
fn horizon(tasks: &[Task]) -> Option<u64> {
    let count = |limit: u64| deadline_count(tasks, limit);
    let h = hyperperiod(tasks).saturating_add(1);
    if count(h) <= MAX_POINTS {
        return Some(h);
    }
    let u = utilisation(tasks);
    if u >= 1.0 {
        return None;
    }
    let bound = tasks.iter().map(|k| (k.period - k.deadline) as f64 * k.utilisation()).sum::<f64>() / (1.0 - u);
    let limit = (bound.ceil() as u64).max(tasks.iter().map(|k| k.deadline).max().unwrap_or(0) + 1);
    (count(limit) <= MAX_POINTS).then_some(limit)
}

/// EDF on one processor: utilisation at most 1, and the demand up to every deadline at most its
/// length (exact for synchronous releases with D ≤ p).
pub fn edf(tasks: &[Task]) -> Verdict {
    let test = "EDF processor demand".to_string();
    let u = utilisation(tasks);
    if u > 1.0 + 1e-12 {
        return Verdict { test, schedulable: Some(false), detail: format!("utilisation {u:.3} is above 1") };
    }
    if tasks.iter().all(|k| k.deadline == k.period) {
        return Verdict { test, schedulable: Some(true), detail: format!("utilisation {u:.3}, deadlines at the periods") };
    }
    let Some(limit) = horizon(tasks) else {
        return Verdict { test, schedulable: None, detail: format!("more than {MAX_POINTS} deadlines to check") };
    };
    match deadlines(tasks, limit).into_iter().find(|&t| demand(tasks, t) > t) {
        Some(t) => Verdict { test, schedulable: Some(false), detail: format!("demand {} exceeds {t} at t = {t}", demand(tasks, t)) },
        None => Verdict { test, schedulable: Some(true), detail: format!("utilisation {u:.3}; demand within every deadline") },
    }
}

/// The tasks of higher rate-monotonic priority than task `i`: shorter periods, ties by index.
fn higher<'a>(tasks: &'a [Task], i: usize) -> impl Iterator<Item = &'a Task> + 'a {
    let me = &tasks[i];
    tasks.iter().enumerate().filter(move |&(k, t)| k != i && (t.period, k) < (me.period, i)).map(|(_, t)| t)
}

/// Task `i`'s worst response time when `supply(w)` is the longest time `w` units of work take
/// (`w` on a whole processor): the fixed point of r = supply(e_i + Σ_hp ⌈r / p_k⌉ · e_k);
/// `None` past its deadline.
fn response(tasks: &[Task], i: usize, supply: impl Fn(f64) -> f64) -> Option<f64> {
    let me = &tasks[i];
    let mut r = supply(me.wcet as f64);
    loop {
        let work = me.wcet as f64 + higher(tasks, i).map(|t| (r / t.period as f64).ceil() * t.wcet as f64).sum::<f64>();
        let next = supply(work);
        if next > me.deadline as f64 + 1e-9 {
            return None;
        }
        if (next - r).abs() < 1e-9 {
            return Some(next);
        }
        r = next;
    }
}

/// Task `i`'s RM response time among `tasks` on a whole processor (priority by period, shorter
/// first; ties by index); `None` past its deadline.
pub fn rm_response_time(tasks: &[Task], i: usize) -> Option<f64> {
    response(tasks, i, |w| w)
}

/// Rate monotonic: every task's response time within its deadline.
pub fn rm(tasks: &[Task]) -> Verdict {
    rm_with(tasks, "RM response times", |w| w)
}

fn rm_with(tasks: &[Task], test: &str, supply: impl Fn(f64) -> f64 + Copy) -> Verdict {
    let mut worst: Option<(f64, &Task)> = None;
    for (i, t) in tasks.iter().enumerate() {
        match response(tasks, i, supply) {
            None => {
                return Verdict {
                    test: test.into(),
                    schedulable: Some(false),
                    detail: format!("{}'s response time passes its deadline {}", t.name, t.deadline),
                }
            }
            Some(r) if worst.is_none_or(|(w, k)| r / t.deadline as f64 > w / k.deadline as f64) => worst = Some((r, t)),
            Some(_) => {}
        }
    }
    let detail = worst.map_or(String::new(), |(r, t)| format!("longest response {} of deadline {} ({})", figure(r), t.deadline, t.name));
    Verdict { test: test.into(), schedulable: Some(true), detail }
}

/// The tasks of a periodic server (period `p`, budget `e`) under EDF: demand within the server's
/// least supply at every deadline (Shin and Lee).
pub fn edf_in_server(tasks: &[Task], p: f64, e: f64) -> Verdict {
    let test = "EDF demand within the server's least supply".to_string();
    let u = utilisation(tasks);
    if u > e / p + 1e-12 {
        return Verdict { test, schedulable: Some(false), detail: format!("utilisation {u:.3} is above the budget share {:.3}", e / p) };
    }
    if deadline_count(tasks, server_horizon(tasks, p, e)) > MAX_POINTS {
        return Verdict { test, schedulable: None, detail: format!("more than {MAX_POINTS} deadlines to check") };
    }
    match edf_shortfalls(tasks, p, e).first() {
        Some(&(t, d, s)) => {
            Verdict { test, schedulable: Some(false), detail: format!("demand {d} exceeds the least supply {} at t = {t}", figure(s)) }
        }
        None => Verdict { test, schedulable: Some(true), detail: format!("utilisation {u:.3} of budget share {:.3}", e / p) },
    }
}

/// The tasks of a periodic server under RM: response times with the server's longest service.
pub fn rm_in_server(tasks: &[Task], p: f64, e: f64) -> Verdict {
    rm_with(tasks, "RM response times within the server's supply", |w| longest_service(p, e, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, period: u64, wcet: u64, deadline: u64) -> Task {
        Task { name: name.into(), phase: 0, period, wcet, deadline }
    }

    #[test]
    fn edf_decides_by_utilisation_with_deadlines_at_the_periods_and_by_demand_before_them() {
        assert_eq!(edf(&[Task::new("a", 4, 2), Task::new("b", 8, 4)]).schedulable, Some(true));
        assert_eq!(edf(&[Task::new("a", 4, 2), Task::new("b", 8, 5)]).schedulable, Some(false));
        // U = 0.75, but both are due at 2: demand 3 > 2.
        let v = edf(&[task("a", 4, 1, 2), task("b", 4, 2, 2)]);
        assert_eq!(v.schedulable, Some(false), "{v:?}");
        assert!(v.detail.contains("at t = 2"), "{v:?}");
        assert_eq!(edf(&[task("a", 4, 1, 2), task("b", 4, 1, 2)]).schedulable, Some(true));
    }

    #[test]
    fn rm_response_times_stop_at_the_deadline_not_the_period() {
        // c: 5 + ⌈r/4⌉ + 2⌈r/5⌉ reaches 15 (the textbook example).
        let set = [Task::new("a", 4, 1), Task::new("b", 5, 2), Task::new("c", 20, 5)];
        assert_eq!(rm_response_time(&set, 2), Some(15.0));
        let v = rm(&set);
        assert_eq!(v.schedulable, Some(true), "{v:?}");
        // The same with c due at 14: its response of 15 misses, though within its period.
        let early = [Task::new("a", 4, 1), Task::new("b", 5, 2), task("c", 20, 5, 14)];
        let v = rm(&early);
        assert_eq!(v.schedulable, Some(false), "{v:?}");
        assert!(v.detail.contains("c's response time"), "{v:?}");
    }

    #[test]
    fn a_server_supplies_less_than_a_processor() {
        // (a) of the thesis's CRS set: cnt, lms and st in a (40, 24) server fall short at t = 200.
        let s1 = [Task::new("cnt", 200, 30), Task::new("lms", 100, 16), Task::new("st", 80, 20)];
        let v = edf_in_server(&s1, 40.0, 24.0);
        assert_eq!(v.schedulable, Some(false), "{v:?}");
        assert!(v.detail.contains("at t = 200"), "{v:?}");
        assert_eq!(edf(&s1).schedulable, Some(true), "a whole processor suffices");
        assert_eq!(edf_in_server(&s1, 40.0, 40.0).schedulable, Some(true), "a full budget is a processor");
        let one = [Task::new("a", 100, 10)];
        assert_eq!(rm_in_server(&one, 10.0, 5.0).schedulable, Some(true));
        assert_eq!(rm_in_server(&[Task::new("a", 100, 60)], 10.0, 5.0).schedulable, Some(false));
    }
}
