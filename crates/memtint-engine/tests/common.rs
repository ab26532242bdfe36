//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram_sim::{open_workload, simulate, DramSimOptions, RunTotals, WorkloadSpec};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::stats::dram_report;
use memtint_engine::trace::{DramRequest, GeneratorKind, GeneratorSpec, TraceSource, VecSource};

/// A machine preset with JSON overrides applied (`{"controller": {...}, "dram": {...}}`).
pub fn machine(name: &str, overrides: serde_json::Value) -> MemoryConfig {
    let m = MachineConfig::load(name).unwrap().with_overrides(&overrides).unwrap();
    MemoryConfig::resolve(&m).unwrap()
}

pub fn generated(kind: GeneratorKind, requests: u64, seed: u64) -> WorkloadSpec {
    let mut g = GeneratorSpec::new(kind, requests);
    g.seed = seed;
    WorkloadSpec::Generate(g)
}

/// Run a workload with the checker on; panics on violations so every test proves timing.
pub fn run(cfg: &MemoryConfig, workload: &WorkloadSpec, mut opts: DramSimOptions) -> (MemorySystem, RunTotals) {
    opts.check = true;
    let (mut source, ts) = open_workload(workload, cfg).unwrap();
    let (mem, totals) = simulate(cfg, source.as_mut(), ts, opts).unwrap();
    assert_eq!(totals.violations, 0, "timing violations: {:#?}", totals.violation_examples);
    (mem, totals)
}

pub fn run_requests(cfg: &MemoryConfig, reqs: Vec<DramRequest>, opts: DramSimOptions) -> (MemorySystem, RunTotals) {
    let mut opts = opts;
    opts.check = true;
    let mut src = VecSource::new(reqs);
    let (mem, totals) = simulate(cfg, &mut src as &mut dyn TraceSource, false, opts).unwrap();
    assert_eq!(totals.violations, 0, "timing violations: {:#?}", totals.violation_examples);
    (mem, totals)
}

/// The statistics JSON without wall-clock fields (for equality between runs).
pub fn stats_without_wall_clock(cfg: &MemoryConfig, mem: &MemorySystem, totals: &RunTotals, opts: DramSimOptions) -> serde_json::Value {
    let mut v = dram_report::report(cfg, mem, totals, opts);
    let o = v.as_object_mut().unwrap();
    for k in ["wall_seconds", "requests_per_second", "dram_cycles_per_second"] {
        o.remove(k);
    }
    o["config"].as_object_mut().unwrap().remove("event_skipping");
    v
}

pub fn read(addr: u64) -> DramRequest {
    DramRequest { addr, is_write: false, arrival: None }
}

pub fn write(addr: u64) -> DramRequest {
    DramRequest { addr, is_write: true, arrival: None }
}
