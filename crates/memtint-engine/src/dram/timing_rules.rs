//! A DRAM standard's timing rules as data, in Ramulator 2's shape: each rule says that a
//! `following` command may not issue to the `scope` of an earlier `preceding` command until
//! `latency` cycles after it (or, with a `window` of n, until `latency` after the n-th latest
//! such command). The controllers' tables are built from these rules only: `TimingTable`
//! compiles them per command for `ChannelTiming`, and `Constraints` (read by the lane
//! controller and the schedulers) looks its distances up in the same table. The independent
//! checker (`checker/rules.rs`) keeps its own derivation from the base values and does not read
//! this file.
//!
//! A new standard is a rule list here, a device file under `configs/devices/` and a `Standard`
//! variant whose `timing_rules` returns the list.

use crate::dram::{Command, TimingParams};

/// What the preceding and following commands share for a rule to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The same bank.
    Bank,
    /// The same bank group (the same rank for standards without bank groups).
    BankGroup,
    /// The same rank.
    Rank,
    /// Another rank of the same channel (the shared data bus).
    SiblingRank,
    /// The same channel (the command bus).
    Channel,
}

/// A latency expression over the timing parameters.
pub type Latency = fn(&TimingParams) -> u64;

#[derive(Clone, Copy)]
pub struct Rule {
    pub scope: Scope,
    pub preceding: &'static [Command],
    pub following: &'static [Command],
    pub latency: Latency,
    /// 0, or n: the rule counts from the n-th latest preceding command (tFAW: 4).
    pub window: usize,
    /// The JEDEC name of the constraint, for documentation and reports.
    pub name: &'static str,
    /// Whether the precharge an RDA or WRA implies counts as a preceding PRE (true for every
    /// rule but those between precharge commands on the command bus: tPPD).
    pub implied: bool,
}

use Command::{Act, Pre, Prea, Rd, Rda, Ref, RefPb, RefSb, Wr, Wra};
const RD: &[Command] = &[Rd, Rda];
/// RDA alone: the following commands of its own rules (`entry`).
const RDA: &[Command] = &[Rda];
const WR: &[Command] = &[Wr, Wra];
const COL: &[Command] = &[Rd, Rda, Wr, Wra];
const ACT: &[Command] = &[Act];
const PRE: &[Command] = &[Pre];
const PREA: &[Command] = &[Prea];
const PRECHARGES: &[Command] = &[Pre, Prea];
const REF: &[Command] = &[Ref];
const REFPB: &[Command] = &[RefPb];
const REFSB: &[Command] = &[RefSb];
const ALL: &[Command] = &Command::ALL;

const fn rule(scope: Scope, preceding: &'static [Command], following: &'static [Command], latency: Latency, name: &'static str) -> Rule {
    Rule { scope, preceding, following, latency, window: 0, name, implied: true }
}

/// JEDEC DDR3 and DDR4 (DDR3 has one bank group per rank and equal `_S`/`_L` values). The
/// read-to-write turnaround keeps two idle bus cycles (DRAMSim3's and Ramulator's choice).
/// RDA and WRA obey RD's and WR's rules and close the bank as a PRE would at
/// max(column + RD/WR-to-PRE, ACT + tRAS) (see `TimingTable::implicit_precharge`). One rule is
/// RDA's own: its precharge, tRTP after it, may not cut short an earlier write's recovery, so
/// an RDA waits CWL + tBL + tWR - tRTP after a WR to its bank (Ramulator 2's rule; it binds
/// where tWR - tRTP exceeds tWTR_L, as on DDR5). Writes to one bank group are tCCD_L_WR apart,
/// which is tCCD_L before DDR5 (`TimingParams::tCCD_L_WR`).
macro_rules! ddr_rules {
    ($($extra:expr,)*) => {
        &[
            // one bank
            rule(Scope::Bank, ACT, ACT, |t| t.tRC, "tRC"),
            rule(Scope::Bank, ACT, COL, |t| t.tRCD, "tRCD"),
            rule(Scope::Bank, ACT, PRE, |t| t.tRAS, "tRAS"),
            rule(Scope::Bank, PRE, ACT, |t| t.tRP, "tRP"),
            rule(Scope::Bank, RD, PRE, |t| t.tRTP, "tRTP"),
            rule(Scope::Bank, WR, PRE, |t| t.CWL + t.tBL + t.tWR, "tWR"),
            // a rank's precharge-all waits for every bank's own precharge constraints
            rule(Scope::Rank, ACT, PREA, |t| t.tRAS, "tRAS"),
            rule(Scope::Rank, RD, PREA, |t| t.tRTP, "tRTP"),
            rule(Scope::Rank, WR, PREA, |t| t.CWL + t.tBL + t.tWR, "tWR"),
            rule(Scope::Bank, WR, RDA, |t| (t.CWL + t.tBL + t.tWR).saturating_sub(t.tRTP), "tWR (RDA)"),
            // activations
            rule(Scope::BankGroup, ACT, ACT, |t| t.tRRD_L, "tRRD_L"),
            rule(Scope::Rank, ACT, ACT, |t| t.tRRD_S, "tRRD_S"),
            Rule { scope: Scope::Rank, preceding: ACT, following: ACT, latency: |t| t.tFAW, window: 4, name: "tFAW", implied: true },
            // column commands
            rule(Scope::BankGroup, RD, RD, |t| t.tCCD_L, "tCCD_L"),
            rule(Scope::Rank, RD, RD, |t| t.tCCD_S, "tCCD_S"),
            rule(Scope::BankGroup, WR, WR, |t| t.tCCD_L_WR, "tCCD_L_WR"),
            rule(Scope::Rank, WR, WR, |t| t.tCCD_S, "tCCD_S"),
            rule(Scope::Rank, RD, WR, |t| (t.CL + t.tBL + 2).saturating_sub(t.CWL), "rd-to-wr"),
            rule(Scope::BankGroup, WR, RD, |t| t.CWL + t.tBL + t.tWTR_L, "tWTR_L"),
            rule(Scope::Rank, WR, RD, |t| t.CWL + t.tBL + t.tWTR_S, "tWTR_S"),
            rule(Scope::SiblingRank, RD, RD, |t| t.tBL + t.tRTRS, "tRTRS"),
            rule(Scope::SiblingRank, WR, WR, |t| t.tBL + t.tRTRS, "tRTRS"),
            rule(Scope::SiblingRank, RD, WR, |t| (t.CL + t.tBL + t.tRTRS).saturating_sub(t.CWL), "tRTRS"),
            rule(Scope::SiblingRank, WR, RD, |t| (t.CWL + t.tBL + t.tRTRS).saturating_sub(t.CL), "tRTRS"),
            // precharge-all and refresh
            rule(Scope::Rank, PRE, REF, |t| t.tRP, "tRP"),
            rule(Scope::Rank, PREA, ACT, |t| t.tRP, "tRP"),
            rule(Scope::Rank, PREA, REF, |t| t.tRP, "tRP"),
            rule(Scope::Rank, REF, &[Act, Ref, Prea, Pre], |t| t.tRFC, "tRFC"),
            // one command per cycle
            rule(Scope::Channel, ALL, ALL, |_| 1, "command bus"),
            $($extra,)*
        ]
    };
}

pub const DDR_RULES: &[Rule] = ddr_rules!();

/// LPDDR4 (JESD209-4): DDR3's rules (one bank group, `_S` = `_L`) and per-bank refresh. A REFPB
/// needs its bank precharged (tRP) and holds it for tRFCpb; REFPBs of a rank are tpbR2pbR
/// apart; an ACT and a REFPB to different banks keep tRRD (both draw the row current); an
/// all-bank REF and a REFPB wait for each other's refresh cycle (Ramulator's LPDDR4 rules).
/// The preset's tRP is LPDDR4's all-bank tRPab, so one tRP serves PRE and PREA (per-bank
/// precharges wait the 3 ns longer that tRPab exceeds tRPpb by).
pub const LPDDR4_RULES: &[Rule] = ddr_rules!(
    rule(Scope::Bank, PRE, REFPB, |t| t.tRP, "tRPpb"),
    rule(Scope::Bank, REFPB, &[Act, RefPb], |t| t.tRFCpb, "tRFCpb"),
    rule(Scope::Rank, PREA, REFPB, |t| t.tRP, "tRPab"),
    rule(Scope::Rank, REFPB, REFPB, |t| t.tPBR2PBR, "tpbR2pbR"),
    rule(Scope::Rank, ACT, REFPB, |t| t.tRRD_S, "tRRD"),
    rule(Scope::Rank, REFPB, ACT, |t| t.tRRD_S, "tRRD"),
    rule(Scope::Rank, REF, REFPB, |t| t.tRFC, "tRFCab"),
    rule(Scope::Rank, REFPB, &[Ref, Prea], |t| t.tRFCpb, "tRFCpb"),
);

/// DDR5 (JESD79-5): DDR4's rules and same-bank refresh. A REFSB addresses one bank index in
/// every bank group; its `Bank` rules apply to each of those banks (`Command::addresses_bank_index`):
/// they must be precharged (tRP) and a row cycle past their last ACT (tRC), and are held for
/// tRFCsb; other banks of the rank wait tREFSBRD after it, and it waits tRRD_L after the
/// rank's last ACT; an all-bank REF and a REFSB wait for each other's refresh cycle
/// (Ramulator 2.0's DDR5 rules). ACT, RD and WR (with auto-precharge or not) are two-cycle
/// commands on DDR5's command/address bus, so the channel's next command waits two cycles. A
/// read-to-write turnaround keeps four idle bus cycles, not two: JESD79-5's CL - CWL + RBL/2 + 2
/// + (tRPST - 0.5) + tWPRE with the smallest preambles (tRPST 0.5, tWPRE 2 nCK), as Ramulator
/// 2.1's DDR5 has it. Those idle cycles are the shared data bus's (the read's postamble on DQS,
/// then the write's preamble), not the rank's, so a write to another rank keeps them too: at
/// least CL + tBL + 4 - CWL after a read, more if tRTRS asks it (JEDEC leaves the spacing
/// between ranks to the system; Ramulator 2.1 allows tBL + 2, no idle cycle on ddr5-4800). A rank's precharge commands (PRE, PREA) are tPPD apart; an RDA's or WRA's
/// implied precharge is not a command and keeps no tPPD.
pub const DDR5_RULES: &[Rule] = ddr_rules!(
    rule(Scope::Bank, PRE, REFSB, |t| t.tRP, "tRP"),
    rule(Scope::Bank, ACT, REFSB, |t| t.tRC, "tRC"),
    rule(Scope::Bank, REFSB, &[Act, RefSb], |t| t.tRFCsb, "tRFCsb"),
    rule(Scope::Rank, PREA, REFSB, |t| t.tRP, "tRP"),
    rule(Scope::Rank, REFSB, &[Act, RefSb], |t| t.tREFSBRD, "tREFSBRD"),
    rule(Scope::Rank, ACT, REFSB, |t| t.tRRD_L, "tRRD_L"),
    rule(Scope::Rank, REF, REFSB, |t| t.tRFC, "tRFC"),
    rule(Scope::Rank, REFSB, &[Ref, Prea], |t| t.tRFCsb, "tRFCsb"),
    rule(Scope::Channel, &[Act, Rd, Rda, Wr, Wra], ALL, |_| 2, "two-cycle command"),
    rule(Scope::Rank, RD, WR, |t| (t.CL + t.tBL + 4).saturating_sub(t.CWL), "rd-to-wr"),
    rule(Scope::SiblingRank, RD, WR, |t| (t.CL + t.tBL + 4).saturating_sub(t.CWL), "rd-to-wr"),
    Rule { scope: Scope::Rank, preceding: PRECHARGES, following: PRECHARGES, latency: |t| t.tPPD, window: 0, name: "tPPD", implied: false },
);

/// Add `effect` to `list`, or raise the latency of the one it has for the same scope and entry.
fn merge(list: &mut Vec<Effect>, effect: Effect) {
    match list.iter_mut().find(|e| e.scope == effect.scope && e.following == effect.following) {
        Some(e) => e.latency = e.latency.max(effect.latency),
        None => list.push(effect),
    }
}

/// The table entry a following command reads: RDA and WRA share RD's and WR's (the rules
/// treat them alike as preceding commands; `TimingTable::build` checks it). A bank rule that
/// names RDA alone as following (`RDA`) keeps an RDA entry of its own, which a controller
/// reads before auto-precharging a read (`TimingTable::rda_after_write`).
#[inline(always)]
pub fn entry(cmd: Command) -> Command {
    match cmd {
        Rda => Rd,
        Wra => Wr,
        c => c,
    }
}

/// One compiled rule: after the preceding command, raise `following`'s entry at `scope` to
/// issue time + `latency`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    pub scope: Scope,
    pub following: Command,
    pub latency: u64,
}

/// The rules of one standard for one device, compiled per preceding command: one effect per
/// (scope, following entry), the largest latency of the rules that give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingTable {
    effects: [Vec<Effect>; Command::COUNT],
    /// What the precharge an RDA or WRA implies constrains: PRE's effects from the rules that
    /// count it (`Rule::implied`).
    implied_pre: Vec<Effect>,
    /// (window, latency) of a windowed rule on ACT (tFAW), if any.
    pub act_window: Option<(usize, u64)>,
    /// (commands, window) of a channel's column-command throttle (`TimingParams::col_window`).
    pub col_window: Option<(usize, u64)>,
}

impl TimingTable {
    pub fn build(rules: &[Rule], t: &TimingParams) -> Self {
        let mut effects: [Vec<Effect>; Command::COUNT] = Default::default();
        let mut implied_pre = Vec::new();
        let mut act_window = None;
        for r in rules {
            let latency = (r.latency)(t);
            if r.window > 0 {
                assert!(r.preceding == ACT && r.following == ACT && r.scope == Scope::Rank, "only a rank's ACT window is modelled");
                act_window = Some((r.window, latency));
                continue;
            }
            let own = r.following == RDA;
            assert!(!own || r.scope == Scope::Bank, "RDA's own rules are bank rules");
            for &p in r.preceding {
                for &f in r.following {
                    let f = if own { f } else { entry(f) };
                    let effect = Effect { scope: r.scope, following: f, latency };
                    merge(&mut effects[p.index()], effect);
                    if p == Pre && r.implied {
                        merge(&mut implied_pre, effect);
                    }
                }
            }
        }
        for list in effects.iter_mut().chain([&mut implied_pre]) {
            list.sort_by_key(|e| (e.scope, e.following));
        }
        let col_window = (t.col_window > 0).then_some((t.col_window_commands as usize, t.col_window));
        let table = TimingTable { effects, implied_pre, act_window, col_window };
        for (a, b) in [(Rd, Rda), (Wr, Wra)] {
            assert_eq!(table.after(a), table.after(b), "{a} and {b} must have the same rules");
        }
        table
    }

    /// The same rules as `other` (scopes, commands and windows; latencies may differ).
    pub fn same_rules_as(&self, other: &TimingTable) -> bool {
        let shape = |t: &TimingTable| {
            let effects: Vec<Vec<(Scope, Command)>> =
                t.effects.iter().chain([&t.implied_pre]).map(|l| l.iter().map(|e| (e.scope, e.following)).collect()).collect();
            (effects, t.act_window.map(|(w, _)| w), t.col_window.map(|(n, _)| n))
        };
        shape(self) == shape(other)
    }

    /// What issuing `cmd` constrains.
    #[inline]
    pub fn after(&self, cmd: Command) -> &[Effect] {
        &self.effects[cmd.index()]
    }

    /// What the precharge an RDA or WRA implies constrains (PRE's effects but tPPD's).
    #[inline]
    pub fn after_implied_precharge(&self) -> &[Effect] {
        &self.implied_pre
    }

    /// The distance from `preceding` to `following` within `scope` (0 if no rule gives one).
    pub fn latency(&self, scope: Scope, preceding: Command, following: Command) -> u64 {
        let f = entry(following);
        self.after(preceding).iter().find(|e| e.scope == scope && e.following == f).map_or(0, |e| e.latency)
    }

    /// The distance from a WR to an RDA of its bank that RDA's own rules give beyond RD's (0:
    /// none): a controller issues RD rather than RDA before it.
    pub fn rda_after_write(&self) -> u64 {
        self.after(Wr).iter().find(|e| e.scope == Scope::Bank && e.following == Rda).map_or(0, |e| e.latency)
    }

    /// When the precharge an RDA/WRA issued at `col` implies happens, the bank having been
    /// activated at `act`: as soon as an explicit PRE could.
    pub fn implicit_precharge(&self, act: u64, col: u64, is_write: bool) -> u64 {
        let col_cmd = if is_write { Wr } else { Rd };
        (col + self.latency(Scope::Bank, col_cmd, Pre)).max(act + self.latency(Scope::Bank, Act, Pre))
    }
}
