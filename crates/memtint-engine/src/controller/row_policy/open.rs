//! Open page: a row stays open until a conflicting request (or refresh) closes it.

use super::{RowPolicy, RowPolicyInfo};
use crate::params::ParamSchema;

/// Registered in `row_policy::ROW_POLICIES`.
pub const INFO: RowPolicyInfo = RowPolicyInfo {
    name: "open",
    summary: "keep a row open until a request needs another row",
    params: ParamSchema::NONE,
    build: |_| Ok(Box::new(Open)),
};

pub struct Open;

impl RowPolicy for Open {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn auto_precharge(&self, _more_hits_queued: bool) -> bool {
        false
    }
    fn idle_close_after(&self) -> Option<u64> {
        None
    }
}
