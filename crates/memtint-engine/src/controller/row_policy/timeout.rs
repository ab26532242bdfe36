//! Timeout: a row stays open while it is used, and is closed after `timeout` idle cycles with
//! nothing queued for its bank.

use super::RowPolicy;

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
        "timeout"
    }
    fn auto_precharge(&self, _more_hits_queued: bool) -> bool {
        false
    }
    fn idle_close_after(&self) -> Option<u64> {
        Some(self.timeout)
    }
}
