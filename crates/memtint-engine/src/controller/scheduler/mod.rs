//! Schedulers decide which ready command issues. One file each; registered in `SCHEDULERS` below.
//!
//! A scheduler ranks candidates by a key (smaller wins). For the age-ordered schedulers (fcfs,
//! fr-fcfs, fr-fcfs-cap) the controller evaluates, per bank, the oldest request that hits the
//! open row and the oldest that does not, so their keys must prefer older requests within a class
//! of one bank.
//!
//! Application-aware schedulers (`ranks_requests() == true`: PAR-BS, ATLAS, TCM, BLISS, IMPS,
//! CCPS) order by per-source state first, so the oldest is not always the best: the controller
//! then offers, per bank, the one queued request with the smallest key (its column command if it
//! hits, else its PRE or ACT). A bank serves one request at a time, so offering a less important
//! request of the same bank would only let it delay the best one (a stream of lower-ranked hits
//! could hold off a higher-ranked request's PRE forever through tRTP). Their keys change when their state does; they report it through `advance` (called
//! before every decision and after every issue) and bound event skipping with `next_change`
//! and `age_threshold`, and the controller then rebuilds every cached candidate.

mod age_order;
mod atlas;
mod bliss;
mod ccps;
mod fcfs;
mod fr_fcfs;
mod fr_fcfs_cap;
mod imps;
mod intensity;
mod key;
mod par_bs;
mod per_source;
mod tcm;
#[cfg(test)]
mod test_support;

pub use age_order::{AgeOrder, LANE_AGES};
pub use atlas::Atlas;
pub use bliss::Bliss;
pub use ccps::Ccps;
pub use fcfs::Fcfs;
pub use fr_fcfs::FrFcfs;
pub use fr_fcfs_cap::FrFcfsCap;
pub use imps::Imps;
pub use intensity::IntensityMeter;
pub use key::KeyBuilder;
pub use par_bs::ParBs;
pub use per_source::PerSource;
pub use tcm::Tcm;

use super::{BankQueue, Request, RowOutcome};
use crate::controller::ControllerConfig;
use crate::dram::constraints::Constraints;
use crate::dram::Command;
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};
use crate::{Cycle, NEVER};
use std::collections::BTreeMap;

/// A command that could issue now on behalf of one queued request.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub command: Command,
    /// True for a column command to the open row (a row hit).
    pub is_hit: bool,
    pub flat_bank: u32,
    pub arrival: Cycle,
    /// Arrival order at the controller (unique): smaller is older.
    pub seq: u64,
    pub source: u32,
    /// The source's process.
    pub process: u32,
}

/// Age part of a key: `seq` fits in 62 bits for any feasible run.
const AGE_BITS: u64 = (1 << 62) - 1;

/// Key of "hits first, then oldest first".
#[inline]
pub fn hit_first_key(c: &Candidate) -> u64 {
    ((!c.is_hit as u64) << 62) | (c.seq & AGE_BITS)
}

pub trait Scheduler: Send {
    fn name(&self) -> &'static str;

    /// Priority of a ready candidate: the smallest key issues. Must be unique per request
    /// (include `seq`) so the choice is deterministic. Any `u64` is a valid key.
    fn key(&self, c: &Candidate) -> u64;

    /// May a bank whose open row still has queued hits be precharged for an older conflicting
    /// request? Schedulers that prefer hits say no, so a row is not closed under its hits.
    fn may_close_row_with_hits(&self, _hits_since_act: u32) -> bool {
        true
    }

    /// Does this row hit keep its hit priority? (FR-FCFS-Cap withdraws it after the cap.)
    fn hit_counts_as_hit(&self, _hits_since_act: u32) -> bool {
        true
    }

    /// The age-ordered schedulers' order as data (`None` for the others): the lane controller
    /// reads it instead of calling `key` and the row rules per candidate.
    fn age_order(&self) -> Option<AgeOrder> {
        None
    }

    /// True for schedulers whose order within a bank is not "hits, then oldest" (see the module
    /// header): the controller then evaluates every queued request, and calls the hooks below.
    fn ranks_requests(&self) -> bool {
        false
    }

    /// A request entered the controller's queue at `now`.
    fn on_arrival(&mut self, _now: Cycle, _req: &Request) {}

    /// A request's column command issued at `now` (the request is served); `outcome` is how it
    /// found its bank.
    fn on_served(&mut self, _now: Cycle, _req: &Request, _outcome: RowOutcome) {}

    /// Bring the scheduler's state up to `now` (quantum and epoch boundaries, batches, shuffles,
    /// blacklist changes) with the queued requests in view (`queues[0]` reads, `[1]` writes).
    /// Returns true if the key of any queued request may have changed since the last call.
    fn advance(&mut self, _now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        false
    }

    /// The next cycle at which `advance` would change keys with no request arriving or being
    /// served (`NEVER`: none). Bounds event skipping.
    fn next_change(&self) -> Cycle {
        NEVER
    }

    /// Keys change when a request has waited this long (ATLAS, CCPS): the controller wakes then.
    fn age_threshold(&self) -> Option<u64> {
        None
    }

    /// Per-source counters of the scheduler's decisions (source -> name -> count), for the
    /// statistics (`docs/stats.md`, `scheduler_sources`).
    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        BTreeMap::new()
    }
}

/// What a scheduler is and how to make one, declared in its own file (`pub const INFO`).
pub struct SchedulerInfo {
    pub name: &'static str,
    /// One line for listings (`memtint presets`, the CLI's help).
    pub summary: &'static str,
    /// It runs on the lane controller: its order is an `AgeOrder` (`Scheduler::age_order`; a
    /// test holds every registered scheduler to what it declares here).
    pub fast_path: bool,
    /// Its parameters (`[controller.<name>]`), declared in its file.
    pub params: ParamSchema,
    pub build: fn(&ControllerConfig, &Constraints) -> Result<Box<dyn Scheduler>>,
    /// Its periods (quantum, epoch...), for the warning about runs too short for them.
    pub periods: fn(&ControllerConfig) -> Result<Vec<Period>>,
}

/// One of a scheduler's periods: its parameter, its length, what it is, and what a run in which no
/// period ended misses.
pub struct Period {
    pub key: &'static str,
    pub cycles: u64,
    pub noun: &'static str,
    pub missed: &'static str,
}

/// For schedulers without periods.
pub fn no_periods(_: &ControllerConfig) -> Result<Vec<Period>> {
    Ok(Vec::new())
}

impl Component for SchedulerInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The schedulers: the built-in ones, one line each (`SCHEDULERS.register` adds more).
pub static SCHEDULERS: Registry<SchedulerInfo> = Registry::new(
    "scheduler",
    &[&fcfs::INFO, &fr_fcfs::INFO, &fr_fcfs_cap::INFO, &par_bs::INFO, &atlas::INFO, &tcm::INFO, &bliss::INFO, &imps::INFO, &ccps::INFO],
);

/// The registered schedulers' names.
pub fn names() -> Vec<&'static str> {
    SCHEDULERS.names()
}

/// The scheduler registered as `name`.
pub fn info(name: &str) -> Result<&'static SchedulerInfo> {
    SCHEDULERS.get(name)
}

/// The scheduler `name`, configured from `cfg`; `c` gives the timing that ATLAS and TCM use to
/// weigh a served request's bank service time.
pub fn build(name: &str, cfg: &ControllerConfig, c: &Constraints) -> Result<Box<dyn Scheduler>> {
    (info(name)?.build)(cfg, c)
}

/// A run that lasts fewer than this many of its scheduler's periods (quantum, epoch, clearing
/// interval) is warned about: the scheduler had too few boundaries to measure and act on.
pub const MIN_PERIODS: u64 = 3;

/// Warnings about the scheduler configuration of a run that lasted `cycles` controller cycles:
/// periods the run is too short for. Empty when there is nothing to say.
pub fn run_warnings(cfg: &ControllerConfig, cycles: Cycle) -> Vec<String> {
    let name = cfg.scheduler.as_str();
    let mut out = Vec::new();
    let periods = info(name).and_then(|s| (s.periods)(cfg)).unwrap_or_default();
    for Period { key, cycles: period, noun, missed } in periods {
        if cycles >= MIN_PERIODS.saturating_mul(period) {
            continue;
        }
        let ended = cycles / period;
        let effect = if ended == 0 { format!("no {noun} ended: {missed}") } else { format!("only {ended} {noun}(s) ended") };
        out.push(format!(
            "{name}: the run lasted {cycles} controller cycles, fewer than {MIN_PERIODS} x controller.{name}.{key} ({period}); \
             {effect}. Set controller.{name}.{key} to at most {} for this run length",
            (cycles / MIN_PERIODS).max(1)
        ));
    }
    out
}

/// Bank service time of one served request, in cycles: what ATLAS calls attained service and TCM
/// bandwidth usage. A hit occupies the bank for its burst, a miss also for tRCD, a conflict also
/// for tRP (the bank time the request itself caused).
#[derive(Clone, Copy, Debug)]
pub struct ServiceCost {
    hit: u64,
    miss: u64,
    conflict: u64,
}

impl ServiceCost {
    pub fn new(c: &Constraints) -> Self {
        ServiceCost { hit: c.burst, miss: c.act_to_col + c.burst, conflict: c.pre_to_act + c.act_to_col + c.burst }
    }

    pub fn of(&self, outcome: RowOutcome) -> u64 {
        match outcome {
            RowOutcome::Hit => self.hit,
            RowOutcome::Miss => self.miss,
            RowOutcome::Conflict => self.conflict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MachineConfig, MemoryConfig};
    use crate::controller::ChannelController;

    fn build_with(overrides: serde_json::Value) -> Result<ChannelController> {
        let m = MachineConfig::load("ddr4-2400").unwrap().with_overrides(&serde_json::json!({ "controller": overrides }))?;
        let mem = MemoryConfig::resolve(&m)?;
        ChannelController::new(0, mem.device.standard, &mem.org, &mem.timing, &m.controller)
    }

    #[test]
    fn every_registered_name_builds_and_reports_its_name() {
        for name in names() {
            let c = build_with(serde_json::json!({ "scheduler": name })).unwrap();
            assert_eq!(c.scheduler_name(), name);
        }
    }

    #[test]
    fn each_scheduler_declares_the_fast_path_it_has() {
        // A scheduler that says it runs on the lane controller must give its order as data, or
        // `Implementation::resolve` would silently send it to the general controller.
        let m = MachineConfig::load("ddr4-2400").unwrap();
        let mem = MemoryConfig::resolve(&m).unwrap();
        let c = Constraints::derive(mem.device.standard, &mem.timing);
        for s in SCHEDULERS.all() {
            let built = (s.build)(&ControllerConfig::default(), &c).unwrap();
            assert_eq!(built.age_order().is_some(), s.fast_path, "{}", s.name);
            assert_eq!(built.name(), s.name);
        }
    }

    #[test]
    fn a_run_shorter_than_a_few_periods_is_warned_about() {
        let cfg = |s: &str| ControllerConfig { scheduler: s.into(), ..ControllerConfig::default() };
        let w = run_warnings(&cfg("atlas"), 1_000_000);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("controller.atlas.quantum") && w[0].contains("equals fr-fcfs") && w[0].contains("333333"), "{w:?}");
        assert!(run_warnings(&cfg("atlas"), 30_000_000).is_empty());
        let w = run_warnings(&cfg("tcm"), 2_000_000);
        assert!(w.len() == 1 && w[0].contains("only 2 quantum(s) ended"), "{w:?}");
        assert!(run_warnings(&cfg("bliss"), 29_999)[0].contains("controller.bliss.clearing_interval"));
        for s in ["fcfs", "fr-fcfs", "fr-fcfs-cap", "par-bs"] {
            assert!(run_warnings(&cfg(s), 10).is_empty(), "{s} has no period");
        }
        let old = cfg("tcm").with_param("tcm", "cluster_share", 4.0);
        let w = old.run_warnings(100_000_000);
        assert!(w.len() == 1 && w[0].contains("controller.tcm.cluster_share (4) is deprecated"), "{w:?}");
        assert!(ControllerConfig { scheduler: "fr-fcfs".into(), ..old }.run_warnings(10).is_empty(), "warned only when in use");
    }

    #[test]
    fn old_flat_keys_still_work_with_a_deprecation_warning() {
        build_with(serde_json::json!({ "scheduler": "tcm", "tcm_quantum": 5000, "intensity_alpha": 0.5 })).unwrap();
        let cfg: ControllerConfig =
            serde_json::from_value(serde_json::json!({ "scheduler": "tcm", "tcm_quantum": 5000, "intensity_alpha": 0.5 })).unwrap();
        let table: ControllerConfig =
            serde_json::from_value(serde_json::json!({ "scheduler": "tcm", "tcm": { "quantum": 5000 } })).unwrap();
        assert_eq!(cfg.params_in_use().unwrap()["tcm"]["quantum"], 5000);
        assert_eq!(cfg.params_in_use().unwrap(), table.params_in_use().unwrap());
        let imps = ControllerConfig { scheduler: "imps".into(), ..cfg.clone() };
        assert_eq!(imps.params_in_use().unwrap()["imps"]["alpha"], 0.5, "intensity_alpha reaches IMPS");
        let w = cfg.warnings().unwrap();
        assert!(
            w.contains(&"controller.tcm_quantum is deprecated and will be removed: write it as [controller.tcm] quantum".to_string()),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("controller.intensity_alpha") && w.contains("[controller.imps] alpha and [controller.ccps] alpha")),
            "{w:?}"
        );
    }

    #[test]
    fn bad_scheduler_parameters_are_errors_naming_the_key() {
        for (table, key, value) in [
            ("par-bs", "marking_cap", serde_json::json!(0)),
            ("atlas", "alpha", serde_json::json!(1.0)),
            ("atlas", "quantum", serde_json::json!(0)),
            ("tcm", "shuffle_interval", serde_json::json!(0)),
            ("tcm", "cluster_share", serde_json::json!(-1.0)),
            ("tcm", "cluster_thresh", serde_json::json!(1.5)),
            ("bliss", "clearing_interval", serde_json::json!(0)),
            ("ccps", "alpha", serde_json::json!(-0.1)),
            ("imps", "low_intensity", serde_json::json!(-2.0)),
            ("fr-fcfs-cap", "cap", serde_json::json!(0)),
        ] {
            let err = build_with(serde_json::json!({ "scheduler": "tcm", table: { key: value } })).err().expect("rejected").to_string();
            assert!(err.contains(&format!("controller.{table}.{key}")), "{key}: {err}");
        }
        // A misspelt parameter, a table no component owns, an unknown flat key, a wrong type.
        for (overrides, expected) in [
            (serde_json::json!({ "tcm": { "quantm": 1 } }), "controller.tcm: unknown field `quantm`, expected one of `quantum`"),
            (
                serde_json::json!({ "stfm": { "quantum": 1 } }),
                "controller.stfm: no component with parameters is named 'stfm'; tables: fr-fcfs-cap",
            ),
            (serde_json::json!({ "tcm_quantm": 1 }), "controller.tcm_quantm: unknown key; controller keys: "),
            (
                serde_json::json!({ "atlas": { "quantum": "long" } }),
                "controller.atlas.quantum: invalid type: string \"long\", expected a whole number of at least 0",
            ),
            (
                serde_json::json!({ "tcm_quantum": 5, "tcm": { "quantum": 6 } }),
                "controller.tcm_quantum: is the deprecated spelling of controller.tcm.quantum",
            ),
        ] {
            let err = build_with(overrides).err().expect("rejected").to_string();
            assert!(err.contains(expected), "{err}");
        }
        let err = build_with(serde_json::json!({ "scheduler": "stfm" })).err().unwrap().to_string();
        assert!(err.contains("stfm") && err.contains("ccps"), "{err}");
    }
}
