//! Analytic checks of the DRAM engine: idle latency, row-hit pacing, peak bandwidth, conflict
//! pacing, tFAW and refresh cost, each exact where the analysis is exact.

use crate::common::*;
use memtint_engine::dram::{Command, DramAddress};
use memtint_engine::dram_sim::DramSimOptions;
use memtint_engine::trace::GeneratorKind;
use serde_json::json;

const STANDARDS: &[&str] = &["ddr2-800", "ddr3-1333", "ddr3-1600", "ddr4-2400"];

#[test]
fn idle_read_latency_is_trcd_plus_tcl_plus_burst_plus_frontend() {
    for m in STANDARDS {
        let cfg = machine(m, json!({"controller": {"refresh": "none"}}));
        let t = &cfg.timing;
        let (mem, totals) = run_requests(&cfg, vec![read(0x4000)], DramSimOptions::new(1));
        let lat = mem.channels()[0].stats().read_latency.max();
        let expected = cfg.controller.frontend_latency + t.tRCD + t.CL + t.tBL;
        assert_eq!(lat, expected, "{m}: tRCD {} + CL {} + tBL {} + front end {}", t.tRCD, t.CL, t.tBL, cfg.controller.frontend_latency);
        assert_eq!(totals.requests, 1);
    }
}

#[test]
fn idle_row_hit_latency_is_tcl_plus_burst_plus_frontend() {
    for m in STANDARDS {
        let cfg = machine(m, json!({"controller": {"refresh": "none"}}));
        let t = &cfg.timing;
        // Second read to the same row, issued after the first completed (outstanding 1).
        let (mem, _) = run_requests(&cfg, vec![read(0), read(64)], DramSimOptions::new(1));
        let h = &mem.channels()[0].stats().read_latency;
        assert_eq!(h.quantile(0.0), cfg.controller.frontend_latency + t.CL + t.tBL, "{m}");
    }
}

/// One request of `kind` to every column of row 0 of bank 0, 32 in flight: the number of
/// columns, the cycles of the `cmd` commands, and the run's totals.
fn one_row_columns(
    cfg: &memtint_engine::config::MemoryConfig,
    kind: fn(u64) -> memtint_engine::trace::DramRequest,
    cmd: Command,
) -> (u32, Vec<u64>, memtint_engine::dram_sim::RunTotals) {
    let cols = cfg.org.columns / cfg.org.burst_length;
    let reqs =
        (0..cols).map(|c| kind(cfg.mapping.encode(&DramAddress { column: c * cfg.org.burst_length, ..Default::default() }))).collect();
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(32) };
    let (_, totals) = run_requests(cfg, reqs, opts);
    let cycles = totals.commands.iter().filter(|c| c.command == cmd).map(|c| c.cycle).collect();
    (cols, cycles, totals)
}

/// Reads to one row of one bank: after the ACT, column commands every tCCD (tCCD_L on DDR4,
/// as they share a bank group).
#[test]
fn row_hits_to_one_bank_issue_every_tccd() {
    for m in STANDARDS {
        let cfg = machine(m, json!({"controller": {"refresh": "none"}}));
        let (cols, rd, totals) = one_row_columns(&cfg, read, Command::Rd);
        assert_eq!(rd.len() as u32, cols);
        let acts = totals.commands.iter().filter(|c| c.command == Command::Act).count();
        assert_eq!(acts, 1, "{m}: one row, one activation");
        for w in rd.windows(2).skip(1) {
            assert_eq!(w[1] - w[0], cfg.timing.tCCD_L, "{m}: row hits must be paced by tCCD");
        }
    }
}

/// Writes to one open row are paced by the write-to-write distance of a bank group: DDR5's
/// tCCD_L_WR (four times tCCD_L on ddr5-4800), tCCD_L on the other standards.
#[test]
fn write_hits_to_one_bank_issue_every_tccd_l_wr() {
    for &m in STANDARDS.iter().chain(&["ddr5-4800"]) {
        let cfg = machine(m, json!({"controller": {"refresh": "none"}}));
        let (cols, wr, _) = one_row_columns(&cfg, write, Command::Wr);
        assert_eq!(wr.len() as u32, cols, "{m}");
        let want = if cfg.device.standard == memtint_engine::dram::Standard::Ddr5 { 48 } else { cfg.timing.tCCD_L };
        assert_eq!(cfg.timing.tCCD_L_WR, want, "{m}");
        let gaps: Vec<u64> = wr.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g >= want), "{m}: a write inside tCCD_L_WR: {gaps:?}");
        let paced = gaps.iter().filter(|&&g| g == want).count();
        assert!(paced * 10 >= gaps.len() * 9, "{m}: writes not paced by {want}: {gaps:?}");
    }
}

/// DDR5's two-cycle commands and wider read-to-write turnaround, in the controller's stream
/// (the checker proves no command comes early; this shows the limits are reached, not overshot):
/// random traffic, 70 % reads, on one channel of ddr5-4800.
#[test]
fn ddr5_long_commands_take_two_bus_cycles_and_reads_turn_to_writes_in_14() {
    let cfg = machine("ddr5-4800", json!({"controller": {"refresh": "none"}}));
    let mut g = memtint_engine::trace::GeneratorSpec::new(GeneratorKind::Random, 20_000);
    g.read_fraction = Some(0.7);
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(64) };
    let (_, totals) = run(&cfg, &memtint_engine::dram_sim::WorkloadSpec::Generate(g), opts);
    let cmds: Vec<_> = totals.commands.iter().filter(|c| c.addr.channel == 0).collect();
    let long = |c: Command| matches!(c, Command::Act | Command::Rd | Command::Rda | Command::Wr | Command::Wra);
    let after_long: Vec<u64> = cmds.windows(2).filter(|w| long(w[0].command)).map(|w| w[1].cycle - w[0].cycle).collect();
    assert_eq!(after_long.iter().min(), Some(&2), "the command after an ACT, RD or WR");
    // Each write's distance from the last read before it (one rank here).
    let mut last_read = None;
    let mut rank_rd_wr = vec![];
    for c in &cmds {
        match c.command {
            Command::Rd | Command::Rda => last_read = Some(c.cycle),
            Command::Wr | Command::Wra => rank_rd_wr.extend(last_read.map(|r| c.cycle - r)),
            _ => {}
        }
    }
    assert_eq!(cfg.org.ranks, 1);
    let t = &cfg.timing;
    assert_eq!((t.CL + t.tBL + 4 - t.CWL, rank_rd_wr.iter().min()), (14, Some(&14)), "RD -> WR on one rank");
}

/// DDR5 with two ranks: a write to one rank after a read of the other keeps the read-to-write
/// turnaround's four idle bus cycles, CL + tBL + 4 - CWL = 40 + 8 + 4 - 38 = 14 nCK (not
/// CL + tBL + tRTRS - CWL = 12), and a rank's precharge commands are tPPD = 2 nCK apart (a
/// PRE holds the command bus one cycle only). Random traffic, 70 % reads, one channel: the
/// checker proves nothing comes earlier, this that both limits are reached.
#[test]
fn ddr5_rank_switches_to_writes_take_14_and_precharges_of_a_rank_2() {
    let cfg = machine("ddr5-4800", json!({"dram": {"ranks": 2, "channels": 1}, "controller": {"refresh": "none"}}));
    let mut g = memtint_engine::trace::GeneratorSpec::new(GeneratorKind::Random, 20_000);
    g.read_fraction = Some(0.7);
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(64) };
    let (_, totals) = run(&cfg, &memtint_engine::dram_sim::WorkloadSpec::Generate(g), opts);
    let (mut last_read, mut last_pre) = ([None; 2], [None; 2]);
    let (mut switch_rd_wr, mut pre_pre) = (vec![], vec![]);
    for c in &totals.commands {
        let r = c.addr.rank as usize;
        match c.command {
            Command::Rd | Command::Rda => last_read[r] = Some(c.cycle),
            Command::Wr | Command::Wra => switch_rd_wr.extend(last_read[1 - r].map(|t| c.cycle - t)),
            Command::Pre | Command::Prea => {
                pre_pre.extend(last_pre[r].map(|t| c.cycle - t));
                last_pre[r] = Some(c.cycle);
            }
            _ => {}
        }
    }
    let t = &cfg.timing;
    assert_eq!((t.CL + t.tBL + 4 - t.CWL, switch_rd_wr.iter().min()), (14, Some(&14)), "RD -> WR of the other rank");
    assert_eq!((t.tPPD, pre_pre.iter().min()), (2, Some(&2)), "PRE/PREA -> PRE/PREA of a rank");
}

/// A read to row 0 of one bank, then one to another row of that bank, then 40 more row-0 reads
/// arriving every 6 cycles: how many row-0 reads each age-ordered scheduler serves before the
/// conflicting request's PRE, on both controller implementations. FCFS serves the bank in
/// arrival order (one); FR-FCFS-Cap lets the row serve `cap` column commands since its ACT
/// (4); FR-FCFS serves every hit first (41). Offering the PRE beside the ready hits let the
/// hits pass it without end under FCFS and the cap alike: each read delays the PRE by tRTP.
#[test]
fn an_older_conflict_waits_for_no_hit_under_fcfs_and_for_cap_hits_under_fr_fcfs_cap() {
    for implementation in ["general", "lanes"] {
        for (scheduler, served) in [("fcfs", 1), ("fr-fcfs-cap", 4), ("fr-fcfs", 41)] {
            let cfg = machine(
                "ddr4-2400",
                json!({"controller": {"refresh": "none", "scheduler": scheduler, "implementation": implementation,
                    "fr-fcfs-cap": {"cap": 4}}}),
            );
            let at = |row: u32, column: u32| {
                cfg.mapping.encode(&DramAddress { row, column: column * cfg.org.burst_length, ..Default::default() })
            };
            let mut reqs = vec![(at(0, 0), 0), (at(1, 0), 1)];
            reqs.extend((0..40).map(|k| (at(0, 1 + k), 2 + 6 * k as u64)));
            let reqs =
                reqs.into_iter().map(|(addr, t)| memtint_engine::trace::DramRequest { addr, is_write: false, arrival: Some(t) }).collect();
            let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(64) };
            let (_, totals) = run_requests(&cfg, reqs, opts);
            let before_pre = totals.commands.iter().take_while(|c| c.command != Command::Pre).filter(|c| c.command == Command::Rd).count();
            assert_eq!(before_pre, served, "{scheduler} on the {implementation} controller");
        }
    }
}

#[test]
fn streaming_over_many_banks_reaches_90_percent_of_peak() {
    for m in ["ddr3-1333", "ddr3-1600", "ddr4-2400", "ddr4-2400-2ch2r", "i7-860"] {
        let cfg = machine(m, json!({}));
        let w = generated(GeneratorKind::Stream, 200_000, 1);
        let opts = DramSimOptions::new(64);
        let (mem, totals) = run(&cfg, &w, opts);
        let s = memtint_engine::dram_sim::report::report(&cfg, &mem, &totals, opts);
        let frac = s["bandwidth_gbps"]["total"].as_f64().unwrap() / s["peak_bandwidth_gbps"].as_f64().unwrap();
        assert!(frac >= 0.90, "{m}: stream reached {:.1} % of peak", frac * 100.0);
    }
}

/// Every access a row conflict on one bank: ACT to ACT is exactly tRC (tRC >= tRAS + tRP and
/// >= tRCD + tRTP + tRP on these bins, so tRC binds).
#[test]
fn row_conflicts_on_one_bank_are_paced_by_trc() {
    for m in STANDARDS {
        let cfg = machine(m, json!({"controller": {"refresh": "none"}}));
        let t = &cfg.timing;
        assert!(t.tRC >= t.tRAS + t.tRP && t.tRC >= t.tRCD + t.tRTP + t.tRP);
        let w = generated(GeneratorKind::Conflict, 2_000, 5);
        let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(16) };
        let (_, totals) = run(&cfg, &w, opts);
        let acts: Vec<u64> = totals.commands.iter().filter(|c| c.command == Command::Act).map(|c| c.cycle).collect();
        assert!(acts.len() >= 1_999, "{m}: {} activations", acts.len());
        for w in acts.windows(2) {
            assert_eq!(w[1] - w[0], t.tRC, "{m}");
        }
    }
}

#[test]
fn activations_never_exceed_four_per_tfaw_window() {
    for m in ["ddr3-1333", "ddr4-2400", "ddr4-2400-2ch2r"] {
        let cfg = machine(m, json!({}));
        let w = generated(GeneratorKind::Random, 50_000, 11);
        let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(64) };
        let (_, totals) = run(&cfg, &w, opts);
        let mut per_rank: std::collections::BTreeMap<(u32, u32), Vec<u64>> = Default::default();
        for c in totals.commands.iter().filter(|c| c.command == Command::Act) {
            per_rank.entry((c.addr.channel, c.addr.rank)).or_default().push(c.cycle);
        }
        let mut tight = 0;
        for acts in per_rank.values() {
            for w in acts.windows(5) {
                assert!(w[4] - w[0] >= cfg.timing.tFAW, "{m}: 5 ACTs within {} cycles", w[4] - w[0]);
                tight += (w[4] - w[0] == cfg.timing.tFAW) as u32;
            }
        }
        // Random traffic on one rank is tFAW-bound: the window must actually be reached.
        assert!(tight > 0, "{m}: tFAW never binding, test proves nothing");
    }
}

/// A throttled device (a column-command window, configs/devices/ddr4-2400-throttled-*): a stream
/// gets the throttle's share of the data bus, never more than its commands in any window, and
/// the window binds; a lone read costs what it costs on the unthrottled device.
#[test]
fn a_column_window_caps_a_stream_at_its_share_and_leaves_a_lone_read_alone() {
    for (k, device) in [(2.0, "ddr4-2400-throttled-2x"), (10.0, "ddr4-2400-throttled-10x")] {
        let cfg = machine("ddr4-2400", json!({"dram": {"device": device}}));
        let t = &cfg.timing;
        let (n, window) = (t.col_window_commands as usize, t.col_window);
        let w = generated(GeneratorKind::Stream, 40_000, 1);
        let opts = DramSimOptions { keep_commands: true, check: true, ..DramSimOptions::new(64) };
        let (mem, totals) = run(&cfg, &w, opts);
        assert_eq!(totals.violations, 0, "{device}");
        let s = memtint_engine::dram_sim::report::report(&cfg, &mem, &totals, opts);
        let frac = s["bandwidth_gbps"]["total"].as_f64().unwrap() / (19.2 / k);
        assert!((0.9..=1.01).contains(&frac), "{device}: a stream at {:.2} of its share", frac);
        let cols: Vec<u64> = totals.commands.iter().filter(|c| c.command.is_column()).map(|c| c.cycle).collect();
        let mut tight = 0;
        for w in cols.windows(n + 1) {
            assert!(w[n] - w[0] >= window, "{device}: {} column commands within {} cycles", n + 1, w[n] - w[0]);
            tight += (w[n] - w[0] == window) as u32;
        }
        assert!(tight > 0, "{device}: the window never binds, the test proves nothing");
        let quiet = machine("ddr4-2400", json!({"dram": {"device": device}, "controller": {"refresh": "none"}}));
        let (mem, _) = run_requests(&quiet, vec![read(0x4000)], DramSimOptions::new(1));
        let expected = quiet.controller.frontend_latency + t.tRCD + t.CL + t.tBL;
        assert_eq!(mem.channels()[0].stats().read_latency.max(), expected, "{device}: a lone read");
    }
}

/// A saturating stream on one rank loses tRFC / tREFI of its bandwidth to refresh, plus the
/// re-activation after each refresh (tRP + tRCD per tREFI): within one percentage point.
#[test]
fn refresh_costs_trfc_per_trefi_per_rank() {
    for m in STANDARDS {
        let w = generated(GeneratorKind::Stream, 600_000, 1);
        let bw = |refresh: &str| {
            let cfg = machine(m, json!({"controller": {"refresh": refresh}}));
            let opts = DramSimOptions::new(64);
            let (mem, totals) = run(&cfg, &w, opts);
            let s = memtint_engine::dram_sim::report::report(&cfg, &mem, &totals, opts);
            (s["bandwidth_gbps"]["total"].as_f64().unwrap(), s["refreshes"].as_u64().unwrap(), cfg)
        };
        let (with, refreshes, cfg) = bw("all-bank");
        let (without, none, _) = bw("none");
        assert_eq!(none, 0);
        let t = &cfg.timing;
        let expected = t.tRFC as f64 / t.tREFI as f64;
        let loss = 1.0 - with / without;
        assert!(refreshes > 100, "{m}: only {refreshes} refreshes");
        assert!(loss >= expected - 0.002 && loss <= expected + 0.01, "{m}: loss {:.4} vs tRFC/tREFI {:.4}", loss, expected);
    }
}

#[test]
fn refreshes_arrive_once_per_trefi_per_rank() {
    let cfg = machine("ddr4-2400-2ch2r", json!({}));
    let w = generated(GeneratorKind::Random, 100_000, 2);
    let (mem, totals) = run(&cfg, &w, DramSimOptions::new(32));
    let per_rank = totals.dram_cycles / cfg.timing.tREFI;
    for ch in mem.channels() {
        for r in 0..cfg.org.ranks {
            let n = ch.stats().rank_commands[r as usize][Command::Ref.index()];
            assert!(n == per_rank || n + 1 == per_rank, "rank {r}: {n} refreshes in {per_rank} intervals");
        }
    }
}

/// A rank's reported commands are its banks' and its rank-wide ones (PREA, REF), so the ranks
/// add up to their channel, command by command.
#[test]
fn a_ranks_reported_commands_are_its_banks_and_add_up_to_the_channels() {
    let cfg = machine("ddr4-2400-2ch2r", json!({}));
    let w = generated(GeneratorKind::Mix, 20_000, 2);
    let opts = DramSimOptions::new(32);
    let (mem, totals) = run(&cfg, &w, opts);
    let v = memtint_engine::dram_sim::report::report(&cfg, &mem, &totals, opts);
    let n = |x: &serde_json::Value| x.as_u64().unwrap_or_else(|| panic!("not a count: {x}"));
    for (ch, ctrl) in v["channels"].as_array().unwrap().iter().zip(mem.channels()) {
        let keys: Vec<&String> = ch["commands"].as_object().unwrap().keys().collect();
        for key in &keys {
            let ranks = ch["ranks"].as_array().unwrap();
            let of_ranks: u64 = ranks.iter().map(|r| n(&r["commands"][key.as_str()])).sum();
            assert_eq!(of_ranks, n(&ch["commands"][key.as_str()]), "{key}: the ranks against channel {}", ch["channel"]);
            for (r, rank) in ranks.iter().enumerate() {
                let of_banks: u64 = rank["banks"].as_array().unwrap().iter().map(|b| n(&b["commands"][key.as_str()])).sum();
                let wide = ctrl.stats().rank_commands[r][key_index(key)];
                assert_eq!(n(&rank["commands"][key.as_str()]), of_banks + wide, "{key} of rank {r}");
            }
        }
        for rank in ch["ranks"].as_array().unwrap() {
            assert!(n(&rank["commands"]["ACT"]) > 0 && n(&rank["commands"]["RD"]) + n(&rank["commands"]["RDA"]) > 0, "{rank}");
        }
    }
}

/// A command's index from its report name.
fn key_index(name: &str) -> usize {
    Command::ALL.iter().find(|c| c.name() == name).unwrap_or_else(|| panic!("no command {name}")).index()
}

#[test]
fn fr_fcfs_beats_fcfs_on_row_hit_rate_for_interleaved_streams() {
    let w = generated(GeneratorKind::Stream, 50_000, 1);
    let rate = |sched: &str| {
        let cfg = machine("ddr4-2400", json!({"controller": {"scheduler": sched}}));
        let opts = DramSimOptions::new(64);
        let (mem, totals) = run(&cfg, &w, opts);
        memtint_engine::dram_sim::report::report(&cfg, &mem, &totals, opts)["row_hit_rate"].as_f64().unwrap()
    };
    let (fcfs, frfcfs) = (rate("fcfs"), rate("fr-fcfs"));
    assert!(frfcfs >= fcfs, "fr-fcfs {frfcfs} < fcfs {fcfs}");
}

/// Requests at `arrivals` (timestamped), alternating reads and writes over a few rows and banks.
fn timestamped(arrivals: &[u64]) -> Vec<memtint_engine::trace::DramRequest> {
    arrivals
        .iter()
        .enumerate()
        .map(|(i, &t)| memtint_engine::trace::DramRequest {
            addr: (i as u64 % 5) * 0x4_0000 + (i as u64 % 3) * 0x2000,
            is_write: i % 3 == 1,
            arrival: Some(t),
        })
        .collect()
}

fn timestamped_stats(cfg: &memtint_engine::config::MemoryConfig, arrivals: &[u64], cycle_by_cycle: bool) -> (serde_json::Value, u64, f64) {
    use memtint_engine::trace::{TraceSource, VecSource};
    let opts = DramSimOptions { cycle_by_cycle, ..DramSimOptions::new(8) };
    let mut src = VecSource::new(timestamped(arrivals));
    let (mem, totals) = memtint_engine::dram_sim::simulate(cfg, &mut src as &mut dyn TraceSource, true, opts).unwrap();
    let refreshes = mem.channels().iter().flat_map(|c| c.stats().rank_commands.iter().map(|r| r[Command::Ref.index()])).sum();
    (stats_without_wall_clock(cfg, &mem, &totals, opts), refreshes, totals.wall_seconds)
}

/// Idle stretches between timestamped requests are skipped at once (`Controller::skip_idle`),
/// with exactly the statistics of ticking through them: the same refreshes, latencies and
/// cycles as a cycle-by-cycle run, on both implementations, one and two ranks, every row policy.
#[test]
fn idle_stretches_are_skipped_with_the_statistics_of_ticking_through_them() {
    let arrivals = [0, 5, 40_000, 40_003, 250_001, 250_100, 250_101, 600_000, 1_300_017];
    for m in ["ddr4-2400", "ddr4-2400-2ch2r", "ddr3-1333"] {
        for policy in ["open", "closed", "timeout"] {
            for implementation in ["general", "lanes"] {
                let cfg = machine(m, json!({"controller": {"row_policy": policy, "implementation": implementation}}));
                let (skipped, refreshes, _) = timestamped_stats(&cfg, &arrivals, false);
                let (stepped, _, _) = timestamped_stats(&cfg, &arrivals, true);
                assert_eq!(skipped, stepped, "{m} {policy} {implementation}");
                assert!(refreshes > 100, "{m}: the run spans many refresh intervals ({refreshes} REFs)");
            }
        }
    }
}

/// A DRAMSim3 trace whose second request comes at 10^12 (the latest arrival a trace may give)
/// once took a tick per tREFI to get there (10^8 of them); the idle time is skipped now, with
/// every refresh counted.
#[test]
fn a_request_at_the_latest_arrival_runs_at_once() {
    let last = memtint_engine::trace::dram_trace::MAX_ARRIVAL;
    let cfg = machine("ddr4-2400", json!({}));
    let (stats, refreshes, wall) = timestamped_stats(&cfg, &[0, last], false);
    assert!(stats["dram_cycles"].as_u64().unwrap() > last);
    assert_eq!(refreshes, last / cfg.timing.tREFI, "one REF per tREFI");
    assert!(wall < 5.0, "{wall} s");
}

/// DDR2's read-to-precharge with BL8 is AL + BL/2 + max(tRTP, 2) - 2 nCK (JESD79-2F; DRAMSim2's
/// `READ_TO_PRE_DELAY`), from the data sheet's 7.5 ns tRTP; the device file's `tRTP` is that
/// whole distance, so a row conflict's PRE follows its RD by it exactly.
#[test]
fn ddr2_read_to_precharge_is_the_bl8_distance() {
    let cfg = machine("ddr2-800", json!({"controller": {"refresh": "none"}}));
    let t = &cfg.timing;
    let trtp = (7.5 / t.tCK_ns).ceil() as u64;
    assert_eq!(t.tRTP, t.tBL + trtp.max(2) - 2, "AL 0, BL/2 = tBL");
    // Row hits long enough for tRAS to be over, then a read to another row of their bank: the
    // PRE follows the last RD by tRTP.
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(8) };
    let at = |a: u64| {
        let d = cfg.mapping.decode(a);
        ((d.channel, d.rank, d.bank_group, d.bank), d.row)
    };
    let (bank, row) = at(0);
    let hits: Vec<u64> = (0..1u64 << 16).map(|k| k * 64).filter(|&a| at(a) == (bank, row)).take(4).collect();
    let far = (0..1u64 << 20).map(|k| k << 12).find(|&a| at(a).0 == bank && at(a).1 != row).expect("another row of the bank");
    let mut reqs: Vec<_> = hits.iter().map(|&a| read(a)).collect();
    reqs.push(read(far));
    let (_, totals) = run_requests(&cfg, reqs, opts);
    let cmds: Vec<_> = totals.commands.iter().map(|c| (c.command, c.cycle)).collect();
    let act = cmds.iter().find(|c| c.0 == Command::Act).expect("an ACT").1;
    let pre = cmds.iter().find(|c| c.0 == Command::Pre).expect("a PRE").1;
    let rd = cmds.iter().filter(|c| c.0 == Command::Rd && c.1 < pre).last().expect("an RD").1;
    assert!(rd + t.tRTP > act + t.tRAS, "tRTP binds: {cmds:?}");
    assert_eq!(pre - rd, t.tRTP, "{cmds:?}");
}
