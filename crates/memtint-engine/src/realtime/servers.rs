//! The analysis behind the Colored Refresh Server (Pan thesis §5.2): Shin and Lee's periodic
//! resource model for the tasks inside one server (period p_s, budget e_s), and the refresh
//! cost that auto-refresh adds to a task's WCET. Times in one unit, as floats (the thesis's
//! budgets are fractions of its periods).
//!
//! The thesis's printed RM recurrence uses floor; the standard form, used here, uses ceil
//! (`pan-camc-tintmalloc-refresh.md` §8.4).

use super::task::{deadlines, demand, hyperperiod, Task};

/// The least supply a server of period `p` and budget `e` gives in any interval of `t`:
/// (e / p) · (t − 2(p − e)), at least 0.
pub fn least_supply(p: f64, e: f64, t: f64) -> f64 {
    (e / p * (t - 2.0 * (p - e))).max(0.0)
}

/// The deadlines where EDF demand exceeds the least supply of a server of period `p` and budget
/// `e`, as (t, demand, supply), up to `server_horizon`: empty when the server schedules them.
pub fn edf_shortfalls(tasks: &[Task], p: f64, e: f64) -> Vec<(f64, f64, f64)> {
    deadlines(tasks, server_horizon(tasks, p, e))
        .into_iter()
        .map(|t| (t as f64, demand(tasks, t) as f64, least_supply(p, e, t as f64)))
        .filter(|&(_, d, s)| d > s + 1e-9)
        .collect()
}

/// Past one hyperperiod H the demand repeats, grown by U·H, and the least supply by (e / p)·H
/// once past its first 2(p − e): so with U ≤ e / p the deadlines below H + 2(p − e) decide.
pub fn server_horizon(tasks: &[Task], p: f64, e: f64) -> u64 {
    hyperperiod(tasks).saturating_add((2.0 * (p - e)).ceil() as u64 + 1)
}

/// The periodic capacity bound: the least budget a server of period `p` needs for a demand of
/// `demand` within `t`, from 2e² + (t − 2p)e − p·demand ≥ 0.
pub fn least_budget(p: f64, t: f64, demand: f64) -> f64 {
    (((t - 2.0 * p).powi(2) + 8.0 * p * demand).sqrt() - (t - 2.0 * p)) / 4.0
}

/// EDF utilisation bound of a server (p, e) whose shortest task period is `shortest`:
/// (e / p) · (1 − 2(p − e) / shortest).
pub fn edf_utilisation_bound(p: f64, e: f64, shortest: f64) -> f64 {
    e / p * (1.0 - 2.0 * (p - e) / shortest)
}

/// RM utilisation bound of a server (p, e): (e / p) · (ln 2 − (p − e) / shortest).
pub fn rm_utilisation_bound(p: f64, e: f64, shortest: f64) -> f64 {
    e / p * (std::f64::consts::LN_2 - (p - e) / shortest)
}

/// The longest time a server (p, e) may take to supply `t`: (p / e) · t + 2(p − e).
pub fn longest_service(p: f64, e: f64, t: f64) -> f64 {
    p / e * t + 2.0 * (p - e)
}

/// A WCET padded for auto-refresh: e = e₀ + tRFC · ⌈e / tREFI⌉, iterated to its fixed point.
/// Returns the padded WCET and the REFs it counts.
pub fn refresh_padded_wcet(wcet: f64, t_rfc: f64, t_refi: f64) -> (f64, u64) {
    let mut e = wcet;
    loop {
        let refs = (e / t_refi).ceil();
        let next = wcet + t_rfc * refs;
        if (next - e).abs() < 1e-12 * wcet.max(1.0) {
            return (next, refs as u64);
        }
        e = next;
    }
}

/// The utilisation auto-refresh leaves: 1 − tRFC / tREFI.
pub fn auto_refresh_utilisation_bound(t_rfc: f64, t_refi: f64) -> f64 {
    1.0 - t_rfc / t_refi
}
