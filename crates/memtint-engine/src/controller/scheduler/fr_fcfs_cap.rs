//! FR-FCFS-Cap (Mutlu & Moscibroda, MICRO 2007): FR-FCFS, but once a row has served `cap`
//! column commands since it was opened (the opening request's own included), its bank serves
//! its oldest request first, as FCFS: an older request to another row gets its PRE before any
//! further hit, so a stream of hits cannot starve it.

use super::{no_periods, AgeOrder, Candidate, Scheduler, SchedulerInfo};
use crate::controller::ControllerConfig;
use crate::error::Result;
use crate::params::{at_least_one, ParamSchema, Params, Renamed};
use serde::{Deserialize, Serialize};

/// `[controller.fr-fcfs-cap]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrFcfsCapParams {
    /// Column commands a row serves since its ACT (the opening request's included) before its
    /// bank serves its oldest request first: 1 lets no younger hit pass an older request.
    pub cap: u32,
}

impl Default for FrFcfsCapParams {
    fn default() -> Self {
        FrFcfsCapParams { cap: 16 }
    }
}

impl Params for FrFcfsCapParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        at_least_one(&[("cap", self.cap as u64)])
    }
}

/// The flat key this parameter had.
const RENAMED: Renamed = &[("frfcfs_cap", "cap")];

fn params(cfg: &ControllerConfig) -> Result<FrFcfsCapParams> {
    cfg.params(INFO.name, RENAMED)
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "fr-fcfs-cap",
    summary: "FR-FCFS until a row has served `cap` column commands since its ACT, then oldest first",
    fast_path: true,
    params: ParamSchema::of::<FrFcfsCapParams>(RENAMED),
    build: |cfg, _| Ok(Box::new(FrFcfsCap::new(params(cfg)?.cap))),
    periods: no_periods,
};

pub struct FrFcfsCap {
    cap: u32,
}

impl FrFcfsCap {
    pub fn new(cap: u32) -> Self {
        FrFcfsCap { cap }
    }

    fn order(&self) -> AgeOrder {
        AgeOrder::FrFcfsCap { cap: self.cap }
    }
}

impl Scheduler for FrFcfsCap {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn key(&self, c: &Candidate) -> u64 {
        self.order().key(c)
    }
    fn may_close_row_with_hits(&self, hits_since_act: u32) -> bool {
        self.order().may_close_row_with_hits(hits_since_act)
    }
    fn hit_counts_as_hit(&self, hits_since_act: u32) -> bool {
        self.order().hit_counts_as_hit(hits_since_act)
    }
    fn age_order(&self) -> Option<AgeOrder> {
        Some(self.order())
    }
}
