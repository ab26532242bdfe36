//! Intel Memory Bandwidth Allocation: each class of service (here, each process) is throttled
//! to a percentage of the memory bandwidth, in MBA's 10 % steps. The model caps each of the
//! process's threads at that share of the machine's peak DRAM bandwidth: its requests to
//! memory (reads and write-backs) leave the core no closer together than one line per
//! `line / (percent × peak)` (a per-thread token rate), as MBA's delay sits between a core and
//! the interconnect; other threads' requests are not held behind them. Real MBA's delay values
//! are calibrated per part and not linear in bandwidth; the linear cap is Linux's `mba_MBps`
//! software controller's target, which the hardware approximates. 100 % is no throttle.

use super::{ResctrlContext, ResctrlInfo, ResctrlPlan};
use crate::error::{Error, Result};
use crate::os::config::OsConfig;
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// Registered in `resctrl::RESCTRL`.
pub const INFO: ResctrlInfo = ResctrlInfo {
    name: "mba",
    summary: "memory bandwidth throttling (Intel MBA): each process's threads capped at a share of peak, 10 % steps",
    params: ParamSchema::of::<MbaParams>(&[]),
    plan,
};

/// `[os.mba]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MbaParams {
    /// Percent of peak bandwidth per process, in process order: 10, 20, ... 100.
    pub percent: Vec<u32>,
}

impl Params for MbaParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if let Some(p) = self.percent.iter().find(|&&p| p == 0 || p > 100 || p % 10 != 0) {
            return Err(("percent", format!("must be 10, 20, ... or 100 (MBA's steps), got {p}")));
        }
        Ok(())
    }
}

fn plan(cfg: &OsConfig, ctx: &ResctrlContext, out: &mut ResctrlPlan) -> Result<()> {
    let p: MbaParams = cfg.params.get("os", INFO.name, &[])?;
    if p.percent.len() != ctx.processes as usize {
        return Err(Error::config(
            "os.mba.percent",
            format!("gives {} processes' shares; the run has {} processes (100: unthrottled)", p.percent.len(), ctx.processes),
        ));
    }
    out.bandwidth_percent = Some(p.percent);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(percent: &[u32], processes: u32) -> Result<Vec<u32>> {
        let mut cfg = OsConfig::default();
        cfg.params.set("mba", "percent", serde_json::json!(percent));
        let mut out = ResctrlPlan::default();
        plan(&cfg, &ResctrlContext { processes, llc_ways: 16 }, &mut out)?;
        Ok(out.bandwidth_percent.unwrap())
    }

    #[test]
    fn shares_come_in_mba_steps_one_per_process() {
        assert_eq!(shares(&[10, 100], 2).unwrap(), vec![10, 100]);
        let e = shares(&[15, 100], 2).unwrap_err().to_string();
        assert!(e.contains("os.mba.percent") && e.contains("got 15"), "{e}");
        let e = shares(&[50], 2).unwrap_err().to_string();
        assert!(e.contains("os.mba.percent") && e.contains("2 processes"), "{e}");
        let e = shares(&[0, 50], 2).unwrap_err().to_string();
        assert!(e.contains("got 0"), "{e}");
    }
}
