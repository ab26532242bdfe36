//! Closed page: the last queued hit to a row auto-precharges (RDA/WRA); a row left open with
//! nothing queued for its bank is closed at once.

use super::{RowPolicy, RowPolicyInfo};
use crate::params::ParamSchema;

/// Registered in `row_policy::ROW_POLICIES`.
pub const INFO: RowPolicyInfo = RowPolicyInfo {
    name: "closed",
    summary: "the last queued hit to a row auto-precharges; an idle open row closes at once",
    params: ParamSchema::NONE,
    build: |_| Ok(Box::new(Closed)),
};

pub struct Closed;

impl RowPolicy for Closed {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn auto_precharge(&self, more_hits_queued: bool) -> bool {
        !more_hits_queued
    }
    fn idle_close_after(&self) -> Option<u64> {
        Some(0)
    }
}
