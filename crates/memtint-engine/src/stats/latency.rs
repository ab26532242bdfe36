//! An exact latency distribution: a count per cycle value, so percentiles are exact and memory
//! is bounded by the largest latency, not the number of requests.

use serde::Serialize;

#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
}

/// Summary in the documented schema: mean, p50, p90, p99, p999, max.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencySummary {
    pub fn scaled(&self, k: f64) -> Self {
        LatencySummary {
            mean: self.mean * k,
            p50: self.p50 * k,
            p90: self.p90 * k,
            p99: self.p99 * k,
            p999: self.p999 * k,
            max: self.max * k,
        }
    }
}

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, value: u64) {
        let v = value as usize;
        if v >= self.counts.len() {
            self.counts.resize((v + 1).next_power_of_two(), 0);
        }
        self.counts[v] += 1;
        self.total += 1;
        self.sum += value as u128;
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
    }

    /// The latencies recorded since `earlier`, a copy of this histogram taken then.
    pub fn since(&self, earlier: &LatencyHistogram) -> LatencyHistogram {
        let mut counts = self.counts.clone();
        for (a, b) in counts.iter_mut().zip(&earlier.counts) {
            *a -= b;
        }
        LatencyHistogram { counts, total: self.total - earlier.total, sum: self.sum - earlier.sum }
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The smallest value v with at least q of the samples <= v (nearest-rank percentile).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (v, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return v as u64;
            }
        }
        unreachable!("rank is at most total")
    }

    pub fn max(&self) -> u64 {
        self.counts.iter().rposition(|&c| c > 0).unwrap_or(0) as u64
    }

    /// No latency recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The summary, with every figure NaN (null in JSON) when nothing was recorded: a mean of 0
    /// ns for a core without DRAM reads pulled any average over cores towards zero.
    pub fn summary_or_none(&self) -> LatencySummary {
        if self.is_empty() {
            let none = f64::NAN;
            return LatencySummary { mean: none, p50: none, p90: none, p99: none, p999: none, max: none };
        }
        self.summary()
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            mean: self.mean(),
            p50: self.quantile(0.50) as f64,
            p90: self.quantile(0.90) as f64,
            p99: self.quantile(0.99) as f64,
            p999: self.quantile(0.999) as f64,
            max: self.max() as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut h = LatencyHistogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 50);
        assert_eq!(h.quantile(0.9), 90);
        assert_eq!(h.quantile(0.99), 99);
        assert_eq!(h.quantile(0.999), 100);
        assert_eq!(h.max(), 100);
        assert!((h.mean() - 50.5).abs() < 1e-12);
    }

    #[test]
    fn empty_histogram_summarises_to_zero() {
        assert_eq!(LatencyHistogram::default().summary(), LatencySummary::default());
    }
}
