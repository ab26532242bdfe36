//! The lane controller issues exactly what the general controller issues: random
//! configurations (machines with DDR3 and DDR4 organisations, 1-4 ranks, 1-2 channels; mappings;
//! the schedulers the lane controller runs; the three row policies; refresh on and off; queue
//! sizes, watermarks, idle-drain settings, front-end latencies, requests in flight, 1-5
//! sources, generators with writes) run with `controller.implementation = "general"` and
//! `= "lanes"` give the same command stream, the same completions in the same order and the
//! same statistics JSON (but for the implementation's name; row-buffer causes included, by
//! source, and each completion's cause), and the lane runs pass the
//! independent timing checker. Dedicated tests cross the lanes' 32-bit rebase: an open-loop run
//! with rebases every few hundred cycles, and timestamped traces with gaps beyond 2^31 cycles;
//! and their 24-bit keys: ages renumbered every few requests.

use crate::common::random_run::{self, Case};
use crate::common::*;
use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::controller::{Completion, Implementation, LaneSettings, Origin};
use memtint_engine::dram::CommandRecord;
use memtint_engine::dram_sim::{DramSimOptions, WorkloadSpec};
use memtint_engine::memory_system::MemorySystem;
use memtint_engine::trace::{GeneratorKind, GeneratorSpec};
use memtint_engine::vector_isa::VectorIsa;
use proptest::prelude::*;
use serde_json::json;

const MAPPINGS: &[Option<&str>] = &[None, Some("RoBaRaCoCh"), Some("RoRaBaChCo"), Some("ChRaBaRoCo")];
/// The schedulers the lane controller runs (the ranked ones stay on the general controller).
const SCHEDULERS: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];

fn case() -> impl Strategy<Value = Case> {
    random_run::lanes_case(SCHEDULERS, MAPPINGS, 200..2500)
}

fn config(c: &Case, implementation: &str) -> MemoryConfig {
    c.config(Some(implementation))
}

fn workload(c: &Case) -> WorkloadSpec {
    c.workload()
}

/// One run through the DRAM driver: the command stream and the statistics JSON without
/// wall-clock keys and without the implementation's name.
fn driven(c: &Case, implementation: &str, cycle_by_cycle: bool) -> (Vec<CommandRecord>, serde_json::Value) {
    let cfg = config(c, implementation);
    let opts = DramSimOptions { sources: c.sources, keep_commands: true, cycle_by_cycle, ..DramSimOptions::new(c.outstanding) };
    let (mem, totals) = run(&cfg, &workload(c), opts);
    let want = if implementation == "general" { Implementation::General } else { Implementation::Lanes };
    assert_eq!(mem.channels()[0].implementation(), want);
    let mut stats = stats_without_wall_clock(&cfg, &mem, &totals, opts);
    let implementation_reported = stats["config"].as_object_mut().unwrap().remove("implementation");
    assert_eq!(implementation_reported, Some(json!(mem.channels()[0].implementation().name())));
    (totals.commands, stats)
}

/// What the open-loop driver saw: completions in the order the memory system gave them, the
/// command log, and after every step (cycle, `next_event`, `next_work`, `next_completion`).
type Observed = (Vec<Completion>, Vec<CommandRecord>, Vec<[u64; 4]>);

/// An open-loop run driven here, not by `dram_sim`: requests of the generator enter in bursts at
/// pseudo-random gaps whenever their queue has room, and the driver jumps to the memory system's
/// `next_event` when it comes first.
/// `lanes` sets the lane controllers' rebase, age renumbering or level.
fn completions(c: &Case, implementation: &str, lanes: LaneSettings) -> Observed {
    let cfg = config(c, implementation);
    let mut mem = MemorySystem::with_lane_settings(&cfg, lanes).unwrap();
    mem.record_commands(true);
    let (mut source, _) = memtint_engine::dram_sim::open_workload(&workload(c), &cfg).unwrap();
    let (mut done, mut log, mut events) = (Vec::new(), Vec::new(), Vec::new());
    let mut rng = c.seed | 1;
    let mut step = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut now, mut id, mut pending) = (0u64, 0u64, None);
    loop {
        mem.tick(now, &mut done, false);
        let burst = 1 + step() % 6;
        for _ in 0..burst {
            if pending.is_none() {
                pending = source.next_request().unwrap();
            }
            let Some(r) = pending else { break };
            let origin = Origin::single((id % c.sources as u64) as u32);
            if !mem.try_enqueue(now, id, r.addr, r.is_write, origin) {
                break;
            }
            id += 1;
            pending = None;
        }
        events.push([now, mem.next_event(), mem.next_work(), mem.next_completion()]);
        if pending.is_none() && id == c.requests && mem.is_idle() {
            break;
        }
        let gap = step() % 40;
        now = mem.next_event().min(now + 1 + gap).max(now + 1);
        assert!(now < 50_000_000, "run did not finish");
    }
    mem.drain_commands(&mut log);
    (done, log, events)
}

fn first_difference<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T]) -> Option<String> {
    if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
        return Some(format!("at {i}: general {:?}, lanes {:?}", a[i], b[i]));
    }
    (a.len() != b.len()).then(|| format!("lengths: general {}, lanes {}", a.len(), b.len()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(if std::env::var("CI").is_ok() { 96 } else { 48 }), ..ProptestConfig::default() })]

    #[test]
    fn lanes_issue_the_general_command_stream_with_the_same_statistics(c in case()) {
        let (cmds_general, stats_general) = driven(&c, "general", false);
        let (cmds_lanes, stats_lanes) = driven(&c, "lanes", false);
        prop_assert!(first_difference(&cmds_general, &cmds_lanes).is_none(), "commands differ {}", first_difference(&cmds_general, &cmds_lanes).unwrap());
        // The row-buffer causes are compared with the rest, in total and per bank.
        let causes = stats_general["row_conflicts_by_self"].as_u64().unwrap() + stats_general["row_conflicts_by_other"].as_u64().unwrap();
        prop_assert_eq!(causes, stats_general["row_conflicts"].as_u64().unwrap());
        prop_assert!(stats_general["channels"][0]["ranks"][0]["banks"][0].get("row_misses_after_other").is_some());
        prop_assert_eq!(stats_general, stats_lanes);
    }

    #[test]
    fn lanes_complete_the_same_requests_in_the_same_order_and_ask_for_the_same_ticks(c in case()) {
        let (done_general, log_general, events_general) = completions(&c, "general", LaneSettings::default());
        let (done_lanes, log_lanes, events_lanes) = completions(&c, "lanes", LaneSettings::default());
        prop_assert_eq!(done_general.len() as u64, c.requests);
        prop_assert!(first_difference(&events_general, &events_lanes).is_none(), "next events differ {}", first_difference(&events_general, &events_lanes).unwrap());
        prop_assert!(first_difference(&done_general, &done_lanes).is_none(), "completions differ {}", first_difference(&done_general, &done_lanes).unwrap());
        prop_assert!(first_difference(&log_general, &log_lanes).is_none(), "commands differ {}", first_difference(&log_general, &log_lanes).unwrap());
    }

    /// The lanes' 24-bit keys: requests' ages renumbered every few requests (at most one more
    /// than the queues hold) order as the general controller's 64-bit keys.
    #[test]
    fn lanes_renumbering_ages_every_few_requests_changes_nothing(c in case(), ages in 0u32..300) {
        let (done_general, log_general, events_general) = completions(&c, "general", LaneSettings::default());
        let (done_lanes, log_lanes, events_lanes) = completions(&c, "lanes", LaneSettings { age_limit: ages, ..LaneSettings::default() });
        prop_assert!(first_difference(&events_general, &events_lanes).is_none(), "next events differ {}", first_difference(&events_general, &events_lanes).unwrap());
        prop_assert!(first_difference(&done_general, &done_lanes).is_none(), "completions differ {}", first_difference(&done_general, &done_lanes).unwrap());
        prop_assert!(first_difference(&log_general, &log_lanes).is_none(), "commands differ {}", first_difference(&log_general, &log_lanes).unwrap());
    }

    /// The lanes' `tick` and `enqueue` compiled for each instruction-set level this CPU runs
    /// (`vector_isa.rs`; the default is the best, so the other tests here run that one).
    #[test]
    fn lanes_at_every_vector_isa_level_equal_general(c in case(), level in 0usize..3) {
        let supported = VectorIsa::supported();
        let isa = supported[level % supported.len()];
        let (done_general, log_general, events_general) = completions(&c, "general", LaneSettings::default());
        let (done_lanes, log_lanes, events_lanes) = completions(&c, "lanes", LaneSettings { isa, ..LaneSettings::default() });
        prop_assert!(first_difference(&events_general, &events_lanes).is_none(), "{}: next events differ {}", isa.name(), first_difference(&events_general, &events_lanes).unwrap());
        prop_assert!(first_difference(&done_general, &done_lanes).is_none(), "{}: completions differ {}", isa.name(), first_difference(&done_general, &done_lanes).unwrap());
        prop_assert!(first_difference(&log_general, &log_lanes).is_none(), "{}: commands differ {}", isa.name(), first_difference(&log_general, &log_lanes).unwrap());
    }

    #[test]
    fn lanes_rebasing_every_few_hundred_cycles_change_nothing(c in case(), rebase in 1u64..600) {
        let (done_general, log_general, events_general) = completions(&c, "general", LaneSettings::default());
        let (done_lanes, log_lanes, events_lanes) = completions(&c, "lanes", LaneSettings { rebase_after: rebase, ..LaneSettings::default() });
        prop_assert!(first_difference(&events_general, &events_lanes).is_none(), "next events differ {}", first_difference(&events_general, &events_lanes).unwrap());
        prop_assert!(first_difference(&done_general, &done_lanes).is_none(), "completions differ {}", first_difference(&done_general, &done_lanes).unwrap());
        prop_assert!(first_difference(&log_general, &log_lanes).is_none(), "commands differ {}", first_difference(&log_general, &log_lanes).unwrap());
    }

    #[test]
    fn lanes_event_skipping_equals_cycle_by_cycle(c in case()) {
        let (cmds_skip, stats_skip) = driven(&c, "lanes", false);
        let (cmds_every, stats_every) = driven(&c, "lanes", true);
        prop_assert!(first_difference(&cmds_skip, &cmds_every).is_none());
        prop_assert_eq!(stats_skip, stats_every);
    }
}

#[test]
fn an_unknown_implementation_is_a_config_error_naming_the_key() {
    let m = MachineConfig::load("ddr4-2400").unwrap().with_overrides(&json!({"controller": {"implementation": "fast"}}));
    let err = m.and_then(|m| MemoryConfig::resolve(&m).and_then(|cfg| MemorySystem::new(&cfg).map(|_| ()))).unwrap_err().to_string();
    assert!(err.contains("controller.implementation") && err.contains("fast") && err.contains("lanes"), "{err}");
}

/// Timestamped requests in bursts separated by gaps beyond 2^31 cycles (past any 32-bit
/// offset): the lane controller rebases and still issues the general controller's commands.
#[test]
fn lanes_equal_general_across_gaps_beyond_32_bit_cycles() {
    use memtint_engine::dram_sim::simulate;
    use memtint_engine::trace::{DramRequest, TraceSource, VecSource};
    for (refresh, gap) in [("none", 3u64 << 30), ("none", (1u64 << 33) + 17), ("all-bank", 1u64 << 27)] {
        let mut reqs = Vec::new();
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut at = 0u64;
        for burst in 0..6u64 {
            at += if burst == 0 { 0 } else { gap };
            for i in 0..150u64 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                reqs.push(DramRequest {
                    addr: (rng % (1 << 33)) & !63,
                    is_write: rng.is_multiple_of(3),
                    arrival: Some(at + i * (rng % 5)),
                });
            }
        }
        let run = |implementation: &str| {
            let m = MachineConfig::load("ddr4-2400-2ch2r").unwrap();
            let m = m.with_overrides(&json!({"controller": {"implementation": implementation, "refresh": refresh}})).unwrap();
            let cfg = MemoryConfig::resolve(&m).unwrap();
            let mut src = VecSource::new(reqs.clone());
            let opts = DramSimOptions { keep_commands: true, check: true, ..DramSimOptions::new(16) };
            let (mem, totals) = simulate(&cfg, &mut src as &mut dyn TraceSource, true, opts).unwrap();
            assert_eq!(totals.violations, 0, "{:?}", totals.violation_examples);
            assert!(totals.dram_cycles > 5 * gap, "{refresh}: the run spans the gaps");
            let mut stats = stats_without_wall_clock(&cfg, &mem, &totals, opts);
            stats["config"].as_object_mut().unwrap().remove("implementation");
            (totals.commands, stats)
        };
        let (cmds_general, stats_general) = run("general");
        let (cmds_lanes, stats_lanes) = run("lanes");
        assert!(
            first_difference(&cmds_general, &cmds_lanes).is_none(),
            "{refresh}: {}",
            first_difference(&cmds_general, &cmds_lanes).unwrap()
        );
        assert_eq!(stats_general, stats_lanes, "{refresh}");
    }
}

#[test]
fn lanes_on_a_ranked_scheduler_is_a_config_error_naming_it() {
    let m = MachineConfig::load("ddr4-2400")
        .unwrap()
        .with_overrides(&json!({"controller": {"implementation": "lanes", "scheduler": "tcm"}}))
        .unwrap();
    let err = MemoryConfig::resolve(&m).and_then(|cfg| MemorySystem::new(&cfg).map(|_| ())).unwrap_err().to_string();
    assert!(err.contains("controller.implementation") && err.contains("tcm"), "{err}");
}

/// The routing loop's closed-loop entries for lane controllers (`dram_sim/routing.rs`: per
/// shape, mode constant) under conditions the random cases reach rarely: four channels, queues
/// much smaller than the requests in flight (front-end stalls), writes drained by the idle
/// timeout, several sources, the bench's own configuration. General controllers (the
/// run-time-mode entry) and lane controllers give the same commands and statistics, and the
/// conditions do occur.
#[test]
fn the_lanes_closed_loop_equals_the_general_controllers_with_many_channels_stalls_and_idle_drains() {
    use GeneratorKind::*;
    // (machine, channels, workload, read fraction, read queue, write queue, idle drain (min, timeout), in flight, sources)
    let cases = [
        ("ddr4-2400", 4, Random, 0.7, 3, 4, (4, 40), 48, 3),
        // All writes, never `idle_min` of them queued: the idle timeout drains them.
        ("ddr4-2400", 4, Mix, 0.0, 2, 6, (6, 30), 3, 1),
        ("ddr4-2400-2ch2r", 2, Stream, 0.5, 4, 2, (2, 15), 40, 2),
        ("ddr3-1600", 1, Conflict, 0.9, 32, 32, (16, 500), 64, 1),
        ("ddr4-2400", 1, Random, 1.0, 32, 32, (16, 500), 64, 1),
        // 8 ranks x 8 banks: the lane tables' largest rank count, 64 banks (8 lane blocks).
        ("ccps-8c-256b", 1, Random, 0.7, 32, 32, (16, 500), 64, 2),
        ("ccps-8c-256b", 2, Mix, 0.5, 8, 8, (4, 100), 40, 2),
    ];
    for (name, channels, kind, read_fraction, rq, wq, idle, outstanding, sources) in cases {
        lanes_loop_equals_general(name, channels, None, None, kind, read_fraction, (rq, wq), idle, outstanding, sources);
    }
}

/// The one-channel closed loop on a lane controller (`routing.rs`, `Mode::one_channel`) under the conditions it must
/// reproduce: 1-4 ranks, writes drained by the idle timeout, refresh (every DDR4 run here
/// spans several tREFI), queue-full stalls, requests in flight below and above the queue
/// size, queues of one entry.
#[test]
fn the_one_channel_lanes_loop_equals_the_general_controller_across_ranks_queues_and_drains() {
    use GeneratorKind::*;
    // (machine, ranks, workload, read fraction, read queue, write queue, idle drain (min, timeout), in flight, sources)
    let cases = [
        ("ddr4-2400", 1, Mix, 0.0, 2, 6, (6, 30), 3, 1),
        ("ddr4-2400", 1, Random, 0.7, 1, 1, (1, 10), 5, 1),
        ("ddr4-2400", 1, Random, 0.7, 32, 32, (16, 500), 8, 2),
        ("ddr4-2400", 2, Random, 0.7, 3, 4, (4, 40), 48, 3),
        ("ddr4-2400", 2, Stream, 0.5, 4, 2, (2, 15), 40, 2),
        ("ddr4-2400", 4, Conflict, 0.8, 8, 8, (8, 60), 12, 1),
        ("ddr3-1600", 4, Mix, 0.3, 2, 3, (3, 25), 64, 2),
    ];
    for (name, ranks, kind, read_fraction, rq, wq, idle, outstanding, sources) in cases {
        lanes_loop_equals_general(name, 1, Some(ranks), None, kind, read_fraction, (rq, wq), idle, outstanding, sources);
    }
}

/// Every lane shape the one-channel loop specialises (`controller/shape.rs`: blocks, one rank
/// or more) and the run-time catch-all are reached, and each runs exactly as
/// the general controller: reads and writes (watermark and idle drains), refresh, stalls.
#[test]
fn every_lane_shape_of_the_one_channel_loop_equals_the_general_controller() {
    use memtint_engine::controller::shape::shape_name;
    use GeneratorKind::*;
    // (machine, ranks, scheduler, the shape it must run as, workload, read fraction)
    let cases = [
        ("ddr3-1600", 1, "fr-fcfs", "Fixed<1, false>", Random, 0.6),
        ("ddr4-2400", 1, "fr-fcfs", "Fixed<2, false>", Mix, 0.6),
        ("ddr3-1600", 1, "fcfs", "Fixed<1, false>", Conflict, 0.7),
        ("ddr4-2400", 1, "fr-fcfs-cap", "Fixed<2, false>", Stream, 0.5),
        ("ddr3-1600", 2, "fr-fcfs", "Fixed<2, true>", Random, 0.7),
        ("ddr4-2400", 2, "fr-fcfs", "Fixed<4, true>", Mix, 0.6),
        ("ddr4-2400", 4, "fcfs", "Dynamic", Random, 0.6),
        ("ddr3-1600", 4, "fr-fcfs-cap", "Fixed<4, true>", Mix, 0.5),
    ];
    for (name, ranks, scheduler, shape, kind, read_fraction) in cases {
        let mut m = MachineConfig::load(name).unwrap();
        m.dram.ranks = ranks;
        let m = m.with_overrides(&json!({"controller": {"implementation": "lanes", "scheduler": scheduler}})).unwrap();
        let mem = MemorySystem::new(&MemoryConfig::resolve(&m).unwrap()).unwrap();
        let [c, ..] = mem.lane_controllers() else { panic!("{name}: lanes") };
        assert_eq!(shape_name(c.shape()), shape, "{name} x {ranks} ranks, {scheduler}");
        lanes_loop_equals_general(name, 1, Some(ranks), Some(scheduler), kind, read_fraction, (6, 5), (3, 40), 24, 2);
    }
}

/// One closed-loop run with general controllers and with lane controllers (the per-shape
/// entries): same commands and statistics, and the conditions asked for do occur.
#[allow(clippy::too_many_arguments)]
fn lanes_loop_equals_general(
    name: &str,
    channels: u32,
    ranks: Option<u32>,
    scheduler: Option<&str>,
    kind: GeneratorKind,
    read_fraction: f64,
    (rq, wq): (usize, usize),
    (idle_min, idle_timeout): (usize, u64),
    outstanding: usize,
    sources: u32,
) {
    let run = |implementation: &str| {
        let mut m = MachineConfig::load(name).unwrap();
        m.dram.channels = channels;
        if let Some(r) = ranks {
            m.dram.ranks = r;
        }
        m.dram.mapping = "RoBaRaCoCh".into();
        let mut m = m
            .with_overrides(&json!({"controller": {
                "implementation": implementation, "read_queue": rq, "write_queue": wq,
                "write_idle_drain_min": idle_min, "write_idle_drain_timeout": idle_timeout,
            }}))
            .unwrap();
        if let Some(s) = scheduler {
            m.controller.scheduler = s.into();
        }
        let cfg = MemoryConfig::resolve(&m).unwrap();
        let mut g = GeneratorSpec::new(kind, 6000);
        g.seed = 7;
        g.read_fraction = Some(read_fraction);
        let opts = DramSimOptions { sources, keep_commands: true, ..DramSimOptions::new(outstanding) };
        let (mem, totals) = run(&cfg, &WorkloadSpec::Generate(g), opts);
        assert_eq!(mem.channels().len(), channels as usize);
        let mut stats = stats_without_wall_clock(&cfg, &mem, &totals, opts);
        stats["config"].as_object_mut().unwrap().remove("implementation");
        (totals.commands, stats, totals.front_end_stalls)
    };
    let what = format!("{name} x{channels} ranks {ranks:?} {scheduler:?} {kind:?}");
    let (cmds_general, stats_general, _) = run("general");
    let (cmds_lanes, stats_lanes, stalls) = run("lanes");
    assert!(first_difference(&cmds_general, &cmds_lanes).is_none(), "{what}: {}", first_difference(&cmds_general, &cmds_lanes).unwrap());
    assert_eq!(stats_general, stats_lanes, "{what}");
    if outstanding > rq + wq {
        assert!(stalls > 0, "{what}: the front end stalls");
    }
    if read_fraction == 0.0 {
        let switches: u64 = (0..channels as usize).map(|c| stats_lanes["channels"][c]["write_mode_switches"].as_u64().unwrap()).sum();
        assert!(switches > 0, "{what}: the idle drain switches to writes");
    }
    if name.starts_with("ddr4") {
        assert!(cmds_lanes.iter().any(|c| c.command == memtint_engine::dram::Command::Ref), "{what}: refreshes run");
    }
}

/// The routing loop reads a request only when one may enter: a malformed line far behind the
/// requests in flight is still reported, naming file and line, with either implementation.
#[test]
fn a_malformed_trace_line_behind_a_full_loop_is_an_error_naming_file_and_line() {
    let dir = std::env::temp_dir().join(format!("memtint-routing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.trace");
    let mut text: String = (0..300u64).map(|i| format!("0x{:x} {}\n", i * 0x1040, if i % 3 == 0 { 'W' } else { 'R' })).collect();
    text.push_str("0x7000 Q\n");
    std::fs::write(&path, text).unwrap();
    for implementation in ["lanes", "general"] {
        let spec = json!({
            "machine": "ddr4-2400", "workload": {"trace": {"path": path}}, "outstanding": 4,
            "overrides": {"controller": {"implementation": implementation}},
        });
        let err = memtint_engine::dram_sim::run_json(&spec.to_string()).unwrap_err().to_string();
        assert!(err.contains(&format!("{}:301", path.display())), "{implementation}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A throttled device (a column-command window): the lanes keep the window as the general
/// controller does, command for command, with reads and writes, one rank and two.
#[test]
fn lanes_keep_a_throttles_column_window_as_the_general_controller_does() {
    for device in ["ddr4-2400-throttled-2x", "ddr4-2400-throttled-10x"] {
        for ranks in [1u32, 2] {
            for (kind, read_fraction) in [(GeneratorKind::Stream, 1.0), (GeneratorKind::Random, 0.7), (GeneratorKind::Mix, 0.5)] {
                let run_with = |implementation: &str| {
                    let m = MachineConfig::load("ddr4-2400")
                        .unwrap()
                        .with_overrides(
                            &json!({"dram": {"device": device, "ranks": ranks}, "controller": {"implementation": implementation}}),
                        )
                        .unwrap();
                    let cfg = MemoryConfig::resolve(&m).unwrap();
                    let mut g = GeneratorSpec::new(kind, 6_000);
                    g.read_fraction = Some(read_fraction);
                    let opts = DramSimOptions { keep_commands: true, check: true, ..DramSimOptions::new(48) };
                    let (mem, totals) = run(&cfg, &WorkloadSpec::Generate(g), opts);
                    assert_eq!(totals.violations, 0, "{device} {ranks} {kind:?} {implementation}");
                    assert_eq!(mem.channels()[0].implementation().name(), implementation);
                    totals.commands
                };
                let (general, lanes) = (run_with("general"), run_with("lanes"));
                assert!(
                    first_difference(&general, &lanes).is_none(),
                    "{device}, {ranks} ranks, {kind:?}: {}",
                    first_difference(&general, &lanes).unwrap()
                );
            }
        }
    }
}

/// Both controllers hold an RDA back from an earlier write's recovery alike: a DDR4 device whose
/// tWR exceeds tRTP + tWTR_L (so the rule binds beyond write-to-read), closed page, reads right
/// behind writes: the same command stream, no violation, and reads inside a recovery issued
/// as RD.
#[test]
fn both_controllers_keep_an_rda_out_of_a_writes_recovery() {
    let c = Case::reads_behind_writes("ddr4-2400", "all-bank", GeneratorKind::Stream, 0.45, 1500);
    let mut streams = Vec::new();
    for implementation in ["general", "lanes"] {
        let mut cfg = config(&c, implementation);
        cfg.timing.tWR += 16;
        let t = &cfg.timing;
        let need = t.CWL + t.tBL + t.tWR - t.tRTP;
        assert!(need > t.CWL + t.tBL + t.tWTR_L);
        let opts = DramSimOptions { sources: c.sources, keep_commands: true, ..DramSimOptions::new(c.outstanding) };
        let (mem, totals) = run(&cfg, &workload(&c), opts); // zero checker violations, asserted by `run`
        assert_eq!(mem.channels()[0].implementation().name(), implementation);
        let mut last_wr = std::collections::HashMap::new();
        let mut held_back = 0;
        for r in &totals.commands {
            let bank = (r.addr.channel, r.addr.rank, r.addr.bank_group, r.addr.bank);
            match r.command {
                memtint_engine::dram::Command::Wr => {
                    last_wr.insert(bank, r.cycle);
                }
                memtint_engine::dram::Command::Rd => {
                    held_back += last_wr.get(&bank).is_some_and(|&w| r.cycle < w + need) as usize;
                }
                _ => {}
            }
        }
        assert!(held_back > 0, "{implementation}: no read inside a write's recovery");
        streams.push(totals.commands);
    }
    assert_eq!(first_difference(&streams[0], &streams[1]), None);
}
