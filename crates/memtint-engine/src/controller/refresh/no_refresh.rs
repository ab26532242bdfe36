//! No refresh (for experiments that isolate other effects, and for analytic tests).

use super::RefreshManager;
use crate::{Cycle, NEVER};

pub struct NoRefresh;

impl RefreshManager for NoRefresh {
    fn name(&self) -> &'static str {
        "none"
    }
    fn due(&self, _rank: u32) -> Cycle {
        NEVER
    }
    fn next_due(&self) -> Cycle {
        NEVER
    }
    fn refreshed(&mut self, _rank: u32, _now: Cycle) {}
}
