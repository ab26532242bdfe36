//! The timing rules as data (`dram::timing_rules`): the distances the controllers read equal the
//! ones written by hand before, for every device preset, and the compiled table has the expected
//! effects.

use memtint_engine::dram::constraints::Constraints;
use memtint_engine::dram::timing_rules::{Rule, Scope, TimingTable, DDR_RULES};
use memtint_engine::dram::Command::{Act, Pre, Prea, Rd, Rda, Ref, RefPb, RefSb, Wr};
use memtint_engine::dram::{Standard, TimingParams};
use memtint_engine::presets;

/// The controller's distances as they were written by hand before the rules were data.
fn by_hand(std: Standard, t: &TimingParams) -> Constraints {
    let sat = |a: u64, b: u64| a.saturating_sub(b);
    Constraints {
        act_to_act: t.tRC,
        act_to_col: t.tRCD,
        act_to_pre: t.tRAS,
        pre_to_act: t.tRP,
        rd_to_pre: t.tRTP,
        wr_to_pre: t.CWL + t.tBL + t.tWR,
        wr_to_rda: sat(t.CWL + t.tBL + t.tWR, t.tRTP),
        act_to_act_l: t.tRRD_L,
        rd_to_rd_l: t.tCCD_L,
        wr_to_wr_l: t.tCCD_L_WR,
        wr_to_rd_l: t.CWL + t.tBL + t.tWTR_L,
        act_to_act_s: t.tRRD_S,
        rd_to_rd_s: t.tCCD_S,
        wr_to_wr_s: t.tCCD_S,
        wr_to_rd_s: t.CWL + t.tBL + t.tWTR_S,
        // DDR5 keeps its write preamble in the turnaround (JESD79-5): four idle cycles, not two.
        rd_to_wr: sat(t.CL + t.tBL + if std == Standard::Ddr5 { 4 } else { 2 }, t.CWL),
        faw: t.tFAW,
        refresh: t.tRFC,
        rd_to_rd_rank: t.tBL + t.tRTRS,
        wr_to_wr_rank: t.tBL + t.tRTRS,
        // A write to another rank keeps DDR5's turnaround too (the idle cycles are the bus's).
        rd_to_wr_rank: sat(t.CL + t.tBL + if std == Standard::Ddr5 { t.tRTRS.max(4) } else { t.tRTRS }, t.CWL),
        wr_to_rd_rank: sat(t.CWL + t.tBL + t.tRTRS, t.CL),
        read_data_end: t.CL + t.tBL,
        write_data_end: t.CWL + t.tBL,
        burst: t.tBL,
        // A throttle, not a rule: the device's own window, as given.
        col_window: t.col_window,
        col_window_commands: t.col_window_commands,
    }
}

/// Every device preset in every organisation it comes in.
fn every_device() -> Vec<(String, Standard, TimingParams)> {
    let mut all = Vec::new();
    for (name, _) in presets::DEVICES {
        let d = presets::device(name).unwrap();
        for o in d.organisations() {
            let t = d.timing(o.density_gbit, o.device_width).unwrap();
            all.push((format!("{name} {}Gb x{}", o.density_gbit, o.device_width), d.standard, t));
        }
    }
    assert!(all.len() >= 6, "{} device organisations", all.len());
    all
}

#[test]
fn table_distances_equal_the_hand_written_ones_for_every_device() {
    for (name, standard, t) in every_device() {
        assert_eq!(Constraints::derive(standard, &t), by_hand(standard, &t), "{name}");
    }
}

/// Writes to one bank group keep DDR5's tCCD_L_WR there and tCCD_L on every earlier standard.
#[test]
fn writes_to_one_bank_group_are_tccd_l_wr_apart_on_ddr5_only() {
    for (name, standard, t) in every_device() {
        let c = Constraints::derive(standard, &t);
        if standard == Standard::Ddr5 {
            assert!(c.wr_to_wr_l > c.rd_to_rd_l, "{name}: {} against {}", c.wr_to_wr_l, c.rd_to_rd_l);
            assert_eq!(c.wr_to_wr_l, t.tCCD_L_WR, "{name}");
        } else {
            assert_eq!(c.wr_to_wr_l, t.tCCD_L, "{name}");
        }
    }
}

#[test]
fn distinct_values_keep_every_distance_apart() {
    // With every base value distinct, a distance looked up from the wrong rule would differ.
    let mut t = every_device()[0].2.clone();
    let mut v = 100;
    for f in [
        &mut t.CL,
        &mut t.CWL,
        &mut t.tRCD,
        &mut t.tRP,
        &mut t.tRAS,
        &mut t.tRC,
        &mut t.tBL,
        &mut t.tCCD_S,
        &mut t.tCCD_L,
        &mut t.tCCD_L_WR,
        &mut t.tRRD_S,
        &mut t.tRRD_L,
        &mut t.tFAW,
        &mut t.tWTR_S,
        &mut t.tWTR_L,
        &mut t.tRTP,
        &mut t.tWR,
        &mut t.tRTRS,
        &mut t.tRFC,
    ] {
        *f = v;
        v += 7;
    }
    assert_eq!(Constraints::derive(Standard::Ddr4, &t), by_hand(Standard::Ddr4, &t));
}

#[test]
fn compiled_effects_of_act_and_rda() {
    let t = every_device().into_iter().find(|d| d.1 == Standard::Ddr4).unwrap().2;
    let table = TimingTable::build(Standard::Ddr4.timing_rules(), &t);
    let act: Vec<_> = table.after(Act).iter().map(|e| (e.scope, e.following, e.latency)).collect();
    let mut want = vec![
        (Scope::Bank, Act, t.tRC),
        (Scope::Bank, Pre, t.tRAS),
        (Scope::Bank, Rd, t.tRCD),
        (Scope::Bank, Wr, t.tRCD),
        (Scope::BankGroup, Act, t.tRRD_L),
        (Scope::Rank, Act, t.tRRD_S),
        (Scope::Rank, Prea, t.tRAS),
        (Scope::Channel, Act, 1),
        (Scope::Channel, Pre, 1),
        (Scope::Channel, Prea, 1),
        (Scope::Channel, Rd, 1),
        (Scope::Channel, Wr, 1),
        (Scope::Channel, Ref, 1),
        (Scope::Channel, RefPb, 1),
        (Scope::Channel, RefSb, 1),
    ];
    want.sort_by_key(|&(s, f, _)| (s, f));
    assert_eq!(act, want);
    assert_eq!(table.act_window, Some((4, t.tFAW)));
    assert_eq!(table.after(Rda), table.after(Rd));
    assert_eq!(table.implicit_precharge(1000, 1010, false), (1010 + t.tRTP).max(1000 + t.tRAS));
    assert_eq!(table.implicit_precharge(1000, 1010, true), (1010 + t.CWL + t.tBL + t.tWR).max(1000 + t.tRAS));
    // RDA's own rule: a WR's bank entry for RDA, apart from RD's (tWTR_L).
    assert_eq!(table.rda_after_write(), t.CWL + t.tBL + t.tWR - t.tRTP);
    assert_eq!(table.latency(Scope::Bank, Wr, Rd), 0, "same-bank WR -> RD is the bank group's tWTR_L");
    assert!(table.after(Wr).iter().any(|e| (e.scope, e.following) == (Scope::Bank, Rda)));
}

#[test]
#[should_panic(expected = "RDA's own rules are bank rules")]
fn rda_following_rules_beyond_the_bank_are_refused() {
    let t = every_device()[0].2.clone();
    let mut rules = DDR_RULES.to_vec();
    rules.push(Rule { scope: Scope::Rank, preceding: &[Wr], following: &[Rda], latency: |t| t.tWR, window: 0, name: "odd", implied: true });
    TimingTable::build(&rules, &t);
}

#[test]
#[should_panic(expected = "must have the same rules")]
fn rda_with_rules_of_its_own_is_refused() {
    let t = every_device()[0].2.clone();
    let mut rules = DDR_RULES.to_vec();
    rules.push(Rule {
        scope: Scope::Bank,
        preceding: &[Rda],
        following: &[Act],
        latency: |t| t.tRC + 1,
        window: 0,
        name: "odd",
        implied: true,
    });
    TimingTable::build(&rules, &t);
}

#[test]
fn a_standard_with_other_rules_is_told_apart() {
    let t = every_device()[0].2.clone();
    let ddr = TimingTable::build(DDR_RULES, &t);
    assert!(ddr.same_rules_as(&TimingTable::build(Standard::Ddr3.timing_rules(), &t)));
    let mut more = DDR_RULES.to_vec();
    more.push(Rule {
        scope: Scope::Bank,
        preceding: &[Ref],
        following: &[Act],
        latency: |t| t.tRFC,
        window: 0,
        name: "per-bank tRFC",
        implied: true,
    });
    assert!(!TimingTable::build(&more, &t).same_rules_as(&ddr), "a new rule is a different table");
    let mut slower = t.clone();
    slower.tRC += 5;
    assert!(TimingTable::build(DDR_RULES, &slower).same_rules_as(&ddr), "other latencies, the same rules");
}

/// LPDDR4's per-bank refresh rows: what a REFPB holds, and what holds a REFPB.
#[test]
fn lpddr4_refpb_rules_compile_to_their_effects() {
    let (_, standard, t) = every_device().into_iter().find(|d| d.1 == Standard::Lpddr4).unwrap();
    let table = TimingTable::build(standard.timing_rules(), &t);
    assert!(t.tRFCpb > 0 && t.tPBR2PBR > 0);
    assert_eq!(table.latency(Scope::Bank, RefPb, Act), t.tRFCpb);
    assert_eq!(table.latency(Scope::Bank, RefPb, RefPb), t.tRFCpb);
    assert_eq!(table.latency(Scope::Rank, RefPb, RefPb), t.tPBR2PBR);
    assert_eq!(table.latency(Scope::Rank, RefPb, Act), t.tRRD_S);
    assert_eq!(table.latency(Scope::Rank, Act, RefPb), t.tRRD_S);
    assert_eq!(table.latency(Scope::Rank, RefPb, Ref), t.tRFCpb);
    assert_eq!(table.latency(Scope::Rank, Ref, RefPb), t.tRFC);
    assert_eq!(table.latency(Scope::Bank, Pre, RefPb), t.tRP);
    // DDR4 has no REFPB rows but the command bus.
    let ddr4 = TimingTable::build(DDR_RULES, &t);
    assert_eq!(ddr4.latency(Scope::Bank, RefPb, Act), 0);
    assert!(!table.same_rules_as(&ddr4), "the lane controller tells LPDDR4 apart");
}

/// DDR5's same-bank refresh rows: what a REFSB holds (its banks, the rank's others), and what
/// holds a REFSB.
#[test]
fn ddr5_refsb_rules_compile_to_their_effects() {
    let (_, standard, t) = every_device().into_iter().find(|d| d.1 == Standard::Ddr5).unwrap();
    let table = TimingTable::build(standard.timing_rules(), &t);
    assert!(t.tRFCsb > t.tREFSBRD && t.tREFSBRD > 0);
    assert_eq!(table.latency(Scope::Bank, RefSb, Act), t.tRFCsb);
    assert_eq!(table.latency(Scope::Bank, RefSb, RefSb), t.tRFCsb);
    assert_eq!(table.latency(Scope::Rank, RefSb, Act), t.tREFSBRD);
    assert_eq!(table.latency(Scope::Rank, RefSb, RefSb), t.tREFSBRD);
    assert_eq!(table.latency(Scope::Rank, Act, RefSb), t.tRRD_L);
    assert_eq!(table.latency(Scope::Bank, Act, RefSb), t.tRC);
    assert_eq!(table.latency(Scope::Bank, Pre, RefSb), t.tRP);
    assert_eq!(table.latency(Scope::Rank, RefSb, Ref), t.tRFCsb);
    assert_eq!(table.latency(Scope::Rank, Ref, RefSb), t.tRFC);
    assert!(RefSb.addresses_bank_index() && !RefPb.addresses_bank_index());
}

/// DDR5's precharge commands: a rank's PRE and PREA tPPD apart (2 nCK), not those of other
/// ranks, and not an RDA's or WRA's implied precharge; the standards before have no tPPD.
#[test]
fn ddr5_precharge_commands_are_tppd_apart_and_implied_precharges_keep_none() {
    for (name, standard, t) in every_device() {
        let table = TimingTable::build(standard.timing_rules(), &t);
        let tppd = if standard == Standard::Ddr5 { 2 } else { 0 };
        assert_eq!(t.tPPD, tppd, "{name}");
        for (a, b) in [(Pre, Pre), (Pre, Prea), (Prea, Pre), (Prea, Prea)] {
            assert_eq!(table.latency(Scope::Rank, a, b), tppd, "{name}: {a} -> {b}");
            assert_eq!(table.latency(Scope::SiblingRank, a, b), 0, "{name}: {a} -> {b} of another rank");
        }
        let implied: Vec<_> = table.after_implied_precharge().to_vec();
        let explicit: Vec<_> = table
            .after(Pre)
            .iter()
            .filter(|e| !(e.scope == Scope::Rank && matches!(e.following, Pre | Prea) && tppd > 0))
            .copied()
            .collect();
        assert_eq!(implied, explicit, "{name}: an implied precharge does what a PRE does but tPPD");
    }
}
