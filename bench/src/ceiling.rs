//! `memtint-bench-ceiling`: how fast can a controller for the DRAM bench's random workload be?
//! Runs a lean controller written for exactly that configuration (`ceiling/lean_controller.rs`)
//! on the bench's random trace (DDR4-2400, 1 channel x 1 rank, FR-FCFS, open rows, all-bank
//! refresh, 64 in flight, 2 M uniformly random reads, seed 42; `MEMTINT_CEILING_WORKLOAD=mix`:
//! the bench's mix, 2 reads to 1 write) and prints its speed in M
//! requests per CPU second, measured as `memtint-bench` measures (requests generated up front,
//! only simulation timed, thread CPU time). Before timing, it checks that its command stream is
//! the production engine's, record for record, on the first 200 k requests
//! (`MEMTINT_CEILING_VERIFY=full`: the whole run; `=off`: no check, e.g. under callgrind), and
//! runs the independent timing checker over it. Exits 1 if they differ. `MEMTINT_CEILING_SEED`
//! picks another trace seed (default 42, the bench's); `MEMTINT_CEILING_RANKS=2` runs the
//! preset with two ranks on its channel, `MEMTINT_CEILING_ROW_POLICY=closed` with closed rows,
//! `MEMTINT_CEILING_SCHEDULER=fcfs` with FCFS (one rank). bench/README.md ("measured generality").

#[path = "ceiling/lean_controller.rs"]
mod lean_controller;
#[path = "ceiling/verify.rs"]
mod verify;

#[cfg(test)]
use lean_controller::Ceiling;
use lean_controller::{modelled, run_feed_on, SliceFeed, SourceFeed};
use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::dram_sim::{simulate, DramSimOptions};
use memtint_engine::trace::{DramRequest, GeneratorKind, GeneratorSpec, RequestGenerator, TraceSource, VecSource};
use std::process::ExitCode;
use std::time::Instant;

const MACHINE: &str = "ddr4-2400";
const OUTSTANDING: usize = 64;
const VERIFY_DEFAULT: usize = 200_000;

/// CPU time consumed by the calling thread, in seconds (as `memtint-bench`).
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The bench's random trace (`memtint-bench`'s `generate` for `GeneratorKind::Random`).
pub fn random_trace(cfg: &MemoryConfig, requests: u64, seed: u64) -> Result<Vec<DramRequest>, String> {
    trace(cfg, GeneratorKind::Random, requests, seed)
}

/// The bench's trace of `kind` (`memtint-bench`'s `generate`: `Mix` is 2 reads to 1 write).
pub fn trace(cfg: &MemoryConfig, kind: GeneratorKind, requests: u64, seed: u64) -> Result<Vec<DramRequest>, String> {
    let mut spec = GeneratorSpec::new(kind, requests);
    spec.seed = seed;
    if kind == GeneratorKind::Mix {
        spec.read_fraction = Some(2.0 / 3.0);
    }
    let mapping = cfg.mapping.clone();
    let mut g = RequestGenerator::new(&spec, &cfg.org, Box::new(move |d| mapping.encode(d))).map_err(|e| e.to_string())?;
    let mut v = Vec::with_capacity(requests as usize);
    while let Some(r) = g.next_request().map_err(|e| e.to_string())? {
        v.push(r);
    }
    Ok(v)
}

fn env_number(name: &str, default: usize) -> Result<usize, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v.trim().parse().map_err(|_| format!("{name}={v:?}: expected a whole number")),
    }
}

/// Which of the configurations the lean controller models to run (the environment's
/// `MEMTINT_CEILING_RANKS`, `_ROW_POLICY`, `_WORKLOAD`, `_SCHEDULER`; unset: the bench's random row).
struct Choice {
    ranks: usize,
    scheduler: &'static str,
    row_policy: &'static str,
    workload: &'static str,
    kind: GeneratorKind,
}

impl Choice {
    fn parse(
        ranks: Option<String>,
        row_policy: Option<String>,
        workload: Option<String>,
        scheduler: Option<String>,
    ) -> Result<Self, String> {
        let ranks = match ranks.as_deref().map(str::trim) {
            None => 1,
            Some("1") => 1,
            Some("2") => 2,
            Some(v) => return Err(format!("MEMTINT_CEILING_RANKS={v:?}: the lean controller models 1 or 2 ranks")),
        };
        let row_policy = match row_policy.as_deref().map(str::trim) {
            None | Some("open") => "open",
            Some("closed") => "closed",
            Some(v) => return Err(format!("MEMTINT_CEILING_ROW_POLICY={v:?}: the lean controller models open or closed")),
        };
        let (workload, kind) = match workload.as_deref().map(str::trim) {
            None | Some("random") => ("random", GeneratorKind::Random),
            Some("mix") => ("mix 2:1", GeneratorKind::Mix),
            Some(v) => return Err(format!("MEMTINT_CEILING_WORKLOAD={v:?}: expected random or mix")),
        };
        let scheduler = match scheduler.as_deref().map(str::trim) {
            None | Some("fr-fcfs") => "fr-fcfs",
            Some("fcfs") if ranks == 1 => "fcfs",
            Some(v) => return Err(format!("MEMTINT_CEILING_SCHEDULER={v:?}: the lean controller models fr-fcfs, or fcfs with one rank")),
        };
        Ok(Choice { ranks, scheduler, row_policy, workload, kind })
    }

    /// The bench's preset with this many ranks on its channel and this row policy.
    fn config(&self) -> Result<MemoryConfig, String> {
        let machine = MachineConfig::load(MACHINE).map_err(|e| e.to_string())?;
        let overrides =
            serde_json::json!({"dram": {"ranks": self.ranks}, "controller": {"row_policy": self.row_policy, "scheduler": self.scheduler}});
        let machine = machine.with_overrides(&overrides).map_err(|e| e.to_string())?;
        MemoryConfig::resolve(&machine).map(|cfg| modelled(&cfg)).map_err(|e| e.to_string())
    }
}

fn run() -> Result<bool, String> {
    let requests = env_number("MEMTINT_BENCH_REQUESTS", 2_000_000)?;
    if requests == 0 {
        return Err("MEMTINT_BENCH_REQUESTS must be at least 1".into());
    }
    let verify_n = match std::env::var("MEMTINT_CEILING_VERIFY").as_deref() {
        Err(_) => VERIFY_DEFAULT.min(requests),
        Ok("full") => requests,
        Ok("off") | Ok("0") => 0,
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("MEMTINT_CEILING_VERIFY={v:?}: expected full, off or a number of requests"))?
            .min(requests),
    };
    let seed = env_number("MEMTINT_CEILING_SEED", 42)? as u64;
    let var = |name: &str| std::env::var(name).ok();
    let choice = Choice::parse(
        var("MEMTINT_CEILING_RANKS"),
        var("MEMTINT_CEILING_ROW_POLICY"),
        var("MEMTINT_CEILING_WORKLOAD"),
        var("MEMTINT_CEILING_SCHEDULER"),
    )?;
    let (ranks, scheduler, row_policy, workload, kind) = (choice.ranks, choice.scheduler, choice.row_policy, choice.workload, choice.kind);
    let cfg = choice.config()?;
    let reqs = trace(&cfg, kind, requests as u64, seed)?;
    println!("memtint DRAM speed-of-light: a lean controller for exactly {MACHINE} 1ch x {ranks}r, {scheduler}, {row_policy} rows,");
    println!("all-bank refresh, reads and writes, closed loop with {OUTSTANDING} in flight; {workload} trace, seed {seed}. One thread.\n");

    let mut identical = true;
    if verify_n > 0 {
        let report = verify::compare(&cfg, &reqs[..verify_n], OUTSTANDING)?;
        println!("{report}");
        identical = report.identical();
    } else {
        println!("command stream not compared with the production controller (MEMTINT_CEILING_VERIFY=off)");
    }

    let mut feed = SliceFeed::new(&reqs)?;
    let (t0, c0) = (Instant::now(), thread_cpu_seconds());
    let result = run_feed_on::<false, false, _>(&cfg, &mut feed, OUTSTANDING)?;
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu_seconds() - c0);
    let rate = result.requests as f64 / cpu;
    let lat = result.read_latency.summary();
    println!(
        "\n{:>10} {:>12} {:>9} {:>8} {:>8} {:>11} {:>12}",
        "requests", "DRAM cycles", "M req/s", "cpu s", "wall s", "mean lat.", "wall M req/s"
    );
    println!(
        "{:>10} {:>12} {:>9.2} {:>8.3} {:>8.3} {:>11.2} {:>12.2}",
        result.requests,
        result.cycles,
        rate / 1e6,
        cpu,
        wall,
        lat.mean,
        result.requests as f64 / wall / 1e6
    );
    println!("\nspeed of light on the {workload} trace: {:.2} M requests per CPU second (target 5 M/s)", rate / 1e6);

    // Two pieces of the production controller's generality, measured on the lean one (same
    // stream; bench/README.md).
    println!("\nadding back, measured on the lean controller (M requests per CPU second):");
    let (c0, counted) = (thread_cpu_seconds(), run_feed_on::<false, true, _>(&cfg, &mut SliceFeed::new(&reqs)?, OUTSTANDING)?);
    let cpu_counted = thread_cpu_seconds() - c0;
    println!("  + the production's counters and per-bank bookkeeping: {:>6.2}", counted.requests as f64 / cpu_counted / 1e6);
    let mut src = VecSource::new(reqs.clone());
    let (c0, fed) = (thread_cpu_seconds(), run_feed_on::<false, true, _>(&cfg, &mut SourceFeed::new(&mut src), OUTSTANDING)?);
    let cpu_fed = thread_cpu_seconds() - c0;
    println!("  + requests read one at a time from a dyn TraceSource: {:>6.2}", fed.requests as f64 / cpu_fed / 1e6);
    // The production controller on the same trace, timed as `memtint-bench` times it: the
    // ratio without a second binary (and for the two-rank channel, which no bench preset has).
    let mut src = VecSource::new(reqs.clone());
    let (c0, (_, totals)) =
        (thread_cpu_seconds(), simulate(&cfg, &mut src, false, DramSimOptions::new(OUTSTANDING)).map_err(|e| e.to_string())?);
    let cpu_prod = thread_cpu_seconds() - c0;
    let prod_rate = totals.requests as f64 / cpu_prod;
    println!(
        "\nproduction controller (`dram_sim::simulate`), same trace: {:>6.2} M requests per CPU second; lean / production {:.2}x",
        prod_rate / 1e6,
        rate / prod_rate
    );
    if totals.dram_cycles != result.cycles {
        return Err(format!("internal error: production ran {} cycles, the lean controller {}", totals.dram_cycles, result.cycles));
    }
    if (counted.cycles, fed.cycles) != (result.cycles, result.cycles) {
        return Err(format!("internal error: the variants ran {} and {} cycles, not {}", counted.cycles, fed.cycles, result.cycles));
    }
    Ok(identical)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("memtint-bench-ceiling: the lean controller's command stream differs from the production one");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("memtint-bench-ceiling: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddr4() -> MemoryConfig {
        modelled(&MemoryConfig::resolve(&MachineConfig::load(MACHINE).unwrap()).unwrap())
    }

    /// The speed comparison is like-for-like only while the lean controller issues exactly the
    /// production controller's commands: keep it from rotting silently.
    #[test]
    fn ceiling_command_stream_equals_the_production_one() {
        let cfg = ddr4();
        for (seed, requests, outstanding) in [(42, 20_000, 64), (7, 5_000, 64), (3, 5_000, 16), (11, 3_000, 1)] {
            let reqs = random_trace(&cfg, requests, seed).unwrap();
            let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
            assert!(report.identical(), "seed {seed}, {requests} requests, {outstanding} in flight:\n{report}");
            // Nearly every random request is a PRE, an ACT and a RD: the stream is not trivially short.
            assert!(report.commands > 2 * requests as usize, "{report}");
        }
    }

    /// Runs whose end falls before, during and after the first refresh (tREFI = 9360 cycles):
    /// refresh commands up to the last completion are part of the stream, later ones are not.
    #[test]
    fn runs_ending_around_the_first_refresh_are_identical() {
        let cfg = ddr4();
        let reqs = random_trace(&cfg, 1_445, 42).unwrap();
        for n in 1_418..=1_445 {
            let report = verify::compare(&cfg, &reqs[..n], OUTSTANDING).unwrap();
            assert!(report.identical(), "{n} requests:\n{report}");
        }
    }

    /// The measured variants (counters on; requests through a `dyn TraceSource`) must simulate
    /// the same run as the timed one, or their speed means nothing.
    #[test]
    fn variants_issue_the_same_commands() {
        let cfg = ddr4();
        let reqs = random_trace(&cfg, 5_000, 5).unwrap();
        let plain = run_feed_on::<true, false, _>(&cfg, &mut SliceFeed::new(&reqs).unwrap(), OUTSTANDING).unwrap();
        let counted = run_feed_on::<true, true, _>(&cfg, &mut SliceFeed::new(&reqs).unwrap(), OUTSTANDING).unwrap();
        let mut src = VecSource::new(reqs.clone());
        let fed = run_feed_on::<true, true, _>(&cfg, &mut SourceFeed::new(&mut src), OUTSTANDING).unwrap();
        assert!(plain.counters.is_none() && counted.counters.is_some());
        assert_eq!(plain.commands, counted.commands);
        assert_eq!(plain.commands, fed.commands);
        assert_eq!((plain.cycles, plain.requests), (fed.cycles, fed.requests));
    }

    #[test]
    fn other_configurations_are_refused_with_the_reason() {
        let m = MachineConfig::load(MACHINE).unwrap();
        for (overrides, expect) in [
            (serde_json::json!({"controller": {"scheduler": "fcfs"}}), "scheduler fr-fcfs, not fcfs"),
            (serde_json::json!({"controller": {"row_policy": "timeout"}}), "row policy open or closed, not timeout"),
            (serde_json::json!({"controller": {"read_queue": 65}}), "read queue of at most 64"),
            (serde_json::json!({}), "protect_activated = false"),
        ] {
            let cfg = MemoryConfig::resolve(&m.clone().with_overrides(&overrides).unwrap()).unwrap();
            let err = Ceiling::<1, false>::new(&cfg).err().expect("refused");
            assert!(err.contains(expect), "{err}");
        }
        let two = MemoryConfig::resolve(&MachineConfig::load("ddr4-2400-2ch2r").unwrap()).unwrap();
        assert!(Ceiling::<1, false>::new(&two).err().unwrap().contains("1 channel x 1 rank(s), not 2 x 2"));
    }

    /// The bench's mix (2 reads to 1 write): write queue, WR timing, write drain by watermarks
    /// and when reads run out, completions of both directions.
    #[test]
    fn mix_command_stream_equals_the_production_one() {
        let cfg = ddr4();
        for (seed, requests, outstanding) in [(42, 20_000, 64), (7, 5_000, 64), (3, 5_000, 16), (11, 3_000, 1)] {
            let reqs = trace(&cfg, GeneratorKind::Mix, requests, seed).unwrap();
            let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
            assert!(report.identical(), "seed {seed}, {requests} requests, {outstanding} in flight:\n{report}");
            assert!(report.commands > 2 * requests as usize, "{report}");
        }
    }

    /// Write drain rules other than the preset's: idle drain only from 4 writes (or after a
    /// 50-cycle timeout), a small write queue with close watermarks, and write-heavy traces.
    #[test]
    fn write_drain_variants_are_identical() {
        let m = MachineConfig::load(MACHINE).unwrap();
        for overrides in [
            serde_json::json!({"controller": {"write_idle_drain_min": 4, "write_idle_drain_timeout": 50}}),
            serde_json::json!({"controller": {"write_queue": 8, "write_high_watermark": 0.5, "write_low_watermark": 0.25}}),
            serde_json::json!({"controller": {"read_queue": 8, "write_queue": 64}}),
        ] {
            let cfg = MemoryConfig::resolve(&m.clone().with_overrides(&overrides).unwrap()).unwrap();
            for (seed, outstanding) in [(5, 64), (6, 4)] {
                let mut reqs = trace(&cfg, GeneratorKind::Mix, 4_000, seed).unwrap();
                // Every third read becomes a write too: write-heavy phases.
                for (i, r) in reqs.iter_mut().enumerate() {
                    if i % 3 == 1 {
                        r.is_write = true;
                    }
                }
                let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
                assert!(report.identical(), "{overrides}, seed {seed}, {outstanding} in flight:\n{report}");
            }
        }
    }

    /// One channel of two ranks (the preset with `dram.ranks = 2`): per-rank tRRD/tFAW,
    /// rank-to-rank turnarounds, refresh staggered by tREFI / 2 with only the refreshing rank
    /// blocked; random and mix.
    #[test]
    fn two_ranks_are_identical() {
        let m = MachineConfig::load(MACHINE).unwrap();
        let cfg = MemoryConfig::resolve(&m.with_overrides(&serde_json::json!({"dram": {"ranks": 2}})).unwrap()).unwrap();
        assert_eq!(cfg.org.ranks, 2);
        for kind in [GeneratorKind::Random, GeneratorKind::Mix] {
            for (seed, requests, outstanding) in [(42, 20_000, 64), (7, 5_000, 16), (11, 2_000, 1)] {
                let reqs = trace(&cfg, kind, requests, seed).unwrap();
                let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
                assert!(report.identical(), "{kind:?}, seed {seed}, {requests} requests, {outstanding} in flight:\n{report}");
                assert!(report.commands > 2 * requests as usize, "{report}");
            }
        }
    }

    /// The closed row policy: RDA / WRA for the last queued hit (auto-precharge timing), idle
    /// rows closed at once; one and two ranks, random and mix.
    #[test]
    fn closed_rows_are_identical() {
        let m = MachineConfig::load(MACHINE).unwrap();
        for ranks in [1, 2] {
            let o = serde_json::json!({"dram": {"ranks": ranks}, "controller": {"row_policy": "closed"}});
            let cfg = MemoryConfig::resolve(&m.clone().with_overrides(&o).unwrap()).unwrap();
            for kind in [GeneratorKind::Random, GeneratorKind::Mix, GeneratorKind::Stream] {
                for (seed, requests, outstanding) in [(42, 20_000, 64), (7, 3_000, 4)] {
                    let reqs = trace(&cfg, kind, requests, seed).unwrap();
                    let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
                    assert!(report.identical(), "{ranks} rank(s), {kind:?}, seed {seed}, {outstanding} in flight:\n{report}");
                }
            }
        }
    }

    #[test]
    fn configuration_choices_and_their_errors() {
        let some = |v: &str| Some(v.to_string());
        let c = Choice::parse(None, None, None, None).unwrap();
        assert_eq!((c.ranks, c.scheduler, c.row_policy, c.kind), (1, "fr-fcfs", "open", GeneratorKind::Random));
        assert_eq!(Choice::parse(None, None, None, some("fcfs")).unwrap().config().unwrap().controller.scheduler, "fcfs");
        let c = Choice::parse(some("2"), some("closed"), some("mix"), None).unwrap();
        assert_eq!((c.ranks, c.row_policy, c.kind), (2, "closed", GeneratorKind::Mix));
        let cfg = c.config().unwrap();
        assert_eq!((cfg.org.ranks, cfg.controller.row_policy.as_str()), (2, "closed"));
        for (r, p, w, sch, expect) in [
            (some("3"), None, None, None, "MEMTINT_CEILING_RANKS=\"3\": the lean controller models 1 or 2 ranks"),
            (None, some("timeout"), None, None, "MEMTINT_CEILING_ROW_POLICY=\"timeout\""),
            (None, None, some("stream"), None, "MEMTINT_CEILING_WORKLOAD=\"stream\": expected random or mix"),
            (
                some("2"),
                None,
                None,
                some("fcfs"),
                "MEMTINT_CEILING_SCHEDULER=\"fcfs\": the lean controller models fr-fcfs, or fcfs with one rank",
            ),
            (None, None, None, some("par-bs"), "MEMTINT_CEILING_SCHEDULER=\"par-bs\""),
        ] {
            let err = Choice::parse(r, p, w, sch).err().expect("refused");
            assert!(err.contains(expect), "{err}");
        }
    }

    /// FCFS (age alone; a row may close under its hits, so two candidates per bank), open and
    /// closed rows, on random, mix and a row-hit-heavy stream; two ranks are refused.
    #[test]
    fn fcfs_is_identical() {
        let m = MachineConfig::load(MACHINE).unwrap();
        for policy in ["open", "closed"] {
            let o = serde_json::json!({"controller": {"scheduler": "fcfs", "row_policy": policy}});
            let cfg = MemoryConfig::resolve(&m.clone().with_overrides(&o).unwrap()).unwrap();
            for kind in [GeneratorKind::Random, GeneratorKind::Mix, GeneratorKind::Stream, GeneratorKind::Conflict] {
                for (seed, requests, outstanding) in [(42, 20_000, 64), (7, 3_000, 4)] {
                    let reqs = trace(&cfg, kind, requests, seed).unwrap();
                    let report = verify::compare(&cfg, &reqs, outstanding).unwrap();
                    assert!(report.identical(), "fcfs, {policy}, {kind:?}, seed {seed}, {outstanding} in flight:\n{report}");
                }
            }
        }
        let o = serde_json::json!({"dram": {"ranks": 2}, "controller": {"scheduler": "fcfs"}});
        let cfg = MemoryConfig::resolve(&m.with_overrides(&o).unwrap()).unwrap();
        let err = run_feed_on::<false, false, _>(&cfg, &mut SliceFeed::new(&[]).unwrap(), 4).err().unwrap();
        assert!(err.contains("scheduler fr-fcfs, not fcfs"), "{err}");
    }

    /// Two ranks: runs whose end falls before, during and after rank 0's first refresh (due at
    /// tREFI / 2, the ranks staggered) are identical, with and without that REF in them.
    #[test]
    fn two_rank_runs_ending_around_the_first_refresh_are_identical() {
        let m = MachineConfig::load(MACHINE).unwrap();
        let cfg = modelled(&MemoryConfig::resolve(&m.with_overrides(&serde_json::json!({"dram": {"ranks": 2}})).unwrap()).unwrap());
        let reqs = trace(&cfg, GeneratorKind::Mix, 1_200, 42).unwrap();
        let (mut with_ref, mut without) = (0, 0);
        for n in (900..=1_200).step_by(3) {
            let report = verify::compare(&cfg, &reqs[..n], OUTSTANDING).unwrap();
            assert!(report.identical(), "{n} requests:\n{report}");
            let refs = run_feed_on::<true, false, _>(&cfg, &mut SliceFeed::new(&reqs[..n]).unwrap(), OUTSTANDING).unwrap();
            if refs.commands.iter().any(|c| c.command == memtint_engine::dram::Command::Ref) {
                with_ref += 1;
            } else {
                without += 1;
            }
        }
        assert!(with_ref > 0 && without > 0, "the runs must straddle the first refresh ({with_ref} with, {without} without)");
    }
}
