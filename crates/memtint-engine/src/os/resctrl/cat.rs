//! Intel Cache Allocation Technology: each class of service (here, each process) fills only
//! the LLC ways of its capacity bitmask, a contiguous run of ways; lookups hit in any way. The
//! classes get consecutive runs from way 0 and do not overlap, the isolation CAT is used for.
//! `ways` gives each process's count (in process order); without it the ways are split
//! evenly, the first processes taking one more when they do not divide.

use super::{ResctrlContext, ResctrlInfo, ResctrlPlan};
use crate::error::{Error, Result};
use crate::os::config::OsConfig;
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// Registered in `resctrl::RESCTRL`.
pub const INFO: ResctrlInfo = ResctrlInfo {
    name: "cat",
    summary: "LLC way partitioning (Intel CAT): each process fills only its own run of ways",
    params: ParamSchema::of::<CatParams>(&[]),
    plan,
};

/// `[os.cat]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CatParams {
    /// LLC ways per process, in process order (empty: an even split).
    pub ways: Vec<u32>,
}

impl Params for CatParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if let Some(w) = self.ways.iter().find(|&&w| w == 0) {
            return Err(("ways", format!("each process needs at least one way (a capacity bitmask is never empty), got {w}")));
        }
        Ok(())
    }
}

fn plan(cfg: &OsConfig, ctx: &ResctrlContext, out: &mut ResctrlPlan) -> Result<()> {
    let p: CatParams = cfg.params.get("os", INFO.name, &[])?;
    let (n, total) = (ctx.processes, ctx.llc_ways);
    if total == 0 {
        return Err(Error::config("os.resctrl", "\"cat\" partitions the last-level cache; this machine has none"));
    }
    if total > 64 {
        return Err(Error::config(
            "os.resctrl",
            format!("\"cat\" masks at most 64 ways (as RDT's 32-bit masks do fewer), the LLC has {total}"),
        ));
    }
    let ways: Vec<u32> = if p.ways.is_empty() {
        if n > total {
            return Err(Error::config(
                "os.resctrl",
                format!("\"cat\" gives each of {n} processes at least one of the LLC's {total} ways; there are too few"),
            ));
        }
        (0..n).map(|i| total / n + u32::from(i < total % n)).collect()
    } else {
        if p.ways.len() != n as usize {
            return Err(Error::config("os.cat.ways", format!("gives {} processes' ways; the run has {n} processes", p.ways.len())));
        }
        let sum: u32 = p.ways.iter().sum();
        if sum > total {
            return Err(Error::config("os.cat.ways", format!("asks for {sum} ways in all; the LLC has {total}")));
        }
        p.ways.clone()
    };
    let mut first = 0;
    let masks = ways
        .iter()
        .map(|&w| {
            let run = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            let mask = run << first;
            first += w;
            mask
        })
        .collect();
    out.llc_way_masks = Some(masks);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masks(ways: &[u32], processes: u32, llc_ways: u32) -> Result<Vec<u64>> {
        let mut cfg = OsConfig::default();
        cfg.params.set("cat", "ways", serde_json::json!(ways));
        let mut out = ResctrlPlan::default();
        plan(&cfg, &ResctrlContext { processes, llc_ways }, &mut out)?;
        Ok(out.llc_way_masks.unwrap())
    }

    #[test]
    fn classes_get_consecutive_runs_of_ways() {
        assert_eq!(masks(&[], 3, 16).unwrap(), vec![0x3f, 0x7c0, 0xf800], "16 ways over 3: 6, 5, 5");
        assert_eq!(masks(&[12, 4], 2, 16).unwrap(), vec![0x0fff, 0xf000]);
        assert_eq!(masks(&[2, 2], 2, 16).unwrap(), vec![0b11, 0b1100], "ways left over stay unused");
    }

    #[test]
    fn impossible_splits_are_refused_by_key() {
        let e = masks(&[8, 9], 2, 16).unwrap_err().to_string();
        assert!(e.contains("os.cat.ways") && e.contains("17 ways") && e.contains("16"), "{e}");
        let e = masks(&[8], 2, 16).unwrap_err().to_string();
        assert!(e.contains("os.cat.ways") && e.contains("2 processes"), "{e}");
        let e = masks(&[0, 4], 2, 16).unwrap_err().to_string();
        assert!(e.contains("os.cat.ways") && e.contains("at least one way"), "{e}");
        let e = masks(&[], 5, 4).unwrap_err().to_string();
        assert!(e.contains("os.resctrl") && e.contains("5 processes"), "{e}");
        let e = masks(&[], 2, 0).unwrap_err().to_string();
        assert!(e.contains("has none"), "{e}");
    }
}
