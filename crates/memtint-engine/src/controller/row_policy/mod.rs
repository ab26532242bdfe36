//! Row policies decide when an open row is closed. One file each, declaring its `INFO`;
//! registered by one line in `ROW_POLICIES`.

mod closed;
mod open;
mod timeout;

pub use closed::Closed;
pub use open::Open;
pub use timeout::Timeout;

use crate::controller::ControllerConfig;
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};

pub trait RowPolicy: Send {
    fn name(&self) -> &'static str;
    /// Should a row-hit column command auto-precharge (RDA/WRA)? `more_hits_queued` tells
    /// whether other queued requests want the same row.
    fn auto_precharge(&self, more_hits_queued: bool) -> bool;
    /// Close a row that has had no queued request for this many cycles (`None`: never).
    fn idle_close_after(&self) -> Option<u64>;
}

/// What a row policy is and how to make one, declared in its own file (`pub const INFO`).
pub struct RowPolicyInfo {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its parameters (`[controller.<name>]`), declared in its file.
    pub params: ParamSchema,
    pub build: fn(&ControllerConfig) -> Result<Box<dyn RowPolicy>>,
}

impl Component for RowPolicyInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The row policies: the built-in ones, one line each (`ROW_POLICIES.register` adds more).
pub static ROW_POLICIES: Registry<RowPolicyInfo> = Registry::new("row policy", &[&open::INFO, &closed::INFO, &timeout::INFO]);

pub fn names() -> Vec<&'static str> {
    ROW_POLICIES.names()
}

pub fn build(name: &str, cfg: &ControllerConfig) -> Result<Box<dyn RowPolicy>> {
    (ROW_POLICIES.get(name)?.build)(cfg)
}
