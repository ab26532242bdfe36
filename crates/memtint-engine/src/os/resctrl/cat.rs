//! Intel Cache Allocation Technology: each class of service (here, each process) fills only
//! the LLC ways of its capacity bitmask, a contiguous run of ways; lookups hit in any way. The
//! classes get consecutive runs from way 0 and do not overlap, the isolation CAT is used for.
//! `ways` gives each process's count (in process order); without it the ways are split
//! evenly, the first processes taking one more when they do not divide.
//!
//! `allocation = "ucp"` chooses the counts as Utility-based Cache Partitioning does (Qureshi
//! and Patt, MICRO 2006): utility monitors on sampled sets count each process's hits by LRU
//! stack position, and every `epoch_ns` the lookahead algorithm gives the ways, one run per
//! process, to whichever process gains most hits per way, each keeping at least one; the
//! counters are then halved. The paper's epoch is 5 M cycles (about 1.6 ms at 3.2 GHz); the
//! default here is 0.1 ms, so runs of a few hundred thousand instructions repartition several
//! times (a parameter).

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
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CatParams {
    /// LLC ways per process, in process order (empty: an even split; with "ucp", the start).
    pub ways: Vec<u32>,
    /// "static" (the ways above, for the whole run) or "ucp" (chosen from utility monitors).
    pub allocation: String,
    /// UCP: time between repartitions, ns of simulated time.
    pub epoch_ns: f64,
}

impl Default for CatParams {
    fn default() -> Self {
        CatParams { ways: Vec::new(), allocation: "static".into(), epoch_ns: 100_000.0 }
    }
}

impl Params for CatParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if let Some(w) = self.ways.iter().find(|&&w| w == 0) {
            return Err(("ways", format!("each process needs at least one way (a capacity bitmask is never empty), got {w}")));
        }
        if !["static", "ucp"].contains(&self.allocation.as_str()) {
            return Err(("allocation", format!("must be \"static\" or \"ucp\", got \"{}\"", self.allocation)));
        }
        if !(self.epoch_ns.is_finite() && self.epoch_ns >= 1000.0) {
            return Err(("epoch_ns", format!("must be at least 1000 ns, got {}", self.epoch_ns)));
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
    out.llc_way_masks = Some(runs(&ways));
    if p.allocation == "ucp" {
        out.llc_ucp_epoch_ns = Some(p.epoch_ns);
    }
    Ok(())
}

/// The run's UCP epoch, if it partitions the LLC by UCP.
pub fn ucp_epoch_ns(cfg: &OsConfig) -> Option<f64> {
    let p: CatParams = cfg.params.get("os", INFO.name, &[]).ok()?;
    (cfg.resctrl.iter().any(|n| n == INFO.name) && p.allocation == "ucp").then_some(p.epoch_ns)
}

/// Consecutive runs of ways from way 0, `ways[i]` for process i.
pub fn runs(ways: &[u32]) -> Vec<u64> {
    let mut first = 0;
    ways.iter()
        .map(|&w| {
            let run = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            let mask = run << first;
            first += w;
            mask
        })
        .collect()
}

/// UCP's lookahead partitioning: `total` ways over the processes whose hits by LRU stack
/// position are `curves`, each getting at least one; repeatedly the process with the most
/// extra hits per extra way (over any number of ways still free) takes that many.
pub fn lookahead(curves: &[Vec<u64>], total: u32) -> Vec<u32> {
    let n = curves.len();
    let mut alloc = vec![1u32; n];
    let mut balance = total.saturating_sub(n as u32);
    let utility = |c: &Vec<u64>, w: u32| c.iter().take(w as usize).sum::<u64>() as f64;
    while balance > 0 {
        let mut best: Option<(f64, usize, u32)> = None;
        for (i, c) in curves.iter().enumerate() {
            let base = utility(c, alloc[i]);
            for k in 1..=balance {
                let mu = (utility(c, alloc[i] + k) - base) / k as f64;
                if best.is_none_or(|(m, _, _)| mu > m) {
                    best = Some((mu, i, k));
                }
            }
        }
        let (mu, i, k) = best.expect("a process");
        // No one gains from more ways: spread what is left evenly, as UCP leaves it unused.
        if mu <= 0.0 {
            for j in 0..balance as usize {
                alloc[j % n] += 1;
            }
            break;
        }
        alloc[i] += k;
        balance -= k;
    }
    alloc
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

    /// The paper's example shape: a cache-friendly program with a steep curve takes the ways
    /// it gains from; a streaming one, with no hits at any depth, keeps its minimum.
    #[test]
    fn lookahead_gives_ways_where_they_buy_hits() {
        let friendly = vec![100, 90, 80, 70, 60, 50, 40, 30, 0, 0, 0, 0, 0, 0, 0, 0];
        let stream = vec![0; 16];
        // Past its 8 ways the friendly one gains nothing either: the rest is spread evenly.
        assert_eq!(lookahead(&[stream.clone(), friendly.clone()], 16), vec![5, 11]);
        let deep = vec![10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10];
        assert_eq!(lookahead(&[stream, deep.clone()], 16), vec![1, 15]);
        // A curve with a late knee: lookahead sees past the flat start.
        let knee = vec![0, 0, 0, 0, 0, 0, 0, 500, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(lookahead(&[deep, knee], 16), vec![8, 8]);
        assert_eq!(runs(&[1, 15]), vec![0x1, 0xfffe]);
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
