//! JEDEC timing parameters of one device speed bin, in clock cycles (nCK), with JEDEC names.
//!
//! These are the base values only. The composite constraints derived from them (read-to-write
//! turnaround, rank-to-rank switch...) live in `constraints.rs` for the controller; the
//! independent checker derives its own from these same base values.

use serde::{Deserialize, Serialize};

/// Base timing parameters in DRAM clock cycles. For DDR3 the `_S`/`_L` pairs are equal
/// (one bank group per rank).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct TimingParams {
    /// Clock period in nanoseconds.
    pub tCK_ns: f64,
    /// CAS (read) latency.
    pub CL: u64,
    /// CAS write latency.
    pub CWL: u64,
    pub tRCD: u64,
    pub tRP: u64,
    pub tRAS: u64,
    pub tRC: u64,
    /// Data-bus occupancy of one burst (BL/2 for DDR).
    pub tBL: u64,
    pub tCCD_S: u64,
    pub tCCD_L: u64,
    /// WR -> WR in one bank group: DDR5's tCCD_L_WR (JESD79-5: the second write may need an
    /// internal read-modify-write for on-die ECC; its tCCD_L_WR2 is the shorter distance for
    /// a write that does not); tCCD_L on the standards before DDR5.
    pub tCCD_L_WR: u64,
    pub tRRD_S: u64,
    pub tRRD_L: u64,
    pub tFAW: u64,
    pub tWTR_S: u64,
    pub tWTR_L: u64,
    pub tRTP: u64,
    pub tWR: u64,
    /// Rank-to-rank switch: idle data-bus cycles between bursts of different ranks.
    pub tRTRS: u64,
    /// Refresh cycle time (depends on density).
    pub tRFC: u64,
    /// Average refresh interval (of all-bank REFs; a per-bank scheme issues one REFPB per bank
    /// in it).
    pub tREFI: u64,
    /// Per-bank refresh (LPDDR4): REFPB to ACT or REFPB of the same bank (depends on density;
    /// 0 on devices without REFPB).
    #[serde(default)]
    pub tRFCpb: u64,
    /// Per-bank refresh: REFPB to REFPB of any bank of the rank (0 without REFPB).
    #[serde(default)]
    pub tPBR2PBR: u64,
    /// Same-bank refresh (DDR5): REFSB to ACT or REFSB of its banks (depends on density; 0 on
    /// devices without REFSB).
    #[serde(default)]
    pub tRFCsb: u64,
    /// Same-bank refresh: REFSB to ACT or REFSB of other banks of the rank (0 without REFSB).
    #[serde(default)]
    pub tREFSBRD: u64,
    /// Power-down exit (fast exit, DLL on) to any command of the rank (0: the device file gives
    /// none, and the controller cannot power its ranks down).
    #[serde(default)]
    pub tXP: u64,
    /// CKE minimum pulse width: the least time in power-down, entry to exit (JESD79-5's tPD).
    #[serde(default)]
    pub tCKE: u64,
    /// Precharge to precharge (DDR5's tPPD): a rank's PRE and PREA commands at least this far
    /// apart (0 on standards without it).
    #[serde(default)]
    pub tPPD: u64,
    /// A bandwidth throttle (0: none): at most `col_window_commands` column commands per channel
    /// in any window of `col_window` cycles.
    #[serde(default)]
    pub col_window: u64,
    #[serde(default)]
    pub col_window_commands: u64,
}

impl TimingParams {
    /// Convert cycles to nanoseconds.
    pub fn ns(&self, cycles: f64) -> f64 {
        cycles * self.tCK_ns
    }
}
