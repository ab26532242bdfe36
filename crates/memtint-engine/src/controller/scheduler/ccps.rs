//! CCPS's memory-request scheduler (Jia et al., IEEE Systems Journal 2017, §III.E; ccps.md §3):
//! (1) a request that has waited at least T cycles is served at once (oldest first among those),
//! then (2) requests of low-memory-request sources, (3) row hits, (4) oldest.
//!
//! The paper specifies neither T nor how "low memory request" is measured (ccps.md §3.2). The
//! choices, all configurable: T = 10 000 cycles [rec]; a source is low-memory-request when its
//! smoothed request rate at this controller (`IntensityMeter`: requests per 1000 controller cycles
//! over `epoch` = 1 M cycles, history weight `alpha` = 0.875 [rec]) is below
//! `low_intensity` = 10 [rec; about 1 MPKI, the TCM/IMPS cut-off, see imps.rs]. One class
//! bit per source, no ranking among light sources. Until its first epoch ends a source is not
//! low-memory-request.

use super::imps::{check_intensity, classify, HasLightClass, LightClass};
use super::intensity::IntensityMeter;
use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{Candidate, Period, Scheduler, SchedulerInfo};
use crate::controller::ControllerConfig;
use crate::controller::{BankQueue, Request, RowOutcome};
use crate::error::Result;
use crate::params::{ParamSchema, Params, Renamed, PERIOD_CYCLES};
use crate::Cycle;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    class: LightClass,
    served_aged: u64,
}

impl HasLightClass for Source {
    fn class(&mut self) -> &mut LightClass {
        &mut self.class
    }
}

/// `[controller.ccps]` (the placement half's parameters are `[os.ccps]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcpsParams {
    /// Epoch over which each source's request rate is measured (cycles).
    pub epoch: u64,
    /// A source below this many requests per 1000 cycles (smoothed) is "low memory request".
    pub low_intensity: f64,
    /// A request that has waited this long goes first (the paper's T).
    pub age_threshold: u64,
    /// Weight of history in the request-rate moving average.
    pub alpha: f64,
}

impl Default for CcpsParams {
    fn default() -> Self {
        CcpsParams { epoch: 1_000_000, low_intensity: 10.0, age_threshold: 10_000, alpha: 0.875 }
    }
}

impl Params for CcpsParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        check_intensity(self.epoch, self.low_intensity, self.alpha)?;
        PERIOD_CYCLES.from(0).check_params(&[("age_threshold", self.age_threshold)])
    }
}

/// The flat keys these parameters had (`intensity_alpha` was shared with IMPS).
const RENAMED: Renamed = &[
    ("ccps_epoch", "epoch"),
    ("ccps_low_intensity", "low_intensity"),
    ("ccps_age_threshold", "age_threshold"),
    ("intensity_alpha", "alpha"),
];

fn params(cfg: &ControllerConfig) -> Result<CcpsParams> {
    cfg.params(INFO.name, RENAMED)
}

fn periods(cfg: &ControllerConfig) -> Result<Vec<Period>> {
    Ok(vec![Period {
        key: "epoch",
        cycles: params(cfg)?.epoch,
        noun: "epoch",
        missed: "no source was classified as low-memory-request; only the age rule separates ccps from fr-fcfs",
    }])
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "ccps",
    summary: "waited T cycles first, then low-memory-request sources, then FR-FCFS (Jia et al., 2017)",
    fast_path: false,
    params: ParamSchema::of::<CcpsParams>(RENAMED),
    build: |cfg, _| Ok(Box::new(Ccps::new(&params(cfg)?))),
    periods,
};

pub struct Ccps {
    meter: IntensityMeter,
    threshold: f64,
    age: u64,
    now: Cycle,
    sources: PerSource<Source>,
}

impl Ccps {
    pub fn new(p: &CcpsParams) -> Self {
        Ccps {
            meter: IntensityMeter::new(p.epoch, p.alpha),
            threshold: p.low_intensity,
            age: p.age_threshold,
            now: 0,
            sources: PerSource::new(),
        }
    }
}

impl Scheduler for Ccps {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        if self.now.saturating_sub(c.arrival) >= self.age {
            // Aged: ahead of everything else, oldest first among the aged.
            return KeyBuilder::new().prefer(true).prefer(true).prefer(true).oldest(c.seq);
        }
        KeyBuilder::new().prefer(false).prefer(self.sources.get(c.source).is_some_and(|s| s.class.light)).prefer(c.is_hit).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_arrival(&mut self, _now: Cycle, req: &Request) {
        self.meter.record(req.source);
    }

    fn on_served(&mut self, now: Cycle, req: &Request, _outcome: RowOutcome) {
        if now.saturating_sub(req.arrival) >= self.age {
            self.sources.get_mut(req.source).served_aged += 1;
        }
    }

    fn advance(&mut self, now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        self.now = now;
        self.meter.advance(now) && classify(&self.meter, self.threshold, &mut self.sources)
    }

    fn next_change(&self) -> Cycle {
        self.meter.epoch_end()
    }

    fn age_threshold(&self) -> Option<u64> {
        Some(self.age)
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        let epochs = self.meter.epochs();
        self.sources
            .iter()
            .map(|(i, s)| (i, BTreeMap::from([("light_epochs", s.class.light_epochs), ("epochs", epochs), ("served_aged", s.served_aged)])))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{self, served_order, Req};
    use super::super::{Candidate, Scheduler};
    use super::*;
    use crate::dram::Command;

    fn cand(source: u32, seq: u64, arrival: Cycle, is_hit: bool) -> Candidate {
        Candidate { command: Command::Rd, is_hit, flat_bank: 0, arrival, seq, source, process: source }
    }

    /// A CCPS scheduler at `now` in which source 1 is low-memory-request and source 0 is not.
    fn ccps_at(now: Cycle) -> Ccps {
        let mut s = Ccps::new(&CcpsParams { epoch: 1000, low_intensity: 5.0, age_threshold: 500, ..Default::default() });
        for i in 0..20 {
            let r = Request { source: 0, seq: i, ..test_request() };
            s.on_arrival(0, &r);
        }
        s.on_arrival(0, &Request { source: 1, ..test_request() });
        s.advance(now, &[vec![], vec![]]);
        s
    }

    fn test_request() -> Request {
        test_support::request(0, 0, 0)
    }

    #[test]
    fn ccps_low_memory_request_miss_beats_a_heavy_hit() {
        let s = ccps_at(1200);
        assert!(s.key(&cand(1, 10, 1100, false)) < s.key(&cand(0, 5, 1100, true)));
        assert!(s.key(&cand(0, 5, 1100, true)) < s.key(&cand(0, 4, 1100, false)), "then row hit");
        assert!(s.key(&cand(0, 4, 1100, false)) < s.key(&cand(0, 6, 1100, false)), "then oldest");
    }

    #[test]
    fn ccps_aged_request_beats_everything() {
        let s = ccps_at(1700);
        // Waited 600 >= T = 500: a heavy source's miss goes before a light source's hit.
        assert!(s.key(&cand(0, 9, 1100, false)) < s.key(&cand(1, 1, 1600, true)));
        // Among aged requests, oldest first regardless of class.
        assert!(s.key(&cand(0, 3, 1100, false)) < s.key(&cand(1, 4, 1150, true)));
    }

    #[test]
    fn ccps_classifies_per_epoch() {
        let s = ccps_at(999);
        // Before the first epoch ends nobody is light: plain FR-FCFS order.
        assert!(s.key(&cand(0, 5, 900, true)) < s.key(&cand(1, 1, 900, false)));
    }

    #[test]
    fn ccps_serves_the_light_source_and_the_aged_request_on_a_queue() {
        let cfg = ControllerConfig { scheduler: "ccps".into(), ..ControllerConfig::default() }
            .with_param("ccps", "epoch", 1000)
            .with_param("ccps", "low_intensity", 5.0)
            .with_param("ccps", "age_threshold", 60);
        let mut reqs: Vec<Req> = (0..30).map(|i| Req::read(i, 0, (i % 8) as u32, 1, i as u32)).collect();
        reqs.push(Req::read(30, 1, 7, 1, 0));
        // Epoch 2: heavy hits to bank 0 (arriving faster than they are served), a light miss to
        // bank 0, and a heavy miss to bank 0 that only ageing brings before the younger hits.
        for i in 0..40 {
            reqs.push(Req::read(100 + i, 0, 0, 2, i as u32).at(1100 + 2 * i));
        }
        reqs.push(Req::read(200, 1, 0, 3, 0).at(1101));
        reqs.push(Req::read(300, 0, 0, 5, 0).at(1102));
        let order = served_order(&cfg, &reqs);
        let pos = |id| order.iter().position(|&x| x == id).unwrap();
        assert!(pos(200) < pos(101), "light first: {order:?}");
        assert!(pos(300) < pos(139), "aged before the remaining hits: {order:?}");
    }
}
