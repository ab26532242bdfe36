//! `make bench`: simulation speed of the DRAM engine on fixed generated traces (2 M requests
//! each; generated up front so only simulation is timed), on DDR4-2400 with 1 channel x 1 rank
//! and 2 channels x 2 ranks. Prints figures, not pass/fail: it is a benchmark, not a test.
//! Rates are per second of the thread's CPU time (robust on a shared machine); wall time is
//! printed too. `MEMTINT_BENCH_ONLY=random` (a substring of "machine/workload") runs a subset.

use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram_sim::report as dram_report;
use memtint_engine::dram_sim::{simulate, DramSimOptions};
use memtint_engine::trace::{DramRequest, GeneratorKind, GeneratorSpec, RequestGenerator, TraceSource, VecSource};
use memtint_engine::vector_isa::VectorIsa;
use std::time::Instant;

/// How the engine was compiled: `MEMTINT_BUILD` at compile time (the Makefile sets it for the profile-guided build).
fn build_kind() -> &'static str {
    option_env!("MEMTINT_BUILD").unwrap_or("release")
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_string()))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// CPU time consumed by the calling thread, in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn generate(cfg: &MemoryConfig, kind: GeneratorKind, requests: u64, read_fraction: Option<f64>) -> Vec<DramRequest> {
    let mut spec = GeneratorSpec::new(kind, requests);
    spec.seed = 42;
    spec.read_fraction = read_fraction;
    if kind == GeneratorKind::Conflict {
        spec.banks = Some(4);
    }
    let mapping = cfg.mapping.clone();
    let mut g = RequestGenerator::new(&spec, &cfg.org, Box::new(move |d| mapping.encode(d))).expect("generator");
    let mut v = Vec::with_capacity(requests as usize);
    while let Some(r) = g.next_request().expect("generated request") {
        v.push(r);
    }
    v
}

fn main() {
    let requests: u64 = std::env::var("MEMTINT_BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000_000);
    let only = std::env::var("MEMTINT_BENCH_ONLY").unwrap_or_default();
    // `controller.implementation` ("auto", "general", "lanes"): the same commands, another speed.
    let implementation = std::env::var("MEMTINT_BENCH_IMPLEMENTATION").unwrap_or_else(|_| "auto".into());
    // The driver loop's instruction-set level ("best", "baseline", "x86-64-v2", "x86-64-v3").
    let isa_name = std::env::var("MEMTINT_BENCH_VECTOR_ISA").unwrap_or_else(|_| "best".into());
    let isa = match VectorIsa::from_name(&isa_name).and_then(VectorIsa::checked) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("memtint-bench: MEMTINT_BENCH_VECTOR_ISA: {e}");
            std::process::exit(2);
        }
    };
    let workloads: [(&str, GeneratorKind, Option<f64>); 4] = [
        ("stream", GeneratorKind::Stream, None),
        ("random", GeneratorKind::Random, None),
        ("mix 2:1", GeneratorKind::Mix, Some(2.0 / 3.0)),
        ("conflict", GeneratorKind::Conflict, None),
    ];
    println!("memtint DRAM engine benchmark: {requests} requests per workload, closed loop with 64 in flight,");
    println!("FR-FCFS, open rows, all-bank refresh, event skipping, checker off. One thread.");
    println!("Build: {} (make bench PGO=1 after make pgo: profile-guided).", build_kind());
    let resolved = MachineConfig::load("ddr4-2400")
        .and_then(|m| m.with_overrides(&serde_json::json!({"controller": {"implementation": implementation}})))
        .and_then(|m| MemoryConfig::resolve(&m))
        .and_then(|cfg| memtint_engine::controller::Implementation::resolve(cfg.device.standard, &cfg.org, &cfg.timing, &cfg.controller));
    match resolved {
        Ok(i) => println!("Controller implementation: {} (MEMTINT_BENCH_IMPLEMENTATION={implementation}).", i.name()),
        Err(e) => {
            eprintln!("memtint-bench: MEMTINT_BENCH_IMPLEMENTATION: {e}");
            std::process::exit(2);
        }
    }
    let runs: Vec<_> = VectorIsa::supported().iter().map(|i| i.name()).collect();
    println!(
        "Instruction set of the driver loop: {} (MEMTINT_BENCH_VECTOR_ISA={isa_name}; this CPU runs {}).",
        isa.name(),
        runs.join(", ")
    );
    println!("Rates are per second of CPU time (wall-clock rate in the last column).\n");

    println!(
        "{:<18} {:<9} {:>9} {:>13} {:>9} {:>8} {:>8} {:>9} {:>9} {:>12}",
        "machine", "workload", "M req/s", "M DRAM cyc/s", "sim. ms", "cpu s", "wall s", "GB/s sim", "row hits", "wall M req/s"
    );
    let mut random_rate = 0.0;
    for machine in ["ddr4-2400", "ddr4-2400-2ch2r"] {
        let m = MachineConfig::load(machine).unwrap();
        let m = m.with_overrides(&serde_json::json!({"controller": {"implementation": implementation}})).unwrap();
        let cfg = MemoryConfig::resolve(&m).unwrap();
        for (name, kind, rf) in workloads {
            if !format!("{machine}/{name}").contains(only.as_str()) {
                continue;
            }
            let reqs = generate(&cfg, kind, requests, rf);
            let mut src = VecSource::new(reqs);
            let opts = DramSimOptions { isa: Some(isa), ..DramSimOptions::new(64) };
            let (t0, c0) = (Instant::now(), thread_cpu_seconds());
            let (mem, totals) = simulate(&cfg, &mut src, false, opts).expect("simulation");
            let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu_seconds() - c0);
            let s = dram_report::report(&cfg, &mem, &totals, opts);
            let rate = totals.requests as f64 / cpu;
            if machine == "ddr4-2400" && kind == GeneratorKind::Random {
                random_rate = rate;
            }
            println!(
                "{:<18} {:<9} {:>9.2} {:>13.1} {:>9.2} {:>8.2} {:>8.2} {:>9.2} {:>8.1}% {:>12.2}",
                machine,
                name,
                rate / 1e6,
                totals.dram_cycles as f64 / cpu / 1e6,
                s["simulated_ns"].as_f64().unwrap() / 1e6,
                cpu,
                wall,
                s["bandwidth_gbps"]["total"].as_f64().unwrap(),
                100.0 * s["row_hit_rate"].as_f64().unwrap(),
                totals.requests as f64 / wall / 1e6,
            );
        }
    }
    println!("\npeak resident memory: {:.0} MiB (includes the pre-generated request arrays)", peak_rss_mib());
    println!(
        "random trace on 1 channel x 1 rank: {:.2} M requests/s of CPU time (target 5 M/s; cycle-by-cycle C++ simulators: 0.08-0.4 M/s, i.e. {:.0}x-{:.0}x)",
        random_rate / 1e6,
        random_rate / 0.4e6,
        random_rate / 0.08e6
    );
}
