//! Every refused input names its place: the key path of a run spec or override, the file and
//! line of a trace or device file. Each test feeds one input that once ended in a panic, a hang,
//! garbage or a message pointing at a column of generated JSON.

use memtint_engine::dram_sim::run_json;
use memtint_engine::multicore::run_sim_json;

fn sim_err(spec: &str) -> String {
    run_sim_json(spec).expect_err("the spec must be refused").to_string()
}

fn dram_err(spec: &str) -> String {
    run_json(spec).expect_err("the spec must be refused").to_string()
}

/// A CPU-trace run spec with `os` and `overrides` as given (JSON text, which may hold the `NaN`
/// and `Infinity` Python writes).
fn sim_spec(os: &str, overrides: &str) -> String {
    format!(r#"{{"machine": "i7-860", "programs": ["light", "light"], "instructions": 1000, "os": {os}, "overrides": {overrides}}}"#)
}

fn generate_spec(generate: &str, outstanding: &str) -> String {
    format!(r#"{{"machine": "ddr4-2400", "workload": {{"generate": {generate}}}, "outstanding": {outstanding}}}"#)
}

#[test]
fn a_value_of_the_wrong_kind_in_a_run_spec_names_its_key_path() {
    let e = sim_err(&sim_spec(r#"{"colours": [[-1], [1]]}"#, "{}"));
    assert!(e.contains("os.colours[0][0]: invalid value: integer `-1`, expected u32"), "{e}");
    assert!(!e.contains("column"), "{e}");
    let e = sim_err(&sim_spec(r#"{"exclude_bits": [3, -2]}"#, "{}"));
    assert!(e.contains("os.exclude_bits[1]: invalid value: integer `-2`, expected u32"), "{e}");
    let e = sim_err(&sim_spec(r#"{"sched": {"switch_cycles": -5}}"#, "{}"));
    assert!(e.contains("os.sched.switch_cycles: invalid value: integer `-5`, expected u64"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10, "footprint_bytes": 1e30}"#, "4"));
    assert!(e.contains("workload.generate.footprint_bytes: invalid type: floating point `1e+30`, expected u64"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10, "seed": 18446744073709551616}"#, "4"));
    assert!(e.contains("workload.generate.seed: invalid type: floating point"), "{e}");
    let e = dram_err(&generate_spec(r#"{"kind": "random", "requests": 10}"#, "1e20"));
    assert!(e.contains("outstanding: invalid type: floating point `1e+20`"), "{e}");
}

/// Python's json.dumps writes NaN and an overflowing float as `NaN` and `Infinity`.
#[test]
fn nan_and_infinity_name_their_key() {
    let cases = [
        (sim_spec("{}", r#"{"controller": {"write_high_watermark": NaN}}"#), "overrides.controller.write_high_watermark"),
        (sim_spec("{}", r#"{"cpu": {"frequency_ghz": NaN}}"#), "overrides.cpu.frequency_ghz"),
        (sim_spec(r#"{"policy": "mcp", "mcp": {"mpki_threshold": NaN}}"#, "{}"), "os.mcp.mpki_threshold"),
        (sim_spec("{}", r#"{"controller": {"read_queue": Infinity}}"#), "overrides.controller.read_queue"),
        (sim_spec("{}", r#"{"cache": {"llc": {"size_bytes": 1e400}}}"#), "overrides.cache.llc.size_bytes"),
    ];
    for (spec, key) in cases {
        let e = sim_err(&spec);
        assert!(e.contains(&format!("{key}: not valid JSON")) && e.contains("NaN and infinite numbers"), "{key}: {e}");
    }
}

/// TOML values (profile parameters here; device and machine files alike) may be `nan` or `inf`.
#[test]
fn a_non_finite_number_in_toml_names_its_key() {
    let spec = r#"{"machine": "i7-860", "programs": ["random:reads_pki=nan"], "instructions": 1000}"#;
    let e = sim_err(spec);
    assert!(e.contains("workload parameters 'reads_pki=nan': reads_pki: must be a finite number, got NaN"), "{e}");
}

/// `--set controller.frontend_latency=1099511627776` aborted allocating 16 TiB of latency
/// histogram.
#[test]
fn a_latency_beyond_its_bound_is_an_error_naming_the_key_before_anything_is_allocated() {
    let spec = r#"{"machine": "ddr4-2400", "workload": {"generate": {"kind": "random", "requests": 100}},
        "overrides": {"controller": {"frontend_latency": 1099511627776}}}"#;
    let e = dram_err(spec);
    assert!(e.contains("controller.frontend_latency: must be between 1 and 100000 cycles"), "{e}");
    let e = sim_err(&sim_spec("{}", r#"{"cache": {"llc": {"latency": 1099511627776}}}"#));
    assert!(e.contains("cache.llc.latency: must be between 0 and 100000 cycles"), "{e}");
    let e = sim_err(&sim_spec(r#"{"sched": {"switch_cycles": 1099511627776}}"#, "{}"));
    assert!(e.contains("os.sched.switch_cycles: must be between 0 and 100000 cycles"), "{e}");
    let e = dram_err(
        &spec
            .replace(r#""frontend_latency": 1099511627776"#, r#""atlas": {"starvation_threshold": 18446744073709551615}"#)
            .replace("\"overrides\"", "\"scheduler\": \"atlas\", \"overrides\""),
    );
    assert!(e.contains("controller.atlas.starvation_threshold: must be between 0 and 1000000000000 cycles"), "{e}");
}
