//! The command-to-command distances the lane controller and the schedulers read, by name,
//! looked up in the standard's timing rules (`timing_rules.rs`). The independent checker
//! (`checker/`) derives its own from the base values and does not read this file.

use crate::dram::timing_rules::{Scope, TimingTable};
use crate::dram::{Command, Standard, TimingParams};

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
    pub wr_to_rda: u64,  // CWL + tBL + tWR - tRTP (an RDA's precharge after a write's recovery)
    // Same bank group (DDR3: same rank, with S = L).
    pub act_to_act_l: u64, // tRRD_L
    pub rd_to_rd_l: u64,   // tCCD_L
    pub wr_to_wr_l: u64,   // tCCD_L_WR (DDR5; tCCD_L before)
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
    // A throttle: at most `col_window_commands` column commands per channel in `col_window`
    // cycles (0 commands: none).
    pub col_window: u64,
    pub col_window_commands: u64,
}

impl Constraints {
    /// The distances of the device's standard's timing rules (`timing_rules.rs`).
    pub fn derive(standard: Standard, t: &TimingParams) -> Self {
        Self::from_table(&TimingTable::build(standard.timing_rules(), t), t)
    }

    /// Each distance looked up in `table`; the data timing (when a burst ends) from `t`.
    pub fn from_table(table: &TimingTable, t: &TimingParams) -> Self {
        use Command::*;
        use Scope::*;
        let l = |scope, a, b| table.latency(scope, a, b);
        Constraints {
            act_to_act: l(Bank, Act, Act),
            act_to_col: l(Bank, Act, Rd),
            act_to_pre: l(Bank, Act, Pre),
            pre_to_act: l(Bank, Pre, Act),
            rd_to_pre: l(Bank, Rd, Pre),
            wr_to_pre: l(Bank, Wr, Pre),
            wr_to_rda: table.rda_after_write(),
            act_to_act_l: l(BankGroup, Act, Act),
            rd_to_rd_l: l(BankGroup, Rd, Rd),
            wr_to_wr_l: l(BankGroup, Wr, Wr),
            wr_to_rd_l: l(BankGroup, Wr, Rd),
            act_to_act_s: l(Rank, Act, Act),
            rd_to_rd_s: l(Rank, Rd, Rd),
            wr_to_wr_s: l(Rank, Wr, Wr),
            wr_to_rd_s: l(Rank, Wr, Rd),
            rd_to_wr: l(Rank, Rd, Wr),
            faw: table.act_window.map_or(0, |(_, latency)| latency),
            refresh: l(Rank, Ref, Act),
            rd_to_rd_rank: l(SiblingRank, Rd, Rd),
            wr_to_wr_rank: l(SiblingRank, Wr, Wr),
            rd_to_wr_rank: l(SiblingRank, Rd, Wr),
            wr_to_rd_rank: l(SiblingRank, Wr, Rd),
            read_data_end: t.CL + t.tBL,
            write_data_end: t.CWL + t.tBL,
            burst: t.tBL,
            col_window: table.col_window.map_or(0, |(_, w)| w),
            col_window_commands: table.col_window.map_or(0, |(n, _)| n as u64),
        }
    }

    /// When a bank that was activated at `act` and auto-precharged by a column command at
    /// `col` may be activated again.
    pub fn auto_precharge_ready(&self, act: u64, col: u64, is_write: bool) -> u64 {
        self.implicit_precharge(act, col, is_write) + self.pre_to_act
    }

    /// When the implicit precharge of a column command at `col` with auto-precharge starts
    /// (the bank was activated at `act`).
    pub fn implicit_precharge(&self, act: u64, col: u64, is_write: bool) -> u64 {
        let start = if is_write { col + self.wr_to_pre } else { col + self.rd_to_pre };
        start.max(act + self.act_to_pre)
    }
}
