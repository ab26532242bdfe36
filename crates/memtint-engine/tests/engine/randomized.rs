//! Randomized properties over machines, mappings, policies and workloads: zero checker
//! violations, every request completes exactly once (the driver checks it when checking),
//! identical statistics for identical seeds, event skipping equal to cycle-by-cycle.

use crate::common::random_run::{self, short_scheduler_periods, Case, KINDS};
use crate::common::*;
use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram::{Command, CommandRecord};
use memtint_engine::dram_sim::{open_workload, simulate, DramSimOptions, WorkloadSpec};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::trace::{GeneratorKind, GeneratorSpec};
use proptest::prelude::*;
use serde_json::json;

const MAPPINGS: &[Option<&str>] = &[None, Some("RoBaRaCoCh"), Some("RoRaBaChCo"), Some("ChRaBaRoCo"), Some("RoCoBaRaCh")];
/// Every registered scheduler.
fn schedulers() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(memtint_engine::controller::scheduler::names)
}

fn case() -> impl Strategy<Value = Case> {
    random_run::case(schedulers(), MAPPINGS, 200..3000)
}

fn config(c: &Case) -> MemoryConfig {
    c.config(None)
}

fn workload(c: &Case) -> WorkloadSpec {
    c.workload()
}

fn stats(cfg: &MemoryConfig, w: &WorkloadSpec, opts: DramSimOptions) -> serde_json::Value {
    let (mem, totals) = run(cfg, w, opts);
    assert_eq!(
        totals.requests,
        match w {
            WorkloadSpec::Generate(g) => g.requests,
            _ => unreachable!(),
        }
    );
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
    for &sched in schedulers() {
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
    let found: Vec<_> =
        memtint_engine::checker::TimingChecker::check_stream(honest.device.standard, &honest.org, &honest.timing, &totals.commands);
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

/// An RDA's precharge may not cut short an earlier write's recovery: on DDR5 (tWR - tRTP >
/// tWTR_L) a closed-page run with reads right behind writes to their bank issues no RDA within
/// CWL + tBL + tWR - tRTP of the bank's last WR; those reads issue as RD, and the rows close
/// by PRE. The case proptest once shrank this defect to.
#[test]
fn a_read_behind_a_write_auto_precharges_only_after_write_recovery() {
    let c = Case::reads_behind_writes("ddr5-4800", "burst-each", GeneratorKind::Strided, 0.45804659516448054, 964);
    let cfg = config(&c);
    let t = &cfg.timing;
    let need = t.CWL + t.tBL + t.tWR - t.tRTP;
    assert!(need > t.CWL + t.tBL + t.tWTR_L, "the rule binds beyond write-to-read");
    let opts = DramSimOptions { keep_commands: true, sources: c.sources, ..DramSimOptions::new(c.outstanding) };
    let (_, totals) = run(&cfg, &workload(&c), opts); // zero checker violations, asserted by `run`
    let mut last_wr = std::collections::HashMap::new();
    let (mut held_back, mut rdas) = (0, 0);
    for r in &totals.commands {
        let bank = (r.addr.channel, r.addr.rank, r.addr.bank_group, r.addr.bank);
        match r.command {
            Command::Wr | Command::Wra => {
                last_wr.insert(bank, r.cycle);
            }
            Command::Rda => {
                rdas += 1;
                if let Some(&w) = last_wr.get(&bank) {
                    assert!(r.cycle >= w + need, "RDA at {} after WR at {}: {} < {need}", r.cycle, w, r.cycle - w);
                }
            }
            Command::Rd => held_back += last_wr.get(&bank).is_some_and(|&w| r.cycle < w + need) as usize,
            _ => {}
        }
    }
    assert!(rdas > 0 && held_back > 0, "{rdas} RDAs, {held_back} reads inside a write's recovery");
}
