//! ATLAS, adaptive per-thread least-attained-service scheduling (Kim et al., HPCA 2010, its
//! mechanism; rules and defaults per ccps.md §5.5 [ext]): time is split into long quanta (10 M cycles in the paper, whose cycles are processor
//! cycles, here controller cycles: scale it with the clock ratio when matching the paper); at
//! each boundary every source's attained service of the quantum (bank cycles its served requests
//! used, `ServiceCost`) is folded into `TotalAS = alpha * TotalAS + (1 - alpha) * AS` (alpha
//! 0.875), and sources are ranked least `TotalAS` first. Order: requests that have waited
//! at least the starvation threshold (100 k cycles [ext: ChampSim/RamulatorSharp code, per
//! ccps.md §5.5]) first, then higher rank, then row hit, then oldest. The paper coordinates ranks
//! across controllers; here each controller ranks by its own measurements (no coordination).

use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{Candidate, Period, Scheduler, SchedulerInfo, ServiceCost};
use crate::controller::ControllerConfig;
use crate::controller::{BankQueue, Request, RowOutcome};
use crate::error::Result;
use crate::params::{ParamSchema, Params, Renamed, PERIOD_CYCLES};
use crate::Cycle;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    quantum_service: u64,
    total_service: f64,
    rank: u32,
    served: u64,
    /// Quanta this source ended ranked first.
    quanta_ranked_first: u64,
}

/// `[controller.atlas]`. Cycles are controller cycles; the paper counts processor cycles.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AtlasParams {
    /// Quantum length; attained service is re-ranked at each quantum boundary.
    pub quantum: u64,
    /// Weight of history in the attained-service moving average.
    pub alpha: f64,
    /// A request that has waited this long goes before all others.
    pub starvation_threshold: u64,
}

impl Default for AtlasParams {
    fn default() -> Self {
        AtlasParams { quantum: 10_000_000, alpha: 0.875, starvation_threshold: 100_000 }
    }
}

impl Params for AtlasParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        PERIOD_CYCLES.check_params(&[("quantum", self.quantum)])?;
        PERIOD_CYCLES.from(0).check_params(&[("starvation_threshold", self.starvation_threshold)])?;
        if !(0.0..1.0).contains(&self.alpha) {
            return Err(("alpha", format!("must be in [0, 1), got {}", self.alpha)));
        }
        Ok(())
    }
}

/// The flat keys these parameters had.
const RENAMED: Renamed = &[("atlas_quantum", "quantum"), ("atlas_alpha", "alpha"), ("atlas_starvation_threshold", "starvation_threshold")];

fn params(cfg: &ControllerConfig) -> Result<AtlasParams> {
    cfg.params(INFO.name, RENAMED)
}

fn periods(cfg: &ControllerConfig) -> Result<Vec<Period>> {
    Ok(vec![Period {
        key: "quantum",
        cycles: params(cfg)?.quantum,
        noun: "quantum",
        missed: "no source was ranked by attained service, so the schedule equals fr-fcfs's (except requests older than \
                 starvation_threshold)",
    }])
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "atlas",
    summary: "least attained service first, re-ranked each quantum (Kim et al., HPCA 2010)",
    fast_path: false,
    params: ParamSchema::of::<AtlasParams>(RENAMED),
    build: |cfg, c| Ok(Box::new(Atlas::new(&params(cfg)?, ServiceCost::new(c)))),
    periods,
};

pub struct Atlas {
    quantum: u64,
    alpha: f64,
    threshold: u64,
    cost: ServiceCost,
    quantum_end: Cycle,
    now: Cycle,
    sources: PerSource<Source>,
}

impl Atlas {
    pub fn new(p: &AtlasParams, cost: ServiceCost) -> Self {
        Atlas {
            quantum: p.quantum,
            alpha: p.alpha,
            threshold: p.starvation_threshold,
            cost,
            quantum_end: p.quantum,
            now: 0,
            sources: PerSource::new(),
        }
    }

    fn end_quantum(&mut self) {
        for (_, s) in self.sources.iter_mut() {
            s.total_service = self.alpha * s.total_service + (1.0 - self.alpha) * s.quantum_service as f64;
            s.quantum_service = 0;
        }
        let mut order: Vec<(f64, u32)> = self.sources.iter().map(|(i, s)| (s.total_service, i)).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (rank, &(_, i)) in order.iter().enumerate() {
            let s = self.sources.get_mut(i);
            s.rank = rank as u32;
            if rank == 0 {
                s.quanta_ranked_first += 1;
            }
        }
    }
}

impl Scheduler for Atlas {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        let starved = self.now.saturating_sub(c.arrival) >= self.threshold;
        KeyBuilder::new().prefer(starved).rank(self.sources.get(c.source).map_or(0, |s| s.rank)).prefer(c.is_hit).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_served(&mut self, _now: Cycle, req: &Request, outcome: RowOutcome) {
        let s = self.sources.get_mut(req.source);
        s.quantum_service += self.cost.of(outcome);
        s.served += 1;
    }

    fn advance(&mut self, now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        self.now = now;
        let mut changed = false;
        while now >= self.quantum_end {
            self.end_quantum();
            self.quantum_end += self.quantum;
            changed = true;
        }
        changed
    }

    fn next_change(&self) -> Cycle {
        self.quantum_end
    }

    fn age_threshold(&self) -> Option<u64> {
        Some(self.threshold)
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.sources
            .iter()
            .map(|(i, s)| {
                let m = BTreeMap::from([
                    ("served", s.served),
                    ("attained_service", s.total_service.round() as u64),
                    ("quanta_ranked_first", s.quanta_ranked_first),
                ]);
                (i, m)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{served_order, Req};
    use crate::config::ControllerConfig;

    fn cfg() -> ControllerConfig {
        ControllerConfig { scheduler: "atlas".into(), ..ControllerConfig::default() }.with_param("atlas", "quantum", 2000)
    }

    /// Source 0 is served 40 requests in the first quantum, source 1 one; in the second quantum
    /// source 0's row hits and a younger row miss of source 1 compete in one bank.
    fn history_then_contest() -> Vec<Req> {
        let mut reqs: Vec<Req> = (0..40).map(|i| Req::read(i, 0, (i % 4) as u32, 3, i as u32)).collect();
        reqs.push(Req::read(40, 1, 5, 3, 0));
        // After the quantum boundary (2000): source 0 opens row 8 of bank 6 and queues hits;
        // source 1 asks for row 9 of the same bank a little later.
        for i in 0..6 {
            reqs.push(Req::read(100 + i, 0, 6, 8, i as u32).at(2100));
        }
        reqs.push(Req::read(200, 1, 6, 9, 0).at(2101));
        reqs
    }

    #[test]
    fn atlas_ranks_least_attained_service_first() {
        let order = served_order(&cfg(), &history_then_contest());
        let pos = |id| order.iter().position(|&x| x == id).unwrap();
        assert!(pos(200) < pos(101), "source 1 attained less service, so its row miss beats source 0's hits: {order:?}");
        let fr = served_order(&ControllerConfig { scheduler: "fr-fcfs".into(), ..cfg() }, &history_then_contest());
        let fpos = |id| fr.iter().position(|&x| x == id).unwrap();
        assert!(fpos(200) > fpos(105), "FR-FCFS serves the hits first: {fr:?}");
    }

    #[test]
    fn atlas_ranks_only_at_quantum_boundaries() {
        // Same contest, but with a quantum longer than the run: no ranking exists yet, so the
        // order is FR-FCFS's.
        let long = cfg().with_param("atlas", "quantum", 1_000_000);
        let order = served_order(&long, &history_then_contest());
        let fr = served_order(&ControllerConfig { scheduler: "fr-fcfs".into(), ..cfg() }, &history_then_contest());
        assert_eq!(order, fr);
    }

    #[test]
    fn atlas_serves_a_starved_request_first() {
        // With a threshold of 50 cycles, source 1's request (starved behind source 0's row hits,
        // which arrive faster than they are served, under an equal rank) overtakes the younger
        // hits once it has waited 50 cycles.
        let c = cfg().with_param("atlas", "quantum", 1_000_000).with_param("atlas", "starvation_threshold", 50);
        let mut reqs: Vec<Req> = (0..30).map(|i| Req::read(i, 0, 0, 8, i as u32).at(2 * i)).collect();
        reqs.push(Req::read(99, 1, 0, 9, 0).at(1));
        let order = served_order(&c, &reqs);
        let pos = order.iter().position(|&x| x == 99).unwrap();
        assert!(pos < 29, "the starved request overtakes hits: {order:?}");
        let fr = served_order(&ControllerConfig { scheduler: "fr-fcfs".into(), ..c }, &reqs);
        assert_eq!(fr.last(), Some(&99));
    }
}
