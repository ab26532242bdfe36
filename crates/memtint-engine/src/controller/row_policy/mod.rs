//! Row policies decide when an open row is closed. One file each; registered in `build`.

mod closed;
mod open;
mod timeout;

pub use closed::Closed;
pub use open::Open;
pub use timeout::Timeout;

use crate::config::ControllerConfig;
use crate::error::{Error, Result};

pub trait RowPolicy: Send {
    fn name(&self) -> &'static str;
    /// Should a row-hit column command auto-precharge (RDA/WRA)? `more_hits_queued` tells
    /// whether other queued requests want the same row.
    fn auto_precharge(&self, more_hits_queued: bool) -> bool;
    /// Close a row that has had no queued request for this many cycles (`None`: never).
    fn idle_close_after(&self) -> Option<u64>;
}

pub const NAMES: &[&str] = &["open", "closed", "timeout"];

pub fn build(name: &str, cfg: &ControllerConfig) -> Result<Box<dyn RowPolicy>> {
    Ok(match name {
        "open" => Box::new(Open),
        "closed" => Box::new(Closed),
        "timeout" => Box::new(Timeout::new(cfg.row_timeout)),
        _ => return Err(Error::unknown("row policy", name, NAMES.iter().copied())),
    })
}
