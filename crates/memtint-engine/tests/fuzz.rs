//! Fuzzing the inputs users hand memtint: DRAM traces (Ramulator, DRAMSim3 and DRAMSim2 text,
//! plain and gzip), CPU traces (Ramulator text), `.mtt` binary traces, DRAM and CPU-trace run
//! specifications (JSON, as the CLI and the Python API send them, with the `NaN` and
//! `Infinity` Python writes), device files, machine settings given as overrides, and DRAMSim3
//! traces run with their timestamps. Valid seeds are mutated (bytes flipped, inserted, deleted,
//! lines repeated, cut short, values replaced by hostile or extreme ones: NaN, inf, 0, negative,
//! 1e400, 2^40, 2^64) with a seeded generator, and every case must end in a success or an error
//! that names where the problem is (file and line, or the key): never a panic, a hang, an
//! "internal error" or an error without a place. Each case's simulated work is small (a few
//! hundred requests or a few thousand instructions), so a case that runs long is a hang.
//!
//! `cargo test` runs a fixed-seed slice (`MEMTINT_FUZZ_CASES`, default 3000 cases);
//! `make fuzz` runs 10^5 and more, in release mode, and prints the tally.

use memtint_engine::trace::{DramTraceFormat, DramTraceReader, TraceSource};
use memtint_engine::workload::{BinaryTraceReader, BinaryTraceWriter, CpuRecord, CpuTraceReader, CpuTraceSource};
use memtint_engine::Error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Longest a single case may take before it counts as a hang.
const CASE_LIMIT: Duration = Duration::from_secs(20);
/// Records or requests read from one input at most (a generated input is small; a reader that
/// yields more is looping).
const MAX_RECORDS: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    DramText,
    DramSim3Text,
    DramSim2Text,
    DramGzip,
    CpuText,
    CpuGzip,
    Mtt,
    DramSpec,
    SimSpec,
    /// A mutated device file, run.
    Device,
    /// Extreme values in machine settings (overrides or a machine table), run.
    MachineValue,
    /// A DRAMSim3 trace with hostile timestamps, run.
    DramSim3Run,
    /// A real-time task set (rt_sim), mutated.
    RtSpec,
    /// A mapping probe's measurements (mapping_probe), mutated.
    ProbeSpec,
}

const KINDS: [Kind; 14] = [
    Kind::DramText,
    Kind::DramSim3Text,
    Kind::DramSim2Text,
    Kind::DramGzip,
    Kind::CpuText,
    Kind::CpuGzip,
    Kind::Mtt,
    Kind::DramSpec,
    Kind::SimSpec,
    Kind::Device,
    Kind::MachineValue,
    Kind::DramSim3Run,
    Kind::RtSpec,
    Kind::ProbeSpec,
];

/// What one case ended in.
enum Outcome {
    Ok,
    /// An error that names its place (file and line, or a key).
    Clean,
    /// An error without a place: a finding.
    Unnamed(String),
    /// An "internal error" (a stall, a broken invariant): a finding.
    Internal(String),
    Panic(String),
}

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    ok: u64,
    clean_errors: u64,
    unnamed: Vec<String>,
    internal: Vec<String>,
    panics: Vec<String>,
    hangs: Vec<String>,
    /// Seconds spent per kind (to keep `make test`'s slice short).
    seconds: Vec<(Kind, f64)>,
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Hostile fragments a mutation splices in.
const FRAGMENTS: &[&[u8]] = &[
    b"\0",
    b"\x1b[2J",
    b"\r",
    b"\n",
    b"\xff\xfe",
    b"0x",
    b"-",
    b" ",
    b"\t",
    b"99999999999999999999999",
    b"0xffffffffffffffffff",
    b"18446744073709551615",
    b"R",
    b"W",
    b"READ",
    b"WRITE",
    b"#",
    b"1e9",
    b"nan",
    b"-1",
    b"\xc3\x28",
    b"0x40 R 5",
];

fn mutate(rng: &mut ChaCha8Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        match rng.gen_range(0..7) {
            0 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                b[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => {
                let i = rng.gen_range(0..=b.len());
                let f = FRAGMENTS[rng.gen_range(0..FRAGMENTS.len())];
                b.splice(i..i, f.iter().copied());
            }
            2 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                let j = (i + rng.gen_range(1..16)).min(b.len());
                b.drain(i..j);
            }
            3 if !b.is_empty() => b.truncate(rng.gen_range(0..b.len())),
            4 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            5 if !b.is_empty() => {
                // Repeat a stretch (a line, a record).
                let i = rng.gen_range(0..b.len());
                let j = (i + rng.gen_range(1..40)).min(b.len());
                let part = b[i..j].to_vec();
                b.splice(j..j, part);
            }
            _ => b.clear(),
        }
    }
    b
}

fn dram_seed(rng: &mut ChaCha8Rng, format: DramTraceFormat) -> Vec<u8> {
    let mut s = String::from("# a trace\n");
    for i in 0..rng.gen_range(1..12u64) {
        let addr = rng.gen_range(0..1u64 << 33) & !63;
        let w = rng.gen_bool(0.3);
        if format == DramTraceFormat::DramSim3 {
            s += &format!("0x{addr:x} {} {}\n", if w { "WRITE" } else { "READ" }, i * 10);
        } else if format == DramTraceFormat::DramSim2 {
            let read = ["P_MEM_RD", "P_FETCH", "P_LOCK_RD", "P_LOCK_WR"][rng.gen_range(0..4)];
            s += &format!("0x{addr:X} {} {}\n", if w { "P_MEM_WR" } else { read }, i * 10);
        } else if rng.gen_bool(0.5) {
            s += &format!("0x{addr:x} {}\n", if w { "W" } else { "R" });
        } else {
            s += &format!("{addr} {}\n", if w { "W" } else { "R" });
        }
    }
    s.into_bytes()
}

fn cpu_records(rng: &mut ChaCha8Rng) -> Vec<CpuRecord> {
    (0..rng.gen_range(1..12))
        .map(|_| CpuRecord {
            bubbles: rng.gen_range(0..20),
            read: rng.gen::<u64>() >> rng.gen_range(0..40),
            writeback: rng.gen_bool(0.3).then(|| rng.gen::<u64>() >> rng.gen_range(0..40)),
        })
        .collect()
}

fn cpu_seed(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut s = String::new();
    for r in cpu_records(rng) {
        let hex = rng.gen_bool(0.5);
        let a = |v: u64| if hex { format!("0x{v:x}") } else { v.to_string() };
        match r.writeback {
            Some(w) => s += &format!("{} {} {}\n", r.bubbles, a(r.read), a(w)),
            None => s += &format!("{} {}\n", r.bubbles, a(r.read)),
        }
    }
    s.into_bytes()
}

fn mtt_seed(rng: &mut ChaCha8Rng, dir: &Path) -> Vec<u8> {
    let path = dir.join("seed.mtt");
    let mut w = BinaryTraceWriter::create(&path, rng.gen_bool(0.3)).unwrap();
    for r in cpu_records(rng) {
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    if rng.gen_bool(0.2) {
        gzip(&bytes)
    } else {
        bytes
    }
}

/// Numbers at and past every edge, as JSON text: Python's `NaN` and `Infinity`, a float
/// beyond f64, 2^40, 2^64 - 1 and 2^64.
const EXTREME_JSON: &[&str] = &[
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "1e30",
    "1099511627776",
    "18446744073709551615",
    "18446744073709551616",
    "4000000000",
    "0",
    "-1",
    "-1.5",
    "0.5",
    "1",
    // Above 0 but no clock, time or bandwidth; finite but no voltage or current.
    "5e-324",
    "1e-300",
    "1e100",
    "1e308",
];

/// The same in TOML (device files).
const EXTREME_TOML: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "1e400",
    "1e30",
    "1099511627776",
    "18446744073709551615",
    "18446744073709551616",
    "4000000000",
    "0",
    "-1",
    "-1.5",
    "0.5",
    "1",
    "2",
    "\"x\"",
    "[]",
    "5e-324",
    "1e-300",
    "1e100",
    "1e308",
];

/// A placeholder string that `raw_tokens` turns into `token` in the JSON text.
fn raw(token: &str) -> Value {
    json!(format!("@@RAW:{token}@@"))
}

/// JSON text of `v` with each `raw` placeholder replaced by its token.
fn raw_tokens(v: &Value) -> String {
    let mut text = v.to_string();
    while let Some(start) = text.find("\"@@RAW:") {
        let end = text[start..].find("@@\"").expect("placeholder end") + start;
        let token = text[start + 7..end].to_string();
        text.replace_range(start..end + 3, &token);
    }
    text
}

/// Values a mutated specification may carry instead of a valid one.
fn hostile_value(rng: &mut ChaCha8Rng) -> Value {
    if rng.gen_bool(0.4) {
        return raw(EXTREME_JSON[rng.gen_range(0..EXTREME_JSON.len())]);
    }
    match rng.gen_range(0..13) {
        0 => json!(-5),
        1 => json!(1.5),
        2 => json!("lots"),
        3 => json!(null),
        4 => json!([1, 2]),
        5 => json!({"x": 1}),
        6 => json!(true),
        7 => json!(u64::MAX),
        8 => json!(0),
        9 => json!(1_000_000_000u64),
        10 => json!("\u{1b}[2J\u{0}"),
        // A list that must name at least one thing (a task's bank colours).
        11 => json!([]),
        _ => json!(""),
    }
}

/// Replace one value somewhere in `v` (a key at any depth) with a hostile one, or add an
/// unknown key.
fn mutate_json(rng: &mut ChaCha8Rng, v: &mut Value) {
    let paths = leaf_paths(v, Vec::new());
    if paths.is_empty() || rng.gen_bool(0.1) {
        if let Some(o) = v.as_object_mut() {
            o.insert("turbo".into(), json!(1));
        }
        return;
    }
    let path = &paths[rng.gen_range(0..paths.len())];
    let mut slot = &mut *v;
    for key in path {
        slot = match key {
            Key::Field(k) => slot.get_mut(k.as_str()).unwrap(),
            Key::Index(i) => slot.get_mut(*i).unwrap(),
        };
    }
    *slot = hostile_value(rng);
}

#[derive(Clone)]
enum Key {
    Field(String),
    Index(usize),
}

fn leaf_paths(v: &Value, at: Vec<Key>) -> Vec<Vec<Key>> {
    let mut out = vec![at.clone()];
    match v {
        Value::Object(o) => {
            for (k, c) in o {
                let mut p = at.clone();
                p.push(Key::Field(k.clone()));
                out.extend(leaf_paths(c, p));
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let mut p = at.clone();
                p.push(Key::Index(i));
                out.extend(leaf_paths(c, p));
            }
        }
        _ => {}
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Keep a mutated run short: the harness checks input handling, not run length (a huge
/// instruction count is a limit question, tested elsewhere).
fn cap_lengths(v: &mut Value) {
    // A whole number, given as a number or as a `raw` token.
    let whole = |v: &Value| {
        v.as_u64().or_else(|| {
            v.as_str()?.strip_prefix("@@RAW:")?.strip_suffix("@@")?.parse::<u128>().ok().map(|n| n.min(u64::MAX as u128) as u64)
        })
    };
    for (key, cap) in [("instructions", 2000u64), ("warmup", 2000), ("requests", 200), ("outstanding", 64)] {
        if let Some(n) = v.get(key).and_then(whole) {
            v[key] = json!(n.min(cap));
        }
        if let Some(n) = v.pointer(&format!("/workload/generate/{key}")).and_then(whole) {
            v["workload"]["generate"][key] = json!(n.min(cap));
        }
    }
    // A thread that runs on past its target ("continue", the default) runs in detail until the
    // last process arrives and ends, so a late arrival is simulated time: an arrival mutated to
    // seconds is a valid long run, not a hang. Without one, idle time is skipped and any
    // arrival is cheap, so it stays uncapped there.
    let run_at_end = v.get("at_end").and_then(Value::as_str).unwrap_or("continue").to_string();
    if let Some(procs) = v.get_mut("processes").and_then(Value::as_array_mut) {
        let continues = procs.iter().any(|p| p.get("at_end").and_then(Value::as_str).unwrap_or(&run_at_end) == "continue");
        for p in procs.iter_mut().filter(|_| continues) {
            let ns = p
                .get("arrive_ns")
                .and_then(|v| v.as_f64().or_else(|| v.as_str()?.strip_prefix("@@RAW:")?.strip_suffix("@@")?.parse::<f64>().ok()));
            if let Some(ns) = ns.filter(|ns| ns.is_finite() && *ns > 1e5) {
                p["arrive_ns"] = json!(ns.min(1e5));
            }
        }
    }
}

fn dram_spec_seed(rng: &mut ChaCha8Rng) -> Value {
    let machine = ["ddr4-2400", "ddr3-1333", "i7-860", "ddr4-2400-2ch2r", "lpddr4-3200", "ddr5-4800"][rng.gen_range(0..6)];
    let kind = ["random", "stream", "mix", "strided"][rng.gen_range(0..4)];
    let scheduler = ["fr-fcfs", "fcfs", "tcm", "bliss"][rng.gen_range(0..4)];
    let writes = ["batched", "ramulator"][rng.gen_range(0..2)];
    let mut v = json!({
        "machine": machine,
        "workload": {"generate": {"kind": kind, "requests": 100, "seed": rng.gen_range(0..9)}},
        "scheduler": scheduler,
        "overrides": {"controller": {"read_queue": 16, "write_handling": writes}},
        "outstanding": 16,
    });
    if kind == "strided" {
        // A stride the mutations may push past the footprint.
        v["workload"]["generate"]["stride_bytes"] = json!(4096);
        v["workload"]["generate"]["footprint_bytes"] = json!(1 << 20);
    }
    v
}

fn sim_spec_seed(rng: &mut ChaCha8Rng) -> Value {
    let policies = ["buddy", "bpm", "cache-only", "a-vp", "bank-only"];
    let machine = ["i7-860", "ddr4-2400"][rng.gen_range(0..2)];
    let programs = &["stream", "light", "random:reads_pki=20", "copy"][..rng.gen_range(1..5)];
    let mut v = json!({
        "machine": machine,
        "programs": programs,
        "instructions": 1000,
        "warmup": 500,
        "seed": rng.gen_range(0..9),
        "os": {
            "policy": policies[rng.gen_range(0..policies.len())], "colour_split": "contiguous", "frame_order": "aged",
            "exclude_bits": [], "sched": {"switch_cycles": 3000, "latency_cycles": 3000000},
        },
        "overrides": {"controller": {"write_queue": 32}, "cache": {"prefetcher": {"kind": "stream"}}},
    });
    if rng.gen_bool(0.3) {
        // CAT beside the placement policy: an even split, or ways per process.
        v["os"]["resctrl"] = json!(["cat"]);
        if rng.gen_bool(0.5) {
            v["os"]["cat"] = json!({"ways": (0..programs.len()).map(|_| rng.gen_range(1..6)).collect::<Vec<u32>>()});
        }
    }
    if rng.gen_bool(0.3) {
        // Memory pressure: a machine cut small, swapping, and dynamic BPM under bpm.
        v["os"]["memory_mb"] = json!([8, 16, 64][rng.gen_range(0..3)]);
        v["os"]["overflow"] = json!("swap");
        v["os"]["swap"] = json!({"fault_ns": 2000.0});
        if v["os"]["policy"] == "bpm" {
            v["os"]["dynamic"] = json!("dynamic-bpm");
            v["os"]["dynamic-bpm"] = json!({"epoch_ns": 2000.0});
            if rng.gen_bool(0.5) {
                // Its copies paced by the daemon, or made when a page is touched.
                let rate = [1.0, 50.0, 5000.0, 0.0][rng.gen_range(0..4)];
                v["os"]["recolour"] =
                    if rate == 0.0 { json!({"mode": "lazy"}) } else { json!({"pages_per_ms": rate, "period_ns": 1000.0}) };
            }
        }
    }
    if rng.gen_bool(0.15) {
        // Channel partitioning on the BPM+ BIOS setting, static or balanced by bandwidth.
        v["machine"] = json!("i7-860-bpm-plus");
        v["os"]["policy"] = json!(["channel-only", "bpm-plus"][rng.gen_range(0..2)]);
        if rng.gen_bool(0.7) {
            let dynamic = if v["os"]["policy"] == "channel-only" { "dynamic-channel-only" } else { "dynamic-bpm-plus" };
            v["os"]["dynamic"] = json!(dynamic);
            let (uf, share) = ([0.0, 0.2, 5.0][rng.gen_range(0..3)], [0.0, 0.1, 1.0][rng.gen_range(0..3)]);
            v["os"][dynamic] = json!({"epoch_ns": 2000.0, "uf_threshold": uf, "min_channel_share": share});
        }
    }
    if rng.gen_bool(0.25) {
        // An open mix: processes arriving later and leaving at their end, a program in phases,
        // and accessed-bit sampling.
        let arrive = [0.0, 500.0, 5000.0][rng.gen_range(0..3)];
        let at_end = ["continue", "wait", "exit"][rng.gen_range(0..3)];
        v["processes"] = json!([
            {"threads": ["phases:stream@300+light"], "at_end": at_end},
            {"threads": ["random:reads_pki=20"], "arrive_ns": arrive},
        ]);
        v.as_object_mut().unwrap().remove("programs");
        v["os"]["hot_pages"] = json!({"enabled": rng.gen_bool(0.5), "window_ns": 2000.0, "nhp_ns": 500.0, "ticks": 20, "tick_ns": 50.0});
    }
    if rng.gen_bool(0.3) {
        // Sampled: settings that fit the run, and ones that do not (a unit longer than the run,
        // a period shorter than a unit, a target error it cannot meet).
        let unit = [50, 100, 3000][rng.gen_range(0..3)];
        let warming = [0, 50, 100][rng.gen_range(0..3)];
        let period = [100, 300, 500, 60][rng.gen_range(0..4)];
        v["sampling"] = json!({"unit": unit, "warming": warming, "period": period});
        if rng.gen_bool(0.3) {
            v["sampling"]["functional"] = json!([0, 100, 10_000][rng.gen_range(0..3)]);
        }
        if rng.gen_bool(0.3) {
            v["sampling"]["target_error"] = json!([0.5, 0.001, 0.0][rng.gen_range(0..3)]);
        }
        if rng.gen_bool(0.3) {
            v["sampling"]["min_units"] = json!([0, 1, 30, 1_000_000][rng.gen_range(0..4)]);
        }
        if rng.gen_bool(0.2) {
            v["sampling"]["mode"] = json!(["phases", "periodic", "simpoint"][rng.gen_range(0..3)]);
            if rng.gen_bool(0.5) {
                v["sampling"]["clusters"] = json!([0, 1, 3, 1_000][rng.gen_range(0..4)]);
            }
        }
    }
    v
}

/// A small real-time task set under one of the schedules and refresh settings.
/// A probe's batch: pairs, row-miss pairs and a wide round, with noise, on a machine with or
/// without nodes.
fn probe_spec_seed(rng: &mut ChaCha8Rng) -> Value {
    let machine = ["i7-860", "xor-bank", "ddr4-2400-xor", "tiering-2to1"][rng.gen_range(0..4)];
    let mut line = || rng.gen_range(0..1u64 << 27) & !63;
    let (a, b, c, d) = (line(), line(), line(), line());
    let wide: Vec<u64> = (0..8).map(|i| (a ^ (i << 13)) & !63).collect();
    let corunner = [0.0, 2.0][rng.gen_range(0..2)];
    json!({
        "machine": machine,
        "measurements": [[[a, b]], [[a, c], [b, d]], [wide]],
        "repetitions": rng.gen_range(1..6),
        "warmup": rng.gen_range(0..3),
        "seed": rng.gen_range(0..100),
        "noise": {"jitter_ns": 5.0, "spike_rate": 0.1, "corunner_gbps": corunner},
    })
}

fn rt_spec_seed(rng: &mut ChaCha8Rng) -> Value {
    if rng.gen_bool(0.1) {
        // Pages by rank on a mapping whose rank bit lies inside the page (b7).
        let schedule = ["edf", "rm", "colored", "crs"][rng.gen_range(0..4)];
        return json!({
            "machine": "opteron-6128", "schedule": schedule, "unit_us": 10.0, "horizon": 40,
            "tasks": [{"name": "a", "period": 10, "wcet": 2, "compute": 1.0, "loads": 20}],
            "servers": [{"tasks": ["a"], "period": 10, "budget": 5}, {"tasks": [], "period": 10, "budget": 5}],
        });
    }
    if rng.gen_bool(0.25) {
        // Rate monotonic with coloured tasks and attackers (CAMC's test), short.
        let schedule = ["rm", "edf"][rng.gen_range(0..2)];
        return json!({
            "machine": "opteron-6128", "schedule": schedule, "unit_us": 1.0, "horizon": 300, "switch_us": 0.5,
            "tasks": [
                {"name": "a", "period": 150, "wcet": 90, "compute": 30.0, "loads": 100, "colours": [0]},
                {"name": "b", "period": 100, "wcet": 30, "compute": 20.0, "loads": 50, "colours": [rng.gen_range(0..2)]},
            ],
            "attackers": [{"colours": [rng.gen_range(0..32)], "outstanding": rng.gen_range(1..9), "write_share": 0.25},
                          {"colours": [8, 16], "pattern": "random"}],
        });
    }
    let schedule = ["edf", "rm", "colored", "crs"][rng.gen_range(0..4)];
    let refresh = ["scheme", "none", "all-bank", "fgr2", "fgr4"][rng.gen_range(0..5)];
    let machine = ["ddr4-2400-8r", "ddr3-1600-8r"][rng.gen_range(0..2)];
    let density = [1, 8, 64][rng.gen_range(0..3)];
    let server_schedule = ["edf", "rm"][rng.gen_range(0..2)];
    let mut spec = json!({
        "machine": machine,
        "schedule": schedule, "refresh": refresh, "unit_us": 100.0, "horizon": 640,
        "refs_per_window": 64, "jedec": false,
        "tasks": [
            {"name": "a", "period": 80, "wcet": 20, "compute": 10.0, "loads": 20, "pattern": "stream"},
            {"name": "b", "period": 160, "wcet": 40, "compute": 20.0, "loads": 40},
        ],
        "servers": [{"tasks": ["a"], "period": 40, "budget": 20}, {"tasks": ["b"], "period": 40, "budget": 15}],
        "server_schedule": server_schedule,
        "overrides": {"dram": {"refresh_density_gbit": density}},
    });
    // Copy settings: they act on a copy task (two instances) and are refused where none copies.
    if rng.gen_bool(0.2) {
        spec["copy_gbps"] = json!([0.5, 10.0, 1e5][rng.gen_range(0..3)]);
    }
    if rng.gen_bool(0.2) {
        spec["tasks"][rng.gen_range(0..2)]["copy_kb"] = json!([0, 16, 1u64 << 40][rng.gen_range(0..3)]);
    }
    spec
}

/// The device presets and a machine that runs each.
const DEVICES: &[(&str, &str)] = &[
    ("ddr3-1333", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr3-1333.toml"))),
    ("ddr3-1600", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr3-1600.toml"))),
    ("ddr4-2400", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr4-2400.toml"))),
    ("ddr4-2400-2ch2r", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr4-2400.toml"))),
    ("lpddr4-3200", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/lpddr4-3200.toml"))),
    ("ddr5-4800", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr5-4800.toml"))),
];

/// A device file with one to three `key = value` lines given an extreme value, or another
/// small one (which may break a relation between timings: tREFI below tRFC, tCCD_L below tCCD_S).
fn device_seed(rng: &mut ChaCha8Rng, text: &str) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let settable: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains('=') && !lines[i].trim_start().starts_with('#')).collect();
    for _ in 0..rng.gen_range(1..=3) {
        let i = settable[rng.gen_range(0..settable.len())];
        let key = lines[i].split('=').next().unwrap().trim().to_string();
        let value = if rng.gen_bool(0.5) {
            EXTREME_TOML[rng.gen_range(0..EXTREME_TOML.len())].to_string()
        } else {
            rng.gen_range(0..400u64).to_string()
        };
        lines[i] = format!("{key} = {value}");
    }
    if rng.gen_bool(0.1) {
        lines.remove(settable[rng.gen_range(0..settable.len())]);
    }
    (lines.join("\n") + "\n").into_bytes()
}

/// Component tables the machine presets leave unset, with keys that take cycles or counts.
const EXTRA_KEYS: &[&str] = &[
    "controller.tcm.quantum",
    "controller.tcm.shuffle_interval",
    "controller.atlas.quantum",
    "controller.atlas.starvation_threshold",
    "controller.timeout.cycles",
    "controller.bliss.clearing_interval",
    "controller.ccps.epoch",
    "controller.ccps.age_threshold",
    "controller.imps.epoch",
    "controller.fr-fcfs-cap.cap",
    "controller.par-bs.marking_cap",
    "cache.prefetcher.distance",
    "cache.prefetcher.degree",
    "cache.prefetcher.trackers",
    "cache.l2.latency",
];

/// The object keys (dotted) of `v`'s leaves: a machine's settings.
fn setting_keys(v: &Value, at: &str, out: &mut Vec<String>) {
    match v.as_object() {
        Some(o) => {
            for (k, c) in o {
                setting_keys(c, &if at.is_empty() { k.clone() } else { format!("{at}.{k}") }, out);
            }
        }
        None if !at.is_empty() => out.push(at.to_string()),
        None => {}
    }
}

/// Sets dotted `key` of `v` to `value`, making the tables on the way.
fn set_key(v: &mut Value, key: &str, value: Value) {
    let mut slot = v;
    for part in key.split('.') {
        if !slot.is_object() {
            *slot = json!({});
        }
        slot = slot.as_object_mut().unwrap().entry(part).or_insert(Value::Null);
    }
    *slot = value;
}

/// A setting's value in a `MachineValue` case: an extreme number mostly.
fn extreme_setting(rng: &mut ChaCha8Rng) -> Value {
    match rng.gen_range(0..10) {
        0..=6 => raw(EXTREME_JSON[rng.gen_range(0..EXTREME_JSON.len())]),
        7 => json!(rng.gen_range(0..100u64)),
        _ => hostile_value(rng),
    }
}

/// Arrival cycles at and past the bound (`MAX_ARRIVAL`, 10^12), as trace text.
const EXTREME_CYCLES: &[&str] = &[
    "999999999999",
    "1000000000000",
    "1000000000001",
    "10000000000000",
    "1000000000000000",
    "1099511627776",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
];

/// A DRAMSim3 trace whose arrivals mostly rise, with jumps to the edges and steps back.
fn dramsim3_run_seed(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut s = String::new();
    let mut t = 0u64;
    for _ in 0..rng.gen_range(1..10) {
        let addr = rng.gen_range(0..1u64 << 33) & !63;
        let op = if rng.gen_bool(0.3) { "WRITE" } else { "READ" };
        let cycle = match rng.gen_range(0..10) {
            0 | 1 => EXTREME_CYCLES[rng.gen_range(0..EXTREME_CYCLES.len())].to_string(),
            2 => t.saturating_sub(rng.gen_range(1..100)).to_string(),
            _ => {
                t = t.saturating_add(rng.gen_range(0..50_000));
                t.to_string()
            }
        };
        if let Ok(c) = cycle.parse::<u64>() {
            t = t.max(c);
        }
        s += &format!("0x{addr:x} {op} {cycle}\n");
    }
    s.into_bytes()
}

/// One of each controller choice the runs below vary.
fn controller_choice(rng: &mut ChaCha8Rng) -> Value {
    let implementation = ["auto", "general", "lanes"][rng.gen_range(0..3)];
    let refresh = ["all-bank", "none", "burst", "per-bank", "same-bank"][rng.gen_range(0..5)];
    let row_policy = ["open", "closed", "timeout"][rng.gen_range(0..3)];
    let mut c = json!({"implementation": implementation, "refresh": refresh, "row_policy": row_policy});
    let granularity = [1, 2, 4, 3][rng.gen_range(0..4)];
    let retention = [0.05, 1.0, 64.0, 0.0][rng.gen_range(0..4)];
    let refs = [16, 64, 8192][rng.gen_range(0..3)];
    let groups = ["all", "each"][rng.gen_range(0..2)];
    match refresh {
        "all-bank" => {
            let (postpone, pull_in) = if rng.gen_bool(0.5) { (rng.gen_range(0..10), 0) } else { (0, rng.gen_range(0..10)) };
            c["all-bank"] = json!({"postpone": postpone, "pull_in": pull_in, "granularity": granularity, "stagger": rng.gen_bool(0.5)})
        }
        "burst" => c["burst"] = json!({"retention_ms": retention, "refs_per_window": refs, "jedec": false, "groups": groups}),
        "per-bank" | "same-bank" => c[refresh] = json!({"postpone": rng.gen_range(0..10)}),
        _ => {}
    }
    c
}

/// The names of whole documents (`from_json`'s `what`): an error there names no key.
const DOCUMENTS: &[&str] = &["run spec", "sim spec", "rt spec"];

/// Whether an error message says where: a file and line, or a key.
fn names_its_place(e: &Error, file: &Path) -> bool {
    let shown = e.to_string();
    match e {
        // Line 0: a binary file's header, named as such in the reason.
        Error::Parse { path, line, .. } => path == file && (*line == 0 || shown.contains(&format!(":{line}:"))),
        Error::Io { path, .. } => path == file,
        // A run spec's own name is a place only for a key it misses or does not know.
        Error::Config { field, reason } if DOCUMENTS.contains(&field.as_str()) => {
            reason.starts_with("missing field") || reason.starts_with("unknown field")
        }
        Error::Config { field, .. } => !field.is_empty(),
        Error::UnknownName { .. } => true,
        Error::Violation(_) | Error::Interrupted => false,
    }
}

fn read_all<T>(mut next: impl FnMut() -> memtint_engine::Result<Option<T>>) -> memtint_engine::Result<usize> {
    let mut n = 0;
    while next()?.is_some() {
        n += 1;
        if n > MAX_RECORDS {
            panic!("more than {MAX_RECORDS} records from a small input");
        }
    }
    Ok(n)
}

/// Set by `MEMTINT_FUZZ_REPLAY`: each input is printed before it is run.
static SHOW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn show(what: &str, bytes: &[u8]) {
    if SHOW.load(std::sync::atomic::Ordering::Relaxed) {
        println!("{what}:\n{}", String::from_utf8_lossy(bytes).escape_debug());
    }
}

/// One case of `kind`: build the input, run the reader or the run, classify.
fn run_case(kind: Kind, case_seed: u64, dir: &Path) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(case_seed);
    let file: PathBuf = dir.join(format!("case-{kind:?}"));
    let result: memtint_engine::Result<()> = match kind {
        Kind::DramText | Kind::DramSim3Text | Kind::DramSim2Text | Kind::DramGzip => {
            let format = match kind {
                Kind::DramSim3Text => DramTraceFormat::DramSim3,
                Kind::DramSim2Text => DramTraceFormat::DramSim2,
                _ => DramTraceFormat::Ramulator,
            };
            let seed = dram_seed(&mut rng, format);
            let mut bytes = mutate(&mut rng, &seed);
            if kind == Kind::DramGzip {
                bytes = gzip(&bytes);
                if rng.gen_bool(0.5) && !bytes.is_empty() {
                    bytes.truncate(rng.gen_range(0..bytes.len()));
                }
            }
            std::fs::write(&file, &bytes).unwrap();
            show(&file.display().to_string(), &bytes);
            DramTraceReader::open(&file, format).and_then(|mut r| read_all(|| r.next_request()).map(|_| ()))
        }
        Kind::CpuText | Kind::CpuGzip => {
            let seed = cpu_seed(&mut rng);
            let mut bytes = mutate(&mut rng, &seed);
            if kind == Kind::CpuGzip {
                bytes = gzip(&bytes);
                if rng.gen_bool(0.5) && !bytes.is_empty() {
                    bytes.truncate(rng.gen_range(0..bytes.len()));
                }
            }
            std::fs::write(&file, &bytes).unwrap();
            show(&file.display().to_string(), &bytes);
            CpuTraceReader::open(&file).and_then(|mut r| read_all(|| r.next_record()).map(|_| ()))
        }
        Kind::Mtt => {
            let seed = mtt_seed(&mut rng, dir);
            let bytes = mutate(&mut rng, &seed);
            std::fs::write(&file, &bytes).unwrap();
            show(&file.display().to_string(), &bytes);
            BinaryTraceReader::open(&file).and_then(|mut r| read_all(|| r.next_record()).map(|_| ()))
        }
        Kind::DramSpec | Kind::SimSpec => {
            let mut v = if kind == Kind::DramSpec { dram_spec_seed(&mut rng) } else { sim_spec_seed(&mut rng) };
            for _ in 0..rng.gen_range(1..=2) {
                mutate_json(&mut rng, &mut v);
            }
            cap_lengths(&mut v);
            let text = raw_tokens(&v);
            show("spec", text.as_bytes());
            if kind == Kind::DramSpec {
                memtint_engine::dram_sim::run_json(&text).map(|_| ())
            } else {
                memtint_engine::multicore::run_sim_json(&text).map(|_| ())
            }
        }
        Kind::Device => {
            let (machine, text) = DEVICES[rng.gen_range(0..DEVICES.len())];
            let bytes = if rng.gen_bool(0.2) { mutate(&mut rng, text.as_bytes()) } else { device_seed(&mut rng, text) };
            std::fs::write(&file, &bytes).unwrap();
            show(&file.display().to_string(), &bytes);
            let mut controller = controller_choice(&mut rng);
            controller["read_queue"] = json!(8);
            let generator = ["random", "stream", "mix"][rng.gen_range(0..3)];
            let spec = json!({
                "machine": machine,
                "workload": {"generate": {"kind": generator, "requests": 100, "seed": rng.gen_range(0..9)}},
                "overrides": {"dram": {"device": file}, "controller": controller},
                "outstanding": rng.gen_range(1..16),
                "check": rng.gen_bool(0.5),
            });
            show("spec", spec.to_string().as_bytes());
            memtint_engine::dram_sim::run_json(&spec.to_string()).map(|_| ())
        }
        Kind::MachineValue => {
            let dram = rng.gen_bool(0.5);
            let mut v = if dram { dram_spec_seed(&mut rng) } else { sim_spec_seed(&mut rng) };
            let name = v["machine"].as_str().unwrap().to_string();
            let mut table = serde_json::to_value(memtint_engine::config::MachineConfig::load(&name).unwrap()).unwrap();
            let mut keys = Vec::new();
            setting_keys(&table, "", &mut keys);
            keys.extend(EXTRA_KEYS.iter().map(|k| k.to_string()));
            let in_table = rng.gen_bool(0.3);
            for _ in 0..rng.gen_range(1..=2) {
                let key = &keys[rng.gen_range(0..keys.len())];
                let value = extreme_setting(&mut rng);
                if in_table {
                    set_key(&mut table, key, value);
                } else {
                    set_key(&mut v["overrides"], key, value);
                }
            }
            if in_table {
                v["machine"] = table;
            }
            cap_lengths(&mut v);
            let text = raw_tokens(&v);
            show("spec", text.as_bytes());
            if dram {
                memtint_engine::dram_sim::run_json(&text).map(|_| ())
            } else {
                memtint_engine::multicore::run_sim_json(&text).map(|_| ())
            }
        }
        Kind::RtSpec => {
            let mut v = rt_spec_seed(&mut rng);
            for _ in 0..rng.gen_range(1..=2) {
                mutate_json(&mut rng, &mut v);
            }
            cap_lengths(&mut v);
            let text = raw_tokens(&v);
            show("spec", text.as_bytes());
            memtint_engine::rt_sim::run_json(&text).map(|_| ())
        }
        Kind::ProbeSpec => {
            let mut v = probe_spec_seed(&mut rng);
            for _ in 0..rng.gen_range(1..=2) {
                mutate_json(&mut rng, &mut v);
            }
            cap_lengths(&mut v);
            let text = raw_tokens(&v);
            show("spec", text.as_bytes());
            memtint_engine::mapping_probe::run_json(&text).map(|_| ())
        }
        Kind::DramSim3Run => {
            let seed = dramsim3_run_seed(&mut rng);
            let bytes = if rng.gen_bool(0.2) { mutate(&mut rng, &seed) } else { seed };
            std::fs::write(&file, &bytes).unwrap();
            show(&file.display().to_string(), &bytes);
            let machine = ["ddr4-2400", "ddr3-1333", "ddr4-2400-2ch2r", "lpddr4-3200", "ddr5-4800"][rng.gen_range(0..5)];
            let spec = json!({
                "machine": machine,
                "workload": {"trace": {"path": file, "format": "dramsim3"}},
                "overrides": {"controller": controller_choice(&mut rng)},
                "outstanding": rng.gen_range(1..16),
            });
            show("spec", spec.to_string().as_bytes());
            memtint_engine::dram_sim::run_json(&spec.to_string()).map(|_| ())
        }
    };
    classify(kind, case_seed, result, &file)
}

fn classify(kind: Kind, case_seed: u64, result: memtint_engine::Result<()>, file: &Path) -> Outcome {
    match result {
        Ok(()) => Outcome::Ok,
        Err(e) if e.to_string().contains("internal error") => Outcome::Internal(format!("{kind:?} case {case_seed}: {e}")),
        Err(e) if names_its_place(&e, file) => Outcome::Clean,
        Err(e) => Outcome::Unnamed(format!("{kind:?} case {case_seed}: {e}")),
    }
}

/// Run `cases` cases (round-robin over the kinds) from `seed`; panics are caught, and a case
/// that does not finish within `CASE_LIMIT` is a hang (the harness stops there).
fn fuzz(cases: u64, seed: u64) -> Tally {
    let dir = std::env::temp_dir().join(format!("memtint-fuzz-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (to_worker, jobs) = mpsc::channel::<(Kind, u64)>();
    let (to_main, results) = mpsc::channel::<Outcome>();
    let worker_dir = dir.clone();
    std::thread::spawn(move || {
        for (kind, case_seed) in jobs {
            let outcome = std::panic::catch_unwind(|| run_case(kind, case_seed, &worker_dir)).unwrap_or_else(|p| {
                let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                Outcome::Panic(format!("{kind:?} case {case_seed}: {}", msg.unwrap_or_default()))
            });
            if to_main.send(outcome).is_err() {
                return;
            }
        }
    });
    let mut t = Tally::default();
    for i in 0..cases {
        let kind = KINDS[(i % KINDS.len() as u64) as usize];
        let case_seed = seed.wrapping_mul(1_000_003).wrapping_add(i);
        to_worker.send((kind, case_seed)).unwrap();
        t.cases += 1;
        let started = std::time::Instant::now();
        match results.recv_timeout(CASE_LIMIT) {
            Ok(Outcome::Ok) => t.ok += 1,
            Ok(Outcome::Clean) => t.clean_errors += 1,
            Ok(Outcome::Unnamed(m)) => t.unnamed.push(m),
            Ok(Outcome::Internal(m)) => t.internal.push(m),
            Ok(Outcome::Panic(m)) => t.panics.push(m),
            Err(_) => {
                t.hangs.push(format!("{kind:?} case {case_seed}: no end after {CASE_LIMIT:?}"));
                break;
            }
        }
        match t.seconds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, s)) => *s += started.elapsed().as_secs_f64(),
            None => t.seconds.push((kind, started.elapsed().as_secs_f64())),
        }
    }
    std::panic::set_hook(previous);
    let _ = std::fs::remove_dir_all(&dir);
    t
}

/// `MEMTINT_FUZZ_REPLAY="SimSpec 1002936"` (a finding's kind and case) runs that case alone and
/// prints its input and outcome.
#[test]
fn replay_one_case() {
    let Ok(replay) = std::env::var("MEMTINT_FUZZ_REPLAY") else { return };
    let (kind, case_seed) = replay.split_once(' ').expect("MEMTINT_FUZZ_REPLAY=\"<kind> <case>\"");
    let kind = *KINDS.iter().find(|k| format!("{k:?}") == kind).expect("a kind of the tally");
    SHOW.store(true, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("memtint-fuzz-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outcome = match run_case(kind, case_seed.parse().unwrap(), &dir) {
        Outcome::Ok => "ok".to_string(),
        Outcome::Clean => "an error naming its place".to_string(),
        Outcome::Unnamed(m) | Outcome::Internal(m) | Outcome::Panic(m) => m,
    };
    println!("outcome: {outcome}");
}

#[test]
fn fuzzed_inputs_end_in_a_result_or_an_error_that_names_its_place() {
    let cases = std::env::var("MEMTINT_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let seed = std::env::var("MEMTINT_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let started = std::time::Instant::now();
    let t = fuzz(cases, seed);
    println!(
        "fuzz: {} cases (seed {seed}) in {:.1} s: {} succeeded, {} clean errors; {} panics, {} hangs, {} internal errors, {} errors without a place",
        t.cases,
        started.elapsed().as_secs_f64(),
        t.ok,
        t.clean_errors,
        t.panics.len(),
        t.hangs.len(),
        t.internal.len(),
        t.unnamed.len(),
    );
    let seconds: Vec<String> = t.seconds.iter().map(|(k, s)| format!("{k:?} {s:.1}")).collect();
    println!("  seconds per kind: {}", seconds.join(", "));
    // The first few findings of each kind of input.
    for kind in KINDS {
        let tag = format!("{kind:?} case");
        for m in t.panics.iter().chain(&t.hangs).chain(&t.internal).chain(&t.unnamed).filter(|m| m.starts_with(&tag)).take(3) {
            println!("  {m}");
        }
    }
    assert!(t.ok > 0 && t.clean_errors > 0, "the mutations must reach both outcomes: {t:?}");
    assert!(t.panics.is_empty() && t.hangs.is_empty() && t.internal.is_empty() && t.unnamed.is_empty(), "see the findings above");
}
