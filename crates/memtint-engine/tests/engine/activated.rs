//! A request whose ACT has issued keeps its row until its column command
//! (`controller.protect_activated`, on by default): neither a switch to the other direction
//! nor a due refresh closes the row under it. Command sequences derived by hand on
//! DDR4-2400R (tRCD = 16, tRAS = 39, tRTP = 9, tRP = 16), both controller implementations,
//! cycle by cycle and with event skipping.

use crate::common::{machine, run_arrivals};
use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::Command;
use memtint_engine::memory_system::MemorySystem;
use serde_json::json;

/// The commands `arrivals` make (`common::run_arrivals`), as (cycle, command, row).
fn commands(cfg: &MemoryConfig, arrivals: &[(u64, u64, bool)], every_cycle: bool, until: u64) -> Vec<(u64, Command, u32)> {
    run_arrivals(cfg, arrivals, every_cycle, until).iter().map(|c| (c.cycle, c.command, c.addr.row)).collect()
}

/// Two addresses in the same bank, rows `a` and `b`.
fn same_bank_rows(cfg: &MemoryConfig) -> (u64, u32, u64, u32) {
    let m = MemorySystem::new(cfg).unwrap();
    let d0 = m.mapping().decode(0);
    for shift in 6..40 {
        let d = m.mapping().decode(1 << shift);
        if (d.channel, d.rank, d.bank_group, d.bank) == (d0.channel, d0.rank, d0.bank_group, d0.bank) && d.row != d0.row {
            return (0, d0.row, 1 << shift, d.row);
        }
    }
    panic!("no second row in bank 0");
}

/// Ramulator's write handling on a two-entry write queue that drains from one write.
fn config(implementation: &str, protect: bool, refresh: &str) -> MemoryConfig {
    machine(
        "ddr4-2400",
        json!({"controller": {"implementation": implementation, "refresh": refresh, "write_handling": "ramulator",
            "write_queue": 2, "write_high_watermark": 0.5, "protect_activated": protect}}),
    )
}

/// A read to row A arrives at 0 (it may issue from 1); a write to row B of the same bank
/// arrives at 2, reaches the high watermark and turns the controller to writes while the read
/// has its ACT but not its RD. Protected: RD A at ACT + tRCD = 17 (the activated read goes
/// first in write mode); PRE (logged with the row of the write it serves) at ACT + tRAS = 40
/// (tRAS > tRCD + tRTP); ACT B tRP later at 56; WR B tRCD later at 72. Five commands.
#[test]
fn a_write_mode_switch_does_not_close_a_row_opened_for_a_waiting_read() {
    for implementation in ["general", "lanes"] {
        let cfg = config(implementation, true, "none");
        let t = cfg.timing.clone();
        assert_eq!((t.tRCD, t.tRAS, t.tRTP, t.tRP), (16, 39, 9, 16));
        let (a, row_a, b, row_b) = same_bank_rows(&cfg);
        let arrivals = [(0, a, false), (2, b, true)];
        let expected = vec![
            (1, Command::Act, row_a),
            (1 + t.tRCD, Command::Rd, row_a),
            (1 + t.tRAS, Command::Pre, row_b),
            (1 + t.tRAS + t.tRP, Command::Act, row_b),
            (1 + t.tRAS + t.tRP + t.tRCD, Command::Wr, row_b),
        ];
        for every_cycle in [true, false] {
            assert_eq!(commands(&cfg, &arrivals, every_cycle, 0), expected, "{implementation}, every cycle {every_cycle}");
        }
    }
}

/// The same requests without protection: the write's PRE closes row A before its RD, which
/// reopens it after the write: ACT A, PRE, ACT B, WR B, PRE, ACT A, RD A.
#[test]
fn without_protection_the_switch_closes_the_row_and_the_read_reopens_it() {
    for implementation in ["general", "lanes"] {
        let cfg = config(implementation, false, "none");
        let (a, _, b, _) = same_bank_rows(&cfg);
        let kinds: Vec<Command> = commands(&cfg, &[(0, a, false), (2, b, true)], false, 0).iter().map(|c| c.1).collect();
        use Command::*;
        assert_eq!(
            kinds,
            [Act, Pre, Act, Wr, Pre, Act, Rd],
            "{implementation}: {:?}",
            commands(&cfg, &[(0, a, false), (2, b, true)], true, 0)
        );
    }
}

/// Refresh falls due (tREFI = 9360, the first all-bank refresh of one rank) two cycles after
/// a read's ACT at tREFI - 2. Protected: RD at ACT + tRCD, before the PREA; PREA at
/// ACT + tRAS (later than RD + tRTP); REF tRP after it. Without protection PREA closes the row
/// at the same cycle and the read needs a second ACT after the refresh (tRFC after REF).
#[test]
fn a_due_refresh_waits_for_the_column_command_of_an_activated_request() {
    for implementation in ["general", "lanes"] {
        let cfg = config(implementation, true, "all-bank");
        let t = cfg.timing.clone();
        assert_eq!(t.tREFI, 9360);
        let act = t.tREFI - 2;
        let (a, row_a, _, _) = same_bank_rows(&cfg);
        let arrivals = [(act - 1, a, false)];
        let expected = [
            (act, Command::Act, row_a),
            (act + t.tRCD, Command::Rd, row_a),
            (act + t.tRAS, Command::Prea, 0),
            (act + t.tRAS + t.tRP, Command::Ref, 0),
        ];
        for every_cycle in [true, false] {
            let got = commands(&cfg, &arrivals, every_cycle, act + t.tRAS + t.tRP);
            assert_eq!(got[..4], expected[..], "{implementation}, every cycle {every_cycle}");
        }
        let old = commands(&config(implementation, false, "all-bank"), &arrivals, false, 0);
        let ref_at = act + t.tRAS + t.tRP;
        let expected_old = [
            (act, Command::Act, row_a),
            (act + t.tRAS, Command::Prea, 0),
            (ref_at, Command::Ref, 0),
            (ref_at + t.tRFC, Command::Act, row_a),
        ];
        assert_eq!(old[..4], expected_old[..], "{implementation} unprotected");
    }
}
