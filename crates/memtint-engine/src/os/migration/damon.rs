//! `damon`: tiering by DAMON-based operation schemes, DAMOS `migrate_hot` and `migrate_cold`
//! (Linux 6.11; the setup SK hynix's HMSDK ships for CXL memory).
//!
//! Monitoring (DAMON's region-based sampling, Park et al., Middleware 2019 industry track; the
//! kernel's mm/damon): each process's address range is split into regions, at least
//! `min_regions` and at most `max_regions`. Every `sample_ns` one random page of every region has
//! its access bit read and cleared; a region's `nr_accesses` counts the samples that found it
//! accessed. Every `aggr_samples` samples the schemes act, then adjacent regions whose counts
//! differ by at most a tenth of the maximum merge, each region's age grows while its count holds
//! (and restarts when it changes), and while fewer than `max_regions / 2` remain each region is
//! split at a random point.
//!
//! Schemes: `migrate_hot` moves the pages of regions accessed in at least `hot_access_pct` % of
//! the samples from slower nodes to the nearest top-tier node, hottest regions first;
//! `migrate_cold` moves the pages of regions not accessed for `cold_age` aggregations from the
//! top tier to the nearest slower node, oldest first, while a top-tier node's free memory is below
//! `free_pct` (a DAMOS free-memory watermark), so hot pages find room. Each scheme moves at most
//! `quota_mb_per_s` (a DAMOS size quota).
//!
//! Linux implements the migrate schemes for physical-address monitoring, whose regions are dense
//! on a loaded machine. A simulated run's footprint is a sliver of each node, its frames scattered
//! over the node, so physical regions would be mostly free frames: the regions here span each
//! process's virtual range (DAMON's `vaddr` operations), which the footprint fills. Intervals are
//! Linux's defaults (5 ms sampling, 100 ms aggregation) scaled by 1/1000, as `os.numa_scan` scales
//! the NUMA scanner.

use super::{nearest, MigrationInfo, MigrationPolicy, MigrationView, PageMove, PeriodView, ScanScope};
use crate::os::nodes::NodeLayout;
use crate::os::page_table::{frame_of, PageTable};
use crate::params::{Bound, ParamSchema, Params, BANDWIDTH_MBPS, TIME_NS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `[os.damon]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DamonParams {
    /// Sampling interval, ns (Linux's 5 ms, scaled by 1/1000).
    pub sample_ns: f64,
    /// Samples per aggregation interval (Linux: 100 ms / 5 ms = 20).
    pub aggr_samples: u64,
    pub min_regions: u64,
    pub max_regions: u64,
    /// `migrate_hot`: regions accessed in at least this share of the samples, %.
    pub hot_access_pct: f64,
    /// `migrate_cold`: regions not accessed for at least this many aggregation intervals.
    pub cold_age: u64,
    /// `migrate_cold` runs while a top-tier node has less than this share of its capacity free, %.
    pub free_pct: f64,
    /// Each scheme moves at most this much a second, MiB/s (1 GiB/s, Colloid's default rate).
    pub quota_mb_per_s: f64,
}

impl Default for DamonParams {
    fn default() -> Self {
        DamonParams {
            sample_ns: 5_000.0,
            aggr_samples: 20,
            min_regions: 10,
            max_regions: 1000,
            hot_access_pct: 5.0,
            cold_age: 10,
            free_pct: 5.0,
            quota_mb_per_s: 1024.0,
        }
    }
}

impl Params for DamonParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        // Its period in cycles: under one, DAMON ran every cycle; 1e300 rounded to never.
        TIME_NS.from(1000.0).check_params(&[("sample_ns", self.sample_ns)])?;
        BANDWIDTH_MBPS.check_params(&[("quota_mb_per_s", self.quota_mb_per_s)])?;
        for (k, v) in [("hot_access_pct", self.hot_access_pct), ("free_pct", self.free_pct)] {
            if !(v > 0.0 && v <= 100.0) {
                return Err((k, format!("must be above 0 and at most 100 %, got {v}")));
            }
        }
        const COUNT: Bound = Bound { min: 1, max: 1 << 20, unit: "", why: "a kdamond handles at most about a million" };
        COUNT.check_params(&[("aggr_samples", self.aggr_samples), ("min_regions", self.min_regions), ("cold_age", self.cold_age)])?;
        if self.max_regions < 2 * self.min_regions || self.max_regions > 1 << 20 {
            return Err((
                "max_regions",
                format!("must be at least twice min_regions ({}) and at most 2^20, got {}", self.min_regions, self.max_regions),
            ));
        }
        Ok(())
    }
}

pub static INFO: MigrationInfo = MigrationInfo {
    name: "damon",
    summary: "DAMON-based tiering: DAMOS migrate_hot promotes regions sampled hot, migrate_cold demotes regions idle for long",
    moves_pages_of: &["local", "interleave", "weighted-interleave"],
    params: ParamSchema::of::<DamonParams>(&[]),
    build: |v| {
        let p: DamonParams = v.params.get("os", INFO.name, &[])?;
        Ok(Box::new(Damon::new(v, p)))
    },
};

/// A monitoring region: virtual pages `start..end` of process `pid`.
#[derive(Clone, Debug, PartialEq)]
struct Region {
    pid: u32,
    start: u64,
    end: u64,
    nr_accesses: u32,
    last_nr_accesses: u32,
    age: u32,
    /// The page whose access bit the last sample cleared.
    sampled: Option<u64>,
}

impl Region {
    fn new(pid: u32, start: u64, end: u64) -> Self {
        Region { pid, start, end, nr_accesses: 0, last_nr_accesses: 0, age: 0, sampled: None }
    }

    fn len(&self) -> u64 {
        self.end - self.start
    }
}

pub struct Damon {
    layout: NodeLayout,
    p: DamonParams,
    top: Vec<bool>,
    rng: ChaCha8Rng,
    /// Regions, by process then address.
    regions: Vec<Region>,
    samples: u64,
}

impl Damon {
    fn new(v: &MigrationView, p: DamonParams) -> Self {
        Damon {
            layout: v.nodes.clone(),
            top: super::top_tier(v.nodes),
            rng: ChaCha8Rng::seed_from_u64(v.seed),
            regions: Vec::new(),
            samples: 0,
            p,
        }
    }

    /// Keeps the regions over each process's current address range (DAMON updates its targets'
    /// regions from their mappings): a new process gets `min_regions`, a grown range widens the
    /// outer regions.
    fn update_targets(&mut self, tables: &[PageTable]) {
        for (pid, t) in tables.iter().enumerate() {
            let range = t.dense_range();
            if range.is_empty() {
                continue;
            }
            let pid = pid as u32;
            let Some(first) = self.regions.iter().position(|r| r.pid == pid) else {
                let n = self.p.min_regions.min(range.end - range.start);
                let at = self.regions.partition_point(|r| r.pid < pid);
                let len = range.end - range.start;
                let new = (0..n).map(|i| Region::new(pid, range.start + i * len / n, range.start + (i + 1) * len / n));
                self.regions.splice(at..at, new);
                continue;
            };
            let last = first + self.regions[first..].iter().take_while(|r| r.pid == pid).count() - 1;
            self.regions[first].start = self.regions[first].start.min(range.start);
            self.regions[last].end = self.regions[last].end.max(range.end);
        }
    }

    /// One sample: read the access bit each region's last sample cleared, clear a new one's.
    fn sample(&mut self, v: &mut PeriodView) {
        for r in &mut self.regions {
            let table = &mut v.tables[r.pid as usize];
            if let Some(frame) = r.sampled.and_then(|vp| table.lookup(vp)).map(frame_of) {
                if v.pages.accessed(frame) {
                    r.nr_accesses += 1;
                }
            }
            let vp = self.rng.gen_range(r.start..r.end);
            r.sampled = Some(vp);
            if let Some(frame) = v.tables[r.pid as usize].lookup(vp).map(frame_of) {
                v.pages.clear_access(v.tables, frame);
            }
        }
    }

    /// The schemes' moves for this aggregation interval.
    fn apply_schemes(&mut self, v: &mut PeriodView) -> Vec<PageMove> {
        let quota =
            (self.p.quota_mb_per_s * (1u64 << 20) as f64 / 4096.0 * self.p.sample_ns * self.p.aggr_samples as f64 / 1e9).max(1.0) as usize;
        let mut free = v.free.clone();
        let mut moves = Vec::new();
        let hot_min = ((self.p.hot_access_pct / 100.0 * self.p.aggr_samples as f64).ceil() as u32).max(1);
        let mut hot: Vec<usize> = (0..self.regions.len()).filter(|&i| self.regions[i].nr_accesses >= hot_min).collect();
        hot.sort_by_key(|&i| (std::cmp::Reverse(self.regions[i].nr_accesses), std::cmp::Reverse(self.regions[i].age), i));
        self.migrate(v, &hot, true, quota, &mut free, &mut moves);
        let low =
            (0..self.layout.count() as usize).any(|n| self.top[n] && (free[n] as f64) < v.capacity[n] as f64 * self.p.free_pct / 100.0);
        if low {
            let mut cold: Vec<usize> = (0..self.regions.len())
                .filter(|&i| self.regions[i].nr_accesses == 0 && self.regions[i].age as u64 >= self.p.cold_age)
                .collect();
            cold.sort_by_key(|&i| (std::cmp::Reverse(self.regions[i].age), i));
            self.migrate(v, &cold, false, quota, &mut free, &mut moves);
        }
        moves
    }

    /// Moves the pages of `regions` (in order) toward the top tier (`promote`) or away from it,
    /// up to `quota` pages and while the destination has room.
    fn migrate(&self, v: &mut PeriodView, regions: &[usize], promote: bool, quota: usize, free: &mut [u64], moves: &mut Vec<PageMove>) {
        let mut left = quota;
        for &i in regions {
            let r = &self.regions[i];
            for vp in r.start..r.end {
                if left == 0 {
                    return;
                }
                let Some(frame) = v.tables[r.pid as usize].lookup(vp).map(frame_of) else { continue };
                let node = self.layout.node_of_frame(frame);
                if self.top[node as usize] == promote {
                    continue;
                }
                let Some(to) = nearest(&self.layout, node, |n| self.top[n as usize] == promote && free[n as usize] > 0) else { return };
                free[to as usize] -= 1;
                free[node as usize] += 1;
                moves.push(PageMove { frame, to });
                left -= 1;
            }
        }
    }

    /// Ages, merges, splits and resets the regions (`kdamond_merge_regions`,
    /// `kdamond_split_regions`, `kdamond_reset_aggregated`).
    fn adapt(&mut self) {
        let threshold = (self.p.aggr_samples / 10).max(1) as u32;
        for r in &mut self.regions {
            if r.nr_accesses.abs_diff(r.last_nr_accesses) > threshold {
                r.age = 0;
            } else {
                r.age += 1;
            }
        }
        // No merged region exceeds 1/min_regions of the whole (`damon_region_sz_limit`).
        let limit = (self.regions.iter().map(Region::len).sum::<u64>() / self.p.min_regions).max(1);
        let mut merged: Vec<Region> = Vec::with_capacity(self.regions.len());
        for r in self.regions.drain(..) {
            match merged.last_mut() {
                Some(l)
                    if l.pid == r.pid
                        && l.end == r.start
                        && l.nr_accesses.abs_diff(r.nr_accesses) <= threshold
                        && l.len() + r.len() <= limit =>
                {
                    let (a, b) = (l.len(), r.len());
                    let avg = |x: u32, y: u32| ((x as u64 * a + y as u64 * b) / (a + b)) as u32;
                    l.nr_accesses = avg(l.nr_accesses, r.nr_accesses);
                    l.age = avg(l.age, r.age);
                    l.end = r.end;
                }
                _ => merged.push(r),
            }
        }
        self.regions = merged;
        if (self.regions.len() as u64) < self.p.max_regions / 2 {
            let mut split = Vec::with_capacity(2 * self.regions.len());
            for r in self.regions.drain(..) {
                if r.len() >= 2 {
                    // At 10 % to 90 % of the region, as DAMON draws it.
                    let at = r.start + (self.rng.gen_range(1..10) * r.len() / 10).clamp(1, r.len() - 1);
                    split.push(Region { end: at, sampled: None, ..r.clone() });
                    split.push(Region { start: at, sampled: None, ..r });
                } else {
                    split.push(r);
                }
            }
            self.regions = split;
        }
        for r in &mut self.regions {
            r.last_nr_accesses = r.nr_accesses;
            r.nr_accesses = 0;
        }
    }
}

impl MigrationPolicy for Damon {
    fn scan_scope(&self) -> ScanScope {
        ScanScope::Nothing
    }

    fn tracks_pages(&self) -> bool {
        true
    }

    fn period_ns(&self) -> Option<f64> {
        Some(self.p.sample_ns)
    }

    fn acting_interval(&self) -> Option<(f64, &'static str)> {
        Some((self.p.sample_ns * self.p.aggr_samples as f64, "os.damon.sample_ns x os.damon.aggr_samples"))
    }

    fn on_period(&mut self, v: &mut PeriodView) -> Vec<PageMove> {
        self.update_targets(v.tables);
        self.sample(v);
        self.samples += 1;
        if !self.samples.is_multiple_of(self.p.aggr_samples) {
            return Vec::new();
        }
        let moves = self.apply_schemes(v);
        self.adapt();
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::migration::numa_balancing::tests::two_nodes;
    use crate::os::migration::PageTracker;

    fn damon(p: DamonParams) -> Damon {
        let layout = two_nodes();
        let params = Default::default();
        Damon::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, p)
    }

    /// 200 pages: the first 100 on node 0 (fast), the rest on node 1; pages 150-199 are used
    /// between every two samples, the others never.
    #[test]
    fn hot_regions_are_promoted_and_idle_ones_demoted_when_the_fast_tier_is_low() {
        let mut d = damon(DamonParams { aggr_samples: 10, cold_age: 2, ..Default::default() });
        let mut tracker = PageTracker::new(&d.layout);
        let mut tables = vec![PageTable::new()];
        for vp in 0..200u64 {
            let frame = if vp < 100 { vp as u32 } else { 1000 + vp as u32 };
            tables[0].insert(vp, frame);
            tracker.mapped(frame, 0, vp);
        }
        let loads = [Default::default(); 2];
        let mut all = Vec::new();
        for _ in 0..60 {
            for vp in 150..200u64 {
                let frame = 1000 + vp as u32;
                if let Some(p) = tracker.get_mut(frame) {
                    p.referenced = true;
                }
            }
            let mut v =
                PeriodView { free: vec![2, 900], capacity: vec![1000, 1000], loads: &loads, pages: &mut tracker, tables: &mut tables };
            all.extend(d.on_period(&mut v));
        }
        let promoted: Vec<u32> = all.iter().filter(|m| m.to == 0).map(|m| m.frame).collect();
        let demoted: Vec<u32> = all.iter().filter(|m| m.to == 1).map(|m| m.frame).collect();
        assert!(!promoted.is_empty() && promoted.iter().all(|&f| (1150..1200).contains(&f)), "only hot pages promoted: {promoted:?}");
        assert!(!demoted.is_empty() && demoted.iter().all(|&f| f < 100), "only fast-tier idle pages demoted: {demoted:?}");
        assert!(d.regions.len() >= 10 && d.regions.len() <= 1000);
        assert!(d.regions.windows(2).all(|w| w[0].end == w[1].start), "regions tile the range");
    }

    #[test]
    fn regions_tile_each_process_range_and_grow_with_it() {
        let mut d = damon(DamonParams::default());
        let mut tables = vec![PageTable::new(), PageTable::new()];
        for vp in 100..200u64 {
            tables[1].insert(vp, vp as u32);
        }
        d.update_targets(&tables);
        assert_eq!(d.regions.len(), 10);
        assert_eq!((d.regions[0].start, d.regions[9].end), (100, 200));
        tables[1].insert(250, 5);
        tables[0].insert(7, 6);
        d.update_targets(&tables);
        assert_eq!(d.regions[0].pid, 0, "process 0's single-page region comes first");
        assert_eq!(d.regions.last().unwrap().end, 251);
    }
}
