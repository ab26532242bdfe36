//! Speed work must not change results: this prints the full `run_sim` statistics of a fixed set
//! of CPU-trace runs, then the full `dram_sim::run` statistics of `memtint-bench`'s eight DRAM
//! configurations (closed loop, 64 in flight), without the wall-clock keys, one JSON document
//! per line. Save the output
//! before a change and `cmp` it after (bench/README.md, "Checking that results are identical").
//!
//! Usage: `memtint-bench-identity [INSTRUCTIONS]` (default 2 000 000 per core);
//! `MEMTINT_IDENTITY_DRAM_REQUESTS` sets the DRAM runs' length (default 200 000; 0 leaves them out).
//! `MEMTINT_BENCH_IMPLEMENTATION` (auto, general, lanes) selects the channel controller's
//! implementation and `MEMTINT_BENCH_VECTOR_ISA` (best, baseline, x86-64-v2, x86-64-v3) the DRAM
//! runs' instruction-set level; which ones ran is left out of the output, so their outputs
//! compare byte for byte.

use memtint_engine::dram_sim::{run, DramRunSpec};
use memtint_engine::multicore::{run_sim, SimSpec};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Keys that depend on the host's speed, not on the simulation.
/// (And `implementation` and `vector_isa`: which controller implementation and instruction set
/// ran, which must not change results.)
const WALL_CLOCK_KEYS: [&str; 6] =
    ["wall_seconds", "requests_per_second", "instructions_per_second", "dram_cycles_per_second", "implementation", "vector_isa"];

fn strip_wall_clock(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for k in WALL_CLOCK_KEYS {
                map.remove(k);
            }
            map.values_mut().for_each(strip_wall_clock);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_wall_clock),
        _ => {}
    }
}

fn main() {
    let instructions: u64 = match std::env::args().nth(1) {
        None => 2_000_000,
        Some(a) => a.parse().unwrap_or_else(|_| {
            eprintln!("error: INSTRUCTIONS must be a positive integer, got '{a}'");
            std::process::exit(2)
        }),
    };
    let traces = std::env::var_os("MEMTINT_SPEC_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/spec2006"));
    let namd = traces.join("444.namd.gz");
    if !namd.exists() {
        eprintln!("error: {} not found (set MEMTINT_SPEC_TRACES to the SPEC 2006 trace folder)", namd.display());
        std::process::exit(2);
    }
    let namd = namd.display().to_string();
    let fast_sched = json!({"latency_cycles": 100000, "min_granularity_cycles": 12500, "balance_period_cycles": 50000});
    // 8 threads in 7 processes (the second process has two) on 4 cores: time-sharing, switches
    // between threads of one process, balancing.
    let threads = json!([
        {"threads": ["light"]}, {"threads": ["stream", "random"]}, {"threads": ["light"]}, {"threads": ["random"]},
        {"threads": ["light"]}, {"threads": ["copy"]}, {"threads": ["light"]},
    ]);
    let specs = [
        ("bench mix, ddr4-2400", json!({"machine": "ddr4-2400", "programs": ["stream", "random", "copy", namd], "seed": 42})),
        ("i7-860 buddy", json!({"machine": "i7-860", "programs": ["stream", "random", "copy", namd]})),
        ("i7-860 bpm", json!({"machine": "i7-860", "programs": ["stream", "random", "copy", namd], "os": {"policy": "bpm"}})),
        (
            "i7-860 private L2, a-vp, tcm",
            json!({"machine": "i7-860", "programs": ["stream", "light", "random"], "os": {"policy": "a-vp"}, "scheduler": "tcm",
                   "overrides": {"cache": {"l2": {"size_bytes": 262144, "ways": 8, "latency": 12, "mshrs": 16}}}}),
        ),
        ("8 threads in 7 processes, CFS with balancing", json!({"machine": "i7-860", "processes": threads, "os": {"sched": fast_sched}})),
    ];
    for (name, mut spec) in specs {
        spec["instructions"] = json!(instructions);
        if let Ok(implementation) = std::env::var("MEMTINT_BENCH_IMPLEMENTATION") {
            let overrides = spec.as_object_mut().unwrap().entry("overrides").or_insert_with(|| json!({}));
            overrides.as_object_mut().unwrap().insert("controller".into(), json!({"implementation": implementation}));
        }
        let spec: SimSpec = serde_json::from_value(spec).unwrap_or_else(|e| panic!("spec '{name}': {e}"));
        let mut stats = run_sim(&spec).unwrap_or_else(|e| {
            eprintln!("error: run '{name}': {e}");
            std::process::exit(1)
        });
        strip_wall_clock(&mut stats);
        println!("{}", json!({"run": name, "stats": stats}));
    }
    // The DRAM bench's configurations through `dram_sim` (with lane controllers, the routing
    // loop's per-shape closed-loop entries; with `general`, its run-time-mode entry).
    let dram_requests: u64 = match std::env::var("MEMTINT_IDENTITY_DRAM_REQUESTS") {
        Err(_) => 200_000,
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("error: MEMTINT_IDENTITY_DRAM_REQUESTS must be a non-negative integer, got '{v}'");
            std::process::exit(2)
        }),
    };
    if dram_requests == 0 {
        return;
    }
    let workloads = [
        ("stream", json!({"kind": "stream"})),
        ("random", json!({"kind": "random"})),
        ("mix 2:1", json!({"kind": "mix", "read_fraction": 2.0 / 3.0})),
        ("conflict", json!({"kind": "conflict", "banks": 4})),
    ];
    for machine in ["ddr4-2400", "ddr4-2400-2ch2r"] {
        for (name, generator) in &workloads {
            let mut generator = generator.clone();
            generator["requests"] = json!(dram_requests);
            generator["seed"] = json!(42);
            let mut spec = json!({"machine": machine, "workload": {"generate": generator}, "outstanding": 64});
            if let Ok(implementation) = std::env::var("MEMTINT_BENCH_IMPLEMENTATION") {
                spec["overrides"] = json!({"controller": {"implementation": implementation}});
            }
            if let Ok(isa) = std::env::var("MEMTINT_BENCH_VECTOR_ISA") {
                spec["vector_isa"] = json!(isa);
            }
            let spec: DramRunSpec = serde_json::from_value(spec).unwrap_or_else(|e| panic!("DRAM spec '{machine}/{name}': {e}"));
            let mut stats = run(&spec).unwrap_or_else(|e| {
                eprintln!("error: DRAM run '{machine}/{name}': {e}");
                std::process::exit(1)
            });
            strip_wall_clock(&mut stats);
            println!("{}", json!({"run": format!("dram {machine}/{name}"), "stats": stats}));
        }
    }
}
