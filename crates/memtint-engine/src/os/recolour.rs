//! When re-colouring copies pages (`[os.recolour] mode`). A dynamic policy's new partition
//! leaves pages in colours their process no longer owns; they are copied to its new colours:
//!
//! - `eager` (the default): all at the epoch, every page's copy stalling its process at once
//!   (Lin et al.'s synchronous re-colouring, HPCA 2008, the cost BPM §2.8 cites);
//! - `daemon`: by a copy daemon that moves at most `pages_per_ms` of each process's pages per ms
//!   of simulated time, in batches every `period_ns` (a kernel thread as BPM's daemon, or Linux's
//!   kcompactd and NUMA balancing, which migrate a rate-limited batch per wake-up); each copy
//!   costs its process what an eager one does (`os.numa_scan.migrate_ns`, the lines through the
//!   memory system), each batch one shootdown;
//! - `lazy`: a displaced page is marked (as NUMA balancing's `PROT_NONE`), and the first load
//!   that touches it takes a fault (`os.numa_scan.fault_ns`) and copies it (`migrate_ns`) on the
//!   touching thread, the process's other threads a shootdown; pages never touched again are
//!   never copied (Lin et al.'s lazy re-colouring, which HVR uses, §4.3).
//!
//! Until then a page stays, and is used, in its old colour. A daemon's queue holds each
//! process's pages in page-table order from the epoch that displaced them; a new epoch's
//! partition replaces it, and a queued page that was swapped out, freed or is back in its
//! process's colours by then is skipped. Giving `pages_per_ms` alone means `daemon`.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[os.recolour]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecolourConfig {
    /// "eager", "daemon" or "lazy" (default: "daemon" when `pages_per_ms` is given, else "eager").
    pub mode: Option<String>,
    /// Pages of each process the copy daemon moves per ms of simulated time (`daemon` only).
    pub pages_per_ms: f64,
    /// Time between the daemon's batches, ns (default 100 µs: ten batches per ms).
    pub period_ns: f64,
}

impl Default for RecolourConfig {
    fn default() -> Self {
        RecolourConfig { mode: None, pages_per_ms: 0.0, period_ns: 100_000.0 }
    }
}

/// `RecolourConfig::mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecolourMode {
    Eager,
    Daemon,
    Lazy,
}

impl RecolourConfig {
    /// The mode, checked against the rate.
    pub fn mode(&self) -> Result<RecolourMode> {
        let mode = match self.mode.as_deref() {
            None if self.pages_per_ms > 0.0 => RecolourMode::Daemon,
            None | Some("eager") => RecolourMode::Eager,
            Some("daemon") => RecolourMode::Daemon,
            Some("lazy") => RecolourMode::Lazy,
            Some(other) => return Err(Error::config("os.recolour.mode", format!("unknown mode '{other}'; choose eager, daemon or lazy"))),
        };
        match (mode, self.pages_per_ms > 0.0) {
            (RecolourMode::Daemon, false) => {
                Err(Error::config("os.recolour.pages_per_ms", "mode \"daemon\" copies at this rate: give one above 0"))
            }
            (RecolourMode::Eager | RecolourMode::Lazy, true) => Err(Error::config(
                "os.recolour.pages_per_ms",
                format!("only a daemon has a rate; mode is \"{}\"", self.mode.as_deref().unwrap_or("eager")),
            )),
            _ => Ok(mode),
        }
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.pages_per_ms.is_finite() && (0.0..=1e9).contains(&self.pages_per_ms)) {
            return Err(Error::config(
                "os.recolour.pages_per_ms",
                format!("must be between 0 (every page at the epoch) and 10^9, got {}", self.pages_per_ms),
            ));
        }
        if !(self.period_ns.is_finite() && (1_000.0..=1e12).contains(&self.period_ns)) {
            return Err(Error::config("os.recolour.period_ns", format!("must be between 1000 and 10^12 ns, got {}", self.period_ns)));
        }
        self.mode().map(|_| ())
    }
}

/// The pages waiting for the copy daemon.
pub struct CopyQueue {
    pages_per_ns: f64,
    /// Per process: virtual pages to copy, in order.
    waiting: Vec<VecDeque<u64>>,
    /// Per process: pages it may still copy (the rate times the time since its queue filled,
    /// less what it copied), carried between batches so a slow rate still moves whole pages.
    credit: Vec<f64>,
}

impl CopyQueue {
    pub fn new(cfg: &RecolourConfig, processes: u32) -> Self {
        CopyQueue {
            pages_per_ns: cfg.pages_per_ms / 1e6,
            waiting: vec![VecDeque::new(); processes as usize],
            credit: vec![0.0; processes as usize],
        }
    }

    /// Process `pid`'s pages to copy from now on (replacing what was waiting).
    pub fn replace(&mut self, pid: u32, pages: impl IntoIterator<Item = u64>) {
        let p = pid as usize;
        self.waiting[p].clear();
        self.waiting[p].extend(pages);
        if self.waiting[p].is_empty() {
            self.credit[p] = 0.0;
        }
    }

    /// Drops process `pid`'s queue (it exited).
    pub fn forget(&mut self, pid: u32) {
        self.replace(pid, std::iter::empty());
    }

    /// Pages waiting over all processes.
    pub fn pending(&self) -> u64 {
        self.waiting.iter().map(|w| w.len() as u64).sum()
    }

    /// After `elapsed_ns`: the pages each process may copy now, taken from its queue, in order.
    pub fn batch(&mut self, elapsed_ns: f64) -> Vec<(u32, Vec<u64>)> {
        let mut out = Vec::new();
        for (p, waiting) in self.waiting.iter_mut().enumerate() {
            if waiting.is_empty() {
                continue;
            }
            self.credit[p] += self.pages_per_ns * elapsed_ns;
            let n = (self.credit[p].floor() as usize).min(waiting.len());
            self.credit[p] -= n as f64;
            if waiting.len() == n {
                self.credit[p] = 0.0;
            }
            if n > 0 {
                out.push((p as u32, waiting.drain(..n).collect()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_moves_its_rate_and_carries_fractions() {
        let cfg = RecolourConfig { pages_per_ms: 25.0, ..Default::default() };
        let mut q = CopyQueue::new(&cfg, 2);
        q.replace(0, 0..10);
        // 2.5 pages per 100 µs: 2, then 3 (the half carried), then 2 and 3 again.
        let sizes: Vec<usize> = (0..4).map(|_| q.batch(100_000.0).iter().map(|(_, v)| v.len()).sum()).collect();
        assert_eq!(sizes, vec![2, 3, 2, 3]);
        assert_eq!(q.pending(), 0);
        // Process 1 had nothing: no credit saved up for later.
        q.replace(1, 100..200);
        assert_eq!(q.batch(100_000.0), vec![(1, vec![100, 101])]);
    }

    #[test]
    fn a_new_partition_replaces_the_queue() {
        let mut q = CopyQueue::new(&RecolourConfig { pages_per_ms: 10.0, ..Default::default() }, 1);
        q.replace(0, [5, 6, 7]);
        q.replace(0, [9]);
        assert_eq!(q.batch(1e6), vec![(0, vec![9])]);
        q.replace(0, [1, 2]);
        q.forget(0);
        assert_eq!(q.pending(), 0);
    }

    #[test]
    fn bad_settings_are_named() {
        let bad = |c: RecolourConfig| c.validate().unwrap_err().to_string();
        assert!(bad(RecolourConfig { pages_per_ms: -1.0, ..Default::default() }).contains("os.recolour.pages_per_ms"));
        assert!(bad(RecolourConfig { pages_per_ms: f64::NAN, ..Default::default() }).contains("os.recolour.pages_per_ms"));
        assert!(bad(RecolourConfig { period_ns: 10.0, ..Default::default() }).contains("os.recolour.period_ns"));
        assert!(RecolourConfig::default().validate().is_ok());
        let mode = |m: &str, rate: f64| RecolourConfig { mode: Some(m.into()), pages_per_ms: rate, ..Default::default() };
        assert!(bad(mode("soon", 0.0)).contains("os.recolour.mode: unknown mode 'soon'"));
        assert!(bad(mode("daemon", 0.0)).contains("os.recolour.pages_per_ms"));
        assert!(bad(mode("lazy", 5.0)).contains("os.recolour.pages_per_ms"));
        assert_eq!(RecolourConfig { pages_per_ms: 5.0, ..Default::default() }.mode().unwrap(), RecolourMode::Daemon);
        assert_eq!(mode("lazy", 0.0).mode().unwrap(), RecolourMode::Lazy);
        assert_eq!(RecolourConfig::default().mode().unwrap(), RecolourMode::Eager);
    }
}
