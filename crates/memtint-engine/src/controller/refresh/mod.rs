//! Refresh managers decide when each rank must be refreshed. One file each, declaring its
//! `INFO`; registered by one line in `REFRESH_MANAGERS`.

mod all_bank;
mod no_refresh;

pub use all_bank::AllBank;
pub use no_refresh::NoRefresh;

use crate::controller::ControllerConfig;
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};
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

/// What a refresh manager is and how to make one, declared in its own file (`pub const INFO`).
pub struct RefreshInfo {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its parameters (`[controller.<name>]`), declared in its file.
    pub params: ParamSchema,
    /// A manager for `ranks` ranks refreshed every `tREFI` cycles.
    pub build: fn(&ControllerConfig, u32, u64) -> Result<Box<dyn RefreshManager>>,
}

impl Component for RefreshInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The refresh managers: the built-in ones, one line each (`REFRESH_MANAGERS.register` adds more).
pub static REFRESH_MANAGERS: Registry<RefreshInfo> = Registry::new("refresh manager", &[&all_bank::INFO, &no_refresh::INFO]);

pub fn names() -> Vec<&'static str> {
    REFRESH_MANAGERS.names()
}

pub fn build(name: &str, cfg: &ControllerConfig, ranks: u32, t_refi: u64) -> Result<Box<dyn RefreshManager>> {
    (REFRESH_MANAGERS.get(name)?.build)(cfg, ranks, t_refi)
}
