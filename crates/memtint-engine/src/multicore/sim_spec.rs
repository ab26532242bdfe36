//! A multi-programmed run as the CLI and the Python API describe it (JSON or TOML; the
//! statistics schema is in docs/stats.md, "CPU-trace runs"), and its statistics.

use super::dram_export::DramExportSpec;
use super::multicore_sim::{pinned_threads, simulate_threads_exported, simulate_threads_sampled, MulticoreResult, ThreadDef};
use super::phase_sampling as phases;
use super::sampling::SamplingSpec;
use crate::config::{MachineConfig, MachineSource, MemoryConfig};
use crate::dram::energy::CommandEnergy;
use crate::dram_sim::report as dram_report;
use crate::dram_sim::DramSimOptions;
use crate::error::{Error, Result};
use crate::os::OsConfig;
use crate::stats::{RowCauseCounts, RowOutcomesByKind};
use crate::workload::open_cpu_workload;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Version of the CPU-trace run schema; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Machine preset name, path to a machine TOML, or a machine table (the TOML schema).
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Partial machine table (`{"cpu": {...}, "cache": {...}, "controller": {...}}`).
    #[serde(default)]
    pub overrides: Option<Value>,
    /// One per core: a built-in profile (`stream`, `random:reads_pki=20`, ...) or a trace path;
    /// each is a single-threaded process pinned to its core. Give this or `processes`.
    #[serde(default)]
    pub programs: Vec<String>,
    /// Processes with threads (one trace each), scheduled by the per-core CFS (docs/threads.md).
    #[serde(default)]
    pub processes: Option<Vec<ProcessSpec>>,
    /// Instructions each core must retire.
    pub instructions: u64,
    /// Instructions each thread executes before statistics start, through the page tables and
    /// caches without DRAM timing (a functional warm-up; 0: none). `memtint compare` and sweeps
    /// default to 20 M.
    #[serde(default)]
    pub warmup: u64,
    /// The OS model: placement policy and its colours.
    #[serde(default)]
    pub os: OsConfig,
    /// Seed of the synthetic programs (program i uses seed + i) and, unless `os.seed` is set
    /// apart from its default, of the OS frame order.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Check every DRAM command with the independent timing checker (slower); the statistics'
    /// `dram` section then has `violations`, `commands_checked` and `violation_examples`.
    #[serde(default)]
    pub check: bool,
    /// Write the DRAM request stream to a file as the run goes (`dram_export.rs`):
    /// `{"path": ..., "format": "dramsim3" | "ramulator"}`.
    #[serde(default)]
    pub export_dram: Option<DramExportSpec>,
    /// What a thread does once it has retired `instructions`: `continue` (the default; every
    /// thread is measured under the same contention, the multiprogrammed rule) or `wait` (it
    /// waits at its program's end, as one SPMD program's threads do). A process may set its own.
    #[serde(default)]
    pub at_end: AtEnd,
    /// Every this many instructions each thread waits for the run's other threads (a barrier,
    /// as at the end of an OpenMP loop; docs/threads.md): the run is one SPMD job, whose
    /// processes may stand for threads with private data. A process that sets its own
    /// synchronises only its threads. `None`: no barriers inside the run.
    #[serde(default)]
    pub barrier_every: Option<u64>,
    /// Sampled simulation (`sampling.rs`, docs/sampling.md): detailed units with functional
    /// warming between them and a 95 % interval on each estimate. `None`: every instruction in
    /// detail.
    #[serde(default)]
    pub sampling: Option<SamplingSpec>,
}

/// What a thread does after its target (`SimSpec::at_end`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AtEnd {
    /// Keep running with frozen statistics.
    #[default]
    Continue,
    /// Wait at the program's end barrier: hold its core (spin-wait, OpenMP's default wait
    /// policy) and issue nothing, so its program's run time is its last thread's.
    Wait,
    /// Leave: as `Wait`, and once its last thread is done the process exits and its pages go
    /// back to the allocator (an open mix's departure: a dynamic policy sees it own nothing).
    Exit,
}

/// A process: its threads share its address space (page table) and colours.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub threads: Vec<ThreadSpec>,
    /// Default nice of its threads (-20..19; CFS weight and CCPS priority).
    #[serde(default)]
    pub nice: i32,
    /// Default affinity of its threads (cores); none: every core.
    #[serde(default)]
    pub affinity: Option<Vec<u32>>,
    /// `SimSpec::at_end` for this process's threads (default: the run's).
    #[serde(default)]
    pub at_end: Option<AtEnd>,
    /// Instructions each of its threads retires (default: the run's `instructions`): programs of
    /// different lengths in one run.
    #[serde(default)]
    pub instructions: Option<u64>,
    /// Barriers among this process's threads only (`SimSpec::barrier_every`).
    #[serde(default)]
    pub barrier_every: Option<u64>,
    /// When its threads start, ns of simulated time (default 0): an open mix's arrival. Its
    /// threads need cores of their own (no thread shares its core).
    #[serde(default)]
    pub arrive_ns: f64,
}

/// A thread: a program (profile or trace path), or a table with its own affinity and nice.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum ThreadSpec {
    Program(String),
    Table {
        program: String,
        #[serde(default)]
        affinity: Option<Vec<u32>>,
        #[serde(default)]
        nice: Option<i32>,
        /// Its own instruction target (default: its process's, else the run's).
        #[serde(default)]
        instructions: Option<u64>,
    },
}

/// Parsed by hand for clear messages (an untagged enum only says "did not match any variant"),
/// with a visitor so a mistake inside a table keeps its key path.
impl<'de> Deserialize<'de> for ThreadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            program: String,
            #[serde(default)]
            affinity: Option<Vec<u32>>,
            #[serde(default)]
            nice: Option<i32>,
            #[serde(default)]
            instructions: Option<u64>,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ThreadSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a program (profile name or trace path) or a table {program, affinity, nice, instructions}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<ThreadSpec, E> {
                Ok(ThreadSpec::Program(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<ThreadSpec, A::Error> {
                let t = Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(ThreadSpec::Table { program: t.program, affinity: t.affinity, nice: t.nice, instructions: t.instructions })
            }
        }
        d.deserialize_any(V)
    }
}

impl ThreadSpec {
    pub fn program(&self) -> &str {
        match self {
            ThreadSpec::Program(p) => p,
            ThreadSpec::Table { program, .. } => program,
        }
    }
}

/// One thread of a run, flattened in creation order.
struct ThreadPlan {
    /// Where the run file gives it (`processes[0].threads[1]`), for errors about its program.
    key: String,
    program: String,
    process: u32,
    nice: i32,
    affinity: Option<Vec<u32>>,
    wait_at_end: bool,
    exit_at_end: bool,
    arrive_ns: f64,
    instructions: Option<u64>,
    barrier: Option<(u32, u64)>,
}

fn default_seed() -> u64 {
    1
}

impl SimSpec {
    pub fn machine_config(&self) -> Result<MachineConfig> {
        self.machine.load_with(self.overrides.as_ref(), self.mapping.as_deref(), self.scheduler.as_deref())
    }

    /// The threads in creation order; `None` for a plain program list (one per core, pinned).
    fn threads(&self, cores: u32) -> Result<Option<Vec<ThreadPlan>>> {
        if self.barrier_every == Some(0) {
            return Err(Error::config("barrier_every", "must be at least 1 instruction"));
        }
        let Some(procs) = &self.processes else { return Ok(None) };
        if !self.programs.is_empty() {
            return Err(Error::config("programs", "give either programs (one per core) or processes, not both"));
        }
        if procs.is_empty() {
            return Err(Error::config("processes", "give at least one process"));
        }
        let mut plan = Vec::new();
        for (p, proc_) in procs.iter().enumerate() {
            if let Some(name) = &proc_.name {
                if name.trim().is_empty() {
                    return Err(Error::config(format!("processes[{p}].name"), "is empty: name the process or leave the key out"));
                }
                // The statistics name processes: two of one name could not be told apart.
                if let Some(q) = procs[..p].iter().position(|o| o.name.as_ref() == Some(name)) {
                    return Err(Error::config(
                        format!("processes[{p}].name"),
                        format!("{name:?} is also process {q}'s name; give each process its own"),
                    ));
                }
            }
            if proc_.threads.is_empty() {
                return Err(Error::config(
                    format!("processes[{p}].threads"),
                    "a process needs at least one thread (a profile name or a trace path)",
                ));
            }
            if proc_.instructions == Some(0) {
                return Err(Error::config(format!("processes[{p}].instructions"), "must be at least 1 instruction"));
            }
            if proc_.barrier_every == Some(0) {
                return Err(Error::config(format!("processes[{p}].barrier_every"), "must be at least 1 instruction"));
            }
            if !(proc_.arrive_ns.is_finite() && (0.0..=1e12).contains(&proc_.arrive_ns)) {
                return Err(Error::config(
                    format!("processes[{p}].arrive_ns"),
                    format!("must be between 0 and 10^12 ns, got {}", proc_.arrive_ns),
                ));
            }
            for (j, t) in proc_.threads.iter().enumerate() {
                let (affinity, nice, own) = match t {
                    ThreadSpec::Program(_) => (proc_.affinity.clone(), proc_.nice, None),
                    ThreadSpec::Table { affinity, nice, instructions, .. } => {
                        (affinity.clone().or_else(|| proc_.affinity.clone()), nice.unwrap_or(proc_.nice), *instructions)
                    }
                };
                if own == Some(0) {
                    return Err(Error::config(format!("processes[{p}].threads[{j}].instructions"), "must be at least 1 instruction"));
                }
                if let Err(e) = crate::os::cfs::nice_weight(nice) {
                    // Named where it was written: the thread's own nice, or its process's.
                    let key = match t {
                        ThreadSpec::Table { nice: Some(_), .. } => format!("processes[{p}].threads[{j}].nice"),
                        _ => format!("processes[{p}].nice"),
                    };
                    return Err(Error::config(key, e.reason()));
                }
                // Named where it was written, as nice is (the engine's own check knows only thread numbers).
                let affinity_key = match t {
                    ThreadSpec::Table { affinity: Some(_), .. } => format!("processes[{p}].threads[{j}].affinity"),
                    _ => format!("processes[{p}].affinity"),
                };
                if let Some(reason) = affinity.as_deref().and_then(|a| super::multicore_sim::affinity_problem(a, cores)) {
                    return Err(Error::config(affinity_key, reason));
                }
                let at_end = proc_.at_end.unwrap_or(self.at_end);
                let wait_at_end = at_end != AtEnd::Continue;
                let instructions = own.or(proc_.instructions);
                // Group p: the process's own barriers; group `procs.len()`: the run's.
                let barrier = match (proc_.barrier_every, self.barrier_every) {
                    (Some(n), _) => Some((p as u32, n)),
                    (None, Some(n)) => Some((procs.len() as u32, n)),
                    (None, None) => None,
                };
                plan.push(ThreadPlan {
                    key: format!("processes[{p}].threads[{j}]"),
                    program: t.program().to_string(),
                    process: p as u32,
                    nice,
                    affinity,
                    wait_at_end,
                    exit_at_end: at_end == AtEnd::Exit,
                    arrive_ns: proc_.arrive_ns,
                    instructions,
                    barrier,
                });
            }
        }
        Ok(Some(plan))
    }

    /// Program of every thread, in creation order.
    pub fn thread_programs(&self) -> Vec<String> {
        match &self.processes {
            Some(ps) => ps.iter().flat_map(|p| p.threads.iter().map(|t| t.program().to_string())).collect(),
            None => self.programs.clone(),
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Run a spec and return its statistics.
pub fn run_sim(spec: &SimSpec) -> Result<Value> {
    let machine = spec.machine_config()?;
    let cfg = MemoryConfig::resolve(&machine)?;
    if spec.threads(machine.cpu.cores)?.is_none() && spec.programs.is_empty() {
        return Err(Error::config("programs", "give at least one program (a profile name or a trace path)"));
    }
    let mut os = spec.os.clone();
    // An [os] seed left unset follows the run's.
    os.seed = Some(os.seed.unwrap_or(spec.seed));
    let open = || -> Result<Vec<ThreadDef>> {
        match spec.threads(machine.cpu.cores)? {
            None => {
                let programs = spec
                    .programs
                    .iter()
                    .enumerate()
                    .map(|(i, p)| open_cpu_workload(p, spec.seed.wrapping_add(i as u64)).map_err(|e| at_key(format!("programs[{i}]"), e)))
                    .collect::<Result<Vec<_>>>()?;
                let mut threads = pinned_threads(&cfg, programs)?;
                for t in &mut threads {
                    t.wait_at_end = spec.at_end != AtEnd::Continue;
                    t.exit_at_end = spec.at_end == AtEnd::Exit;
                    t.barrier = spec.barrier_every.map(|n| (0, n));
                }
                Ok(threads)
            }
            Some(plan) => plan
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    Ok(ThreadDef {
                        trace: open_cpu_workload(&t.program, spec.seed.wrapping_add(i as u64)).map_err(|e| at_key(t.key, e))?,
                        process: t.process,
                        nice: t.nice,
                        affinity: t.affinity,
                        wait_at_end: t.wait_at_end,
                        exit_at_end: t.exit_at_end,
                        arrive_ns: t.arrive_ns,
                        instructions: t.instructions,
                        barrier: t.barrier,
                    })
                })
                .collect(),
        }
    };
    let result = match &spec.sampling {
        None => simulate_threads_exported(&cfg, &os, open()?, spec.instructions, spec.warmup, spec.check, spec.export_dram.as_ref())?,
        Some(sampling) => run_sampled(&cfg, &os, spec, sampling, open)?,
    };
    Ok(report(&cfg, spec, &os, &result))
}

/// A sampled run; with `target_error`, a second pass when the first misses it, with the units
/// its variation asks for (n = (z CV / e)^2, SMARTS's procedure), or a warning when the run's
/// length cannot hold them.
fn run_sampled(
    cfg: &MemoryConfig,
    os: &OsConfig,
    spec: &SimSpec,
    sampling: &SamplingSpec,
    open: impl Fn() -> Result<Vec<ThreadDef>>,
) -> Result<MulticoreResult> {
    if spec.export_dram.is_some() {
        return Err(Error::config(
            "export_dram",
            "a sampled run's request stream would miss the skipped instructions; run without sampling",
        ));
    }
    // Phases: the program's intervals clustered once, before the run (`phase_sampling.rs`); a run of
    // several programs goes on without a plan, to be refused by key.
    let signatures = if sampling.mode == "phases" {
        sampling.validate(spec.instructions)?;
        let mut threads = open()?;
        match threads.as_mut_slice() {
            [one] => Some(phases::signatures(one.trace.as_mut(), spec.warmup, spec.instructions, sampling.period(spec.instructions))?),
            _ => None,
        }
    } else {
        None
    };
    let plan_for = |s: &SamplingSpec| signatures.as_ref().map(|sig| phases::plan(sig, s, s.period(spec.instructions), os.seed()));
    let plan = plan_for(sampling);
    let mut result = simulate_threads_sampled(cfg, os, open()?, spec.instructions, spec.warmup, spec.check, sampling, plan.as_ref())?;
    // A replayed schedule is run as given: the run it came from met the target (or warned).
    let Some(target) = sampling.target_error.filter(|_| sampling.schedule.is_none()) else { return Ok(result) };
    let first = result.sampling.as_mut().expect("sampled");
    let error = first.worst_error();
    if error <= target {
        return Ok(result);
    }
    if let Some(plan) = &plan {
        // Phases: more units, shared among the same phases; at most one per interval.
        let needed = first.units_for(target);
        if needed as usize > plan.labels.len() {
            first.warnings.push(format!(
                "sampling.target_error = {} cannot be met in instructions = {}: {} units are needed and the run has {} intervals of sampling.period = {}; reached {error:.4}",
                fraction(target),
                spec.instructions,
                if needed == u64::MAX { "more".to_string() } else { format!("about {needed}") },
                plan.labels.len(),
                plan.interval
            ));
            return Ok(result);
        }
        let again = SamplingSpec { min_units: needed, ..sampling.clone() };
        let plan = plan_for(&again);
        let mut second = simulate_threads_sampled(cfg, os, open()?, spec.instructions, spec.warmup, spec.check, &again, plan.as_ref())?;
        let rec = second.sampling.as_mut().expect("sampled");
        rec.passes = 2;
        let error = rec.worst_error();
        if error > target {
            rec.warnings.push(format!(
                "sampling.target_error = {} not met after a second pass with {needed} units: reached {error:.4}",
                fraction(target)
            ));
        }
        return Ok(second);
    }
    let (period, needed) = first.period_for(target);
    let shortest = sampling.unit + sampling.warming;
    if period < shortest {
        let fit = spec.instructions / shortest;
        let needed = if needed > fit {
            format!("more than the {fit} units of unit + warming = {shortest} the run holds")
        } else {
            format!("about {needed} units")
        };
        first.warnings.push(format!(
            "sampling.target_error = {} cannot be met in instructions = {}: the most variable core needs {needed}, which needs a period below unit + warming ({shortest}); reached {error:.4}",
            fraction(target),
            spec.instructions
        ));
        return Ok(result);
    }
    let again = SamplingSpec { period: Some(period), ..sampling.clone() };
    let mut second = simulate_threads_sampled(cfg, os, open()?, spec.instructions, spec.warmup, spec.check, &again, None)?;
    let rec = second.sampling.as_mut().expect("sampled");
    rec.passes = 2;
    let reached = rec.worst_error();
    if reached > target {
        // A program faster than the slowest gets no more units from a shorter period once its
        // segments are at their floor (`SampledRun::finish` warns of it), so its interval can
        // come out wider by chance; the second pass stands, as the larger sample.
        rec.warnings.push(format!(
            "sampling.target_error = {} not met after a second pass with period {period}: reached {reached:.4} (the first pass, period {}: {error:.4})",
            fraction(target),
            sampling.period(spec.instructions)
        ));
    }
    Ok(second)
}

/// The words of the warning for a replayed trace, which front ends that warn before a run
/// recognise.
pub const REPLAYED: &str = "its trace ended and was replayed from its start";

/// A fraction as the user would write it: decimal, or in exponent form when tiny.
fn fraction(x: f64) -> String {
    if x >= 1e-6 {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// A program that cannot be opened, named by its key in the run (a file's own parse errors keep
/// their file and line).
fn at_key(key: String, e: Error) -> Error {
    match e {
        Error::Io { .. } | Error::UnknownName { .. } => Error::config(key, e.to_string()),
        // A program's own key (phases, a profile's parameter) is inside the program string the run
        // file gives at `key`: both, or the error names no line of the file.
        e @ Error::Config { .. } => Error::config(key, e.keyed_reason()),
        e => e,
    }
}

/// `run_sim` with JSON in and out (the Python extension's entry point).
pub fn run_sim_json(spec: &str) -> Result<String> {
    let spec: SimSpec = crate::error::from_json(spec, "sim spec")?;
    Ok(run_sim(&spec)?.to_string())
}

/// A multi-node run's per-node statistics (docs/stats.md, "nodes"): each node's traffic and
/// pages (numastat's view), each process's pages per node, each thread's local and remote
/// requests.
fn add_nodes(out: &mut Value, t: &crate::config::Topology, r: &MulticoreResult, tck: f64) {
    let simulated_ns = r.totals.dram_cycles as f64 * tck;
    let channel_nodes = r.memory.channel_nodes();
    let n = t.layout.nodes.len();
    let (mut reads, mut writes) = (vec![0u64; n], vec![0u64; n]);
    for (ch, c) in r.memory.channels().iter().enumerate() {
        reads[channel_nodes[ch] as usize] += c.stats().reads;
        writes[channel_nodes[ch] as usize] += c.stats().writes;
    }
    let line = t.memories.iter().flatten().next().map_or(64, |m| m.org.burst_bytes());
    let gbps = |lines: u64| if simulated_ns > 0.0 { (lines * line) as f64 / simulated_ns } else { 0.0 };
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            let info = &t.layout.nodes[i];
            json!({
                "node": i,
                "name": t.names[i],
                "cores": info.cores.clone().collect::<Vec<_>>(),
                "memory_bytes": t.memories[i].as_ref().map_or(0, |m| 1u64 << m.mapping.capacity_bits()),
                "peak_gbps": info.bandwidth_gbps,
                "reads": reads[i],
                "writes": writes[i],
                "bytes": (reads[i] + writes[i]) * line,
                "bandwidth_gbps": gbps(reads[i] + writes[i]),
                "pages": r.node_pages.get(i).copied().unwrap_or(0),
            })
        })
        .collect();
    out["nodes"] = json!(nodes);
    out["fallback_pages"] = json!(r.fallback_pages);
    if let Some(ps) = out["processes"].as_array_mut() {
        for (p, v) in ps.iter_mut().enumerate() {
            v["pages_per_node"] = json!(r.pages_per_node.get(p));
        }
    }
    if let Some(cs) = out["cores"].as_array_mut() {
        for (v, c) in cs.iter_mut().zip(&r.cores) {
            if let Some(a) = &c.memory.nodes {
                let all = a.local_reads + a.remote_reads;
                v["node_accesses"] = json!(a);
                v["remote_read_fraction"] = json!(if all == 0 { 0.0 } else { a.remote_reads as f64 / all as f64 });
            }
        }
    }
}

fn report(cfg: &MemoryConfig, spec: &SimSpec, os: &OsConfig, r: &MulticoreResult) -> Value {
    let tck = cfg.timing.tCK_ns;
    let global_bank = |b: &u32| *b;
    let has_barriers = spec.barrier_every.is_some() || spec.processes.iter().flatten().any(|p| p.barrier_every.is_some());
    let waits_at_end: Vec<bool> = match &spec.processes {
        Some(ps) => ps.iter().map(|p| p.at_end.unwrap_or(spec.at_end) != AtEnd::Continue).collect(),
        None => vec![spec.at_end != AtEnd::Continue; r.processes as usize],
    };
    // Each thread's own DRAM commands' energy (docs/energy.md); one-node machines, whose every
    // request meets one device.
    let per_command = match &cfg.topology {
        None => cfg.device.power(cfg.org.density_gbit, cfg.org.device_width).map(|p| CommandEnergy::new(p, &cfg.timing, &cfg.org)),
        Some(_) => None,
    };
    let cores: Vec<Value> = r
        .cores
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = &c.memory;
            let lat = m.read_latency.summary_or_none();
            let lat_ns = lat.scaled(tck);
            let mut v = json!({
                "core": i,
                "program": c.program,
                "instructions": c.core.retired,
                "cycles": c.core.cycles,
                "ipc": c.core.ipc(),
                "l2_hits": m.l2_hits,
                "llc_accesses": m.llc_accesses,
                "llc_misses": m.llc_misses,
                "llc_mpki": 1000.0 * ratio(m.llc_misses, c.core.retired),
                "dram_reads": m.dram_reads,
                "dram_writes": m.dram_writes,
                "row_hits": m.row_hits,
                "row_misses": m.row_misses,
                "row_conflicts": m.row_conflicts,
                "row_buffer_miss_rate": m.row_buffer_miss_rate(),
                "row_outcomes_by_kind": m.row_outcomes_by_kind,
                "refresh_met_requests": m.refresh_met,
                "throttled_requests": m.throttled_requests,
                "throttle_delay_cycles": m.throttle_delay_cycles,
                "llc_lines": m.llc_lines,
                "llc_lines_mean": m.llc_lines_mean,
                "bank_level_parallelism": m.bank_parallelism.bank_level_parallelism(),
                "read_latency": lat,
                "read_latency_ns": lat_ns,
                "pages": c.placement.pages,
                "colour_overflow_pages": c.placement.colour_overflow_pages,
                "colours": c.placement.colours,
                "banks_used": c.placement.banks_used.len(),
                "channels_used": c.placement.channels_used.len(),
                "banks": c.placement.banks_used.iter().map(global_bank).collect::<Vec<_>>(),
                "channels": c.placement.channels_used,
                "core_stats": c.core,
                "thread": i,
                "process": c.process,
                "context_switches": c.sched.context_switches,
                "migrations": c.sched.migrations,
                "first_core": c.sched.first_core,
                "last_core": c.sched.last_core,
                "run_cycles": c.run_cycles,
                "finished_at": c.finished_at,
                "warmup_wraps": c.warmup_wraps,
            });
            dram_report::add_row_causes(&mut v, &m.row_causes);
            if let Some(e) = &per_command {
                // A row miss or conflict is one activation; refresh and standby are the run's.
                let acts = (m.row_misses + m.row_conflicts) as f64;
                v["dram_energy_nj"] = json!(acts * e.act_pre + m.dram_reads as f64 * e.read + m.dram_writes as f64 * e.write);
            }
            if has_barriers {
                v["barriers"] = json!(c.barriers);
                v["barrier_wait_cycles"] = json!(c.barrier_wait_cycles);
            }
            if let Some(pm) = &m.page_migration {
                v["page_migration"] = json!(pm);
            }
            v["time_breakdown"] = time_breakdown(&c.core, m.page_migration.as_ref().map_or(0, |p| p.system_cycles));
            // Only with a prefetcher, so runs without one report exactly what they did before.
            if let Some(p) = &m.prefetch {
                v["prefetch"] = json!(p);
                v["prefetch_accuracy"] = json!(ratio(p.useful + p.late, p.issued));
            }
            v
        })
        .collect();
    // A sampled run's cores measured different shares of their instructions (a faster core's
    // units are longer, a replaying one may measure fewer): each core's counts are scaled to the
    // run's instructions before they are summed into the mix's figures (`SampledRun::scale`), as
    // every core counts its `instructions` in a detailed run; 1 in a detailed run.
    let scales: Vec<f64> = (0..r.cores.len()).map(|c| r.sampling.as_ref().map_or(1.0, |s| s.scale(c))).collect();
    let (hits, all) = r.cores.iter().zip(&scales).fold((0.0, 0.0), |(h, a), (c, k)| {
        let m = &c.memory;
        (h + k * m.row_hits as f64, a + k * (m.row_hits + m.row_misses + m.row_conflicts) as f64)
    });
    let instructions: u64 = r.cores.iter().map(|c| c.core.retired).sum();
    let wall = r.totals.wall_seconds.max(1e-9);
    let mut opts = DramSimOptions::new(1);
    opts.check = spec.check;
    let mut dram = dram_report::report(cfg, &r.memory, &r.totals, opts);
    let mut warnings = Value::Array(Vec::new());
    if let Some(o) = dram.as_object_mut() {
        o.remove("config");
        o.remove("schema_version");
        // Reported once, at the top level.
        warnings = o.remove("warnings").unwrap_or(warnings);
    }
    if let Value::Array(w) = &mut warnings {
        w.extend(crate::os::placement::warnings(os).unwrap_or_default().into_iter().map(Value::String));
        w.extend(r.os_warnings.iter().cloned().map(Value::String));
        // UCP that never repartitioned during the run chose nothing but the warm-up's split.
        let ucp_epoch = crate::os::resctrl::cat::ucp_epoch_ns(os);
        if let Some(epoch) = ucp_epoch {
            let run_ns = r.totals.dram_cycles as f64 * cfg.timing.tCK_ns;
            if epoch > run_ns {
                w.push(Value::String(format!(
                    "os.cat.epoch_ns ({epoch} ns) is longer than the run ({run_ns:.0} ns): UCP repartitioned {} time(s), after the warm-up only",
                    r.ucp_repartitions
                )));
            }
        }
        // A migration that moved nothing, which would otherwise read as "migration changes
        // nothing": said with the cause its counters show.
        if let Some(m) = r.migration.as_ref().filter(|m| m.pages_moved == 0) {
            let run_ns = r.core_cycles as f64 / cfg.machine.cpu.frequency_ghz;
            let why = if run_ns < m.period_ns {
                format!(
                    "the run is shorter than the interval it acts on ({} = {} ns), which gives it no time to act",
                    m.period_key, m.period_ns
                )
            } else if m.refused > 0 {
                format!("its gate refused every move it chose ({} refused; the limits of [os.{}])", m.refused, m.policy)
            } else if m.destination_full > 0 {
                format!("every move it chose found the destination node without a free frame ({} dropped)", m.destination_full)
            } else {
                format!(
                    "in {:.0} interval(s) of {} ns it chose no move: the pages it saw were where it wants them, or not hot enough for it",
                    (run_ns / m.period_ns).floor(),
                    m.period_ns
                )
            };
            w.push(Value::String(format!(
                "os.migration = \"{}\" moved no page in this run ({run_ns:.0} ns simulated; {} scan(s), {} hint fault(s), {} move(s) refused): {why}",
                m.policy, m.scans, m.hint_faults, m.refused
            )));
        }
        // A dynamic policy whose first epoch never ended on its timer adapted nothing to what
        // the run measured; a fault that found a process's colours full may still have ended one.
        if let Some(d) = &r.dynamic {
            let run_ns = r.core_cycles as f64 / cfg.machine.cpu.frequency_ghz;
            // The key that sets the epoch, where the policy has one.
            let settable = crate::os::dynamic::info(&d.policy).is_ok_and(|i| (i.params.defaults)().contains_key("epoch_ns"));
            let epoch = if settable { format!("os.{}.epoch_ns", d.policy) } else { format!("{}'s epoch", d.policy) };
            if d.epoch_ns > run_ns {
                let by_faults = match d.repartitions {
                    0 => "the policy never adjusted the colours".to_string(),
                    n => format!(
                        "no epoch ended on its timer; the {n} repartition(s) came from faults that found a process's colours full, not from the run's measurements"
                    ),
                };
                w.push(Value::String(format!("{epoch} ({} ns) is longer than the run ({run_ns:.0} ns): {by_faults}", d.epoch_ns)));
            }
            // Re-colouring that takes most of the threads' time measures the copies, not the
            // policy: say so, and what paces them. Its own stalls only, not swapping's.
            let recolour: u64 = r.cores.iter().filter_map(|c| c.memory.page_migration.as_ref()).map(|p| p.recolour_cycles).sum();
            let cycles: u64 = r.cores.iter().map(|c| c.core.cycles).sum();
            if d.pages_recoloured > 0 && recolour as f64 > 0.5 * cycles as f64 {
                w.push(Value::String(format!(
                    "re-colouring took {:.0} % of the threads' time ({} pages copied, epochs of {} ns): the run measures the copies more than the policy; [os.recolour] mode = \"daemon\" or \"lazy\" paces them, a longer {epoch} makes fewer",
                    100.0 * recolour as f64 / cycles as f64,
                    d.pages_recoloured,
                    d.epoch_ns,
                )));
            }
        }
    }
    if let Value::Array(w) = &mut warnings {
        // A trace shorter than the warm-up and the window is replayed: the window then measures
        // instructions the caches have already seen, which no statistic shows by itself.
        for (i, c) in r.cores.iter().enumerate() {
            let wraps = c.warmup_wraps + c.core.trace_wraps;
            if wraps > 0 {
                w.push(Value::String(format!(
                    "core {i} ({}): {REPLAYED} {wraps} time(s) ({} in the warm-up of {} instructions, {} in the {} measured): the run measures repeated instructions, their lines already cached; capture a longer trace or run fewer instructions",
                    c.program, c.warmup_wraps, spec.warmup, c.core.trace_wraps, c.core.retired
                )));
            }
        }
    }
    let names: Vec<String> = match &spec.processes {
        Some(ps) => ps.iter().enumerate().map(|(i, p)| p.name.clone().unwrap_or_else(|| format!("process{i}"))).collect(),
        None => spec.programs.clone(),
    };
    // Row outcomes by kind and by cause, over threads' frozen counts.
    let row_sums = |ts: &[&super::CoreResult]| {
        let (mut kinds, mut causes) = (RowOutcomesByKind::default(), RowCauseCounts::default());
        for c in ts {
            kinds.add(&c.memory.row_outcomes_by_kind);
            causes.add(&c.memory.row_causes);
        }
        (kinds, causes)
    };
    let ghz = cfg.machine.cpu.frequency_ghz;
    let arrive_ns: Vec<f64> =
        (0..r.processes).map(|p| spec.processes.as_ref().and_then(|ps| ps.get(p as usize)).map_or(0.0, |ps| ps.arrive_ns)).collect();
    let finished_ns: Vec<f64> = (0..r.processes)
        .map(|p| r.cores.iter().filter(|c| c.process == p).map(|c| c.finished_at).max().unwrap_or(0) as f64 / ghz)
        .collect();
    let processes: Vec<Value> = (0..r.processes)
        .map(|p| {
            let ts: Vec<&super::CoreResult> = r.cores.iter().filter(|c| c.process == p).collect();
            let (kinds, causes) = row_sums(&ts);
            let mut v = json!({
                "process": p,
                "name": names.get(p as usize),
                "threads": ts.len(),
                "instructions": ts.iter().map(|c| c.core.retired).sum::<u64>(),
                "ipc": ts.iter().map(|c| c.core.ipc()).sum::<f64>(),
                "llc_misses": ts.iter().map(|c| c.memory.llc_misses).sum::<u64>(),
                "dram_reads": ts.iter().map(|c| c.memory.dram_reads).sum::<u64>(),
                "context_switches": ts.iter().map(|c| c.sched.context_switches).sum::<u64>(),
                "migrations": ts.iter().map(|c| c.sched.migrations).sum::<u64>(),
                "pages": ts.first().map_or(0, |c| c.placement.pages),
                "row_outcomes_by_kind": kinds,
                "llc_lines": ts.iter().map(|c| c.memory.llc_lines).sum::<u64>(),
                "llc_lines_mean": ts.iter().map(|c| c.memory.llc_lines_mean).sum::<f64>(),
                // Its last thread's finish (its run time when its threads wait at the end), and
                // the spread of its threads' finishes (imbalance; TintMalloc's max-min).
                "run_time_cycles": ts.iter().map(|c| c.finished_at).max(),
                // An open mix's timing: arrival, its last thread's finish, and the time between.
                "arrive_ns": arrive_ns[p as usize],
                "finished_ns": finished_ns[p as usize],
                "turnaround_ns": finished_ns[p as usize] - arrive_ns[p as usize],
                "thread_spread_cycles": ts.iter().map(|c| c.finished_at).max().zip(ts.iter().map(|c| c.finished_at).min()).map(|(a, b)| a - b),
            });
            dram_report::add_row_causes(&mut v, &causes);
            if has_barriers {
                // Idle at barriers: inside the run, and at the end for threads that wait there.
                let end = ts.iter().map(|c| c.finished_at).max().unwrap_or(0);
                let inside: u64 = ts.iter().map(|c| c.barrier_wait_cycles).sum();
                let at_end: u64 = ts.iter().filter(|c| waits_at_end[c.process as usize]).map(|c| end - c.finished_at).sum();
                v["barrier_wait_cycles"] = json!(inside);
                v["barrier_idle_cycles"] = json!(inside + at_end);
            }
            let sum = |f: fn(&super::ThreadMigration) -> u64| ts.iter().filter_map(|c| c.memory.page_migration.as_ref()).map(f).sum::<u64>();
            let walk_cycles = sum(|m| m.walk_cycles);
            if r.migration.is_some() || r.swap.is_some() || r.dynamic.is_some() || walk_cycles > 0 {
                v["page_migration"] = json!({
                    "hint_faults": sum(|m| m.hint_faults),
                    "pages_moved": sum(|m| m.pages_moved),
                    "swap_ins": sum(|m| m.swap_ins),
                    "recolour_cycles": sum(|m| m.recolour_cycles),
                    "system_cycles": sum(|m| m.system_cycles),
                });
                if walk_cycles > 0 {
                    v["page_migration"]["walk_cycles"] = json!(walk_cycles);
                }
            }
            if let Some(s) = r.swap.as_ref().and_then(|s| s.get(p as usize)) {
                v["swap"] = json!(s);
            }
            if let Some(windows) = r.hot_pages.as_ref().and_then(|h| h.get(p as usize)) {
                let accesses: u64 = ts.iter().map(|c| c.memory.llc_accesses).sum();
                let apki = 1000.0 * ratio(accesses, ts.iter().map(|c| c.core.retired).sum());
                let class = (r.llc_pages > 0)
                    .then(|| crate::os::llc_class::classify(windows, apki, r.llc_pages as f64, &Default::default()))
                    .flatten();
                // The walks' time over the windows' time: the share of a core they would take,
                // at this run's schedule and at HVR's (3 s windows) over the same pages.
                let n = windows.len() as f64;
                let walked_pages = (n > 0.0).then(|| windows.iter().map(|w| w.walked_pages as f64).sum::<f64>() / n);
                let walk_share = (n > 0.0).then(|| windows.iter().map(|w| w.walk_ns).sum::<f64>() / (n * os.hot_pages.window_ns));
                let walk_share_hvr = walked_pages.map(|p| crate::os::hot_pages::hvr_walk_share(p, os.hot_pages.walk_ns_per_page));
                v["hot_pages"] = json!({
                    "windows": windows,
                    "hvr": class,
                    "walked_pages": walked_pages,
                    "walk_share": walk_share,
                    "walk_share_hvr": walk_share_hvr,
                });
            }
            v
        })
        .collect();
    let (kinds, causes) = row_sums(&r.cores.iter().collect::<Vec<_>>());
    // A dynamic policy that reads HVR classes samples accessed bits whatever the key says.
    let mut os_echo = json!(os);
    if r.hot_pages.is_some() {
        os_echo["hot_pages"]["enabled"] = json!(true);
    }
    let mut out = json!({
        "schema_version": SCHEMA_VERSION,
        // From the first arrival to the last process's finish (its last thread at its target).
        "makespan_ns": finished_ns.iter().copied().fold(0.0, f64::max) - arrive_ns.iter().copied().fold(f64::INFINITY, f64::min),
        "processes": processes,
        "scheduling": {
            "threads": r.cores.len(),
            "context_switches": r.context_switches,
            "same_process_switches": r.same_process_switches,
            "same_process_switch_ratio": ratio(r.same_process_switches, r.context_switches),
            "load_balance": r.load_balance,
            "binding": r.binding,
            "migrations": r.cores.iter().map(|c| c.sched.migrations).sum::<u64>(),
        },
        "spilled_pages": r.spilled_pages,
        "resctrl": {
            "schemes": os.resctrl,
            "ucp_repartitions": r.ucp_repartitions,
            "ucp_ways": r.ucp_ways,
        },
        "kind": "sim",
        "policy": os.policy,
        "config": {
            "machine": cfg.machine.name,
            "mapping": cfg.mapping.name(),
            "scheduler": cfg.controller.scheduler,
            "row_policy": cfg.controller.row_policy,
            "refresh": cfg.controller.refresh,
            "writes": cfg.controller.writes().ok().map(|w| json!({
                "handling": cfg.controller.write_handling, "queue": w.queue, "high_watermark": w.high_watermark,
                "low_watermark": w.low_watermark, "idle_drain_min": w.idle_drain_min,
                "idle_drain_timeout": w.idle_drain_timeout, "min_per_switch": w.min_per_switch,
            })),
            "comparison_note": cfg.machine.comparison_note,
            "programs": spec.thread_programs(),
            "processes": spec.processes,
            "instructions": spec.instructions,
            "warmup": spec.warmup,
            "seed": spec.seed,
            "os": os_echo,
            "params": {
                "controller": cfg.controller.params_in_use().unwrap_or_default(),
                "os": crate::os::placement::params_in_use(os).unwrap_or_default(),
            },
            "cpu": cfg.machine.cpu,
            "cache": cfg.machine.cache,
        },
        "cores": cores,
        "row_buffer_miss_rate": if all > 0.0 { 1.0 - hits / all } else { 0.0 },  // no request: none missed, as per core
        "row_outcomes_by_kind": kinds,
        "llc": r.llc.as_ref().map(|s| json!({
            "accesses": s.accesses, "hits": s.hits, "misses": s.misses, "writebacks": s.writebacks,
        })),
        "colours": r.colour_report,
        "dram": dram,
        "core_cycles": r.core_cycles,
        "dram_cycles": r.totals.dram_cycles,
        "simulated_ns": r.totals.dram_cycles as f64 * tck,
        "dram_requests": r.totals.requests,
        "wall_seconds": r.totals.wall_seconds,
        "requests_per_second": r.totals.requests as f64 / wall,
        "instructions_per_second": instructions as f64 / wall,
        "warnings": warnings,
    });
    if let Some(t) = &cfg.topology {
        add_nodes(&mut out, t, r, tck);
    }
    if let Some(m) = &r.migration {
        out["page_migration"] = json!(m);
        out["page_migration"]["copy_bytes"] = json!(2 * m.pages_moved * os.page_bytes);
    }
    if let Some(s) = &r.swap {
        let total = |f: fn(&crate::os::swap::ProcessSwap) -> u64| s.iter().map(f).sum::<u64>();
        out["swap"] = json!({
            "fault_ns": os.swap.fault_ns,
            "swap_outs": total(|p| p.swap_outs),
            "swap_ins": total(|p| p.swap_ins),
            "swapped": total(|p| p.swapped),
        });
    }
    if let Some(d) = &r.dynamic {
        out["dynamic"] = json!(d);
        out["dynamic"]["copy_bytes"] = json!(2 * d.pages_recoloured * os.page_bytes);
    }
    if let Some(e) = &spec.export_dram {
        out["export_dram"] = json!({"path": e.path, "format": e.format, "requests": r.exported_requests});
    }
    dram_report::add_row_causes(&mut out, &causes);
    if let Some(s) = &r.sampling {
        let (mut run, per_core) = s.report();
        // The memory system ran only in the detailed segments (units, their warm-ups, the other
        // cores' stretches): its requests and energy (`dram`, `dram_requests`) are theirs. The
        // run's are estimated at the segments' rates (requests and energy per core cycle) over
        // the run's estimated length: its slowest core's instructions at its estimated CPI.
        let finish = estimated_finish(r, s, spec.instructions);
        let length = finish.iter().map(|f| f.0).fold(0.0, f64::max);
        let factor = if r.core_cycles > 0 { length / r.core_cycles as f64 } else { 1.0 };
        run["estimated_dram_requests"] = json!((r.totals.requests as f64 * factor).round() as u64);
        run["estimated_dram_energy_nj"] = out["dram"]["energy"]["total_nj"].as_f64().map_or(Value::Null, |e| json!(e * factor));
        run["estimate_factor"] = json!(factor);
        run["row_buffer_miss_rate_ci95"] = match s.row_miss_rate_interval() {
            Some((lo, hi)) => json!([lo, hi]),
            None => json!([Value::Null, Value::Null]),
        };
        run["estimated_dram_power_mw"] = out["dram"]["energy"]["average_power_mw"].clone();
        run["segment_cycles"] = json!(s.segment_cycles);
        run["segment_dram_energy_nj"] = json!(s.segment_energy_nj);
        if s.strata.iter().any(|x| !x.is_empty()) {
            stratified_estimates(&mut out, &mut run, s, spec.instructions, ghz);
        } else {
            add_energy_intervals(&mut run, &out["dram"]["energy"], s, &finish, length);
        }
        out["config"]["sampling"] = json!(spec.sampling);
        run["simulated_cycles"] = json!(r.core_cycles);
        out["sampling"] = run;
        estimate_times(&mut out, r, &finish, length, ghz);
        if let Some(cs) = out["cores"].as_array_mut() {
            for (v, p) in cs.iter_mut().zip(per_core) {
                v["sampling"] = p;
            }
        }
        if let Some(w) = out["warnings"].as_array_mut() {
            w.extend(s.warnings.iter().cloned().map(Value::String));
        }
    }
    out
}

/// A sampled run's DRAM power and energy intervals (periodic mode, a device with power figures):
/// the detailed segments are the memory system's sample, so the energy rate (energy per core
/// cycle, which is the power) is their ratio estimator (`Estimate::ratio`) and its interval the
/// power's; the run's energy is that rate over the estimated length, whose interval is the
/// slowest core's finish's, combined with the rate's as independent (first order). Null bounds
/// where either is unbounded (fewer than two segments, a core with too few units).
fn add_energy_intervals(run: &mut Value, energy: &Value, s: &super::sampling::SampledRun, finish: &[(f64, f64, f64)], length: f64) {
    let (Some(power), Some(total)) = (energy["average_power_mw"].as_f64(), run["estimated_dram_energy_nj"].as_f64()) else { return };
    if s.segment_energy_nj.len() != s.segment_cycles.len() || s.segment_cycles.is_empty() {
        return;
    }
    let cycles: Vec<f64> = s.segment_cycles.iter().map(|&c| c as f64).collect();
    let rate = super::sampling::Estimate::ratio(&s.segment_energy_nj, &cycles).relative_half_width();
    let (low, high) = slowest_bounds(finish.iter());
    let span = if length > 0.0 && low.is_finite() && high.is_finite() { (high - low) / 2.0 / length } else { f64::INFINITY };
    run["dram_power_mw_ci95"] = relative_interval(power, rate);
    run["estimated_dram_energy_nj_ci95"] = relative_interval(total, rate.hypot(span));
}

/// `[low, high]` of `x` with relative half-width `rel`, bounds at least 0; null bounds when
/// `rel` is unbounded.
fn relative_interval(x: f64, rel: f64) -> Value {
    let bound = |b: f64| if rel.is_finite() { json!(b.max(0.0)) } else { Value::Null };
    json!([bound(x * (1.0 - rel)), bound(x * (1.0 + rel))])
}

/// A phases run's (one program's) figures as stratified estimates (`SampledRun::stratified_ratio`):
/// its units are drawn per phase, not in proportion to the phases' shares, so the units' sums
/// weigh a rare phase by its units. The core's row-buffer miss rate and MPKI, the run's
/// requests, DRAM energy (each unit's share of its segment's, by cycles) and power, with
/// intervals; the core's counters stay its units' sums.
fn stratified_estimates(out: &mut Value, run: &mut Value, s: &super::sampling::SampledRun, instructions: u64, ghz: f64) {
    let retired = |u: &super::sampling::Unit| u.core.retired as f64;
    let rb = s.row_miss_rate(0).mean;
    out["cores"][0]["row_buffer_miss_rate"] = json!(rb);
    out["cores"][0]["llc_mpki"] = json!(1000.0 * s.llc_misses_per_instruction(0));
    out["row_buffer_miss_rate"] = json!(rb);
    let requests = s.stratified_ratio(0, |u| (u.memory.dram_reads + u.memory.dram_writes) as f64, retired);
    run["estimated_dram_requests"] = json!((requests.mean * instructions as f64).round() as u64);
    if s.segment_energy_nj.is_empty() {
        return;
    }
    let energy = |u: &super::sampling::Unit| s.unit_energy_nj(u).unwrap_or(0.0);
    let per_instruction = s.stratified_ratio(0, energy, retired);
    let per_cycle = s.stratified_ratio(0, energy, |u| u.core.cycles as f64);
    let total = per_instruction.mean * instructions as f64;
    // nJ per core cycle at `ghz` core cycles per ns: W; mW.
    let power = per_cycle.mean * ghz * 1000.0;
    run["estimated_dram_energy_nj"] = json!(total);
    run["estimated_dram_energy_nj_ci95"] = relative_interval(total, per_instruction.relative_half_width());
    run["estimated_dram_power_mw"] = json!(power);
    run["dram_power_mw_ci95"] = relative_interval(power, per_cycle.relative_half_width());
}

/// Each core's finish as its instructions at its estimated CPI, with the 95 % interval's bounds
/// (infinite when unbounded); a core that measured no unit keeps the clock it ran on.
fn estimated_finish(r: &MulticoreResult, s: &super::sampling::SampledRun, instructions: u64) -> Vec<(f64, f64, f64)> {
    (0..r.cores.len())
        .map(|c| {
            let e = s.estimate(c);
            if e.n == 0 {
                return (r.cores[c].finished_at as f64, f64::NEG_INFINITY, f64::INFINITY);
            }
            let (lo, hi) = e.interval();
            let n = instructions as f64;
            (n * e.mean, n * lo, n * hi)
        })
        .collect()
}

/// The slowest of some cores' finish: the largest low and the largest high bound of their 95 %
/// intervals (first order; infinite where one is unbounded).
fn slowest_bounds<'a>(finish: impl Iterator<Item = &'a (f64, f64, f64)>) -> (f64, f64) {
    finish.fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |(low, high), f| (low.max(f.1), high.max(f.2)))
}

/// A sampled run's times, which the simulation measured over its detailed segments only (a
/// fraction of the run): each core's finish is its instructions at its estimated CPI (with its
/// 95 % interval), a process's run time its slowest thread's, the makespan the slowest
/// process's (sampled runs have no late arrivals); `length` is the slowest core's finish. What
/// was simulated stays in `sampling.simulated_cycles`.
fn estimate_times(out: &mut Value, r: &MulticoreResult, finish: &[(f64, f64, f64)], length: f64, ghz: f64) {
    if let Some(cs) = out["cores"].as_array_mut() {
        for (v, f) in cs.iter_mut().zip(finish) {
            v["finished_at"] = json!(f.0.round() as u64);
            v["run_cycles"] = json!(length.round() as u64);
        }
    }
    let mut makespan: f64 = 0.0;
    if let Some(ps) = out["processes"].as_array_mut() {
        for (p, v) in ps.iter_mut().enumerate() {
            let own: Vec<&(f64, f64, f64)> = r.cores.iter().zip(finish).filter(|(c, _)| c.process as usize == p).map(|(_, f)| f).collect();
            let Some(slowest) = own.iter().map(|f| f.0).reduce(f64::max) else { continue };
            let (low, high) = slowest_bounds(own.iter().copied());
            let bound = |b: f64| if b.is_finite() && b >= 0.0 { Value::from(b) } else { Value::Null };
            let fastest = own.iter().map(|f| f.0).fold(f64::INFINITY, f64::min);
            v["run_time_cycles"] = json!(slowest.round() as u64);
            v["run_time_cycles_ci95"] = json!([bound(low), bound(high)]);
            v["finished_ns"] = json!(slowest / ghz);
            v["turnaround_ns"] = json!(slowest / ghz);
            v["thread_spread_cycles"] = json!((slowest - fastest).round() as u64);
            makespan = makespan.max(slowest / ghz);
        }
    }
    out["makespan_ns"] = json!(makespan);
}

/// A thread's cycles as user, idle-on-memory and system time: system is its kernel stalls
/// (hinting faults, its moves, shootdowns: `page_migration.system_cycles`), idle on memory the
/// cycles in which nothing entered its window for want of memory (a full window behind a miss,
/// no free MSHR, a refused request) less the system time they hold, and user the rest.
pub(crate) fn time_breakdown(core: &crate::cpu::CoreStats, system: u64) -> serde_json::Value {
    let stalled = core.stall_window_full + core.stall_mshr + core.stall_refused;
    let system = system.min(core.cycles);
    let memory = stalled.saturating_sub(system).min(core.cycles - system);
    let user = core.cycles - system - memory;
    json!({"user_cycles": user, "memory_cycles": memory, "system_cycles": system})
}
