//! PAR-BS, parallelism-aware batch scheduling (Mutlu & Moscibroda, ISCA 2008, its scheduling
//! mechanism; rules and defaults as ccps.md §5.5 [ext] gives them from RamulatorSharp's
//! PARBS.cs): when no marked request remains, a batch forms by marking the `marking_cap` (5)
//! oldest requests of each source to each bank. Sources are ranked within the batch shortest job
//! first: fewest marked requests to any one bank (max-bank-load), ties by fewest marked in all
//! (total-load), then lower source id. Order: marked first, row hit, higher rank, oldest. Only
//! reads are batched: writes are drained in their own mode and would hold a batch open until the
//! next drain (a memtint choice; the paper's controller queues both together).

use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{no_periods, Candidate, Scheduler, SchedulerInfo};
use crate::controller::{BankQueue, ControllerConfig, Request, RowOutcome};
use crate::error::Result;
use crate::params::{at_least_one, ParamSchema, Params, Renamed};
use crate::Cycle;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    /// Rank in the current batch (0 best); sources without marked requests rank last.
    rank: u32,
    batches_marked: u64,
    marked_served: u64,
}

/// `[controller.par-bs]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ParBsParams {
    /// Requests marked per source per bank when a batch forms (Marking-Cap).
    pub marking_cap: u32,
}

impl Default for ParBsParams {
    fn default() -> Self {
        ParBsParams { marking_cap: 5 }
    }
}

impl Params for ParBsParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        at_least_one(&[("marking_cap", self.marking_cap as u64)])
    }
}

/// The flat key this parameter had.
const RENAMED: Renamed = &[("parbs_marking_cap", "marking_cap")];

fn params(cfg: &ControllerConfig) -> Result<ParBsParams> {
    cfg.params(INFO.name, RENAMED)
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "par-bs",
    summary: "parallelism-aware batches, shortest-job-first within a batch (Mutlu & Moscibroda, ISCA 2008)",
    fast_path: false,
    params: ParamSchema::of::<ParBsParams>(RENAMED),
    build: |cfg, _| Ok(Box::new(ParBs::new(params(cfg)?.marking_cap))),
    periods: no_periods,
};

pub struct ParBs {
    marking_cap: u32,
    /// `seq` of the marked requests still queued.
    marked: HashSet<u64>,
    sources: PerSource<Source>,
    batches: u64,
}

impl ParBs {
    pub fn new(marking_cap: u32) -> Self {
        ParBs { marking_cap, marked: HashSet::new(), sources: PerSource::new(), batches: 0 }
    }

    fn form_batch(&mut self, reads: &[BankQueue]) {
        // Per source: (max marked in one bank, total marked).
        let mut load: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
        for q in reads {
            let mut per_bank: BTreeMap<u32, u32> = BTreeMap::new();
            for r in &q.reqs {
                let n = per_bank.entry(r.source).or_insert(0);
                if *n < self.marking_cap {
                    *n += 1;
                    self.marked.insert(r.seq);
                }
            }
            for (s, n) in per_bank {
                let l = load.entry(s).or_insert((0, 0));
                l.0 = l.0.max(n);
                l.1 += n;
            }
        }
        let mut order: Vec<(u32, u32, u32)> = load.iter().map(|(&s, &(max, total))| (max, total, s)).collect();
        order.sort_unstable();
        let unmarked_rank = order.len() as u32;
        if let Some(&max) = load.keys().next_back() {
            self.sources.get_mut(max); // size the table first: new entries must not keep rank 0
        }
        for (_, s) in self.sources.iter_mut() {
            s.rank = unmarked_rank;
        }
        for (rank, &(_, _, s)) in order.iter().enumerate() {
            let e = self.sources.get_mut(s);
            e.rank = rank as u32;
            e.batches_marked += 1;
        }
        self.batches += 1;
    }
}

impl Scheduler for ParBs {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        // A source never seen by a batch has no rank: last.
        let rank = self.sources.get(c.source).map_or(u32::MAX, |s| s.rank);
        KeyBuilder::new().prefer(self.marked.contains(&c.seq)).prefer(c.is_hit).rank(rank).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_served(&mut self, _now: Cycle, req: &Request, _outcome: RowOutcome) {
        if self.marked.remove(&req.seq) {
            self.sources.get_mut(req.source).marked_served += 1;
        }
    }

    fn advance(&mut self, _now: Cycle, queues: &[Vec<BankQueue>; 2]) -> bool {
        if !self.marked.is_empty() || queues[0].iter().all(|q| q.reqs.is_empty()) {
            return false;
        }
        self.form_batch(&queues[0]);
        true
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.sources
            .iter()
            .map(|(s, e)| (s, BTreeMap::from([("batches_marked", e.batches_marked), ("marked_served", e.marked_served)])))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{served_order, Req};
    use crate::config::ControllerConfig;

    fn cfg(cap: u32) -> ControllerConfig {
        ControllerConfig { scheduler: "par-bs".into(), ..ControllerConfig::default() }.with_param("par-bs", "marking_cap", cap)
    }

    #[test]
    fn parbs_serves_marked_before_unmarked() {
        // Source 0 queues six requests to one row of bank 0, source 1 one request to another row
        // (youngest). FR-FCFS would serve all six row hits first; with a cap of 2 only source 0's
        // two oldest are marked, so source 1's request goes before the unmarked hits 2..5.
        let mut reqs: Vec<Req> = (0..6).map(|i| Req::read(i, 0, 0, 5, i as u32)).collect();
        reqs.push(Req::read(6, 1, 0, 9, 0));
        let order = served_order(&cfg(2), &reqs);
        let mut first: Vec<u64> = order[..3].to_vec();
        first.sort();
        assert_eq!(first, [0, 1, 6], "the marked requests first: {order:?}");
        let fr = served_order(&ControllerConfig { scheduler: "fr-fcfs".into(), ..cfg(2) }, &reqs);
        assert_eq!(fr, [0, 1, 2, 3, 4, 5, 6], "FR-FCFS serves the hits first");
    }

    #[test]
    fn parbs_ranks_the_shortest_job_first_within_a_batch() {
        // Source 0 has 3 requests to bank 0; source 1 has one request to each of banks 1..3
        // (max-bank-load 1 < 3): source 1 ranks first, so on a tie in hit status its requests
        // win even though source 0's are older.
        let mut reqs: Vec<Req> = (0..3).map(|i| Req::read(i, 0, 0, 7, i as u32)).collect();
        for b in 1..4 {
            reqs.push(Req::read(2 + b as u64, 1, b, 7, 0));
        }
        let order = served_order(&cfg(5), &reqs);
        let first_source_1 = order.iter().position(|&id| id >= 3).unwrap();
        assert_eq!(first_source_1, 0, "source 1 (shortest job) is served first: {order:?}");
    }
}
