//! The checker's own constraint table, derived here from the base JEDEC values in
//! [`TimingParams`]. Deliberately independent of `dram::constraints` (the controller's table):
//! the two are written separately so that the checker is a second, independent derivation.

use crate::dram::{Standard, TimingParams};

/// Constraint names as they appear in [`super::Violation::constraint`].
pub mod names {
    pub const TRC: &str = "tRC";
    pub const TRCD: &str = "tRCD";
    pub const TRAS: &str = "tRAS";
    pub const TRP: &str = "tRP";
    pub const TRP_AUTO: &str = "tRP (auto-precharge)";
    pub const TRTP: &str = "tRTP";
    pub const TWR: &str = "tWR";
    pub const TWR_AUTO: &str = "tWR (auto-precharge)";
    pub const TRRD: &str = "tRRD";
    pub const TRRD_S: &str = "tRRD_S";
    pub const TRRD_L: &str = "tRRD_L";
    pub const TFAW: &str = "tFAW";
    pub const COLUMN_WINDOW: &str = "column window";
    pub const TCCD: &str = "tCCD";
    pub const TCCD_S: &str = "tCCD_S";
    pub const TCCD_L: &str = "tCCD_L";
    pub const TCCD_L_WR: &str = "tCCD_L_WR";
    pub const TWTR: &str = "tWTR";
    pub const TWTR_S: &str = "tWTR_S";
    pub const TWTR_L: &str = "tWTR_L";
    pub const RD_TO_WR: &str = "rd-to-wr";
    pub const TRFC: &str = "tRFC";
    pub const TREFI: &str = "tREFI";
    pub const TREFW: &str = "tREFW";
    pub const REF_PULL_IN: &str = "REF pull-in";
    pub const TRFCPB: &str = "tRFCpb";
    pub const TPBR2PBR: &str = "tpbR2pbR";
    pub const TRFCSB: &str = "tRFCsb";
    pub const TREFSBRD: &str = "tREFSBRD";
    pub const TPPD: &str = "tPPD";
    pub const RANK_RD_RD: &str = "rank-to-rank rd-to-rd";
    pub const RANK_WR_WR: &str = "rank-to-rank wr-to-wr";
    pub const RANK_RD_WR: &str = "rank-to-rank rd-to-wr";
    pub const RANK_WR_RD: &str = "rank-to-rank wr-to-rd";
    pub const DATA_BUS: &str = "data bus";
    pub const COMMAND_BUS: &str = "command bus";
    pub const ACT_TO_OPEN: &str = "protocol: ACT to open bank";
    pub const COL_TO_CLOSED: &str = "protocol: RD/WR to closed bank";
    pub const COL_TO_WRONG_ROW: &str = "protocol: RD/WR to wrong row";
    pub const REF_WITH_OPEN: &str = "protocol: REF with open bank";
    pub const REFPB_TO_OPEN: &str = "protocol: REFPB to open bank";
    pub const REFSB_TO_OPEN: &str = "protocol: REFSB to open bank";
    pub const OUT_OF_ORDER: &str = "protocol: command out of order";
    pub const OUT_OF_RANGE: &str = "protocol: address out of range";
    pub const TXP: &str = "tXP";
    pub const TCKE: &str = "tCKE";
    pub const POWER_DOWN_ENTRY: &str = "power-down entry";
    pub const TO_POWERED_DOWN: &str = "protocol: command to a powered-down rank";
    pub const POWER_DOWN_STATE: &str = "protocol: power-down entry or exit out of turn";
    pub const POWER_DOWN_BANKS: &str = "protocol: power-down kind against the banks' state";

    /// Prefix shared by every bank-state / stream-order violation.
    pub const PROTOCOL_PREFIX: &str = "protocol:";
}

/// Minimum command-to-command distances (cycles) the checker enforces, plus the latencies it
/// needs to place data bursts. Every field is derived in [`Rules::derive`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    pub has_bank_groups: bool,
    /// Read data starts this many cycles after RD/RDA (CL).
    pub read_latency: u64,
    /// Write data starts this many cycles after WR/WRA (CWL).
    pub write_latency: u64,
    /// Data-bus cycles of one burst (tBL).
    pub burst: u64,

    // ---- same bank ----
    /// ACT -> ACT, and ACT -> REFSB of the bank (tRC).
    pub act_to_act_bank: u64,
    /// ACT -> RD/WR/RDA/WRA (tRCD).
    pub act_to_column: u64,
    /// ACT -> PRE (tRAS).
    pub act_to_pre: u64,
    /// PRE/PREA -> ACT, PRE/PREA -> REF (tRP).
    pub pre_to_act: u64,
    /// RD -> PRE, and RDA -> its internal precharge (tRTP).
    pub read_to_pre: u64,
    /// WR -> PRE, and WRA -> its internal precharge (CWL + tBL + tWR).
    pub write_to_pre: u64,

    // ---- same rank ----
    /// ACT -> ACT, same bank group (tRRD_L).
    pub act_to_act_same_group: u64,
    /// ACT -> ACT, other bank group (tRRD_S).
    pub act_to_act_other_group: u64,
    /// Four-activate window (tFAW): a 5th ACT >= the 4th-previous ACT + tFAW.
    pub four_act_window: u64,
    /// A throttle (0 commands: none): a channel's column command >= the one
    /// `column_window_commands` before it + `column_window`.
    pub column_window: u64,
    pub column_window_commands: u64,
    /// RD -> RD, and WR -> WR before DDR5, same bank group (tCCD_L).
    pub col_to_col_same_group: u64,
    /// WR -> WR, same bank group (DDR5's tCCD_L_WR; tCCD_L before).
    pub write_to_write_same_group: u64,
    /// RD -> RD and WR -> WR, other bank group (tCCD_S).
    pub col_to_col_other_group: u64,
    /// WR -> RD, same bank group (CWL + tBL + tWTR_L).
    pub write_to_read_same_group: u64,
    /// WR -> RD, other bank group (CWL + tBL + tWTR_S).
    pub write_to_read_other_group: u64,
    /// RD -> WR, same rank (CL + tBL + 2 - CWL, saturating; + 4 on DDR5, whose turnaround
    /// keeps the write preamble of JESD79-5, tWPRE >= 2 nCK).
    pub read_to_write: u64,
    /// Cycles a channel's command bus is held by an ACT, RD or WR (and RDA, WRA): 2 on DDR5,
    /// whose commands of two address cycles these are; 1 before. Any other command holds it 1.
    pub long_command_cycles: u64,
    /// REF -> any command to the rank (tRFC).
    pub refresh_cycle: u64,
    /// Longest allowed gap between REFs of a rank when refresh is expected (9 x tREFI).
    pub max_refresh_gap: u64,
    /// tREFI: a rank's REFs by cycle t are at most t / tREFI + 1 + 8 (JEDEC's pull-in limit).
    pub refresh_interval: u64,
    /// REFPB -> ACT or REFPB to its bank, and -> REF or PREA of its rank (tRFCpb).
    pub bank_refresh_cycle: u64,
    /// REFPB -> REFPB of the rank (tpbR2pbR).
    pub bank_refresh_to_bank_refresh: u64,
    /// REFSB -> ACT or REFSB to its banks, and -> REF or PREA of its rank (tRFCsb).
    pub same_bank_refresh_cycle: u64,
    /// REFSB -> ACT or REFSB to other banks of the rank (tREFSBRD).
    pub same_bank_refresh_to_other: u64,
    /// PRE/PREA -> PRE/PREA of the rank, commands only (DDR5's tPPD; 0: no rule).
    pub precharge_to_precharge: u64,

    // ---- different ranks, same channel ----
    /// RD -> RD (tBL + tRTRS).
    pub rank_read_to_read: u64,
    /// WR -> WR (tBL + tRTRS).
    pub rank_write_to_write: u64,
    /// RD -> WR (CL + tBL + tRTRS - CWL, saturating; on DDR5 at least the rank's own
    /// read-to-write turnaround, whose idle cycles are the shared bus's preambles).
    pub rank_read_to_write: u64,
    /// WR -> RD (CWL + tBL + tRTRS - CL, saturating).
    pub rank_write_to_read: u64,

    // ---- names that depend on the standard (DDR3 has no bank groups: plain names) ----
    pub name_rrd_same: &'static str,
    pub name_rrd_other: &'static str,
    pub name_ccd_same: &'static str,
    pub name_ccd_write_same: &'static str,
    pub name_ccd_other: &'static str,
    pub name_wtr_same: &'static str,
    pub name_wtr_other: &'static str,

    // ---- power-down ----
    /// Exit to the rank's next command (tXP) and least time powered down (tCKE).
    pub power_down_exit: u64,
    pub power_down_least: u64,
    /// Entry after a read (tRDPDEN = RL + BL/2 + 1) and a write (tWRPDEN = WL + BL/2 + tWR);
    /// after any other command, 1 (tACTPDEN, tPRPDEN); a refresh's whole tRFC (`refresh_cycle`).
    pub read_to_power_down: u64,
    pub write_to_power_down: u64,
}

impl Rules {
    /// Derive the checker's table from the base JEDEC values.
    #[allow(non_snake_case)]
    pub fn derive(standard: Standard, t: &TimingParams) -> Self {
        let bg = standard.has_bank_groups();
        let (CL, CWL, BL) = (t.CL, t.CWL, t.tBL);
        let pick = |l: &'static str, s: &'static str, plain: &'static str| if bg { (l, s) } else { (plain, plain) };
        let (name_rrd_same, name_rrd_other) = pick(names::TRRD_L, names::TRRD_S, names::TRRD);
        let (name_ccd_same, name_ccd_other) = pick(names::TCCD_L, names::TCCD_S, names::TCCD);
        let (name_wtr_same, name_wtr_other) = pick(names::TWTR_L, names::TWTR_S, names::TWTR);
        // JESD79-5 names the write distance apart (the earlier standards' tCCD_L covers both),
        // widens the read-to-write turnaround and has two-cycle commands.
        let ddr5_writes = standard == Standard::Ddr5;
        let name_ccd_write_same = if ddr5_writes { names::TCCD_L_WR } else { name_ccd_same };
        // Idle data-bus cycles from a read's burst to a write's: DDR5's read postamble and write
        // preamble (JESD79-5) take four. They are the bus's, so a rank switch keeps them too.
        let turnaround = if ddr5_writes { 4 } else { 2 };
        let rank_switch_to_write = if ddr5_writes { t.tRTRS.max(turnaround) } else { t.tRTRS };
        Rules {
            has_bank_groups: bg,
            read_latency: CL,
            write_latency: CWL,
            burst: BL,
            act_to_act_bank: t.tRC,
            act_to_column: t.tRCD,
            act_to_pre: t.tRAS,
            pre_to_act: t.tRP,
            read_to_pre: t.tRTP,
            write_to_pre: CWL + BL + t.tWR,
            act_to_act_same_group: t.tRRD_L,
            act_to_act_other_group: t.tRRD_S,
            four_act_window: t.tFAW,
            column_window: t.col_window,
            column_window_commands: t.col_window_commands,
            col_to_col_same_group: t.tCCD_L,
            write_to_write_same_group: if ddr5_writes { t.tCCD_L_WR } else { t.tCCD_L },
            col_to_col_other_group: t.tCCD_S,
            write_to_read_same_group: CWL + BL + t.tWTR_L,
            write_to_read_other_group: CWL + BL + t.tWTR_S,
            read_to_write: (CL + BL + turnaround).saturating_sub(CWL),
            long_command_cycles: if ddr5_writes { 2 } else { 1 },
            refresh_cycle: t.tRFC,
            max_refresh_gap: 9 * t.tREFI,
            refresh_interval: t.tREFI,
            bank_refresh_cycle: t.tRFCpb,
            bank_refresh_to_bank_refresh: t.tPBR2PBR,
            same_bank_refresh_cycle: t.tRFCsb,
            same_bank_refresh_to_other: t.tREFSBRD,
            precharge_to_precharge: t.tPPD,
            rank_read_to_read: BL + t.tRTRS,
            rank_write_to_write: BL + t.tRTRS,
            rank_read_to_write: (CL + BL + rank_switch_to_write).saturating_sub(CWL),
            rank_write_to_read: (CWL + BL + t.tRTRS).saturating_sub(CL),
            name_rrd_same,
            name_rrd_other,
            name_ccd_same,
            name_ccd_write_same,
            name_ccd_other,
            name_wtr_same,
            name_wtr_other,
            power_down_exit: t.tXP,
            power_down_least: t.tCKE,
            read_to_power_down: CL + BL + 1,
            write_to_power_down: CWL + BL + t.tWR,
        }
    }

    /// The table as (constraint name, formula, cycles) rows, for `--check` reports and docs.
    pub fn table(&self) -> Vec<(&'static str, &'static str, u64)> {
        vec![
            (names::TRC, "ACT->ACT same bank: tRC", self.act_to_act_bank),
            (names::TRCD, "ACT->RD/WR/RDA/WRA same bank: tRCD", self.act_to_column),
            (names::TRAS, "ACT->PRE/PREA same bank: tRAS", self.act_to_pre),
            (names::TRP, "PRE/PREA->ACT, PRE/PREA->REF: tRP", self.pre_to_act),
            (names::TRTP, "RD->PRE/PREA same bank: tRTP", self.read_to_pre),
            (names::TWR, "WR->PRE/PREA same bank: CWL + tBL + tWR", self.write_to_pre),
            (
                names::TRP_AUTO,
                "RDA->ACT/REF: max(RDA + tRTP, ACT + tRAS) + tRP; WRA->ACT/REF: max(WRA + CWL + tBL + tWR, ACT + tRAS) + tRP",
                self.pre_to_act,
            ),
            (
                names::TWR_AUTO,
                "WR->RDA same bank: the RDA's precharge, max(RDA + tRTP, ACT + tRAS), >= WR + CWL + tBL + tWR",
                self.write_to_pre,
            ),
            (self.name_rrd_same, "ACT->ACT same rank, same bank group: tRRD_L", self.act_to_act_same_group),
            (self.name_rrd_other, "ACT->ACT same rank, other bank group: tRRD_S", self.act_to_act_other_group),
            (names::TFAW, "5th ACT of a rank >= 4th-previous ACT + tFAW", self.four_act_window),
            (names::COLUMN_WINDOW, "throttle: a channel's column command >= the n-th previous + the window", self.column_window),
            (self.name_ccd_same, "RD->RD (WR->WR before DDR5) same rank, same bank group: tCCD_L", self.col_to_col_same_group),
            (self.name_ccd_write_same, "WR->WR same rank, same bank group: tCCD_L_WR (DDR5)", self.write_to_write_same_group),
            (self.name_ccd_other, "RD->RD, WR->WR same rank, other bank group: tCCD_S", self.col_to_col_other_group),
            (self.name_wtr_same, "WR->RD same rank, same bank group: CWL + tBL + tWTR_L", self.write_to_read_same_group),
            (self.name_wtr_other, "WR->RD same rank, other bank group: CWL + tBL + tWTR_S", self.write_to_read_other_group),
            (names::RD_TO_WR, "RD->WR same rank: CL + tBL + 2 - CWL (+ 4 on DDR5)", self.read_to_write),
            (names::TRFC, "REF->any command to the rank: tRFC", self.refresh_cycle),
            (names::TREFI, "REF->REF of a rank at most 9 x tREFI (distributed refresh)", self.max_refresh_gap),
            (names::TREFW, "REF i -> REF i + bins of a rank at most tREFW + 9 x tREFI (burst refresh)", self.max_refresh_gap),
            (
                names::REF_PULL_IN,
                "a rank's REFs by cycle t at most t / tREFI + 9: 8 pulled in (distributed refresh)",
                self.refresh_interval,
            ),
            (names::TRFCPB, "REFPB->ACT/REFPB same bank, REFPB->REF/PREA same rank: tRFCpb", self.bank_refresh_cycle),
            (names::TPBR2PBR, "REFPB->REFPB same rank: tpbR2pbR", self.bank_refresh_to_bank_refresh),
            (self.name_rrd_other, "ACT->REFPB, REFPB->ACT same rank: tRRD", self.act_to_act_other_group),
            (names::TRC, "ACT->REFSB its banks: tRC", self.act_to_act_bank),
            (names::TRFCSB, "REFSB->ACT/REFSB its banks, REFSB->REF/PREA same rank: tRFCsb", self.same_bank_refresh_cycle),
            (names::TREFSBRD, "REFSB->ACT/REFSB other banks of the rank: tREFSBRD", self.same_bank_refresh_to_other),
            (self.name_rrd_same, "ACT->REFSB same rank: tRRD_L", self.act_to_act_same_group),
            (names::TPPD, "PRE/PREA->PRE/PREA same rank (commands, not auto-precharges): tPPD (DDR5)", self.precharge_to_precharge),
            (names::RANK_RD_RD, "RD->RD other rank: tBL + tRTRS", self.rank_read_to_read),
            (names::RANK_WR_WR, "WR->WR other rank: tBL + tRTRS", self.rank_write_to_write),
            (names::RANK_RD_WR, "RD->WR other rank: CL + tBL + tRTRS - CWL (DDR5: + max(tRTRS, 4))", self.rank_read_to_write),
            (names::RANK_WR_RD, "WR->RD other rank: CWL + tBL + tRTRS - CL", self.rank_write_to_read),
            (names::DATA_BUS, "bursts on a channel never overlap ([RD+CL, +tBL), [WR+CWL, +tBL))", self.burst),
            (names::COMMAND_BUS, "one command per channel per cycle", 1),
            (names::COMMAND_BUS, "ACT/RD/WR(A)->any command, same channel: 2 cycles on DDR5", self.long_command_cycles),
        ]
    }
}

/// What a bank refresh (REFPB or REFSB) asks, by its command.
pub struct BankRefresh {
    /// Its banks: to their next ACT or bank refresh, and to the rank's next REF or PREA.
    pub cycle: (&'static str, u64),
    /// To the rank's next bank refresh of other banks.
    pub to_refresh: (&'static str, u64),
    /// To the rank's next ACT to other banks.
    pub to_act: (&'static str, u64),
    /// From the rank's last ACT.
    pub from_act: (&'static str, u64),
    pub open: &'static str,
}

impl Rules {
    /// The rules of `cmd`, REFPB or REFSB.
    pub fn bank_refresh(&self, cmd: crate::dram::Command) -> BankRefresh {
        if cmd == crate::dram::Command::RefSb {
            BankRefresh {
                cycle: (names::TRFCSB, self.same_bank_refresh_cycle),
                to_refresh: (names::TREFSBRD, self.same_bank_refresh_to_other),
                to_act: (names::TREFSBRD, self.same_bank_refresh_to_other),
                from_act: (self.name_rrd_same, self.act_to_act_same_group),
                open: names::REFSB_TO_OPEN,
            }
        } else {
            BankRefresh {
                cycle: (names::TRFCPB, self.bank_refresh_cycle),
                to_refresh: (names::TPBR2PBR, self.bank_refresh_to_bank_refresh),
                to_act: (self.name_rrd_other, self.act_to_act_other_group),
                from_act: (self.name_rrd_other, self.act_to_act_other_group),
                open: names::REFPB_TO_OPEN,
            }
        }
    }
}
