//! Hardware resource partitioning the OS programs through Linux's resctrl (Intel RDT): cache
//! allocation (CAT, LLC ways per class of service) and memory bandwidth allocation (MBA, a
//! bandwidth share per class). A class of service is a process: its threads share it, as tasks of one resctrl group
//! do. Each scheme is one file declaring a `ResctrlInfo` and one line in `RESCTRL`; a run names
//! the ones it uses in `os.resctrl`, beside any placement policy (page colouring and CAT
//! combine, as on a real machine).

pub mod cat;
mod mba;

use super::config::OsConfig;
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};

/// What a scheme is planned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResctrlContext {
    /// Classes of service: one per process.
    pub processes: u32,
    /// Ways of the shared last-level cache (0: the machine has none).
    pub llc_ways: u32,
}

/// What the schemes in use set, per process (`None`: not set).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResctrlPlan {
    /// The LLC ways each process may fill (bit w: way w), CAT's capacity bitmasks.
    pub llc_way_masks: Option<Vec<u64>>,
    /// The percent of peak memory bandwidth each process's threads may use (MBA).
    pub bandwidth_percent: Option<Vec<u32>>,
    /// CAT's ways chosen by UCP (`cat::lookahead`) every this many ns, from the masks above.
    pub llc_ucp_epoch_ns: Option<f64>,
}

/// What a scheme is and how it plans, declared in its own file (`pub const INFO`).
pub struct ResctrlInfo {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its parameters (`[os.<name>]`).
    pub params: ParamSchema,
    /// Adds the scheme's settings to `plan`.
    pub plan: fn(&OsConfig, &ResctrlContext, &mut ResctrlPlan) -> Result<()>,
}

impl Component for ResctrlInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The resctrl schemes: the built-in ones, one line each.
pub static RESCTRL: Registry<ResctrlInfo> = Registry::new("resctrl scheme", &[&cat::INFO, &mba::INFO]);

/// The settings of the schemes `cfg.resctrl` names, in order; an unknown name is an error
/// naming `os.resctrl`.
pub fn plan(cfg: &OsConfig, ctx: &ResctrlContext) -> Result<ResctrlPlan> {
    let mut out = ResctrlPlan::default();
    for name in &cfg.resctrl {
        let info = RESCTRL.get(name).map_err(|e| crate::error::Error::config("os.resctrl", e.to_string()))?;
        (info.plan)(cfg, ctx, &mut out)?;
    }
    Ok(out)
}
