//! Binding each new thread to a core at creation, in creation order (processes in the order
//! given, each process's threads in order). Two rules:
//! - `least-loaded`: Linux fork balancing, the allowed core with the fewest threads (lowest id
//!   on ties);
//! - `ccps`: CCPS Algorithm 1 (ccps.md §2.3): stay with the cores running the same address space
//!   unless they have `delta` threads more than the least-loaded core, then the priority and
//!   load-balance rule over the three least-loaded candidates. Comparisons, tie-breaks and
//!   "load" (threads bound to the core) are ccps.md's [rec] reading; an empty core's average
//!   priority is taken as the new thread's own, which reproduces the paper's worked example.
//!
//! Affinity restricts both rules to the thread's allowed cores.

use super::cfs::SchedThread;
use super::config::OsConfig;
use crate::error::{Error, Result};

/// [paper] "5 threads more than the smallest load core".
pub const CCPS_DELTA: usize = 5;

/// Cores for `threads`, in creation order, under `rule` ("least-loaded" or "ccps", whose Δ is
/// `[os.ccps] delta`).
pub fn bind_threads(threads: &[SchedThread], cores: u32, rule: &str, cfg: &OsConfig) -> Result<Vec<u32>> {
    let delta = if rule == "ccps" { super::placement::ccps_params(cfg)?.delta as usize } else { CCPS_DELTA };
    let mut bound: Vec<u32> = Vec::with_capacity(threads.len());
    for t in threads {
        let core = match rule {
            "least-loaded" => least_loaded(&bound, threads, cores, &t.affinity),
            "ccps" => ccps_bind(&bound, threads, cores, t, delta),
            other => return Err(Error::unknown("binding", other, super::cfs::BINDINGS.iter().copied())),
        };
        bound.push(core);
    }
    Ok(bound)
}

fn loads(bound: &[u32], cores: u32) -> Vec<usize> {
    let mut l = vec![0; cores as usize];
    for &c in bound {
        l[c as usize] += 1;
    }
    l
}

fn least_loaded(bound: &[u32], _threads: &[SchedThread], cores: u32, allowed: &[u32]) -> u32 {
    let l = loads(bound, cores);
    *allowed.iter().min_by_key(|&&c| (l[c as usize], c)).expect("affinity is not empty")
}

/// Priority: larger is more important (−nice).
fn prio(t: &SchedThread) -> f64 {
    -(t.nice as f64)
}

/// CCPS Algorithm 1 for `t`, given the cores of the threads created before it.
pub fn ccps_bind(bound: &[u32], threads: &[SchedThread], cores: u32, t: &SchedThread, delta: usize) -> u32 {
    let l = loads(bound, cores);
    let allowed = &t.affinity;
    let min_load = allowed.iter().map(|&c| l[c as usize]).min().unwrap_or(0);
    let mut siblings: Vec<u32> = bound
        .iter()
        .enumerate()
        .filter(|&(i, _)| threads[i].process == t.process)
        .map(|(_, &c)| c)
        .filter(|c| allowed.contains(c))
        .collect();
    siblings.sort_unstable();
    siblings.dedup();
    let ok: Vec<u32> = siblings.into_iter().filter(|&c| l[c as usize] - min_load < delta).collect();
    match ok.len() {
        1 => ok[0],
        0 => prio_lb_pick(bound, threads, &l, t, allowed),
        _ => prio_lb_pick(bound, threads, &l, t, &ok),
    }
}

fn avg_prio(bound: &[u32], threads: &[SchedThread], core: u32, new: &SchedThread) -> f64 {
    let ps: Vec<f64> = bound.iter().enumerate().filter(|&(_, &c)| c == core).map(|(i, _)| prio(&threads[i])).collect();
    if ps.is_empty() {
        prio(new)
    } else {
        ps.iter().sum::<f64>() / ps.len() as f64
    }
}

/// The three least-loaded candidates (lower id on ties), by average priority descending (stable);
/// the new thread goes to the lowest-average core if it outranks it, else to the highest.
fn prio_lb_pick(bound: &[u32], threads: &[SchedThread], l: &[usize], t: &SchedThread, cand: &[u32]) -> u32 {
    let mut k: Vec<u32> = cand.to_vec();
    k.sort_by_key(|&c| (l[c as usize], c));
    k.truncate(3);
    let avg: Vec<(u32, f64)> = k.iter().map(|&c| (c, avg_prio(bound, threads, c, t))).collect();
    let mut sorted = avg.clone();
    sorted.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    let lowest = *sorted.last().expect("at least one candidate");
    if prio(t) > lowest.1 {
        lowest.0
    } else {
        sorted[0].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(process: u32, nice: i32, cores: u32) -> SchedThread {
        SchedThread { process, nice, affinity: (0..cores).collect() }
    }

    /// Bind `new` after threads `(process, nice, core)` already bound.
    fn bind_after(existing: &[(u32, i32, u32)], new: SchedThread, cores: u32) -> u32 {
        let mut threads: Vec<SchedThread> = existing.iter().map(|&(p, n, _)| th(p, n, cores)).collect();
        let bound: Vec<u32> = existing.iter().map(|&(_, _, c)| c).collect();
        threads.push(new.clone());
        ccps_bind(&bound, &threads, cores, &new, CCPS_DELTA)
    }

    #[test]
    fn a1_i_joins_its_siblings_below_delta() {
        // Process 0 has 4 threads on core 2; every other core is empty: 4 - 0 < 5.
        let existing: Vec<_> = (0..4).map(|_| (0, 0, 2)).collect();
        assert_eq!(bind_after(&existing, th(0, 0, 4), 4), 2);
    }

    #[test]
    fn a1_ii_leaves_its_siblings_at_delta() {
        // 5 siblings on core 2, cores 0, 1, 3 empty: 5 - 0 = 5 is not < 5 -> least-loaded core 0.
        let existing: Vec<_> = (0..5).map(|_| (0, 0, 2)).collect();
        assert_eq!(bind_after(&existing, th(0, 0, 4), 4), 0);
    }

    #[test]
    fn a1_iii_two_sibling_cores_pick_the_lower_load_under_equal_priorities() {
        // Siblings on core 1 (3 threads) and core 3 (1 thread); core 0 and 2 hold other processes.
        let existing = [(0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 3), (1, 0, 0), (2, 0, 2)];
        assert_eq!(bind_after(&existing, th(0, 0, 4), 4), 3);
    }

    #[test]
    fn a1_iv_priority_rule_picks_lowest_or_highest_average() {
        // No siblings. Cores 0..3 each hold one thread with nice 0, 5, -5, 10 (prio 0, -5, 5, -10);
        // core 3 has two more threads (load 3), so the three least-loaded are 0, 1, 2 with
        // averages 0, -5, 5 -> sorted 2 (5), 0 (0), 1 (-5).
        let existing = [(1, 0, 0), (2, 5, 1), (3, -5, 2), (4, 10, 3), (4, 10, 3), (4, 10, 3)];
        // prio 0 > lowest average -5: goes to the lowest-average core, 1.
        assert_eq!(bind_after(&existing, th(9, 0, 4), 4), 1);
        // prio -10 (nice 10) is not above -5: goes to the highest-average core, 2.
        assert_eq!(bind_after(&existing, th(9, 10, 4), 4), 2);
    }

    #[test]
    fn worked_example_18_threads_on_8_cores() {
        // ccps.md §2.3: threads 1-5 on core 0, 6-10 on core 1, 11-15 on core 2, 16-18 on core 3.
        let threads: Vec<_> = (0..18).map(|_| th(0, 0, 8)).collect();
        let b = bind_threads(&threads, 8, "ccps", &OsConfig::default()).unwrap();
        let expect: Vec<u32> = (0..18).map(|i| (i / 5) as u32).collect();
        assert_eq!(b, expect);
    }

    #[test]
    fn affinity_restricts_both_rules() {
        let mut t = th(0, 0, 4);
        t.affinity = vec![3];
        let threads = vec![t.clone(), t.clone(), t];
        assert_eq!(bind_threads(&threads, 4, "ccps", &OsConfig::default()).unwrap(), vec![3, 3, 3]);
        assert_eq!(bind_threads(&threads, 4, "least-loaded", &OsConfig::default()).unwrap(), vec![3, 3, 3]);
    }

    #[test]
    fn ccps_delta_is_read_from_the_ccps_table() {
        // With Δ = 20 every sibling stays with the first: no core has 20 threads more.
        let threads: Vec<_> = (0..18).map(|_| th(0, 0, 8)).collect();
        let cfg = OsConfig::default().with_param("ccps", "delta", 20);
        assert_eq!(bind_threads(&threads, 8, "ccps", &cfg).unwrap(), vec![0; 18]);
    }

    #[test]
    fn least_loaded_spreads_threads() {
        let threads: Vec<_> = (0..6).map(|i| th(i, 0, 4)).collect();
        assert_eq!(bind_threads(&threads, 4, "least-loaded", &OsConfig::default()).unwrap(), vec![0, 1, 2, 3, 0, 1]);
    }
}
