//! Refresh cycle times by device density, for density sweeps and DDR4 fine-granularity refresh
//! (FGR). A REF refreshes one bin of rows; denser devices have more rows per bin, so tRFC grows
//! with density while tREFI (7.8 µs below 85 °C) does not.
//!
//! Sources, per row (`TrfcRow::source`):
//! - JEDEC DDR3 (JESD79-3F) tRFC for 1-8 Gb and JEDEC DDR4 (JESD79-4) tRFC1/2/4 for 2-16 Gb. The
//!   two standards agree where both define a density (2, 4, 8 Gb: 160, 260, 350 ns).
//! - 32 and 64 Gb: the Pan thesis's Table 4.1 (after RAIDR), which gives lower bounds ("≥ 1 µs",
//!   "≥ 2 µs"); memtint uses the bounds.
//! - FGR 2x/4x where JEDEC gives none (1, 32, 64 Gb): the 1x value times the nearest JEDEC
//!   density's ratio tRFC2/tRFC1 or tRFC4/tRFC1 (2 Gb's for 1 Gb, 16 Gb's above), marked
//!   "extrapolated".

use crate::dram::Standard;
use crate::error::{Error, Result};

/// One density's refresh cycle times, nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrfcRow {
    pub density_gbit: u32,
    /// 1x mode (DDR3's only mode).
    pub trfc1_ns: f64,
    /// DDR4 FGR 2x and 4x modes (tREFI / 2 and / 4).
    pub trfc2_ns: f64,
    pub trfc4_ns: f64,
    pub source: &'static str,
}

const fn row(density_gbit: u32, trfc1_ns: f64, trfc2_ns: f64, trfc4_ns: f64, source: &'static str) -> TrfcRow {
    TrfcRow { density_gbit, trfc1_ns, trfc2_ns, trfc4_ns, source }
}

// 2 Gb's ratios for 1 Gb, 16 Gb's for 32 and 64 Gb (see the module text).
const LOW_2X: f64 = 110.0 / 160.0;
const LOW_4X: f64 = 90.0 / 160.0;
const HIGH_2X: f64 = 350.0 / 550.0;
const HIGH_4X: f64 = 260.0 / 550.0;

/// Every density the table covers, ascending.
pub const TRFC_TABLE: &[TrfcRow] = &[
    row(1, 110.0, 110.0 * LOW_2X, 110.0 * LOW_4X, "JEDEC DDR3 (1x); 2x/4x extrapolated"),
    row(2, 160.0, 110.0, 90.0, "JEDEC DDR3/DDR4"),
    row(4, 260.0, 160.0, 110.0, "JEDEC DDR3/DDR4"),
    row(8, 350.0, 260.0, 160.0, "JEDEC DDR3/DDR4"),
    row(16, 550.0, 350.0, 260.0, "JEDEC DDR4"),
    row(32, 1000.0, 1000.0 * HIGH_2X, 1000.0 * HIGH_4X, "Pan thesis Table 4.1 lower bound; 2x/4x extrapolated"),
    row(64, 2000.0, 2000.0 * HIGH_2X, 2000.0 * HIGH_4X, "Pan thesis Table 4.1 lower bound; 2x/4x extrapolated"),
];

/// The FGR modes: tREFI is divided by the granularity.
pub const GRANULARITIES: [u32; 3] = [1, 2, 4];

/// The table's row for `density_gbit` on a device of `standard`; `key` names the setting that
/// asked, for the error.
pub fn trfc_row(standard: Standard, density_gbit: u32, key: &str) -> Result<&'static TrfcRow> {
    if !matches!(standard, Standard::Ddr3 | Standard::Ddr4) {
        return Err(Error::config(
            key,
            format!("the refresh-timing table holds DDR3 and DDR4 values; a {} device gives its own tRFC only", standard.name()),
        ));
    }
    TRFC_TABLE.iter().find(|r| r.density_gbit == density_gbit).ok_or_else(|| {
        let known: Vec<String> = TRFC_TABLE.iter().map(|r| r.density_gbit.to_string()).collect();
        Error::config(key, format!("no tRFC for {density_gbit} Gb devices; the table covers {} Gb", known.join(", ")))
    })
}

impl TrfcRow {
    /// tRFC of FGR mode `granularity` (1, 2 or 4).
    pub fn trfc_ns(&self, granularity: u32) -> f64 {
        match granularity {
            4 => self.trfc4_ns,
            2 => self.trfc2_ns,
            _ => self.trfc1_ns,
        }
    }
}

/// What the timing checker verifies of each rank's REFs (`checker/`); each refresh manager
/// declares its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshObligation {
    /// No refresh (the run says so; real DRAM would lose data).
    None,
    /// Distributed refresh: JEDEC's limit of 8 postponed REFs, at most 9 x tREFI between two
    /// REFs of a rank.
    Interval,
    /// Bursts: each rank's refresh counter walks its `refs` bins every `window` cycles, so REF
    /// number i + refs comes at most `window` (plus JEDEC's 9 x tREFI of slack) after REF i.
    Retention { window: u64, refs: u64 },
    /// Per-bank refresh (REFPB): each bank's refreshes (its REFPBs and its rank's REFs) at most
    /// 9 x tREFI apart and at most 8 ahead of one per tREFI, as `Interval` asks of a rank.
    PerBank,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thesis's overhead table (tRFC / tREFI at 7.8 µs): 1.41 ... 25.6 %, as printed (to
    /// three significant figures).
    #[test]
    fn refresh_overhead_follows_the_thesis_table() {
        let expected = [1.41, 2.05, 3.33, 4.49, 7.05, 12.8, 25.6];
        for (r, want) in TRFC_TABLE.iter().zip(expected) {
            let pct = 100.0 * r.trfc1_ns / 7800.0;
            assert!((pct - want).abs() <= 0.005 * want, "{} Gb: {pct:.3} %, thesis {want} %", r.density_gbit);
        }
    }

    #[test]
    fn fgr_modes_shorten_trfc_by_less_than_their_factor() {
        for r in TRFC_TABLE {
            assert!(r.trfc1_ns > r.trfc2_ns && r.trfc2_ns > r.trfc4_ns, "{r:?}");
            // Refreshing twice as often with tRFC2 > tRFC1 / 2 costs more time in all ([Muk13]).
            assert!(r.trfc2_ns > r.trfc1_ns / 2.0 && r.trfc4_ns > r.trfc2_ns / 2.0, "{r:?}");
        }
    }

    #[test]
    fn unknown_densities_and_other_standards_are_refused_by_name() {
        let e = trfc_row(Standard::Ddr4, 128, "dram.refresh_density_gbit").unwrap_err().to_string();
        assert!(e.contains("dram.refresh_density_gbit") && e.contains("128 Gb") && e.contains("1, 2, 4, 8, 16, 32, 64"), "{e}");
        let e = trfc_row(Standard::Ddr2, 1, "k").unwrap_err().to_string();
        assert!(e.contains("DDR2"), "{e}");
    }
}
