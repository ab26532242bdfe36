//! The Pan thesis's deterministic examples for Colored Refresh and its server
//! (`pan-camc-tintmalloc-refresh.md` §4.3, §5.2, §9.2(a)), computed by `realtime/`.

use memtint_engine::realtime::crs::{simulate, two_servers, Policy, Slot};
use memtint_engine::realtime::cyclic::{broken_rules, choose_frame, copy_break_even_bytes, fuse, place_jobs, schedule_horizon};
use memtint_engine::realtime::schedulability::rm_response_time;
use memtint_engine::realtime::servers::*;
use memtint_engine::realtime::task::{hyperperiod, utilisation};
use memtint_engine::realtime::Task;

const R: u64 = 64; // retention window, ms
const K: u64 = 8; // ranks

fn tasks(list: &[(&str, u64, u64)]) -> Vec<Task> {
    list.iter().map(|&(n, p, e)| Task::new(n, p, e)).collect()
}

/// (a)2: e₀ = 10 ms at 8 Gb (tRFC 350 ns, tREFI 7.8 µs) pads to 10.470 ms over 1343 REFs.
#[test]
fn wcet_padding_for_auto_refresh_reaches_the_thesis_fixed_point() {
    let (e, refs) = refresh_padded_wcet(10e6, 350.0, 7800.0);
    assert_eq!(refs, 1343);
    assert!((e / 1e6 - 10.470).abs() < 0.0005, "{e} ns");
    assert!((auto_refresh_utilisation_bound(350.0, 7800.0) - 0.9551).abs() < 1e-4);
}

/// (a)3: Example 1 gives f = 8, slices B and C, and Table 4.2's frames and colours.
#[test]
fn example_1_frames_and_available_colours_are_table_4_2() {
    let t = tasks(&[("A", 16, 4), ("B", 32, 12), ("C", 64, 16)]);
    let frame = choose_frame(&t, R, K).unwrap();
    assert_eq!((frame.size, frame.colour_frame), (8, 8));
    assert_eq!(broken_rules(&t, 8, R, K), vec![5], "only rule 5 (B and C are longer than a frame) fails: they are sliced");
    let s = place_jobs(&t, frame, R).unwrap();
    assert_eq!(s.horizon, 64);
    let thesis = |v: Vec<usize>| v.into_iter().map(|k| k + 1).collect::<Vec<_>>();
    let colours = |v: Vec<u64>| v.into_iter().map(|c| c + 1).collect::<Vec<_>>();
    assert_eq!(thesis(s.occupied(0)), [1, 3, 5, 7]);
    assert_eq!(thesis(s.occupied(1)), [1, 2, 5, 6]);
    assert_eq!(thesis(s.occupied(2)), [3, 4, 7]);
    assert_eq!(colours(s.available_colours(0)), [2, 4, 6, 8]);
    assert_eq!(colours(s.available_colours(1)), [3, 4, 7, 8]);
    assert_eq!(colours(s.available_colours(2)), [1, 2, 5, 6, 8]);
    // The thesis's assignment (A, k2), (B, k3), (C, k5) uses available colours only.
    for (task, colour) in [(0, 2), (1, 3), (2, 5)] {
        assert!(s.available_colours(task).contains(&(colour - 1)));
    }
    assert!(s.needs_copy().is_empty());
}

/// (a)4: Example 2 is non-harmonic: L = 320, and both tasks run while every colour is
/// refreshed, so both need copy tasks.
#[test]
fn example_2_needs_copy_tasks() {
    let t = tasks(&[("A", 20, 8), ("B", 40, 16)]);
    assert_eq!(schedule_horizon(&t, R), 320);
    let frame = choose_frame(&t, R, K).unwrap();
    assert_eq!(frame.size, 8);
    let s = place_jobs(&t, frame, R).unwrap();
    assert_eq!(s.needs_copy(), [0, 1]);
}

/// (a)5: the Mälardalen set of Table 4.4: H = 160, L = 320, f = 8 (rule 1 allows 10, R/K
/// leaves 8); matmult (10 ms) is sliced, lms runs while every colour is refreshed (a copy),
/// and U = 0.9625 fits.
#[test]
fn the_malardalen_set_runs_in_frames_of_8() {
    let t = tasks(&[("lms", 20, 4), ("compress", 32, 6), ("cnt", 32, 8), ("st", 40, 8), ("matmult", 80, 10)]);
    assert_eq!(hyperperiod(&t), 160);
    assert_eq!(schedule_horizon(&t, R), 320);
    assert!((utilisation(&t) - 0.9625).abs() < 1e-12);
    let frame = choose_frame(&t, R, K).unwrap();
    assert_eq!(frame.size, 8);
    assert!(broken_rules(&t, 10, R, K).contains(&4) && !broken_rules(&t, 10, R, K).contains(&1), "f = 10 passes rule 1 only");
    let s = place_jobs(&t, frame, R).unwrap();
    assert_eq!(s.needs_copy(), [0], "lms");
    // matmult's 10 ms is split over frames.
    let matmult: u64 = s.frames.iter().flatten().filter(|&&(k, _)| k == 4).map(|&(_, run)| run).sum();
    assert_eq!(matmult, 40, "four 10 ms jobs in 320 ms");
    assert!(s.frames.iter().all(|f| f.iter().filter(|&&(k, _)| k == 4).all(|&(_, run)| run <= 8)));
}

/// A task set that cannot meet its deadlines in frames is refused naming the job.
#[test]
fn an_unschedulable_set_is_an_error_naming_the_job() {
    let t = tasks(&[("A", 16, 10), ("B", 16, 8)]);
    let frame = choose_frame(&t, R, K).unwrap();
    let e = place_jobs(&t, frame, R).unwrap_err().to_string();
    assert!(e.contains("not schedulable") && (e.contains('A') || e.contains('B')), "{e}");
    let e = choose_frame(&tasks(&[("A", 10, 11)]), R, K).unwrap_err().to_string();
    assert!(e.contains("tasks[0].wcet"), "{e}");
}

/// (a)9: Algorithm 6 fuses frames of 2 into a colour frame of 8 (i = 4, j = 1).
#[test]
fn algorithm_6_fuses_frames_of_2_into_8() {
    assert_eq!(fuse(2, R, K), Some((8, 4, 1)));
    // A set whose deadlines force f below R/K gets fused frames.
    let mut t = tasks(&[("A", 8, 1), ("B", 64, 8)]);
    t[0].deadline = 6;
    let frame = choose_frame(&t, R, K).unwrap();
    assert!(frame.size < 8 && frame.colour_frame % 8 == 0, "{frame:?}");
}

/// Algorithm 6 as the thesis states it: try i = 2, 3, ... while the fused frame is at most R.
fn fuse_by_trying(f: u64, retention: u64, ranks: u64) -> Option<(u64, u64, u64)> {
    let unit = retention / ranks;
    let (mut fused, mut i) = (f, 1);
    while fused <= retention {
        fused += f;
        i += 1;
        if fused % unit == 0 && i % (fused / unit) == 0 {
            return Some((fused, i, fused / unit));
        }
    }
    None
}

/// The frame rules as the thesis states them: the largest f <= p/2 meeting rules 1-4, else the
/// largest meeting 1 and 3 that fuses into a colour frame dividing R, trying every size.
fn frame_by_trying(t: &[Task], retention: u64, ranks: u64) -> Option<(u64, u64)> {
    let max = t.iter().map(|t| t.period / 2).min().unwrap_or(0);
    if let Some(f) = (1..=max).rev().find(|&f| broken_rules(t, f, retention, ranks).iter().all(|&r| r == 5)) {
        return Some((f, f));
    }
    (1..=max).rev().find_map(|f| {
        let broken = broken_rules(t, f, retention, ranks);
        if broken.contains(&1) || broken.contains(&3) {
            return None;
        }
        fuse_by_trying(f, retention, ranks).filter(|&(fused, _, _)| retention % fused == 0).map(|(fused, _, _)| (f, fused))
    })
}

/// The frame search tries only divisors of R and fuses in closed form: the same answers as
/// trying every size, and a task period of 10^9 units no longer takes 40 s to refuse.
#[test]
fn the_frame_search_finds_what_trying_every_size_finds() {
    for retention in [8, 12, 16, 24, 64, 96, 100, 6400] {
        for ranks in [1, 2, 4, 8] {
            if retention % ranks != 0 {
                continue;
            }
            for f in 1..=retention + 3 {
                assert_eq!(fuse(f, retention, ranks), fuse_by_trying(f, retention, ranks), "f {f} R {retention} K {ranks}");
            }
            for (p1, d1, p2, w2) in [(8, 8, 64, 8), (8, 6, 64, 8), (10, 10, 30, 3), (12, 7, 48, 5), (50, 20, 200, 9), (7, 7, 21, 2)] {
                let mut t = tasks(&[("A", p1, 1), ("B", p2, w2)]);
                t[0].deadline = d1;
                let ours = choose_frame(&t, retention, ranks).ok().map(|f| (f.size, f.colour_frame));
                assert_eq!(ours, frame_by_trying(&t, retention, ranks), "R {retention} K {ranks} tasks {p1}/{d1}, {p2}/{w2}");
            }
        }
    }
    // A period of 10^9 units (the fuzzer's case: half a billion sizes tried, 40 s).
    let frame = choose_frame(&tasks(&[("A", 1_000_000_000, 2)]), 6400, 8).unwrap();
    assert_eq!((frame.size, frame.colour_frame), (6400, 6400));
}

/// (a)7: copying pays off up to (350 / 7800) × 1 ms × 10 GB/s ≈ 449 KB.
#[test]
fn copy_break_even_is_449_kb() {
    let bytes = copy_break_even_bytes(350.0, 7800.0, 1e-3, 10e9);
    assert!((bytes / 1e3 - 448.7).abs() < 0.1, "{bytes}");
}

/// (a)8: the EDF utilisation bounds of the CRS experiment's servers, 0.36 and 0.208, and the
/// demand the exact test finds above supply (§8.5: the thesis's configuration fails its own
/// bounds narrowly).
#[test]
fn server_bounds_match_the_thesis_and_expose_its_inconsistency() {
    assert!((edf_utilisation_bound(4.0, 2.4, 8.0) - 0.36).abs() < 1e-12);
    assert!((edf_utilisation_bound(4.0, 1.6, 10.0) - 0.208).abs() < 1e-12);
    // Tenths of a ms: cnt (20, 3), lms (10, 1.6), st (8, 2).
    let s1 = vec![Task::new("cnt", 200, 30), Task::new("lms", 100, 16), Task::new("st", 80, 20)];
    let short = edf_shortfalls(&s1, 40.0, 24.0);
    let at = |t: f64| short.iter().find(|s| s.0 == t).copied();
    let (_, d, s) = at(200.0).expect("t = 20 ms falls short");
    assert!((d - 102.0).abs() < 1e-9 && (s - 100.8).abs() < 1e-9, "dbf {d}, lsbf {s}");
    // The closed-form least budget meets the demand it was solved for.
    let e = least_budget(40.0, 200.0, 102.0);
    assert!((least_supply(40.0, e, 200.0) - 102.0).abs() < 1e-9);
    assert!(rm_utilisation_bound(4.0, 2.4, 8.0) < edf_utilisation_bound(4.0, 2.4, 8.0));
    assert!(longest_service(4.0, 2.0, 2.0) == 8.0);
    let rm = vec![Task::new("a", 4, 1), Task::new("b", 5, 2), Task::new("c", 20, 5)];
    // c: 5 + ⌈r/4⌉ + 2⌈r/5⌉ → 9, 12, 14, 15, 15.
    assert_eq!(rm_response_time(&rm, 2), Some(15.0));
}

/// (a)6: the CRS example: at t = 32 ms S2 runs although S1 has the higher priority, because
/// S1's colour is locked for its burst; S1 preempts S2 once it unlocks. No deadline is missed.
#[test]
fn the_crs_example_runs_s2_while_s1s_colour_refreshes() {
    let s1 = (vec![Task::new("T1", 16, 4), Task::new("T2", 16, 2)], Policy::Rm, 16, 6);
    let s2 = (vec![Task::new("T3", 32, 8), Task::new("T4", 64, 8)], Policy::Rm, 16, 6);
    let servers = two_servers(s1, s2, R);
    let s = simulate(&servers, R, 1, 2 * R).unwrap();
    assert!(matches!(s.slots[32], Slot::Run(1, _)), "t = 32: {:?}", s.slots[32]);
    assert!(matches!(s.slots[33], Slot::Run(0, _)), "t = 33: {:?}", s.slots[33]);
    assert!(matches!(s.slots[0], Slot::Run(0, _)), "t = 0: S2 is locked, S1 runs");
    assert!(s.misses.is_empty(), "{:?}", s.misses);
    assert_eq!(s.blocked_by_refresh, [2, 0], "S1 waited 1 ms in each window; S2's lock at 0 fell while S1 ran");
    let share = |(p, e): (f64, f64)| e / p;
    assert_eq!(share((16.0, 6.0)) + share((16.0, 6.0)), 0.75);
}

/// Table 4.5's colours come from the thesis's network-flow placement; earliest-deadline frame
/// filling places the jobs differently (compress {3,4,7,8}, cnt {4,8}, st {1,5}, matmult
/// {2,6} against the thesis's {2,6}, {1,2,5,6}, {1,3,5,7}, {1,5}), and still leaves each task
/// but lms a colour of its own, with two more for lms and its copy (Table 4.6 needs six).
#[test]
fn every_malardalen_task_but_lms_gets_a_colour_of_its_own() {
    let t = tasks(&[("lms", 20, 4), ("compress", 32, 6), ("cnt", 32, 8), ("st", 40, 8), ("matmult", 80, 10)]);
    let s = place_jobs(&t, choose_frame(&t, R, K).unwrap(), R).unwrap();
    let colours = |i: usize| s.available_colours(i).iter().map(|c| c + 1).collect::<Vec<_>>();
    assert_eq!([colours(1), colours(2), colours(3), colours(4)], [vec![3, 4, 7, 8], vec![4, 8], vec![1, 5], vec![2, 6]]);
    // compress 3, cnt 4, st 1, matmult 2: distinct, leaving 5-8 for lms and its copy.
    let chosen = [3u64, 4, 1, 2];
    for (i, c) in chosen.iter().enumerate() {
        assert!(colours(i + 1).contains(c));
    }
}
