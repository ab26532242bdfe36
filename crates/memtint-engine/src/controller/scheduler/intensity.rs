//! Per-source memory intensity as the controller measures it: requests received per 1000
//! controller cycles over an epoch, smoothed across epochs (`ema = alpha * ema + (1 - alpha) *
//! rate`). IMPS and CCPS classify sources as light with it. The papers use LLC misses per kilo-
//! instruction (MPKI); a controller does not see instructions, and at a fixed core speed the
//! rate is MPKI times IPC times the core-to-DRAM clock ratio, divided over the channels. A source
//! with no request in an epoch has rate 0.

use super::per_source::PerSource;
use crate::Cycle;

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    requests: u64,
    /// Smoothed rate; `None` until the source's first epoch has ended.
    ema: Option<f64>,
}

pub struct IntensityMeter {
    epoch: u64,
    alpha: f64,
    epoch_end: Cycle,
    sources: PerSource<Source>,
    epochs: u64,
}

impl IntensityMeter {
    pub fn new(epoch: u64, alpha: f64) -> Self {
        IntensityMeter { epoch, alpha, epoch_end: epoch, sources: PerSource::new(), epochs: 0 }
    }

    pub fn record(&mut self, source: u32) {
        self.sources.get_mut(source).requests += 1;
    }

    /// End every epoch that finished by `now`; true if any did.
    pub fn advance(&mut self, now: Cycle) -> bool {
        let mut ended = false;
        while now >= self.epoch_end {
            for (_, s) in self.sources.iter_mut() {
                let rate = s.requests as f64 * 1000.0 / self.epoch as f64;
                s.ema = Some(match s.ema {
                    Some(e) => self.alpha * e + (1.0 - self.alpha) * rate,
                    None => rate,
                });
                s.requests = 0;
            }
            self.epoch_end += self.epoch;
            self.epochs += 1;
            ended = true;
        }
        ended
    }

    /// The smoothed rate of `source` (requests per 1000 cycles), `None` before its first epoch.
    pub fn rate(&self, source: u32) -> Option<f64> {
        self.sources.get(source).ema
    }

    pub fn epoch_end(&self) -> Cycle {
        self.epoch_end
    }

    pub fn epochs(&self) -> u64 {
        self.epochs
    }

    pub fn sources(&self) -> usize {
        self.sources.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_requests_per_kilocycle_smoothed_over_epochs() {
        let mut m = IntensityMeter::new(1000, 0.5);
        for _ in 0..10 {
            m.record(1);
        }
        assert!(!m.advance(999));
        assert_eq!(m.rate(1), None);
        assert!(m.advance(1000));
        assert_eq!(m.rate(1), Some(10.0));
        assert_eq!(m.rate(0), Some(0.0), "a silent source in the table has rate 0");
        assert!(m.advance(2000));
        assert_eq!(m.rate(1), Some(5.0), "half history, half this epoch's 0");
    }
}
