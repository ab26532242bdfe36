//! No refresh (for experiments that isolate other effects, and for analytic tests).

use super::{device_timing, RefreshInfo, RefreshManager, RefreshObligation};
use crate::params::ParamSchema;
use crate::{Cycle, NEVER};

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "none",
    summary: "no refresh (for analysis; real DRAM loses data)",
    params: ParamSchema::NONE,
    timing: device_timing,
    build: |_, _| Ok(Box::new(NoRefresh)),
};

pub struct NoRefresh;

impl RefreshManager for NoRefresh {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn due(&self, _rank: u32) -> Cycle {
        NEVER
    }
    fn next_due(&self) -> Cycle {
        NEVER
    }
    fn refreshed(&mut self, _rank: u32, _now: Cycle) {}
    fn obligation(&self) -> RefreshObligation {
        RefreshObligation::None
    }
}
