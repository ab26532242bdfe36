//! Every constraint, met exactly (no violation) and missed by one cycle (exactly one violation
//! naming the constraint, both commands, required and actual), on DDR3-1333 and DDR4-2400.

use super::*;
use crate::dram::{DeviceSpec, DramAddress};

const DDR3_1333: &str = include_str!("../../../../configs/devices/ddr3-1333.toml");
const DDR4_2400: &str = include_str!("../../../../configs/devices/ddr4-2400.toml");

/// A device under test: standard, organisation (1 channel unless asked, 2 ranks), timing.
#[derive(Clone)]
struct Dev {
    std: Standard,
    org: Organisation,
    t: TimingParams,
}

fn load(text: &str, density: u32, channels: u32) -> Dev {
    let spec = DeviceSpec::from_toml(text, "test").unwrap();
    Dev { std: spec.standard, org: spec.organisation(density, 8, channels, 2, 64).unwrap(), t: spec.timing(density, 8).unwrap() }
}
fn ddr3() -> Dev {
    load(DDR3_1333, 4, 1)
}
fn ddr4() -> Dev {
    load(DDR4_2400, 8, 1)
}
fn both() -> [Dev; 2] {
    [ddr3(), ddr4()]
}

fn rec(cycle: u64, command: Command, rank: u32, bank_group: u32, bank: u32, row: u32, column: u32) -> CommandRecord {
    CommandRecord { cycle, command, addr: DramAddress { channel: 0, rank, bank_group, bank, row, column } }
}
fn act(c: u64, rank: u32, bg: u32, bank: u32, row: u32) -> CommandRecord {
    rec(c, Command::Act, rank, bg, bank, row, 0)
}
fn col(c: u64, cmd: Command, rank: u32, bg: u32, bank: u32, row: u32) -> CommandRecord {
    rec(c, cmd, rank, bg, bank, row, 8)
}
fn rd(c: u64, rank: u32, bg: u32, bank: u32, row: u32) -> CommandRecord {
    col(c, Command::Rd, rank, bg, bank, row)
}
fn wr(c: u64, rank: u32, bg: u32, bank: u32, row: u32) -> CommandRecord {
    col(c, Command::Wr, rank, bg, bank, row)
}
fn pre(c: u64, rank: u32, bg: u32, bank: u32) -> CommandRecord {
    rec(c, Command::Pre, rank, bg, bank, 0, 0)
}
fn prea(c: u64, rank: u32) -> CommandRecord {
    rec(c, Command::Prea, rank, 0, 0, 0, 0)
}
fn refresh(c: u64, rank: u32) -> CommandRecord {
    rec(c, Command::Ref, rank, 0, 0, 0, 0)
}
fn on_channel(mut r: CommandRecord, channel: u32) -> CommandRecord {
    r.addr.channel = channel;
    r
}

fn run(d: &Dev, recs: &[CommandRecord]) -> Vec<Violation> {
    TimingChecker::check_stream(d.std, &d.org, &d.t, recs)
}

#[track_caller]
fn assert_legal(d: &Dev, recs: &[CommandRecord]) {
    let v = run(d, recs);
    assert!(v.is_empty(), "{}: expected no violation, got:\n{}", d.std.name(), list(&v));
}

/// Exactly one violation: `constraint`, between `recs[earlier]` and `recs[later]`.
#[track_caller]
fn assert_one(d: &Dev, recs: &[CommandRecord], constraint: &str, earlier: usize, later: usize, required: u64, actual: u64) {
    let v = run(d, recs);
    assert_eq!(v.len(), 1, "{}: expected exactly one {constraint} violation, got:\n{}", d.std.name(), list(&v));
    let v = &v[0];
    assert_eq!(v.constraint, constraint, "{}: {v}", d.std.name());
    assert_eq!(v.earlier, Some(recs[earlier]), "{}: {v}", d.std.name());
    assert_eq!(v.later, recs[later], "{}: {v}", d.std.name());
    assert_eq!((v.required, v.actual), (required, actual), "{}: {v}", d.std.name());
}

fn list(v: &[Violation]) -> String {
    v.iter().map(|v| format!("  {v}\n")).collect()
}

/// Same timing with tRC loosened above tRAS + tRP, to isolate tRC from tRP.
fn with_trc_slack(d: &Dev, slack: u64) -> Dev {
    let mut d = d.clone();
    d.t.tRC = d.t.tRAS + d.t.tRP + slack;
    d
}

// ------------------------------------------------------------------------------------------
// Same bank
// ------------------------------------------------------------------------------------------

#[test]
fn act_then_column_at_trcd_is_legal() {
    for d in both() {
        for cmd in [Command::Rd, Command::Wr, Command::Rda, Command::Wra] {
            assert_legal(&d, &[act(0, 0, 0, 0, 5), col(d.t.tRCD, cmd, 0, 0, 0, 5)]);
        }
    }
}

#[test]
fn act_then_column_one_cycle_early_violates_trcd() {
    for d in both() {
        for cmd in [Command::Rd, Command::Wr, Command::Rda, Command::Wra] {
            let s = [act(0, 0, 0, 0, 5), col(d.t.tRCD - 1, cmd, 0, 0, 0, 5)];
            assert_one(&d, &s, "tRCD", 0, 1, d.t.tRCD, d.t.tRCD - 1);
        }
    }
}

#[test]
fn act_pre_act_same_bank_at_trc_is_legal() {
    for d in both() {
        assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0), act(d.t.tRC, 0, 0, 0, 2)]);
        let d = with_trc_slack(&d, 3);
        assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0), act(d.t.tRC, 0, 0, 0, 2)]);
    }
}

#[test]
fn act_act_same_bank_one_cycle_early_violates_trc() {
    for d in both() {
        // With tRC > tRAS + tRP, tRC is the only binding rule.
        let d = with_trc_slack(&d, 3);
        let s = [act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0), act(d.t.tRC - 1, 0, 0, 0, 2)];
        assert_one(&d, &s, "tRC", 0, 2, d.t.tRC, d.t.tRC - 1);
    }
}

#[test]
fn presets_have_trc_equal_tras_plus_trp_so_early_act_breaks_both() {
    for d in both() {
        assert_eq!(d.t.tRC, d.t.tRAS + d.t.tRP);
        let s = [act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0), act(d.t.tRC - 1, 0, 0, 0, 2)];
        let v = run(&d, &s);
        let names: Vec<_> = v.iter().map(|v| v.constraint).collect();
        assert_eq!(names, ["tRC", "tRP"], "{}", list(&v));
    }
}

#[test]
fn act_then_pre_at_tras_is_legal() {
    for d in both() {
        assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0)]);
    }
}

#[test]
fn act_then_pre_one_cycle_early_violates_tras() {
    for d in both() {
        let s = [act(0, 0, 0, 0, 1), pre(d.t.tRAS - 1, 0, 0, 0)];
        assert_one(&d, &s, "tRAS", 0, 1, d.t.tRAS, d.t.tRAS - 1);
    }
}

#[test]
fn pre_then_act_at_trp_is_legal() {
    for d in both() {
        let p = d.t.tRAS + 10;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(p, 0, 0, 0), act(p + d.t.tRP, 0, 0, 0, 2)]);
    }
}

#[test]
fn pre_then_act_one_cycle_early_violates_trp() {
    for d in both() {
        let p = d.t.tRAS + 10;
        let s = [act(0, 0, 0, 0, 1), pre(p, 0, 0, 0), act(p + d.t.tRP - 1, 0, 0, 0, 2)];
        assert_one(&d, &s, "tRP", 1, 2, d.t.tRP, d.t.tRP - 1);
    }
}

#[test]
fn rd_then_pre_at_trtp_is_legal() {
    for d in both() {
        let r = d.t.tRAS;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), rd(r, 0, 0, 0, 1), pre(r + d.t.tRTP, 0, 0, 0)]);
    }
}

#[test]
fn rd_then_pre_one_cycle_early_violates_trtp() {
    for d in both() {
        let r = d.t.tRAS;
        let s = [act(0, 0, 0, 0, 1), rd(r, 0, 0, 0, 1), pre(r + d.t.tRTP - 1, 0, 0, 0)];
        assert_one(&d, &s, "tRTP", 1, 2, d.t.tRTP, d.t.tRTP - 1);
    }
}

fn write_recovery(t: &TimingParams) -> u64 {
    t.CWL + t.tBL + t.tWR
}

#[test]
fn wr_then_pre_after_write_recovery_is_legal() {
    for d in both() {
        let w = d.t.tRAS;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), wr(w, 0, 0, 0, 1), pre(w + write_recovery(&d.t), 0, 0, 0)]);
    }
}

#[test]
fn wr_then_pre_one_cycle_early_violates_twr() {
    for d in both() {
        let w = d.t.tRAS;
        let need = write_recovery(&d.t);
        let s = [act(0, 0, 0, 0, 1), wr(w, 0, 0, 0, 1), pre(w + need - 1, 0, 0, 0)];
        assert_one(&d, &s, "tWR", 1, 2, need, need - 1);
    }
}

#[test]
fn rda_late_in_row_then_act_at_rtp_plus_trp_is_legal() {
    for d in both() {
        let r = d.t.tRAS; // internal precharge at RDA + tRTP (later than ACT + tRAS)
        let s = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), act(r + d.t.tRTP + d.t.tRP, 0, 0, 0, 2)];
        assert_legal(&d, &s);
    }
}

#[test]
fn rda_late_in_row_then_act_one_cycle_early_violates_auto_precharge_trp() {
    for d in both() {
        let r = d.t.tRAS;
        let need = d.t.tRTP + d.t.tRP;
        let s = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), act(r + need - 1, 0, 0, 0, 2)];
        assert_one(&d, &s, "tRP (auto-precharge)", 1, 2, need, need - 1);
    }
}

#[test]
fn rda_early_in_row_precharges_at_act_plus_tras() {
    for d in both() {
        let r = d.t.tRCD; // RDA + tRTP < ACT + tRAS: internal precharge waits for tRAS
        assert!(r + d.t.tRTP < d.t.tRAS);
        let ready = d.t.tRAS + d.t.tRP;
        let legal = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), act(ready, 0, 0, 0, 2)];
        assert_legal(&d, &legal);
        // Loosen tRC (here equal to tRAS + tRP) so that the auto-precharge rule is the only one broken.
        let mut d = d;
        d.t.tRC = 1;
        let early = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), act(ready - 1, 0, 0, 0, 2)];
        assert_one(&d, &early, "tRP (auto-precharge)", 1, 2, ready - r, ready - 1 - r);
    }
}

#[test]
fn wra_then_act_after_write_recovery_plus_trp_is_legal() {
    for d in both() {
        let w = d.t.tRCD;
        let ready = w + write_recovery(&d.t) + d.t.tRP;
        let s = [act(0, 0, 0, 0, 1), col(w, Command::Wra, 0, 0, 0, 1), act(ready, 0, 0, 0, 2)];
        assert_legal(&d, &s);
    }
}

#[test]
fn wra_then_act_one_cycle_early_violates_auto_precharge_trp() {
    for d in both() {
        let w = d.t.tRCD;
        let need = write_recovery(&d.t) + d.t.tRP;
        assert!(w + need > d.t.tRC, "write recovery should bind, not tRC");
        let s = [act(0, 0, 0, 0, 1), col(w, Command::Wra, 0, 0, 0, 1), act(w + need - 1, 0, 0, 0, 2)];
        assert_one(&d, &s, "tRP (auto-precharge)", 1, 2, need, need - 1);
    }
}

// ------------------------------------------------------------------------------------------
// Bank-state protocol
// ------------------------------------------------------------------------------------------

#[test]
fn act_to_open_bank_is_a_protocol_violation() {
    for d in both() {
        let s = [act(0, 0, 0, 0, 1), act(d.t.tRC, 0, 0, 0, 2)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!(v[0].constraint, "protocol: ACT to open bank");
        assert_eq!((v[0].earlier, v[0].later), (Some(s[0]), s[1]));
        assert!(v[0].is_protocol());
    }
}

#[test]
fn column_to_closed_bank_is_a_protocol_violation() {
    for d in both() {
        let v = run(&d, &[rd(100, 0, 0, 0, 1)]);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!(v[0].constraint, "protocol: RD/WR to closed bank");
        assert_eq!(v[0].earlier, None);
        // After PRE, the PRE is named as the closer.
        let s = [act(0, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 0), wr(d.t.tRAS + 50, 0, 0, 0, 1)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier), ("protocol: RD/WR to closed bank", Some(s[1])));
    }
}

#[test]
fn column_after_rda_finds_the_bank_closed() {
    for d in both() {
        let r = d.t.tRCD;
        let s = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), rd(r + 20, 0, 0, 0, 1)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier), ("protocol: RD/WR to closed bank", Some(s[1])));
    }
}

#[test]
fn column_to_other_row_than_the_open_one_is_a_protocol_violation() {
    for d in both() {
        let s = [act(0, 0, 0, 0, 1), rd(d.t.tRCD, 0, 0, 0, 2)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier), ("protocol: RD/WR to wrong row", Some(s[0])));
    }
}

#[test]
fn pre_to_closed_bank_is_a_legal_no_op() {
    for d in both() {
        assert_legal(&d, &[pre(0, 0, 0, 0), act(1, 0, 0, 0, 1), pre(d.t.tRAS, 0, 0, 1)]);
    }
}

#[test]
fn command_out_of_time_order_on_a_channel_is_a_protocol_violation() {
    for d in both() {
        let s = [act(10, 0, 0, 0, 1), act(5, 0, 0, 1, 1)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier), ("protocol: command out of order", Some(s[0])));
    }
}

#[test]
fn channels_may_interleave_in_the_stream() {
    for d0 in both() {
        let d = Dev { org: Organisation { channels: 2, ..d0.org.clone() }, ..d0 };
        let s = [
            act(10, 0, 0, 0, 1),
            on_channel(act(5, 0, 0, 0, 1), 1),
            on_channel(rd(5 + d.t.tRCD, 0, 0, 0, 1), 1),
            rd(10 + d.t.tRCD, 0, 0, 0, 1),
        ];
        assert_legal(&d, &s);
    }
}

#[test]
fn two_commands_in_one_cycle_on_a_channel_violate_the_command_bus() {
    for d in both() {
        let s = [act(0, 0, 0, 0, 1), act(0, 1, 0, 0, 1)];
        assert_one(&d, &s, "command bus", 0, 1, 1, 0);
    }
}

#[test]
fn same_cycle_on_different_channels_is_legal() {
    for d0 in both() {
        let d = Dev { org: Organisation { channels: 2, ..d0.org.clone() }, ..d0 };
        assert_legal(&d, &[act(0, 0, 0, 0, 1), on_channel(act(0, 0, 0, 0, 1), 1)]);
    }
}

#[test]
fn address_outside_the_organisation_is_a_protocol_violation() {
    let d = ddr4();
    let v = run(&d, &[act(0, 0, 4, 0, 1), act(10, 2, 0, 0, 1)]);
    assert_eq!(v.len(), 2, "{}", list(&v));
    assert!(v.iter().all(|v| v.constraint == "protocol: address out of range"));
}

// ------------------------------------------------------------------------------------------
// Same rank: tRRD, tFAW, tCCD, tWTR, rd-to-wr
// ------------------------------------------------------------------------------------------

#[test]
fn ddr3_act_act_other_bank_at_trrd_is_legal_and_one_early_violates_trrd() {
    let d = ddr3();
    assert_legal(&d, &[act(0, 0, 0, 0, 1), act(d.t.tRRD_L, 0, 0, 1, 1)]);
    let s = [act(0, 0, 0, 0, 1), act(d.t.tRRD_L - 1, 0, 0, 1, 1)];
    assert_one(&d, &s, "tRRD", 0, 1, d.t.tRRD_L, d.t.tRRD_L - 1);
}

#[test]
fn ddr4_act_act_same_bank_group_needs_trrd_l() {
    let d = ddr4();
    assert!(d.t.tRRD_L > d.t.tRRD_S);
    assert_legal(&d, &[act(0, 0, 1, 0, 1), act(d.t.tRRD_L, 0, 1, 1, 1)]);
    let s = [act(0, 0, 1, 0, 1), act(d.t.tRRD_L - 1, 0, 1, 1, 1)];
    assert_one(&d, &s, "tRRD_L", 0, 1, d.t.tRRD_L, d.t.tRRD_L - 1);
}

#[test]
fn ddr4_act_act_other_bank_group_needs_only_trrd_s() {
    let d = ddr4();
    assert_legal(&d, &[act(0, 0, 1, 0, 1), act(d.t.tRRD_S, 0, 2, 0, 1)]);
    let s = [act(0, 0, 1, 0, 1), act(d.t.tRRD_S - 1, 0, 2, 0, 1)];
    assert_one(&d, &s, "tRRD_S", 0, 1, d.t.tRRD_S, d.t.tRRD_S - 1);
}

#[test]
fn act_act_in_different_ranks_has_no_trrd() {
    for d in both() {
        assert_legal(&d, &[act(0, 0, 0, 0, 1), act(1, 1, 0, 0, 1)]);
    }
}

/// Five ACTs to different banks (different bank groups on DDR4), spaced by tRRD_S; the fifth
/// at `fifth`.
fn five_acts(d: &Dev, fifth: u64) -> Vec<CommandRecord> {
    let g = d.org.bank_groups;
    let mut s: Vec<_> = (0..4u32).map(|i| act(i as u64 * d.t.tRRD_S, 0, i % g, i / g, 1)).collect();
    s.push(act(fifth, 0, 4 % g, 4 / g + 1, 1));
    s
}

#[test]
fn fifth_act_at_tfaw_is_legal() {
    for d in both() {
        assert!(4 * d.t.tRRD_S < d.t.tFAW, "the window must bind");
        assert_legal(&d, &five_acts(&d, d.t.tFAW));
    }
}

#[test]
fn fifth_act_one_cycle_early_violates_tfaw() {
    for d in both() {
        let s = five_acts(&d, d.t.tFAW - 1);
        assert_one(&d, &s, "tFAW", 0, 4, d.t.tFAW, d.t.tFAW - 1);
    }
}

#[test]
fn tfaw_window_slides_to_the_second_act() {
    for d in both() {
        let g = d.org.bank_groups;
        let sp = d.t.tRRD_S + 1;
        let at = |i: u32, c: u64| act(c, 0, i % g, i / g, 1);
        let mut s: Vec<_> = (0..4u32).map(|i| at(i, i as u64 * sp)).collect();
        s.push(at(4, d.t.tFAW));
        // The sixth ACT is bound by the second one.
        s.push(at(5, sp + d.t.tFAW));
        assert_legal(&d, &s);
        s[5].cycle -= 1;
        assert_one(&d, &s, "tFAW", 1, 5, d.t.tFAW, d.t.tFAW - 1);
    }
}

/// Two banks of rank 0 opened: (bg_a, 0) at 0 and (bg_b, 1) at 50; columns may start at `T0`.
const T0: u64 = 200;
fn two_open(bg_a: u32, bg_b: u32) -> Vec<CommandRecord> {
    vec![act(0, 0, bg_a, 0, 1), act(50, 0, bg_b, 1, 1)]
}

fn col_pair(bg_b: u32, first: Command, second: Command, gap: u64) -> Vec<CommandRecord> {
    let mut s = two_open(0, bg_b);
    s.push(col(T0, first, 0, 0, 0, 1));
    s.push(col(T0 + gap, second, 0, bg_b, 1, 1));
    s
}

#[test]
fn rd_rd_and_wr_wr_same_bank_group_at_tccd_l_are_legal() {
    for d in both() {
        for c in [Command::Rd, Command::Wr, Command::Rda, Command::Wra] {
            assert_legal(&d, &col_pair(0, c, c, d.t.tCCD_L));
        }
    }
}

#[test]
fn rd_rd_and_wr_wr_same_bank_group_one_cycle_early_violate_tccd_l() {
    for d in both() {
        let name = if d.std.has_bank_groups() { "tCCD_L" } else { "tCCD" };
        for c in [Command::Rd, Command::Wr] {
            let s = col_pair(0, c, c, d.t.tCCD_L - 1);
            assert_one(&d, &s, name, 2, 3, d.t.tCCD_L, d.t.tCCD_L - 1);
        }
        // Any column variant counts: RD then RDA.
        let s = col_pair(0, Command::Rd, Command::Rda, d.t.tCCD_L - 1);
        assert_one(&d, &s, name, 2, 3, d.t.tCCD_L, d.t.tCCD_L - 1);
    }
}

#[test]
fn ddr4_rd_rd_and_wr_wr_other_bank_group_need_only_tccd_s() {
    let d = ddr4();
    for c in [Command::Rd, Command::Wr] {
        assert_legal(&d, &col_pair(1, c, c, d.t.tCCD_S));
        let s = col_pair(1, c, c, d.t.tCCD_S - 1);
        // The bursts overlap too, but that is the same pair: reported once, as tCCD_S.
        assert_one(&d, &s, "tCCD_S", 2, 3, d.t.tCCD_S, d.t.tCCD_S - 1);
    }
}

fn wtr(t: &TimingParams, same_group: bool) -> u64 {
    t.CWL + t.tBL + if same_group { t.tWTR_L } else { t.tWTR_S }
}

#[test]
fn wr_then_rd_same_bank_group_at_cwl_bl_twtr_l_is_legal() {
    for d in both() {
        assert_legal(&d, &col_pair(0, Command::Wr, Command::Rd, wtr(&d.t, true)));
        // Same bank too.
        let s = [act(0, 0, 0, 0, 1), wr(T0, 0, 0, 0, 1), rd(T0 + wtr(&d.t, true), 0, 0, 0, 1)];
        assert_legal(&d, &s);
    }
}

#[test]
fn wr_then_rd_same_bank_group_one_cycle_early_violates_twtr_l() {
    for d in both() {
        let name = if d.std.has_bank_groups() { "tWTR_L" } else { "tWTR" };
        let need = wtr(&d.t, true);
        let s = col_pair(0, Command::Wr, Command::Rd, need - 1);
        assert_one(&d, &s, name, 2, 3, need, need - 1);
    }
}

#[test]
fn ddr4_wr_then_rd_other_bank_group_needs_only_twtr_s() {
    let d = ddr4();
    let need = wtr(&d.t, false);
    assert!(need < wtr(&d.t, true));
    assert_legal(&d, &col_pair(1, Command::Wr, Command::Rd, need));
    let s = col_pair(1, Command::Wr, Command::Rda, need - 1);
    assert_one(&d, &s, "tWTR_S", 2, 3, need, need - 1);
}

fn rtw(t: &TimingParams) -> u64 {
    t.CL + t.tBL + 2 - t.CWL
}

#[test]
fn rd_then_wr_same_rank_at_turnaround_is_legal() {
    for d in both() {
        for bg in [0, d.org.bank_groups - 1] {
            assert_legal(&d, &col_pair(bg, Command::Rd, Command::Wr, rtw(&d.t)));
        }
    }
}

#[test]
fn rd_then_wr_same_rank_one_cycle_early_violates_rd_to_wr() {
    for d in both() {
        for bg in [0, d.org.bank_groups - 1] {
            let s = col_pair(bg, Command::Rd, Command::Wra, rtw(&d.t) - 1);
            assert_one(&d, &s, "rd-to-wr", 2, 3, rtw(&d.t), rtw(&d.t) - 1);
        }
    }
}

// ------------------------------------------------------------------------------------------
// PREA and REF
// ------------------------------------------------------------------------------------------

#[test]
fn prea_then_act_at_trp_is_legal() {
    for d in both() {
        let p = d.t.tRAS + 10;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), prea(p, 0), act(p + d.t.tRP, 0, 0, 0, 2)]);
        // PREA also sets tRP on banks that were not open.
        assert_legal(&d, &[prea(5, 0), act(5 + d.t.tRP, 0, 0, 1, 2)]);
    }
}

#[test]
fn prea_then_act_one_cycle_early_violates_trp() {
    for d in both() {
        let p = d.t.tRAS + 10;
        let s = [act(0, 0, 0, 0, 1), prea(p, 0), act(p + d.t.tRP - 1, 0, 0, 0, 2)];
        assert_one(&d, &s, "tRP", 1, 2, d.t.tRP, d.t.tRP - 1);
    }
}

#[test]
fn prea_one_cycle_early_for_an_open_bank_violates_tras() {
    for d in both() {
        let b = d.t.tRRD_L + 3;
        let s = [act(0, 0, 0, 0, 1), act(b, 0, 0, 1, 1), prea(b + d.t.tRAS - 1, 0)];
        assert_one(&d, &s, "tRAS", 1, 2, d.t.tRAS, d.t.tRAS - 1);
        assert_legal(&d, &[act(0, 0, 0, 0, 1), act(b, 0, 0, 1, 1), prea(b + d.t.tRAS, 0)]);
    }
}

#[test]
fn prea_breaking_tras_on_several_banks_reports_the_most_binding_once() {
    for d in both() {
        let b = d.t.tRRD_L + 3;
        let s = [act(0, 0, 0, 0, 1), act(b, 0, 0, 1, 1), prea(d.t.tRAS - 1, 0)];
        assert_one(&d, &s, "tRAS", 1, 2, d.t.tRAS, d.t.tRAS - 1 - b);
    }
}

#[test]
fn prea_must_respect_trtp_and_write_recovery_of_every_open_bank() {
    for d in both() {
        let r = d.t.tRAS;
        let s = [act(0, 0, 0, 0, 1), rd(r, 0, 0, 0, 1), prea(r + d.t.tRTP - 1, 0)];
        assert_one(&d, &s, "tRTP", 1, 2, d.t.tRTP, d.t.tRTP - 1);
        assert_legal(&d, &[act(0, 0, 0, 0, 1), rd(r, 0, 0, 0, 1), prea(r + d.t.tRTP, 0)]);
        let need = write_recovery(&d.t);
        let s = [act(0, 0, 0, 0, 1), wr(r, 0, 0, 0, 1), prea(r + need - 1, 0)];
        assert_one(&d, &s, "tWR", 1, 2, need, need - 1);
        assert_legal(&d, &[act(0, 0, 0, 0, 1), wr(r, 0, 0, 0, 1), prea(r + need, 0)]);
    }
}

#[test]
fn pre_or_prea_then_ref_at_trp_is_legal() {
    for d in both() {
        let p = d.t.tRAS;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(p, 0, 0, 0), refresh(p + d.t.tRP, 0)]);
        assert_legal(&d, &[act(0, 0, 0, 0, 1), prea(p, 0), refresh(p + d.t.tRP, 0)]);
    }
}

#[test]
fn pre_or_prea_then_ref_one_cycle_early_violates_trp() {
    for d in both() {
        let p = d.t.tRAS;
        let s = [act(0, 0, 0, 0, 1), pre(p, 0, 0, 0), refresh(p + d.t.tRP - 1, 0)];
        assert_one(&d, &s, "tRP", 1, 2, d.t.tRP, d.t.tRP - 1);
        let s = [act(0, 0, 0, 0, 1), prea(p, 0), refresh(p + d.t.tRP - 1, 0)];
        assert_one(&d, &s, "tRP", 1, 2, d.t.tRP, d.t.tRP - 1);
    }
}

#[test]
fn rda_then_ref_waits_for_auto_precharge_plus_trp() {
    for d in both() {
        let r = d.t.tRAS;
        let need = d.t.tRTP + d.t.tRP;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), refresh(r + need, 0)]);
        let s = [act(0, 0, 0, 0, 1), col(r, Command::Rda, 0, 0, 0, 1), refresh(r + need - 1, 0)];
        assert_one(&d, &s, "tRP (auto-precharge)", 1, 2, need, need - 1);
    }
}

#[test]
fn wra_then_ref_waits_for_write_recovery_plus_trp() {
    for d in both() {
        let w = d.t.tRCD;
        let need = write_recovery(&d.t) + d.t.tRP;
        assert_legal(&d, &[act(0, 0, 0, 0, 1), col(w, Command::Wra, 0, 0, 0, 1), refresh(w + need, 0)]);
        let s = [act(0, 0, 0, 0, 1), col(w, Command::Wra, 0, 0, 0, 1), refresh(w + need - 1, 0)];
        assert_one(&d, &s, "tRP (auto-precharge)", 1, 2, need, need - 1);
    }
}

#[test]
fn ref_with_an_open_bank_is_a_protocol_violation() {
    for d in both() {
        let s = [act(0, 0, 0, 0, 1), act(d.t.tRRD_S, 0, d.org.bank_groups - 1, 1, 1), refresh(500, 0)];
        let v = run(&d, &s);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!(v[0].constraint, "protocol: REF with open bank");
        assert_eq!((v[0].earlier, v[0].later), (Some(s[0]), s[2]));
        // An open bank in the other rank does not matter.
        assert_legal(&d, &[act(0, 1, 0, 0, 1), refresh(500, 0)]);
    }
}

#[test]
fn ref_then_act_and_ref_then_ref_at_trfc_are_legal() {
    for d in both() {
        assert!(d.t.tRFC > 0);
        assert_legal(&d, &[refresh(10, 0), act(10 + d.t.tRFC, 0, 0, 0, 1)]);
        assert_legal(&d, &[refresh(10, 0), refresh(10 + d.t.tRFC, 0)]);
        // The other rank is not blocked.
        assert_legal(&d, &[refresh(10, 0), act(11, 1, 0, 0, 1)]);
    }
}

#[test]
fn ref_then_act_ref_or_pre_one_cycle_early_violates_trfc() {
    for d in both() {
        let f = d.t.tRFC;
        for next in [act(10 + f - 1, 0, 0, 0, 1), refresh(10 + f - 1, 0), pre(10 + f - 1, 0, 0, 1), prea(11, 0)] {
            let s = [refresh(10, 0), next];
            let actual = next.cycle - 10;
            assert_one(&d, &s, "tRFC", 0, 1, f, actual);
        }
    }
}

#[test]
fn refresh_rate_is_checked_only_when_expected() {
    for d in both() {
        let gap = 9 * d.t.tREFI;
        let late = [refresh(10, 0), act(10 + gap + 1, 0, 0, 0, 1)];
        assert_legal(&d, &late);

        let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_expect_refresh(true);
        assert!(c.observe(&refresh(gap, 0)).is_empty(), "first REF by 9 x tREFI is on time");
        assert!(c.observe(&refresh(2 * gap, 0)).is_empty());
        // Rank 1 was never refreshed: its first command after 9 x tREFI reports it.
        let v = c.observe(&act(2 * gap + 1, 1, 0, 0, 1));
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier, v[0].actual), ("tREFI", None, 2 * gap + 1));
    }
}

#[test]
fn rank_going_more_than_nine_trefi_without_ref_violates_trefi_once() {
    for d in both() {
        let gap = 9 * d.t.tREFI;
        let mut c = TimingChecker::new(d.std, &d.org, &d.t);
        c.set_expect_refresh(true);
        let r0 = refresh(100, 0);
        assert!(c.observe(&r0).is_empty());
        assert!(c.observe(&act(100 + gap, 0, 0, 0, 1)).is_empty(), "exactly 9 x tREFI is allowed");
        let late = pre(100 + gap + 1, 0, 0, 1); // a no-op PRE: only the refresh rate is at stake
        let v = c.observe(&late);
        assert_eq!(v.len(), 1, "{}", list(&v));
        assert_eq!((v[0].constraint, v[0].earlier, v[0].later), ("tREFI", Some(r0), late));
        assert_eq!((v[0].required, v[0].actual), (gap, gap + 1));
        // Reported once until the rank is refreshed again.
        let p = 100 + gap + d.t.tRAS;
        assert!(c.observe(&pre(p, 0, 0, 0)).is_empty());
        assert!(c.observe(&refresh(p + d.t.tRP, 0)).is_empty());
        assert_eq!(c.violation_count(), 1);
    }
}

// ------------------------------------------------------------------------------------------
// Different ranks on one channel
// ------------------------------------------------------------------------------------------

/// Rank 0 bank (0,0) and rank 1 bank (0,0) open; a column in rank 0 at T0 then one in rank 1.
fn rank_pair(first: Command, second: Command, gap: u64) -> Vec<CommandRecord> {
    vec![act(0, 0, 0, 0, 1), act(1, 1, 0, 0, 1), col(T0, first, 0, 0, 0, 1), col(T0 + gap, second, 1, 0, 0, 1)]
}

fn rank_rule(t: &TimingParams, first: Command, second: Command) -> u64 {
    let (lat1, lat2) = (if first.is_read() { t.CL } else { t.CWL }, if second.is_read() { t.CL } else { t.CWL });
    (lat1 + t.tBL + t.tRTRS).saturating_sub(lat2)
}

const RANK_CASES: [(Command, Command, &str); 4] = [
    (Command::Rd, Command::Rd, "rank-to-rank rd-to-rd"),
    (Command::Wr, Command::Wr, "rank-to-rank wr-to-wr"),
    (Command::Rd, Command::Wr, "rank-to-rank rd-to-wr"),
    (Command::Wr, Command::Rd, "rank-to-rank wr-to-rd"),
];

#[test]
fn rank_to_rank_switches_at_their_minimum_are_legal() {
    for d in both() {
        for (a, b, _) in RANK_CASES {
            assert_legal(&d, &rank_pair(a, b, rank_rule(&d.t, a, b)));
        }
    }
}

#[test]
fn rank_to_rank_switches_one_cycle_early_violate_the_rank_rule() {
    for d in both() {
        for (a, b, name) in RANK_CASES {
            let need = rank_rule(&d.t, a, b);
            assert!(need >= 2, "{name}: need {need}");
            let s = rank_pair(a, b, need - 1);
            assert_one(&d, &s, name, 2, 3, need, need - 1);
        }
    }
}

#[test]
fn rank_to_rank_wr_to_rd_saturates_at_zero() {
    let mut d = ddr4();
    d.t.CL = d.t.CWL + d.t.tBL + d.t.tRTRS + 3; // write data ends long before read data starts
    assert_eq!(rank_rule(&d.t, Command::Wr, Command::Rd), 0);
    assert_legal(&d, &rank_pair(Command::Wr, Command::Rd, 1));
}

// ------------------------------------------------------------------------------------------
// Data bus
// ------------------------------------------------------------------------------------------

#[test]
fn overlapping_bursts_violate_the_data_bus_even_when_tccd_allows_them() {
    // A made-up part with tCCD_S shorter than a burst: only the data-bus rule catches it.
    let mut d = ddr4();
    d.t.tCCD_S = 2;
    let s = col_pair(1, Command::Rd, Command::Rd, 2);
    assert_one(&d, &s, "data bus", 2, 3, d.t.tBL, 2);
    assert_legal(&d, &col_pair(1, Command::Rd, Command::Rd, d.t.tBL));
}

// ------------------------------------------------------------------------------------------
// Display, counting, API
// ------------------------------------------------------------------------------------------

#[test]
fn display_names_constraint_both_commands_and_cycles() {
    let d = ddr4();
    let a = act(110, 0, 1, 2, 5);
    let r = rd(120, 0, 1, 2, 5);
    let v = run(&d, &[a, r]);
    assert_eq!(v.len(), 1);
    assert_eq!(
        v[0].to_string(),
        "tRCD: RD @120 (ch 0 rank 0 bg 1 bank 2 row 5 col 8) came 10 cycles after ACT @110 (ch 0 rank 0 bg 1 bank 2 row 5); needs 16"
    );
    let e: crate::Error = (&v[0]).into();
    assert!(e.to_string().starts_with("timing violation: tRCD: RD @120"));
}

#[test]
fn display_of_protocol_and_refresh_violations() {
    let d = ddr3();
    let v = run(&d, &[act(0, 0, 0, 3, 7), act(40, 0, 0, 3, 9)]);
    assert_eq!(
        v[0].to_string(),
        "protocol: ACT to open bank: ACT @40 (ch 0 rank 0 bg 0 bank 3 row 9), after ACT @0 (ch 0 rank 0 bg 0 bank 3 row 7)"
    );
    let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_expect_refresh(true);
    let late = 9 * d.t.tREFI + 1;
    let v = c.observe(&refresh(late, 1));
    assert_eq!(
        v[0].to_string(),
        format!(
            "tREFI: REF @{late} (ch 0 rank 1 bg 0 bank 0) came {late} cycles after cycle 0 with no REF to its rank in between; at most {} allowed",
            9 * d.t.tREFI
        )
    );
}

#[test]
fn overlap_with_a_burst_is_reported_even_when_its_command_broke_protocol() {
    // RD to the bank an RDA just closed: the protocol error names the RDA, and so does the
    // (separate) data-bus overlap on a part whose tCCD_L is shorter than a burst.
    let mut d = ddr3();
    d.t.tCCD_L = 2;
    d.t.tCCD_S = 2;
    let s = [act(0, 0, 0, 0, 1), col(T0, Command::Rda, 0, 0, 0, 1), rd(T0 + 2, 0, 0, 0, 1)];
    let v = run(&d, &s);
    let names: Vec<_> = v.iter().map(|v| v.constraint).collect();
    assert_eq!(names, ["protocol: RD/WR to closed bank", "data bus"], "{}", list(&v));
}

#[test]
fn violations_are_kept_up_to_a_limit_but_all_counted() {
    let d = ddr3();
    let mut c = TimingChecker::new(d.std, &d.org, &d.t);
    for i in 0..1500u64 {
        let v = c.observe(&rd(i * 100, 0, 0, 0, 1)); // bank never opened
        assert_eq!(v.len(), 1);
    }
    assert_eq!(c.violation_count(), 1500);
    assert_eq!(c.violations().len(), MAX_KEPT_VIOLATIONS);
    assert_eq!(c.commands_checked(), 1500);
}

#[test]
fn legal_command_returns_an_unallocated_empty_vec() {
    let d = ddr4();
    let mut c = TimingChecker::new(d.std, &d.org, &d.t);
    let v = c.observe(&act(0, 0, 0, 0, 1));
    assert!(v.is_empty());
    assert_eq!(v.capacity(), 0);
}

#[test]
fn rule_table_is_derived_from_base_timing() {
    let d = ddr4();
    let r = Rules::derive(d.std, &d.t);
    assert_eq!(r.write_to_pre, 12 + 4 + 18);
    assert_eq!(r.write_to_read_same_group, 12 + 4 + 9);
    assert_eq!(r.write_to_read_other_group, 12 + 4 + 3);
    assert_eq!(r.read_to_write, 16 + 4 + 2 - 12);
    assert_eq!(r.rank_read_to_write, 16 + 4 + 2 - 12);
    assert_eq!(r.rank_write_to_read, 12 + 4 + 2 - 16);
    assert_eq!(r.rank_read_to_read, 6);
    assert!(r.table().iter().any(|&(n, _, v)| n == "tFAW" && v == 26));
    let r3 = Rules::derive(Standard::Ddr3, &ddr3().t);
    assert_eq!((r3.name_rrd_same, r3.name_ccd_other, r3.name_wtr_same), ("tRRD", "tCCD", "tWTR"));
}

// ------------------------------------------------------------------------------------------
// Randomized streams
// ------------------------------------------------------------------------------------------

mod random {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A protocol-correct stream on 2 channels x 2 ranks: random banks, rows and column
    /// commands, PRE on row conflicts, PREA + REF often enough for tREFI, every
    /// command on a channel `gap` cycles after the previous one (gap >= every constraint).
    fn widely_spaced_stream(d: &Dev, n: usize, seed: u64) -> Vec<CommandRecord> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let t = &d.t;
        let gap = [t.tRC, t.tRFC, t.tFAW, t.CWL + t.tBL + t.tWR + t.tRP, t.CL + t.tBL + t.tRTRS].into_iter().max().unwrap() + 1;
        let (ch_n, rk_n, bg_n, bk_n) = (d.org.channels, d.org.ranks, d.org.bank_groups, d.org.banks_per_group);
        let mut open = vec![None::<u32>; (ch_n * rk_n * bg_n * bk_n) as usize];
        let mut now = vec![0u64; ch_n as usize];
        let mut last_ref = vec![0u64; (ch_n * rk_n) as usize];
        let mut out = Vec::with_capacity(n);
        let emit = |out: &mut Vec<CommandRecord>, now: &mut Vec<u64>, cmd, a: DramAddress| {
            now[a.channel as usize] += gap;
            out.push(CommandRecord { cycle: now[a.channel as usize], command: cmd, addr: a });
        };
        while out.len() < n {
            let ch = rng.gen_range(0..ch_n);
            // Refresh a rank once it is 4 x tREFI overdue (well inside the 9 x tREFI limit).
            if let Some(rank) = (0..rk_n).find(|&r| now[ch as usize] > last_ref[(ch * rk_n + r) as usize] + 4 * t.tREFI) {
                let a = DramAddress { channel: ch, rank, ..Default::default() };
                emit(&mut out, &mut now, Command::Prea, a);
                emit(&mut out, &mut now, Command::Ref, a);
                last_ref[(ch * rk_n + rank) as usize] = now[ch as usize];
                let per_rank = (bg_n * bk_n) as usize;
                let first = ((ch * rk_n + rank) as usize) * per_rank;
                open[first..first + per_rank].iter_mut().for_each(|o| *o = None);
                continue;
            }
            let (rank, bg, bank, row) = (rng.gen_range(0..rk_n), rng.gen_range(0..bg_n), rng.gen_range(0..bk_n), rng.gen_range(0..4u32));
            let idx = (((ch * rk_n + rank) * bg_n + bg) * bk_n + bank) as usize;
            let a = DramAddress { channel: ch, rank, bank_group: bg, bank, row, column: rng.gen_range(0..128) * 8 };
            match open[idx] {
                Some(r) if r == row => {}
                Some(_) => {
                    emit(&mut out, &mut now, Command::Pre, DramAddress { row: 0, column: 0, ..a });
                    emit(&mut out, &mut now, Command::Act, DramAddress { column: 0, ..a });
                }
                None => emit(&mut out, &mut now, Command::Act, DramAddress { column: 0, ..a }),
            }
            let cmd = [Command::Rd, Command::Wr, Command::Rda, Command::Wra][rng.gen_range(0..4)];
            emit(&mut out, &mut now, cmd, a);
            open[idx] = if cmd.auto_precharges() { None } else { Some(row) };
        }
        // Interleave the channels in the stream, as a multi-channel run would.
        out.sort_by_key(|r| r.cycle);
        out
    }

    fn two_channels(d: Dev) -> Dev {
        Dev { org: Organisation { channels: 2, ..d.org.clone() }, ..d }
    }

    #[test]
    fn random_protocol_correct_widely_spaced_streams_are_legal() {
        for (i, d) in both().into_iter().map(two_channels).enumerate() {
            let s = widely_spaced_stream(&d, 200_000, 7 + i as u64);
            let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_expect_refresh(true);
            for r in &s {
                let v = c.observe(r);
                assert!(v.is_empty(), "{}: {}", d.std.name(), list(&v));
            }
            assert_eq!(c.commands_checked(), s.len() as u64);
        }
    }

    #[test]
    fn random_garbage_never_panics_and_every_violation_is_consistent() {
        for (i, d) in both().into_iter().map(two_channels).enumerate() {
            let mut rng = ChaCha8Rng::seed_from_u64(99 + i as u64);
            let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_expect_refresh(true);
            let mut now = [0u64; 2];
            for _ in 0..200_000 {
                let ch = rng.gen_range(0..3u32); // channel 2 is out of range
                let slot = (ch % 2) as usize;
                now[slot] = match rng.gen_range(0..20) {
                    0 => now[slot].saturating_sub(3), // out of order
                    1 => now[slot] + 10 * d.t.tREFI,  // a long idle stretch
                    _ => now[slot] + rng.gen_range(0..8),
                };
                let r = CommandRecord {
                    cycle: now[slot],
                    command: Command::ALL[rng.gen_range(0..Command::COUNT)],
                    addr: DramAddress {
                        channel: ch,
                        rank: rng.gen_range(0..2),
                        bank_group: rng.gen_range(0..d.org.bank_groups),
                        bank: rng.gen_range(0..d.org.banks_per_group),
                        row: rng.gen_range(0..3),
                        column: 0,
                    },
                };
                for v in c.observe(&r) {
                    assert_eq!(v.later, r);
                    let text = v.to_string();
                    assert!(text.starts_with(v.constraint), "{text}");
                    if let Some(e) = &v.earlier {
                        assert!(e.cycle <= r.cycle || v.constraint == "protocol: command out of order", "{text}");
                    }
                    if v.is_protocol() {
                        assert_eq!((v.required, v.actual), (0, 0), "{text}");
                    } else if v.constraint == "tREFI" {
                        assert!(v.actual > v.required, "{text}");
                    } else {
                        assert!(v.actual < v.required, "{text}");
                    }
                }
            }
            assert!(c.violation_count() > 1000);
            assert_eq!(c.violations().len(), MAX_KEPT_VIOLATIONS);
        }
    }
}

// ------------------------------------------------------------------------------------------
// Per-bank refresh (LPDDR4 REFPB)
// ------------------------------------------------------------------------------------------

const LPDDR4_3200: &str = include_str!("../../../../configs/devices/lpddr4-3200.toml");

fn lpddr4() -> Dev {
    let spec = DeviceSpec::from_toml(LPDDR4_3200, "test").unwrap();
    Dev { std: spec.standard, org: spec.organisation(8, 16, 1, 2, 32).unwrap(), t: spec.timing(8, 16).unwrap() }
}
fn refpb(c: u64, rank: u32, bank: u32) -> CommandRecord {
    rec(c, Command::RefPb, rank, 0, bank, 0, 0)
}

#[test]
fn refpb_rules_met_exactly_are_legal() {
    let d = lpddr4();
    let t = &d.t;
    assert!(t.tRFCpb > 0 && t.tPBR2PBR > 0 && t.tRFCpb < t.tRFC);
    // PRE -> REFPB (tRP), REFPB -> ACT same bank (tRFCpb), REFPB -> REFPB other bank (tpbR2pbR).
    let a = t.tRAS;
    assert_legal(&d, &[act(0, 0, 0, 0, 1), pre(a, 0, 0, 0), refpb(a + t.tRP, 0, 0), act(a + t.tRP + t.tRFCpb, 0, 0, 0, 2)]);
    assert_legal(&d, &[refpb(0, 0, 0), refpb(t.tPBR2PBR, 0, 1), refpb(t.tRFCpb.max(2 * t.tPBR2PBR), 0, 0)]);
    // ACT <-> REFPB to other banks (tRRD), REF -> REFPB (tRFCab), REFPB -> REF (tRFCpb).
    assert_legal(&d, &[act(0, 0, 0, 1, 1), refpb(t.tRRD_S, 0, 0), act(2 * t.tRRD_S, 0, 0, 2, 1)]);
    assert_legal(&d, &[refresh(0, 0), refpb(t.tRFC, 0, 3), refresh(t.tRFC + t.tRFCpb, 0)]);
    // Another rank is not held.
    assert_legal(&d, &[refpb(0, 0, 0), refpb(1, 1, 0)]);
    assert_legal(&d, &[refpb(0, 0, 0), act(1, 1, 0, 0, 1), rd(1 + t.tRCD, 1, 0, 0, 1)]);
}

#[test]
fn refpb_rules_missed_by_one_cycle_are_violations() {
    let d = lpddr4();
    let t = d.t.clone();
    let a = t.tRAS;
    let s = [act(0, 0, 0, 0, 1), pre(a, 0, 0, 0), refpb(a + t.tRP - 1, 0, 0)];
    assert_one(&d, &s, "tRP", 1, 2, t.tRP, t.tRP - 1);
    let s = [refpb(0, 0, 0), act(t.tRFCpb - 1, 0, 0, 0, 2)];
    assert_one(&d, &s, "tRFCpb", 0, 1, t.tRFCpb, t.tRFCpb - 1);
    let s = [refpb(0, 0, 0), refpb(t.tPBR2PBR - 1, 0, 1)];
    assert_one(&d, &s, "tpbR2pbR", 0, 1, t.tPBR2PBR, t.tPBR2PBR - 1);
    let s = [act(0, 0, 0, 1, 1), refpb(t.tRRD_S - 1, 0, 0)];
    assert_one(&d, &s, "tRRD", 0, 1, t.tRRD_S, t.tRRD_S - 1);
    let s = [refpb(0, 0, 0), act(t.tRRD_S - 1, 0, 0, 1, 1)];
    assert_one(&d, &s, "tRRD", 0, 1, t.tRRD_S, t.tRRD_S - 1);
    let s = [refpb(0, 0, 0), refresh(t.tRFCpb - 1, 0)];
    assert_one(&d, &s, "tRFCpb", 0, 1, t.tRFCpb, t.tRFCpb - 1);
    let s = [refresh(0, 0), refpb(t.tRFC - 1, 0, 0)];
    assert_one(&d, &s, "tRFC", 0, 1, t.tRFC, t.tRFC - 1);
    let s = [act(0, 0, 0, 0, 1), refpb(t.tRAS + t.tRP, 0, 0)];
    let v = run(&d, &s);
    assert!(v.iter().any(|v| v.constraint == names::REFPB_TO_OPEN), "{}", list(&v));
}

#[test]
fn per_bank_obligation_needs_every_bank_refreshed_within_nine_trefi() {
    let d = lpddr4();
    let (gap, step) = (9 * d.t.tREFI, d.t.tPBR2PBR);
    let checker = || TimingChecker::new(d.std, &d.org, &d.t).with_refresh(RefreshObligation::PerBank);
    // Banks 0..7 refreshed in turn each tREFI: legal.
    let mut c = checker();
    for round in 0..12 {
        for b in 0..8 {
            let v = c.observe(&refpb(round * d.t.tREFI + b as u64 * step, 0, b));
            assert!(v.is_empty(), "{}", list(&v));
        }
    }
    // Bank 7 left out: reported once, at the first REFPB past its 9 x tREFI.
    let mut c = checker();
    let mut found = Vec::new();
    for round in 0..12 {
        for b in 0..7 {
            found.extend(c.observe(&refpb(round * d.t.tREFI + b as u64 * step, 0, b)));
        }
    }
    assert_eq!(found.len(), 1, "{}", list(&found));
    assert_eq!(found[0].constraint, names::TREFI);
    assert_eq!(found[0].required, gap);
    assert!(found[0].actual > gap && found[0].actual <= gap + d.t.tREFI, "{}", found[0]);
    // A REF refreshes every bank; more than 8 REFPBs ahead of one per tREFI breaks pull-in.
    let mut c = checker();
    assert!(c.observe(&refresh(0, 0)).is_empty());
    let mut v = Vec::new();
    for i in 0..9 {
        v.extend(c.observe(&refpb(d.t.tRFC + i * d.t.tRFCpb, 0, 0)));
    }
    assert_eq!(v.len(), 1, "{}", list(&v));
    assert_eq!(v[0].constraint, names::REF_PULL_IN);
}

// ------------------------------------------------------------------------------------------
// Same-bank refresh (DDR5 REFSB)
// ------------------------------------------------------------------------------------------

const DDR5_4800: &str = include_str!("../../../../configs/devices/ddr5-4800.toml");

fn ddr5() -> Dev {
    let spec = DeviceSpec::from_toml(DDR5_4800, "test").unwrap();
    Dev { std: spec.standard, org: spec.organisation(16, 8, 1, 2, 32).unwrap(), t: spec.timing(16, 8).unwrap() }
}
fn refsb(c: u64, rank: u32, bank: u32) -> CommandRecord {
    rec(c, Command::RefSb, rank, 0, bank, 0, 0)
}

/// DDR5 writes to one bank group are tCCD_L_WR apart (JESD79-5), reads tCCD_L; a write to
/// another group needs only tCCD_S.
#[test]
fn ddr5_writes_to_one_bank_group_keep_tccd_l_wr() {
    let d = ddr5();
    let t = d.t.clone();
    assert!(t.tCCD_L_WR > t.tCCD_L, "{} against {}", t.tCCD_L_WR, t.tCCD_L);
    for (a, b) in [(Command::Wr, Command::Wr), (Command::Wra, Command::Wr), (Command::Wr, Command::Wra)] {
        assert_legal(&d, &col_pair(0, a, b, t.tCCD_L_WR));
        let s = col_pair(0, a, b, t.tCCD_L_WR - 1);
        assert_one(&d, &s, names::TCCD_L_WR, 2, 3, t.tCCD_L_WR, t.tCCD_L_WR - 1);
    }
    assert_legal(&d, &col_pair(0, Command::Rd, Command::Rd, t.tCCD_L));
    assert_legal(&d, &col_pair(1, Command::Wr, Command::Wr, t.tCCD_S));
}

/// DDR5's ACT, RD and WR (RDA, WRA) take two cycles of the command bus (JESD79-5), so the
/// channel's next command comes two cycles after them; a PRE leaves the next cycle free (for
/// anything but a precharge of its rank, tPPD). Earlier standards have one-cycle commands.
#[test]
fn ddr5_long_commands_hold_the_command_bus_two_cycles() {
    let d = ddr5();
    for first in [act(T0, 0, 2, 0, 1), rd(T0, 0, 0, 0, 1), wr(T0, 0, 0, 0, 1), col(T0, Command::Rda, 0, 0, 0, 1)] {
        let mut s = two_open(0, 1);
        s.extend([first, pre(T0 + 1, 0, 1, 1)]);
        assert_one(&d, &s, names::COMMAND_BUS, 2, 3, 2, 1);
        s[3] = pre(T0 + 2, 0, 1, 1);
        assert_legal(&d, &s);
    }
    let mut s = two_open(0, 1);
    s.extend([pre(T0, 0, 1, 1), rd(T0 + 1, 0, 0, 0, 1)]);
    assert_legal(&d, &s);
    let ddr4 = ddr4();
    let mut s = two_open(0, 1);
    s.extend([rd(T0, 0, 0, 0, 1), pre(T0 + 1, 0, 1, 1)]);
    assert_legal(&ddr4, &s);
}

/// DDR5's read-to-write turnaround keeps the write preamble: CL + tBL + 4 - CWL, 14 nCK on
/// ddr5-4800 (40 + 8 + 4 - 38), two more than DDR4's formula.
#[test]
fn ddr5_read_to_write_keeps_four_idle_bus_cycles() {
    let d = ddr5();
    let need = d.t.CL + d.t.tBL + 4 - d.t.CWL;
    assert_eq!(need, 14, "CL {} tBL {} CWL {}", d.t.CL, d.t.tBL, d.t.CWL);
    assert_legal(&d, &col_pair(1, Command::Rd, Command::Wr, need));
    assert_one(&d, &col_pair(1, Command::Rd, Command::Wr, need - 1), names::RD_TO_WR, 2, 3, need, need - 1);
}

/// A DDR5 write to another rank keeps the same four idle bus cycles after a read as one to its
/// rank (the read's postamble and the write's preamble are the shared bus's): 14 nCK on
/// ddr5-4800, not CL + tBL + tRTRS - CWL = 12.
#[test]
fn ddr5_read_to_write_of_another_rank_keeps_the_turnaround() {
    let d = ddr5();
    let need = d.t.CL + d.t.tBL + 4 - d.t.CWL;
    assert_eq!((need, d.t.CL + d.t.tBL + d.t.tRTRS - d.t.CWL), (14, 12));
    let s = |gap: u64| vec![act(0, 0, 0, 0, 1), act(50, 1, 0, 0, 1), rd(T0, 0, 0, 0, 1), wr(T0 + gap, 1, 0, 0, 1)];
    assert_legal(&d, &s(need));
    assert_one(&d, &s(need - 1), names::RANK_RD_WR, 2, 3, need, need - 1);
}

/// DDR5's precharge commands of a rank are tPPD apart (2 nCK), PRE or PREA alike; another
/// rank's are not held, nor is a precharge an RDA implies (not a command).
#[test]
fn ddr5_precharge_commands_of_a_rank_are_tppd_apart() {
    let d = ddr5();
    let p = d.t.tPPD;
    assert_eq!(p, 2);
    let open = two_open(0, 1);
    for (first, second) in [(pre(T0, 0, 0, 0), pre(T0 + p, 0, 1, 1)), (pre(T0, 0, 0, 0), prea(T0 + p, 0)), (prea(T0, 0), prea(T0 + p, 0))] {
        let mut s = open.clone();
        s.extend([first, second]);
        assert_legal(&d, &s);
        s[3].cycle -= 1;
        assert_one(&d, &s, names::TPPD, 2, 3, p, p - 1);
    }
    // Another rank's precharge: only the command bus.
    let s = [act(0, 0, 0, 0, 1), act(50, 1, 0, 0, 1), pre(T0, 0, 0, 0), pre(T0 + 1, 1, 0, 0)];
    assert_legal(&d, &s);
    // An RDA's precharge at T0 + tRTP; a PRE to another bank then is legal.
    let s = [act(0, 0, 0, 0, 1), act(50, 0, 1, 1, 1), col(T0, Command::Rda, 0, 0, 0, 1), pre(T0 + d.t.tRTP, 0, 1, 1)];
    assert_legal(&d, &s);
    // DDR4 has no tPPD.
    let ddr4 = ddr4();
    let mut s = two_open(0, 1);
    s.extend([pre(T0, 0, 0, 0), pre(T0 + 1, 0, 1, 1)]);
    assert_legal(&ddr4, &s);
}

#[test]
fn refsb_rules_met_exactly_are_legal() {
    let d = ddr5();
    let t = &d.t;
    assert!(t.tRFCsb > t.tREFSBRD && t.tREFSBRD > 0 && t.tRFCsb < t.tRFC);
    // Its bank index in every group: PRE -> REFSB tRP, REFSB -> ACT of those banks tRFCsb.
    let a = t.tRAS;
    assert_legal(&d, &[act(0, 0, 5, 1, 1), pre(a, 0, 5, 1), refsb(a + t.tRP, 0, 1), act(a + t.tRP + t.tRFCsb, 0, 7, 1, 2)]);
    // Other banks: ACT tREFSBRD after, REFSB tRRD_L after an ACT and tREFSBRD after a REFSB.
    assert_legal(&d, &[refsb(0, 0, 0), act(t.tREFSBRD, 0, 3, 2, 1), refsb(t.tREFSBRD + t.tRRD_L, 0, 1)]);
    assert_legal(&d, &[refresh(0, 0), refsb(t.tRFC, 0, 3), refresh(t.tRFC + t.tRFCsb, 0)]);
}

#[test]
fn refsb_rules_missed_by_one_cycle_are_violations() {
    let d = ddr5();
    let t = d.t.clone();
    let a = t.tRAS;
    // A bank of its index in another group still precharging (closed late: tRC is met).
    let s = [act(0, 0, 6, 2, 1), pre(t.tRC, 0, 6, 2), refsb(t.tRC + t.tRP - 1, 0, 2)];
    assert_one(&d, &s, "tRP", 1, 2, t.tRP, t.tRP - 1);
    // Or a row cycle from its last ACT (tRC above tRAS + tRP).
    let mut slack = d.clone();
    slack.t.tRC = t.tRAS + t.tRP + 4;
    let s = [act(0, 0, 6, 2, 1), pre(a, 0, 6, 2), refsb(slack.t.tRC - 1, 0, 2)];
    assert_one(&slack, &s, "tRC", 0, 2, slack.t.tRC, slack.t.tRC - 1);
    assert_legal(&slack, &[act(0, 0, 6, 2, 1), pre(a, 0, 6, 2), refsb(slack.t.tRC, 0, 2)]);
    let s = [refsb(0, 0, 2), act(t.tRFCsb - 1, 0, 4, 2, 1)];
    assert_one(&d, &s, "tRFCsb", 0, 1, t.tRFCsb, t.tRFCsb - 1);
    let s = [refsb(0, 0, 2), act(t.tREFSBRD - 1, 0, 4, 3, 1)];
    assert_one(&d, &s, "tREFSBRD", 0, 1, t.tREFSBRD, t.tREFSBRD - 1);
    let s = [refsb(0, 0, 2), refsb(t.tREFSBRD - 1, 0, 3)];
    assert_one(&d, &s, "tREFSBRD", 0, 1, t.tREFSBRD, t.tREFSBRD - 1);
    let s = [act(0, 0, 1, 3, 1), refsb(t.tRRD_L - 1, 0, 0)];
    assert_one(&d, &s, "tRRD_L", 0, 1, t.tRRD_L, t.tRRD_L - 1);
    let s = [refsb(0, 0, 0), refresh(t.tRFCsb - 1, 0)];
    assert_one(&d, &s, "tRFCsb", 0, 1, t.tRFCsb, t.tRFCsb - 1);
    // An open bank of its index in any group.
    let s = [act(0, 0, 7, 1, 1), refsb(t.tRC, 0, 1)];
    let v = run(&d, &s);
    assert!(v.iter().any(|v| v.constraint == names::REFSB_TO_OPEN), "{}", list(&v));
}

#[test]
fn per_bank_obligation_counts_a_refsb_for_every_bank_group() {
    let d = ddr5();
    let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_refresh(RefreshObligation::PerBank);
    // Four bank indices in turn every tREFI: every bank of every group refreshed, legal.
    for round in 0..12 {
        for k in 0..4 {
            let v = c.observe(&refsb(round * d.t.tREFI + k as u64 * d.t.tRFCsb, 0, k));
            assert!(v.is_empty(), "{}", list(&v));
        }
    }
    // Index 3 left out: its eight banks are overdue, each reported once.
    let mut c = TimingChecker::new(d.std, &d.org, &d.t).with_refresh(RefreshObligation::PerBank);
    let mut found = Vec::new();
    for round in 0..12 {
        for k in 0..3 {
            found.extend(c.observe(&refsb(round * d.t.tREFI + k as u64 * d.t.tRFCsb, 0, k)));
        }
    }
    assert_eq!(found.len(), 8, "{}", list(&found));
    assert!(found.iter().all(|v| v.constraint == names::TREFI));
}

/// A throttle's column window: the (n+1)-th column command of a channel exactly a window after
/// the first is legal, a cycle earlier is one violation naming both.
#[test]
fn a_column_window_binds_the_command_its_commands_back() {
    let mut d = ddr4();
    d.t.col_window = 200;
    d.t.col_window_commands = 4;
    let mut s = vec![act(0, 0, 0, 0, 1), act(d.t.tRRD_L, 0, 1, 0, 1)];
    let first = d.t.tRRD_L + d.t.tRCD;
    // Four reads alternating two bank groups, tCCD_L apart, then one a window after the first.
    for i in 0..4u64 {
        s.push(rd(first + i * d.t.tCCD_L, 0, (i % 2) as u32, 0, 1));
    }
    s.push(rd(first + d.t.col_window, 0, 0, 0, 1));
    assert_legal(&d, &s);
    s[6].cycle -= 1;
    assert_one(&d, &s, "column window", 2, 6, d.t.col_window, d.t.col_window - 1);
}

// ------------------------------------------------------------------------------------------
// Power-down
// ------------------------------------------------------------------------------------------

fn pd(c: u64, command: Command, rank: u32) -> CommandRecord {
    rec(c, command, rank, 0, 0, 0, 0)
}

/// ACT, RD, then active power-down at the read's entry distance (RL + BL/2 + 1), exit tCKE
/// later, and the next command tXP after the exit: legal; each distance one cycle short is one
/// violation naming it.
#[test]
fn power_down_entry_exit_and_the_next_command_keep_their_distances() {
    for d in both() {
        let t = &d.t;
        let entry = t.tRCD + t.CL + t.tBL + 1;
        let exit = entry + t.tCKE;
        let next = exit + t.tXP;
        let legal =
            [act(0, 0, 0, 0, 5), rd(t.tRCD, 0, 0, 0, 5), pd(entry, Command::Pdea, 0), pd(exit, Command::Pdxa, 0), rd(next, 0, 0, 0, 5)];
        assert_legal(&d, &legal);
        let mut early = legal;
        early[2].cycle -= 1;
        assert_one(&d, &early, names::POWER_DOWN_ENTRY, 1, 2, t.CL + t.tBL + 1, t.CL + t.tBL);
        let mut short = legal;
        short[3].cycle -= 1;
        short[4].cycle -= 1;
        assert_one(&d, &short, names::TCKE, 2, 3, t.tCKE, t.tCKE - 1);
        let mut soon = legal;
        soon[4].cycle -= 1;
        assert_one(&d, &soon, names::TXP, 3, 4, t.tXP, t.tXP - 1);
        // After a write: WL + BL/2 + tWR.
        let w = t.CWL + t.tBL + t.tWR;
        let s = [act(0, 0, 0, 0, 5), wr(t.tRCD, 0, 0, 0, 5), pd(t.tRCD + w - 1, Command::Pdea, 0)];
        assert_one(&d, &s, names::POWER_DOWN_ENTRY, 1, 2, w, w - 1);
    }
}

/// A command to a rank powered down, an entry of the wrong kind for its banks, and an exit
/// without an entry are protocol violations; the other rank is not affected.
#[test]
fn power_down_protocol_violations_are_named() {
    for d in both() {
        let s = [pd(10, Command::Pdep, 0), act(20, 0, 0, 0, 5)];
        assert_one(&d, &s, names::TO_POWERED_DOWN, 0, 1, 0, 0);
        assert_legal(&d, &[pd(10, Command::Pdep, 0), act(20, 1, 0, 0, 5)]);
        let v = run(&d, &[act(0, 0, 0, 0, 5), pd(100, Command::Pdep, 0)]);
        assert!(v.len() == 1 && v[0].constraint == names::POWER_DOWN_BANKS, "{}", list(&v));
        let v = run(&d, &[pd(100, Command::Pdea, 0)]);
        assert!(v.len() == 1 && v[0].constraint == names::POWER_DOWN_BANKS, "{}", list(&v));
        let v = run(&d, &[pd(100, Command::Pdxp, 0)]);
        assert!(v.len() == 1 && v[0].constraint == names::POWER_DOWN_STATE, "{}", list(&v));
        let v = run(&d, &[pd(100, Command::Pdep, 0), pd(200, Command::Pdxa, 0)]);
        assert!(v.len() == 1 && v[0].constraint == names::POWER_DOWN_STATE, "{}", list(&v));
    }
}
