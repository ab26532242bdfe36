//! All-bank refresh per rank, distributed: one REF every tREFI per rank (DDR3/DDR4 auto-refresh,
//! Ramulator 2's `AllBank`, DRAMSim3's rank-level policies). Ranks are staggered by
//! tREFI / ranks so their tRFC blackouts do not coincide (Ramulator 2.1's `scatter_interval` =
//! tREFI / ranks), or refreshed together (`stagger = false`, DRAMSim3's
//! RANK_LEVEL_SIMULTANEOUS and Ramulator 2.1's default). The schedule is fixed, so a late REF does not
//! drift the average rate.
//!
//! - `granularity` 2 or 4 is DDR4's fine-granularity refresh (FGR): tREFI / 2 or / 4 with the
//!   shorter tRFC2 or tRFC4 of the device's density (`dram/refresh_timing.rs`).
//! - `postpone` n (JEDEC allows up to 8): a REF falling due while its rank has requests queued
//!   waits while the rank is busy, at most until n tREFI after it fell due, less half a tREFI
//!   for the controller to close the rank: so no two REFs are more than (n + 1) x tREFI apart
//!   (JEDEC's 9 x tREFI at n = 8). Owed REFs then issue back to back when the rank is idle, as
//!   a controller deferring refresh to idle periods does (Elastic Refresh's idea, without its
//!   idle-time predictor).
//! - `pull_in` n (JEDEC allows up to 8): after each REF, while its rank has nothing queued, the
//!   next REF issues early, tRFC after the last, until the rank is n REFs ahead of its schedule
//!   (less half a tREFI, the margin postponement keeps) or a request arrives; the REFs it owes
//!   later then fall due later, so a busy spell after an idle one meets fewer. No two REFs are
//!   more than (n + 1) x tREFI apart either way. Postponement and pull-in are one or the other
//!   here: JEDEC bounds their net count, which this manager does not track.

use super::{RefreshContext, RefreshDevice, RefreshInfo, RefreshManager};
use crate::controller::ControllerConfig;
use crate::dram::device::ns_to_cycles;
use crate::dram::refresh_timing::{trfc_row, GRANULARITIES};
use crate::dram::Standard;
use crate::error::{Error, Result};
use crate::params::{ParamSchema, Params};
use crate::Cycle;
use serde::{Deserialize, Serialize};

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "all-bank",
    summary: "one all-bank REF per rank every tREFI, ranks staggered (FGR 1x/2x/4x, postponement)",
    params: ParamSchema::of::<AllBankParams>(&[]),
    timing,
    build: |cfg, ctx| Ok(Box::new(AllBank::with(ctx, &cfg.params::<AllBankParams>(INFO.name, &[])?))),
};

/// JEDEC's limit on postponed REFs (DDR3 and DDR4).
pub const MAX_POSTPONED: u32 = 8;

/// `[controller.all-bank]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AllBankParams {
    /// DDR4 fine-granularity refresh mode: 1 (normal), 2 or 4.
    pub granularity: u32,
    /// REFs a busy rank may owe before refresh takes it (0: each REF issues when due).
    pub postpone: u32,
    /// Ranks refreshed at tREFI / ranks apart (true) or all at once.
    pub stagger: bool,
    /// REFs an idle rank may take ahead of its schedule (0: none early).
    pub pull_in: u32,
}

impl Default for AllBankParams {
    fn default() -> Self {
        AllBankParams { granularity: 1, postpone: 0, stagger: true, pull_in: 0 }
    }
}

impl Params for AllBankParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !GRANULARITIES.contains(&self.granularity) {
            return Err(("granularity", format!("must be 1, 2 or 4 (DDR4's 1x, 2x and 4x modes), got {}", self.granularity)));
        }
        if self.postpone > MAX_POSTPONED {
            return Err(("postpone", format!("must be at most {MAX_POSTPONED} (JEDEC's limit on postponed REFs), got {}", self.postpone)));
        }
        if self.pull_in > MAX_POSTPONED {
            return Err(("pull_in", format!("must be at most {MAX_POSTPONED} (JEDEC's limit on REFs pulled in), got {}", self.pull_in)));
        }
        if self.pull_in > 0 && self.postpone > 0 {
            return Err((
                "pull_in",
                format!(
                    "and postpone ({}) are one or the other: JEDEC bounds their net count, which all-bank does not track",
                    self.postpone
                ),
            ));
        }
        Ok(())
    }
}

/// FGR shortens tREFI and tRFC; 1x keeps the device's.
fn timing(cfg: &ControllerConfig, d: &RefreshDevice) -> Result<(u64, u64)> {
    let p: AllBankParams = cfg.params(INFO.name, &[])?;
    if p.granularity == 1 {
        return Ok((d.t_refi, d.t_rfc));
    }
    let key = "controller.all-bank.granularity";
    if d.standard != Standard::Ddr4 {
        return Err(Error::config(
            key,
            format!(
                "{} is DDR4's fine-granularity refresh; this device is {}, which refreshes in 1x mode only",
                p.granularity,
                d.standard.name()
            ),
        ));
    }
    let row = trfc_row(d.standard, d.density_gbit, key)?;
    Ok((d.t_refi / p.granularity as u64, ns_to_cycles(row.trfc_ns(p.granularity), d.t_ck_ns)))
}

pub struct AllBank {
    t_refi: u64,
    t_rfc: u64,
    due: Vec<Cycle>,
    postpone: u32,
    pull_in: u32,
    /// Per rank: from when it may take its next REF early if idle (`NEVER`: not now).
    pull_at: Vec<Cycle>,
}

impl AllBank {
    /// Staggered, every REF on time.
    pub fn new(ranks: u32, t_refi: u64) -> Self {
        AllBank::with(
            &RefreshContext { ranks, banks_per_rank: 1, banks_per_group: 1, t_refi, t_rfc: 0, t_ck_ns: 1.0 },
            &AllBankParams::default(),
        )
    }

    pub fn with(ctx: &RefreshContext, p: &AllBankParams) -> Self {
        let (r, t_refi) = (ctx.ranks as u64, ctx.t_refi);
        let due = (0..r).map(|i| if p.stagger { t_refi * (i + 1) / r } else { t_refi }).collect();
        let pull_at = vec![crate::NEVER; r as usize];
        AllBank { t_refi, t_rfc: ctx.t_rfc, due, postpone: p.postpone, pull_in: p.pull_in, pull_at }
    }
}

impl RefreshManager for AllBank {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn due(&self, rank: u32) -> Cycle {
        self.due[rank as usize]
    }
    fn next_due(&self) -> Cycle {
        let due = self.due.iter().copied().min().unwrap_or(crate::NEVER);
        due.min(self.pull_at.iter().copied().min().unwrap_or(crate::NEVER))
    }
    fn refreshed(&mut self, rank: u32, now: Cycle) {
        let r = rank as usize;
        self.due[r] += self.t_refi;
        if self.pull_in > 0 {
            // One more early REF keeps the rank within n ahead, with half a tREFI to spare.
            let limit = now + (self.pull_in as u64 + 1) * self.t_refi;
            self.pull_at[r] = if self.due[r] + self.t_refi + self.t_refi / 2 <= limit { now + self.t_rfc } else { crate::NEVER };
        }
    }
    fn period(&self) -> Option<u64> {
        // Also with postponement: an idle controller owes no REF, so each comes when due. With
        // pull-in, a skipped idle stretch's REFs count as on time and the last one, ticked,
        // pulls the next ones in, as the whole stretch would have.
        Some(self.t_refi)
    }
    fn pulls_in(&self) -> bool {
        self.pull_in > 0
    }
    fn pull_in_at(&self, rank: u32) -> Cycle {
        self.pull_at[rank as usize]
    }
    fn pull_in_declined(&mut self, rank: u32) {
        self.pull_at[rank as usize] = crate::NEVER;
    }
    fn refreshed_many(&mut self, rank: u32, n: u64) {
        self.due[rank as usize] += n * self.t_refi;
    }
    fn postpones(&self) -> bool {
        self.postpone > 0
    }
    fn may_postpone(&self, rank: u32, now: Cycle) -> bool {
        super::may_still_wait(now, self.due[rank as usize], self.postpone, self.t_refi)
    }
}
