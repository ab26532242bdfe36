//! TCM, thread cluster memory scheduling (Kim et al., MICRO 2010, its mechanism; parameters per ccps.md §5.2
//! [ext]). Every quantum (1 M cycles) each source's memory intensity (requests received in the
//! quantum: the controller's stand-in for MPKI, see `intensity.rs`), bandwidth usage (bank
//! service, `ServiceCost`), row-buffer locality (hit rate of a per-source, per-bank shadow row
//! buffer: the rate it would see alone) and bank-level parallelism (time-average number of banks
//! it has requests queued at, while it has any) are measured. At the boundary sources are sorted
//! by intensity, lightest first, and join the latency-sensitive cluster while its bandwidth stays
//! within ClusterThresh x the quantum's total bandwidth (`cluster_thresh`, the paper's 4/24,
//! a share of total bandwidth whatever the number of sources, so a few intensive sources can form
//! a bandwidth cluster); the rest form the bandwidth cluster. The deprecated
//! `cluster_share` gives ClusterThresh as share / N for N sources active in the quantum
//! (with 4 and N = 4 every source fits, and TCM degenerates to lightest-first).
//! Latency-sensitive sources go first, lightest first. Bandwidth sources are ordered by niceness
//! (rank by BLP minus rank by RBL, nicest first) and the order is shuffled every 800 cycles:
//! insertion shuffle (a cycle of 2N steps; in step s < N the (N-1-s)-th nicest is lifted to the
//! top, in the other N steps the niceness order holds, so nice sources spend most time near the
//! top), or a seeded random shuffle when the sources are alike (BLP within
//! `shuffle_algo_threshold` x banks and RBL within `shuffle_algo_threshold`). Order: rank, row
//! hit, oldest. Ranks are per controller (the paper's controllers share them; no coordination).

use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{Candidate, Period, Scheduler, SchedulerInfo, ServiceCost};
use crate::controller::ControllerConfig;
use crate::controller::{BankQueue, Request, RowOutcome};
use crate::error::Result;
use crate::params::{ParamSchema, Params, Renamed, PERIOD_CYCLES};
use crate::{Cycle, NEVER};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
struct Source {
    // This quantum's measurements.
    requests: u64,
    service: u64,
    shadow_hits: u64,
    shadow_accesses: u64,
    /// Per bank: the row last asked for (shadow row buffer) and requests queued.
    shadow_row: BTreeMap<u32, u32>,
    queued: BTreeMap<u32, u32>,
    banks_busy: u32,
    blp_integral: u128,
    busy_time: u64,
    last_update: Cycle,
    // The classification in force.
    rank: u32,
    latency_cluster: bool,
    // Statistics.
    quanta_latency: u64,
    quanta_bandwidth: u64,
}

impl Source {
    fn integrate(&mut self, now: Cycle) {
        let dt = now.saturating_sub(self.last_update);
        if self.banks_busy > 0 {
            self.blp_integral += dt as u128 * self.banks_busy as u128;
            self.busy_time += dt;
        }
        self.last_update = now;
    }
}

/// `[controller.tcm]`. Cycles are controller cycles; the paper counts processor cycles.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcmParams {
    /// Quantum length (re-clustering).
    pub quantum: u64,
    /// ClusterThresh: the share of the quantum's total bandwidth the latency-sensitive cluster
    /// may take, whatever the number of sources (the paper's 4/24).
    pub cluster_thresh: f64,
    /// Deprecated: ClusterThresh as `cluster_share / N` for N active sources. When set it
    /// replaces `cluster_thresh` and the run carries a deprecation warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_share: Option<f64>,
    /// The bandwidth cluster's order is shuffled this often.
    pub shuffle_interval: u64,
    /// Random (not insertion) shuffle when the bandwidth sources' BLP differ by less than this
    /// fraction of the banks and their row-buffer locality by less than this.
    pub shuffle_algo_threshold: f64,
}

impl Default for TcmParams {
    fn default() -> Self {
        TcmParams {
            quantum: 1_000_000,
            cluster_thresh: 4.0 / 24.0,
            cluster_share: None,
            shuffle_interval: 800,
            shuffle_algo_threshold: 0.1,
        }
    }
}

impl Params for TcmParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        PERIOD_CYCLES.check_params(&[("quantum", self.quantum), ("shuffle_interval", self.shuffle_interval)])?;
        for (key, v) in [("cluster_thresh", self.cluster_thresh), ("shuffle_algo_threshold", self.shuffle_algo_threshold)] {
            if !(0.0..=1.0).contains(&v) {
                return Err((key, format!("must be in [0, 1], got {v}")));
            }
        }
        if let Some(share) = self.cluster_share.filter(|v| !(*v >= 0.0 && v.is_finite())) {
            return Err(("cluster_share", format!("must be a finite number >= 0, got {share}")));
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.cluster_share
            .map(|share| {
                format!(
                    "controller.tcm.cluster_share ({share}) is deprecated: it sets ClusterThresh to {share} / N for N active \
                     sources; use controller.tcm.cluster_thresh, a share of total bandwidth (e.g. {share} / N for your N)"
                )
            })
            .into_iter()
            .collect()
    }
}

/// The flat keys these parameters had.
const RENAMED: Renamed = &[
    ("tcm_quantum", "quantum"),
    ("tcm_cluster_thresh", "cluster_thresh"),
    ("tcm_cluster_share", "cluster_share"),
    ("tcm_shuffle_interval", "shuffle_interval"),
    ("tcm_shuffle_algo_threshold", "shuffle_algo_threshold"),
];

fn params(cfg: &ControllerConfig) -> Result<TcmParams> {
    cfg.params(INFO.name, RENAMED)
}

fn periods(cfg: &ControllerConfig) -> Result<Vec<Period>> {
    let p = params(cfg)?;
    Ok(vec![
        Period { key: "quantum", cycles: p.quantum, noun: "quantum", missed: "no cluster formed, so the schedule equals fr-fcfs's" },
        Period {
            key: "shuffle_interval",
            cycles: p.shuffle_interval,
            noun: "shuffle interval",
            missed: "the bandwidth cluster was never shuffled",
        },
    ])
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "tcm",
    summary: "thread cluster memory scheduling: latency-sensitive cluster first (Kim et al., MICRO 2010)",
    fast_path: false,
    params: ParamSchema::of::<TcmParams>(RENAMED),
    build: |cfg, c| Ok(Box::new(Tcm::new(&params(cfg)?, cfg.seed, ServiceCost::new(c)))),
    periods,
};

pub struct Tcm {
    quantum: u64,
    cluster_thresh: f64,
    /// The deprecated per-source form (ClusterThresh = share / N), when given.
    cluster_share: Option<f64>,
    shuffle_interval: u64,
    algo_threshold: f64,
    cost: ServiceCost,
    quantum_end: Cycle,
    next_shuffle: Cycle,
    /// Bandwidth cluster, nicest first, and the step of the insertion cycle.
    bandwidth_order: Vec<u32>,
    shuffle_step: usize,
    random_shuffle: bool,
    latency_count: u32,
    banks_seen: u32,
    rng: ChaCha8Rng,
    sources: PerSource<Source>,
}

impl Tcm {
    pub fn new(p: &TcmParams, seed: u64, cost: ServiceCost) -> Self {
        Tcm {
            quantum: p.quantum,
            cluster_thresh: p.cluster_thresh,
            cluster_share: p.cluster_share,
            shuffle_interval: p.shuffle_interval,
            algo_threshold: p.shuffle_algo_threshold,
            cost,
            quantum_end: p.quantum,
            next_shuffle: NEVER,
            bandwidth_order: Vec::new(),
            shuffle_step: 0,
            random_shuffle: false,
            latency_count: 0,
            banks_seen: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            sources: PerSource::new(),
        }
    }

    /// Is `source` in the latency-sensitive cluster (as of the last quantum boundary)?
    pub fn in_latency_cluster(&self, source: u32) -> bool {
        self.sources.get(source).is_some_and(|s| s.latency_cluster)
    }

    fn end_quantum(&mut self, now: Cycle) {
        struct M {
            source: u32,
            intensity: u64,
            service: u64,
            rbl: f64,
            blp: f64,
        }
        let mut m: Vec<M> = Vec::new();
        for (i, s) in self.sources.iter_mut() {
            s.integrate(now);
            let rbl = if s.shadow_accesses == 0 { 0.0 } else { s.shadow_hits as f64 / s.shadow_accesses as f64 };
            let blp = if s.busy_time == 0 { 0.0 } else { s.blp_integral as f64 / s.busy_time as f64 };
            m.push(M { source: i, intensity: s.requests, service: s.service, rbl, blp });
            (s.requests, s.service, s.shadow_hits, s.shadow_accesses, s.blp_integral, s.busy_time) = (0, 0, 0, 0, 0, 0);
        }
        // Clustering: lightest first while the cluster's bandwidth stays within the threshold.
        m.sort_by_key(|x| (x.intensity, x.source));
        let total: u64 = m.iter().map(|x| x.service).sum();
        let thresh = match self.cluster_share {
            Some(share) => share / m.iter().filter(|x| x.intensity > 0).count().max(1) as f64,
            None => self.cluster_thresh,
        };
        let limit = thresh.min(1.0) * total as f64;
        let mut used = 0u64;
        let mut split = 0;
        while split < m.len() && (used + m[split].service) as f64 <= limit {
            used += m[split].service;
            split += 1;
        }
        let (light, heavy) = m.split_at(split);
        for (rank, x) in light.iter().enumerate() {
            let s = self.sources.get_mut(x.source);
            (s.rank, s.latency_cluster) = (rank as u32, true);
            s.quanta_latency += 1;
        }
        // Niceness = rank by BLP - rank by RBL (higher BLP, lower RBL: nicer).
        let rank_by = |key: &dyn Fn(&M) -> f64| -> BTreeMap<u32, i64> {
            let mut v: Vec<&M> = heavy.iter().collect();
            v.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.source.cmp(&b.source)));
            v.iter().enumerate().map(|(r, x)| (x.source, r as i64)).collect()
        };
        let (b, r) = (rank_by(&|x| x.blp), rank_by(&|x| x.rbl));
        let mut order: Vec<(i64, u32)> = heavy.iter().map(|x| (-(b[&x.source] - r[&x.source]), x.source)).collect();
        order.sort();
        self.bandwidth_order = order.into_iter().map(|(_, s)| s).collect();
        for &s in &self.bandwidth_order {
            let e = self.sources.get_mut(s);
            e.latency_cluster = false;
            e.quanta_bandwidth += 1;
        }
        let spread = |f: &dyn Fn(&M) -> f64| {
            heavy.iter().map(f).fold(f64::NEG_INFINITY, f64::max) - heavy.iter().map(f).fold(f64::INFINITY, f64::min)
        };
        self.random_shuffle = heavy.len() > 1
            && spread(&|x| x.blp) < self.algo_threshold * self.banks_seen as f64
            && spread(&|x| x.rbl) < self.algo_threshold;
        self.latency_count = split as u32;
        self.shuffle_step = 0;
        self.apply_order(self.bandwidth_order.clone());
        self.next_shuffle = if self.bandwidth_order.len() > 1 { now + self.shuffle_interval } else { NEVER };
    }

    fn apply_order(&mut self, order: Vec<u32>) {
        for (pos, s) in order.into_iter().enumerate() {
            self.sources.get_mut(s).rank = self.latency_count + pos as u32;
        }
    }

    fn shuffle(&mut self) {
        let n = self.bandwidth_order.len();
        let mut order = self.bandwidth_order.clone();
        if self.random_shuffle {
            order.shuffle(&mut self.rng);
        } else {
            let step = self.shuffle_step;
            if step < n {
                let lifted = order.remove(n - 1 - step);
                order.insert(0, lifted);
            }
            self.shuffle_step = (step + 1) % (2 * n);
        }
        self.apply_order(order);
    }
}

impl Scheduler for Tcm {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        KeyBuilder::new().rank(self.sources.get(c.source).map_or(0, |s| s.rank)).prefer(c.is_hit).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_arrival(&mut self, now: Cycle, req: &Request) {
        self.banks_seen = self.banks_seen.max(req.flat_bank + 1);
        let s = self.sources.get_mut(req.source);
        s.integrate(now);
        s.requests += 1;
        s.shadow_accesses += 1;
        if s.shadow_row.insert(req.flat_bank, req.row) == Some(req.row) {
            s.shadow_hits += 1;
        }
        let q = s.queued.entry(req.flat_bank).or_insert(0);
        *q += 1;
        if *q == 1 {
            s.banks_busy += 1;
        }
    }

    fn on_served(&mut self, now: Cycle, req: &Request, outcome: RowOutcome) {
        let s = self.sources.get_mut(req.source);
        s.integrate(now);
        s.service += self.cost.of(outcome);
        let q = s.queued.get_mut(&req.flat_bank).expect("a served request was queued");
        *q -= 1;
        if *q == 0 {
            s.banks_busy -= 1;
        }
    }

    fn advance(&mut self, now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        let mut changed = false;
        if now >= self.quantum_end {
            self.end_quantum(now);
            self.quantum_end += (now - self.quantum_end) / self.quantum * self.quantum + self.quantum;
            changed = true;
        }
        while now >= self.next_shuffle {
            self.shuffle();
            self.next_shuffle += self.shuffle_interval;
            changed = true;
        }
        changed
    }

    fn next_change(&self) -> Cycle {
        self.quantum_end.min(self.next_shuffle)
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.sources
            .iter()
            .map(|(i, s)| {
                (i, BTreeMap::from([("quanta_latency_cluster", s.quanta_latency), ("quanta_bandwidth_cluster", s.quanta_bandwidth)]))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{self, served_order, Req};
    use super::*;

    fn cfg() -> ControllerConfig {
        ControllerConfig { scheduler: "tcm".into(), ..ControllerConfig::default() }.with_param("tcm", "quantum", 2000).with_param(
            "tcm",
            "cluster_thresh",
            0.2,
        )
    }

    fn tcm(c: &ControllerConfig) -> Tcm {
        Tcm::new(&params(c).unwrap(), c.seed, ServiceCost { hit: 4, miss: 15, conflict: 26 })
    }

    fn req(source: u32, bank: u32, row: u32) -> Request {
        test_support::request(source, bank, row)
    }

    /// Sources 0 and 1 heavy (40 requests each), 2 and 3 light (2 each) in the first quantum.
    fn measured(t: &mut Tcm) {
        for (source, n) in [(0, 40), (1, 40), (2, 2), (3, 2)] {
            for i in 0..n {
                let r = req(source, i % 8, if source == 0 { 1 } else { i });
                t.on_arrival(10, &r);
                t.on_served(20, &r, RowOutcome::Hit);
            }
        }
    }

    #[test]
    fn tcm_puts_light_threads_in_latency_cluster() {
        let c = cfg();
        let mut t = tcm(&c);
        measured(&mut t);
        assert!(!t.in_latency_cluster(2), "no cluster before the first quantum ends");
        assert!(t.advance(2000, &[vec![], vec![]]), "the quantum boundary re-ranks");
        assert!(t.in_latency_cluster(2) && t.in_latency_cluster(3));
        assert!(!t.in_latency_cluster(0) && !t.in_latency_cluster(1));
        let rank = |s| t.sources.get(s).unwrap().rank;
        assert!(rank(2) < rank(0) && rank(3) < rank(1), "latency cluster first");
        // Source 0 has high row-buffer locality (one row), source 1 none: 1 is nicer, first.
        assert!(rank(1) < rank(0));
        assert_eq!(t.next_change(), 2800, "the bandwidth cluster is shuffled every 800 cycles");
    }

    /// Four sources with equal demand (40 requests each) in the first quantum.
    fn four_intensive(c: &ControllerConfig) -> Tcm {
        let mut t = tcm(c);
        for source in 0..4 {
            for i in 0..40 {
                let r = req(source, i % 8, i);
                t.on_arrival(10, &r);
                t.on_served(20, &r, RowOutcome::Miss);
            }
        }
        t.advance(2000, &[vec![], vec![]]);
        t
    }

    #[test]
    fn tcm_default_threshold_forms_a_bandwidth_cluster_of_four_intensive_sources() {
        // Each takes 1/4 of the bandwidth, more than the paper's 4/24: none is latency-sensitive.
        let c = ControllerConfig { scheduler: "tcm".into(), ..ControllerConfig::default() }.with_param("tcm", "quantum", 2000);
        let t = four_intensive(&c);
        assert!((0..4).all(|s| !t.in_latency_cluster(s)));
        assert_eq!(t.bandwidth_order.len(), 4);
        // The deprecated form at its old default (4 / N with N = 4) admits everyone.
        let old = four_intensive(&c.with_param("tcm", "cluster_share", 4.0));
        assert!((0..4).all(|s| old.in_latency_cluster(s)));
        assert!(old.bandwidth_order.is_empty());
    }

    #[test]
    fn tcm_insertion_shuffle_lifts_the_least_nice_then_restores() {
        let c = cfg().with_param("tcm", "shuffle_interval", 500);
        let mut t = tcm(&c);
        measured(&mut t);
        t.advance(2000, &[vec![], vec![]]);
        let rank = |t: &Tcm, s| t.sources.get(s).unwrap().rank;
        assert!(rank(&t, 1) < rank(&t, 0));
        assert!(t.advance(2500, &[vec![], vec![]]));
        assert!(rank(&t, 0) < rank(&t, 1), "step 0 lifts the least nice to the top");
        t.advance(3000, &[vec![], vec![]]);
        t.advance(3500, &[vec![], vec![]]);
        assert!(rank(&t, 1) < rank(&t, 0), "the niceness order holds in the second half");
        assert!(rank(&t, 2) < rank(&t, 0) && rank(&t, 3) < rank(&t, 1), "shuffles leave the latency cluster on top");
    }

    #[test]
    fn tcm_quantum_update_moves_a_source_between_clusters() {
        let c = cfg();
        let mut t = tcm(&c);
        measured(&mut t);
        t.advance(2000, &[vec![], vec![]]);
        assert!(t.in_latency_cluster(2));
        // Second quantum: source 2 turns heavy, source 0 goes quiet.
        for i in 0..60 {
            let r = req(2, i % 8, i);
            t.on_arrival(2100, &r);
            t.on_served(2200, &r, RowOutcome::Hit);
        }
        for i in 0..40 {
            let r = req(1, i % 8, i);
            t.on_arrival(2100, &r);
            t.on_served(2200, &r, RowOutcome::Hit);
        }
        t.advance(4000, &[vec![], vec![]]);
        assert!(!t.in_latency_cluster(2) && t.in_latency_cluster(0));
    }

    #[test]
    fn tcm_serves_the_latency_cluster_before_bandwidth_hits() {
        let mut reqs: Vec<Req> = (0..40).map(|i| Req::read(i, 0, (i % 8) as u32, 1, i as u32)).collect();
        reqs.push(Req::read(40, 1, 7, 1, 0));
        for i in 0..8 {
            reqs.push(Req::read(100 + i, 0, 0, 2, i as u32).at(2100));
        }
        reqs.push(Req::read(200, 1, 0, 3, 0).at(2101));
        let order = served_order(&cfg(), &reqs);
        let pos = |id| order.iter().position(|&x| x == id).unwrap();
        assert!(pos(200) < pos(101), "{order:?}");
    }
}
