//! Open page: a row stays open until a conflicting request (or refresh) closes it.

use super::RowPolicy;

pub struct Open;

impl RowPolicy for Open {
    fn name(&self) -> &'static str {
        "open"
    }
    fn auto_precharge(&self, _more_hits_queued: bool) -> bool {
        false
    }
    fn idle_close_after(&self) -> Option<u64> {
        None
    }
}
