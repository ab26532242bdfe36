//! `make bench`, part 2: speed of a 4-core CPU-trace run (issue: multicore simulation) — three
//! memory-intensive synthetic programs and one light SPEC trace, 50 M instructions per core,
//! DDR4-2400 (1 channel, 1 rank), FR-FCFS, the preset's 8 MiB LLC, buddy placement — and of the
//! same programs twice on a 2-node, 8-core machine (tiering-2to1, docs/numa.md). Prints
//! simulated DRAM requests per second and instructions per second, per second of the thread's
//! CPU time (steady on a shared machine) and of wall time, and the 2-node run's cost per request
//! against the 1-node run's; and the cost of a dynamic policy: the four programs on the i7-860
//! under static BPM and under dynamic BPM (epochs every 0.1 ms, ten times the default rate, so
//! the monitors and the policy run often), whose CPU time per instruction should be at most
//! 1.10x static BPM's, and the same for HVR online (its accessed-bit sampling included) against
//! the static `hvr` space, and for dynamic BPM+ and dynamic channel-only against their static
//! forms on the i7-860's BPM+ BIOS setting. A figure, not a test.

use memtint_engine::multicore::{run_sim, SimSpec};
use serde_json::json;
use std::path::PathBuf;

fn main() {
    let instructions: u64 = std::env::var("MEMTINT_BENCH_INSTRUCTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(50_000_000);
    let traces = std::env::var_os("MEMTINT_SPEC_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/spec2006"));
    let light = traces.join("444.namd.gz");
    let light = if light.exists() {
        light.display().to_string()
    } else {
        println!("note: {} not found; using the built-in 'light' profile instead", light.display());
        "light".to_string()
    };
    let programs = vec!["stream".to_string(), "random".to_string(), "copy".to_string(), light];
    println!("memtint multicore benchmark: {instructions} instructions per core, fr-fcfs");
    println!("programs: {}", programs.join(", "));
    let implementation = std::env::var("MEMTINT_BENCH_IMPLEMENTATION").unwrap_or_else(|_| "auto".into());
    if let Err(e) = memtint_engine::controller::Implementation::check_name(&implementation) {
        eprintln!("memtint-bench-multicore: MEMTINT_BENCH_IMPLEMENTATION: {e}");
        std::process::exit(2);
    }
    println!("build: {} (make bench: profile-guided; PGO=0: release)\n", option_env!("MEMTINT_BUILD").unwrap_or("release"));
    let one = run(
        "4 cores, one memory (ddr4-2400), buddy placement",
        json!({
            "machine": "ddr4-2400",
            "programs": programs,
            "instructions": instructions,
            "seed": 42,
            // `controller.implementation` (auto, general, lanes): the same results, another speed.
            "overrides": {"controller": {"implementation": implementation}},
        }),
    );
    // Two nodes, each the machine above with 4 cores (the second throttled to 1/2: the tiering
    // preset), the same programs twice, bw-interleave placement: per request it should cost no
    // more than the one-node run (a 2-node run is the sum of its nodes' work).
    let twice = [programs.clone(), programs.clone()].concat();
    let two = run(
        "8 cores on 2 nodes (tiering-2to1), bw-interleave placement",
        json!({
            "machine": "tiering-2to1",
            "programs": twice,
            "instructions": instructions,
            "seed": 42,
            "os": {"policy": "bw-interleave"},
            "overrides": {"controller": {"implementation": implementation}},
        }),
    );
    println!(
        "\n2 nodes against 1: {:.2}x the CPU time per DRAM request, {:.2}x per instruction (1.00: a node costs what a one-node machine does)",
        (two.cpu / two.requests as f64) / (one.cpu / one.requests as f64),
        (two.cpu / two.instructions as f64) / (one.cpu / one.instructions as f64)
    );
    // A dynamic policy against its static counterpart, on a fifth of the instructions.
    let pair = |machine: &str, os: serde_json::Value| {
        json!({"machine": machine, "programs": programs, "instructions": instructions / 5, "seed": 42, "os": os,
               "overrides": {"controller": {"implementation": implementation}}})
    };
    // Each dynamic policy against its static counterpart: CPU time per instruction.
    let compare = |name: &str, machine: &str, static_label: &str, static_os: serde_json::Value, label: &str, os: serde_json::Value| {
        let fixed = run(static_label, pair(machine, static_os));
        let adaptive = run(label, pair(machine, os));
        println!(
            "{name}: {:.2}x the CPU time per instruction (bound: 1.10)",
            (adaptive.cpu / adaptive.instructions as f64) / (fixed.cpu / fixed.instructions as f64)
        );
    };
    compare(
        "dynamic BPM against static BPM",
        "i7-860",
        "4 cores, i7-860, static BPM",
        json!({"policy": "bpm"}),
        "4 cores, i7-860, dynamic BPM (epoch 0.1 ms)",
        json!({"policy": "bpm", "dynamic": "dynamic-bpm", "dynamic-bpm": {"epoch_ns": 100_000.0}}),
    );
    // HVR online (accessed-bit sampling, classes, R1-R6 each epoch) against the same space static.
    compare(
        "hvr-online against static hvr",
        "i7-860",
        "4 cores, i7-860, static hvr (2, 3, 2)",
        json!({"policy": "hvr"}),
        "4 cores, i7-860, hvr-online (epoch 0.1 ms)",
        json!({"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"epoch_ns": 100_000.0}}),
    );
    // Channel balancing by measured bandwidth, with and without bank colours inside a channel, on
    // the BPM+ BIOS setting (channels selected above the page); copies paced as the reproductions
    // pace them (a move copies whole footprints, and eager copies queued at once keep the other
    // programs' loads out past the watchdog).
    for (policy, dynamic) in [("bpm-plus", "dynamic-bpm-plus"), ("channel-only", "dynamic-channel-only")] {
        compare(
            &format!("{dynamic} against static {policy}"),
            "i7-860-bpm-plus",
            &format!("4 cores, i7-860-bpm-plus, static {policy}"),
            json!({"policy": policy}),
            &format!("4 cores, i7-860-bpm-plus, {dynamic} (epoch 0.1 ms, copies paced)"),
            json!({"policy": policy, "dynamic": dynamic, dynamic: {"epoch_ns": 100_000.0}, "recolour": {"pages_per_ms": 3.3}}),
        );
    }
}

struct Figures {
    requests: u64,
    instructions: u64,
    cpu: f64,
}

fn run(title: &str, spec: serde_json::Value) -> Figures {
    println!("{title}");
    let spec: SimSpec = serde_json::from_value(spec).expect("spec");
    let cpu_start = thread_cpu_seconds();
    let stats = run_sim(&spec).expect("simulation");
    let cpu = thread_cpu_seconds() - cpu_start;
    let wall = stats["wall_seconds"].as_f64().unwrap();
    let reqs = stats["dram_requests"].as_u64().unwrap();
    let instr: u64 = stats["cores"].as_array().unwrap().iter().map(|c| c["instructions"].as_u64().unwrap()).sum();
    println!("{:<10} {:>8} {:>10} {:>12}", "core", "IPC", "LLC MPKI", "DRAM reads");
    for c in stats["cores"].as_array().unwrap() {
        let name = c["program"].as_str().unwrap();
        let short = name.rsplit('/').next().unwrap_or(name);
        println!(
            "{:<10} {:>8.3} {:>10.2} {:>12}",
            short,
            c["ipc"].as_f64().unwrap(),
            c["llc_mpki"].as_f64().unwrap(),
            c["dram_reads"].as_u64().unwrap()
        );
    }
    println!("\n{reqs} DRAM requests, {:.2} ms simulated, {cpu:.2} s CPU, {wall:.2} s wall", stats["simulated_ns"].as_f64().unwrap() / 1e6);
    println!(
        "simulation speed: {:.2} M DRAM requests/s of CPU time (target 3 M/s; cycle-by-cycle C++ simulators: 0.08-0.12 M/s), {:.1} M instructions/s",
        reqs as f64 / cpu / 1e6,
        instr as f64 / cpu / 1e6
    );
    println!("per wall second: {:.2} M DRAM requests/s, {:.1} M instructions/s\n", reqs as f64 / wall / 1e6, instr as f64 / wall / 1e6);
    Figures { requests: reqs, instructions: instr, cpu }
}

/// CPU time of this thread (the whole run is on it), in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
