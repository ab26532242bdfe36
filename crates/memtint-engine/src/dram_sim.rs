//! DRAM-trace simulation: a workload (trace file or generator) feeds the memory system either
//! closed-loop (a fixed number of requests in flight) or timestamped (each request at its
//! cycle). Time jumps from event to event; `cycle_by_cycle` visits every cycle instead, and the
//! two give identical results. With `check`, every issued command goes through the
//! independent `TimingChecker`.

use crate::checker::TimingChecker;
use crate::config::{MachineConfig, MachineSource, MemoryConfig};
use crate::controller::{Completion, Implementation, Origin};
use crate::error::{Error, Result};
use crate::memory_system::MemorySystem;
use crate::stats::dram_report;
use crate::trace::{DramTraceFormat, DramTraceReader, GeneratorSpec, RequestGenerator, TraceSource};
use crate::vector_isa::VectorIsa;
use crate::{Cycle, NEVER};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A DRAM-level run, as the CLI and the Python API describe it (JSON; docs/stats.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramRunSpec {
    /// Machine preset name, path to a machine TOML, or a machine table (the TOML schema).
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    #[serde(default)]
    pub row_policy: Option<String>,
    #[serde(default)]
    pub refresh: Option<String>,
    /// Partial machine table: `{"dram": {...}, "controller": {...}}`.
    #[serde(default)]
    pub overrides: Option<serde_json::Value>,
    pub workload: WorkloadSpec,
    #[serde(default = "default_outstanding")]
    pub outstanding: usize,
    #[serde(default)]
    pub check: bool,
    #[serde(default)]
    pub cycle_by_cycle: bool,
    /// Attribute request i to source i mod `sources` (for application-aware schedulers).
    #[serde(default = "one_source")]
    pub sources: u32,
    /// The driver loop's instruction-set level (`vector_isa.rs`): "best" (the default),
    /// "baseline", "x86-64-v2" or "x86-64-v3". Results are the same at every level.
    #[serde(default)]
    pub vector_isa: Option<String>,
}

fn default_outstanding() -> usize {
    32
}

fn one_source() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkloadSpec {
    Trace(TraceSpec),
    Generate(GeneratorSpec),
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub path: PathBuf,
    #[serde(default = "default_format")]
    pub format: String,
}

fn default_format() -> String {
    "ramulator".into()
}

impl DramRunSpec {
    /// The machine with this run's overrides applied.
    pub fn machine_config(&self) -> Result<MachineConfig> {
        let mut m = self.machine.load_with(self.overrides.as_ref(), self.mapping.as_deref(), self.scheduler.as_deref())?;
        if let Some(v) = &self.row_policy {
            m.controller.row_policy = v.clone();
        }
        if let Some(v) = &self.refresh {
            m.controller.refresh = v.clone();
        }
        Ok(m)
    }
}

/// Violations a run's statistics quote (all are counted).
pub const VIOLATION_EXAMPLES: usize = 20;

/// Options of the driver loop.
#[derive(Clone, Copy, Debug)]
pub struct DramSimOptions {
    /// Closed loop: requests in flight at once (ignored for timestamped traces).
    pub outstanding: usize,
    pub check: bool,
    pub cycle_by_cycle: bool,
    /// Keep every issued command in `RunTotals::commands` (memory grows with the run).
    pub keep_commands: bool,
    /// Requests are attributed round-robin to this many sources (request i to source i mod n),
    /// so application-aware schedulers see several applications; 1: all from source 0.
    pub sources: u32,
    /// The vector instruction set of the fused closed loop (`vector_isa.rs`); `None`: the best
    /// this CPU runs. Results are the same at every level.
    pub isa: Option<VectorIsa>,
}

impl DramSimOptions {
    pub fn new(outstanding: usize) -> Self {
        DramSimOptions { outstanding, check: false, cycle_by_cycle: false, keep_commands: false, sources: 1, isa: None }
    }
}

/// What a run produced besides the controllers' counters.
#[derive(Clone, Debug, Default)]
pub struct RunTotals {
    pub requests: u64,
    pub dram_cycles: Cycle,
    /// Cycles requests waited in the front end because their queue was full (summed).
    pub front_end_stalls: u64,
    pub commands_checked: u64,
    pub violations: u64,
    pub violation_examples: Vec<String>,
    pub wall_seconds: f64,
    pub timestamped: bool,
    /// The instruction-set level the run's hot code ran at (`simulate`: the fused loop's, else
    /// the lane controllers'; the baseline for recording fused runs and general controllers).
    pub vector_isa: VectorIsa,
    /// The issued commands, when `keep_commands` was set.
    pub commands: Vec<crate::dram::CommandRecord>,
}

/// Open the workload a spec names.
pub fn open_workload(spec: &WorkloadSpec, cfg: &MemoryConfig) -> Result<(Box<dyn TraceSource + Send>, bool)> {
    Ok(match spec {
        WorkloadSpec::Trace(t) => {
            let format = DramTraceFormat::from_name(&t.format)?;
            (Box::new(DramTraceReader::open(&t.path, format)?), format == DramTraceFormat::DramSim3)
        }
        WorkloadSpec::Generate(g) => {
            let mapping = cfg.mapping.clone();
            let encode = Box::new(move |d: &crate::dram::DramAddress| mapping.encode(d));
            (Box::new(RequestGenerator::new(g, &cfg.org, encode)?), false)
        }
    })
}

/// The independent timing checker for a memory system's device, organisation and timing,
/// expecting refreshes unless the controller does none.
pub fn timing_checker(cfg: &MemoryConfig) -> TimingChecker {
    TimingChecker::new(cfg.device.standard, &cfg.org, &cfg.timing).with_expect_refresh(cfg.controller.refresh != "none")
}

/// Simulate `source` on a fresh memory system. Returns the memory system (for its counters)
/// and the run totals.
pub fn simulate(
    cfg: &MemoryConfig,
    source: &mut dyn TraceSource,
    timestamped: bool,
    opts: DramSimOptions,
) -> Result<(MemorySystem, RunTotals)> {
    if opts.outstanding == 0 {
        return Err(Error::config("outstanding", "must be at least 1"));
    }
    let isa = opts.isa.map_or(Ok(VectorIsa::best()), VectorIsa::checked)?;
    let started = std::time::Instant::now();
    let mut mem = MemorySystem::new(cfg)?;
    mem.set_vector_isa(isa);
    mem.record_commands(opts.check || opts.keep_commands);
    let mut books = Books {
        checker: opts.check.then(|| timing_checker(cfg)),
        totals: RunTotals { timestamped, ..RunTotals::default() },
        commands: Vec::new(),
        completed: Vec::new(),
        opts,
    };
    // Closed loop on lane controllers: the fused driver (`closed_loop.rs`), same results.
    let fused = !timestamped && !opts.cycle_by_cycle && mem.implementation() == Implementation::Lanes;
    // The level the run's hot code ran at: the fused loop's entry, else the controllers'.
    let record = opts.check || opts.keep_commands;
    books.totals.vector_isa = if fused { crate::closed_loop::level(isa, record) } else { mem.vector_isa() };
    let (now, entered) = if fused {
        crate::closed_loop::run(&mut mem, source, &mut books, isa)?
    } else {
        general_loop(&mut mem, source, timestamped, &mut books)?
    };
    mem.finish(now);
    let Books { checker, mut totals, completed, .. } = books;
    totals.dram_cycles = now;
    if opts.check && (completed.len() as u64 != entered || completed.iter().any(|c| !c)) {
        return Err(Error::Violation(format!("{} requests entered but not all completed", entered)));
    }
    if let Some(c) = &checker {
        totals.commands_checked = c.commands_checked();
        totals.violations = c.violation_count();
        totals.violation_examples = c.violation_examples(VIOLATION_EXAMPLES);
    }
    totals.wall_seconds = started.elapsed().as_secs_f64();
    Ok((mem, totals))
}

/// What both driver loops keep besides the memory system: the run totals, the checker, and
/// (with `check`) which requests completed.
pub(crate) struct Books {
    pub checker: Option<TimingChecker>,
    pub totals: RunTotals,
    pub commands: Vec<crate::dram::CommandRecord>,
    pub completed: Vec<bool>,
    pub opts: DramSimOptions,
}

impl Books {
    /// Count the completions of a step and, with `check`, prove each request completes once.
    #[inline(always)]
    pub fn completions(&mut self, done: &[Completion], now: Cycle) -> Result<()> {
        self.totals.requests += done.len() as u64;
        if self.opts.check {
            for c in done {
                self.check_completed_once(c.id, now)?;
            }
        }
        Ok(())
    }

    /// `completions` for one request, without a list (the one-channel closed loop).
    #[inline(always)]
    pub fn completion(&mut self, id: u64, now: Cycle) -> Result<()> {
        self.totals.requests += 1;
        if self.opts.check {
            self.check_completed_once(id, now)?;
        }
        Ok(())
    }

    fn check_completed_once(&mut self, id: u64, now: Cycle) -> Result<()> {
        let id = id as usize;
        if self.completed.len() <= id {
            self.completed.resize(id + 1, false);
        }
        if std::mem::replace(&mut self.completed[id], true) {
            return Err(Error::Violation(format!("request {id} completed twice (cycle {now})")));
        }
        Ok(())
    }

    /// Pass the commands a step issued (drained into `self.commands`) to the checker and keep
    /// them if asked.
    #[inline]
    pub fn commands_issued(&mut self) {
        if let Some(checker) = self.checker.as_mut() {
            checker.observe_all(&self.commands);
        }
        if self.opts.keep_commands {
            self.totals.commands.append(&mut self.commands);
        } else {
            self.commands.clear();
        }
    }

    /// The error of a driver that found no next event.
    pub fn stalled(now: Cycle, in_flight: usize) -> Error {
        Error::config("engine", format!("internal error: simulation stalled at cycle {now} with {in_flight} requests in flight"))
    }
}

/// The drivers' front end: the next request's id and source (request i comes from source
/// i mod `sources`), and how long a request has waited for a full queue.
pub(crate) struct FrontEnd {
    pub next_id: u64,
    next_source: u32,
    sources: u32,
    blocked_since: Option<Cycle>,
}

impl FrontEnd {
    pub fn new(sources: u32) -> Self {
        FrontEnd { next_id: 0, next_source: 0, sources, blocked_since: None }
    }

    /// The origin of the next request.
    #[inline(always)]
    pub fn origin(&self) -> Origin {
        Origin::single(self.next_source)
    }

    /// The next request found its queue full at `now`.
    #[inline(always)]
    pub fn refused(&mut self, now: Cycle) {
        self.blocked_since.get_or_insert(now);
    }

    /// The next request entered at `now`: count the cycles it waited, move to the next one.
    #[inline(always)]
    pub fn entered(&mut self, now: Cycle, totals: &mut RunTotals) {
        if let Some(since) = self.blocked_since.take() {
            totals.front_end_stalls += now - since;
        }
        self.next_id += 1;
        // No division on the hot path.
        self.next_source += 1;
        if self.next_source >= self.sources {
            self.next_source = 0;
        }
    }
}

/// The driver loop for every implementation and mode: tick the memory system, let requests in,
/// jump to the next event. Returns the final cycle and the number of requests that entered.
fn general_loop(mem: &mut MemorySystem, source: &mut dyn TraceSource, timestamped: bool, books: &mut Books) -> Result<(Cycle, u64)> {
    let opts = books.opts;
    let mut done: Vec<Completion> = Vec::new();
    let mut pending = None;
    let mut front = FrontEnd::new(opts.sources);
    let mut exhausted = false;
    let mut in_flight = 0usize;
    let mut now: Cycle = 0;
    loop {
        mem.tick(now, &mut done, opts.cycle_by_cycle);
        in_flight -= done.len();
        books.completions(&done, now)?;
        done.clear();
        if opts.check || opts.keep_commands {
            mem.drain_commands(&mut books.commands);
            books.commands_issued();
        }
        // Inject what may enter now, in order.
        loop {
            if pending.is_none() && !exhausted {
                pending = source.next_request()?;
                exhausted = pending.is_none();
            }
            let Some(req) = pending else { break };
            let may_enter = if timestamped { req.arrival.unwrap_or(0) <= now } else { in_flight < opts.outstanding };
            if !may_enter {
                break;
            }
            if !mem.try_enqueue(now, front.next_id, req.addr, req.is_write, front.origin()) {
                front.refused(now);
                break;
            }
            front.entered(now, &mut books.totals);
            in_flight += 1;
            pending = None;
        }
        if exhausted && in_flight == 0 {
            break;
        }
        let next = if opts.cycle_by_cycle {
            now + 1
        } else {
            // A completion matters in its own cycle only when it lets a request in (closed loop
            // at its limit) or may end the run; otherwise a later tick retires it, in order,
            // and nothing it affects has changed.
            let completion_matters = exhausted || (!timestamped && in_flight >= opts.outstanding);
            let mut n = if completion_matters { mem.next_event() } else { mem.next_work() };
            if let Some(req) = pending {
                if timestamped {
                    n = n.min(req.arrival.unwrap_or(0).max(now + 1));
                }
            }
            n
        };
        if next == NEVER || next <= now {
            return Err(Books::stalled(now, in_flight));
        }
        now = next;
    }
    Ok((now, front.next_id))
}

/// Run a spec end to end and return the statistics as JSON (the documented schema).
pub fn run(spec: &DramRunSpec) -> Result<serde_json::Value> {
    let machine = spec.machine_config()?;
    let cfg = MemoryConfig::resolve(&machine)?;
    let (mut source, timestamped) = open_workload(&spec.workload, &cfg)?;
    if spec.sources == 0 {
        return Err(Error::config("run spec sources", "must be at least 1"));
    }
    let opts = DramSimOptions {
        check: spec.check,
        cycle_by_cycle: spec.cycle_by_cycle,
        sources: spec.sources,
        isa: spec.vector_isa.as_deref().map(VectorIsa::from_name).transpose()?,
        ..DramSimOptions::new(spec.outstanding)
    };
    let (mem, totals) = simulate(&cfg, source.as_mut(), timestamped, opts)?;
    if totals.requests == 0 {
        if let WorkloadSpec::Trace(t) = &spec.workload {
            return Err(Error::config(
                "workload",
                format!("{}: the trace has no requests (an empty file, or only comments and blank lines)", t.path.display()),
            ));
        }
    }
    let mut stats = dram_report::report(&cfg, &mem, &totals, opts);
    // The workload as given, so the statistics say how to reproduce them.
    stats["config"]["workload"] = serde_json::to_value(&spec.workload).expect("workload serialises");
    Ok(stats)
}

/// `run` with a JSON spec in and JSON statistics out (the Python extension's entry point).
pub fn run_json(spec: &str) -> Result<String> {
    let spec: DramRunSpec = serde_json::from_str(spec).map_err(|e| Error::config("run spec", e.to_string()))?;
    Ok(run(&spec)?.to_string())
}
