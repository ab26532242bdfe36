//! Timeout: a row stays open while it is used, and is closed after `timeout` idle cycles with
//! nothing queued for its bank.

use super::{RowPolicy, RowPolicyInfo};
use crate::params::{ParamSchema, Params, Renamed, PERIOD_CYCLES};
use serde::{Deserialize, Serialize};

/// `[controller.timeout]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutParams {
    /// Close a row idle for this many cycles.
    pub cycles: u64,
}

impl Default for TimeoutParams {
    fn default() -> Self {
        TimeoutParams { cycles: 100 }
    }
}

impl Params for TimeoutParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        PERIOD_CYCLES.from(0).check_params(&[("cycles", self.cycles)])
    }
}

/// The flat key this parameter had.
const RENAMED: Renamed = &[("row_timeout", "cycles")];

/// Registered in `row_policy::ROW_POLICIES`.
pub const INFO: RowPolicyInfo = RowPolicyInfo {
    name: "timeout",
    summary: "close a row idle for `cycles` cycles",
    params: ParamSchema::of::<TimeoutParams>(RENAMED),
    build: |cfg| Ok(Box::new(Timeout::new(cfg.params::<TimeoutParams>(INFO.name, RENAMED)?.cycles))),
};

pub struct Timeout {
    timeout: u64,
}

impl Timeout {
    pub fn new(timeout: u64) -> Self {
        Timeout { timeout }
    }
}

impl RowPolicy for Timeout {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn auto_precharge(&self, _more_hits_queued: bool) -> bool {
        false
    }
    fn idle_close_after(&self) -> Option<u64> {
        Some(self.timeout)
    }
}
