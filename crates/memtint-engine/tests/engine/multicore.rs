//! Multi-programmed CPU-trace runs end to end: real SPEC traces, determinism, and the errors a
//! user can cause (issue: multicore simulation, tests 5 and 6).

use memtint_engine::multicore::{run_sim, SimSpec};
use memtint_engine::workload::{open_cpu_workload, trace_stats};
use serde_json::{json, Value};
use std::path::PathBuf;

fn spec(v: Value) -> SimSpec {
    serde_json::from_value(v).expect("spec parses")
}

fn spec_traces() -> Option<PathBuf> {
    let dir = match std::env::var_os("MEMTINT_SPEC_TRACES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/spec2006"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("note: SPEC traces not found at {}; skipping (set MEMTINT_SPEC_TRACES)", dir.display());
        None
    }
}

fn err(v: Value) -> String {
    run_sim(&spec(v)).expect_err("the run must fail").to_string()
}

#[test]
fn spec_traces_run_and_their_mpki_matches_the_traces_own_count() {
    let Some(dir) = spec_traces() else { return };
    let traces: Vec<String> =
        ["403.gcc.gz", "456.hmmer.gz", "458.sjeng.gz", "447.dealII.gz"].iter().map(|t| dir.join(t).display().to_string()).collect();
    let instructions = 2_000_000;
    // Without an LLC every trace load is a memory access, so the simulated MPKI must be the
    // trace's own reads per kilo-instruction over the same instructions.
    let stats = run_sim(&spec(json!({
        "machine": "ddr4-2400",
        "programs": traces,
        "instructions": instructions,
        "overrides": {"cache": {"llc": "none"}},
    })))
    .unwrap();
    for (i, t) in traces.iter().enumerate() {
        let core = &stats["cores"][i];
        let mut src = open_cpu_workload(t, 1).unwrap();
        let own = trace_stats(src.as_mut(), Some(instructions)).unwrap();
        let simulated = core["llc_mpki"].as_f64().unwrap();
        let expected = own.reads_pki();
        assert!((simulated - expected).abs() <= 0.01 * expected, "{t}: simulated MPKI {simulated:.3}, trace's own {expected:.3}");
        assert!(core["ipc"].as_f64().unwrap() > 0.0);
        assert_eq!(core["instructions"].as_u64(), Some(instructions));
    }
    // With the LLC the same traces still run, and the cache can only remove misses.
    let cached = run_sim(&spec(json!({"machine": "ddr4-2400", "programs": traces, "instructions": instructions}))).unwrap();
    for i in 0..traces.len() {
        let (with, without) = (cached["cores"][i]["llc_mpki"].as_f64().unwrap(), stats["cores"][i]["llc_mpki"].as_f64().unwrap());
        assert!(with <= without * 1.01, "core {i}: MPKI with LLC {with} > without {without}");
    }
}

#[test]
fn identical_seeds_give_identical_statistics() {
    let s = json!({"machine": "i7-860", "programs": ["stream", "random", "copy", "light"], "instructions": 300_000,
                   "os": {"policy": "bpm"}, "seed": 9});
    let strip = |mut v: Value| {
        for k in ["wall_seconds", "requests_per_second", "instructions_per_second"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v["dram"].as_object_mut().unwrap().retain(|k, _| !k.contains("second") && k != "wall_seconds");
        v
    };
    let a = strip(run_sim(&spec(s.clone())).unwrap());
    let b = strip(run_sim(&spec(s.clone())).unwrap());
    assert_eq!(a, b);
    let mut other = s;
    other["seed"] = json!(10);
    assert_ne!(a["cores"], strip(run_sim(&spec(other)).unwrap())["cores"]);
}

#[test]
fn every_core_retires_exactly_its_target_and_pages_land_in_its_colours() {
    let stats = run_sim(&spec(json!({"machine": "i7-860", "programs": ["stream", "light"], "instructions": 200_000,
                                      "os": {"policy": "bpm", "strict": true}})))
    .unwrap();
    for c in stats["cores"].as_array().unwrap() {
        assert_eq!(c["instructions"].as_u64(), Some(200_000));
        assert!(c["pages"].as_u64().unwrap() > 0);
        // bpm on 2 processes: 16 of the 32 bank colours each, on both channels.
        assert_eq!(c["banks_used"].as_u64(), Some(32), "{c}");
        assert_eq!(c["colour_overflow_pages"].as_u64(), Some(0));
    }
}

#[test]
fn unknown_policy_lists_the_valid_ones() {
    let e = err(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "os": {"policy": "bmp"}}));
    assert!(e.contains("unknown placement policy 'bmp'") && e.contains("bpm-plus"), "{e}");
}

#[test]
fn colours_that_do_not_exist_are_an_error() {
    let e = err(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
                       "os": {"policy": "bpm", "colours": [[0, 40]]}}));
    assert!(e.contains("40"), "{e}");
}

#[test]
fn too_few_frames_for_a_strict_colour_set_is_an_error_naming_the_process() {
    // One colour of 32 is 256 MiB (65536 frames); random over 1 GiB touches more pages.
    let e = err(json!({
        "machine": "i7-860", "programs": ["random:footprint_bytes=1073741824"], "instructions": 4_000_000,
        "os": {"policy": "bpm", "colours": [[5]], "strict": true},
    }));
    assert!(e.contains("process 0") && e.contains("colours 5"), "{e}");
}

#[test]
fn malformed_cpu_trace_names_file_line_and_reason() {
    let dir = std::env::temp_dir().join(format!("memtint-mc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.trace");
    std::fs::write(&path, "3 0x1000\n2 0x2000 0x40\n7 zebra\n").unwrap();
    let e = err(json!({"machine": "ddr4-2400", "programs": [path.display().to_string()], "instructions": 1000}));
    assert!(e.contains("bad.trace:3") && e.contains("zebra"), "{e}");
    let missing = dir.join("missing.trace");
    let e = err(json!({"machine": "ddr4-2400", "programs": [missing.display().to_string()], "instructions": 1000}));
    assert!(e.contains("missing.trace") && e.contains("no such file"), "{e}");
}

#[test]
fn more_programs_than_cores_and_zero_instructions_are_errors() {
    let e = err(json!({"machine": "i7-860", "programs": ["light", "light", "light", "light", "light"], "instructions": 1000}));
    assert!(e.contains("5 programs") && e.contains("4 cores"), "{e}");
    let e = err(json!({"machine": "i7-860", "programs": ["light"], "instructions": 0}));
    assert!(e.contains("instructions"), "{e}");
}

#[test]
fn a_private_l2_filters_the_llc_and_keeps_dram_traffic_of_a_small_footprint_at_zero() {
    let program = "random:footprint_bytes=131072,reads_pki=50,writes_pki=0";
    let base = json!({"machine": "ddr4-2400", "programs": [program, "stream"], "instructions": 1_000_000});
    let mut with_l2 = base.clone();
    with_l2["overrides"] = json!({"cache": {"l2": {"size_bytes": 262144, "ways": 8, "latency": 12, "mshrs": 16}}});
    let a = run_sim(&spec(base)).unwrap();
    let b = run_sim(&spec(with_l2)).unwrap();
    let (a0, b0) = (&a["cores"][0], &b["cores"][0]);
    // 128 KiB fits a 256 KiB L2: after the cold misses, loads stop at the L2.
    let loads = a0["llc_accesses"].as_u64().unwrap();
    assert!(b0["l2_hits"].as_u64().unwrap() > loads * 9 / 10, "{b0}");
    assert!(b0["llc_accesses"].as_u64().unwrap() < loads / 10, "{b0}");
    assert_eq!(a0["l2_hits"].as_u64(), Some(0));
    // The same cold misses reach DRAM either way.
    assert_eq!(a0["dram_reads"], b0["dram_reads"]);
    // L2 hits are faster than LLC hits: its loads wait less in total. (Not its IPC: its 2048
    // cold misses to DRAM, shared with the stream, stall the window about as long as the hits.)
    let waited = |c: &serde_json::Value| c["core_stats"]["load_latency_sum"].as_u64().unwrap();
    assert!(waited(b0) < waited(a0) * 3 / 4, "{a0} {b0}");
    // The streaming program misses both caches alike.
    let (s_a, s_b) = (a["cores"][1]["llc_mpki"].as_f64().unwrap(), b["cores"][1]["llc_mpki"].as_f64().unwrap());
    assert!((s_a - s_b).abs() < 0.02 * s_a, "{s_a} vs {s_b}");
}

#[test]
fn a_machine_can_be_given_as_a_table_and_a_mistake_in_it_is_named() {
    let table = json!({
        "name": "small", "dram": {"device": "ddr4-2400", "density_gbit": 8, "mapping": "RoBaRaCoCh"},
        "cpu": {"cores": 2}, "cache": {"llc": {"size_bytes": 1048576, "ways": 8, "latency": 20, "mshrs": 16}},
    });
    let stats = run_sim(&spec(json!({"machine": table, "programs": ["stream", "light"], "instructions": 100_000}))).unwrap();
    assert_eq!(stats["config"]["machine"], "small");
    assert_eq!(stats["config"]["cache"]["llc"]["size_bytes"], 1048576);
    let bad = json!({"machine": {"name": "x", "dram": {"device": "ddr4-2400", "density_gbit": 8, "mapping": "RoBaRaCoCh", "chanels": 2}},
                     "programs": ["stream"], "instructions": 10});
    let e = serde_json::from_value::<SimSpec>(bad).unwrap_err().to_string();
    assert!(e.contains("chanels"), "{e}");
}

/// `v` without its wall-clock rates and the controller implementation's name.
fn without_wall_clock_and_implementation(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                for k in ["wall_seconds", "requests_per_second", "instructions_per_second", "dram_cycles_per_second", "implementation"] {
                    o.remove(k);
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// The multicore driver with lane controllers (each `tick` / `enqueue` dispatching on the
/// controller's shape) and with general controllers gives the same run, statistics for
/// statistics, with every DRAM command checked, on every specialised lane shape, the run-time
/// shape and two channels.
#[test]
fn the_multicore_lane_path_equals_the_general_path_on_every_shape() {
    use memtint_engine::config::{MachineConfig, MemoryConfig};
    use memtint_engine::controller::shape::shape_name;
    use memtint_engine::memory_system::MemorySystem;
    // (machine, channels, ranks, scheduler, the lane shape it runs as: `controller/shape.rs`)
    let cases = [
        ("ddr4-2400", 1, 1, "fr-fcfs", "Fixed<2, false>"),
        ("ddr3-1600", 1, 1, "fr-fcfs", "Fixed<1, false>"),
        ("ddr3-1600", 1, 1, "fcfs", "Fixed<1, false>"),
        ("ddr4-2400", 1, 1, "fr-fcfs-cap", "Fixed<2, false>"),
        ("ddr3-1600", 1, 2, "fr-fcfs", "Fixed<2, true>"),
        ("ddr4-2400", 1, 2, "fr-fcfs", "Fixed<4, true>"),
        ("ddr4-2400", 1, 4, "fcfs", "Dynamic"),
        ("ddr4-2400", 2, 1, "fr-fcfs", "Fixed<2, false>"),
    ];
    for (machine, channels, ranks, scheduler, shape) in cases {
        let mut m = MachineConfig::load(machine).unwrap();
        (m.dram.channels, m.dram.ranks) = (channels, ranks);
        let m = m.with_overrides(&json!({"controller": {"implementation": "lanes", "scheduler": scheduler}})).unwrap();
        let mem = MemorySystem::new(&MemoryConfig::resolve(&m).unwrap()).unwrap();
        let [c, ..] = mem.lane_controllers() else { panic!("{machine}: lanes") };
        assert_eq!(shape_name(c.shape()), shape, "{machine} {channels} ch x {ranks} r, {scheduler}");
        let run = |implementation: &str| {
            let stats = run_sim(&spec(json!({
                "machine": machine,
                "scheduler": scheduler,
                "programs": ["stream", "random", "copy", "light"],
                "instructions": 100_000,
                "check": true,
                "overrides": {"dram": {"channels": channels, "ranks": ranks}, "controller": {"implementation": implementation}},
            })))
            .unwrap_or_else(|e| panic!("{machine} {channels} ch x {ranks} r, {scheduler}, {implementation}: {e}"));
            let dram = &stats["dram"];
            assert!(dram["commands_checked"].as_u64().unwrap() > 1000, "{machine} {scheduler} {implementation}: {dram}");
            assert_eq!(dram["violations"], json!(0), "{machine} {scheduler} {implementation}: {dram}");
            without_wall_clock_and_implementation(stats)
        };
        let (lanes, general) = (run("lanes"), run("general"));
        assert!(lanes["dram_requests"].as_u64().unwrap() > 1000, "{}", lanes["dram_requests"]);
        let diff = first_difference(&lanes, &general, String::new());
        assert!(diff.is_none(), "{machine} {channels} ch x {ranks} r, {scheduler}: lanes and general differ at {}", diff.unwrap());
    }
}

/// The path and the two values where `a` and `b` first differ.
fn first_difference(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys())
            .find_map(|k| first_difference(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), format!("{path}.{k}"))),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]")))
        }
        _ => (a != b).then(|| format!("{path}: {a} against {b}")),
    }
}

fn ipcs(s: &Value) -> Vec<f64> {
    s["cores"].as_array().unwrap().iter().map(|c| c["ipc"].as_f64().unwrap()).collect()
}

/// Sixteen identical streams share 64 LLC MSHRs on the CCPS 16-core machine. Served in the order
/// they were refused (gem5's crossbar retry FIFO), they run at equal speed; served in core order
/// the highest-numbered cores never got an entry and the run never ended.
#[test]
fn equal_streams_sharing_llc_mshrs_get_equal_speed() {
    let run = |arb: &str, n: usize| {
        run_sim(&spec(json!({
            "machine": "ccps-16c-64b", "programs": vec!["stream"; n], "instructions": 100000,
            "overrides": {"cache": {"llc": {"mshr_arbitration": arb}}},
        })))
    };
    let fair = ipcs(&run("fifo", 16).expect("16 streams finish"));
    let (lo, hi) = fair.iter().fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    assert!(hi / lo < 1.25, "equal streams, equal IPC: {fair:?}");
    let biased = ipcs(&run("core-order", 12).unwrap());
    assert!(biased[0] > 4.0 * biased[11], "core order starves the last core: {biased:?}");
    assert!(run("fifo", 12).is_ok() && ipcs(&run("fifo", 12).unwrap())[11] > 0.5 * biased[0]);
}

/// A thread that can never retire (core order gives every freed LLC MSHR to lower cores)
/// ends the run with an error naming it, instead of running for ever.
#[test]
fn a_thread_that_stops_retiring_is_a_named_error() {
    let e = err(json!({
        "machine": "ccps-16c-64b", "programs": vec!["stream"; 16], "instructions": 100_000_000u64,
        "overrides": {"cpu": {"watchdog_cycles": 200_000}, "cache": {"llc": {"mshr_arbitration": "core-order"}}},
    }));
    assert!(e.contains("(process 1") && e.contains("retired no instruction in") && e.contains("watchdog_cycles"), "{e}");
    let e = err(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "overrides": {"cpu": {"watchdog_cycles": 5}}}));
    assert!(e.contains("cpu.watchdog_cycles") && e.contains("got 5"), "{e}");
}

#[test]
fn an_unknown_mshr_arbitration_is_an_error_naming_the_key() {
    let e = err(json!({
        "machine": "i7-860", "programs": ["stream"], "instructions": 1000,
        "overrides": {"cache": {"llc": {"mshr_arbitration": "lottery"}}},
    }));
    assert!(e.contains("mshr_arbitration") && e.contains("fifo"), "{e}");
}
