//! Hardware partitioning through resctrl (os/resctrl/): Intel CAT's way masks confine each
//! process's LLC fills to its ways, so a streaming program no longer evicts a cache-fitting
//! one's lines; bad settings are refused by key.

mod common;

use common::*;
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
