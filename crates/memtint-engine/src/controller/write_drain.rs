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
