//! Independent timing checker: consumes the issued command stream and verifies every JEDEC
//! constraint from its own table ([`rules::Rules`], derived here from the base
//! [`TimingParams`], never from the controller's code).
//!
//! State is kept as "last command of each kind" per bank, bank group, rank and channel, plus a
//! 4-entry ACT ring per rank for tFAW, so each command costs O(1) (PREA and REF walk the banks of
//! one rank; column commands walk the bank groups of their rank and the ranks of their channel).
//!
//! Reporting conventions:
//! * one violation per (constraint, command): when a PREA or REF breaks the same constraint on
//!   several banks, the most binding pair is reported;
//! * the "data bus" rule is a safety net under the turnaround rules (tCCD, tWTR, rd-to-wr,
//!   rank-to-rank): a burst overlap is reported only when no other rule already flagged the same
//!   pair of commands;
//! * protocol violations carry `required == actual == 0`;
//! * a command out of time order on its channel (or addressed outside the organisation) is
//!   reported and otherwise ignored: it does not change the checker's state.

pub mod rules;
#[cfg(test)]
mod tests;

use crate::dram::refresh_timing::RefreshObligation;
use crate::dram::{Command, CommandRecord, Organisation, Standard, TimingParams};
use crate::Cycle;
pub use rules::{names, Rules};
use std::collections::VecDeque;

/// How many violations are kept for [`TimingChecker::violations`]; all are counted.
pub const MAX_KEPT_VIOLATIONS: usize = 1000;

/// One broken constraint: `later` came `actual` cycles after `earlier`, but `required` were
/// needed (for "tREFI", at most `required` were allowed).
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub constraint: &'static str,
    pub earlier: Option<CommandRecord>,
    pub later: CommandRecord,
    pub required: u64,
    pub actual: u64,
}

impl Violation {
    /// A bank-state or stream-order error rather than a timing distance.
    pub fn is_protocol(&self) -> bool {
        self.constraint.starts_with(names::PROTOCOL_PREFIX)
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_protocol() {
            write!(f, "{}: {}", self.constraint, self.later)?;
            if let Some(e) = &self.earlier {
                write!(f, ", after {e}")?;
            }
            return Ok(());
        }
        if self.constraint == names::TREFI {
            write!(f, "{}: {} came {} cycles after ", self.constraint, self.later, self.actual)?;
            match &self.earlier {
                Some(e) => write!(f, "{e}")?,
                None => write!(f, "cycle 0")?,
            }
            return write!(f, " with no REF to its rank in between; at most {} allowed", self.required);
        }
        if self.constraint == names::TREFW {
            return write!(
                f,
                "{}: {} came {} cycles after the REF a retention window of bins before (or cycle 0); at most {} allowed",
                self.constraint, self.later, self.actual, self.required
            );
        }
        match &self.earlier {
            Some(e) => write!(f, "{}: {} came {} cycles after {}; needs {}", self.constraint, self.later, self.actual, e, self.required),
            None => write!(f, "{}: {}; needs {}, got {}", self.constraint, self.later, self.required, self.actual),
        }
    }
}

impl From<&Violation> for crate::Error {
    fn from(v: &Violation) -> Self {
        crate::Error::Violation(v.to_string())
    }
}

#[derive(Clone, Debug, Default)]
struct BankState {
    open_row: Option<u32>,
    /// Last ACT (kept after the bank closes, for tRC).
    act: Option<CommandRecord>,
    /// Last PRE that closed this bank, or PREA of its rank (for tRP).
    pre: Option<CommandRecord>,
    /// Last RD/RDA and WR/WRA since the last ACT (for tRTP / tWR).
    rd: Option<CommandRecord>,
    wr: Option<CommandRecord>,
    /// Last RDA/WRA and the cycle its internal precharge starts.
    auto_pre: Option<(CommandRecord, Cycle)>,
    /// Last REFPB or REFSB to this bank, and (per-bank refresh obligation) its latest refresh,
    /// a bank refresh or its rank's REF, with the count for the pull-in bound.
    bank_refresh: Option<CommandRecord>,
    refreshed: Option<CommandRecord>,
    refresh_count: u64,
    refresh_overdue_reported: bool,
}

#[derive(Clone, Debug, Default)]
struct GroupState {
    act: Option<CommandRecord>,
    rd: Option<CommandRecord>,
    wr: Option<CommandRecord>,
}

#[derive(Clone, Debug, Default)]
struct RankState {
    /// The last four ACTs; `acts[act_head]` is the oldest (the 4th-previous).
    acts: [Option<CommandRecord>; 4],
    act_head: usize,
    rd: Option<CommandRecord>,
    wr: Option<CommandRecord>,
    refresh: Option<CommandRecord>,
    refresh_overdue_reported: bool,
    /// With `RefreshObligation::Retention`: the cycles of the last `refs` REFs, oldest first.
    refs: VecDeque<Cycle>,
    /// REFs issued (the pull-in bound).
    ref_count: u64,
    /// Last REFPB or REFSB to any of its banks.
    bank_refresh: Option<CommandRecord>,
    /// Its last command other than a power-down entry or exit.
    last: Option<CommandRecord>,
    /// Its power-down entry while it is down, and its last exit.
    power_down: Option<CommandRecord>,
    power_up: Option<CommandRecord>,
    /// Last PRE or PREA command (tPPD).
    pre: Option<CommandRecord>,
}

#[derive(Clone, Debug, Default)]
struct ChannelState {
    last: Option<CommandRecord>,
    /// With a column-command throttle: the channel's last `column_window_commands` column
    /// commands, oldest first.
    cols: VecDeque<CommandRecord>,
    /// Latest read and write bursts on the data bus (their commands).
    rd: Option<CommandRecord>,
    wr: Option<CommandRecord>,
}

/// Independent DRAM timing and protocol checker. Feed it every issued command with
/// [`observe`](Self::observe), in cycle order per channel (channels may interleave).
#[derive(Clone, Debug)]
pub struct TimingChecker {
    standard: Standard,
    rules: Rules,
    channels: u32,
    ranks: u32,
    bank_groups: u32,
    banks_per_group: u32,
    banks: Vec<BankState>,
    groups: Vec<GroupState>,
    rank_states: Vec<RankState>,
    chans: Vec<ChannelState>,
    refresh: RefreshObligation,
    violations: Vec<Violation>,
    violation_count: u64,
    commands_checked: u64,
}

/// Push a timing violation if `later` comes fewer than `required` cycles after `earlier`.
#[inline]
fn need(out: &mut Vec<Violation>, constraint: &'static str, earlier: &CommandRecord, later: &CommandRecord, required: u64) {
    let actual = later.cycle.saturating_sub(earlier.cycle);
    if actual < required {
        out.push(Violation { constraint, earlier: Some(*earlier), later: *later, required, actual });
    }
}

#[inline]
fn protocol(out: &mut Vec<Violation>, constraint: &'static str, earlier: Option<CommandRecord>, later: &CommandRecord) {
    out.push(Violation { constraint, earlier, later: *later, required: 0, actual: 0 });
}

/// The most binding of several (earlier, required) pairs for one constraint.
#[derive(Default)]
struct Worst(Option<(CommandRecord, u64)>);

impl Worst {
    #[inline]
    fn offer(&mut self, earlier: &CommandRecord, required: u64, now: Cycle) {
        let bound = earlier.cycle.saturating_add(required);
        if bound > now && self.0.is_none_or(|(e, r)| bound > e.cycle.saturating_add(r)) {
            self.0 = Some((*earlier, required));
        }
    }
    #[inline]
    fn report(self, out: &mut Vec<Violation>, constraint: &'static str, later: &CommandRecord) {
        if let Some((e, r)) = self.0 {
            need(out, constraint, &e, later, r);
        }
    }
}

/// The later of two optional records.
#[inline]
fn latest(a: Option<CommandRecord>, b: Option<CommandRecord>) -> Option<CommandRecord> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.cycle >= x.cycle { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

impl TimingChecker {
    pub fn new(standard: Standard, org: &Organisation, timing: &TimingParams) -> Self {
        let ranks_total = (org.channels * org.ranks) as usize;
        let groups_total = ranks_total * org.bank_groups as usize;
        let banks_total = groups_total * org.banks_per_group as usize;
        TimingChecker {
            standard,
            rules: Rules::derive(standard, timing),
            channels: org.channels,
            ranks: org.ranks,
            bank_groups: org.bank_groups,
            banks_per_group: org.banks_per_group,
            banks: vec![BankState::default(); banks_total],
            groups: vec![GroupState::default(); groups_total],
            rank_states: vec![RankState::default(); ranks_total],
            chans: vec![ChannelState::default(); org.channels as usize],
            refresh: RefreshObligation::None,
            violations: Vec::new(),
            violation_count: 0,
            commands_checked: 0,
        }
    }

    /// Also require every rank to be refreshed at least every 9 x tREFI ("tREFI"). Off by
    /// default: runs with refresh disabled are legal.
    pub fn set_expect_refresh(&mut self, expect: bool) {
        self.refresh = if expect { RefreshObligation::Interval } else { RefreshObligation::None };
    }

    /// Builder form of [`set_expect_refresh`](Self::set_expect_refresh).
    pub fn with_expect_refresh(mut self, expect: bool) -> Self {
        self.set_expect_refresh(expect);
        self
    }

    /// What each rank's REFs must satisfy: JEDEC's distributed rate ("tREFI"), or each bin
    /// refreshed once per retention window ("tREFW": REF i + refs at most the window plus 9 x
    /// tREFI after REF i, and the first within that of cycle 0).
    pub fn with_refresh(mut self, obligation: RefreshObligation) -> Self {
        self.refresh = obligation;
        self
    }

    pub fn standard(&self) -> Standard {
        self.standard
    }

    /// The checker's own constraint table.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Check one command against everything seen before and record it. Returns the violations
    /// it causes (an empty, unallocated `Vec` when it is legal).
    pub fn observe(&mut self, rec: &CommandRecord) -> Vec<Violation> {
        self.commands_checked += 1;
        let mut out = Vec::new();
        self.check(rec, &mut out);
        if !out.is_empty() {
            self.violation_count += out.len() as u64;
            let room = MAX_KEPT_VIOLATIONS.saturating_sub(self.violations.len());
            self.violations.extend(out.iter().take(room).cloned());
        }
        out
    }

    /// `observe` each of `records`, in order (the violations are kept, see `violations`).
    pub fn observe_all(&mut self, records: &[CommandRecord]) {
        for rec in records {
            self.observe(rec);
        }
    }

    /// The first `n` violations found so far, as messages (a run's report shows a few).
    pub fn violation_examples(&self, n: usize) -> Vec<String> {
        self.violations.iter().take(n).map(|v| v.to_string()).collect()
    }

    /// The first [`MAX_KEPT_VIOLATIONS`] violations found so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Every violation found so far, including those not kept.
    pub fn violation_count(&self) -> u64 {
        self.violation_count
    }

    pub fn commands_checked(&self) -> u64 {
        self.commands_checked
    }

    /// Check a whole stream; returns every violation (not capped).
    pub fn check_stream(standard: Standard, org: &Organisation, timing: &TimingParams, records: &[CommandRecord]) -> Vec<Violation> {
        let mut checker = TimingChecker::new(standard, org, timing);
        let mut all = Vec::new();
        for rec in records {
            all.extend(checker.observe(rec));
        }
        all
    }

    // ---- indexing ----

    #[inline]
    fn rank_index(&self, channel: u32, rank: u32) -> usize {
        (channel * self.ranks + rank) as usize
    }
    #[inline]
    fn group_index(&self, rank_index: usize, bank_group: u32) -> usize {
        rank_index * self.bank_groups as usize + bank_group as usize
    }
    #[inline]
    fn bank_index(&self, group_index: usize, bank: u32) -> usize {
        group_index * self.banks_per_group as usize + bank as usize
    }
    /// Range of bank indices of one rank.
    #[inline]
    fn rank_banks(&self, rank_index: usize) -> std::ops::Range<usize> {
        let per_rank = (self.bank_groups * self.banks_per_group) as usize;
        rank_index * per_rank..(rank_index + 1) * per_rank
    }

    // ---- checking ----

    fn check(&mut self, rec: &CommandRecord, out: &mut Vec<Violation>) {
        let a = rec.addr;
        let bank_ok = rec.command.is_rank_wide() || (a.bank_group < self.bank_groups && a.bank < self.banks_per_group);
        if a.channel >= self.channels || a.rank >= self.ranks || !bank_ok {
            protocol(out, names::OUT_OF_RANGE, None, rec);
            return;
        }

        if rec.command.is_power_down() {
            self.power_down(rec, out);
            return;
        }

        // Channel: stream order and command bus.
        let ch = &mut self.chans[a.channel as usize];
        if let Some(last) = ch.last {
            if rec.cycle < last.cycle {
                protocol(out, names::OUT_OF_ORDER, Some(last), rec);
                return;
            }
            let long = matches!(last.command, Command::Act | Command::Rd | Command::Rda | Command::Wr | Command::Wra);
            let required = if long { self.rules.long_command_cycles } else { 1 };
            if rec.cycle < last.cycle + required {
                let actual = rec.cycle - last.cycle;
                out.push(Violation { constraint: names::COMMAND_BUS, earlier: Some(last), later: *rec, required, actual });
            }
        }
        ch.last = Some(*rec);

        // Rank: nothing during tRFC; refresh rate.
        let ri = self.rank_index(a.channel, a.rank);
        let rank = &mut self.rank_states[ri];
        if let Some(e) = rank.power_down {
            protocol(out, names::TO_POWERED_DOWN, Some(e), rec);
        } else if let Some(x) = &rank.power_up {
            need(out, names::TXP, x, rec, self.rules.power_down_exit);
        }
        rank.last = Some(*rec);
        if let Some(r) = &rank.refresh {
            need(out, names::TRFC, r, rec, self.rules.refresh_cycle);
        }
        if let Some(e) = &rank.bank_refresh {
            if matches!(rec.command, Command::Ref | Command::Prea) {
                let (name, cycle) = self.rules.bank_refresh(e.command).cycle;
                need(out, name, e, rec, cycle);
            }
        }
        if !rank.refresh_overdue_reported && self.refresh != RefreshObligation::PerBank {
            // The latest cycle the rank's next REF may come, counted from `earlier`.
            let (constraint, since, allowed) = match self.refresh {
                RefreshObligation::None | RefreshObligation::PerBank => (names::TREFI, 0, u64::MAX),
                RefreshObligation::Interval => (names::TREFI, rank.refresh.map_or(0, |r| r.cycle), self.rules.max_refresh_gap),
                RefreshObligation::Retention { window, refs } => {
                    let allowed = window + self.rules.max_refresh_gap;
                    match rank.refs.front() {
                        Some(&first) if rank.refs.len() as u64 == refs => (names::TREFW, first, allowed),
                        Some(_) => (names::TREFW, 0, u64::MAX),
                        None => (names::TREFW, 0, allowed),
                    }
                }
            };
            let gap = rec.cycle.saturating_sub(since);
            if gap > allowed {
                // A REF that comes late breaks the rule too; other commands show it overdue.
                out.push(Violation { constraint, earlier: rank.refresh, later: *rec, required: allowed, actual: gap });
                rank.refresh_overdue_reported = true;
            }
        }

        match rec.command {
            Command::Act => self.activate(rec, ri, out),
            Command::Pre => self.precharge(rec, ri, out),
            Command::Prea => self.precharge_all(rec, ri, out),
            Command::Rd | Command::Rda | Command::Wr | Command::Wra => self.column(rec, ri, out),
            Command::Ref => self.refresh(rec, ri, out),
            Command::RefPb | Command::RefSb => self.refresh_bank(rec, ri, out),
            Command::Pdea | Command::Pdep | Command::Pdxa | Command::Pdxp => unreachable!("checked by power_down"),
        }
    }

    /// A power-down entry or exit (CKE, not the command bus): an entry of the kind the banks'
    /// state gives, after the rank's last read, write, refresh and other command by their entry
    /// distances; an exit of the same kind, tCKE after it. The rank's next command waits tXP
    /// (checked in `check`).
    fn power_down(&mut self, rec: &CommandRecord, out: &mut Vec<Violation>) {
        let a = rec.addr;
        if a.channel >= self.channels || a.rank >= self.ranks {
            protocol(out, names::OUT_OF_RANGE, None, rec);
            return;
        }
        if let Some(last) = self.chans[a.channel as usize].last {
            if rec.cycle < last.cycle {
                protocol(out, names::OUT_OF_ORDER, Some(last), rec);
                return;
            }
        }
        let ri = self.rank_index(a.channel, a.rank);
        let r = &self.rules;
        if rec.command.enters_power_down() {
            let any_open = self.rank_banks(ri).any(|b| self.banks[b].open_row.is_some());
            let rank = &self.rank_states[ri];
            if let Some(e) = rank.power_down {
                protocol(out, names::POWER_DOWN_STATE, Some(e), rec);
                return;
            }
            if any_open != (rec.command == Command::Pdea) {
                protocol(out, names::POWER_DOWN_BANKS, None, rec);
            }
            if let Some(e) = &rank.last {
                need(out, names::POWER_DOWN_ENTRY, e, rec, 1);
            }
            if let Some(e) = &rank.rd {
                need(out, names::POWER_DOWN_ENTRY, e, rec, r.read_to_power_down);
            }
            if let Some(e) = &rank.wr {
                need(out, names::POWER_DOWN_ENTRY, e, rec, r.write_to_power_down);
            }
            if let Some(e) = &rank.refresh {
                need(out, names::TRFC, e, rec, r.refresh_cycle);
            }
            if let Some(e) = &rank.bank_refresh {
                let (name, cycle) = r.bank_refresh(e.command).cycle;
                need(out, name, e, rec, cycle);
            }
            self.rank_states[ri].power_down = Some(*rec);
        } else {
            let rank = &mut self.rank_states[ri];
            let Some(e) = rank.power_down else {
                protocol(out, names::POWER_DOWN_STATE, rank.power_up, rec);
                return;
            };
            if (e.command == Command::Pdea) != (rec.command == Command::Pdxa) {
                protocol(out, names::POWER_DOWN_STATE, Some(e), rec);
            }
            need(out, names::TCKE, &e, rec, r.power_down_least);
            rank.power_down = None;
            rank.power_up = Some(*rec);
        }
    }

    /// A REFPB, or a REFSB (its bank index in every bank group): its banks closed and
    /// precharged (a REFSB's also a row cycle past their last ACT), their refresh cycle since
    /// their last, the rank's distances since its last bank refresh and its last ACT; with the
    /// per-bank obligation, no bank of the rank overdue and these not too far ahead.
    fn refresh_bank(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        let r = &self.rules;
        let br = r.bank_refresh(rec.command);
        let banks: Vec<usize> = if rec.command == Command::RefSb {
            (0..self.bank_groups).map(|g| self.bank_index(self.group_index(ri, g), rec.addr.bank)).collect()
        } else {
            vec![self.bank_index(self.group_index(ri, rec.addr.bank_group), rec.addr.bank)]
        };
        self.closed_and_precharged(banks.iter().copied(), rec, br.open, out);
        // A REFSB row-cycles its banks: a row cycle past their last ACT (tRC may exceed tRAS + tRP).
        if rec.command == Command::RefSb {
            let mut rc = Worst::default();
            for &bi in &banks {
                if let Some(e) = &self.banks[bi].act {
                    rc.offer(e, r.act_to_act_bank, rec.cycle);
                }
            }
            rc.report(out, names::TRC, rec);
        }
        let mut cycle = Worst::default();
        for &bi in &banks {
            let bank = &mut self.banks[bi];
            if let Some(e) = &bank.bank_refresh {
                cycle.offer(e, r.bank_refresh(e.command).cycle.1, rec.cycle);
            }
            bank.bank_refresh = Some(*rec);
        }
        cycle.report(out, br.cycle.0, rec);
        let first_group = self.group_index(ri, 0);
        let mut act = None;
        for g in first_group..first_group + self.bank_groups as usize {
            act = latest(act, self.groups[g].act);
        }
        if let Some(e) = &act {
            need(out, br.from_act.0, e, rec, br.from_act.1);
        }
        let rank = &mut self.rank_states[ri];
        if let Some(e) = &rank.bank_refresh {
            let (name, gap) = r.bank_refresh(e.command).to_refresh;
            need(out, name, e, rec, gap);
        }
        rank.bank_refresh = Some(*rec);
        if self.refresh == RefreshObligation::PerBank {
            let range = self.rank_banks(ri);
            for bi in banks {
                self.bank_refreshed(bi, rec, out);
            }
            self.banks_overdue(range, rec, out);
        }
    }

    /// Per-bank obligation: bank `bi` refreshed by `rec` (a REFPB to it or a REF of its rank).
    fn bank_refreshed(&mut self, bi: usize, rec: &CommandRecord, out: &mut Vec<Violation>) {
        let (gap, interval) = (self.rules.max_refresh_gap, self.rules.refresh_interval.max(1));
        let bank = &mut self.banks[bi];
        let since = bank.refreshed.map_or(0, |e| e.cycle);
        if rec.cycle - since.min(rec.cycle) > gap && !bank.refresh_overdue_reported {
            out.push(Violation {
                constraint: names::TREFI,
                earlier: bank.refreshed,
                later: *rec,
                required: gap,
                actual: rec.cycle - since,
            });
        }
        bank.refresh_count += 1;
        let allowed = rec.cycle / interval + 1 + 8;
        if bank.refresh_count > allowed {
            out.push(Violation {
                constraint: names::REF_PULL_IN,
                earlier: bank.refreshed,
                later: *rec,
                required: allowed,
                actual: bank.refresh_count,
            });
        }
        bank.refreshed = Some(*rec);
        bank.refresh_overdue_reported = false;
    }

    /// Per-bank obligation: the banks of `range` whose last refresh is more than 9 x tREFI
    /// before `rec` (each reported once until refreshed).
    fn banks_overdue(&mut self, range: std::ops::Range<usize>, rec: &CommandRecord, out: &mut Vec<Violation>) {
        let gap = self.rules.max_refresh_gap;
        for bank in &mut self.banks[range] {
            let since = bank.refreshed.map_or(0, |e| e.cycle);
            if rec.cycle.saturating_sub(since) > gap && !bank.refresh_overdue_reported {
                out.push(Violation {
                    constraint: names::TREFI,
                    earlier: bank.refreshed,
                    later: *rec,
                    required: gap,
                    actual: rec.cycle - since,
                });
                bank.refresh_overdue_reported = true;
            }
        }
    }

    fn activate(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        let r = &self.rules;
        let gi = self.group_index(ri, rec.addr.bank_group);
        let bi = self.bank_index(gi, rec.addr.bank);

        // Same bank.
        let bank = &mut self.banks[bi];
        if bank.open_row.is_some() {
            protocol(out, names::ACT_TO_OPEN, bank.act, rec);
        }
        if let Some(e) = &bank.act {
            need(out, names::TRC, e, rec, r.act_to_act_bank);
        }
        if let Some(e) = &bank.pre {
            need(out, names::TRP, e, rec, r.pre_to_act);
        }
        if let Some((e, at)) = &bank.auto_pre {
            need(out, names::TRP_AUTO, e, rec, (at + r.pre_to_act).saturating_sub(e.cycle));
        }
        if let Some(e) = &bank.bank_refresh {
            let (name, cycle) = r.bank_refresh(e.command).cycle;
            need(out, name, e, rec, cycle);
        }
        if let Some(e) = &self.rank_states[ri].bank_refresh {
            // Its own banks wait the refresh cycle (above); the others this.
            let (name, gap) = r.bank_refresh(e.command).to_act;
            if self.banks[bi].bank_refresh != Some(*e) {
                need(out, name, e, rec, gap);
            }
        }
        let bank = &mut self.banks[bi];
        bank.open_row = Some(rec.addr.row);
        bank.act = Some(*rec);
        bank.rd = None;
        bank.wr = None;
        bank.auto_pre = None;

        // Same rank: tRRD_L / tRRD_S.
        let first_group = self.group_index(ri, 0);
        let mut other: Option<CommandRecord> = None;
        for g in first_group..first_group + self.bank_groups as usize {
            if g != gi {
                other = latest(other, self.groups[g].act);
            }
        }
        if let Some(e) = &self.groups[gi].act {
            need(out, r.name_rrd_same, e, rec, r.act_to_act_same_group);
        }
        if let Some(e) = &other {
            need(out, r.name_rrd_other, e, rec, r.act_to_act_other_group);
        }
        self.groups[gi].act = Some(*rec);

        // tFAW.
        let rank = &mut self.rank_states[ri];
        if let Some(e) = &rank.acts[rank.act_head] {
            need(out, names::TFAW, e, rec, r.four_act_window);
        }
        rank.acts[rank.act_head] = Some(*rec);
        rank.act_head = (rank.act_head + 1) % 4;
    }

    /// tPPD: a PRE or PREA command after the rank's last (an implied precharge is no command).
    fn precharge_to_precharge(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        let rank = &mut self.rank_states[ri];
        if let (Some(e), true) = (&rank.pre, self.rules.precharge_to_precharge > 0) {
            need(out, names::TPPD, e, rec, self.rules.precharge_to_precharge);
        }
        rank.pre = Some(*rec);
    }

    fn precharge(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        self.precharge_to_precharge(rec, ri, out);
        let r = &self.rules;
        let gi = self.group_index(ri, rec.addr.bank_group);
        let bi = self.bank_index(gi, rec.addr.bank);
        let bank = &mut self.banks[bi];
        if bank.open_row.is_none() {
            return; // PRE to a closed (or auto-precharging) bank is a no-op.
        }
        if let Some(e) = &bank.act {
            need(out, names::TRAS, e, rec, r.act_to_pre);
        }
        if let Some(e) = &bank.rd {
            need(out, names::TRTP, e, rec, r.read_to_pre);
        }
        if let Some(e) = &bank.wr {
            need(out, names::TWR, e, rec, r.write_to_pre);
        }
        bank.open_row = None;
        bank.pre = Some(*rec);
    }

    fn precharge_all(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        self.precharge_to_precharge(rec, ri, out);
        let r = &self.rules;
        let (mut ras, mut rtp, mut wr) = (Worst::default(), Worst::default(), Worst::default());
        let range = self.rank_banks(ri);
        for bank in &mut self.banks[range] {
            if bank.open_row.is_some() {
                if let Some(e) = &bank.act {
                    ras.offer(e, r.act_to_pre, rec.cycle);
                }
                if let Some(e) = &bank.rd {
                    rtp.offer(e, r.read_to_pre, rec.cycle);
                }
                if let Some(e) = &bank.wr {
                    wr.offer(e, r.write_to_pre, rec.cycle);
                }
            }
            // PREA -> ACT >= tRP applies to every bank of the rank.
            bank.open_row = None;
            bank.pre = Some(*rec);
        }
        ras.report(out, names::TRAS, rec);
        rtp.report(out, names::TRTP, rec);
        wr.report(out, names::TWR, rec);
    }

    fn column(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        let r = &self.rules;
        let is_read = rec.command.is_read();
        let gi = self.group_index(ri, rec.addr.bank_group);
        let bi = self.bank_index(gi, rec.addr.bank);

        // Same bank: state and tRCD.
        let bank = &mut self.banks[bi];
        match bank.open_row {
            None => {
                let closer = latest(bank.pre, bank.auto_pre.map(|(e, _)| e));
                protocol(out, names::COL_TO_CLOSED, closer, rec);
            }
            Some(row) => {
                if row != rec.addr.row {
                    protocol(out, names::COL_TO_WRONG_ROW, bank.act, rec);
                }
                if let Some(e) = &bank.act {
                    need(out, names::TRCD, e, rec, r.act_to_column);
                }
            }
        }

        // Same rank, same and other bank groups.
        let first_group = self.group_index(ri, 0);
        let (mut other_rd, mut other_wr) = (None, None);
        for g in first_group..first_group + self.bank_groups as usize {
            if g != gi {
                other_rd = latest(other_rd, self.groups[g].rd);
                other_wr = latest(other_wr, self.groups[g].wr);
            }
        }
        let group = &self.groups[gi];
        if is_read {
            if let Some(e) = &group.rd {
                need(out, r.name_ccd_same, e, rec, r.col_to_col_same_group);
            }
            if let Some(e) = &other_rd {
                need(out, r.name_ccd_other, e, rec, r.col_to_col_other_group);
            }
            if let Some(e) = &group.wr {
                need(out, r.name_wtr_same, e, rec, r.write_to_read_same_group);
            }
            if let Some(e) = &other_wr {
                need(out, r.name_wtr_other, e, rec, r.write_to_read_other_group);
            }
        } else {
            if let Some(e) = &group.wr {
                need(out, r.name_ccd_write_same, e, rec, r.write_to_write_same_group);
            }
            if let Some(e) = &other_wr {
                need(out, r.name_ccd_other, e, rec, r.col_to_col_other_group);
            }
            if let Some(e) = &self.rank_states[ri].rd {
                need(out, names::RD_TO_WR, e, rec, r.read_to_write);
            }
        }

        // Other ranks of the channel.
        let first_rank = self.rank_index(rec.addr.channel, 0);
        let (mut rank_rd, mut rank_wr) = (None, None);
        for k in first_rank..first_rank + self.ranks as usize {
            if k != ri {
                rank_rd = latest(rank_rd, self.rank_states[k].rd);
                rank_wr = latest(rank_wr, self.rank_states[k].wr);
            }
        }
        let (after_rd, after_wr) = if is_read {
            ((names::RANK_RD_RD, r.rank_read_to_read), (names::RANK_WR_RD, r.rank_write_to_read))
        } else {
            ((names::RANK_RD_WR, r.rank_read_to_write), (names::RANK_WR_WR, r.rank_write_to_write))
        };
        if let Some(e) = &rank_rd {
            need(out, after_rd.0, e, rec, after_rd.1);
        }
        if let Some(e) = &rank_wr {
            need(out, after_wr.0, e, rec, after_wr.1);
        }

        // Data bus: no overlapping bursts (reported only if no rule above flagged the pair).
        let latency = |c: Command| if c.is_read() { r.read_latency } else { r.write_latency };
        let start = rec.cycle + latency(rec.command);
        let end = start + r.burst;
        let ch = &mut self.chans[rec.addr.channel as usize];
        // A throttle's window: the column command as many back as the window holds.
        if r.column_window_commands > 0 {
            if ch.cols.len() == r.column_window_commands as usize {
                let oldest = ch.cols.pop_front().expect("a full window");
                need(out, names::COLUMN_WINDOW, &oldest, rec, r.column_window);
            }
            ch.cols.push_back(*rec);
        }
        for prev in [ch.rd, ch.wr].into_iter().flatten() {
            let prev_latency = latency(prev.command);
            let prev_start = prev.cycle + prev_latency;
            let prev_end = prev_start + r.burst;
            if start < prev_end && prev_start < end && !out.iter().any(|v| !v.is_protocol() && v.earlier == Some(prev)) {
                out.push(Violation {
                    constraint: names::DATA_BUS,
                    earlier: Some(prev),
                    later: *rec,
                    required: (prev_latency + r.burst).saturating_sub(latency(rec.command)),
                    actual: rec.cycle - prev.cycle,
                });
            }
        }

        // Record.
        if is_read {
            ch.rd = Some(*rec);
            self.groups[gi].rd = Some(*rec);
            self.rank_states[ri].rd = Some(*rec);
        } else {
            ch.wr = Some(*rec);
            self.groups[gi].wr = Some(*rec);
            self.rank_states[ri].wr = Some(*rec);
        }
        let bank = &mut self.banks[bi];
        if is_read {
            bank.rd = Some(*rec);
        } else {
            bank.wr = Some(*rec);
        }
        if rec.command.auto_precharges() && bank.open_row.is_some() {
            let own = if is_read { r.read_to_pre } else { r.write_to_pre };
            let ras_done = bank.act.map_or(0, |e| e.cycle + r.act_to_pre);
            let at = (rec.cycle + own).max(ras_done);
            // The implied precharge is a PRE's: an RDA's may not cut an earlier write's recovery.
            if let (true, Some(w)) = (is_read, bank.wr) {
                if at < w.cycle + r.write_to_pre {
                    out.push(Violation {
                        constraint: names::TWR_AUTO,
                        earlier: Some(w),
                        later: *rec,
                        required: r.write_to_pre.saturating_sub(r.read_to_pre),
                        actual: rec.cycle - w.cycle,
                    });
                }
            }
            bank.auto_pre = Some((*rec, at));
            bank.open_row = None;
        }
    }

    /// A refresh's banks: closed (else `open_name`, a protocol violation) and tRP past their
    /// precharge, explicit or implicit (the most binding bank reported).
    fn closed_and_precharged(
        &self,
        banks: impl Iterator<Item = usize>,
        rec: &CommandRecord,
        open_name: &'static str,
        out: &mut Vec<Violation>,
    ) {
        let r = &self.rules;
        let mut open: Option<Option<CommandRecord>> = None;
        let (mut rp, mut rp_auto) = (Worst::default(), Worst::default());
        for bank in banks.map(|bi| &self.banks[bi]) {
            if bank.open_row.is_some() && open.is_none() {
                open = Some(bank.act);
            }
            if let Some(e) = &bank.pre {
                rp.offer(e, r.pre_to_act, rec.cycle);
            }
            if let Some((e, at)) = &bank.auto_pre {
                rp_auto.offer(e, (at + r.pre_to_act).saturating_sub(e.cycle), rec.cycle);
            }
        }
        if let Some(act) = open {
            protocol(out, open_name, act, rec);
        }
        rp.report(out, names::TRP, rec);
        rp_auto.report(out, names::TRP_AUTO, rec);
    }

    fn refresh(&mut self, rec: &CommandRecord, ri: usize, out: &mut Vec<Violation>) {
        self.closed_and_precharged(self.rank_banks(ri), rec, names::REF_WITH_OPEN, out);
        let rank = &mut self.rank_states[ri];
        if self.refresh == RefreshObligation::Interval {
            // JEDEC: at most 8 REFs ahead of one per tREFI (the first falls due within one).
            rank.ref_count += 1;
            let allowed = rec.cycle / self.rules.refresh_interval.max(1) + 1 + 8;
            if rank.ref_count > allowed {
                out.push(Violation {
                    constraint: names::REF_PULL_IN,
                    earlier: rank.refresh,
                    later: *rec,
                    required: allowed,
                    actual: rank.ref_count,
                });
            }
        }
        rank.refresh = Some(*rec);
        rank.refresh_overdue_reported = false;
        if self.refresh == RefreshObligation::PerBank {
            for bi in self.rank_banks(ri) {
                self.bank_refreshed(bi, rec, out);
            }
            return;
        }
        let rank = &mut self.rank_states[ri];
        if let RefreshObligation::Retention { refs, .. } = self.refresh {
            if rank.refs.len() as u64 == refs {
                rank.refs.pop_front();
            }
            rank.refs.push_back(rec.cycle);
        }
    }
}
