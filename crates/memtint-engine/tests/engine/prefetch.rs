//! The LLC prefetcher end to end (`[cache.prefetcher]`, cache/stream_prefetcher.rs): what it
//! buys a sequential stream, that random accesses barely trigger it, determinism, DRAM timing
//! with prefetches in the queues, and the configuration errors a user can make.

use memtint_engine::multicore::{run_sim, SimSpec};
use serde_json::{json, Value};

fn run(programs: &[&str], prefetcher: Value, instructions: u64, check: bool) -> Value {
    let spec: SimSpec = serde_json::from_value(json!({
        "machine": "i7-860",
        "programs": programs,
        "instructions": instructions,
        "seed": 3,
        "check": check,
        "overrides": {"cache": {"prefetcher": prefetcher}},
    }))
    .expect("spec parses");
    run_sim(&spec).expect("run succeeds")
}

fn err(prefetcher: Value) -> String {
    let spec: SimSpec = serde_json::from_value(
        json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "overrides": {"cache": {"prefetcher": prefetcher}}}),
    )
    .expect("spec parses");
    run_sim(&spec).expect_err("the run must fail").to_string()
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

fn u(v: &Value) -> u64 {
    v.as_u64().expect("a count")
}

#[test]
fn a_sequential_stream_has_far_fewer_demand_misses_and_higher_ipc_with_the_stream_prefetcher() {
    // A moderate stream: the prefetcher gets ahead, and most demands hit prefetched lines.
    let off = &run(&["stream:reads_pki=10"], json!({"kind": "none"}), 1_000_000, false)["cores"][0];
    let on = &run(&["stream:reads_pki=10"], json!({"kind": "stream"}), 1_000_000, false)["cores"][0];
    assert!(off.get("prefetch").is_none(), "no prefetch statistics without a prefetcher");
    let p = &on["prefetch"];
    assert!(u(&on["llc_misses"]) * 3 < u(&off["llc_misses"]), "demand misses {} (on) vs {} (off)", on["llc_misses"], off["llc_misses"]);
    assert!(f(&on["ipc"]) > 1.3 * f(&off["ipc"]), "IPC {} (on) vs {} (off)", on["ipc"], off["ipc"]);
    assert!(u(&p["useful"]) * 2 > u(&p["issued"]), "most prefetches are used in time: {p}");
    // Every prefetch reaches DRAM as a read of the core's.
    assert!(u(&on["dram_reads"]) >= u(&p["issued"]));
    // The full-rate stream (libquantum-like) outruns a 20-line distance: its prefetches are
    // mostly late, but they still raise its IPC and almost all of them are used.
    let off = &run(&["stream"], json!({"kind": "none"}), 1_000_000, false)["cores"][0];
    let on = &run(&["stream"], json!({"kind": "stream"}), 1_000_000, false)["cores"][0];
    let p = &on["prefetch"];
    assert!(f(&on["ipc"]) > 1.15 * f(&off["ipc"]), "IPC {} (on) vs {} (off)", on["ipc"], off["ipc"]);
    let uncovered = u(&on["llc_misses"]) - u(&p["late"]);
    assert!(uncovered * 3 < u(&off["llc_misses"]), "demand misses not covered by a prefetch: {uncovered}");
    // Lines prefetched past the stream's occasional jumps stay unused (in an LLC not yet full).
    assert!(f(&on["prefetch_accuracy"]) > 0.8, "{p}");
}

#[test]
fn random_accesses_issue_few_prefetches() {
    let on = &run(&["random"], json!({"kind": "stream"}), 1_000_000, false)["cores"][0];
    let issued = u(&on["prefetch"]["issued"]);
    assert!(issued * 100 < u(&on["llc_misses"]), "{issued} prefetches for {} misses", on["llc_misses"]);
}

#[test]
fn next_line_prefetching_helps_a_stream_too() {
    let off = &run(&["stream:reads_pki=10"], json!({"kind": "none"}), 500_000, false)["cores"][0];
    let on = &run(&["stream:reads_pki=10"], json!({"kind": "next-line", "degree": 4}), 500_000, false)["cores"][0];
    let uncovered = u(&on["llc_misses"]) - u(&on["prefetch"]["late"]);
    assert!(uncovered * 2 < u(&off["llc_misses"]), "{uncovered} of {} misses not covered", off["llc_misses"]);
    assert!(f(&on["ipc"]) > f(&off["ipc"]));
}

fn without_wall_clock(mut v: Value) -> Value {
    for k in ["wall_seconds", "requests_per_second", "instructions_per_second"] {
        v.as_object_mut().unwrap().remove(k);
    }
    if let Some(d) = v.get_mut("dram").and_then(Value::as_object_mut) {
        for k in ["wall_seconds", "requests_per_second", "dram_cycles_per_second"] {
            d.remove(k);
        }
    }
    v
}

#[test]
fn prefetching_runs_are_deterministic() {
    let mix = ["stream", "light", "copy", "random"];
    let a = without_wall_clock(run(&mix, json!({"kind": "stream"}), 300_000, false));
    let b = without_wall_clock(run(&mix, json!({"kind": "stream"}), 300_000, false));
    assert_eq!(a, b);
}

#[test]
fn dram_timing_holds_with_prefetches_in_the_queues() {
    let r = run(&["stream", "copy", "light", "random"], json!({"kind": "stream", "degree": 4}), 300_000, true);
    assert!(u(&r["dram"]["commands_checked"]) > 10_000);
    assert_eq!(u(&r["dram"]["violations"]), 0, "{}", r["dram"]["violation_examples"]);
    assert!(u(&r["cores"][0]["prefetch"]["issued"]) > 1000);
}

#[test]
fn checking_a_run_without_prefetching_changes_none_of_its_results() {
    let plain = without_wall_clock(run(&["stream", "light"], json!({"kind": "none"}), 200_000, false));
    let mut checked = without_wall_clock(run(&["stream", "light"], json!({"kind": "none"}), 200_000, true));
    assert_eq!(u(&checked["dram"]["violations"]), 0);
    let d = checked["dram"].as_object_mut().unwrap();
    for k in ["violations", "commands_checked", "violation_examples"] {
        d.remove(k);
    }
    checked["config"].as_object_mut().unwrap().remove("check");
    assert_eq!(plain["cores"], checked["cores"]);
    assert_eq!(plain["dram"], checked["dram"]);
}

#[test]
fn bad_prefetcher_settings_are_clear_errors() {
    let e = err(json!({"kind": "ip-stride"}));
    assert!(e.contains("cache.prefetcher.kind") && e.contains("`none`, `next-line`, `stream`"), "{e}");
    let e = err(json!({"kind": "stream", "degree": 0}));
    assert!(e.contains("cache.prefetcher.degree"), "{e}");
    let e = err(json!({"kind": "stream", "distance": 2, "degree": 4}));
    assert!(e.contains("cache.prefetcher.distance") && e.contains("at least degree (4)"), "{e}");
    let e = err(json!({"kind": "stream", "distance": 80}));
    assert!(e.contains("4 KB page"), "{e}");
    let e = err(json!({"kind": "stream", "depth": 3}));
    assert!(e.contains("depth"), "{e}");
    let spec: SimSpec = serde_json::from_value(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
        "overrides": {"cache": {"llc": "none", "prefetcher": {"kind": "stream"}}}}))
    .unwrap();
    let e = run_sim(&spec).unwrap_err().to_string();
    assert!(e.contains("cache.prefetcher") && e.contains("LLC"), "{e}");
}

#[test]
fn llc_statistics_count_demand_loads_only() {
    let off = &run(&["stream"], json!({"kind": "none"}), 500_000, false)["cores"][0];
    let on = &run(&["stream"], json!({"kind": "stream"}), 500_000, false)["cores"][0];
    // The same trace reaches the LLC with the same loads; prefetches are not accesses.
    assert_eq!(on["llc_accesses"], off["llc_accesses"]);
    assert!(u(&on["llc_misses"]) <= u(&on["llc_accesses"]));
    let p = &on["prefetch"];
    // Every issued prefetch is a DRAM read of the core; demand reads are at most its misses.
    assert!(u(&on["dram_reads"]) <= u(&on["llc_misses"]) - u(&p["late"]) + u(&p["issued"]));
}

#[test]
fn a_page_bounded_prefetcher_barely_widens_a_streams_banks_on_the_i7_860() {
    // One 4 KB page is one row of one bank per channel on this mapping (bank bits 13-15 and
    // 21-22), so prefetching within the page reaches no bank the demand stream does not
    // (docs/experiments/bpm-direction.md §6).
    let off = &run(&["stream"], json!({"kind": "none"}), 1_000_000, false)["cores"][0];
    let on = &run(&["stream"], json!({"kind": "stream"}), 1_000_000, false)["cores"][0];
    let (b_off, b_on) = (f(&off["bank_level_parallelism"]), f(&on["bank_level_parallelism"]));
    assert!(b_on < 1.25 * b_off && b_on < 2.6, "BLP {b_off:.2} -> {b_on:.2}");
}

#[test]
fn prefetching_works_with_a_private_l2_and_time_shared_threads() {
    // Six threads of three processes on four cores (CFS switches them), with a private L2, so
    // the prefetcher trains on L2 misses and its owners are threads, not cores.
    let spec: SimSpec = serde_json::from_value(json!({
        "machine": "i7-860",
        "processes": [
            {"threads": ["stream", "stream:seed=5"]},
            {"threads": ["light", "random"]},
            {"threads": ["copy", "light"]},
        ],
        "instructions": 200_000,
        "check": true,
        "os": {"sched": {"latency_cycles": 200_000, "min_granularity_cycles": 50_000}},
        "overrides": {"cache": {
            "l2": {"size_bytes": 262144, "ways": 8, "latency": 12, "mshrs": 16},
            "prefetcher": {"kind": "stream"},
        }},
    }))
    .expect("spec parses");
    let r = run_sim(&spec).expect("run succeeds");
    assert_eq!(u(&r["dram"]["violations"]), 0);
    assert!(u(&r["scheduling"]["context_switches"]) > 0, "threads were time-shared");
    let cores = r["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 6);
    for c in cores {
        let p = &c["prefetch"];
        assert!(u(&p["useful"]) + u(&p["late"]) + u(&p["useless"]) <= u(&p["issued"]), "{p}");
    }
    assert!(u(&cores[0]["prefetch"]["issued"]) > 100, "the streams prefetch: {}", cores[0]["prefetch"]);
}
