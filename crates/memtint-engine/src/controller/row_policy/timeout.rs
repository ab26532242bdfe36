//! Timeout: a row stays open while it is used, and is closed after `timeout` idle cycles with
//! nothing queued for its bank.

use super::{RowPolicy, RowPolicyInfo};

/// Registered in `row_policy::ROW_POLICIES`.
pub const INFO: RowPolicyInfo = RowPolicyInfo {
    name: "timeout",
    summary: "close a row idle for row_timeout cycles",
    build: |cfg| Box::new(Timeout::new(cfg.row_timeout)),
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
