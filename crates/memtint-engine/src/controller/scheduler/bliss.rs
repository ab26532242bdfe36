//! BLISS, the blacklisting memory scheduler (Subramanian et al., ICCD 2014, its mechanism): the controller
//! counts consecutive requests served from one source; when a source's run exceeds the
//! blacklisting threshold (4), so at its fifth request in a row, it is blacklisted, and the
//! blacklist is cleared every clearing interval (10 000 cycles). Order: non-blacklisted first,
//! then row hit, then oldest. "Exceeds" follows the paper's wording and Ramulator 2's BLISS
//! plugin. Defaults [ext, the BLISS paper's evaluated configuration, as in Ramulator 2; not in
//! ccps.md].

use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{Candidate, Period, Scheduler, SchedulerInfo};
use crate::controller::ControllerConfig;
use crate::controller::{BankQueue, Request, RowOutcome};
use crate::error::Result;
use crate::params::{at_least_one, ParamSchema, Params, Renamed, PERIOD_CYCLES};
use crate::{Cycle, NEVER};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    blacklisted: bool,
    times_blacklisted: u64,
    served: u64,
}

/// `[controller.bliss]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlissParams {
    /// A source served more than this many requests in a row is blacklisted.
    pub threshold: u32,
    /// The blacklist is cleared this often (cycles).
    pub clearing_interval: u64,
}

impl Default for BlissParams {
    fn default() -> Self {
        BlissParams { threshold: 4, clearing_interval: 10_000 }
    }
}

impl Params for BlissParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        at_least_one(&[("threshold", self.threshold as u64)])?;
        PERIOD_CYCLES.check_params(&[("clearing_interval", self.clearing_interval)])
    }
}

/// The flat keys these parameters had.
const RENAMED: Renamed = &[("bliss_threshold", "threshold"), ("bliss_clearing_interval", "clearing_interval")];

fn params(cfg: &ControllerConfig) -> Result<BlissParams> {
    cfg.params(INFO.name, RENAMED)
}

fn periods(cfg: &ControllerConfig) -> Result<Vec<Period>> {
    Ok(vec![Period {
        key: "clearing_interval",
        cycles: params(cfg)?.clearing_interval,
        noun: "clearing interval",
        missed: "the blacklist was never cleared",
    }])
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "bliss",
    summary: "blacklists sources served many times in a row (Subramanian et al., ICCD 2014)",
    fast_path: false,
    params: ParamSchema::of::<BlissParams>(RENAMED),
    build: |cfg, _| {
        let p = params(cfg)?;
        Ok(Box::new(Bliss::new(p.threshold, p.clearing_interval)))
    },
    periods,
};

pub struct Bliss {
    threshold: u32,
    interval: u64,
    next_clear: Cycle,
    last_source: Option<u32>,
    run: u32,
    /// A source was blacklisted since the last `advance`.
    changed: bool,
    any_blacklisted: bool,
    sources: PerSource<Source>,
}

impl Bliss {
    pub fn new(threshold: u32, interval: u64) -> Self {
        Bliss {
            threshold,
            interval,
            next_clear: interval,
            last_source: None,
            run: 0,
            changed: false,
            any_blacklisted: false,
            sources: PerSource::new(),
        }
    }

    pub fn is_blacklisted(&self, source: u32) -> bool {
        self.sources.get(source).is_some_and(|s| s.blacklisted)
    }
}

impl Scheduler for Bliss {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        KeyBuilder::new().prefer(!self.is_blacklisted(c.source)).prefer(c.is_hit).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_served(&mut self, _now: Cycle, req: &Request, _outcome: RowOutcome) {
        if self.last_source == Some(req.source) {
            self.run += 1;
        } else {
            self.last_source = Some(req.source);
            self.run = 1;
        }
        let s = self.sources.get_mut(req.source);
        s.served += 1;
        if self.run > self.threshold && !s.blacklisted {
            s.blacklisted = true;
            s.times_blacklisted += 1;
            self.changed = true;
            self.any_blacklisted = true;
        }
    }

    fn advance(&mut self, now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        let mut changed = std::mem::take(&mut self.changed);
        if now >= self.next_clear {
            self.next_clear += (now - self.next_clear) / self.interval * self.interval + self.interval;
            if self.any_blacklisted {
                for (_, s) in self.sources.iter_mut() {
                    s.blacklisted = false;
                }
                self.any_blacklisted = false;
                changed = true;
            }
        }
        changed
    }

    fn next_change(&self) -> Cycle {
        if self.any_blacklisted {
            self.next_clear
        } else {
            NEVER
        }
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.sources.iter().map(|(i, s)| (i, BTreeMap::from([("served", s.served), ("times_blacklisted", s.times_blacklisted)]))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{self, served_order, Req};
    use super::*;
    use crate::config::ControllerConfig;

    fn cfg(interval: u64) -> ControllerConfig {
        ControllerConfig { scheduler: "bliss".into(), ..ControllerConfig::default() }.with_param("bliss", "threshold", 4).with_param(
            "bliss",
            "clearing_interval",
            interval,
        )
    }

    fn req(source: u32, seq: u64) -> Request {
        Request { id: seq, seq, ..test_support::request(source, 0, 0) }
    }

    #[test]
    fn bliss_blacklists_a_source_served_more_than_threshold_times_in_a_row() {
        let mut b = Bliss::new(4, 10_000);
        let none: [Vec<BankQueue>; 2] = [vec![], vec![]];
        for i in 0..4 {
            b.on_served(10, &req(0, i), RowOutcome::Hit);
        }
        assert!(!b.advance(11, &none) && !b.is_blacklisted(0), "a run of 4 only reaches the threshold");
        b.on_served(11, &req(1, 4), RowOutcome::Hit);
        for i in 5..9 {
            b.on_served(12, &req(0, i), RowOutcome::Hit);
        }
        assert!(!b.advance(13, &none) && !b.is_blacklisted(0), "another source broke the run");
        b.on_served(13, &req(0, 9), RowOutcome::Hit);
        assert!(b.advance(14, &none), "the blacklisting changes priorities");
        assert!(b.is_blacklisted(0) && !b.is_blacklisted(1));
    }

    #[test]
    fn bliss_clears_blacklist_each_interval() {
        let mut b = Bliss::new(4, 1000);
        let none: [Vec<BankQueue>; 2] = [vec![], vec![]];
        for i in 0..5 {
            b.on_served(10, &req(2, i), RowOutcome::Hit);
        }
        b.advance(20, &none);
        assert!(b.is_blacklisted(2));
        assert_eq!(b.next_change(), 1000, "the controller must wake at the clearing");
        assert!(!b.advance(999, &none));
        assert!(b.advance(1000, &none));
        assert!(!b.is_blacklisted(2));
        assert_eq!(b.next_change(), NEVER, "nothing to clear");
    }

    #[test]
    fn bliss_lets_another_source_overtake_a_blacklisted_stream() {
        // Source 0's twelve hits to one row; source 1's request to another row of the bank
        // arrives after them. After five served hits source 0 is blacklisted and source 1's
        // request goes next.
        let mut reqs: Vec<Req> = (0..12).map(|i| Req::read(i, 0, 0, 4, i as u32)).collect();
        reqs.push(Req::read(50, 1, 0, 6, 0).at(2));
        let order = served_order(&cfg(100_000), &reqs);
        assert_eq!(order[5], 50, "{order:?}");
        let fr = served_order(&ControllerConfig { scheduler: "fr-fcfs".into(), ..cfg(100_000) }, &reqs);
        assert_eq!(fr.last(), Some(&50));
    }
}
