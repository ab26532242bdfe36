//! Closed page: the last queued hit to a row auto-precharges (RDA/WRA); a row left open with
//! nothing queued for its bank is closed at once.

use super::RowPolicy;

pub struct Closed;

impl RowPolicy for Closed {
    fn name(&self) -> &'static str {
        "closed"
    }
    fn auto_precharge(&self, more_hits_queued: bool) -> bool {
        !more_hits_queued
    }
    fn idle_close_after(&self) -> Option<u64> {
        Some(0)
    }
}
