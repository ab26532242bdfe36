//! HVR's accessed-bit sampling (multipolicy-hvr.md §3.3): the page-table features its online
//! classifier reads, measured per process in windows of simulated time.
//!
//! Each window of `window_ns` starts with JOB1, one sample of `nhp_ns`: the pages whose
//! accessed bit is set in it are the hot pages (NHP). JOB2 follows: `ticks` samples of
//! `tick_ns` each; a page's counter is the number of samples that touched it, in [0, ticks].
//! The counters give the five buckets VH/H/M/L/VL (the paper's edges 150/100/64/10/1 of 200,
//! scaled to `ticks`), WPD, and the pages used in the window. The rest of the window is idle.
//!
//! Time scale. HVR's window is 3 s and JOB1's sample "10 µs", but a real sample lasts as long as
//! the page-table walk that reads it, 5 µs (povray) to 4.46 ms (mcf): the thresholds of 100 and
//! 1000 hot pages were tuned on that footprint-dependent window. Simulated runs last
//! milliseconds, so the defaults shrink the window to 500 µs (several per run, the two jobs back
//! to back) and fix the samples so that the paper's reference programs land in its classes
//! (`llc_class.rs`; calibration in docs/stats.md, "Hot pages"): JOB1 100 µs, the order of the
//! paper's mcf walk; JOB2 200 samples of 2 µs.
//!
//! The walks. Each sample clears the accessed bits of every resident page and reads them again
//! (the paper's `pte_mkold()` then count): two walks of the process's page table, JOB1's one
//! sample and JOB2's `ticks`. A window records the pages walked and what the walks would take at
//! `walk_ns_per_page` (10 ns: the paper's mcf walk, 4.46 ms, over mcf's 1.7 GiB of 4 KiB pages, about 446 k).
//! By default they are reported, not charged to the run: at the simulated schedule a walk
//! outlasts its sample, as mcf's does at the paper's (docs/advisor.md, "The walks' cost").
//! `charge_walks = true` charges them time-scaled as the windows are: each closing window stalls
//! the process's first thread for the share of a core its walks take at HVR's own schedule
//! (402 walks per 3 s) times the window.
//!
//! Cost: one hash-map update per translation while a sample runs, nothing otherwise; only
//! with `[os.hot_pages] enabled = true`.

use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// `[os.hot_pages]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HotPageConfig {
    /// Sample accessed bits (default false: no cost).
    pub enabled: bool,
    /// One window (JOB1 then JOB2, then idle), ns (default 500 µs, the two jobs back to back:
    /// the paper's 3 s, several per run).
    pub window_ns: f64,
    /// JOB1's sample, ns (default 100 µs; see the module's time scale).
    pub nhp_ns: f64,
    /// JOB2's samples per window (default 200, the paper's) and each one's length, ns (default 2 µs).
    pub ticks: u32,
    pub tick_ns: f64,
    /// One page-table entry's share of a walk, ns (default 10: the paper's mcf walk of 4.46 ms
    /// over about 446 k pages); reported in each window's `walk_ns`.
    pub walk_ns_per_page: f64,
    /// Charge the walks (default false: reported only): each window stalls the process's first
    /// thread for `hvr_walk_share` of the window (see the module's "The walks").
    pub charge_walks: bool,
}

impl Default for HotPageConfig {
    fn default() -> Self {
        HotPageConfig {
            enabled: false,
            window_ns: 500_000.0,
            nhp_ns: 100_000.0,
            ticks: 200,
            tick_ns: 2_000.0,
            walk_ns_per_page: 10.0,
            charge_walks: false,
        }
    }
}

impl HotPageConfig {
    pub fn validate(&self) -> Result<()> {
        // A window of 5e-324 ns made the next window's start NaN: windows stopped closing.
        for (key, v) in [("window_ns", self.window_ns), ("nhp_ns", self.nhp_ns), ("tick_ns", self.tick_ns)] {
            crate::params::TIME_NS.check(format!("os.hot_pages.{key}"), v)?;
        }
        if !(self.walk_ns_per_page.is_finite() && (0.0..=1e6).contains(&self.walk_ns_per_page)) {
            return Err(Error::config(
                "os.hot_pages.walk_ns_per_page",
                format!("must be between 0 and 10^6 ns, got {}", self.walk_ns_per_page),
            ));
        }
        if !(1..=u16::MAX as u32).contains(&self.ticks) {
            return Err(Error::config("os.hot_pages.ticks", format!("must be between 1 and {}, got {}", u16::MAX, self.ticks)));
        }
        let busy = self.nhp_ns + self.ticks as f64 * self.tick_ns;
        if busy > self.window_ns {
            return Err(Error::config(
                "os.hot_pages.window_ns",
                format!(
                    "the samples (nhp_ns {} + ticks {} x tick_ns {} = {busy} ns) must fit in the window, got {}",
                    self.nhp_ns, self.ticks, self.tick_ns, self.window_ns
                ),
            ));
        }
        Ok(())
    }
}

/// HVR's own schedule: a 3 s window with JOB1's sample and JOB2's 200.
pub const HVR_WINDOW_NS: f64 = 3e9;
pub const HVR_TICKS: u32 = 200;

/// Page-table walks per window: two (clear, then read) per sample, JOB1's one and JOB2's `ticks`.
pub fn walks_per_window(ticks: u32) -> f64 {
    2.0 * (1 + ticks) as f64
}

/// The share of a core the walks over `pages` resident pages take at HVR's own schedule.
pub fn hvr_walk_share(pages: f64, walk_ns_per_page: f64) -> f64 {
    walks_per_window(HVR_TICKS) * pages * walk_ns_per_page / HVR_WINDOW_NS
}

/// The paper's bucket edges for 200 samples: VH ≥ 150, H ≥ 100, M ≥ 64, L ≥ 10, VL ≥ 1.
const EDGES_OF_200: [u32; 5] = [150, 100, 64, 10, 1];
/// The longest run of consecutive samples a stream spends on a page, per 200 samples: 8 (16 µs
/// at the default 2 µs, 64 lines at 4 a µs, a stream slowed fourfold by contention).
const PASSING_RUN_OF_200: u32 = 8;
/// WPD's weights of VH, H, M, L, VL.
const WEIGHTS: [f64; 5] = [2.0, 1.5, 1.0, 0.5, 0.1];

/// One process over one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WindowFeatures {
    /// Pages touched in JOB1's sample (NHP).
    pub nhp: u64,
    /// Pages touched in any of JOB2's samples (all_used_pages_num).
    pub used: u64,
    /// Pages per bucket: VH, H, M, L, VL.
    pub buckets: [u64; 5],
    /// JOB2's counters summed (page-samples), and the part of that sum from pages a stream
    /// passes over: touched in one run of consecutive samples, at most `PASSING_RUN` long, and
    /// not again in the window.
    pub touches: u64,
    pub passing_touches: u64,
    /// Pages touched in at least two of JOB2's samples (used more than in passing).
    pub reused: u64,
    /// (2 VH + 1.5 H + M + 0.5 L + 0.1 VL) / used; 0 when nothing was used.
    pub wpd: f64,
    /// The process's resident pages when the window closed: the entries each walk reads.
    pub walked_pages: u64,
    /// The window's walks (two per sample: clear, then read) over `walked_pages` at
    /// `walk_ns_per_page`, ns (at this run's schedule; what `charge_walks` charges is HVR's).
    pub walk_ns: f64,
}

#[derive(Default)]
struct ProcessSampler {
    job1: FxHashSet<u64>,
    /// Page -> (first and last sample that touched it, each plus one; samples that touched it).
    job2: FxHashMap<u64, (u32, u32, u16)>,
    windows: Vec<WindowFeatures>,
}

/// The sampler of every process.
pub struct HotPages {
    cfg: HotPageConfig,
    edges: [u32; 5],
    passing_run: u32,
    /// Start of the current window, ns.
    start_ns: f64,
    processes: Vec<ProcessSampler>,
    /// The latest time seen, ns.
    last_ns: f64,
    /// With `charge_walks`: per closed window and process, the walks' time to charge, ns.
    charges: Vec<(u32, f64)>,
}

/// At most this many windows are kept per process (a long run keeps its first ones).
const MAX_WINDOWS: usize = 100_000;

impl HotPages {
    pub fn new(cfg: &HotPageConfig, processes: u32) -> Result<Self> {
        cfg.validate()?;
        let edges = EDGES_OF_200.map(|e| ((e as u64 * cfg.ticks as u64).div_ceil(200) as u32).max(1));
        Ok(HotPages {
            cfg: cfg.clone(),
            edges,
            passing_run: (PASSING_RUN_OF_200 * cfg.ticks).div_ceil(200).max(2),
            start_ns: 0.0,
            processes: (0..processes).map(|_| ProcessSampler::default()).collect(),
            last_ns: 0.0,
            charges: Vec::new(),
        })
    }

    /// Process `pid` touched virtual page `vpage` at `now_ns`; `resident(p)` is process `p`'s
    /// resident pages, read when a window closes.
    #[inline]
    pub fn touch(&mut self, pid: u32, vpage: u64, now_ns: f64, resident: impl Fn(usize) -> u64) {
        if now_ns >= self.start_ns + self.cfg.window_ns {
            self.close(now_ns, resident);
        }
        self.last_ns = now_ns;
        let at = now_ns - self.start_ns;
        let Some(p) = self.processes.get_mut(pid as usize) else { return };
        if at < self.cfg.nhp_ns {
            p.job1.insert(vpage);
            return;
        }
        let tick = ((at - self.cfg.nhp_ns) / self.cfg.tick_ns) as u32;
        if tick < self.cfg.ticks {
            let slot = p.job2.entry(vpage).or_insert((tick + 1, 0, 0));
            if slot.1 != tick + 1 {
                slot.1 = tick + 1;
                slot.2 += 1;
            }
        }
    }

    /// Ends the window holding `last_ns`, and starts the one holding `now_ns`.
    fn close(&mut self, now_ns: f64, resident: impl Fn(usize) -> u64) {
        let walks = walks_per_window(self.cfg.ticks);
        for (pid, p) in self.processes.iter_mut().enumerate() {
            let walked_pages = resident(pid);
            let mut f = WindowFeatures {
                nhp: p.job1.len() as u64,
                used: p.job2.len() as u64,
                walked_pages,
                walk_ns: walks * walked_pages as f64 * self.cfg.walk_ns_per_page,
                ..Default::default()
            };
            for &(first, last, count) in p.job2.values() {
                let count = count as u32;
                if let Some(b) = self.edges.iter().position(|&e| count >= e) {
                    f.buckets[b] += 1;
                }
                f.touches += count as u64;
                f.reused += (count >= 2) as u64;
                if count == last - first + 1 && count <= self.passing_run {
                    f.passing_touches += count as u64;
                }
            }
            if self.cfg.charge_walks && walked_pages > 0 {
                let share = hvr_walk_share(walked_pages as f64, self.cfg.walk_ns_per_page).min(1.0);
                self.charges.push((pid as u32, share * self.cfg.window_ns));
            }
            if f.used > 0 {
                f.wpd = f.buckets.iter().zip(WEIGHTS).map(|(&n, w)| n as f64 * w).sum::<f64>() / f.used as f64;
            }
            if p.windows.len() < MAX_WINDOWS {
                p.windows.push(f);
            }
            p.job1.clear();
            p.job2.clear();
        }
        let w = self.cfg.window_ns;
        self.start_ns += ((now_ns - self.start_ns) / w).floor() * w;
    }

    /// Starts over at `now_ns` (the measured run begins): warm-up windows are not kept.
    pub fn restart(&mut self, now_ns: f64) {
        for p in &mut self.processes {
            *p = ProcessSampler::default();
        }
        self.start_ns = now_ns;
        self.last_ns = now_ns;
        self.charges.clear();
    }

    /// Walks to charge are waiting (`charge_walks`).
    #[inline]
    pub fn charges_due(&self) -> bool {
        !self.charges.is_empty()
    }

    /// The walks' time to charge per process since the last call, ns, oldest first.
    pub fn take_charges(&mut self) -> std::vec::Drain<'_, (u32, f64)> {
        self.charges.drain(..)
    }

    /// Process `pid`'s windows closed so far (without the current one; no copy): what an
    /// online classifier reads each epoch.
    pub fn closed(&self, pid: u32) -> &[WindowFeatures] {
        self.processes.get(pid as usize).map_or(&[], |p| p.windows.as_slice())
    }

    /// Each process's complete windows so far, plus the current one if its samples are over
    /// (`resident`: each process's resident pages now).
    pub fn windows(&self, resident: &[u64]) -> Vec<Vec<WindowFeatures>> {
        let mut copy = HotPages {
            cfg: self.cfg.clone(),
            edges: self.edges,
            passing_run: self.passing_run,
            start_ns: self.start_ns,
            processes: self
                .processes
                .iter()
                .map(|p| ProcessSampler { job1: p.job1.clone(), job2: p.job2.clone(), windows: p.windows.clone() })
                .collect(),
            last_ns: self.last_ns,
            charges: Vec::new(),
        };
        let busy = self.cfg.nhp_ns + self.cfg.ticks as f64 * self.cfg.tick_ns;
        if self.last_ns >= self.start_ns + busy {
            copy.close(self.start_ns + self.cfg.window_ns, |p| resident.get(p).copied().unwrap_or(0));
        }
        copy.processes.into_iter().map(|p| p.windows).collect()
    }

    pub fn config(&self) -> &HotPageConfig {
        &self.cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No resident pages: the walks read nothing.
    const NONE: fn(usize) -> u64 = |_| 0;

    fn cfg() -> HotPageConfig {
        HotPageConfig {
            enabled: true,
            window_ns: 1000.0,
            nhp_ns: 100.0,
            ticks: 200,
            tick_ns: 4.0,
            walk_ns_per_page: 10.0,
            charge_walks: false,
        }
    }

    #[test]
    fn counters_buckets_and_wpd_follow_the_paper() {
        let mut h = HotPages::new(&cfg(), 1).unwrap();
        // JOB1: pages 1 and 2.
        h.touch(0, 1, 10.0, NONE);
        h.touch(0, 2, 50.0, NONE);
        // JOB2: page 7 in every sample (VH), page 8 in 100 (H), page 9 in 64 (M), 10 in 10 (L),
        // 11 in one sample (VL), touched three times in it.
        for t in 0..200u32 {
            let at = 100.0 + t as f64 * 4.0 + 1.0;
            h.touch(0, 7, at, NONE);
            if t < 100 {
                h.touch(0, 8, at, NONE);
            }
            if t < 64 {
                h.touch(0, 9, at, NONE);
            }
            if t < 10 {
                h.touch(0, 10, at, NONE);
            }
        }
        for d in [0.5, 1.0, 2.0] {
            h.touch(0, 11, 500.0 + d, NONE);
        }
        h.touch(0, 3, 1000.0, NONE);
        let w = h.windows(&[])[0][0];
        assert_eq!(w.nhp, 2);
        assert_eq!(w.used, 5);
        assert_eq!(w.buckets, [1, 1, 1, 1, 1]);
        assert_eq!(w.touches, 200 + 100 + 64 + 10 + 1);
        assert_eq!(w.passing_touches, 1);
        assert_eq!(w.reused, 4);
        assert!((w.wpd - (2.0 + 1.5 + 1.0 + 0.5 + 0.1) / 5.0).abs() < 1e-12);
    }

    #[test]
    fn a_window_counts_only_once_its_samples_are_over() {
        let mut h = HotPages::new(&cfg(), 2).unwrap();
        h.touch(1, 5, 10.0, NONE);
        assert!(h.windows(&[])[1].is_empty(), "JOB2 still running");
        h.touch(1, 5, 950.0, NONE);
        assert_eq!(h.windows(&[])[1].len(), 1);
        // A jump over two windows closes one and starts the window holding the time.
        h.touch(1, 6, 3050.0, NONE);
        let w = h.windows(&[]);
        assert_eq!(w[1].len(), 1);
        assert_eq!(w[1][0].nhp, 1);
        assert_eq!(w[0][0], WindowFeatures::default());
        h.touch(1, 6, 3990.0, NONE);
        assert_eq!(h.windows(&[])[1][1].nhp, 1);
    }

    #[test]
    fn a_window_records_its_walks_over_the_resident_pages() {
        let mut h = HotPages::new(&HotPageConfig { ticks: 4, tick_ns: 100.0, walk_ns_per_page: 2.5, ..cfg() }, 2).unwrap();
        h.touch(0, 1, 10.0, NONE);
        // The window closes at 1000 ns with 40 and 7 pages resident: JOB1's sample and JOB2's
        // four, two walks each.
        h.touch(1, 1, 1000.0, |p| [40, 7][p]);
        let w = h.windows(&[40, 7]);
        assert_eq!((w[0][0].walked_pages, w[1][0].walked_pages), (40, 7));
        assert_eq!(w[0][0].walk_ns, 10.0 * 40.0 * 2.5);
        assert_eq!(w[1][0].walk_ns, 10.0 * 7.0 * 2.5);
        // The current window, its samples over, reads the pages resident now.
        h.touch(0, 2, 1600.0, NONE);
        assert_eq!(h.windows(&[3, 0])[0][1].walked_pages, 3);
        assert!(h.windows(&[3, 0])[0][1].walk_ns == 10.0 * 3.0 * 2.5);
        // HVR's schedule: 402 walks per 3 s; the paper's mcf walk of 4.46 ms a walk is 60 %.
        assert_eq!(hvr_walk_share(1000.0, 10.0), 402.0 * 1000.0 * 10.0 / 3e9);
        assert!((hvr_walk_share(446_000.0, 10.0) - 0.5977).abs() < 1e-4);
    }

    #[test]
    fn samples_must_fit_the_window() {
        let e = HotPages::new(&HotPageConfig { tick_ns: 5.0, ..cfg() }, 1).err().unwrap().to_string();
        assert!(e.contains("os.hot_pages.window_ns") && e.contains("1100"), "{e}");
        let e = HotPages::new(&HotPageConfig { ticks: 0, ..cfg() }, 1).err().unwrap().to_string();
        assert!(e.contains("os.hot_pages.ticks"), "{e}");
        let e = HotPages::new(&HotPageConfig { nhp_ns: f64::NAN, ..cfg() }, 1).err().unwrap().to_string();
        assert!(e.contains("os.hot_pages.nhp_ns"), "{e}");
        let e = HotPages::new(&HotPageConfig { walk_ns_per_page: -1.0, ..cfg() }, 1).err().unwrap().to_string();
        assert!(e.contains("os.hot_pages.walk_ns_per_page") && e.contains("-1"), "{e}");
    }
}
