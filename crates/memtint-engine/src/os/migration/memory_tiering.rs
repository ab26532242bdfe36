//! `memory-tiering`: Linux's NUMA balancing in tiering mode (`kernel.numa_balancing = 2`, Huang
//! Ying's series from 5.18 on, upstreaming TPP: Maruf et al., ASPLOS 2023) with kswapd demotion
//! (`demotion_enabled`).
//! - Promotion: the scan marks only pages outside the top tier; a hinting fault promotes the page
//!   to the faulting thread's node (or the nearest top-tier node) when it is hot: faulted within
//!   the hot threshold of being marked (`numa_hint_fault_latency`), within the promotion rate
//!   limit (`numa_balancing_promote_rate_limit_MBps`), and only if the destination keeps free
//!   memory above its watermark (`migrate_balanced_pgdat`); otherwise it stays, and kswapd is
//!   woken. While the destination has plenty free (`enough_free_pct` above the watermark:
//!   `pgdat_free_space_enough`, 1/16 of the node) every faulting page is promoted, hot or not,
//!   and the adjusted threshold is forgotten (the workload changed).
//! - The hot threshold adjusts itself (`numa_promotion_adjust_threshold`, Linux 6.0 on): every
//!   `adjust_period_ns` the pages that passed the threshold (promotion candidates, counted before
//!   the rate limit) are compared with what the rate limit allows in that period; more than 110 %
//!   lowers the threshold by 1/8 of `hot_threshold_ns` (not below that step), under 90 % raises
//!   it by as much (up to twice `hot_threshold_ns`).
//! - Demotion: when a top-tier node's free memory falls below `free_pct` of its capacity, kswapd
//!   demotes the coldest pages (the LRU's aging: a CLOCK over the access bits) to the nearest
//!   slower node until `2 x free_pct` is free (TPP's `demote_scale_factor` headroom, 2 %).
//!
//! Not modelled: page-type-aware allocation; Linux's floor of 1 GiB under "plenty free" (simulated
//! nodes hold megabytes, so only the 1/16 applies).

use super::{nearest, HintFault, MigrationInfo, MigrationPolicy, MigrationView, PageMove, PeriodView, Proposal, ScanScope};
use crate::os::nodes::NodeLayout;
use crate::params::{ParamSchema, Params, BANDWIDTH_MBPS, TIME_NS};
use serde::{Deserialize, Serialize};

/// `[os.memory-tiering]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryTieringParams {
    /// A page faulting within this long of being marked is hot, ns (Linux's
    /// `numa_balancing_hot_threshold_ms`, 1000 ms, equal to its scan period floor; here equal to
    /// `os.numa_scan.period_ns`'s default, 1 ms, which scales Linux's scan the same way).
    pub hot_threshold_ns: f64,
    /// Most promotions per second, MB/s (Linux's default 65536).
    pub promote_rate_mbps: f64,
    /// kswapd demotes when a top-tier node's free memory falls below this share of its capacity,
    /// %, and stops at twice it; promotions leave at least this much free.
    pub free_pct: f64,
    /// Free memory above `free_pct` at which every faulting page is promoted, % of capacity
    /// (Linux: 1/16 of the node; 0: never).
    pub enough_free_pct: f64,
    /// Adjust the hot threshold to the rate limit (Linux's tiering mode does).
    pub adjust_threshold: bool,
    /// How often, ns (Linux's `numa_balancing_scan_period_max_ms`, 60 s, scaled as the scan
    /// period is: 60 ms).
    pub adjust_period_ns: f64,
}

impl Default for MemoryTieringParams {
    fn default() -> Self {
        MemoryTieringParams {
            hot_threshold_ns: 1_000_000.0,
            promote_rate_mbps: 65536.0,
            free_pct: 2.0,
            enough_free_pct: 6.25,
            adjust_threshold: true,
            adjust_period_ns: 60_000_000.0,
        }
    }
}

impl Params for MemoryTieringParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        TIME_NS.check_params(&[("hot_threshold_ns", self.hot_threshold_ns)])?;
        BANDWIDTH_MBPS.check_params(&[("promote_rate_mbps", self.promote_rate_mbps)])?;
        if !(self.free_pct > 0.0 && self.free_pct < 50.0) {
            return Err(("free_pct", format!("must be above 0 and below 50 %, got {}", self.free_pct)));
        }
        if !(self.enough_free_pct >= 0.0 && self.enough_free_pct + self.free_pct < 100.0) {
            return Err(("enough_free_pct", format!("must be at least 0 and below 100 - free_pct %, got {}", self.enough_free_pct)));
        }
        TIME_NS.check_params(&[("adjust_period_ns", self.adjust_period_ns)])?;
        Ok(())
    }
}

pub static INFO: MigrationInfo = MigrationInfo {
    name: "memory-tiering",
    summary: "Linux NUMA balancing tiering mode (TPP): hot slow-tier pages promoted on hinting faults, cold pages demoted by kswapd",
    moves_pages_of: &["local"],
    params: ParamSchema::of::<MemoryTieringParams>(&[]),
    build: |v| {
        let p: MemoryTieringParams = v.params.get("os", INFO.name, &[])?;
        Ok(Box::new(MemoryTiering::new(v, p)))
    },
};

pub struct MemoryTiering {
    layout: NodeLayout,
    p: MemoryTieringParams,
    top: Vec<bool>,
    /// Promotions in the current rate-limit window (one second of simulated time, as Linux's).
    window_start_ns: f64,
    window_bytes: f64,
    /// The adjusted hot threshold (0: `hot_threshold_ns`), and its period's start and candidates.
    threshold_ns: f64,
    adjust_start_ns: f64,
    candidates: u64,
}

impl MemoryTiering {
    fn new(v: &MigrationView, p: MemoryTieringParams) -> Self {
        let top = super::top_tier(v.nodes);
        MemoryTiering {
            layout: v.nodes.clone(),
            p,
            top,
            window_start_ns: 0.0,
            window_bytes: 0.0,
            threshold_ns: 0.0,
            adjust_start_ns: 0.0,
            candidates: 0,
        }
    }

    /// The hot threshold in force, ns.
    pub fn threshold_ns(&self) -> f64 {
        if self.threshold_ns > 0.0 {
            self.threshold_ns
        } else {
            self.p.hot_threshold_ns
        }
    }

    /// Linux's `numa_promotion_adjust_threshold`: once a period, candidates against the rate limit.
    fn adjust(&mut self, now_ns: f64) {
        if !self.p.adjust_threshold || now_ns - self.adjust_start_ns <= self.p.adjust_period_ns {
            return;
        }
        let allowed = self.p.promote_rate_mbps * 1e6 / 4096.0 * (self.p.adjust_period_ns * 1e-9);
        let step = self.p.hot_threshold_ns * 2.0 / 16.0;
        let mut th = self.threshold_ns();
        let c = self.candidates as f64;
        if c > allowed * 1.1 {
            th = (th - step).max(step);
        } else if c < allowed * 0.9 {
            th = (th + step).min(2.0 * self.p.hot_threshold_ns);
        }
        self.threshold_ns = th;
        self.adjust_start_ns = now_ns;
        self.candidates = 0;
    }
}

impl MigrationPolicy for MemoryTiering {
    fn scan_scope(&self) -> ScanScope {
        ScanScope::SlowTiers
    }

    fn tracks_pages(&self) -> bool {
        true
    }

    fn keep_free_pct(&self) -> f64 {
        self.p.free_pct
    }

    fn on_hint_fault(&mut self, f: &HintFault) -> Proposal {
        if self.top[f.page_node as usize] {
            return Proposal::Stay;
        }
        let Some(to) = nearest(&self.layout, f.thread_node, |n| self.top[n as usize]) else { return Proposal::Stay };
        let t = to as usize;
        if self.p.enough_free_pct > 0.0 && t < f.free.len() {
            let enough = f.capacity[t] as f64 * (self.p.free_pct + self.p.enough_free_pct) / 100.0;
            if f.free[t] as f64 > enough {
                self.threshold_ns = 0.0;
                return Proposal::MoveTo(to);
            }
        }
        self.adjust(f.now_ns);
        if !f.latency_ns.is_some_and(|l| l < self.threshold_ns()) {
            return Proposal::Stay;
        }
        self.candidates += 1;
        if f.now_ns - self.window_start_ns >= 1e9 {
            self.window_start_ns = f.now_ns;
            self.window_bytes = 0.0;
        }
        if self.window_bytes + 4096.0 > self.p.promote_rate_mbps * 1e6 {
            return Proposal::Refused(to);
        }
        self.window_bytes += 4096.0;
        Proposal::MoveTo(to)
    }

    fn on_period(&mut self, v: &mut PeriodView) -> Vec<PageMove> {
        let mut moves = Vec::new();
        for node in 0..self.layout.count() {
            let n = node as usize;
            if !self.top[n] || v.capacity[n] == 0 {
                continue;
            }
            let low = (v.capacity[n] as f64 * self.p.free_pct / 100.0).ceil() as u64;
            // A promotion refused for want of memory leaves free at or below `low`: kswapd runs.
            if v.free[n] > low {
                continue;
            }
            let high = 2 * low;
            let Some(to) = nearest(&self.layout, node, |m| !self.top[m as usize]) else { continue };
            let want = high.saturating_sub(v.free[n]).min(v.free[to as usize]) as usize;
            // One pass at most: a page's bit is only read a period after it was cleared.
            let budget = v.pages.len();
            for frame in v.pages.cold_pages(v.tables, node, want, budget) {
                moves.push(PageMove { frame, to });
            }
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::migration::numa_balancing::tests::two_nodes;
    use crate::os::migration::PageTracker;
    use crate::os::page_table::PageTable;

    fn policy() -> MemoryTiering {
        let layout = two_nodes();
        let params = Default::default();
        MemoryTiering::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, MemoryTieringParams::default())
    }

    /// A fault with the top tier nearly full (1 % free: no shortcut).
    fn fault(page_node: u32, latency_ns: Option<f64>) -> HintFault {
        HintFault {
            pid: 0,
            tid: 0,
            frame: 1500,
            page_node,
            thread_node: 0,
            early: false,
            pass: 9,
            latency_ns,
            now_ns: 5e6,
            free: vec![10, 500],
            capacity: vec![1000, 1000],
        }
    }

    #[test]
    fn with_plenty_free_every_faulting_page_is_promoted() {
        let mut p = policy();
        let roomy = |free0| HintFault { free: vec![free0, 500], ..fault(1, Some(3e6)) };
        // 2 % watermark + 6.25 %: more than 82.5 of 1000 free.
        assert_eq!(p.on_hint_fault(&roomy(83)), Proposal::MoveTo(0), "cold, but the top tier has room");
        assert_eq!(p.on_hint_fault(&roomy(82)), Proposal::Stay, "at the line: the hot test applies");
        p.p.enough_free_pct = 0.0;
        assert_eq!(p.on_hint_fault(&roomy(900)), Proposal::Stay, "the shortcut off");
    }

    #[test]
    fn the_hot_threshold_follows_the_rate_limit() {
        let mut p = policy();
        // 10 pages per 60 ms period allowed.
        p.p.promote_rate_mbps = 10.0 * 4096.0 / 0.06 / 1e6;
        let at = |now_ns, latency| HintFault { now_ns, ..fault(1, Some(latency)) };
        // Period 1: 30 candidates (3x the limit) -> the threshold drops by 1/8 at the first fault after it.
        for i in 0..30 {
            p.on_hint_fault(&at(1e6 + i as f64, 1.0));
        }
        p.on_hint_fault(&at(61e6 + 1.0, 1.0));
        assert_eq!(p.threshold_ns(), 875_000.0);
        // A page 900 µs after its mark is no longer hot.
        assert_eq!(p.on_hint_fault(&at(62e6, 900_000.0)), Proposal::Stay);
        // Quiet periods raise it again, a step a period, up to twice the default.
        for k in 2..30 {
            p.on_hint_fault(&at(k as f64 * 61e6 + 2.0, 5e6));
        }
        assert_eq!(p.threshold_ns(), 2_000_000.0);
        p.p.adjust_threshold = false;
        assert_eq!(p.on_hint_fault(&at(40e9, 1.5e6)), Proposal::MoveTo(0), "adjusted: 1.5 ms is hot");
    }

    #[test]
    fn only_hot_slow_tier_pages_are_promoted() {
        let mut p = policy();
        assert_eq!(p.on_hint_fault(&fault(1, Some(10_000.0))), Proposal::MoveTo(0), "faulted 10 µs after marking: hot");
        assert_eq!(p.on_hint_fault(&fault(1, Some(3e6))), Proposal::Stay, "3 ms: cold");
        assert_eq!(p.on_hint_fault(&fault(1, None)), Proposal::Stay, "never marked");
        assert_eq!(p.on_hint_fault(&fault(0, Some(10.0))), Proposal::Stay, "already in the top tier");
    }

    #[test]
    fn promotions_stop_at_the_rate_limit_until_the_next_second() {
        let mut p = policy();
        p.p.promote_rate_mbps = 4096.0 * 3.0 / 1e6;
        let hot = |now_ns| HintFault { now_ns, ..fault(1, Some(1.0)) };
        let got: Vec<_> = (0..4).map(|i| p.on_hint_fault(&hot(1e6 + i as f64))).collect();
        assert_eq!(got, vec![Proposal::MoveTo(0), Proposal::MoveTo(0), Proposal::MoveTo(0), Proposal::Refused(0)]);
        assert_eq!(p.on_hint_fault(&hot(1.1e9)), Proposal::MoveTo(0), "a new window");
    }

    #[test]
    fn kswapd_demotes_cold_pages_when_the_top_tier_runs_low() {
        let mut p = policy();
        let mut tracker = PageTracker::new(&p.layout);
        let mut tables = vec![PageTable::new()];
        for v in 0..100u64 {
            tables[0].insert(v, v as u32);
            tracker.mapped(v as u32, 0, v);
        }
        let loads = [Default::default(); 2];
        let period = |p: &mut MemoryTiering, tracker: &mut PageTracker, tables: &mut [PageTable], free0: u64| {
            let mut v = PeriodView { free: vec![free0, 1000], capacity: vec![1000, 1000], loads: &loads, pages: tracker, tables };
            p.on_period(&mut v)
        };
        assert!(period(&mut p, &mut tracker, &mut tables, 500).is_empty(), "plenty free: nothing to do");
        // 10 free of 1000 is at most 2 %: demote to 40 free. The first pass only clears access
        // bits (every page was just used), the next finds them cold.
        assert!(period(&mut p, &mut tracker, &mut tables, 10).is_empty());
        let moves = period(&mut p, &mut tracker, &mut tables, 10);
        assert_eq!(moves.len(), 30);
        assert!(moves.iter().all(|m| m.to == 1 && m.frame < 100));
    }
}
