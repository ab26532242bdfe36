//! When a controller switches between draining reads and draining writes: the write queue's
//! watermarks and the idle drain (`write_idle_drain_min`, `write_idle_drain_timeout`). One rule,
//! read by both controller implementations.

use crate::config::ControllerConfig;
use crate::{Cycle, NEVER};

#[derive(Clone, Copy, Debug)]
pub struct WriteDrain {
    high: usize,
    low: usize,
    idle_min: usize,
    idle_timeout: u64,
}

impl WriteDrain {
    pub fn new(cfg: &ControllerConfig) -> Self {
        let high = ((cfg.write_queue as f64 * cfg.write_high_watermark).ceil() as usize).clamp(1, cfg.write_queue);
        let low = ((cfg.write_queue as f64 * cfg.write_low_watermark).floor() as usize).min(high - 1);
        WriteDrain { high, low, idle_min: cfg.write_idle_drain_min, idle_timeout: cfg.write_idle_drain_timeout }
    }

    /// Drain writes from the high watermark down to the low one, or whenever reads are absent
    /// and at least `write_idle_drain_min` writes wait (or the oldest has waited out the
    /// timeout: `idle_due`, the result of `idle_drain_due`, asked only when it matters).
    #[inline(always)]
    pub fn should_switch(&self, write_mode: bool, reads: usize, writes: usize, now: Cycle, idle_due: impl FnOnce() -> Cycle) -> bool {
        if write_mode {
            writes <= self.low && reads > 0
        } else {
            writes >= self.high || (reads == 0 && writes > 0 && (writes >= self.idle_min || idle_due() <= now))
        }
    }

    /// False when neither `should_switch` nor a finite `idle_drain_due` is possible with these
    /// queue lengths, whatever the cycle: a controller keeps it, updated where the lengths or the
    /// mode change, and skips both tests while it is false (bench/README.md, stop 17).
    #[inline(always)]
    pub fn may_switch(&self, write_mode: bool, reads: usize, writes: usize) -> bool {
        if write_mode {
            (writes <= self.low) & (reads > 0)
        } else {
            (writes >= self.high) | ((reads == 0) & (writes > 0))
        }
    }

    /// With reads absent and fewer than `write_idle_drain_min` writes waiting, the cycle the
    /// queues switch: the oldest write's arrival (`oldest_write`, asked only then) plus the
    /// timeout. `NEVER` otherwise.
    #[inline(always)]
    pub fn idle_drain_due(&self, write_mode: bool, reads: usize, writes: usize, oldest_write: impl FnOnce() -> Option<Cycle>) -> Cycle {
        if write_mode || reads > 0 || writes == 0 || writes >= self.idle_min {
            return NEVER;
        }
        oldest_write().map_or(NEVER, |a| a.saturating_add(self.idle_timeout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `may_switch` false must mean "no switch and no idle-drain wake-up" for every cycle and
    /// every oldest write, else the lane controller's cached test changes results.
    #[test]
    fn may_switch_false_rules_out_a_switch_and_an_idle_drain_wake_up() {
        for (queue, high, low, idle_min, timeout) in [(8, 0.8, 0.2, 1, 0), (8, 0.5, 0.25, 4, 30), (2, 1.0, 0.0, 3, 5), (1, 0.5, 0.5, 1, 10)] {
            let cfg = ControllerConfig {
                write_queue: queue,
                write_high_watermark: high,
                write_low_watermark: low,
                write_idle_drain_min: idle_min,
                write_idle_drain_timeout: timeout,
                ..ControllerConfig::default()
            };
            let d = WriteDrain::new(&cfg);
            let mut possible = 0;
            for write_mode in [false, true] {
                for reads in 0..4 {
                    for writes in 0..=queue {
                        let may = d.may_switch(write_mode, reads, writes);
                        for now in [0, 5, 40, 1000] {
                            for oldest in [0, 3, 100] {
                                let switch = d.should_switch(write_mode, reads, writes, now, || {
                                    d.idle_drain_due(write_mode, reads, writes, || Some(oldest))
                                });
                                let due = d.idle_drain_due(write_mode, reads, writes, || Some(oldest));
                                assert!(may || (!switch && due == NEVER), "{write_mode} {reads} {writes} {now} {oldest}: {d:?}");
                                possible += switch as u32;
                            }
                        }
                    }
                }
            }
            assert!(possible > 0);
        }
    }
}
