//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram_sim::report as dram_report;
use memtint_engine::dram_sim::{open_workload, simulate, DramSimOptions, RunTotals, WorkloadSpec};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::trace::{DramRequest, GeneratorKind, GeneratorSpec, TraceSource, VecSource};

/// A machine preset with JSON overrides applied (`{"controller": {...}, "dram": {...}}`).
pub fn machine(name: &str, overrides: serde_json::Value) -> MemoryConfig {
    let m = MachineConfig::load(name).unwrap().with_overrides(&overrides).unwrap();
    MemoryConfig::resolve(&m).unwrap()
}

/// Runs `arrivals` (cycle, address, is_write; each enqueued after the tick of its cycle) until
/// every request has completed and cycle `until` has passed; returns the commands issued.
pub fn run_arrivals(
    cfg: &MemoryConfig,
    arrivals: &[(u64, u64, bool)],
    every_cycle: bool,
    until: u64,
) -> Vec<memtint_engine::dram::CommandRecord> {
    let mut mem = MemorySystem::new(cfg).unwrap();
    mem.record_commands(true);
    let (mut log, mut done) = (Vec::new(), Vec::new());
    let (mut now, mut next) = (0, 0);
    while done.len() < arrivals.len() || now <= until {
        mem.tick(now, &mut done, every_cycle);
        while next < arrivals.len() && arrivals[next].0 == now {
            let (_, addr, is_write) = arrivals[next];
            assert!(mem.try_enqueue(now, next as u64, addr, is_write, memtint_engine::controller::Origin::default()));
            next += 1;
        }
        let arrival = arrivals.get(next).map_or(u64::MAX, |a| a.0);
        // Past `until`, only the requests' own events are waited for.
        let horizon = if now <= until { until + 1 } else { u64::MAX };
        now = if every_cycle { now + 1 } else { mem.next_event().min(arrival).min(horizon) };
        if now > 100_000 {
            break;
        }
    }
    assert_eq!(done.len(), arrivals.len(), "every request completes");
    mem.drain_commands(&mut log);
    log
}

/// The message of a machine configuration that is refused (by its overrides or its resolution).
pub fn machine_error(name: &str, overrides: serde_json::Value) -> String {
    match MachineConfig::load(name).unwrap().with_overrides(&overrides).and_then(|m| MemoryConfig::resolve(&m)) {
        Ok(_) => panic!("{name} with {overrides} was accepted"),
        Err(e) => e.to_string(),
    }
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
    for k in ["wall_seconds", "requests_per_second", "dram_cycles_per_second", "vector_isa"] {
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

/// A random DRAM run for the property tests (`randomized.rs`, `lanes_equal_general.rs`):
/// machine (DDR3 and DDR4 organisations; 4 ranks on a quarter of the DDR4 cases), mapping,
/// scheduler, row policy, refresh (what it holds: a quarter hold the channel), queue sizes, watermarks, idle drain, front-end latency,
/// requests in flight, 1-5 sources, and a generator with writes.
pub mod random_run {
    use memtint_engine::config::{MachineConfig, MemoryConfig};
    use memtint_engine::dram_sim::WorkloadSpec;
    use memtint_engine::trace::{GeneratorKind, GeneratorSpec};
    use proptest::prelude::*;
    use serde_json::json;

    pub const MACHINES: &[&str] = &[
        "ddr3-1333",
        "ddr3-1600",
        "ddr4-2400",
        "ddr4-2400-2ch2r",
        "i7-860",
        "i7-860-bpm-plus",
        "xor-bank",
        "opteron-6128-node",
        "tcm-24c",
        "lpddr4-3200",
        "ddr5-4800",
    ];
    pub const ROW_POLICIES: &[&str] = &["open", "closed", "timeout"];
    /// Refresh variants (`Case::config` gives each its manager and parameters): all-bank
    /// staggered, none, all-bank postponing up to 8, all ranks at once, DDR4 FGR 4x (1x on
    /// other standards), bursts of 16 REFs per rank in a 0.05 ms window, a rank at a time, and
    /// per-bank refresh postponing up to 8 (LPDDR4's REFPB, DDR5's REFSB; all-bank elsewhere).
    pub const REFRESH: &[&str] =
        &["all-bank", "none", "all-bank-postpone", "all-bank-pull-in", "all-bank-together", "all-bank-fgr4", "burst-each", "per-bank"];
    pub const KINDS: &[GeneratorKind] =
        &[GeneratorKind::Stream, GeneratorKind::Random, GeneratorKind::Strided, GeneratorKind::Conflict, GeneratorKind::Mix];

    #[derive(Debug, Clone)]
    pub struct Case {
        pub machine: &'static str,
        /// Ranks instead of the preset's (4 on the DDR4 presets: 64 banks per channel).
        pub ranks: Option<u32>,
        pub mapping: Option<&'static str>,
        pub scheduler: &'static str,
        pub row_policy: &'static str,
        pub refresh: &'static str,
        pub kind: GeneratorKind,
        pub read_fraction: f64,
        pub requests: u64,
        pub seed: u64,
        pub outstanding: usize,
        pub read_queue: usize,
        pub write_queue: usize,
        /// High and low write watermarks (low <= high).
        pub watermarks: (f64, f64),
        /// `write_idle_drain_min` (capped at the write queue) and `write_idle_drain_timeout`.
        pub idle_drain: (usize, u64),
        pub frontend_latency: u64,
        pub row_timeout: u64,
        pub sources: u32,
        /// `controller.power_down_after` (devices with tXP and tCKE only; the general controller).
        pub power_down_after: Option<u64>,
        /// `controller.refresh_holds = "channel"` (else the default, "target").
        pub refresh_holds_channel: bool,
    }

    /// Cases over these schedulers and mappings (`None`: the preset's) with `requests` in range.
    pub fn case(
        schedulers: &'static [&'static str],
        mappings: &'static [Option<&'static str>],
        requests: std::ops::Range<u64>,
    ) -> impl Strategy<Value = Case> {
        (
            (0..MACHINES.len(), 0..mappings.len(), 0..schedulers.len(), 0..ROW_POLICIES.len(), 0..REFRESH.len()),
            (0..KINDS.len(), 0.0f64..=1.0, requests, any::<u64>()),
            (1usize..80, 1usize..40, 1usize..40, 0.0f64..=1.0, 0.0f64..=1.0),
            (prop_oneof![Just(1usize), 2usize..12], 1u64..400, 1u64..20, 0u64..300, 1u32..6),
            prop_oneof![3 => Just(None), 1 => Just(Some(4u32))],
            prop_oneof![3 => Just(None), 1 => (1u64..200).prop_map(Some)],
            prop_oneof![3 => Just(false), 1 => Just(true)],
        )
            .prop_map(
                move |(
                    (m, mp, s, rp, rf),
                    (k, rfrac, n, seed),
                    (out, rq, wq, w1, w2),
                    (idle_min, idle_to, fe, to, src),
                    ranks,
                    pd,
                    hold,
                )| Case {
                    machine: MACHINES[m],
                    ranks,
                    mapping: mappings[mp],
                    scheduler: schedulers[s],
                    row_policy: ROW_POLICIES[rp],
                    refresh: REFRESH[rf],
                    kind: KINDS[k],
                    read_fraction: rfrac,
                    requests: n,
                    seed,
                    outstanding: out,
                    read_queue: rq,
                    write_queue: wq,
                    watermarks: (w1.max(w2), w1.min(w2)),
                    idle_drain: (idle_min.min(wq), idle_to),
                    frontend_latency: fe,
                    row_timeout: to,
                    sources: src,
                    power_down_after: pd.filter(|_| !MACHINES[m].starts_with("ddr5")),
                    refresh_holds_channel: hold,
                },
            )
    }

    /// `case`, on the machines the lane controller runs (DDR2/3/4's rules: not LPDDR4).
    pub fn lanes_case(
        schedulers: &'static [&'static str],
        mappings: &'static [Option<&'static str>],
        requests: std::ops::Range<u64>,
    ) -> impl Strategy<Value = Case> {
        case(schedulers, mappings, requests)
            .prop_filter("the lane controller runs DDR2/3/4", |c| !c.machine.starts_with("lpddr4") && !c.machine.starts_with("ddr5"))
            .prop_map(|c| Case { power_down_after: None, ..c })
    }

    /// Scheduler periods short enough for runs of a few thousand requests.
    pub fn short_scheduler_periods() -> serde_json::Value {
        json!({"controller": {
            "atlas": {"quantum": 2000, "starvation_threshold": 600}, "tcm": {"quantum": 2000, "shuffle_interval": 100},
            "bliss": {"clearing_interval": 500}, "imps": {"epoch": 1500, "low_intensity": 20.0},
            "ccps": {"epoch": 1500, "age_threshold": 400, "low_intensity": 20.0}, "par-bs": {"marking_cap": 3},
        }})
    }

    impl Case {
        /// Reads landing right behind writes to their bank: FCFS, closed page, a 2-entry read
        /// queue and a 13-entry write queue (the shape proptest once shrank a write-recovery
        /// defect to).
        pub fn reads_behind_writes(
            machine: &'static str,
            refresh: &'static str,
            kind: GeneratorKind,
            read_fraction: f64,
            requests: u64,
        ) -> Case {
            Case {
                machine,
                ranks: None,
                mapping: None,
                scheduler: "fcfs",
                row_policy: "closed",
                refresh,
                kind,
                read_fraction,
                requests,
                seed: 9313808024481899825,
                outstanding: 18,
                read_queue: 2,
                write_queue: 13,
                watermarks: (0.8600912114574566, 0.8513915364753544),
                idle_drain: (1, 1),
                frontend_latency: 1,
                row_timeout: 0,
                sources: 1,
                power_down_after: None,
                refresh_holds_channel: false,
            }
        }

        /// The run's memory configuration; `implementation` sets `controller.implementation`
        /// (`None`: the default, "auto").
        pub fn config(&self, implementation: Option<&str>) -> MemoryConfig {
            let mut m = MachineConfig::load(self.machine).unwrap();
            if let Some(mp) = self.mapping {
                m.dram.mapping = mp.to_string();
            }
            // (DDR4 presets only: the others' mapping files are written for their own rank count.)
            if let (Some(r), true) = (self.ranks, self.machine.starts_with("ddr4")) {
                m.dram.ranks = r;
            }
            let (refresh, refresh_params) = match self.refresh {
                "all-bank-postpone" => ("all-bank", json!({"postpone": 8})),
                "all-bank-pull-in" => ("all-bank", json!({"pull_in": 8})),
                "all-bank-together" => ("all-bank", json!({"stagger": false})),
                "all-bank-fgr4" if self.machine.starts_with("ddr4") => ("all-bank", json!({"granularity": 4})),
                "all-bank-fgr4" => ("all-bank", json!({})),
                "burst-each" => ("burst", json!({"retention_ms": 0.05, "refs_per_window": 16, "jedec": false, "groups": "each"})),
                "per-bank" if self.machine.starts_with("lpddr4") => ("per-bank", json!({"postpone": 8})),
                "per-bank" if self.machine.starts_with("ddr5") => ("same-bank", json!({"postpone": 8})),
                "per-bank" => ("all-bank", json!({})),
                other => (other, json!({})),
            };
            let mut controller = json!({
                "scheduler": self.scheduler, "row_policy": self.row_policy, "refresh": refresh,
                "read_queue": self.read_queue, "write_queue": self.write_queue, "timeout": {"cycles": self.row_timeout},
                "write_high_watermark": self.watermarks.0, "write_low_watermark": self.watermarks.1,
                "write_idle_drain_min": self.idle_drain.0, "write_idle_drain_timeout": self.idle_drain.1,
                "frontend_latency": self.frontend_latency,
            });
            if let Some(i) = implementation {
                controller["implementation"] = json!(i);
            }
            if let Some(n) = self.power_down_after {
                controller["power_down_after"] = json!(n);
            }
            if self.refresh_holds_channel {
                controller["refresh_holds"] = json!("channel");
            }
            if refresh_params.as_object().is_some_and(|o| !o.is_empty()) {
                controller[refresh] = refresh_params;
            }
            let m = m.with_overrides(&json!({ "controller": controller })).unwrap().with_overrides(&short_scheduler_periods()).unwrap();
            MemoryConfig::resolve(&m).unwrap()
        }

        pub fn workload(&self) -> WorkloadSpec {
            let mut g = GeneratorSpec::new(self.kind, self.requests);
            g.seed = self.seed;
            g.read_fraction = Some(self.read_fraction);
            WorkloadSpec::Generate(g)
        }
    }
}

/// A CPU-trace run specification from JSON.
pub fn sim_spec(v: serde_json::Value) -> memtint_engine::multicore::SimSpec {
    serde_json::from_value(v).expect("spec parses")
}

/// A CPU-trace run's statistics; panics if the run fails.
pub fn sim_run(v: serde_json::Value) -> serde_json::Value {
    memtint_engine::multicore::run_sim(&sim_spec(v)).expect("the run succeeds")
}

/// The message of a CPU-trace run that must fail.
pub fn sim_err(v: serde_json::Value) -> String {
    memtint_engine::multicore::run_sim(&sim_spec(v)).expect_err("the run must fail").to_string()
}

/// A JSON value that must be an unsigned integer.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}
