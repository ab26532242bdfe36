//! The extension recipes of docs/ARCHITECTURE.md, tried: a scheduler, a refresh manager and a
//! placement policy written outside the engine, each its own code plus one registration line,
//! then used by name in ordinary runs (with the timing checker on).

mod common;

use common::*;
use memtint_engine::controller::refresh::{RefreshInfo, RefreshManager, REFRESH_MANAGERS};
use memtint_engine::controller::scheduler::{no_periods, Candidate, Scheduler, SchedulerInfo, SCHEDULERS};
use memtint_engine::dram::Command;
use memtint_engine::dram_sim::DramSimOptions;
use memtint_engine::error::Result;
use memtint_engine::multicore::{run_sim, SimSpec};
use memtint_engine::os::buddy::BuddyAllocator;
use memtint_engine::os::colour::ColourSpace;
use memtint_engine::os::placement::{Placement, PlacementPolicy, PolicyInfo, POLICIES};
use memtint_engine::params::{ParamSchema, Params};
use memtint_engine::trace::GeneratorKind;
use memtint_engine::Cycle;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Once;

// ---- a scheduler: the youngest request first (a deliberately bad order) ----

struct YoungestFirst;

impl Scheduler for YoungestFirst {
    fn name(&self) -> &'static str {
        YOUNGEST_FIRST.name
    }
    // The first request's key is u64::MAX: the whole key range is valid (the controller once
    // took that value for an empty slot and never issued the request).
    fn key(&self, c: &Candidate) -> u64 {
        u64::MAX - c.seq
    }
    // Within a bank the order is not "hits, then oldest", so every queued request is looked at.
    fn ranks_requests(&self) -> bool {
        true
    }
}

static YOUNGEST_FIRST: SchedulerInfo = SchedulerInfo {
    name: "youngest-first",
    summary: "the youngest request first",
    fast_path: false,
    params: ParamSchema::NONE,
    build: |_, _| Ok(Box::new(YoungestFirst)),
    periods: no_periods,
};

// ---- a refresh manager with a parameter: all-bank REF at `rate` times the normal rate
// (DDR4's 2x and 4x modes), set in `[controller.faster-refresh]` ----

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RateParams {
    /// REFs per tREFI.
    rate: u64,
}

impl Default for RateParams {
    fn default() -> Self {
        RateParams { rate: 2 }
    }
}

impl Params for RateParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        match self.rate {
            1 | 2 | 4 => Ok(()),
            r => Err(("rate", format!("must be 1, 2 or 4, got {r}"))),
        }
    }
}

struct DoubleRate {
    interval: u64,
    due: Vec<Cycle>,
}

impl RefreshManager for DoubleRate {
    fn name(&self) -> &'static str {
        DOUBLE_RATE.name
    }
    fn due(&self, rank: u32) -> Cycle {
        self.due[rank as usize]
    }
    fn next_due(&self) -> Cycle {
        self.due.iter().copied().min().unwrap_or(Cycle::MAX)
    }
    fn refreshed(&mut self, rank: u32, _now: Cycle) {
        self.due[rank as usize] += self.interval;
    }
}

static DOUBLE_RATE: RefreshInfo = RefreshInfo {
    name: "faster-refresh",
    summary: "all-bank REF every tREFI / rate",
    params: ParamSchema::of::<RateParams>(&[]),
    build: |cfg, ranks, t_refi| {
        let interval = t_refi / cfg.params::<RateParams>(DOUBLE_RATE.name, &[])?.rate;
        Ok(Box::new(DoubleRate { interval, due: (0..ranks as u64).map(|r| interval * (r + 1) / ranks as u64).collect() }))
    },
};

// ---- a placement policy: the lowest free frame, uncoloured ----

struct LowestFrame {
    space: ColourSpace,
}

impl PlacementPolicy for LowestFrame {
    fn name(&self) -> &'static str {
        LOWEST_FRAME.name
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &[0]
    }
    fn place(&mut self, _pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        let frame = alloc.alloc_any().ok_or_else(|| memtint_engine::error::Error::config("os.policy", "out of frames"))?;
        Ok(Placement { frame, borrowed: false })
    }
}

static LOWEST_FRAME: PolicyInfo =
    PolicyInfo::new("lowest-frame", "the lowest free frame", |_, _, _, _| Ok(Box::new(LowestFrame { space: ColourSpace::uncoloured() })));

/// The registration lines (once per test process).
fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        SCHEDULERS.register(&YOUNGEST_FIRST).unwrap();
        REFRESH_MANAGERS.register(&DOUBLE_RATE).unwrap();
        POLICIES.register(&LOWEST_FRAME).unwrap();
    });
}

#[test]
fn a_registered_scheduler_runs_by_name() {
    register();
    let w = generated(GeneratorKind::Random, 20_000, 3);
    let max_latency = |scheduler: &str| {
        let cfg = machine("ddr4-2400", json!({"controller": {"scheduler": scheduler}}));
        let (mem, totals) = run(&cfg, &w, DramSimOptions::new(32));
        assert_eq!(totals.requests, 20_000);
        assert_eq!(mem.channels()[0].scheduler_name(), scheduler);
        mem.channels()[0].stats().read_latency.max()
    };
    let (youngest, oldest) = (max_latency("youngest-first"), max_latency("fcfs"));
    assert!(youngest > 2 * oldest, "youngest-first starves old requests: max latency {youngest} vs fcfs {oldest}");
    assert!(memtint_engine::controller::scheduler::names().contains(&"youngest-first"));
}

#[test]
fn a_registered_refresh_manager_runs_by_name() {
    register();
    let w = generated(GeneratorKind::Random, 50_000, 4);
    let refreshes = |controller: serde_json::Value| {
        let cfg = machine("ddr4-2400", json!({ "controller": controller }));
        let (mem, totals) = run(&cfg, &w, DramSimOptions::new(16));
        (mem.channels()[0].stats().rank_commands[0][Command::Ref.index()], totals.dram_cycles, cfg.timing.tREFI)
    };
    let (double, cycles, t_refi) = refreshes(json!({"refresh": "faster-refresh"}));
    assert!(cycles > 10 * t_refi, "the run spans {cycles} cycles, tREFI {t_refi}");
    let expected = cycles / (t_refi / 2);
    assert!(double.abs_diff(expected) <= 1, "{double} REFs in {cycles} cycles, expected about {expected}");
    let (single, _, _) = refreshes(json!({"refresh": "all-bank"}));
    assert!(double > single * 3 / 2, "faster-refresh {double} vs all-bank {single}");
    // Its parameter table, read by its own code and checked like a built-in one's.
    let (quad, cycles, _) = refreshes(json!({"refresh": "faster-refresh", "faster-refresh": {"rate": 4}}));
    assert!(quad.abs_diff(cycles / (t_refi / 4)) <= 1, "{quad} REFs at rate 4 in {cycles} cycles");
    let bad = machine_error("ddr4-2400", json!({"controller": {"refresh": "faster-refresh", "faster-refresh": {"rate": 3}}}));
    assert!(bad.contains("controller.faster-refresh.rate: must be 1, 2 or 4, got 3"), "{bad}");
}

#[test]
fn a_registered_placement_policy_runs_by_name() {
    register();
    let spec = |policy: &str| -> SimSpec {
        serde_json::from_value(json!({
            "machine": "ddr4-2400", "programs": ["random", "stream"], "instructions": 300_000, "os": {"policy": policy}
        }))
        .unwrap()
    };
    let lowest = run_sim(&spec("lowest-frame")).unwrap();
    assert_eq!(lowest["policy"], "lowest-frame");
    let buddy = run_sim(&spec("buddy")).unwrap();
    assert_ne!(lowest["cores"], buddy["cores"], "the placement changes where pages land, so the run");
    let err = SCHEDULERS.register(&YOUNGEST_FIRST).unwrap_err().to_string();
    assert!(err.contains("registered already"), "{err}");
}
