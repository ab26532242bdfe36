//! Randomized properties over machines, mappings, policies and workloads: zero checker
//! violations, every request completes exactly once (the driver checks it when checking),
//! identical statistics for identical seeds, event skipping equal to cycle-by-cycle.

mod common;

use common::*;
use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram::{Command, CommandRecord};
use memtint_engine::dram_sim::{open_workload, simulate, DramSimOptions, WorkloadSpec};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::trace::{GeneratorKind, GeneratorSpec};
use proptest::prelude::*;
use serde_json::json;

const MACHINES: &[&str] = &["ddr3-1333", "ddr3-1600", "ddr4-2400", "ddr4-2400-2ch2r", "i7-860", "i7-860-bpm-plus", "xor-bank", "opteron-6128-node"];
const MAPPINGS: &[Option<&str>] = &[None, Some("RoBaRaCoCh"), Some("RoRaBaChCo"), Some("ChRaBaRoCo"), Some("RoCoBaRaCh")];
const SCHEDULERS: &[&str] = memtint_engine::controller::scheduler::NAMES;
const ROW_POLICIES: &[&str] = &["open", "closed", "timeout"];
const REFRESH: &[&str] = &["all-bank", "none"];
const KINDS: &[GeneratorKind] =
    &[GeneratorKind::Stream, GeneratorKind::Random, GeneratorKind::Strided, GeneratorKind::Conflict, GeneratorKind::Mix];

#[derive(Debug, Clone)]
struct Case {
    machine: &'static str,
    mapping: Option<&'static str>,
    scheduler: &'static str,
    row_policy: &'static str,
    refresh: &'static str,
    kind: GeneratorKind,
    read_fraction: f64,
    requests: u64,
    seed: u64,
    outstanding: usize,
    read_queue: usize,
    write_queue: usize,
    row_timeout: u64,
    sources: u32,
    /// `write_idle_drain_min` (capped at the write queue) and `write_idle_drain_timeout`.
    idle_drain: (usize, u64),
}

fn case() -> impl Strategy<Value = Case> {
    (
        (0..MACHINES.len(), 0..MAPPINGS.len(), 0..SCHEDULERS.len(), 0..ROW_POLICIES.len(), 0..REFRESH.len()),
        (0..KINDS.len(), 0.0f64..=1.0, 200u64..3000, any::<u64>()),
        (1usize..80, 1usize..40, 1usize..40, 0u64..300, 1u32..6),
        (prop_oneof![Just(1usize), 2usize..12], 1u64..400),
    )
        .prop_map(|((m, mp, s, rp, rf), (k, rfrac, n, seed), (out, rq, wq, to, src), (idle_min, idle_to))| Case {
            machine: MACHINES[m],
            mapping: MAPPINGS[mp],
            scheduler: SCHEDULERS[s],
            row_policy: ROW_POLICIES[rp],
            refresh: REFRESH[rf],
            kind: KINDS[k],
            read_fraction: rfrac,
            requests: n,
            seed,
            outstanding: out,
            read_queue: rq,
            write_queue: wq,
            row_timeout: to,
            sources: src,
            idle_drain: (idle_min.min(wq), idle_to),
        })
}

fn config(c: &Case) -> MemoryConfig {
    let mut m = MachineConfig::load(c.machine).unwrap();
    if let Some(mp) = c.mapping {
        m.dram.mapping = mp.to_string();
    }
    let m = m
        .with_overrides(&json!({"controller": {
            "scheduler": c.scheduler, "row_policy": c.row_policy, "refresh": c.refresh,
            "read_queue": c.read_queue, "write_queue": c.write_queue, "row_timeout": c.row_timeout,
            "write_idle_drain_min": c.idle_drain.0, "write_idle_drain_timeout": c.idle_drain.1,
        }}))
        .unwrap()
        .with_overrides(&short_scheduler_periods())
        .unwrap();
    MemoryConfig::resolve(&m).unwrap()
}

/// Scheduler periods short enough for runs of a few thousand requests.
fn short_scheduler_periods() -> serde_json::Value {
    json!({"controller": {
        "atlas_quantum": 2000, "atlas_starvation_threshold": 600, "tcm_quantum": 2000, "tcm_shuffle_interval": 100,
        "bliss_clearing_interval": 500, "imps_epoch": 1500, "ccps_epoch": 1500, "ccps_age_threshold": 400,
        "imps_low_intensity": 20.0, "ccps_low_intensity": 20.0, "parbs_marking_cap": 3,
    }})
}

fn workload(c: &Case) -> WorkloadSpec {
    let mut g = GeneratorSpec::new(c.kind, c.requests);
    g.seed = c.seed;
    g.read_fraction = Some(c.read_fraction);
    WorkloadSpec::Generate(g)
}

fn stats(cfg: &MemoryConfig, w: &WorkloadSpec, opts: DramSimOptions) -> serde_json::Value {
    let (mem, totals) = run(cfg, w, opts);
    assert_eq!(totals.requests, match w {
        WorkloadSpec::Generate(g) => g.requests,
        _ => unreachable!(),
    });
    stats_without_wall_clock(cfg, &mem, &totals, opts)
}

/// Paths at which two JSON values differ.
fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for (k, v) in x {
                diff(&format!("{path}.{k}"), v, y.get(k).unwrap_or(&serde_json::Value::Null), out);
            }
        }
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(&format!("{path}[{i}]"), v, w, out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} vs {b}")),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(if std::env::var("CI").is_ok() { 96 } else { 48 }), ..ProptestConfig::default() })]

    #[test]
    fn no_violations_every_request_once_and_deterministic(c in case()) {
        let cfg = config(&c);
        let w = workload(&c);
        let opts = DramSimOptions { sources: c.sources, ..DramSimOptions::new(c.outstanding) };
        let a = stats(&cfg, &w, opts);
        prop_assert_eq!(a["requests"].as_u64().unwrap(), c.requests);
        let served = a["row_hits"].as_u64().unwrap() + a["row_misses"].as_u64().unwrap() + a["row_conflicts"].as_u64().unwrap();
        prop_assert_eq!(served, c.requests);
        let b = stats(&cfg, &w, opts);
        prop_assert_eq!(&a, &b, "same seed, different statistics");
    }

    #[test]
    fn event_skipping_equals_cycle_by_cycle(c in case()) {
        let cfg = config(&c);
        let w = workload(&c);
        let skip = DramSimOptions { sources: c.sources, ..DramSimOptions::new(c.outstanding) };
        let every = DramSimOptions { cycle_by_cycle: true, ..skip };
        let a = stats(&cfg, &w, skip);
        let b = stats(&cfg, &w, every);
        let mut diffs = Vec::new();
        diff("", &a, &b, &mut diffs);
        prop_assert!(diffs.is_empty(), "event skipping differs: {:?}", &diffs[..diffs.len().min(8)]);
    }
}

/// Every registered scheduler on every workload kind, with four sources and short periods so
/// batches, quanta, shuffles, blacklists, epochs and ageing all happen within the run: zero
/// checker violations (`run` asserts it), every request served, event skipping equal to
/// cycle-by-cycle.
#[test]
fn every_scheduler_keeps_timing_and_event_skipping_exact() {
    for &sched in SCHEDULERS {
        for machine_name in ["ddr4-2400-2ch2r", "i7-860"] {
            for &kind in KINDS {
                let m = MachineConfig::load(machine_name)
                    .unwrap()
                    .with_overrides(&json!({"controller": {"scheduler": sched}}))
                    .unwrap()
                    .with_overrides(&short_scheduler_periods())
                    .unwrap();
                let cfg = MemoryConfig::resolve(&m).unwrap();
                let mut g = GeneratorSpec::new(kind, 1500);
                g.read_fraction = Some(0.7);
                let w = WorkloadSpec::Generate(g);
                let skip = DramSimOptions { sources: 4, ..DramSimOptions::new(24) };
                let a = stats(&cfg, &w, skip);
                let b = stats(&cfg, &w, DramSimOptions { cycle_by_cycle: true, ..skip });
                let mut diffs = Vec::new();
                diff("", &a, &b, &mut diffs);
                assert!(diffs.is_empty(), "{sched}/{machine_name}/{kind:?}: event skipping differs: {:?}", &diffs[..diffs.len().min(8)]);
            }
        }
    }
}

/// The checker must not be vacuous: a controller built with a tRCD two cycles short, checked
/// against the true timing, is caught.
#[test]
fn checker_catches_a_controller_with_wrong_timing() {
    let honest = machine("ddr4-2400", json!({}));
    let mut broken = honest.clone();
    broken.timing.tRCD -= 2;
    let w = generated(GeneratorKind::Random, 2_000, 1);
    let (mut source, ts) = open_workload(&w, &broken).unwrap();
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(16) };
    let (_, totals) = simulate(&broken, source.as_mut(), ts, opts).unwrap();
    let found: Vec<_> = memtint_engine::checker::TimingChecker::check_stream(
        honest.device.standard,
        &honest.org,
        &honest.timing,
        &totals.commands,
    );
    assert!(!found.is_empty());
    assert!(found.iter().all(|v| v.constraint == "tRCD"), "{:?}", found.iter().map(|v| v.constraint).collect::<Vec<_>>());
}

/// The same through the library's own `check` path: a controller whose tFAW is ignored.
#[test]
fn checker_reports_tfaw_when_the_controller_ignores_it() {
    let honest = machine("ddr4-2400", json!({}));
    let mut broken = honest.clone();
    broken.timing.tFAW = 0;
    let mut mem = MemorySystem::new(&broken).unwrap();
    mem.record_commands(true);
    let mut checker = memtint_engine::checker::TimingChecker::new(honest.device.standard, &honest.org, &honest.timing);
    let w = generated(GeneratorKind::Random, 5_000, 3);
    let (mut src, _) = open_workload(&w, &broken).unwrap();
    let (mut now, mut id, mut in_flight, mut done, mut log) = (0u64, 0u64, 0usize, Vec::new(), Vec::<CommandRecord>::new());
    let mut pending = src.next_request().unwrap();
    let mut faw = 0;
    while pending.is_some() || in_flight > 0 {
        mem.tick(now, &mut done, false);
        in_flight -= done.len();
        done.clear();
        mem.drain_commands(&mut log);
        for r in log.drain(..) {
            faw += checker.observe(&r).iter().filter(|v| v.constraint == "tFAW").count();
        }
        while let Some(r) = pending {
            if in_flight >= 32 || !mem.try_enqueue(now, id, r.addr, r.is_write, memtint_engine::controller::Origin::default()) {
                break;
            }
            id += 1;
            in_flight += 1;
            pending = src.next_request().unwrap();
        }
        now = mem.next_event().max(now + 1);
    }
    assert!(faw > 0, "tFAW violations went unnoticed");
    let _ = Command::Act;
}
