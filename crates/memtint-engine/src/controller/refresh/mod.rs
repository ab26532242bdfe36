//! Refresh managers decide when each rank must be refreshed. One file each; registered in `build`.

mod all_bank;
mod no_refresh;

pub use all_bank::AllBank;
pub use no_refresh::NoRefresh;

use crate::error::{Error, Result};
use crate::Cycle;

pub trait RefreshManager: Send {
    fn name(&self) -> &'static str;
    /// The cycle at which `rank`'s next refresh falls due (`NEVER` if none).
    fn due(&self, rank: u32) -> Cycle;
    /// The earliest due cycle over all ranks.
    fn next_due(&self) -> Cycle;
    /// A REF was issued to `rank` at `now`.
    fn refreshed(&mut self, rank: u32, now: Cycle);
}

pub const NAMES: &[&str] = &["all-bank", "none"];

pub fn build(name: &str, ranks: u32, t_refi: u64) -> Result<Box<dyn RefreshManager>> {
    Ok(match name {
        "all-bank" => Box::new(AllBank::new(ranks, t_refi)),
        "none" => Box::new(NoRefresh),
        _ => return Err(Error::unknown("refresh manager", name, NAMES.iter().copied())),
    })
}
