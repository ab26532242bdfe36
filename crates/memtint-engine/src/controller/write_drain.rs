//! When a controller switches between draining reads and draining writes: the write queue's
//! watermarks, the idle drain (`write_idle_drain_min`, `write_idle_drain_timeout`) and the
//! minimum writes per switch. One rule, read by both controller implementations; its values
//! come from `ControllerConfig::writes` (docs/stats.md, "Write handling").

use crate::controller::WriteSettings;
use crate::{Cycle, NEVER};

#[derive(Clone, Copy, Debug)]
pub struct WriteDrain {
    high: usize,
    low: usize,
    idle_min: usize,
    idle_timeout: u64,
    min_writes: usize,
}

impl WriteDrain {
    pub fn new(w: &WriteSettings) -> Self {
        WriteDrain {
            high: w.high_count(),
            low: w.low_count(),
            idle_min: w.idle_drain_min,
            idle_timeout: w.idle_drain_timeout,
            min_writes: w.min_per_switch,
        }
    }

    /// Drain writes from the high watermark down to the low one, or whenever reads are absent
    /// and at least `write_idle_drain_min` writes wait (or the oldest has waited out the
    /// timeout: `idle_due`, the result of `idle_drain_due`, asked only when it matters). A
    /// drain ends, with reads waiting, once at least `min_writes` writes were issued in it
    /// (`written`), or when the write queue is empty.
    #[inline(always)]
    pub fn should_switch(
        &self,
        write_mode: bool,
        reads: usize,
        writes: usize,
        written: usize,
        now: Cycle,
        idle_due: impl FnOnce() -> Cycle,
    ) -> bool {
        if write_mode {
            reads > 0 && (writes == 0 || (writes <= self.low && written >= self.min_writes))
        } else {
            writes >= self.high || (reads == 0 && writes > 0 && (writes >= self.idle_min || idle_due() <= now))
        }
    }

    /// False when neither `should_switch` nor a finite `idle_drain_due` is possible with these
    /// queue lengths, whatever the cycle and the writes issued: a controller keeps it, updated
    /// where the lengths or the mode change, and skips both tests while it is false.
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

    fn settings(queue: usize, high: f64, low: f64, idle_drain_min: usize, idle_drain_timeout: u64, min_per_switch: usize) -> WriteSettings {
        WriteSettings { queue, high_watermark: high, low_watermark: low, idle_drain_min, idle_drain_timeout, min_per_switch }
    }

    /// `may_switch` false must mean "no switch and no idle-drain wake-up" for every cycle,
    /// oldest write and writes issued, else the lane controller's cached test changes results.
    #[test]
    fn may_switch_false_rules_out_a_switch_and_an_idle_drain_wake_up() {
        for w in [
            settings(8, 0.8, 0.2, 1, 1, 0),
            settings(8, 0.5, 0.25, 4, 30, 3),
            settings(2, 1.0, 0.0, 2, 5, 1),
            settings(1, 0.5, 0.5, 1, 10, 0),
            settings(64, 0.85, 0.5, 33, 1000, 16),
        ] {
            let d = WriteDrain::new(&w);
            let mut possible = 0;
            for write_mode in [false, true] {
                for reads in 0..4 {
                    for writes in 0..=w.queue {
                        let may = d.may_switch(write_mode, reads, writes);
                        for written in [0, 1, 2, 16, 100] {
                            for now in [0, 5, 40, 1000, 5000] {
                                for oldest in [0, 3, 100] {
                                    let switch = d.should_switch(write_mode, reads, writes, written, now, || {
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
            }
            assert!(possible > 0);
        }
    }

    /// gem5's rule: with reads waiting, a drain that started at the high watermark goes on
    /// below the low watermark until 16 writes were issued; an empty write queue ends it early.
    #[test]
    fn a_drain_issues_the_minimum_writes_before_reads_resume() {
        let d = WriteDrain::new(&settings(64, 0.85, 0.5, 33, 1000, 16));
        assert!(d.should_switch(false, 5, 55, 0, 0, || NEVER), "55 of 64 is above 85 %");
        assert!(!d.should_switch(false, 5, 54, 0, 0, || NEVER));
        assert!(!d.should_switch(true, 5, 32, 15, 0, || NEVER), "15 writes are fewer than 16");
        assert!(d.should_switch(true, 5, 32, 16, 0, || NEVER));
        assert!(!d.should_switch(true, 5, 33, 40, 0, || NEVER), "33 is above the low watermark");
        assert!(d.should_switch(true, 5, 0, 3, 0, || NEVER), "nothing left to write");
        assert!(!d.should_switch(true, 0, 10, 40, 0, || NEVER), "no read waits");
    }

    /// With no read waiting, writes drain only above the low watermark (33 of 64), or once the
    /// oldest has waited out the timeout.
    #[test]
    fn an_idle_drain_waits_for_the_low_watermark_or_the_timeout() {
        let d = WriteDrain::new(&settings(64, 0.85, 0.5, 33, 1000, 16));
        assert!(d.should_switch(false, 0, 33, 0, 0, || NEVER));
        assert!(!d.should_switch(false, 0, 32, 0, 999, || d.idle_drain_due(false, 0, 32, || Some(0))));
        assert!(d.should_switch(false, 0, 32, 0, 1000, || d.idle_drain_due(false, 0, 32, || Some(0))));
    }
}
