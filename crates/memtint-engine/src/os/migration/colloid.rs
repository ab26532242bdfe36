//! `colloid`: latency balancing across tiers in the style of Colloid (Vuppalapati and Agarwal,
//! "Tiered Memory Management: Access Latency is the Key!", SOSP 2024), over HeMem-style hotness
//! (PEBS samples of LLC-miss loads, cooled by halving).
//!
//! Every period the daemon compares the loaded read latency of the default tier (the fastest
//! memory cluster) with the alternate tier's (every other node), as Colloid reads it from the
//! CHA's occupancy and arrival counters. Within `delta` of each other it does nothing. Otherwise
//! it shifts the share `p` of accesses that go to the default tier by a binary search over
//! [p_lo, p_hi] (Colloid's watermarks): default faster, `p_lo = p` (promote); default slower,
//! `p_hi = p` (demote); a bound that crosses the other is reset, and bounds closer than
//! `epsilon` reopen toward the side the latencies point to. It then moves the hottest pages of
//! the tier that should lose accesses whose sampled access probabilities add up to at most
//! |(p_lo + p_hi) / 2 - p|, up to `max_pages` a period and, with `dynamic_limit` (Colloid's
//! default), up to the pages whose bytes equal the accesses that should shift: |shift| x the
//! period's LLC-miss reads x 64 B / 4 KiB (Colloid's `dynlimit`, computed from the same counters),
//! so a small imbalance moves little. A promotion into a full default tier first demotes a cold
//! page (the CLOCK's), as HeMem swaps.
//!
//! Colloid smooths microsecond counter reads with an EWMA of 1/16; the period's mean latency
//! here averages over a similar span (1 ms), so no further smoothing is applied.

use super::{nearest, MigrationInfo, MigrationPolicy, MigrationView, PageMove, PeriodView, ScanScope};
use crate::os::nodes::NodeLayout;
use crate::params::{Bound, ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.colloid]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ColloidParams {
    /// Latencies within this fraction of the default tier's count as balanced (Colloid: 0.05).
    pub delta: f64,
    /// Watermarks closer than this reopen (Colloid: 0.01).
    pub epsilon: f64,
    /// One LLC-miss read in this many is sampled (PEBS's sample-after value; HeMem samples
    /// every few thousand over seconds-long runs, and simulated runs last milliseconds).
    pub sample_period: u64,
    /// Most pages moved a period (256 pages a millisecond: 1 GiB/s of migration).
    pub max_pages: u64,
    /// Reads a period below which the latencies are not trusted and nothing moves.
    pub min_reads: u64,
    /// Colloid's dynamic migration limit: move no more bytes a period than the accesses the
    /// shift asks for (false: `max_pages` alone).
    pub dynamic_limit: bool,
}

impl Default for ColloidParams {
    fn default() -> Self {
        ColloidParams { delta: 0.05, epsilon: 0.01, sample_period: 64, max_pages: 256, min_reads: 256, dynamic_limit: true }
    }
}

impl Params for ColloidParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        for (k, v) in [("delta", self.delta), ("epsilon", self.epsilon)] {
            if !(v > 0.0 && v < 1.0) {
                return Err((k, format!("must be a fraction above 0 and below 1, got {v}")));
            }
        }
        const SAMPLE: Bound =
            Bound { min: 1, max: 1 << 20, unit: "misses", why: "one sample per 2^20 misses sees nothing in a simulated run" };
        SAMPLE.check_params(&[("sample_period", self.sample_period)])?;
        const PAGES: Bound = Bound { min: 1, max: 1 << 31, unit: "pages", why: "the allocator holds at most 2^31 frames" };
        PAGES.check_params(&[("max_pages", self.max_pages)])?;
        const READS: Bound = Bound { min: 1, max: 1 << 40, unit: "reads", why: "a period sees fewer" };
        READS.check_params(&[("min_reads", self.min_reads)])
    }
}

pub static INFO: MigrationInfo = MigrationInfo {
    name: "colloid",
    summary:
        "Colloid-style latency balancing: hot pages move toward the tier with the lower loaded latency until the tiers' latencies are equal",
    moves_pages_of: &["local", "interleave", "weighted-interleave"],
    params: ParamSchema::of::<ColloidParams>(&[]),
    build: |v| {
        let p: ColloidParams = v.params.get("os", INFO.name, &[])?;
        Ok(Box::new(Colloid::new(v, p)))
    },
};

pub struct Colloid {
    layout: NodeLayout,
    p: ColloidParams,
    top: Vec<bool>,
    p_lo: f64,
    p_hi: f64,
}

impl Colloid {
    fn new(v: &MigrationView, p: ColloidParams) -> Self {
        Colloid { layout: v.nodes.clone(), p, top: super::top_tier(v.nodes), p_lo: 0.0, p_hi: 1.0 }
    }

    /// The share of accesses the default tier should gain (+) or lose (-), from its latency and
    /// the alternate tier's and its current share `p` (Colloid's watermark search).
    pub fn target_shift(&mut self, l_default: f64, l_alt: f64, p: f64) -> f64 {
        if (l_default - l_alt).abs() < self.p.delta * l_default {
            return 0.0;
        }
        let promote = l_default < l_alt;
        if promote {
            self.p_lo = p;
            if self.p_hi <= self.p_lo {
                self.p_hi = 1.0;
            }
        } else {
            self.p_hi = p;
            if self.p_lo >= self.p_hi {
                self.p_lo = 0.0;
            }
        }
        if (self.p_hi - self.p_lo).abs() < self.p.epsilon {
            if promote {
                self.p_hi = 1.0;
            } else {
                self.p_lo = 0.0;
            }
        }
        (self.p_lo + self.p_hi) / 2.0 - p
    }
}

impl MigrationPolicy for Colloid {
    fn scan_scope(&self) -> ScanScope {
        ScanScope::Nothing
    }

    fn tracks_pages(&self) -> bool {
        true
    }

    fn miss_sample_period(&self) -> u32 {
        self.p.sample_period as u32
    }

    fn on_period(&mut self, v: &mut PeriodView) -> Vec<PageMove> {
        let moves = self.balance(v);
        v.pages.cool();
        moves
    }
}

impl Colloid {
    fn balance(&mut self, v: &mut PeriodView) -> Vec<PageMove> {
        // Per tier: reads, and their latency; a tier that served nothing is at its idle latency
        // (Colloid's floor: its unloaded latency).
        let (mut reads, mut lat, mut idle) = ([0u64; 2], [0.0f64; 2], [f64::INFINITY; 2]);
        for (n, l) in v.loads.iter().enumerate() {
            if !self.layout.has_memory(n as u32) {
                continue;
            }
            let t = if self.top[n] { 0 } else { 1 };
            reads[t] += l.reads;
            lat[t] += l.latency_ns.max(l.idle_ns) * l.reads as f64;
            idle[t] = idle[t].min(l.idle_ns);
        }
        if reads[0] + reads[1] < self.p.min_reads || idle[1].is_infinite() {
            return Vec::new();
        }
        let tier_latency = |t: usize| if reads[t] > 0 { lat[t] / reads[t] as f64 } else { idle[t] };
        let p = reads[0] as f64 / (reads[0] + reads[1]) as f64;
        let shift = self.target_shift(tier_latency(0), tier_latency(1), p);
        let heat = v.pages.heat_per_node();
        let total: f64 = heat.iter().sum();
        if shift == 0.0 || total <= 0.0 {
            return Vec::new();
        }
        let promote = shift > 0.0;
        let mut most = self.p.max_pages;
        if self.p.dynamic_limit {
            let lines = shift.abs() * (reads[0] + reads[1]) as f64;
            most = most.min((lines * 64.0 / 4096.0).ceil() as u64);
        }
        // The hottest pages of the tier that gives accesses up, while they fit the shift.
        let mut from: Vec<(u32, f32)> =
            (0..self.layout.count()).filter(|&n| self.top[n as usize] != promote).flat_map(|n| v.pages.hottest_on(n)).collect();
        from.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut left = shift.abs() * total;
        let mut moves = Vec::new();
        let mut free = v.free.clone();
        for (frame, h) in from {
            if moves.len() as u64 >= most || left <= 0.0 {
                break;
            }
            let h = h as f64;
            if h > left {
                continue;
            }
            let node = self.layout.node_of_frame(frame);
            let Some(to) = nearest(&self.layout, node, |n| self.top[n as usize] == promote) else { break };
            if free[to as usize] == 0 {
                if !promote {
                    continue;
                }
                // Make room: demote the default tier's coldest page to this page's node.
                let cold = v.pages.cold_pages(v.tables, to, 1, v.pages.len());
                let Some(&c) = cold.first() else { continue };
                moves.push(PageMove { frame: c, to: node });
                free[to as usize] += 1;
                free[node as usize] = free[node as usize].saturating_sub(1);
            }
            moves.push(PageMove { frame, to });
            free[to as usize] -= 1;
            free[node as usize] += 1;
            left -= h;
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::migration::numa_balancing::tests::two_nodes;
    use crate::os::migration::{NodeLoad, PageTracker};
    use crate::os::page_table::PageTable;

    fn policy() -> Colloid {
        let layout = two_nodes();
        let params = Default::default();
        Colloid::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, ColloidParams::default())
    }

    #[test]
    fn the_watermarks_search_for_the_share_that_balances_latency() {
        let mut c = policy();
        assert_eq!(c.target_shift(100.0, 102.0, 0.7), 0.0, "within 5 %: balanced");
        // Default tier slower at p = 1: demote half the accesses (target midway to p_lo = 0).
        assert!((c.target_shift(300.0, 150.0, 1.0) - -0.5).abs() < 1e-12);
        // Overshot (default now faster at p = 0.5): promote toward midway of [0.5, 1].
        assert!((c.target_shift(100.0, 200.0, 0.5) - 0.25).abs() < 1e-12);
        // Slower again at 0.75: the search closes in on [0.5, 0.75].
        assert!((c.target_shift(200.0, 150.0, 0.75) - -0.125).abs() < 1e-12);
        // A bound crossing the other resets it.
        assert!((c.target_shift(100.0, 200.0, 0.9) - 0.05).abs() < 1e-12, "p_lo = 0.9 > p_hi: p_hi back to 1");
    }

    #[test]
    fn a_loaded_default_tier_sheds_its_hottest_pages_to_the_slow_tier() {
        let mut c = policy();
        let mut tracker = PageTracker::new(&c.layout);
        let mut tables = vec![PageTable::new()];
        for v in 0..10u64 {
            tables[0].insert(v, v as u32);
            tracker.mapped(v as u32, 0, v);
            for _ in 0..(v + 1) {
                tracker.sample(v as u32);
            }
        }
        // Default tier 3x slower, all accesses there: move half the heat (55 samples: 27.5).
        let loads = [NodeLoad { reads: 1000, latency_ns: 300.0, idle_ns: 60.0 }, NodeLoad { reads: 10, latency_ns: 100.0, idle_ns: 90.0 }];
        let mut v =
            PeriodView { free: vec![900, 1000], capacity: vec![1000, 1000], loads: &loads, pages: &mut tracker, tables: &mut tables };
        let moves = c.on_period(&mut v);
        let frames: Vec<u32> = moves.iter().map(|m| m.frame).collect();
        // p = 0.99, target 0.495: 27.2 samples' worth: 10 + 9 + 8 = 27.
        assert_eq!(frames, vec![9, 8, 7]);
        assert!(moves.iter().all(|m| m.to == 1));
    }

    #[test]
    fn the_dynamic_limit_moves_no_more_bytes_than_the_accesses_that_should_shift() {
        let moved = |dynamic_limit: bool, reads: u64| {
            let layout = two_nodes();
            let params = Default::default();
            let p = ColloidParams { dynamic_limit, min_reads: 1, ..Default::default() };
            let mut c = Colloid::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, p);
            let mut tracker = PageTracker::new(&c.layout);
            let mut tables = vec![PageTable::new()];
            for v in 0..10u64 {
                tables[0].insert(v, v as u32);
                tracker.mapped(v as u32, 0, v);
                tracker.sample(v as u32);
            }
            // Default tier 3x slower with every read: shift half the accesses (5 samples' worth).
            let loads = [NodeLoad { reads, latency_ns: 300.0, idle_ns: 60.0 }, NodeLoad { reads: 0, latency_ns: 0.0, idle_ns: 90.0 }];
            let mut v =
                PeriodView { free: vec![900, 1000], capacity: vec![1000, 1000], loads: &loads, pages: &mut tracker, tables: &mut tables };
            c.on_period(&mut v).len()
        };
        assert_eq!(moved(false, 100), 5, "the heat alone: half the samples");
        // 100 reads, half of them to shift: 50 lines = 3,200 B, under one 4 KiB page.
        assert_eq!(moved(true, 100), 1);
        // 640 reads: 320 lines = 5 pages' bytes, which the heat allows too.
        assert_eq!(moved(true, 640), 5);
        assert_eq!(moved(true, 384), 3, "192 lines: 3 pages");
    }
}
