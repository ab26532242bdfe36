//! The statistics that say why requests missed the row buffer (docs/stats.md, "Row-buffer
//! causes"): who opened the row a conflict found, who closed the bank a miss found, against
//! hand-derived counts on one bank; their sums equal the row outcomes; bank partitioning leaves
//! no interference; row outcomes by kind of request sum to the totals; LLC lines per program.

use crate::common::machine;
use memtint_engine::controller::{Completion, Origin};
use memtint_engine::dram::{Command, CommandRecord, DramAddress};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::multicore::{run_sim, SimSpec};
use memtint_engine::stats::RowCause;
use serde_json::{json, Value};

const IMPLEMENTATIONS: [&str; 2] = ["general", "lanes"];

/// A DRAM request of bank 0 (channel 0, rank 0, group 0) at `row`.
fn bank0(mem: &MemorySystem, row: u32) -> u64 {
    mem.mapping().encode(&DramAddress { channel: 0, rank: 0, bank_group: 0, bank: 0, row, column: 0 })
}

/// DDR4-2400, one channel, no refresh (no PREA in the way), the open-row policy.
fn memory(implementation: &str, overrides: Value) -> MemorySystem {
    let mut controller = json!({"refresh": "none", "implementation": implementation});
    controller.as_object_mut().unwrap().extend(overrides.as_object().unwrap().clone());
    let mem = MemorySystem::new(&machine("ddr4-2400", json!({"controller": controller}))).unwrap();
    assert_eq!(mem.implementation().name(), implementation);
    mem
}

/// Serves `requests` (process, row) one at a time, each entering when the one before completed,
/// and returns their completions.
fn one_at_a_time(mem: &mut MemorySystem, requests: &[(u32, u32)]) -> Vec<Completion> {
    let (mut now, mut done) = (0u64, Vec::new());
    for (id, &(process, row)) in requests.iter().enumerate() {
        let addr = bank0(mem, row);
        assert!(mem.try_enqueue(now, id as u64, addr, false, Origin { source: process, process }));
        while done.len() <= id {
            now = mem.next_event().max(now + 1);
            mem.tick(now, &mut done, false);
        }
    }
    done
}

fn causes(done: &[Completion]) -> Vec<RowCause> {
    done.iter().map(|c| c.cause).collect()
}

#[test]
fn two_programs_alternating_rows_in_one_bank_cause_each_others_conflicts() {
    // A (process 0) reads row 1, B (process 1) row 2, in turn. The first finds the bank never
    // opened; every later one finds the other's row open: a conflict caused by the other.
    let requests: Vec<(u32, u32)> = (0..8).map(|i| (i % 2, 1 + i % 2)).collect();
    for implementation in IMPLEMENTATIONS {
        let mut mem = memory(implementation, json!({}));
        let done = one_at_a_time(&mut mem, &requests);
        let mut want = vec![RowCause::MissAfterRefreshOrPolicy];
        want.extend([RowCause::ConflictByOther; 7]);
        assert_eq!(causes(&done), want, "{implementation}");
        let bank = &mem.channels()[0].stats().banks[0].row_causes;
        assert_eq!((bank.row_conflicts_by_other, bank.row_misses_after_refresh_or_policy, bank.conflicts()), (7, 1, 7));
    }
}

#[test]
fn one_program_alternating_rows_causes_all_its_conflicts_itself() {
    let requests: Vec<(u32, u32)> = (0..8).map(|i| (0, 1 + i % 2)).collect();
    for implementation in IMPLEMENTATIONS {
        let mut mem = memory(implementation, json!({}));
        let done = one_at_a_time(&mut mem, &requests);
        let mut want = vec![RowCause::MissAfterRefreshOrPolicy];
        want.extend([RowCause::ConflictBySelf; 7]);
        assert_eq!(causes(&done), want, "{implementation}");
    }
}

#[test]
fn under_the_closed_row_policy_every_miss_follows_the_policy() {
    // Auto-precharge closes the row after each request: the next one finds the bank closed by
    // the row policy, whoever sent it.
    let requests: Vec<(u32, u32)> = (0..6).map(|i| (i % 2, 1 + i % 3)).collect();
    for implementation in IMPLEMENTATIONS {
        let mut mem = memory(implementation, json!({"row_policy": "closed"}));
        let done = one_at_a_time(&mut mem, &requests);
        assert_eq!(causes(&done), vec![RowCause::MissAfterRefreshOrPolicy; 6], "{implementation}");
    }
}

#[test]
fn a_read_that_finds_the_bank_closed_for_another_programs_write_misses_after_the_other() {
    // Row 1 open for A (process 0). B (process 1) writes row 2: with no read waiting, the
    // controller turns to writes (Ramulator's rule) and precharges for B's write: a conflict with
    // A's row. A read of A's to row 3 arrives right after that PRE; a read waiting ends the
    // drain, and the read's first command is the ACT: a miss after B's precharge.
    for implementation in IMPLEMENTATIONS {
        let mut mem = memory(implementation, json!({"write_handling": "ramulator"}));
        mem.record_commands(true);
        let mut done = one_at_a_time(&mut mem, &[(0, 1)]);
        let a = Origin { source: 0, process: 0 };
        let b = Origin { source: 1, process: 1 };
        let mut now = 10_000;
        assert!(mem.try_enqueue(now, 1, bank0(&mem, 2), true, b));
        let (mut log, mut read_sent) = (Vec::<CommandRecord>::new(), false);
        while done.len() < 3 {
            now += 1;
            mem.tick(now, &mut done, true);
            let before = log.len();
            mem.drain_commands(&mut log);
            if !read_sent && log[before..].iter().any(|c| c.command == Command::Pre) {
                assert!(mem.try_enqueue(now, 2, bank0(&mem, 3), false, a));
                read_sent = true;
            }
            assert!(now < 20_000, "{implementation}: the requests did not complete");
        }
        let cause = |id: u64| done.iter().find(|c| c.id == id).unwrap().cause;
        assert_eq!(cause(1), RowCause::ConflictByOther, "{implementation}: B's write found A's row open");
        assert_eq!(cause(2), RowCause::MissAfterOther, "{implementation}: A's read found the bank B's write closed");
    }
}

fn sim(programs: &[&str], policy: &str, instructions: u64) -> Value {
    let spec: SimSpec = serde_json::from_value(json!({
        "machine": "i7-860",
        "programs": programs,
        "instructions": instructions,
        "warmup": 2_000_000,
        "os": {"policy": policy},
        "seed": 1,
    }))
    .unwrap();
    run_sim(&spec).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

const CAUSES: [&str; 5] = [
    "row_conflicts_by_self",
    "row_conflicts_by_other",
    "row_misses_after_self",
    "row_misses_after_other",
    "row_misses_after_refresh_or_policy",
];

/// Interference: misses and conflicts another program caused.
fn by_other(v: &Value) -> u64 {
    u(&v["row_conflicts_by_other"]) + u(&v["row_misses_after_other"])
}

/// Row outcomes by kind and by cause add up to the row outcomes, per core, per process, over
/// the cores and (causes) over the whole run's DRAM statistics.
fn assert_sums(r: &Value) {
    let mut total = [0u64; 5];
    for c in r["cores"].as_array().unwrap() {
        let kinds = &c["row_outcomes_by_kind"];
        for (outcome, key) in [("hits", "row_hits"), ("misses", "row_misses"), ("conflicts", "row_conflicts")] {
            let sum: u64 = ["demand_read", "prefetch_read", "write_back"].iter().map(|k| u(&kinds[k][outcome])).sum();
            assert_eq!(sum, u(&c[key]), "{outcome} by kind: {kinds}");
        }
        let reads = u(&kinds["demand_read"]["hits"]) + u(&kinds["demand_read"]["misses"]) + u(&kinds["demand_read"]["conflicts"]);
        let prefetches =
            u(&kinds["prefetch_read"]["hits"]) + u(&kinds["prefetch_read"]["misses"]) + u(&kinds["prefetch_read"]["conflicts"]);
        assert_eq!(reads + prefetches, u(&c["dram_reads"]));
        assert_eq!(u(&c["row_conflicts_by_self"]) + u(&c["row_conflicts_by_other"]), u(&c["row_conflicts"]));
        let misses = u(&c["row_misses_after_self"]) + u(&c["row_misses_after_other"]) + u(&c["row_misses_after_refresh_or_policy"]);
        assert_eq!(misses, u(&c["row_misses"]));
        for (t, k) in total.iter_mut().zip(CAUSES) {
            *t += u(&c[k]);
        }
    }
    for (t, k) in total.iter().zip(CAUSES) {
        assert_eq!(*t, u(&r[k]), "{k} over the cores");
        let processes: u64 = r["processes"].as_array().unwrap().iter().map(|p| u(&p[k])).sum();
        assert_eq!(*t, processes, "{k} over the processes");
    }
    let dram = &r["dram"];
    let dram_causes: Vec<u64> = CAUSES.iter().map(|k| u(&dram[k])).collect();
    assert_eq!(dram_causes[0] + dram_causes[1], u(&dram["row_conflicts"]));
    assert_eq!(dram_causes[2] + dram_causes[3] + dram_causes[4], u(&dram["row_misses"]));
    let per_bank: u64 = dram["channels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|ch| ch["ranks"].as_array().unwrap().iter().flat_map(|rk| rk["banks"].as_array().unwrap().iter().map(by_other)))
        .sum();
    assert_eq!(per_bank, by_other(dram), "the per-bank interference adds up to the run's");
}

#[test]
fn bank_partitioning_removes_the_interference_that_sharing_banks_causes() {
    // Two streams and two random programs share every bank under buddy; under bpm each has its
    // own 8 banks, so no other program opens or closes a row in its way.
    let programs = ["stream", "random", "stream:seed=5", "random:reads_pki=15"];
    let buddy = sim(&programs, "buddy", 300_000);
    let bpm = sim(&programs, "bpm", 300_000);
    assert_sums(&buddy);
    assert_sums(&bpm);
    for c in bpm["cores"].as_array().unwrap() {
        assert_eq!(u(&c["colour_overflow_pages"]), 0);
        assert_eq!(by_other(c), 0, "bpm: {c}");
    }
    assert!(by_other(&buddy) > 100, "buddy: the programs interfere: {}", by_other(&buddy));
    // i7-860 has the L2 streamer on: the streams' prefetches reach DRAM.
    assert!(u(&buddy["row_outcomes_by_kind"]["prefetch_read"]["hits"]) > 0);
}

#[test]
fn a_program_alone_causes_all_its_own_row_misses_and_conflicts() {
    let r = sim(&["random"], "buddy", 200_000);
    assert_sums(&r);
    let c = &r["cores"][0];
    assert_eq!(by_other(c), 0, "{c}");
    assert!(u(&c["row_conflicts_by_self"]) > 0);
}

#[test]
fn llc_lines_are_counted_per_program_and_fit_the_llc() {
    let r = sim(&["stream", "light"], "buddy", 300_000);
    let llc_lines = u(&r["config"]["cache"]["llc"]["size_bytes"]) / 64;
    let cores = r["cores"].as_array().unwrap();
    let lines: Vec<u64> = cores.iter().map(|c| u(&c["llc_lines"])).collect();
    assert!(lines.iter().sum::<u64>() <= llc_lines, "{lines:?} of {llc_lines}");
    assert!(lines[0] > lines[1], "the stream holds more of the LLC than the light program: {lines:?}");
    for c in cores {
        let mean = c["llc_lines_mean"].as_f64().unwrap();
        assert!(mean > 0.0 && mean <= llc_lines as f64, "{mean}");
    }
    let processes: u64 = r["processes"].as_array().unwrap().iter().map(|p| u(&p["llc_lines"])).sum();
    assert_eq!(processes, lines.iter().sum::<u64>());
}

#[test]
fn both_controllers_give_the_same_causes_in_a_multicore_run() {
    let run = |implementation: &str| {
        let spec: SimSpec = serde_json::from_value(json!({
            "machine": "i7-860",
            "programs": ["stream", "random", "copy", "light"],
            "instructions": 200_000,
            "overrides": {"controller": {"implementation": implementation}},
        }))
        .unwrap();
        let r = run_sim(&spec).unwrap();
        let keys = |v: &Value| {
            let mut o: Vec<Value> = CAUSES.iter().map(|k| v[k].clone()).collect();
            o.push(v["row_outcomes_by_kind"].clone());
            o
        };
        (r["cores"].as_array().unwrap().iter().map(keys).collect::<Vec<_>>(), keys(&r["dram"]))
    };
    let general = run("general");
    assert_eq!(general, run("lanes"));
}
