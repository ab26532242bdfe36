//! Rank power-down (`controller.power_down_after`, controller/power_down.rs): command
//! sequences derived by hand on DDR3-1333 (CL 9, tRCD 9, tBL 4, tXP 4, tCKE 4), every run
//! checked by the independent checker, the energy of the cycles powered down, and the
//! settings it refuses.

use crate::common::*;
use memtint_engine::checker::TimingChecker;
use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::energy::CommandEnergy;
use memtint_engine::dram::Command;
use memtint_engine::dram_sim::report as dram_report;
use memtint_engine::dram_sim::DramSimOptions;
use memtint_engine::dram_sim::WorkloadSpec;
use memtint_engine::trace::{GeneratorKind, GeneratorSpec};
use serde_json::{json, Value};

/// The commands reads at `arrivals` (cycle, address) make (`common::run_arrivals`), with the
/// checker's violations over them.
fn run_reads(cfg: &MemoryConfig, arrivals: &[(u64, u64)], every_cycle: bool, until: u64) -> (Vec<(u64, Command)>, Vec<String>) {
    let reads: Vec<(u64, u64, bool)> = arrivals.iter().map(|&(t, a)| (t, a, false)).collect();
    let log = run_arrivals(cfg, &reads, every_cycle, until);
    let violations = TimingChecker::check_stream(cfg.device.standard, &cfg.org, &cfg.timing, &log);
    (log.iter().map(|c| (c.cycle, c.command)).collect(), violations.iter().map(|v| v.to_string()).collect())
}

fn ddr3(after: u64, row_policy: &str, refresh: &str) -> MemoryConfig {
    machine("ddr3-1333", json!({"controller": {"power_down_after": after, "row_policy": row_policy, "refresh": refresh}}))
}

/// A read at 0: ACT at 1, RD at 1 + tRCD = 10. The rank then waits 50 idle cycles from its
/// last command (more than RD's entry distance CL + BL/2 + 1 = 14) and, its row open, enters
/// active power-down at 60. A read to the same row arrives at 200, after the tick: the exit
/// comes at 201 (tCKE long past) and the row hit tXP later, at 205; 50 idle cycles after it,
/// at 255, the rank powers down again.
#[test]
fn an_idle_rank_powers_down_and_a_request_waits_txp_for_it() {
    for every_cycle in [true, false] {
        let cfg = ddr3(50, "open", "none");
        let t = &cfg.timing;
        assert_eq!((t.CL, t.tRCD, t.tBL, t.tXP, t.tCKE), (9, 9, 4, 4, 4));
        let (cmds, violations) = run_reads(&cfg, &[(0, 0), (200, 64)], every_cycle, 300);
        assert_eq!(
            cmds,
            vec![(1, Command::Act), (10, Command::Rd), (60, Command::Pdea), (201, Command::Pdxa), (205, Command::Rd), (255, Command::Pdea)],
            "every cycle: {every_cycle}"
        );
        assert!(violations.is_empty(), "{violations:?}");
    }
}

/// Closed rows: the read auto-precharges (RDA at 10), so the rank enters precharge power-down
/// (PDEP) 50 cycles later; the next read opens its row tXP after the exit.
#[test]
fn a_rank_with_every_bank_closed_enters_precharge_power_down() {
    let cfg = ddr3(50, "closed", "none");
    let (cmds, violations) = run_reads(&cfg, &[(0, 0), (200, 64)], false, 300);
    assert_eq!(
        cmds,
        vec![
            (1, Command::Act),
            (10, Command::Rda),
            (60, Command::Pdep),
            (201, Command::Pdxp),
            (205, Command::Act),
            (214, Command::Rda),
            (264, Command::Pdep)
        ]
    );
    assert!(violations.is_empty(), "{violations:?}");
}

/// A powered-down rank still refreshes at its rate: each due REF wakes it (exit, then the REF
/// tXP later, its open row closed first), and it powers down again after the refresh cycle.
#[test]
fn refresh_wakes_a_powered_down_rank_and_the_checker_finds_nothing() {
    let cfg = ddr3(64, "open", "all-bank");
    let t_refi = cfg.timing.tREFI;
    let (cmds, violations) = run_reads(&cfg, &[(0, 0)], false, 4 * t_refi);
    assert!(violations.is_empty(), "{violations:?}");
    let refs: Vec<u64> = cmds.iter().filter(|c| c.1 == Command::Ref).map(|c| c.0).collect();
    assert!(refs.len() >= 3, "{cmds:?}");
    for r in &refs {
        let exit = cmds.iter().rev().find(|c| c.0 <= *r && matches!(c.1, Command::Pdxa | Command::Pdxp)).expect("woken first");
        assert!(r - exit.0 >= cfg.timing.tXP, "{cmds:?}");
    }
    let entries = cmds.iter().filter(|c| c.1.enters_power_down()).count();
    assert!(entries > refs.len(), "it powers down between refreshes: {cmds:?}");
}

/// With power-down off (the default), nothing changes: no power-down command and no
/// power-down figures (the golden fingerprints pin the rest).
#[test]
fn power_down_is_off_by_default() {
    let cfg = machine("ddr3-1333", json!({"controller": {"row_policy": "open", "refresh": "none"}}));
    assert!(cfg.controller.power_down_after.is_none());
    let (cmds, _) = run_reads(&cfg, &[(0, 0), (200, 64)], false, 300);
    assert!(cmds.iter().all(|c| !c.1.is_power_down()), "{cmds:?}");
}

/// A run of `requests` random requests within the first MiB, four outstanding: each rank has
/// idle stretches.
fn report(cfg: &MemoryConfig, kind: GeneratorKind, requests: u64) -> Value {
    let opts = DramSimOptions { check: true, ..DramSimOptions::new(4) };
    let mut g = GeneratorSpec::new(kind, requests);
    g.footprint_bytes = Some(1 << 20);
    let (mem, totals) = run(cfg, &WorkloadSpec::Generate(g), opts);
    dram_report::report(cfg, &mem, &totals, opts)
}

/// A rank powered down spends IDD3P or IDD2P instead of IDD3N or IDD2N for those cycles, by
/// hand from each rank's figures; the run's commands are checked clean (refreshes included),
/// and each rank reports its power-downs.
#[test]
fn power_down_cycles_cost_the_power_down_currents() {
    let dram = json!({"density_gbit": 1, "ranks": 2});
    let on = machine("ddr3-1333", json!({"dram": dram, "controller": {"power_down_after": 32}}));
    let off = machine("ddr3-1333", json!({"dram": dram}));
    let e = CommandEnergy::new(on.device.power(1, 8).unwrap(), &on.timing, &on.org);
    assert!(e.has_power_down);
    let k = on.timing.tCK_ns * 8.0 / 1000.0;
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{what}: {a} against {b}");
    close(e.active_power_down_cycle, k * 1.5 * 32.5, "IDD3P per cycle");
    close(e.precharged_power_down_cycle, k * 1.5 * 27.5, "IDD2P per cycle");
    let v = report(&on, GeneratorKind::Random, 3000);
    assert_eq!(v["violations"], json!(0), "{}", v["violation_examples"]);
    let f = |x: &Value| x.as_f64().unwrap();
    let n = |x: &Value| x.as_u64().unwrap();
    let cycles = n(&v["dram_cycles"]);
    let ranks = v["channels"][0]["ranks"].as_array().unwrap();
    assert!(ranks.iter().any(|r| n(&r["power_downs"]) > 0), "{ranks:?}");
    for rank in ranks {
        let (active, precharged) = (n(&rank["power_down_cycles"]["active"]), n(&rank["power_down_cycles"]["precharged"]));
        let standby = n(&rank["active_standby_cycles"]);
        let re = &rank["energy"];
        let pd = active as f64 * e.active_power_down_cycle + precharged as f64 * e.precharged_power_down_cycle;
        close(f(&re["power_down_nj"]), pd, "power-down");
        close(f(&re["background_active_nj"]), (standby - active) as f64 * e.active_cycle, "active standby");
        close(f(&re["background_precharged_nj"]), (cycles - standby - precharged) as f64 * e.precharged_cycle, "precharged standby");
    }
    let v_off = report(&off, GeneratorKind::Random, 3000);
    assert!(v_off["channels"][0]["ranks"][0].get("power_downs").is_none());
}

#[test]
fn power_down_settings_it_cannot_run_are_refused_by_key() {
    // A device file without tXP and tCKE.
    let err = machine_error("ddr5-4800", json!({"controller": {"power_down_after": 32}}));
    assert!(err.contains("controller.power_down_after") && err.contains("tXP"), "{err}");
    let err = machine_error("ddr3-1333", json!({"controller": {"power_down_after": 0}}));
    assert!(err.contains("controller.power_down_after"), "{err}");
    // The lane controller does not run it; "auto" picks the general one.
    let err = machine_error("ddr3-1333", json!({"controller": {"power_down_after": 32, "implementation": "lanes"}}));
    assert!(err.contains("controller.implementation") && err.contains("power-down"), "{err}");
    // A device file without power-down currents runs, and says its energy is unavailable.
    let ddr4 = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/devices/ddr4-2400.toml"));
    let currents = ", idd2p = 25.0, idd3p = 37.0, ipp2p = 3.0, ipp3p = 3.0";
    assert!(ddr4.contains(currents));
    let path = std::env::temp_dir().join(format!("memtint-power-down-{}-ddr4.toml", std::process::id()));
    std::fs::write(&path, ddr4.replacen(currents, "", 1)).unwrap();
    let cfg = machine("ddr4-2400-2ch2r", json!({"dram": {"device": path}, "controller": {"power_down_after": 32}}));
    let v = report(&cfg, GeneratorKind::Random, 3000);
    let _ = std::fs::remove_file(&path);
    let why = v["energy"]["unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("idd2p") && why.contains("ddr4-2400"), "{}", v["energy"]);
}

/// DDR4-2400 8Gb x8 with power-down: its energy is available, and each rank's cycles powered
/// down cost what DRAMPower 6 charges them (core_calculation_DDR4.cpp: E_PDNA = V·IDD3P per
/// cycle, E_PDNP = V·IDD2P, on VDD and VPP, times tCK and the devices), from the datasheet's
/// currents by hand: per device IDD3P 37 mA, IDD2P 25 mA, IPP3N 3 mA on VPP in both.
#[test]
fn ddr4_power_down_costs_drampowers_power_down_energy() {
    let cfg = machine("ddr4-2400-2ch2r", json!({"controller": {"power_down_after": 32}}));
    let e = CommandEnergy::new(cfg.device.power(8, 8).unwrap(), &cfg.timing, &cfg.org);
    assert!(e.has_power_down);
    let k = cfg.timing.tCK_ns * 8.0 / 1000.0;
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{what}: {a} against {b}");
    close(e.active_power_down_cycle, k * (1.2 * 37.0 + 2.5 * 3.0), "E_PDNA per cycle");
    close(e.precharged_power_down_cycle, k * (1.2 * 25.0 + 2.5 * 3.0), "E_PDNP per cycle");
    let v = report(&cfg, GeneratorKind::Random, 3000);
    assert_eq!(v["violations"], json!(0), "{}", v["violation_examples"]);
    let f = |x: &Value| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}"));
    let n = |x: &Value| x.as_u64().unwrap();
    let (mut cycles, mut pd) = ([0u64; 2], 0.0);
    for channel in v["channels"].as_array().unwrap() {
        for rank in channel["ranks"].as_array().unwrap() {
            let (active, precharged) = (n(&rank["power_down_cycles"]["active"]), n(&rank["power_down_cycles"]["precharged"]));
            let want = active as f64 * e.active_power_down_cycle + precharged as f64 * e.precharged_power_down_cycle;
            close(f(&rank["energy"]["power_down_nj"]), want, "a rank's power-down energy");
            cycles[0] += active;
            cycles[1] += precharged;
            pd += want;
        }
    }
    assert!(cycles[0] > 0 && cycles[1] > 0, "both kinds of power-down: {cycles:?}");
    close(f(&v["energy"]["power_down_nj"]), pd, "the run's power-down energy");
    let parts = ["act_pre_nj", "read_nj", "write_nj", "refresh_nj", "background_active_nj", "background_precharged_nj", "power_down_nj"];
    close(f(&v["energy"]["total_nj"]), parts.iter().map(|k| f(&v["energy"][*k])).sum(), "total");
}
