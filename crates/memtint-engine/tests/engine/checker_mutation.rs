//! Mutation tests of the independent timing checker, for every device preset: each JEDEC
//! constraint between two commands as a hand-built sequence whose last command comes exactly at
//! the limit (no violation), and the same sequence with that command one cycle earlier (exactly
//! one violation, naming the constraint, both commands and the distances). A constraint the
//! checker stopped enforcing fails here whatever the controllers do.

use memtint_engine::checker::TimingChecker;
use memtint_engine::dram::refresh_timing::RefreshObligation;
use memtint_engine::dram::{Command, CommandRecord, DramAddress, Organisation, Standard, TimingParams};
use memtint_engine::presets;

/// A device under test: one channel, two ranks, the preset's first organisation.
#[derive(Clone)]
struct Dev {
    name: &'static str,
    std: Standard,
    org: Organisation,
    t: TimingParams,
}

impl Dev {
    fn groups(&self) -> u32 {
        self.org.bank_groups
    }
    /// The standard's name for a rule with `_S`/`_L` forms (DDR2/DDR3/LPDDR4: the plain name).
    fn name(&self, base: &str, long: bool) -> String {
        match (self.std.has_bank_groups(), long) {
            (false, _) => base.to_string(),
            (true, true) => format!("{base}_L"),
            (true, false) => format!("{base}_S"),
        }
    }
}

fn every_device() -> Vec<Dev> {
    let all: Vec<Dev> = presets::DEVICES
        .iter()
        .map(|&(name, _)| {
            let d = presets::device(name).unwrap();
            let o = &d.organisations()[0];
            let bus = if d.standard == Standard::Ddr5 { 32 } else { 64 };
            Dev {
                name,
                std: d.standard,
                org: d.organisation(o.density_gbit, o.device_width, 1, 2, bus).unwrap(),
                t: d.timing(o.density_gbit, o.device_width).unwrap(),
            }
        })
        .collect();
    for std in [Standard::Ddr2, Standard::Ddr3, Standard::Ddr4, Standard::Ddr5, Standard::Lpddr4] {
        assert!(all.iter().any(|d| d.std == std), "no {} preset", std.name());
    }
    all
}

fn rec(cycle: u64, command: Command, rank: u32, bank_group: u32, bank: u32, row: u32) -> CommandRecord {
    let column = if command.is_column() { 8 } else { 0 };
    CommandRecord { cycle, command, addr: DramAddress { channel: 0, rank, bank_group, bank, row, column } }
}
fn act(c: u64, rank: u32, bg: u32, bank: u32) -> CommandRecord {
    rec(c, Command::Act, rank, bg, bank, 7)
}
fn col(c: u64, cmd: Command, rank: u32, bg: u32, bank: u32) -> CommandRecord {
    rec(c, cmd, rank, bg, bank, 7)
}
fn pre(c: u64, rank: u32, bg: u32, bank: u32) -> CommandRecord {
    rec(c, Command::Pre, rank, bg, bank, 0)
}
fn rank_cmd(c: u64, cmd: Command, rank: u32) -> CommandRecord {
    rec(c, cmd, rank, 0, 0, 0)
}
/// REFPB to one bank, REFSB to one bank index (in every bank group).
fn bank_ref(c: u64, cmd: Command, rank: u32, bank: u32) -> CommandRecord {
    rec(c, cmd, rank, 0, bank, 0)
}

/// One constraint on one device: `seq`'s last command at exactly the limit after `seq[earlier]`.
struct Case {
    what: String,
    dev: Dev,
    seq: Vec<CommandRecord>,
    constraint: String,
    earlier: usize,
}

fn case(what: &str, dev: &Dev, seq: Vec<CommandRecord>, constraint: &str, earlier: usize) -> Case {
    Case { what: what.to_string(), dev: dev.clone(), seq, constraint: constraint.to_string(), earlier }
}

/// The device with tRC above tRAS + tRP, so a row cycle binds on its own.
fn trc_slack(d: &Dev) -> Dev {
    let mut d = d.clone();
    d.t.tRC = d.t.tRAS + d.t.tRP + 5;
    d
}

/// Every constraint that applies to `d`'s standard, as cases.
fn cases(d: &Dev) -> Vec<Case> {
    use Command::*;
    let t = &d.t;
    let (cl, cwl, bl) = (t.CL, t.CWL, t.tBL);
    let wr_rec = cwl + bl + t.tWR;
    let mut v = Vec::new();

    // ---- one bank ----
    for cmd in [Rd, Wr, Rda, Wra] {
        v.push(case(&format!("ACT->{cmd}"), d, vec![act(0, 0, 0, 0), col(t.tRCD, cmd, 0, 0, 0)], "tRCD", 0));
    }
    v.push(case("ACT->PRE", d, vec![act(0, 0, 0, 0), pre(t.tRAS, 0, 0, 0)], "tRAS", 0));
    // PRE late in the row: tRC is met, tRP binds.
    v.push(case("PRE->ACT", d, vec![act(0, 0, 0, 0), pre(t.tRC, 0, 0, 0), act(t.tRC + t.tRP, 0, 0, 0)], "tRP", 1));
    let s = trc_slack(d);
    v.push(case("ACT->ACT same bank", &s, vec![act(0, 0, 0, 0), pre(s.t.tRAS, 0, 0, 0), act(s.t.tRC, 0, 0, 0)], "tRC", 0));
    // A column command once tRAS is met, so the column-to-precharge distance binds.
    let late = t.tRCD.max(t.tRAS);
    v.push(case("RD->PRE", d, vec![act(0, 0, 0, 0), col(late, Rd, 0, 0, 0), pre(late + t.tRTP, 0, 0, 0)], "tRTP", 1));
    v.push(case("WR->PRE", d, vec![act(0, 0, 0, 0), col(late, Wr, 0, 0, 0), pre(late + wr_rec, 0, 0, 0)], "tWR", 1));
    v.push(case(
        "RDA->ACT",
        d,
        vec![act(0, 0, 0, 0), col(late, Rda, 0, 0, 0), act(late + t.tRTP + t.tRP, 0, 0, 0)],
        "tRP (auto-precharge)",
        1,
    ));
    v.push(case(
        "WRA->ACT",
        d,
        vec![act(0, 0, 0, 0), col(late, Wra, 0, 0, 0), act(late + wr_rec + t.tRP, 0, 0, 0)],
        "tRP (auto-precharge)",
        1,
    ));
    {
        // An RDA's implied precharge waits for an earlier write's recovery (tWTR lowered, so
        // the write-to-read distance does not bind first).
        let mut w = d.clone();
        (w.t.tWTR_L, w.t.tWTR_S) = (0, 0);
        let rda = late + wr_rec - t.tRTP;
        v.push(case("WR->RDA", &w, vec![act(0, 0, 0, 0), col(late, Wr, 0, 0, 0), col(rda, Rda, 0, 0, 0)], "tWR (auto-precharge)", 1));
    }

    // ---- activations of a rank ----
    v.push(case("ACT->ACT same group", d, vec![act(0, 0, 0, 0), act(t.tRRD_L, 0, 0, 1)], &d.name("tRRD", true), 0));
    if d.groups() > 1 {
        v.push(case("ACT->ACT other group", d, vec![act(0, 0, 0, 0), act(t.tRRD_S, 0, 1, 0)], &d.name("tRRD", false), 0));
    }
    {
        // Four ACTs tRRD apart (other groups where there are), the fifth a tFAW after the first;
        // tFAW raised where four tRRDs already span it.
        let mut f = d.clone();
        let (gap, groups) = if f.groups() > 1 { (f.t.tRRD_S, f.groups()) } else { (f.t.tRRD_L, 1) };
        f.t.tFAW = f.t.tFAW.max(4 * gap + 2);
        let at = |i: u32| (i / groups, i % groups);
        let mut seq: Vec<CommandRecord> = (0..4u32).map(|i| act(i as u64 * gap, 0, at(i).1, at(i).0)).collect();
        seq.push(act(f.t.tFAW, 0, at(4).1, at(4).0));
        v.push(case("fifth ACT", &f, seq, "tFAW", 0));
    }

    // ---- column commands of a rank ----
    // Two banks open: bank 0 and bank 1 of group 0, bank 0 of group 1 where there is one.
    let opened = t.tRRD_L.max(t.tRRD_S) * 2;
    let open = |r: u32| vec![act(0, r, 0, 0), act(t.tRRD_L, r, 0, 1)];
    let first = opened + t.tRCD;
    let other_group = |seq: &mut Vec<CommandRecord>| seq.push(act(opened, 0, 1, 0));
    for (a, b, name) in [(Rd, Rd, "tCCD"), (Wr, Wr, "tCCD")] {
        // DDR5 spaces writes to one group by their own tCCD_L_WR.
        let (same, same_name) =
            if a == Wr && d.std == Standard::Ddr5 { (t.tCCD_L_WR, "tCCD_L_WR".to_string()) } else { (t.tCCD_L, d.name(name, true)) };
        let mut seq = open(0);
        seq.extend([col(first, a, 0, 0, 0), col(first + same, b, 0, 0, 1)]);
        v.push(case(&format!("{a}->{b} same group"), d, seq, &same_name, 2));
        if d.groups() > 1 {
            let mut seq = open(0);
            other_group(&mut seq);
            seq.extend([col(first, a, 0, 0, 0), col(first + t.tCCD_S, b, 0, 1, 0)]);
            v.push(case(&format!("{a}->{b} other group"), d, seq, &d.name(name, false), 3));
        }
    }
    let mut seq = open(0);
    seq.extend([col(first, Wr, 0, 0, 0), col(first + cwl + bl + t.tWTR_L, Rd, 0, 0, 1)]);
    v.push(case("WR->RD same group", d, seq, &d.name("tWTR", true), 2));
    if d.groups() > 1 {
        let mut seq = open(0);
        other_group(&mut seq);
        seq.extend([col(first, Wr, 0, 0, 0), col(first + cwl + bl + t.tWTR_S, Rd, 0, 1, 0)]);
        v.push(case("WR->RD other group", d, seq, &d.name("tWTR", false), 3));
    }
    // DDR5's turnaround keeps its write preamble: four idle bus cycles, not two.
    let (turnaround, bus) = if d.std == Standard::Ddr5 { (4, 2) } else { (2, 1) };
    let mut seq = open(0);
    seq.extend([col(first, Rd, 0, 0, 0), col(first + (cl + bl + turnaround).saturating_sub(cwl), Wr, 0, 0, 1)]);
    v.push(case("RD->WR", d, seq, "rd-to-wr", 2));
    if bus > 1 {
        // DDR5's ACT, RD and WR hold the command bus two cycles; a PRE to another group's open
        // bank (past its tRAS) is held only by that.
        for c in [Act, Rd, Wr] {
            let mut seq = open(0);
            other_group(&mut seq);
            let at = opened + t.tRAS;
            seq.push(if c == Act { act(at, 0, 2, 0) } else { col(at, c, 0, 0, 0) });
            seq.push(pre(at + bus, 0, 1, 0));
            v.push(case(&format!("{c}->PRE, command bus"), d, seq, "command bus", 3));
        }
    }

    // ---- other rank of the channel ----
    // DDR5's read-to-write idle cycles are the data bus's: a write to another rank keeps them too.
    let switch_to_write = if d.std == Standard::Ddr5 { t.tRTRS.max(turnaround) } else { t.tRTRS };
    for (a, b, gap, name) in [
        (Rd, Rd, bl + t.tRTRS, "rank-to-rank rd-to-rd"),
        (Wr, Wr, bl + t.tRTRS, "rank-to-rank wr-to-wr"),
        (Rd, Wr, (cl + bl + switch_to_write).saturating_sub(cwl), "rank-to-rank rd-to-wr"),
        (Wr, Rd, (cwl + bl + t.tRTRS).saturating_sub(cl), "rank-to-rank wr-to-rd"),
    ] {
        // A distance of one cycle or less is the command bus's.
        if gap > 1 {
            let seq = vec![act(0, 0, 0, 0), act(bus, 1, 0, 0), col(bus + t.tRCD, a, 0, 0, 0), col(bus + t.tRCD + gap, b, 1, 0, 0)];
            v.push(case(&format!("{a} rank 0->{b} rank 1"), d, seq, name, 2));
        }
    }

    // ---- precharge-all ----
    let two = |extra: Vec<CommandRecord>| {
        let mut seq = vec![act(0, 0, 0, 0), act(t.tRRD_L, 0, 0, 1)];
        seq.extend(extra);
        seq
    };
    v.push(case("ACT->PREA", d, two(vec![rank_cmd(t.tRRD_L + t.tRAS, Prea, 0)]), "tRAS", 1));
    let late2 = t.tRRD_L + late;
    v.push(case("RD->PREA", d, two(vec![col(late2, Rd, 0, 0, 1), rank_cmd(late2 + t.tRTP, Prea, 0)]), "tRTP", 2));
    v.push(case("WR->PREA", d, two(vec![col(late2, Wr, 0, 0, 1), rank_cmd(late2 + wr_rec, Prea, 0)]), "tWR", 2));
    v.push(case("PREA->ACT", d, vec![act(0, 0, 0, 0), rank_cmd(t.tRAS, Prea, 0), act(t.tRAS + t.tRP, 0, 0, 1)], "tRP", 1));

    // ---- precharge commands of a rank (DDR5's tPPD; PRE holds the command bus one cycle) ----
    if t.tPPD > 1 {
        let at = t.tRRD_L + t.tRAS;
        let ppd = |first: CommandRecord, second: CommandRecord, what: &str| case(what, d, two(vec![first, second]), "tPPD", 2);
        v.push(ppd(pre(at, 0, 0, 0), pre(at + t.tPPD, 0, 0, 1), "PRE->PRE"));
        v.push(ppd(pre(at, 0, 0, 0), rank_cmd(at + t.tPPD, Prea, 0), "PRE->PREA"));
        v.push(ppd(rank_cmd(at, Prea, 0), rank_cmd(at + t.tPPD, Prea, 0), "PREA->PREA"));
    }

    // ---- all-bank refresh ----
    v.push(case("PRE->REF", d, vec![act(0, 0, 0, 0), pre(t.tRAS, 0, 0, 0), rank_cmd(t.tRAS + t.tRP, Ref, 0)], "tRP", 1));
    v.push(case("PREA->REF", d, vec![act(0, 0, 0, 0), rank_cmd(t.tRAS, Prea, 0), rank_cmd(t.tRAS + t.tRP, Ref, 0)], "tRP", 1));
    v.push(case(
        "RDA->REF",
        d,
        vec![act(0, 0, 0, 0), col(late, Rda, 0, 0, 0), rank_cmd(late + t.tRTP + t.tRP, Ref, 0)],
        "tRP (auto-precharge)",
        1,
    ));
    v.push(case(
        "WRA->REF",
        d,
        vec![act(0, 0, 0, 0), col(late, Wra, 0, 0, 0), rank_cmd(late + wr_rec + t.tRP, Ref, 0)],
        "tRP (auto-precharge)",
        1,
    ));
    for (next, what) in
        [(act(t.tRFC, 0, 0, 0), "REF->ACT"), (rank_cmd(t.tRFC, Ref, 0), "REF->REF"), (rank_cmd(t.tRFC, Prea, 0), "REF->PREA")]
    {
        v.push(case(what, d, vec![rank_cmd(0, Ref, 0), next], "tRFC", 0));
    }

    // ---- per-bank refresh (LPDDR4 REFPB) ----
    if d.std.has_per_bank_refresh() {
        let (pb, p2p) = (t.tRFCpb, t.tPBR2PBR);
        v.push(case("PRE->REFPB", d, vec![act(0, 0, 0, 0), pre(t.tRAS, 0, 0, 0), bank_ref(t.tRAS + t.tRP, RefPb, 0, 0)], "tRP", 1));
        v.push(case("PREA->REFPB", d, vec![act(0, 0, 0, 0), rank_cmd(t.tRAS, Prea, 0), bank_ref(t.tRAS + t.tRP, RefPb, 0, 3)], "tRP", 1));
        v.push(case("REFPB->ACT same bank", d, vec![bank_ref(0, RefPb, 0, 2), act(pb, 0, 0, 2)], "tRFCpb", 0));
        // tpbR2pbR lowered where it equals tRFCpb, so the refresh cycle binds on its own.
        let mut q = d.clone();
        q.t.tPBR2PBR = q.t.tPBR2PBR.min(pb / 2);
        v.push(case("REFPB->REFPB same bank", &q, vec![bank_ref(0, RefPb, 0, 2), bank_ref(pb, RefPb, 0, 2)], "tRFCpb", 0));
        v.push(case("REFPB->REFPB other bank", d, vec![bank_ref(0, RefPb, 0, 2), bank_ref(p2p, RefPb, 0, 3)], "tpbR2pbR", 0));
        v.push(case("REFPB->ACT other bank", d, vec![bank_ref(0, RefPb, 0, 2), act(t.tRRD_S, 0, 0, 3)], "tRRD", 0));
        v.push(case("ACT->REFPB other bank", d, vec![act(0, 0, 0, 3), bank_ref(t.tRRD_S, RefPb, 0, 2)], "tRRD", 0));
        v.push(case("REFPB->REF", d, vec![bank_ref(0, RefPb, 0, 2), rank_cmd(pb, Ref, 0)], "tRFCpb", 0));
        v.push(case("REFPB->PREA", d, vec![bank_ref(0, RefPb, 0, 2), rank_cmd(pb, Prea, 0)], "tRFCpb", 0));
        v.push(case("REF->REFPB", d, vec![rank_cmd(0, Ref, 0), bank_ref(t.tRFC, RefPb, 0, 2)], "tRFC", 0));
    }

    // ---- same-bank refresh (DDR5 REFSB: one bank index in every bank group) ----
    if d.std.has_same_bank_refresh() {
        let (sb, sbrd) = (t.tRFCsb, t.tREFSBRD);
        // The first organisation has two banks per group: index 1 refreshed, index 0 the other.
        let g = d.groups() - 1;
        v.push(case("PRE->REFSB", d, vec![act(0, 0, g, 1), pre(t.tRC, 0, g, 1), bank_ref(t.tRC + t.tRP, RefSb, 0, 1)], "tRP", 1));
        v.push(case("PREA->REFSB", d, vec![act(0, 0, g, 1), rank_cmd(t.tRAS, Prea, 0), bank_ref(t.tRAS + t.tRP, RefSb, 0, 0)], "tRP", 1));
        v.push(case("REFSB->ACT its bank", d, vec![bank_ref(0, RefSb, 0, 1), act(sb, 0, g, 1)], "tRFCsb", 0));
        v.push(case("REFSB->REFSB its bank", d, vec![bank_ref(0, RefSb, 0, 1), bank_ref(sb, RefSb, 0, 1)], "tRFCsb", 0));
        v.push(case("REFSB->ACT other bank", d, vec![bank_ref(0, RefSb, 0, 1), act(sbrd, 0, g, 0)], "tREFSBRD", 0));
        v.push(case("REFSB->REFSB other bank", d, vec![bank_ref(0, RefSb, 0, 1), bank_ref(sbrd, RefSb, 0, 0)], "tREFSBRD", 0));
        v.push(case("ACT->REFSB other bank", d, vec![act(0, 0, g, 0), bank_ref(t.tRRD_L, RefSb, 0, 1)], "tRRD_L", 0));
        v.push(case("REFSB->REF", d, vec![bank_ref(0, RefSb, 0, 1), rank_cmd(sb, Ref, 0)], "tRFCsb", 0));
        v.push(case("REFSB->PREA", d, vec![bank_ref(0, RefSb, 0, 1), rank_cmd(sb, Prea, 0)], "tRFCsb", 0));
        v.push(case("REF->REFSB", d, vec![rank_cmd(0, Ref, 0), bank_ref(t.tRFC, RefSb, 0, 1)], "tRFC", 0));
        let s = trc_slack(d);
        v.push(case("ACT->REFSB its bank", &s, vec![act(0, 0, g, 1), pre(s.t.tRAS, 0, g, 1), bank_ref(s.t.tRC, RefSb, 0, 1)], "tRC", 0));
    }

    // ---- a throttle's column window ----
    if t.col_window_commands > 0 {
        let n = t.col_window_commands;
        let mut seq = open(0);
        for i in 0..n {
            seq.push(col(first + i * t.tCCD_L, Rd, 0, 0, (i % 2) as u32));
        }
        seq.push(col(first + t.col_window, Rd, 0, 0, 0));
        v.push(case("column window", d, seq, "column window", 2));
    }
    v
}

fn check(d: &Dev, seq: &[CommandRecord]) -> Vec<memtint_engine::checker::Violation> {
    TimingChecker::check_stream(d.std, &d.org, &d.t, seq)
}

#[test]
fn every_constraint_of_every_device_is_met_at_its_limit_and_caught_one_cycle_early() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for d in every_device() {
        for c in cases(&d) {
            let at = format!("{} ({}): {}", c.dev.name, c.dev.std.name(), c.what);
            let v = check(&c.dev, &c.seq);
            if !v.is_empty() {
                failures.push(format!(
                    "{at}: at the limit, expected no violation, got {}",
                    v.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; ")
                ));
                continue;
            }
            let mut early = c.seq.clone();
            let last = early.len() - 1;
            early[last].cycle -= 1;
            let v = check(&c.dev, &early);
            let required = c.seq[last].cycle - c.seq[c.earlier].cycle;
            let expected = |v: &memtint_engine::checker::Violation| {
                v.constraint == c.constraint
                    && v.earlier == Some(early[c.earlier])
                    && v.later == early[last]
                    && (v.required, v.actual) == (required, required - 1)
            };
            if v.len() != 1 || !expected(&v[0]) {
                failures.push(format!(
                    "{at}: one cycle early, expected exactly one {} violation ({} after {}, needs {required}), got [{}]",
                    c.constraint,
                    early[last],
                    early[c.earlier],
                    v.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; ")
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), checked, failures.join("\n"));
    assert!(checked > 200, "{checked} cases");
}

/// The refresh obligations: a rank's REFs at most 9 x tREFI apart (its first within that of
/// cycle 0), and with per-bank refresh each bank's; the gap at the limit is legal, a cycle
/// over is one "tREFI" violation.
#[test]
fn refresh_obligations_hold_at_nine_trefi_and_break_a_cycle_later() {
    for d in every_device() {
        let gap = 9 * d.t.tREFI;
        let rank = |obligation, cmd: Command, later: u64| {
            let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_refresh(obligation);
            let mut v = c.observe(&rank_cmd(d.t.tREFI, Command::Ref, 0));
            v.extend(c.observe(&rec(d.t.tREFI + later, cmd, 0, 0, 0, 7)));
            v
        };
        assert!(rank(RefreshObligation::Interval, Command::Ref, gap).is_empty(), "{}", d.name);
        let v = rank(RefreshObligation::Interval, Command::Ref, gap + 1);
        assert_eq!(v.len(), 1, "{}: {v:?}", d.name);
        assert_eq!((v[0].constraint, v[0].required, v[0].actual), ("tREFI", gap, gap + 1), "{}", d.name);
        // Any command to the overdue rank shows it.
        let v = rank(RefreshObligation::Interval, Command::Act, gap + 1);
        assert_eq!(v.len(), 1, "{}: {v:?}", d.name);
        assert_eq!(v[0].constraint, "tREFI", "{}", d.name);
        if d.std.has_per_bank_refresh() || d.std.has_same_bank_refresh() {
            let cmd = if d.std.has_per_bank_refresh() { Command::RefPb } else { Command::RefSb };
            let per_bank = |later: u64| {
                let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_refresh(RefreshObligation::PerBank);
                let mut v = c.observe(&rank_cmd(d.t.tREFI, Command::Ref, 0));
                // Bank (index) 1 refreshed at the limit or a cycle over; the others just before.
                let banks = d.org.banks_per_group;
                let mut at = d.t.tREFI + gap - (banks as u64) * d.t.tRFCpb.max(d.t.tRFCsb);
                for b in (0..banks).filter(|&b| b != 1) {
                    v.extend(c.observe(&bank_ref(at, cmd, 0, b)));
                    at += d.t.tRFCpb.max(d.t.tRFCsb);
                }
                v.extend(c.observe(&bank_ref(d.t.tREFI + later, cmd, 0, 1)));
                v
            };
            assert!(per_bank(gap).is_empty(), "{}: {:?}", d.name, per_bank(gap));
            let v = per_bank(gap + 1);
            assert!(!v.is_empty() && v.iter().all(|v| v.constraint == "tREFI" && v.required == gap), "{}: {v:?}", d.name);
        }
    }
}
