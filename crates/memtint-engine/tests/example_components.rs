//! The extension recipes of docs/ARCHITECTURE.md, tried: a scheduler, a refresh manager and a
//! placement policy written outside the engine, each its own code plus one registration line,
//! then used by name in ordinary runs (with the timing checker on).

#[path = "engine/common.rs"]
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
use memtint_engine::os::dynamic::{DynamicInfo, DynamicPolicy, EpochView, Repartition, DYNAMIC};
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
// (DDR4's 2x and 4x modes), set in `[controller.faster-refresh]`. It declares the tREFI it runs
// the device with (`timing`), so the checker holds its REFs to that rate ----

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
    timing: |cfg, d| Ok((d.t_refi / cfg.params::<RateParams>(DOUBLE_RATE.name, &[])?.rate, d.t_rfc)),
    build: |_, ctx| {
        // `ctx.t_refi` is this manager's (its `timing`).
        let interval = ctx.t_refi;
        let ranks = ctx.ranks as u64;
        Ok(Box::new(DoubleRate { interval, due: (0..ranks).map(|r| interval * (r + 1) / ranks).collect() }))
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

/// A dynamic policy that swaps two processes' colour sets at every 100 µs epoch: under eager
/// re-colouring each swap copies every page of both, far more than an epoch holds.
struct SwapEveryEpoch;

impl DynamicPolicy for SwapEveryEpoch {
    fn epoch_ns(&self) -> f64 {
        100_000.0
    }
    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition> {
        Some(Repartition { colours: vec![v.colours[1].clone(), v.colours[0].clone()], colours_lent: 0, sets_shared: 0 })
    }
}

static SWAP_EVERY_EPOCH: DynamicInfo = DynamicInfo {
    name: "swap-every-epoch",
    summary: "swaps two processes' colours at every epoch",
    works_with: &["bpm"],
    params: ParamSchema::NONE,
    build: |_| Ok(Box::new(SwapEveryEpoch)),
};

/// The registration lines (once per test process).
fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        SCHEDULERS.register(&YOUNGEST_FIRST).unwrap();
        REFRESH_MANAGERS.register(&DOUBLE_RATE).unwrap();
        POLICIES.register(&LOWEST_FRAME).unwrap();
        DYNAMIC.register(&SWAP_EVERY_EPOCH).unwrap();
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
    let (single, _, device_refi) = refreshes(json!({"refresh": "all-bank"}));
    let (double, cycles, t_refi) = refreshes(json!({"refresh": "faster-refresh"}));
    assert_eq!(t_refi, device_refi / 2, "its timing halves tREFI for the whole run (the checker's too)");
    assert!(cycles > 10 * t_refi, "the run spans {cycles} cycles, tREFI {t_refi}");
    let expected = cycles / t_refi;
    assert!(double.abs_diff(expected) <= 1, "{double} REFs in {cycles} cycles, expected about {expected}");
    assert!(double > single * 3 / 2, "faster-refresh {double} vs all-bank {single}");
    // Its parameter table, read by its own code and checked like a built-in one's.
    let (quad, cycles, quad_refi) = refreshes(json!({"refresh": "faster-refresh", "faster-refresh": {"rate": 4}}));
    assert_eq!(quad_refi, device_refi / 4);
    assert!(quad.abs_diff(cycles / quad_refi) <= 1, "{quad} REFs at rate 4 in {cycles} cycles");
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

// ---- a tier device: a slow, DDR4-shaped memory (an NVM-like tier), as a device file of the
// user's own. Slow reads (tRCD 60 ns) and slower writes (tWR 150 ns); no refresh. ----

const SLOW_TIER: &str = r#"
name = "slow-tier"
standard = "DDR4"
speed_bin = "example slow tier on a DDR4-2400 interface"
data_rate_mts = 2400

[timing]
tCK_ns = 0.8333333
CL = 16
CWL = 12
tRCD = 72
tRP = 16
tRAS = 90
tRC = 106
tBL = 4
tCCD_S = 4
tCCD_L = 6
tRRD_S = 4
tRRD_L = 6
tFAW = 26
tWTR_S = 3
tWTR_L = 9
tRTP = 9
tWR = 180
tRTRS = 2
tREFI = 9360

[[organisation]]
density_gbit = 8
device_width = 8
bank_groups = 4
banks_per_group = 4
rows = 65536
columns = 1024
tRFC_ns = 350
"#;

#[test]
fn a_tier_device_file_runs_with_every_command_checked() {
    let dir = std::env::temp_dir().join(format!("memtint-tier-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("slow-tier.toml");
    std::fs::write(&path, SLOW_TIER).unwrap();
    let w = generated(GeneratorKind::Random, 20_000, 5);
    let mean_latency = |overrides: serde_json::Value| {
        let cfg = machine("ddr4-2400", overrides);
        let (mem, totals) = run(&cfg, &w, DramSimOptions::new(16));
        assert_eq!(totals.requests, 20_000);
        (mem.channels()[0].stats().read_latency.mean(), cfg.timing.tRCD)
    };
    let (slow, t_rcd) = mean_latency(json!({"dram": {"device": path.to_str().unwrap()}, "controller": {"refresh": "none"}}));
    let (fast, _) = mean_latency(json!({"controller": {"refresh": "none"}}));
    assert_eq!(t_rcd, 72, "the device file's timing is the one run");
    assert!(slow > 1.5 * fast, "slow tier {slow:.1} cycles vs DDR4-2400 {fast:.1}");
    let missing = machine_error("ddr4-2400", json!({"dram": {"device": dir.join("nope.toml").to_str().unwrap()}}));
    assert!(missing.contains("nope.toml"), "{missing}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_thread_the_os_never_lets_run_is_named_with_the_os_work_as_the_cause() {
    // The watchdog blamed MSHR arbitration (and suggested the default) for a thread whose loads
    // were refused only because re-colouring copies held it at every epoch.
    register();
    let spec = |recolour: &str| -> SimSpec {
        serde_json::from_value(json!({
            "machine": "ddr4-2400", "programs": ["random", "stream"], "instructions": 300_000,
            "os": {"policy": "bpm", "dynamic": "swap-every-epoch", "recolour": {"mode": recolour}},
            "overrides": {"cpu": {"watchdog_cycles": 20_000_000}}
        }))
        .unwrap()
    };
    let err = run_sim(&spec("eager")).unwrap_err().to_string();
    assert!(err.contains("the OS's page work for it") && err.contains("os.recolour.mode"), "{err}");
    assert!(!err.contains("mshr_arbitration"), "{err}");
    run_sim(&spec("lazy")).unwrap(); // copied when touched: the threads run
}

#[test]
fn the_per_source_tables_of_the_engine_s_schedulers_serve_outside_ones() {
    // An application-aware scheduler written outside the engine keeps its per-source state in the
    // same tables IMPS and CCPS use.
    use memtint_engine::controller::scheduler::{IntensityMeter, PerSource};
    let mut served: PerSource<u64> = PerSource::new();
    *served.get_mut(3) += 2;
    assert_eq!((served.len(), served.get(3), served.get(1), served.get(4)), (4, Some(&2), Some(&0), None));
    let mut meter = IntensityMeter::new(2000, 0.5);
    (0..10).for_each(|_| meter.record(1));
    assert!(!meter.advance(1999) && meter.rate(1).is_none(), "no epoch has ended");
    assert!(meter.advance(2000));
    assert_eq!((meter.rate(1), meter.rate(0)), (Some(5.0), Some(0.0)), "requests per 1000 cycles");
    assert!(meter.advance(4000));
    assert_eq!(meter.rate(1), Some(2.5), "half the last epoch's 0, half the earlier 5");
}
