//! Refresh managers decide when each rank (or, per-bank managers, each bank) must be
//! refreshed. One file each, declaring its `INFO`; registered by one line in
//! `REFRESH_MANAGERS`. Both channel controllers drive a manager through `RefreshState`
//! (`state.rs`), which also records when each target was blocked by refresh, for the
//! statistics. Per-bank managers run on the general controller only.

mod all_bank;
mod burst;
mod no_refresh;
mod per_bank;
mod same_bank;
mod state;

pub use all_bank::AllBank;
pub use burst::Burst;
pub use no_refresh::NoRefresh;
pub use per_bank::PerBank;
pub(crate) use state::RefreshState;

use crate::controller::ControllerConfig;
pub use crate::dram::refresh_timing::RefreshObligation;
use crate::dram::{Organisation, Standard};
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};
use crate::Cycle;

/// What a refresh manager is built for: the run's refresh timing (`RefreshInfo::timing` applied).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefreshContext {
    pub ranks: u32,
    /// Banks per rank (the targets of a per-bank manager are `rank * banks_per_rank + bank`).
    pub banks_per_rank: u32,
    /// Banks per bank group (a same-bank manager's are `rank * banks_per_group + bank`).
    pub banks_per_group: u32,
    /// Average refresh interval and refresh cycle time, controller cycles.
    pub t_refi: u64,
    pub t_rfc: u64,
    /// Clock period, ns (for retention windows given in ms).
    pub t_ck_ns: f64,
}

impl RefreshContext {
    /// `ms` milliseconds in cycles.
    pub fn cycles_of_ms(&self, ms: f64) -> u64 {
        (ms * 1e6 / self.t_ck_ns).round() as u64
    }
}

/// The device's refresh timing as its preset gives it, which a manager may change (DDR4's
/// fine-granularity modes shorten both tREFI and tRFC).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefreshDevice {
    pub standard: Standard,
    /// The density whose tRFC applies (`dram.refresh_density_gbit`, else the device's).
    pub density_gbit: u32,
    pub t_ck_ns: f64,
    pub t_refi: u64,
    pub t_rfc: u64,
}

/// What one refresh covers, and so what a manager's targets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshTargets {
    /// Ranks, refreshed by REF.
    Ranks,
    /// Banks (`rank * banks_per_rank + bank`), refreshed by REFPB (LPDDR4).
    Banks,
    /// Bank indices (`rank * banks_per_group + bank`): that bank in every bank group, refreshed
    /// by REFSB (DDR5).
    BankIndices,
}

/// Every method's `rank` is a target (`targets`): a rank, a bank or a bank index.
pub trait RefreshManager: Send {
    fn name(&self) -> &'static str;
    /// What the manager's targets are.
    fn targets(&self) -> RefreshTargets {
        RefreshTargets::Ranks
    }
    /// The cycle at which `rank`'s next refresh falls due (`NEVER` if none).
    fn due(&self, rank: u32) -> Cycle;
    /// The earliest due cycle over all ranks.
    fn next_due(&self) -> Cycle;
    /// A REF was issued to `rank` at `now`.
    fn refreshed(&mut self, rank: u32, now: Cycle);
    /// `Some(period)` when each REF moves its rank's due cycle on by `period`, whenever it was
    /// issued: an idle controller may then take many at once (`skip_idle`). `None` (the
    /// default): it steps through each.
    fn period(&self) -> Option<u64> {
        None
    }
    /// `n` REFs issued to `rank`, each at its due cycle (only called when `period` is `Some`).
    fn refreshed_many(&mut self, rank: u32, n: u64) {
        for _ in 0..n {
            let due = self.due(rank);
            self.refreshed(rank, due);
        }
    }
    /// Whether `rank`'s REF, due, may wait at `now` because the rank has requests queued
    /// (postponement). The default never postpones.
    fn may_postpone(&self, _rank: u32, _now: Cycle) -> bool {
        false
    }
    /// Whether the manager pulls REFs in early (the controllers then offer it idle ranks).
    fn pulls_in(&self) -> bool {
        false
    }
    /// The cycle from which `rank`, if idle, may take its next REF early (`NEVER`: not now).
    fn pull_in_at(&self, _rank: u32) -> Cycle {
        crate::NEVER
    }
    /// `rank` had requests queued when offered an early REF: none more until its next REF.
    fn pull_in_declined(&mut self, _rank: u32) {}
    /// Whether the manager ever postpones (the controllers then look at ranks' queues).
    fn postpones(&self) -> bool {
        false
    }
    /// What the checker verifies of this manager's REFs.
    fn obligation(&self) -> RefreshObligation {
        RefreshObligation::Interval
    }
    /// For a manager without a `period`: idle until `until`, the REFs `rank` (ready for a REF
    /// from `ready`) would issue that change nothing the ones after them do not, taken at once;
    /// returns how many. The default takes none (the ticks issue each).
    fn skip_idle_rank(&mut self, _rank: u32, _ready: Cycle, _until: Cycle) -> u64 {
        0
    }
}

/// Idle time skipped at once: a controller with nothing queued or in flight, every bank closed
/// and no REF pending would, ticked until `until`, only issue each rank's REFs at their due
/// cycles (on time: the rank is ready for the first, `ref_ready(rank) <= due`, and tRFC fits a
/// period for the others). All but the last of each rank change nothing the last does not
/// overwrite (their timing is dominated by it), so `refresh` is advanced past them here and
/// the ticks issue the last. Returns the REFs skipped per rank, for the statistics. Per-bank
/// managers' targets are banks (`targets` counts them, `t_rfc` is tRFCpb): a skipped REFPB's
/// rank-wide effects (tpbR2pbR, tRRD) are dominated by its rank's last REFPB, which the ticks
/// issue after it.
pub(crate) fn skip_idle(
    refresh: &mut dyn RefreshManager,
    targets: u32,
    t_rfc: u64,
    ref_ready: impl Fn(u32) -> Cycle,
    until: Cycle,
) -> Vec<u64> {
    let mut skipped = vec![0; targets as usize];
    let Some(period) = refresh.period().filter(|&p| p >= t_rfc && p > 0) else {
        for r in 0..targets {
            skipped[r as usize] = refresh.skip_idle_rank(r, ref_ready(r), until);
        }
        return skipped;
    };
    for r in 0..targets {
        let due = refresh.due(r);
        if due >= until || ref_ready(r) > due {
            continue;
        }
        // REFs due before `until`: due, due + period, ...; the last stays for the ticks.
        let n = (until - 1 - due) / period;
        if n > 0 {
            refresh.refreshed_many(r, n);
            skipped[r as usize] = n;
        }
    }
    skipped
}

/// JEDEC-bounded postponement, shared by the managers that postpone: a refresh that fell due at
/// `due` may still wait at `now` if it stays `postpone` intervals of `t_refi` after `due`, less
/// half an interval for the controller to close the target, so no two refreshes of a target
/// are more than (postpone + 1) x tREFI apart.
pub(crate) fn may_still_wait(now: Cycle, due: Cycle, postpone: u32, t_refi: u64) -> bool {
    now + t_refi / 2 < due + postpone as u64 * t_refi
}

/// What a refresh manager is and how to make one, declared in its own file (`pub const INFO`).
pub struct RefreshInfo {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its parameters (`[controller.<name>]`), declared in its file.
    pub params: ParamSchema,
    /// The refresh timing (tREFI, tRFC in cycles) the scheme runs the device with; most keep
    /// the device's (`device_timing`).
    pub timing: fn(&ControllerConfig, &RefreshDevice) -> Result<(u64, u64)>,
    /// A manager for the context's ranks and timing.
    pub build: fn(&ControllerConfig, &RefreshContext) -> Result<Box<dyn RefreshManager>>,
}

/// `RefreshInfo::timing` of schemes that keep the device's tREFI and tRFC.
pub fn device_timing(_: &ControllerConfig, d: &RefreshDevice) -> Result<(u64, u64)> {
    Ok((d.t_refi, d.t_rfc))
}

impl Component for RefreshInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The refresh managers: the built-in ones, one line each (`REFRESH_MANAGERS.register` adds more).
pub static REFRESH_MANAGERS: Registry<RefreshInfo> =
    Registry::new("refresh manager", &[&all_bank::INFO, &burst::INFO, &no_refresh::INFO, &per_bank::INFO, &same_bank::INFO]);

pub fn names() -> Vec<&'static str> {
    REFRESH_MANAGERS.names()
}

pub fn build(name: &str, cfg: &ControllerConfig, ctx: &RefreshContext) -> Result<Box<dyn RefreshManager>> {
    (REFRESH_MANAGERS.get(name)?.build)(cfg, ctx)
}

/// The refresh timing `cfg`'s manager runs `device` with.
pub fn timing(cfg: &ControllerConfig, device: &RefreshDevice) -> Result<(u64, u64)> {
    (REFRESH_MANAGERS.get(&cfg.refresh)?.timing)(cfg, device)
}

/// What the checker verifies of `cfg`'s manager's refreshes on a channel of `org`.
pub fn obligation(cfg: &ControllerConfig, org: &Organisation, timing: &crate::dram::TimingParams) -> Result<RefreshObligation> {
    Ok(state(cfg, org, timing)?.obligation())
}

/// The refresh state of a channel of `org` with `timing` (already the manager's, see
/// `timing`): `cfg`'s manager, built.
pub(crate) fn state(cfg: &ControllerConfig, org: &Organisation, timing: &crate::dram::TimingParams) -> Result<RefreshState> {
    let ctx = RefreshContext {
        ranks: org.ranks,
        banks_per_rank: org.banks_per_rank(),
        banks_per_group: org.banks_per_group,
        t_refi: timing.tREFI,
        t_rfc: timing.tRFC,
        t_ck_ns: timing.tCK_ns,
    };
    let manager = build(&cfg.refresh, cfg, &ctx)?;
    let t_rfc = match manager.targets() {
        RefreshTargets::Ranks => timing.tRFC,
        RefreshTargets::Banks => timing.tRFCpb,
        RefreshTargets::BankIndices => timing.tRFCsb,
    };
    let holds_channel = crate::controller::RefreshHold::from_name(&cfg.refresh_holds)? == crate::controller::RefreshHold::Channel;
    Ok(RefreshState::new(manager, org, t_rfc, holds_channel))
}
