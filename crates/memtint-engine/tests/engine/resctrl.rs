//! Hardware partitioning through resctrl (os/resctrl/): Intel CAT's way masks confine each
//! process's LLC fills to its ways, so a streaming program no longer evicts a cache-fitting
//! one's lines; bad settings are refused by key.

use crate::common::*;
use serde_json::{json, Value};

/// A 3 MiB random working set (under half the 8 MiB LLC of `ddr4-2400`'s machine) beside
/// a stream, with and without CAT giving the working set 12 of the 16 ways.
fn run(resctrl: Value) -> Value {
    sim_run(json!({
        "machine": "ddr4-2400",
        "programs": ["stream", "random:footprint_bytes=3145728,reads_pki=40"],
        "instructions": 400_000,
        "warmup": 6_000_000,
        "os": resctrl,
    }))
}

#[test]
fn cat_keeps_a_stream_out_of_a_working_sets_ways() {
    let shared = run(json!({}));
    let cat = run(json!({"resctrl": ["cat"], "cat": {"ways": [4, 12]}}));
    let misses = |v: &Value, core: usize| u(&v["cores"][core]["llc_misses"]);
    let lines = |v: &Value, core: usize| v["cores"][core]["llc_lines_mean"].as_f64().unwrap();
    // The LLC: 8 MiB of 64-byte lines in 16 ways; the stream may hold 4 ways' worth.
    let llc_lines = 8.0 * 1024.0 * 1024.0 / 64.0;
    assert!(lines(&cat, 0) <= llc_lines * 4.0 / 16.0 + 1.0, "the stream holds {} lines", lines(&cat, 0));
    assert!(lines(&shared, 0) > llc_lines * 4.0 / 16.0, "without CAT it takes more: {}", lines(&shared, 0));
    // Measured: 122 against 4110.
    assert!(
        misses(&cat, 1) * 10 < misses(&shared, 1),
        "the working set's LLC misses: {} with CAT, {} shared",
        misses(&cat, 1),
        misses(&shared, 1)
    );
    assert_eq!(cat["config"]["params"]["os"]["cat"]["ways"], json!([4, 12]));
}

#[test]
fn bad_cat_settings_are_refused_by_key() {
    let err = |os: Value| sim_err(json!({"machine": "ddr4-2400", "programs": ["stream", "light"], "instructions": 10_000, "os": os}));
    let e = err(json!({"resctrl": ["cat"], "cat": {"ways": [8, 9]}}));
    assert!(e.contains("os.cat.ways") && e.contains("17 ways"), "{e}");
    let e = err(json!({"resctrl": ["cat"], "cat": {"ways": [16]}}));
    assert!(e.contains("os.cat.ways") && e.contains("2 processes"), "{e}");
    let e = err(json!({"resctrl": ["nosuch"]}));
    assert!(e.contains("os.resctrl") && e.contains("nosuch"), "{e}");
    let e = err(json!({"resctrl": ["cat"], "cat": {"way": [8, 8]}}));
    assert!(e.contains("os.cat") && e.contains("way"), "{e}");
}

/// MBA: two streams; capping the first at 10 % of peak holds its requests back (it reads far
/// less and waits), and the uncapped one gets the bandwidth it gave up. Measured: 1.88 GB/s
/// capped (cap 1.92) against 7.84 free; the other stream 10.08 against 7.54.
#[test]
fn mba_caps_a_process_at_its_share_of_peak_bandwidth() {
    let run = |os: Value| sim_run(json!({"machine": "ddr4-2400", "programs": ["stream", "stream"], "instructions": 300_000, "os": os}));
    let free = run(json!({}));
    let capped = run(json!({"resctrl": ["mba"], "mba": {"percent": [10, 100]}}));
    let gbps = |v: &Value, core: usize| {
        let c = &v["cores"][core];
        (u(&c["dram_reads"]) + u(&c["dram_writes"])) as f64 * 64.0 / (u(&c["cycles"]) as f64 / 3.2)
    };
    let peak = 2400e6 * 8.0 / 1e9; // DDR4-2400, one 64-bit channel: 19.2 GB/s
    assert!(gbps(&capped, 0) <= 0.1 * peak * 1.05, "capped at 10 %: {:.2} GB/s of {peak}", gbps(&capped, 0));
    assert!(gbps(&free, 0) > 0.2 * peak, "uncapped: {:.2} GB/s", gbps(&free, 0));
    assert!(u(&capped["cores"][0]["throttled_requests"]) > 0 && u(&capped["cores"][1]["throttled_requests"]) == 0);
    assert!(u(&free["cores"][0]["throttled_requests"]) == 0);
    assert!(gbps(&capped, 1) > gbps(&free, 1), "the other stream gains: {:.2} against {:.2}", gbps(&capped, 1), gbps(&free, 1));
    let e = sim_err(json!({"machine": "ddr4-2400", "programs": ["stream", "stream"], "instructions": 1000,
                           "os": {"resctrl": ["mba"], "mba": {"percent": [25, 100]}}}));
    assert!(e.contains("os.mba.percent") && e.contains("got 25"), "{e}");
}

/// UCP: from an even split, the utility monitors see that the stream gains little from ways
/// and a 5 MiB working set (ten ways' worth) a lot, so the repartitions give the working set
/// most of the LLC and its misses fall below the even split's. Measured: 4 + 12 ways after the
/// warm-up, 1 + 15 from 0.7 ms on; 18,667 misses against 21,669 even, 38,407 shared, and 3,947
/// with 1 + 15 ways from the start (the window is too short to recover what the first epochs
/// cost).
#[test]
fn ucp_gives_the_ways_to_the_program_that_hits_in_them() {
    let run = |os: Value| {
        sim_run(json!({
            "machine": "ddr4-2400",
            "programs": ["stream", "random:footprint_bytes=5242880,reads_pki=40"],
            "instructions": 2_000_000,
            "warmup": 6_000_000,
            "os": os,
        }))
    };
    let even = run(json!({"resctrl": ["cat"]}));
    let ucp = run(json!({"resctrl": ["cat"], "cat": {"allocation": "ucp"}}));
    let r = &ucp["resctrl"];
    assert!(u(&r["ucp_repartitions"]) >= 2, "{r}");
    let ways: Vec<u64> = r["ucp_ways"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(ways.iter().sum::<u64>(), 16, "{r}");
    assert!(ways[1] > ways[0] && ways[1] >= 12, "the working set takes the ways: {ways:?}");
    let misses = |v: &Value| u(&v["cores"][1]["llc_misses"]);
    assert!(misses(&ucp) < misses(&even), "working-set misses: ucp {} even {}", misses(&ucp), misses(&even));
    // An epoch longer than the run: said, naming the value.
    let short = sim_run(json!({"machine": "ddr4-2400", "programs": ["stream", "light"], "instructions": 20_000,
                               "os": {"resctrl": ["cat"], "cat": {"allocation": "ucp", "epoch_ns": 50_000_000.0}}}));
    let w = short["warnings"].to_string();
    assert!(w.contains("os.cat.epoch_ns (50000000 ns) is longer than the run"), "{w}");
    let e = sim_err(json!({"machine": "ddr4-2400", "programs": ["stream"], "instructions": 1000,
                           "os": {"resctrl": ["cat"], "cat": {"allocation": "dynamic"}}}));
    assert!(e.contains("os.cat.allocation") && e.contains("dynamic"), "{e}");
}

/// CAT beside bank colouring, as on a real machine: BPM still gives the two processes disjoint
/// banks, and CAT still keeps the stream in its ways.
#[test]
fn cat_combines_with_bank_colouring() {
    let v = sim_run(json!({
        "machine": "ddr4-2400",
        "programs": ["stream", "random:footprint_bytes=3145728,reads_pki=40"],
        "instructions": 200_000,
        "warmup": 2_000_000,
        "os": {"policy": "bpm", "resctrl": ["cat"], "cat": {"ways": [4, 12]}},
    }));
    let banks = |core: usize| -> Vec<u64> { v["cores"][core]["banks"].as_array().unwrap().iter().map(u).collect() };
    let (a, b) = (banks(0), banks(1));
    assert!(!a.is_empty() && !b.is_empty() && a.iter().all(|x| !b.contains(x)), "BPM's banks: {a:?} and {b:?}");
    let llc_lines = 8.0 * 1024.0 * 1024.0 / 64.0;
    assert!(v["cores"][0]["llc_lines_mean"].as_f64().unwrap() <= llc_lines * 4.0 / 16.0 + 1.0);
    assert_eq!(v["policy"], "bpm");
}
