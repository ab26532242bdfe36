//! Burst refresh: each rank gets all its REFs of a retention window back to back, once per
//! window, instead of one every tREFI (Bhat & Mueller's software burst refresh; the refresh
//! half of the Pan thesis's Colored Refresh and Colored Refresh Server). Ranks form groups; a
//! group's ranks are refreshed in parallel (their REFs interleave on the command bus, each
//! blocking only its rank), and the groups' bursts are spread evenly over the window:
//!
//! - `groups = "all"`: one group, every rank at the window's start ([BM10]);
//! - `groups = "each"`: a group per rank, rank i at i x window / ranks (CR's rotation, one
//!   rank's burst per frame);
//! - `groups = [[0, 1, 2, 3], [4, 5, 6, 7]]`: these groups in order, group g at g x window / G
//!   (CRS's two colours, half a window apart).
//!
//! `refs_per_window` is 8192 by default (JEDEC: every rank walks its 8192 bins per tREFW); the
//! thesis's timings imply 8192 / ranks (`pan-camc-tintmalloc-refresh.md` §8.1), which
//! refreshes each row less often than retention requires and is allowed only with
//! `jedec = false`. A burst exceeds JEDEC's 8 postponed REFs either way; retention is still
//! met because each rank is refreshed once per window at a fixed phase, which is what the
//! checker verifies (`RefreshObligation::Retention`).

use super::{device_timing, RefreshContext, RefreshInfo, RefreshManager, RefreshObligation};
use crate::error::{Error, Result};
use crate::params::{ParamSchema, Params, RETENTION_MS};
use crate::Cycle;
use serde::{Deserialize, Serialize};

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "burst",
    summary: "all of a rank's REFs back to back once per retention window, rank groups spread over it",
    params: ParamSchema::of::<BurstParams>(&[]),
    timing: device_timing,
    build: |cfg, ctx| Ok(Box::new(Burst::new(ctx, &cfg.params::<BurstParams>(INFO.name, &[])?)?)),
};

/// JEDEC's bins per rank: 8192 REFs per refresh window (DDR3, DDR4).
pub const JEDEC_REFS_PER_WINDOW: u64 = 8192;

/// Which ranks are refreshed together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RankGroups {
    /// "all" or "each".
    Named(String),
    /// Explicit groups of rank indices.
    Ranks(Vec<Vec<u32>>),
}

/// `[controller.burst]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BurstParams {
    /// The retention window (tREFW), ms: 64 below 85 °C, 32 above.
    pub retention_ms: f64,
    /// REFs each rank gets per window.
    pub refs_per_window: u64,
    pub groups: RankGroups,
    /// Refuse fewer than JEDEC's 8192 REFs per window (false: the thesis's model).
    pub jedec: bool,
}

impl Default for BurstParams {
    fn default() -> Self {
        BurstParams { retention_ms: 64.0, refs_per_window: JEDEC_REFS_PER_WINDOW, groups: RankGroups::Named("all".into()), jedec: true }
    }
}

impl Params for BurstParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        RETENTION_MS.check_params(&[("retention_ms", self.retention_ms)])?;
        if self.refs_per_window == 0 || self.refs_per_window > 1 << 20 {
            return Err(("refs_per_window", format!("must be between 1 and {}, got {}", 1 << 20, self.refs_per_window)));
        }
        if self.jedec && self.refs_per_window < JEDEC_REFS_PER_WINDOW {
            return Err((
                "refs_per_window",
                format!(
                    "{} REFs per window leave rows unrefreshed for longer than retention allows (JEDEC: {JEDEC_REFS_PER_WINDOW} per rank); \
                     set jedec = false to run the thesis's model anyway",
                    self.refs_per_window
                ),
            ));
        }
        if let RankGroups::Named(n) = &self.groups {
            if n != "all" && n != "each" {
                return Err(("groups", format!("must be \"all\", \"each\" or a list of rank lists, got \"{n}\"")));
            }
        }
        Ok(())
    }
}

pub struct Burst {
    window: u64,
    refs: u64,
    /// Per rank: the cycle its next REF may issue, REFs left in its current burst, and the
    /// start of its next burst.
    due: Vec<Cycle>,
    left: Vec<u64>,
    next_start: Vec<Cycle>,
}

impl Burst {
    pub fn new(ctx: &RefreshContext, p: &BurstParams) -> Result<Self> {
        let key = |k: &str| format!("controller.burst.{k}");
        let window = ctx.cycles_of_ms(p.retention_ms);
        let ranks = ctx.ranks as usize;
        let groups: Vec<Vec<u32>> = match &p.groups {
            RankGroups::Named(n) if n == "each" => (0..ctx.ranks).map(|r| vec![r]).collect(),
            RankGroups::Named(_) => vec![(0..ctx.ranks).collect()],
            RankGroups::Ranks(g) => g.clone(),
        };
        let mut group_of = vec![None; ranks];
        for (gi, g) in groups.iter().enumerate() {
            if g.is_empty() {
                return Err(Error::config(key("groups"), format!("group {gi} is empty")));
            }
            for &r in g {
                let slot = group_of.get_mut(r as usize).ok_or_else(|| {
                    Error::config(key("groups"), format!("group {gi} names rank {r}; the channel has ranks 0 to {}", ranks - 1))
                })?;
                if slot.is_some() {
                    return Err(Error::config(key("groups"), format!("rank {r} is in two groups")));
                }
                *slot = Some(gi as u64);
            }
        }
        if let Some(r) = group_of.iter().position(|g| g.is_none()) {
            return Err(Error::config(key("groups"), format!("rank {r} is in no group, so it would never be refreshed")));
        }
        let burst = p.refs_per_window * ctx.t_rfc;
        if burst >= window {
            return Err(Error::config(
                key("refs_per_window"),
                format!(
                    "{} REFs of tRFC {} cycles take {burst} cycles, not less than the {} ms window ({window} cycles)",
                    p.refs_per_window, ctx.t_rfc, p.retention_ms
                ),
            ));
        }
        let g = groups.len() as u64;
        let start: Vec<Cycle> = group_of.iter().map(|gi| gi.expect("checked") * window / g).collect();
        Ok(Burst { window, refs: p.refs_per_window, due: start.clone(), left: vec![p.refs_per_window; ranks], next_start: start })
    }
}

impl RefreshManager for Burst {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn due(&self, rank: u32) -> Cycle {
        self.due[rank as usize]
    }
    fn next_due(&self) -> Cycle {
        self.due.iter().copied().min().unwrap_or(crate::NEVER)
    }
    fn refreshed(&mut self, rank: u32, now: Cycle) {
        let r = rank as usize;
        self.left[r] -= 1;
        if self.left[r] == 0 {
            self.left[r] = self.refs;
            self.next_start[r] += self.window;
            self.due[r] = self.next_start[r];
        } else {
            // The next REF as soon as the rank allows (tRFC); the rank stays blocked till then.
            self.due[r] = now + 1;
        }
    }
    fn obligation(&self) -> RefreshObligation {
        RefreshObligation::Retention { window: self.window, refs: self.refs }
    }
    /// Whole bursts that start and end a window or more before `until`: their REFs are far
    /// enough from any later command that their timing cannot matter.
    fn skip_idle_rank(&mut self, rank: u32, ready: Cycle, until: Cycle) -> u64 {
        let r = rank as usize;
        let due = self.due[r];
        if self.left[r] != self.refs || ready > due || due + self.window > until {
            return 0;
        }
        let k = (until - due) / self.window;
        self.due[r] += k * self.window;
        self.next_start[r] += k * self.window;
        k * self.refs
    }
}
