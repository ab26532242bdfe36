//! IMPS's scheduling half (Muralidhara et al., MICRO 2011, "integrated memory partitioning and
//! scheduling"): requests of very light applications carry a priority bit and go first; the rest
//! is FR-FCFS (row hit, then oldest). The placement half (MCP: preferred channels by intensity and
//! row-buffer locality) is an OS placement policy, not part of the controller.
//!
//! What comes from where: the rule is from the MICRO'11 abstract (ccps.md §5.4 [ext]). The paper
//! classifies by MPKI with a "very low" threshold of about 1-1.5 MPKI [ext, unverified] per
//! profiling interval; here the controller measures its own intensity (`IntensityMeter`: requests
//! per 1000 controller cycles, smoothed) over `epoch` (1 M cycles [rec]) against
//! `low_intensity` (10 [rec]: about 1-1.5 MPKI for a core retiring 3 instructions per cycle
//! at 2.7-4.2 times the controller clock, over 1-2 channels; e.g. the `light` profile, 0.6 MPKI,
//! measures 3.5-5 on i7-860 and ddr4-2400, `stream` over 100). Until a source's first epoch ends
//! it is not light.

use super::intensity::IntensityMeter;
use super::key::KeyBuilder;
use super::per_source::PerSource;
use super::{Candidate, Period, Scheduler, SchedulerInfo};
use crate::controller::ControllerConfig;
use crate::controller::{BankQueue, Request};
use crate::error::Result;
use crate::params::{ParamSchema, Params, Renamed, PERIOD_CYCLES};
use crate::Cycle;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A source's intensity class: light or not, and in how many epochs it was light.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LightClass {
    pub light: bool,
    pub light_epochs: u64,
}

impl LightClass {
    /// The class after an epoch; true if it changed.
    fn set(&mut self, light: bool) -> bool {
        let changed = self.light != light;
        self.light = light;
        self.light_epochs += light as u64;
        changed
    }
}

/// Per-source state that holds a `LightClass` (IMPS's is nothing else).
pub(super) trait HasLightClass: Default + Clone {
    fn class(&mut self) -> &mut LightClass;
}

impl HasLightClass for LightClass {
    fn class(&mut self) -> &mut LightClass {
        self
    }
}

/// `[controller.imps]`; `[controller.ccps]` has the same rate measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImpsParams {
    /// Epoch over which each source's request rate is measured (cycles).
    pub epoch: u64,
    /// A source below this many requests per 1000 cycles (smoothed) is "very light".
    pub low_intensity: f64,
    /// Weight of history in the request-rate moving average.
    pub alpha: f64,
}

impl Default for ImpsParams {
    fn default() -> Self {
        ImpsParams { epoch: 1_000_000, low_intensity: 10.0, alpha: 0.875 }
    }
}

/// Checks of an intensity measurement's parameters (IMPS's and CCPS's).
pub(super) fn check_intensity(epoch: u64, low_intensity: f64, alpha: f64) -> std::result::Result<(), (&'static str, String)> {
    PERIOD_CYCLES.check_params(&[("epoch", epoch)])?;
    if !(low_intensity >= 0.0 && low_intensity.is_finite()) {
        return Err(("low_intensity", format!("must be a finite number >= 0, got {low_intensity}")));
    }
    if !(0.0..1.0).contains(&alpha) {
        return Err(("alpha", format!("must be in [0, 1), got {alpha}")));
    }
    Ok(())
}

impl Params for ImpsParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        check_intensity(self.epoch, self.low_intensity, self.alpha)
    }
}

/// The flat keys these parameters had (`intensity_alpha` was shared with CCPS).
const RENAMED: Renamed = &[("imps_epoch", "epoch"), ("imps_low_intensity", "low_intensity"), ("intensity_alpha", "alpha")];

fn params(cfg: &ControllerConfig) -> Result<ImpsParams> {
    cfg.params(INFO.name, RENAMED)
}

fn periods(cfg: &ControllerConfig) -> Result<Vec<Period>> {
    Ok(vec![Period {
        key: "epoch",
        cycles: params(cfg)?.epoch,
        noun: "epoch",
        missed: "no source was classified as very light, so the schedule equals fr-fcfs's",
    }])
}

/// Registered in `scheduler::SCHEDULERS`.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "imps",
    summary: "very light sources first, then FR-FCFS (IMPS's scheduler, Muralidhara et al., MICRO 2011)",
    fast_path: false,
    params: ParamSchema::of::<ImpsParams>(RENAMED),
    build: |cfg, _| {
        let p = params(cfg)?;
        Ok(Box::new(Imps::new(p.epoch, p.low_intensity, p.alpha)))
    },
    periods,
};

pub struct Imps {
    meter: IntensityMeter,
    threshold: f64,
    sources: PerSource<LightClass>,
}

impl Imps {
    pub fn new(epoch: u64, threshold: f64, alpha: f64) -> Self {
        Imps { meter: IntensityMeter::new(epoch, alpha), threshold, sources: PerSource::new() }
    }
}

/// Re-classify every measured source after an epoch; true if any class changed.
pub(super) fn classify(meter: &IntensityMeter, threshold: f64, sources: &mut PerSource<impl HasLightClass>) -> bool {
    let mut changed = false;
    for s in 0..meter.sources() as u32 {
        let is_light = meter.rate(s).is_some_and(|r| r < threshold);
        changed |= sources.get_mut(s).class().set(is_light);
    }
    changed
}

impl Scheduler for Imps {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn key(&self, c: &Candidate) -> u64 {
        KeyBuilder::new().prefer(self.sources.get(c.source).is_some_and(|s| s.light)).prefer(c.is_hit).oldest(c.seq)
    }

    fn ranks_requests(&self) -> bool {
        true
    }

    fn on_arrival(&mut self, _now: Cycle, req: &Request) {
        self.meter.record(req.source);
    }

    fn advance(&mut self, now: Cycle, _queues: &[Vec<BankQueue>; 2]) -> bool {
        self.meter.advance(now) && classify(&self.meter, self.threshold, &mut self.sources)
    }

    fn next_change(&self) -> Cycle {
        self.meter.epoch_end()
    }

    fn source_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        let epochs = self.meter.epochs();
        self.sources.iter().map(|(i, s)| (i, BTreeMap::from([("light_epochs", s.light_epochs), ("epochs", epochs)]))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{served_order, Req};
    use crate::config::ControllerConfig;

    #[test]
    fn imps_serves_a_light_source_before_row_hits_of_a_heavy_one() {
        let cfg = ControllerConfig { scheduler: "imps".into(), ..ControllerConfig::default() }
            .with_param("imps", "epoch", 1000)
            .with_param("imps", "low_intensity", 5.0);
        // Epoch 1: source 0 sends 30 requests (30 per kilocycle: heavy), source 1 one (light).
        let mut reqs: Vec<Req> = (0..30).map(|i| Req::read(i, 0, (i % 8) as u32, 1, i as u32)).collect();
        reqs.push(Req::read(30, 1, 7, 1, 0));
        // Epoch 2: source 0's hits to row 2 of bank 0, then source 1's miss to row 3.
        for i in 0..8 {
            reqs.push(Req::read(100 + i, 0, 0, 2, i as u32).at(1100));
        }
        reqs.push(Req::read(200, 1, 0, 3, 0).at(1101));
        let order = served_order(&cfg, &reqs);
        let pos = |id| order.iter().position(|&x| x == id).unwrap();
        assert!(pos(200) < pos(101), "{order:?}");
    }
}
