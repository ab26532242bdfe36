//! Exactness of the lean controller: run the production engine (`dram_sim::simulate` with
//! `keep_commands`) and the lean one on the same requests, compare the command streams record
//! for record (cycle, command, bank, row, column), the run length, the read-latency
//! distribution and the counters both keep (`ChannelStats`: commands per bank and rank, row
//! hits, misses and conflicts, reads, writes, write-mode switches, busy data cycles, the queue occupancy integrals),
//! and run the independent `TimingChecker` over the lean stream.

use super::lean_controller::{run_feed_on, Counters, SliceFeed};
use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::CommandRecord;
use memtint_engine::dram_sim::{simulate, timing_checker, DramSimOptions};
use memtint_engine::stats::latency::LatencySummary;
use memtint_engine::trace::{DramRequest, VecSource};

pub struct Report {
    pub requests: usize,
    pub commands: usize,
    pub production_commands: usize,
    /// Index and the two records of the first difference (`None` past the end of a stream).
    pub first_divergence: Option<(usize, Option<CommandRecord>, Option<CommandRecord>)>,
    pub cycles: (u64, u64),
    pub latency: (LatencySummary, LatencySummary),
    pub completed: (u64, u64),
    /// The first counter that differs: (name, lean, production).
    pub counter_difference: Option<(String, String, String)>,
    pub violations: u64,
    pub first_violation: Option<String>,
}

impl Report {
    pub fn identical(&self) -> bool {
        self.first_divergence.is_none()
            && self.cycles.0 == self.cycles.1
            && self.latency.0 == self.latency.1
            && self.completed.0 == self.completed.1
            && self.counter_difference.is_none()
            && self.violations == 0
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |r: &Option<CommandRecord>| r.map_or("(end of stream)".to_string(), |r| r.to_string());
        match &self.first_divergence {
            None => write!(
                f,
                "command stream: identical to the production controller's on the first {} requests ({} commands)",
                self.requests, self.commands
            )?,
            Some((i, lean, prod)) => write!(
                f,
                "command stream: DIFFERS at command {i} of {} (production {}): lean {}, production {}",
                self.commands,
                self.production_commands,
                show(lean),
                show(prod)
            )?,
        }
        write!(f, "\nrun length: {} cycles (production {})", self.cycles.0, self.cycles.1)?;
        write!(f, "; completed {} (production {})", self.completed.0, self.completed.1)?;
        let (l, p) = (&self.latency.0, &self.latency.1);
        write!(
            f,
            "\nread latency mean/p50/p99/max: {:.3}/{}/{}/{} (production {:.3}/{}/{}/{}){}",
            l.mean,
            l.p50,
            l.p99,
            l.max,
            p.mean,
            p.p50,
            p.p99,
            p.max,
            if l == p { "" } else { " DIFFERS" }
        )?;
        match &self.counter_difference {
            None => write!(f, "\ncounters (commands per bank and rank, row hits/misses/conflicts, reads, writes, direction switches, busy cycles, queue integrals): identical")?,
            Some((name, l, p)) => write!(f, "\ncounters DIFFER: {name} is {l} (production {p})")?,
        }
        write!(f, "\nindependent timing checker on the lean stream: {} violations", self.violations)?;
        if let Some(v) = &self.first_violation {
            write!(f, " (first: {v})")?;
        }
        Ok(())
    }
}

/// Run both controllers on `requests` with `outstanding` in flight and compare.
/// Both run `modelled(cfg)`.
pub fn compare(cfg: &MemoryConfig, requests: &[DramRequest], outstanding: usize) -> Result<Report, String> {
    let cfg = &super::lean_controller::modelled(cfg);
    let opts = DramSimOptions { keep_commands: true, ..DramSimOptions::new(outstanding) };
    let mut src = VecSource::new(requests.to_vec());
    let (mem, totals) = simulate(cfg, &mut src, false, opts).map_err(|e| format!("production engine: {e}"))?;
    let prod = &totals.commands;
    let lean = run_feed_on::<true, true, _>(cfg, &mut SliceFeed::new(requests)?, outstanding)?;

    let first_divergence = (0..lean.commands.len().max(prod.len()))
        .find(|&i| lean.commands.get(i) != prod.get(i))
        .map(|i| (i, lean.commands.get(i).copied(), prod.get(i).copied()));
    let mut checker = timing_checker(cfg);
    checker.observe_all(&lean.commands);
    let first_violation = checker.violation_examples(1).pop();
    let stats = mem.channels()[0].stats();
    let prod_latency = &stats.read_latency;
    let counter_difference = first_counter_difference(lean.counters.as_deref().expect("counted"), stats);
    Ok(Report {
        requests: requests.len(),
        commands: lean.commands.len(),
        production_commands: prod.len(),
        first_divergence,
        cycles: (lean.cycles, totals.dram_cycles),
        latency: (lean.read_latency.summary(), prod_latency.summary()),
        completed: (lean.requests, totals.requests),
        counter_difference,
        violations: checker.violation_count(),
        first_violation,
    })
}

fn first_counter_difference(k: &Counters, p: &memtint_engine::stats::ChannelStats) -> Option<(String, String, String)> {
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    let mut add = |name: String, l: String, r: String| pairs.push((name, l, r));
    for (b, pb) in p.banks.iter().enumerate() {
        add(format!("bank {b} commands"), format!("{:?}", k.commands[b]), format!("{:?}", pb.commands));
        add(format!("bank {b} row hits"), k.row_hits[b].to_string(), pb.row_hits.to_string());
        add(format!("bank {b} row misses"), k.row_misses[b].to_string(), pb.row_misses.to_string());
        add(format!("bank {b} row conflicts"), k.row_conflicts[b].to_string(), pb.row_conflicts.to_string());
    }
    for (r, pr) in p.rank_commands.iter().enumerate() {
        add(format!("rank {r} commands"), format!("{:?}", k.rank_commands[r]), format!("{:?}", pr));
    }
    add("reads".into(), k.reads.to_string(), p.reads.to_string());
    add("writes".into(), k.writes.to_string(), p.writes.to_string());
    add("write mode switches".into(), k.write_mode_switches.to_string(), p.write_mode_switches.to_string());
    add("busy data cycles".into(), k.busy_data_cycles.to_string(), p.busy_data_cycles.to_string());
    add("read queue integral".into(), k.read_queue_integral.to_string(), p.read_queue_integral.to_string());
    add("write queue integral".into(), k.write_queue_integral.to_string(), p.write_queue_integral.to_string());
    pairs.into_iter().find(|(_, l, r)| l != r)
}
