//! Core and DRAM clock domains: an exact rational ratio between the two frequencies, and
//! conversions that round towards the later cycle, so an event is never seen early and never
//! skipped.

use crate::error::{Error, Result};
use crate::{Cycle, NEVER};

/// `core` core cycles take as long as `dram` DRAM cycles (both reduced, non-zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRatio {
    core: u64,
    dram: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl ClockRatio {
    /// From two frequencies in the same unit (e.g. MHz: `new(3200, 1200)` is 8:3).
    pub fn new(core_freq: u64, dram_freq: u64) -> Result<Self> {
        if core_freq == 0 || dram_freq == 0 {
            return Err(Error::config("clock", format!("frequencies must be positive, got core {core_freq}, DRAM {dram_freq}")));
        }
        let g = gcd(core_freq, dram_freq);
        Ok(ClockRatio { core: core_freq / g, dram: dram_freq / g })
    }

    /// From frequencies in GHz: the simplest ratio within 0.1 % of theirs. Device presets
    /// quote tCK rounded (0.833 ns for 1200 MHz), so the exact decimal ratio would be a
    /// meaningless 2665:1000 instead of Ramulator's 8:3.
    pub fn from_ghz(core_ghz: f64, dram_ghz: f64) -> Result<Self> {
        if !(core_ghz.is_finite() && core_ghz > 0.0 && dram_ghz.is_finite() && dram_ghz > 0.0) {
            return Err(Error::config("clock", format!("frequencies must be positive, got core {core_ghz} GHz, DRAM {dram_ghz} GHz")));
        }
        let x0 = core_ghz / dram_ghz;
        // Continued-fraction convergents h/k of x0, until one is close enough.
        let (mut h1, mut h2, mut k1, mut k2) = (1u64, 0u64, 0u64, 1u64);
        let mut x = x0;
        for _ in 0..32 {
            let a = x.floor();
            if a > 1e9 {
                break;
            }
            let a = a as u64;
            let (h, k) = (a * h1 + h2, a * k1 + k2);
            (h2, h1, k2, k1) = (h1, h, k1, k);
            if h > 0 && ((h as f64 / k as f64) - x0).abs() <= 1e-3 * x0 {
                break;
            }
            let frac = x - a as f64;
            if frac < 1e-12 || k > 1_000_000 {
                break;
            }
            x = 1.0 / frac;
        }
        Self::new(h1.max(1), k1.max(1))
    }

    /// Core cycles per `dram()` DRAM cycles.
    pub fn core(&self) -> u64 {
        self.core
    }

    pub fn dram(&self) -> u64 {
        self.dram
    }

    /// The first core cycle at or after DRAM cycle `d` (`NEVER` stays `NEVER`).
    pub fn dram_to_core_ceil(&self, d: Cycle) -> Cycle {
        convert_ceil(d, self.core, self.dram)
    }

    /// Does DRAM cycle `d` begin no later than core cycle `c`? (`dram_to_core_ceil(d) <= c`
    /// without a division.)
    #[inline]
    pub fn dram_not_after_core(&self, d: Cycle, c: Cycle) -> bool {
        (d as u128) * (self.core as u128) <= (c as u128) * (self.dram as u128)
    }

    /// The last core cycle at or before DRAM cycle `d`.
    pub fn dram_to_core_floor(&self, d: Cycle) -> Cycle {
        convert_floor(d, self.core, self.dram)
    }

    /// The first DRAM cycle at or after core cycle `c` (`NEVER` stays `NEVER`).
    pub fn core_to_dram_ceil(&self, c: Cycle) -> Cycle {
        convert_ceil(c, self.dram, self.core)
    }

    /// The last DRAM cycle at or before core cycle `c`.
    pub fn core_to_dram_floor(&self, c: Cycle) -> Cycle {
        convert_floor(c, self.dram, self.core)
    }
}

fn convert_ceil(x: u64, num: u64, den: u64) -> u64 {
    if x == NEVER {
        return NEVER;
    }
    // 64-bit arithmetic when the product fits (always, in practice): u128 division is slow.
    if let Some(p) = x.checked_mul(num) {
        return p.div_ceil(den);
    }
    let v = (x as u128 * num as u128).div_ceil(den as u128);
    v.min(NEVER as u128) as u64
}

fn convert_floor(x: u64, num: u64, den: u64) -> u64 {
    if x == NEVER {
        return NEVER;
    }
    if let Some(p) = x.checked_mul(num) {
        return p / den;
    }
    let v = x as u128 * num as u128 / den as u128;
    v.min(NEVER as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dram_not_after_core_agrees_with_the_ceiling_conversion() {
        for (core, dram) in [(8, 3), (7, 2), (1, 1), (3, 8)] {
            let r = ClockRatio::new(core, dram).unwrap();
            for d in 0..200 {
                for c in 0..200 {
                    assert_eq!(r.dram_not_after_core(d, c), r.dram_to_core_ceil(d) <= c, "{core}:{dram} d {d} c {c}");
                }
            }
        }
    }

    #[test]
    fn core_3_2_ghz_over_ddr4_2400_is_8_to_3() {
        let r = ClockRatio::from_ghz(3.2, 1.2).unwrap();
        assert_eq!((r.core(), r.dram()), (8, 3));
        // A preset's rounded tCK (0.833 ns) still gives the same ratio.
        assert_eq!(ClockRatio::from_ghz(3.2, 1.0 / 0.833).unwrap(), r);
        assert_eq!(ClockRatio::new(3200, 1200).unwrap(), r);
        assert_eq!(ClockRatio::from_ghz(4.0, 0.8).unwrap(), ClockRatio::new(5, 1).unwrap());
    }

    #[test]
    fn conversions_round_towards_the_later_cycle_and_never_lose_events() {
        let r = ClockRatio::new(8, 3).unwrap();
        assert_eq!(r.dram_to_core_ceil(3), 8);
        assert_eq!(r.dram_to_core_ceil(1), 3); // 2.67 -> 3
        assert_eq!(r.dram_to_core_floor(1), 2);
        assert_eq!(r.core_to_dram_ceil(8), 3);
        assert_eq!(r.core_to_dram_ceil(1), 1); // 0.375 -> 1
        assert_eq!(r.core_to_dram_floor(5), 1);
        for d in 0..1000u64 {
            let c = r.dram_to_core_ceil(d);
            // c is not earlier than d, and c - 1 is earlier: the first core cycle at or after d.
            assert!(c * 3 >= d * 8 && (c == 0 || (c - 1) * 3 < d * 8));
            // Back to DRAM: the event is found again, not later than d.
            assert_eq!(r.core_to_dram_floor(c), d);
            assert!(r.core_to_dram_ceil(c) >= d);
        }
        assert_eq!(r.dram_to_core_ceil(NEVER), NEVER);
        assert_eq!(r.core_to_dram_ceil(NEVER), NEVER);
        assert_eq!(r.dram_to_core_ceil(NEVER - 1), NEVER);
    }

    #[test]
    fn zero_or_negative_frequencies_are_errors() {
        assert!(ClockRatio::new(0, 3).is_err());
        assert!(ClockRatio::from_ghz(-1.0, 1.2).is_err());
        assert!(ClockRatio::from_ghz(3.2, f64::NAN).is_err());
    }
}
