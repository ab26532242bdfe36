//! Composite timing constraints the controller enforces, derived in one place from the base
//! JEDEC values (DRAMSim3 keeps this derivation in one module too). The independent checker
//! (`checker/`) derives its own from the same base values and does not read this file.

use crate::dram::TimingParams;

/// Minimum distances, in cycles, between two commands, by the scope they share.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(non_snake_case)]
pub struct Constraints {
    // Same bank.
    pub act_to_act: u64, // tRC
    pub act_to_col: u64, // tRCD
    pub act_to_pre: u64, // tRAS
    pub pre_to_act: u64, // tRP
    pub rd_to_pre: u64,  // tRTP
    pub wr_to_pre: u64,  // CWL + tBL + tWR (write recovery)
    // Same bank group (DDR3: same rank, with S = L).
    pub act_to_act_l: u64, // tRRD_L
    pub rd_to_rd_l: u64,   // tCCD_L
    pub wr_to_wr_l: u64,   // tCCD_L
    pub wr_to_rd_l: u64,   // CWL + tBL + tWTR_L
    // Same rank, other bank group.
    pub act_to_act_s: u64, // tRRD_S
    pub rd_to_rd_s: u64,   // tCCD_S
    pub wr_to_wr_s: u64,   // tCCD_S
    pub wr_to_rd_s: u64,   // CWL + tBL + tWTR_S
    pub rd_to_wr: u64,     // CL + tBL + 2 - CWL (read-to-write bus turnaround)
    pub faw: u64,          // tFAW: at most four ACTs per rank in this window
    pub refresh: u64,      // tRFC
    // Different ranks of one channel (data bus).
    pub rd_to_rd_rank: u64, // tBL + tRTRS
    pub wr_to_wr_rank: u64, // tBL + tRTRS
    pub rd_to_wr_rank: u64, // CL + tBL + tRTRS - CWL
    pub wr_to_rd_rank: u64, // CWL + tBL + tRTRS - CL
    // Data timing.
    pub read_data_end: u64,  // CL + tBL: RD issue to last data beat
    pub write_data_end: u64, // CWL + tBL
    pub burst: u64,          // tBL: data-bus cycles of one burst
}

impl Constraints {
    pub fn derive(t: &TimingParams) -> Self {
        let sat = |a: u64, b: u64| a.saturating_sub(b);
        Constraints {
            act_to_act: t.tRC,
            act_to_col: t.tRCD,
            act_to_pre: t.tRAS,
            pre_to_act: t.tRP,
            rd_to_pre: t.tRTP,
            wr_to_pre: t.CWL + t.tBL + t.tWR,
            act_to_act_l: t.tRRD_L,
            rd_to_rd_l: t.tCCD_L,
            wr_to_wr_l: t.tCCD_L,
            wr_to_rd_l: t.CWL + t.tBL + t.tWTR_L,
            act_to_act_s: t.tRRD_S,
            rd_to_rd_s: t.tCCD_S,
            wr_to_wr_s: t.tCCD_S,
            wr_to_rd_s: t.CWL + t.tBL + t.tWTR_S,
            rd_to_wr: sat(t.CL + t.tBL + 2, t.CWL),
            faw: t.tFAW,
            refresh: t.tRFC,
            rd_to_rd_rank: t.tBL + t.tRTRS,
            wr_to_wr_rank: t.tBL + t.tRTRS,
            rd_to_wr_rank: sat(t.CL + t.tBL + t.tRTRS, t.CWL),
            wr_to_rd_rank: sat(t.CWL + t.tBL + t.tRTRS, t.CL),
            read_data_end: t.CL + t.tBL,
            write_data_end: t.CWL + t.tBL,
            burst: t.tBL,
        }
    }

    /// When a bank that was activated at `act` and auto-precharged by a column command at
    /// `col` may be activated again.
    pub fn auto_precharge_ready(&self, act: u64, col: u64, is_write: bool) -> u64 {
        let start = if is_write { col + self.wr_to_pre } else { col + self.rd_to_pre };
        start.max(act + self.act_to_pre) + self.pre_to_act
    }
}
