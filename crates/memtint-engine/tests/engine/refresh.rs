//! Refresh schemes (controller/refresh/, dram/refresh_timing.rs): the timing each runs the
//! device with, what the checker verifies of their REFs, and the requests that meet a
//! refreshing rank (the Pan thesis's Table 4.7 metric) under each.

use crate::common::*;
use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::device::ns_to_cycles;
use memtint_engine::dram::{Command, DramAddress};
use memtint_engine::dram_sim::report as dram_report;
use memtint_engine::dram_sim::{simulate, DramSimOptions};
use memtint_engine::trace::{DramRequest, TraceSource, VecSource};
use serde_json::{json, Value};

fn refresh(manager: &str, params: Value) -> Value {
    let mut c = json!({"refresh": manager});
    c[manager] = params;
    json!({ "controller": c })
}

/// One request to `rank` at `arrival`, to the banks in turn, a new row each round.
fn to_rank(cfg: &MemoryConfig, rank: u32, i: u64, arrival: u64) -> DramRequest {
    let (groups, banks) = (cfg.org.bank_groups as u64, cfg.org.banks_per_group as u64);
    let bank = i % (groups * banks);
    let d = DramAddress {
        channel: 0,
        rank,
        bank_group: (bank / banks) as u32,
        bank: (bank % banks) as u32,
        row: (i / (groups * banks) % 1024) as u32,
        column: 0,
    };
    DramRequest { addr: cfg.mapping.encode(&d), is_write: false, arrival: Some(arrival) }
}

/// Reads to `rank` every `gap` cycles over [from, to).
fn stream(cfg: &MemoryConfig, rank: u32, from: u64, to: u64, gap: u64) -> Vec<DramRequest> {
    (from..to).step_by(gap as usize).enumerate().map(|(i, t)| to_rank(cfg, rank, i as u64, t)).collect()
}

/// The report of a run of timestamped `reqs`, checked.
fn report(cfg: &MemoryConfig, reqs: Vec<DramRequest>) -> Value {
    let mut opts = DramSimOptions::new(16);
    opts.check = true;
    let mut src = VecSource::new(reqs);
    let (mem, totals) = simulate(cfg, &mut src as &mut dyn TraceSource, true, opts).unwrap();
    assert_eq!(totals.violations, 0, "timing violations: {:#?}", totals.violation_examples);
    dram_report::report(cfg, &mem, &totals, opts)
}

fn met(v: &Value) -> u64 {
    v["refresh_interference"]["requests"].as_u64().unwrap()
}

#[test]
fn fine_granularity_modes_divide_trefi_and_use_the_shorter_trfc() {
    let base = machine("ddr4-2400", json!({}));
    for (g, trfc_ns) in [(1, 350.0), (2, 260.0), (4, 160.0)] {
        let cfg = machine("ddr4-2400", refresh("all-bank", json!({"granularity": g})));
        assert_eq!(cfg.timing.tREFI, base.timing.tREFI / g, "{g}x");
        assert_eq!(cfg.timing.tRFC, ns_to_cycles(trfc_ns, cfg.timing.tCK_ns), "{g}x: JEDEC tRFC{g} of 8 Gb");
        // Every REF the run issues keeps the mode's spacing (the checker's 9 x tREFI and tRFC).
        let v = report(&cfg, stream(&cfg, 0, 0, 200_000, 40));
        let refs = v["refreshes"].as_u64().unwrap();
        assert!(refs >= 200_000 / cfg.timing.tREFI, "{g}x: {refs} REFs in 200k cycles");
    }
    let e = machine_error("ddr3-1600", refresh("all-bank", json!({"granularity": 2})));
    assert!(e.contains("controller.all-bank.granularity") && e.contains("DDR3"), "{e}");
    let e = machine_error("ddr4-2400", refresh("all-bank", json!({"granularity": 3})));
    assert!(e.contains("granularity") && e.contains("got 3"), "{e}");
}

#[test]
fn refresh_density_takes_trfc_from_the_table_and_refuses_unknown_densities() {
    for (density, ns) in [(1, 110.0), (16, 550.0), (64, 2000.0)] {
        let cfg = machine("ddr3-1600", json!({"dram": {"refresh_density_gbit": density}}));
        assert_eq!(cfg.timing.tRFC, ns_to_cycles(ns, 1.25), "{density} Gb");
        assert_eq!(cfg.org.density_gbit, 8, "the organisation stays the device's");
    }
    let e = machine_error("ddr3-1600", json!({"dram": {"refresh_density_gbit": 128}}));
    assert!(e.contains("dram.refresh_density_gbit") && e.contains("128 Gb"), "{e}");
    let e = machine_error("ddr2-800", json!({"dram": {"refresh_density_gbit": 2}}));
    assert!(e.contains("dram.refresh_density_gbit") && e.contains("DDR2"), "{e}");
}

/// The thesis's invariant (b)2: under auto-refresh requests meet refreshing ranks, more as tRFC
/// grows with density; none without refresh.
#[test]
fn interference_under_auto_refresh_is_positive_and_grows_with_density() {
    let mut last = 0;
    for density in [1, 2, 4, 8, 16, 32, 64] {
        let cfg = machine("ddr3-1600", json!({"dram": {"refresh_density_gbit": density}}));
        let v = report(&cfg, stream(&cfg, 0, 0, 300_000, 25));
        let n = met(&v);
        assert!(n > 0 && n >= last, "{density} Gb: {n} requests met refresh, {last} at the density before");
        last = n;
    }
    let cfg = machine("ddr3-1600", json!({"controller": {"refresh": "none"}}));
    assert_eq!(met(&report(&cfg, stream(&cfg, 0, 0, 300_000, 25))), 0);
}

/// Burst refresh a rank at a time (Colored Refresh's schedule): traffic that avoids the rank
/// being refreshed never meets a refresh, and each rank gets its whole window's REFs.
#[test]
fn traffic_that_avoids_the_refreshing_rank_never_meets_refresh() {
    let params = json!({"groups": "each", "retention_ms": 0.5, "refs_per_window": 64, "jedec": false});
    let cfg = machine("ddr4-2400-2ch2r", refresh("burst", params));
    let window = (0.5e6 / cfg.timing.tCK_ns).round() as u64;
    let half = window / 2;
    // Rank 0 bursts at the start of each window, rank 1 half a window later; each burst takes
    // 64 x tRFC, so use the other rank from each burst's start to well after its end.
    let mut reqs = Vec::new();
    for w in 0..3 {
        reqs.extend(stream(&cfg, 1, w * window, w * window + half - 2000, 30));
        reqs.extend(stream(&cfg, 0, w * window + half, (w + 1) * window - 2000, 30));
    }
    let v = report(&cfg, reqs.clone());
    assert_eq!(met(&v), 0, "{}", v["refresh_interference"]);
    for ch in v["channels"].as_array().unwrap() {
        for r in ch["ranks"].as_array().unwrap() {
            let refs = r["refreshes"].as_u64().unwrap();
            assert!(refs >= 3 * 64 - 64, "each rank is refreshed in every window it reaches: {refs}");
        }
    }
    // Requests to rank 0 during its first burst (from cycle 0) meet it, all of them (fewer
    // than the read queue holds: one held outside a full queue enters after the burst).
    let v = report(&cfg, stream(&cfg, 0, 0, 600, 30));
    assert_eq!(met(&v), v["requests"].as_u64().unwrap(), "{}", v["refresh_interference"]);
    // The same traffic under all-bank refresh meets it.
    let auto = machine("ddr4-2400-2ch2r", json!({}));
    assert!(met(&report(&auto, reqs)) > 0);
}

/// Postponement: a REF due while its rank has requests queued waits (up to 8 owed), so a busy
/// spell of a few tREFI meets no refresh, and the owed REFs catch up once the rank is idle.
#[test]
fn postponed_refreshes_wait_for_an_idle_rank_and_catch_up() {
    let plain = machine("ddr4-2400", json!({}));
    let t_refi = plain.timing.tREFI;
    // Requests for 2 tREFI, faster than the rank serves them, so its queue stays full for about
    // 4 tREFI (under the 7.5 tREFI postponing allows), then quiet (a few late requests, between
    // two REFs, keep the run going to 12.5 tREFI).
    let mut reqs = stream(&plain, 0, 0, 2 * t_refi, 3);
    let late = 12 * t_refi + t_refi / 2;
    reqs.extend(stream(&plain, 0, late, late + 100, 50));
    let busy = |v: &Value| met(v);
    let v0 = report(&plain, reqs.clone());
    let postponing = machine("ddr4-2400", refresh("all-bank", json!({"postpone": 8})));
    let v8 = report(&postponing, reqs);
    assert!(busy(&v0) > 0, "on-time refresh interrupts the busy spell");
    assert_eq!(busy(&v8), 0, "postponed: {}", v8["refresh_interference"]);
    assert_eq!(v8["refreshes"], v0["refreshes"], "owed REFs catch up");
}

/// Pull-in: a rank idle for 10 tREFI runs up to 8 REFs ahead, so a busy spell of 3 tREFI (its
/// queue full for longer) after
/// it meets no refresh, where on-time refresh interrupts it; the run's REFs stay within 8 per
/// rank of on-time refresh's, and the checker (no two REFs over 9 tREFI apart, none more than 8
/// ahead of the schedule) passes.
#[test]
fn pulled_in_refreshes_clear_the_way_for_a_busy_spell() {
    let plain = machine("ddr4-2400", json!({}));
    let t_refi = plain.timing.tREFI;
    let mut reqs = stream(&plain, 0, 10 * t_refi, 13 * t_refi, 4);
    // A few late requests, half a tREFI after a REF, keep the run going to 25 tREFI.
    let late = 25 * t_refi + t_refi / 2;
    reqs.extend(stream(&plain, 0, late, late + 100, 50));
    let v0 = report(&plain, reqs.clone());
    let pulling = machine("ddr4-2400", refresh("all-bank", json!({"pull_in": 8})));
    let v8 = report(&pulling, reqs);
    assert!(met(&v0) > 0, "on-time refresh interrupts the busy spell");
    assert_eq!(
        met(&v8),
        0,
        "pulled in: {} against {} ({} and {} REFs)",
        v8["refresh_interference"],
        v0["refresh_interference"],
        v8["refreshes"],
        v0["refreshes"]
    );
    let (r0, r8) = (v0["refreshes"].as_i64().unwrap(), v8["refreshes"].as_i64().unwrap());
    let ranks = plain.org.ranks as i64;
    assert!((r8 - r0).abs() <= 8 * ranks, "{r8} REFs against {r0}");
    // One or the other: JEDEC bounds their net count.
    let both = machine_error("ddr4-2400", refresh("all-bank", json!({"pull_in": 2, "postpone": 2})));
    assert!(both.contains("pull_in"), "{both}");
    assert!(machine_error("ddr4-2400", refresh("all-bank", json!({"pull_in": 9}))).contains("at most 8"));
}

/// Bad burst settings are refused naming the key.
#[test]
fn burst_settings_are_checked() {
    // Refused when the machine is read (the parameters) or when its channels are built.
    let cfg = |p: Value| {
        let built = memtint_engine::config::MachineConfig::load("ddr4-2400-2ch2r")
            .and_then(|m| m.with_overrides(&refresh("burst", p)))
            .and_then(|m| MemoryConfig::resolve(&m))
            .and_then(|cfg| memtint_engine::memory_system::MemorySystem::new(&cfg));
        built.err().map(|e| e.to_string()).unwrap_or_default()
    };
    let e = cfg(json!({"refs_per_window": 1024}));
    assert!(e.contains("refs_per_window") && e.contains("jedec = false"), "{e}");
    let e = cfg(json!({"groups": [[0], [3]]}));
    assert!(e.contains("controller.burst.groups") && e.contains("rank 3"), "{e}");
    let e = cfg(json!({"groups": [[0]]}));
    assert!(e.contains("rank 1 is in no group"), "{e}");
    let e = cfg(json!({"groups": "odd"}));
    assert!(e.contains("groups"), "{e}");
    let e = cfg(json!({"retention_ms": 1.0}));
    assert!(e.contains("refs_per_window") && e.contains("window"), "{e}");
}

/// The checker's burst rule: REF i + refs within the window (plus slack) of REF i, and the
/// first within that of cycle 0.
#[test]
fn the_checker_holds_bursts_to_their_retention_window() {
    use memtint_engine::checker::TimingChecker;
    use memtint_engine::dram::refresh_timing::RefreshObligation;
    use memtint_engine::dram::CommandRecord;
    let cfg = machine("ddr4-2400", json!({}));
    let t = &cfg.timing;
    let slack = 9 * t.tREFI;
    let window = 100 * t.tRFC;
    let checker = || TimingChecker::new(cfg.device.standard, &cfg.org, t).with_refresh(RefreshObligation::Retention { window, refs: 4 });
    let rec = |cycle| CommandRecord { cycle, command: Command::Ref, addr: DramAddress::default() };
    // Four REFs back to back every window: legal.
    let mut c = checker();
    for w in 0..3 {
        for i in 0..4 {
            assert!(c.observe(&rec(w * window + i * t.tRFC)).is_empty(), "window {w} REF {i}");
        }
    }
    // The next burst late by more than the slack: "tREFW".
    let v = c.observe(&rec(3 * window + slack + 1));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].constraint, "tREFW");
    // No first burst within the window and slack.
    let mut c = checker();
    let v = c.observe(&rec(window + slack + 1));
    assert_eq!(v[0].constraint, "tREFW", "{v:?}");
}

/// Distributed refresh: at most 8 REFs of a rank ahead of one per tREFI (JEDEC's pull-in
/// limit); the tenth REF back to back at the start is one too many.
#[test]
fn the_checker_holds_pulled_in_refreshes_to_eight_ahead() {
    use memtint_engine::checker::TimingChecker;
    use memtint_engine::dram::refresh_timing::RefreshObligation;
    use memtint_engine::dram::CommandRecord;
    let cfg = machine("ddr4-2400", json!({}));
    let t = &cfg.timing;
    let mut c = TimingChecker::new(cfg.device.standard, &cfg.org, t).with_refresh(RefreshObligation::Interval);
    let rec = |cycle| CommandRecord { cycle, command: Command::Ref, addr: DramAddress::default() };
    for i in 0..9 {
        assert!(c.observe(&rec(i * t.tRFC)).is_empty(), "REF {i}: the first and 8 pulled in");
    }
    let v = c.observe(&rec(9 * t.tRFC));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].constraint, "REF pull-in");
    // Two tREFI on, the eleventh REF is within the limit again.
    assert!(c.observe(&rec(2 * t.tREFI)).is_empty());
}

/// Reads to random banks and rows of rank 0 every `gap` cycles over [0, to) (a quarter writes).
fn random_reads(cfg: &MemoryConfig, to: u64, gap: u64, seed: u64) -> Vec<DramRequest> {
    random_to_ranks(cfg, to, gap, seed, 1)
}

/// `random_reads` over the first `ranks` ranks, each request's rank random too.
fn random_to_ranks(cfg: &MemoryConfig, to: u64, gap: u64, seed: u64, ranks: u32) -> Vec<DramRequest> {
    let mut x = seed | 1;
    let banks = (cfg.org.bank_groups * cfg.org.banks_per_group) as u64;
    (0..to)
        .step_by(gap as usize)
        .map(|t| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bank = x % banks;
            let d = DramAddress {
                channel: 0,
                rank: (x >> 50) as u32 % ranks,
                bank_group: (bank / cfg.org.banks_per_group as u64) as u32,
                bank: (bank % cfg.org.banks_per_group as u64) as u32,
                row: (x >> 8) as u32 % 4096,
                column: ((x >> 24) as u32 % (cfg.org.columns / cfg.org.burst_length)) * cfg.org.burst_length,
            };
            DramRequest { addr: cfg.mapping.encode(&d), is_write: x >> 40 & 3 == 0, arrival: Some(t) }
        })
        .collect()
}

/// LPDDR4 per-bank refresh: one REFPB per bank every tREFI (the checker's per-bank obligation
/// and its REFPB rules hold), no all-bank REF, and a bank waiting for its REFPB holds back only
/// its own requests, so requests meet refresh less often than under all-bank refresh and wait
/// less on average; with no refresh at all they wait least.
#[test]
fn per_bank_refresh_refreshes_each_bank_every_trefi_and_interferes_less() {
    let run = |manager: &str| {
        let cfg = machine("lpddr4-3200", json!({"controller": {"refresh": manager}}));
        let v = report(&cfg, random_reads(&cfg, 400_000, 40, 7));
        (cfg, v)
    };
    let (cfg, per_bank) = run("per-bank");
    let t_refi = cfg.timing.tREFI;
    assert_eq!(per_bank["refreshes"], 0);
    let cycles = per_bank["dram_cycles"].as_u64().unwrap();
    let banks = (cfg.org.channels * cfg.org.banks_per_rank()) as u64;
    let refpb = per_bank["bank_refreshes"].as_u64().unwrap();
    assert!(refpb >= banks * (cycles / t_refi - 1) && refpb <= banks * (cycles / t_refi + 1), "{refpb} REFPB in {cycles} cycles");
    for r in per_bank["channels"][0]["ranks"][0]["banks"].as_array().unwrap() {
        let n = r["commands"]["REFPB"].as_u64().unwrap();
        assert!(n + 1 >= cycles / t_refi, "bank {}: {n} REFPB", r["bank"]);
    }
    let (_, all_bank) = run("all-bank");
    let (_, none) = run("none");
    assert!(all_bank["refreshes"].as_u64().unwrap() > 0 && all_bank["bank_refreshes"] == 0);
    let share = |v: &Value| v["refresh_interference"]["share"].as_f64().unwrap();
    let mean = |v: &Value| v["read_latency"]["mean"].as_f64().unwrap();
    // The figures docs/refresh.md quotes ("Per-bank refresh"): `--nocapture` prints them.
    println!(
        "lpddr4-3200, a read every 40 cycles to rank 0: met refresh all-bank {:.1} % per-bank {:.1} %; mean read latency all-bank {:.0} per-bank {:.0} none {:.0} cycles",
        100.0 * share(&all_bank),
        100.0 * share(&per_bank),
        mean(&all_bank),
        mean(&per_bank),
        mean(&none)
    );
    assert!(share(&per_bank) < share(&all_bank), "met refresh: per-bank {} all-bank {}", share(&per_bank), share(&all_bank));
    assert!(mean(&none) < mean(&per_bank) && mean(&per_bank) < mean(&all_bank), "{} {} {}", mean(&none), mean(&per_bank), mean(&all_bank));
}

/// Per-bank refresh on a device without REFPB is refused by name, and LPDDR4's per-bank
/// timing keys belong to it alone.
#[test]
fn per_bank_refresh_needs_a_device_with_refpb() {
    for device in ["ddr4-2400", "ddr3-1600"] {
        let e = machine_error(device, json!({"controller": {"refresh": "per-bank"}}));
        assert!(e.contains("controller.refresh") && e.contains("per-bank") && e.contains("REFPB"), "{e}");
    }
    let e = machine_error("lpddr4-3200", json!({"controller": {"refresh": "per-bank", "per-bank": {"postpone": 9}}}));
    assert!(e.contains("per-bank.postpone") && e.contains("got 9"), "{e}");
}

/// Random reads and writes over every bank of rank 0 on all channels' first rank, as
/// `random_reads`, spread over the channels too.
fn random_over_channels(cfg: &MemoryConfig, to: u64, gap: u64, seed: u64) -> Vec<DramRequest> {
    let mut reqs = random_reads(cfg, to, gap, seed);
    for (i, r) in reqs.iter_mut().enumerate() {
        let mut d = cfg.mapping.decode(r.addr);
        d.channel = (i as u32) % cfg.org.channels;
        r.addr = cfg.mapping.encode(&d);
    }
    reqs
}

/// DDR5 same-bank refresh: one REFSB per bank index every tREFI / 2 (fine-granularity mode),
/// each refreshing that index in all eight bank groups; the checker's REFSB rules and per-bank
/// obligation hold; requests wait less than under all-bank refresh (they meet a refresh about
/// as often, since a quarter of the banks refresh four times as often, but for less than half
/// as long), more than with none.
#[test]
fn same_bank_refresh_refreshes_each_bank_index_every_trefi2_and_interferes_less() {
    let run = |manager: &str| {
        let cfg = machine("ddr5-4800", json!({"controller": {"refresh": manager}}));
        let v = report(&cfg, random_over_channels(&cfg, 600_000, 30, 11));
        (cfg, v)
    };
    let (cfg, same_bank) = run("same-bank");
    let device_trefi = machine("ddr5-4800", json!({})).timing.tREFI;
    assert_eq!(cfg.timing.tREFI, device_trefi / 2, "fine-granularity tREFI2");
    assert_eq!(same_bank["refreshes"], 0);
    let cycles = same_bank["dram_cycles"].as_u64().unwrap();
    let indices = (cfg.org.channels * cfg.org.banks_per_group) as u64;
    let refsb = same_bank["commands"]["REFSB"].as_u64().unwrap();
    let periods = cycles / cfg.timing.tREFI;
    assert!(refsb + indices >= indices * periods && refsb <= indices * (periods + 1), "{refsb} REFSB in {cycles} cycles");
    let (_, all_bank) = run("all-bank");
    let (_, none) = run("none");
    let mean = |v: &Value| v["read_latency"]["mean"].as_f64().unwrap();
    let share = |v: &Value| v["refresh_interference"]["share"].as_f64().unwrap();
    // The figures docs/refresh.md quotes ("Same-bank refresh"): `--nocapture` prints them.
    println!(
        "ddr5-4800, a request every 30 cycles over both subchannels: mean read latency all-bank {:.1} same-bank {:.1} none {:.1} cycles; met refresh all-bank {:.1} % same-bank {:.1} %",
        mean(&all_bank),
        mean(&same_bank),
        mean(&none),
        100.0 * share(&all_bank),
        100.0 * share(&same_bank)
    );
    assert!(
        mean(&none) < mean(&same_bank) && mean(&same_bank) < mean(&all_bank),
        "mean read latency: none {} same-bank {} all-bank {}",
        mean(&none),
        mean(&same_bank),
        mean(&all_bank)
    );
    for device in ["lpddr4-3200", "ddr4-2400"] {
        let e = machine_error(device, json!({"controller": {"refresh": "same-bank"}}));
        assert!(e.contains("controller.refresh") && e.contains("same-bank") && e.contains("REFSB"), "{e}");
    }
    let e = machine_error("ddr5-4800", json!({"controller": {"refresh": "per-bank"}}));
    assert!(e.contains("REFPB") && e.contains("\"same-bank\""), "{e}");
}

/// `controller.refresh_holds`: while a rank's REF waits to issue, "target" holds back only that
/// rank and keeps opening rows in the other, "channel" (Ramulator 2.1's rule) opens no row in any
/// rank until the REF issues. On both controller implementations, checked, with the same
/// commands from each.
#[test]
fn a_refresh_holding_the_channel_opens_no_row_in_any_rank_until_its_ref() {
    // ACTs of any rank between a REF falling due (ranks staggered: rank r at tREFI (r + 1) / 2,
    // then every tREFI) and its issue; and the REFs.
    let acts_while_waiting = |holds: &str, implementation: &str| {
        let over = json!({"dram": {"ranks": 2}, "controller": {"refresh_holds": holds, "implementation": implementation}});
        let cfg = machine("ddr4-2400", over);
        let mut opts = DramSimOptions::new(64);
        (opts.check, opts.keep_commands) = (true, true);
        let mut src = VecSource::new(random_to_ranks(&cfg, 200_000, 3, 11, cfg.org.ranks));
        let (mem, totals) = simulate(&cfg, &mut src as &mut dyn TraceSource, true, opts).unwrap();
        assert_eq!(totals.violations, 0, "{holds}: {:#?}", totals.violation_examples);
        let v = dram_report::report(&cfg, &mem, &totals, opts);
        assert_eq!(v["config"]["refresh_holds"], holds);
        let t_refi = cfg.timing.tREFI;
        let cmds = &totals.commands;
        let (mut acts, mut refs) = (0, 0);
        for (i, c) in cmds.iter().enumerate().filter(|(_, c)| c.command == Command::Ref) {
            refs += 1;
            let first = t_refi * (c.addr.rank as u64 + 1) / 2;
            let due = first + (c.cycle - first) / t_refi * t_refi;
            acts += cmds[..i].iter().rev().take_while(|o| o.cycle >= due).filter(|o| o.command == Command::Act).count();
        }
        (acts, refs, cmds.clone())
    };
    let (acts, refs, general) = acts_while_waiting("channel", "general");
    assert!(refs > 20, "{refs} REFs in 200k cycles of two ranks");
    assert_eq!(acts, 0, "ACTs while a REF waited, holding the channel");
    let (acts, _, lanes) = acts_while_waiting("channel", "lanes");
    assert_eq!(acts, 0);
    assert!(general == lanes, "the lane controller issues what the general one does");
    let (acts, _, _) = acts_while_waiting("target", "general");
    assert!(acts > 0, "holding the rank only, the other rank opens rows meanwhile");
    let e = machine_error("ddr4-2400", json!({"controller": {"refresh_holds": "rank"}}));
    assert!(e.contains("controller.refresh_holds") && e.contains("'rank'") && e.contains("target, channel"), "{e}");
}
