//! Periodic real-time tasks on one core, their memory requests through the simulated DRAM, under
//! the Pan thesis's schedules (ch. 4-5): each job computes and issues its loads one at a time (a
//! blocking load: the job waits for its data), so refresh that delays a load delays the job.
//!
//! The schedule is a component (`schedules/`, one file each and a line in `RT_SCHEDULES`): `edf`
//! (the auto-refresh baseline), `rm` (rate monotonic), `colored` (Colored Refresh) and `crs` (its
//! server). It plans the colours of the tasks' pages and the refresh that goes with them; at run
//! time it says which job may run, in what order and until when. Copies of a copy task and
//! context switches are the executor's.
//!
//! Under `edf` and `rm` a task may name the bank colours of its pages (`colours`, numbered
//! node-major as `camc`'s), and attackers on other cores (`attackers`) keep loads and stores in
//! flight to their own colours for the whole run: CAMC's same-bank, different-bank and
//! different-controller configurations (Tables 2.3-2.6).
//!
//! Time is the DRAM clock; task times are given in `unit_us` microseconds.

mod attackers;
mod frames;
mod schedules;

use crate::config::{MachineSource, MemoryConfig};
use crate::controller::Origin;
use crate::error::{Error, Result};
use crate::memory_system::MemorySystem;
use crate::params::{FloatBound, BANDWIDTH_GBPS, RETENTION_MS};
use crate::realtime::task::{hyperperiod, lcm, Task};
use crate::stats::LatencyHistogram;
use crate::{Cycle, NEVER};
use attackers::{Attacker, Background};
use frames::Frames;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedules::{Clock, PlanInput, RT_SCHEDULES};
use serde::Deserialize;
use serde_json::{json, Value};

/// A real-time run (JSON; docs/refresh.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtRunSpec {
    pub machine: MachineSource,
    #[serde(default)]
    pub overrides: Option<Value>,
    /// Microseconds per unit of the task set's times (1000: milliseconds).
    #[serde(default = "default_unit")]
    pub unit_us: f64,
    pub tasks: Vec<RtTaskSpec>,
    /// A registered schedule: "edf", "rm", "colored" or "crs".
    #[serde(default = "default_schedule")]
    pub schedule: String,
    /// "scheme" (the schedule's own: the machine's refresh for edf, the colour bursts for
    /// colored and crs), "none", "all-bank", "fgr2" or "fgr4".
    #[serde(default = "default_refresh")]
    pub refresh: String,
    /// The retention window, ms.
    #[serde(default = "default_retention")]
    pub retention_ms: f64,
    /// REFs per rank per window for the colour bursts (8192, JEDEC; the thesis's timings imply
    /// 8192 / ranks, which needs `jedec = false`).
    #[serde(default = "default_refs")]
    pub refs_per_window: u64,
    #[serde(default = "default_true")]
    pub jedec: bool,
    /// The servers of `crs`, highest priority first.
    #[serde(default)]
    pub servers: Vec<RtServerSpec>,
    /// How a `crs` server orders its tasks: "edf" or "rm" (the thesis analyses both).
    #[serde(default = "default_schedule")]
    pub server_schedule: String,
    /// A context switch's cost, µs: charged to a job each time it starts or resumes after
    /// another ran (0: free, the thesis's simulation).
    #[serde(default)]
    pub switch_us: f64,
    /// Refresh as a device of this density needs it (`dram.refresh_density_gbit`; the thesis's
    /// density sweep).
    #[serde(default)]
    pub refresh_density_gbit: Option<u32>,
    /// Units simulated (default: lcm of the hyperperiod and the window).
    #[serde(default)]
    pub horizon: Option<u64>,
    /// A copy task's copy bandwidth, GB/s (default: the thesis's 10).
    #[serde(default)]
    pub copy_gbps: Option<f64>,
    /// Memory-bound tasks on the other cores, running for the whole horizon.
    #[serde(default)]
    pub attackers: Vec<RtAttackerSpec>,
    #[serde(default = "one")]
    pub seed: u64,
}

/// A non-real-time task on a core of its own that only accesses memory (the thesis's Stream
/// attackers): it keeps `outstanding` reads in flight to pages of its bank colours, and posts
/// write-backs beside them (a write holds no miss buffer: the cache evicts it and moves on).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtAttackerSpec {
    /// Bank colours of its pages (node-major, as a task's `colours`).
    pub colours: Vec<u32>,
    /// "stream" (sequential lines) or "random".
    #[serde(default = "default_stream")]
    pub pattern: String,
    /// Reads in flight (a core's miss buffers; 8 by default).
    #[serde(default = "default_outstanding")]
    pub outstanding: u32,
    /// Share of its requests that are write-backs (STREAM's triad: 1 in 3), to a second array.
    #[serde(default = "default_write_share")]
    pub write_share: f64,
    #[serde(default = "default_attacker_footprint")]
    pub footprint_kb: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtTaskSpec {
    pub name: String,
    pub period: u64,
    /// The WCET the schedule plans with (units).
    pub wcet: u64,
    #[serde(default)]
    pub deadline: Option<u64>,
    #[serde(default)]
    pub phase: u64,
    /// Computation per job, units (its loads' waits come on top).
    pub compute: f64,
    /// Loads per job, spread evenly through its computation.
    pub loads: u64,
    /// "stream" (sequential lines, continuing from job to job) or "random".
    #[serde(default = "default_pattern")]
    pub pattern: String,
    #[serde(default = "default_footprint")]
    pub footprint_kb: u64,
    /// Globals a copy task copies when it changes instance (default 16 KB).
    #[serde(default)]
    pub copy_kb: Option<u64>,
    /// Bank colours of its pages (`edf` and `rm`; default: every rank's pages in turn).
    #[serde(default)]
    pub colours: Option<Vec<u32>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtServerSpec {
    pub tasks: Vec<String>,
    pub period: u64,
    pub budget: u64,
}

fn default_unit() -> f64 {
    1000.0
}
fn default_schedule() -> String {
    "edf".into()
}
fn default_refresh() -> String {
    "scheme".into()
}
fn default_retention() -> f64 {
    64.0
}
fn default_refs() -> u64 {
    8192
}
fn default_true() -> bool {
    true
}
const DEFAULT_COPY_GBPS: f64 = 10.0;
fn one() -> u64 {
    1
}
fn default_pattern() -> String {
    "random".into()
}
fn default_footprint() -> u64 {
    64
}
const DEFAULT_COPY_KB: u64 = 16;
fn default_stream() -> String {
    "stream".into()
}
fn default_outstanding() -> u32 {
    8
}
fn default_write_share() -> f64 {
    1.0 / 3.0
}
fn default_attacker_footprint() -> u64 {
    8192
}

/// Bounds that keep a run's arithmetic in range and its length sensible.
const MAX_UNITS: u64 = 1_000_000_000;
const MAX_CYCLES: u64 = 1 << 50;
const MAX_LOADS: u64 = 100_000_000;
const MAX_RUN_LOADS: f64 = 200_000_000.0;
const MAX_FOOTPRINT_KB: u64 = 1 << 24;
const MAX_ATTACKERS: usize = 64;
const MAX_OUTSTANDING: u32 = 256;
/// The task set's time unit: under a nanosecond, a DRAM clock, its times round to no cycles.
const UNIT_US: FloatBound = FloatBound { min: 0.001, max: 1e6, unit: "µs", why: "a nanosecond, about a DRAM clock, to a second" };
/// Attackers' requests carry this bit in their ids.
const ATTACK: u64 = 1 << 63;
/// A stop (`interrupt.rs`) is looked for every this many turns of the run's loop.
const CHECK_STEPS: u32 = 1 << 12;
const LINE: u64 = 64;
const PAGE: u64 = 4096;

/// One task as the run sees it.
struct TaskState {
    task: Task,
    compute: Cycle,
    loads: u64,
    random: bool,
    lines: u64,
    cursor: u64,
    /// Per instance: its colour's ranks and its pages' frames (physical page numbers).
    instances: Vec<(Vec<u32>, Vec<u64>)>,
    /// Colour index of each instance (colored, crs).
    colours: Vec<usize>,
    instance: usize,
    copy_cycles: Cycle,
    server: usize,
    /// Context switches charged.
    switches: u64,
    // Measurements.
    jobs: u64,
    finished: u64,
    misses: u64,
    copies: u64,
    exec: LatencyHistogram,
    /// Exact run-time moments (the histogram's buckets are coarse for a spread).
    exec_min: Cycle,
    exec_sum_sq: f64,
    /// Release to finish per finished job (a backlog's wait included), its sum and exact maximum.
    response_sum: f64,
    response_max: Cycle,
    latency: LatencyHistogram,
    met_refresh: u64,
    loads_done: u64,
}

/// A released job.
struct Job {
    task: usize,
    release: Cycle,
    deadline: Cycle,
    compute_left: Cycle,
    loads_left: u64,
    /// Computation until its next load.
    segment_left: Cycle,
    exec: Cycle,
    /// Still running at its deadline (counted once; it runs on, so its whole run time is measured).
    missed: bool,
    /// The hyperperiod it was released in.
    hyper: u64,
    /// Unique over the run (which job ran last, for context switches).
    id: u64,
}

/// Counts each job still running at a deadline at or before `by` as a miss, once.
fn mark_misses(jobs: &mut [Job], states: &mut [TaskState], missed_hyper: &mut std::collections::BTreeSet<u64>, by: Cycle) {
    for j in jobs.iter_mut().filter(|j| !j.missed && j.deadline <= by) {
        j.missed = true;
        states[j.task].misses += 1;
        missed_hyper.insert(j.hyper);
    }
}

/// The first key (dotted, under `prefix`) that both `over` and `set` give a value, with `over`'s.
fn shared_key(over: &Value, set: &Value, prefix: &str) -> Option<(String, Value)> {
    let (Some(over), Some(set)) = (over.as_object(), set.as_object()) else { return None };
    over.iter().filter(|(k, _)| set.contains_key(*k)).find_map(|(k, v)| {
        let key = format!("{prefix}.{k}");
        match (v.is_object(), set[k].is_object()) {
            (true, true) => shared_key(v, &set[k], &key),
            _ => Some((key, v.clone())),
        }
    })
}

pub fn run(spec: &RtRunSpec) -> Result<Value> {
    let mut machine = spec.machine.load_with(spec.overrides.as_ref(), None, None)?;
    if let Some(gbit) = spec.refresh_density_gbit {
        // The run's key would replace an override's value unseen: one of the two, not both.
        if let Some(set) = spec.overrides.as_ref().and_then(|o| o.pointer("/dram/refresh_density_gbit")) {
            return Err(Error::config(
                "overrides.dram.refresh_density_gbit",
                format!(
                    "{set} has no effect: the run's refresh_density_gbit = {gbit} sets it; give the density once (remove one of the two)"
                ),
            ));
        }
        machine.dram.refresh_density_gbit = Some(gbit);
    }
    UNIT_US.check("unit_us", spec.unit_us)?;
    RETENTION_MS.check("retention_ms", spec.retention_ms)?;
    if !matches!(spec.server_schedule.as_str(), "edf" | "rm") {
        return Err(Error::config("server_schedule", format!("unknown '{}'; choose edf or rm", spec.server_schedule)));
    }
    if !(spec.switch_us >= 0.0 && spec.switch_us <= 1e6) {
        return Err(Error::config("switch_us", format!("must be between 0 and 1e6 µs, got {}", spec.switch_us)));
    }
    let copy_gbps = spec.copy_gbps.unwrap_or(DEFAULT_COPY_GBPS);
    BANDWIDTH_GBPS.check("copy_gbps", copy_gbps)?;
    // As the burst manager bounds it, whatever the refresh (the crs lock is computed from it).
    if spec.refs_per_window == 0 || spec.refs_per_window > 1 << 20 {
        return Err(Error::config("refs_per_window", format!("must be between 1 and {}, got {}", 1 << 20, spec.refs_per_window)));
    }
    for (i, t) in spec.tasks.iter().enumerate() {
        let key = |k: &str| format!("tasks[{i}].{k}");
        if t.name.trim().is_empty() {
            return Err(Error::config(key("name"), "is empty: every task needs a name"));
        }
        // Servers and the results name tasks: two of one name would be one task to them.
        if let Some(j) = spec.tasks[..i].iter().position(|u| u.name == t.name) {
            return Err(Error::config(key("name"), format!("'{}' is also tasks[{j}]'s name: every task needs its own", t.name)));
        }
        for (k, v) in [("period", t.period), ("phase", t.phase), ("wcet", t.wcet), ("deadline", t.deadline.unwrap_or(0))] {
            if v > MAX_UNITS {
                return Err(Error::config(key(k), format!("{}: must be at most {MAX_UNITS} units, got {v}", t.name)));
            }
        }
        // The period first: a compute bounded by a period of 0 would blame the compute.
        if t.period == 0 {
            return Err(Error::config(key("period"), format!("{}: must be above 0", t.name)));
        }
        if !(t.compute >= 0.0 && t.compute <= t.period as f64) {
            return Err(Error::config(
                key("compute"),
                format!("{}: must be between 0 and its period ({}), got {}", t.name, t.period, t.compute),
            ));
        }
        if t.footprint_kb == 0 || t.footprint_kb > MAX_FOOTPRINT_KB {
            return Err(Error::config(
                key("footprint_kb"),
                format!("{}: must be between 1 and {MAX_FOOTPRINT_KB}, got {}", t.name, t.footprint_kb),
            ));
        }
        if let Some(kb) = t.copy_kb.filter(|&kb| kb > MAX_FOOTPRINT_KB) {
            return Err(Error::config(key("copy_kb"), format!("{}: must be at most {MAX_FOOTPRINT_KB}, got {kb}", t.name)));
        }
        if t.loads > MAX_LOADS {
            return Err(Error::config(key("loads"), format!("{}: at most {MAX_LOADS} per job, got {}", t.name, t.loads)));
        }
        // As an attacker's: pages are dealt over the list in turn, so it cannot be empty.
        if t.colours.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::config(
                key("colours"),
                format!("{}: must name at least one bank colour (leave it out for every rank's pages in turn)", t.name),
            ));
        }
    }
    if spec.attackers.len() > MAX_ATTACKERS {
        return Err(Error::config("attackers", format!("at most {MAX_ATTACKERS}, got {}", spec.attackers.len())));
    }
    for (a, at) in spec.attackers.iter().enumerate() {
        let key = |k: &str| format!("attackers[{a}].{k}");
        if at.outstanding == 0 || at.outstanding > MAX_OUTSTANDING {
            return Err(Error::config(key("outstanding"), format!("must be between 1 and {MAX_OUTSTANDING}, got {}", at.outstanding)));
        }
        if !(0.0..1.0).contains(&at.write_share) {
            return Err(Error::config(
                key("write_share"),
                format!("must be at least 0 and below 1 (its write-backs follow its reads), got {}", at.write_share),
            ));
        }
        if at.footprint_kb == 0 || at.footprint_kb > MAX_FOOTPRINT_KB {
            return Err(Error::config(key("footprint_kb"), format!("must be between 1 and {MAX_FOOTPRINT_KB}, got {}", at.footprint_kb)));
        }
        if at.colours.is_empty() {
            return Err(Error::config(key("colours"), "must name at least one bank colour"));
        }
        if !matches!(at.pattern.as_str(), "stream" | "random") {
            return Err(Error::config(key("pattern"), format!("unknown pattern '{}'; choose stream or random", at.pattern)));
        }
    }
    let tasks: Vec<Task> = spec
        .tasks
        .iter()
        .map(|t| Task { name: t.name.clone(), phase: t.phase, period: t.period, wcet: t.wcet, deadline: t.deadline.unwrap_or(t.period) })
        .collect();
    crate::realtime::task::validate(&tasks)?;
    // The window in task units must be whole (up to rounding: 64 ms in 0.1 µs units is 640 000).
    // A unit other than the default is the likelier mistake, so the error names it (and its line).
    let retention_units = spec.retention_ms * 1000.0 / spec.unit_us;
    let whole = retention_units.round();
    if (retention_units - whole).abs() > 1e-9 * whole.max(1.0) || whole < 1.0 {
        let k = if spec.unit_us != default_unit() { "unit_us" } else { "retention_ms" };
        return Err(Error::config(
            k,
            format!(
                "the retention window (retention_ms = {} ms) must be a whole number of task units (unit_us = {} µs), and is {retention_units} of them; choose a unit that divides {} µs",
                spec.retention_ms,
                spec.unit_us,
                spec.retention_ms * 1000.0
            ),
        ));
    }
    let retention = whole as u64;
    let ranks = machine.dram.ranks;
    // The schedule: colours per task and the refresh they need.
    let input = PlanInput { tasks: &tasks, spec, ranks, retention };
    let mut schedule = (RT_SCHEDULES.get(&spec.schedule)?.build)(&input)?;
    if let Some(i) = spec.tasks.iter().position(|t| t.colours.is_some()).filter(|_| !schedule.plan().tasks_choose_colours) {
        return Err(Error::config(
            format!("tasks[{i}].colours"),
            format!("{}: colours are chosen by the {} schedule; a task names its own under edf or rm", spec.tasks[i].name, spec.schedule),
        ));
    }
    // Copied out: the schedule is used mutably once the run starts.
    let plan = schedule.plan();
    let (colours, colour_frame) = (plan.colours, plan.colour_frame);
    let (groups, colour_of, server_of) = (plan.groups.clone(), plan.colour_of.clone(), plan.server_of.clone());
    // Only a task with two instances copies (when it changes instance): a copy setting for
    // none would be dropped unseen.
    let copies = |i: usize| colour_of[i].len() > 1;
    if let Some(i) = spec.tasks.iter().position(|t| t.copy_kb.is_some()).filter(|&i| !copies(i)) {
        return Err(Error::config(
            format!("tasks[{i}].copy_kb"),
            format!(
                "has no effect: {} has one instance under schedule {}, so it never copies (a copy task has two, under colored or crs)",
                spec.tasks[i].name, spec.schedule
            ),
        ));
    }
    if spec.copy_gbps.is_some() && !(0..spec.tasks.len()).any(copies) {
        return Err(Error::config(
            "copy_gbps",
            format!(
                "has no effect: no task has two instances under schedule {}, so none copies (copy tasks come from colored or crs)",
                spec.schedule
            ),
        ));
    }
    // Refresh.
    let refresh = match spec.refresh.as_str() {
        "scheme" if schedule.plan().scheme_refresh.is_null() => json!({}),
        "scheme" => schedule.plan().scheme_refresh.clone(),
        "none" => json!({"refresh": "none"}),
        "all-bank" => json!({"refresh": "all-bank"}),
        "fgr2" => json!({"refresh": "all-bank", "all-bank": {"granularity": 2}}),
        "fgr4" => json!({"refresh": "all-bank", "all-bank": {"granularity": 4}}),
        other => return Err(Error::config("refresh", format!("unknown refresh '{other}'; choose scheme, none, all-bank, fgr2 or fgr4"))),
    };
    // The colour bursts' settings are the run's own keys: an error names them as the user wrote them.
    let own = |e: Error| match e {
        Error::Config { field, reason }
            if ["retention_ms", "refs_per_window", "jedec"].iter().any(|k| field == format!("controller.burst.{k}")) =>
        {
            Error::config(field.trim_start_matches("controller.burst."), reason)
        }
        e => e,
    };
    if refresh.as_object().is_some_and(|o| !o.is_empty()) {
        // The run's `refresh` sets these controller keys: an override of one would be dropped unseen.
        if let Some((key, set)) =
            spec.overrides.as_ref().and_then(|o| o.get("controller")).and_then(|c| shared_key(c, &refresh, "controller"))
        {
            return Err(Error::config(
                format!("overrides.{key}"),
                format!(
                    "{set} has no effect: refresh = \"{}\" sets the controller's refresh under schedule {}; choose it with refresh (scheme, none, all-bank, fgr2 or fgr4; --refresh)",
                    spec.refresh, spec.schedule
                ),
            ));
        }
        machine = machine.with_overrides(&json!({ "controller": refresh })).map_err(own)?;
    }
    let cfg = MemoryConfig::resolve(&machine).map_err(own)?;
    // Pages: per rank or per bank colour, each frame handed out once.
    let uses_colours = spec.tasks.iter().any(|t| t.colours.is_some()) || !spec.attackers.is_empty();
    let mut frames = Frames::new(&cfg, uses_colours)?;
    if spec.tasks.iter().any(|t| t.colours.is_none()) {
        frames.check_rank_groups(&groups, &spec.schedule)?;
    }
    let mut mem = MemorySystem::new(&cfg).map_err(own)?;
    let t_ck_ns = cfg.timing.tCK_ns;
    let cycles_per_unit = spec.unit_us * 1000.0 / t_ck_ns;
    let to_cycles = |u: f64| (u * cycles_per_unit).round() as Cycle;
    let horizon = spec.horizon.unwrap_or_else(|| lcm(hyperperiod(&tasks), retention));
    if horizon == 0 || horizon > MAX_UNITS {
        return Err(Error::config(
            "horizon",
            format!("must be between 1 and {MAX_UNITS} units (default: lcm of hyperperiod and window), got {horizon}"),
        ));
    }
    let total: f64 = spec.tasks.iter().map(|t| (horizon as f64 / t.period as f64).ceil() * t.loads as f64).sum();
    if total > MAX_RUN_LOADS {
        return Err(Error::config(
            "tasks",
            format!("the run would issue about {total:.0} loads; at most {MAX_RUN_LOADS:.0}: shorten the horizon or the loads"),
        ));
    }
    if to_cycles(horizon as f64) > MAX_CYCLES {
        return Err(Error::config("horizon", format!("{horizon} units are more than {MAX_CYCLES} DRAM cycles")));
    }
    if !spec.attackers.is_empty() {
        // Attackers issue as fast as the memory serves them: at most a burst per channel per tBL.
        let channels = cfg.node_layout().memory_nodes().len() as f64 * cfg.org.channels as f64;
        let most = to_cycles(horizon as f64) as f64 / cfg.timing.tBL.max(1) as f64 * channels;
        if most > MAX_RUN_LOADS {
            return Err(Error::config(
                "horizon",
                format!("the attackers could issue about {most:.0} requests in {horizon} units; at most {MAX_RUN_LOADS:.0}: shorten the horizon"),
            ));
        }
    }
    let end = to_cycles(horizon as f64);
    // A colour's burst lock, refs x tRFC, from its phase in each window (crs).
    let lock = spec.refs_per_window * cfg.timing.tRFC + cfg.timing.tRP;
    schedule.start(&Clock { cycles_per_unit, window: to_cycles(retention as f64), lock });

    let mut states: Vec<TaskState> = Vec::new();
    for (i, (t, s)) in tasks.iter().zip(&spec.tasks).enumerate() {
        let random = match s.pattern.as_str() {
            "random" => true,
            "stream" => false,
            p => return Err(Error::config(format!("tasks[{i}].pattern"), format!("unknown pattern '{p}'; choose stream or random"))),
        };
        if !(s.compute >= 0.0 && s.compute.is_finite()) || s.footprint_kb == 0 {
            return Err(Error::config(format!("tasks[{i}].compute"), "compute must be a finite number >= 0 and footprint_kb above 0"));
        }
        let pages = s.footprint_kb * 1024 / PAGE + 1;
        let mut instances = Vec::new();
        if let Some(cs) = &s.colours {
            let key = format!("tasks[{i}].colours");
            let list = (0..pages).map(|p| frames.take_colour(cs, p as usize, &key)).collect::<Result<Vec<_>>>()?;
            instances.push(((0..ranks).collect(), list));
        }
        for &c in colour_of[i].iter().filter(|_| s.colours.is_none()) {
            let ranks_of = &groups[c];
            let list = (0..pages).map(|p| frames.take_rank(ranks_of[p as usize % ranks_of.len()])).collect::<Result<Vec<_>>>()?;
            instances.push((ranks_of.clone(), list));
        }
        let copy_bytes = s.copy_kb.unwrap_or(DEFAULT_COPY_KB) as f64 * 1024.0;
        states.push(TaskState {
            task: t.clone(),
            compute: to_cycles(s.compute),
            loads: s.loads,
            random,
            lines: s.footprint_kb * 1024 / LINE,
            cursor: 0,
            instances,
            colours: colour_of[i].clone(),
            instance: 0,
            copy_cycles: (copy_bytes / (copy_gbps * 1e9) * 1e9 / t_ck_ns).round() as Cycle,
            server: server_of[i],
            switches: 0,
            jobs: 0,
            finished: 0,
            misses: 0,
            copies: 0,
            exec: LatencyHistogram::default(),
            exec_min: NEVER,
            exec_sum_sq: 0.0,
            response_sum: 0.0,
            response_max: 0,
            latency: LatencyHistogram::default(),
            met_refresh: 0,
            loads_done: 0,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut bg = Background { attackers: Vec::new(), next_id: 0 };
    for (a, at) in spec.attackers.iter().enumerate() {
        let key = format!("attackers[{a}].colours");
        let pages = at.footprint_kb * 1024 / PAGE + 1;
        let list = (0..pages).map(|p| frames.take_colour(&at.colours, p as usize, &key)).collect::<Result<Vec<_>>>()?;
        bg.attackers.push(Attacker {
            source: (tasks.len() + a) as u32,
            frames: list,
            lines: at.footprint_kb * 1024 / LINE,
            cursor: 0,
            random: at.pattern == "random",
            outstanding: at.outstanding,
            write_share: at.write_share,
            in_flight: 0,
            write_credit: 0.0,
            write_cursor: 0,
            rng: ChaCha8Rng::seed_from_u64(spec.seed.wrapping_add(1 + a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            requests: 0,
            writes: 0,
            latency: LatencyHistogram::default(),
        });
    }
    let hyper_cycles = to_cycles(hyperperiod(&tasks) as f64).max(1);
    let switch_cycles = (spec.switch_us * 1000.0 / cfg.timing.tCK_ns).round() as Cycle;
    let (mut released, mut last_ran) = (0u64, u64::MAX);
    let mut missed_hyper = std::collections::BTreeSet::new();

    // The executor. `jobs` is in release order.
    let mut jobs: Vec<Job> = Vec::new();
    let period_cycles: Vec<Cycle> = tasks.iter().map(|t| to_cycles(t.period as f64)).collect();
    let mut first_seen = vec![false; tasks.len()];
    // Jobs of each task in the list.
    let mut queued = vec![0usize; tasks.len()];
    let mut next_release: Vec<Cycle> = tasks.iter().map(|t| to_cycles(t.phase as f64)).collect();
    let mut done = Vec::new();
    let mut now: Cycle = 0;
    let mut id = 0u64;
    bg.refill(&mut mem, 0);
    // Memory events up to and including `until` (the tasks' completions are not needed: loads
    // block; the attackers' are taken at once and refilled).
    let advance_memory = |mem: &mut MemorySystem, done: &mut Vec<crate::controller::Completion>, bg: &mut Background, until: Cycle| loop {
        let t = mem.next_event();
        if t > until {
            break;
        }
        bg.step(mem, done, t);
    };
    let mut steps = 0u32;
    while now < end {
        steps = steps.wrapping_add(1);
        if steps % CHECK_STEPS == 0 {
            crate::interrupt::check()?;
        }
        // Releases and deadlines.
        for (i, st) in states.iter_mut().enumerate() {
            while next_release[i] <= now && next_release[i] < end {
                let r = next_release[i];
                let per = st.loads.max(1);
                queued[i] += 1;
                jobs.push(Job {
                    task: i,
                    release: r,
                    deadline: r + to_cycles(st.task.deadline as f64),
                    compute_left: st.compute,
                    loads_left: st.loads,
                    // Without loads the whole computation is one segment.
                    segment_left: if st.loads == 0 { st.compute } else { st.compute / (per + 1) },
                    exec: 0,
                    missed: false,
                    hyper: r / hyper_cycles,
                    id: released,
                });
                released += 1;
                st.jobs += 1;
                // From the task's times, not the last release: per-period rounding would drift.
                next_release[i] = to_cycles((st.task.phase + st.jobs * st.task.period) as f64);
            }
        }
        mark_misses(&mut jobs, &mut states, &mut missed_hyper, now);
        schedule.at(now);
        // Choose: the schedule's eligible jobs, in its order.
        let eligible = |j: &Job, states: &[TaskState]| -> Option<usize> {
            let st = &states[j.task];
            schedule.eligible(now, &st.colours, st.instance, st.server)
        };
        // A task's jobs run in release order (the list keeps it), so only each task's oldest
        // job is a candidate: a backlog of missed jobs costs one look per task, not per job.
        first_seen.iter_mut().for_each(|s| *s = false);
        let mut to_see = queued.iter().filter(|&&n| n > 0).count();
        let mut best = None; // (server, priority, task, k) of the best job so far
        for (k, j) in jobs.iter().enumerate() {
            if to_see == 0 {
                break;
            }
            if std::mem::replace(&mut first_seen[j.task], true) {
                continue;
            }
            to_see -= 1;
            if eligible(j, &states).is_none() {
                continue;
            }
            let (server, priority) = schedule.priority(states[j.task].server, j.deadline, period_cycles[j.task]);
            let key = (server, priority, j.task, k);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let pick = best.map(|(_, _, _, k)| k);
        // The next decision point: a release, a deadline, the schedule's own (frames, locks, budgets).
        let mut next = end;
        next = next.min(next_release.iter().copied().min().unwrap_or(NEVER));
        next = next.min(jobs.iter().filter(|j| !j.missed).map(|j| j.deadline).min().unwrap_or(NEVER));
        next = next.min(schedule.next_boundary(now));
        let Some(k) = pick else {
            advance_memory(&mut mem, &mut done, &mut bg, next.max(now + 1) - 1);
            now = next.max(now + 1);
            continue;
        };
        let ti = jobs[k].task;
        // The instance it runs in; a change copies the globals first.
        let inst = eligible(&jobs[k], &states).expect("picked");
        if inst != states[ti].instance {
            states[ti].instance = inst;
            states[ti].copies += 1;
            jobs[k].compute_left += states[ti].copy_cycles;
            jobs[k].segment_left += states[ti].copy_cycles;
        }
        if jobs[k].id != last_ran {
            // A context switch into this job (its first start, or a resumption after another).
            last_ran = jobs[k].id;
            states[ti].switches += 1;
            if switch_cycles > 0 {
                jobs[k].compute_left += switch_cycles;
                jobs[k].segment_left += switch_cycles;
            }
        }
        let stop = next.min(schedule.run_until(now, states[ti].server));
        let start = now;
        let job = &mut jobs[k];
        if job.segment_left > 0 {
            // Compute until the next load or the decision point.
            let run = job.segment_left.min(stop - now);
            job.segment_left -= run;
            job.compute_left -= run.min(job.compute_left);
            advance_memory(&mut mem, &mut done, &mut bg, now + run - 1);
            now += run;
        } else if job.loads_left > 0 {
            // One blocking load.
            let st = &mut states[ti];
            let line = if st.random { rng.gen_range(0..st.lines) } else { (st.cursor + 1) % st.lines };
            st.cursor = line;
            let page = (line * LINE / PAGE) as usize;
            let frame = st.instances[st.instance].1[page % st.instances[st.instance].1.len()];
            let addr = frame * PAGE + (line * LINE) % PAGE;
            id += 1;
            while !mem.try_enqueue(now, id, addr, false, Origin::single(ti as u32)) {
                advance_memory(&mut mem, &mut done, &mut bg, now);
                now += 1;
            }
            let issued = now;
            let c = loop {
                let t = mem.next_event();
                if t == NEVER {
                    return Err(Error::config("engine", format!("internal error: load {id} never completes (cycle {now})")));
                }
                bg.step(&mut mem, &mut done, t);
                if let Some(pos) = done.iter().position(|c| c.id == id) {
                    break done.swap_remove(pos);
                }
            };
            done.clear();
            now = c.done.max(issued + 1);
            st.latency.record(c.done - issued);
            st.met_refresh += c.met_refresh as u64;
            st.loads_done += 1;
            job.loads_left -= 1;
            let per = st.loads.max(1);
            job.segment_left = if job.loads_left == 0 { job.compute_left } else { st.compute / (per + 1) };
        }
        let ran = now - start;
        job.exec += ran;
        schedule.ran(states[ti].server, ran);
        if job.segment_left == 0 && job.loads_left == 0 {
            let j = jobs.remove(k);
            queued[j.task] -= 1;
            let st = &mut states[ti];
            st.finished += 1;
            st.exec.record(j.exec);
            st.exec_min = st.exec_min.min(j.exec);
            st.exec_sum_sq += (j.exec as f64).powi(2);
            st.response_sum += (now - j.release) as f64;
            st.response_max = st.response_max.max(now - j.release);
        }
    }
    // A job unfinished at a deadline the horizon reaches missed it (the loop stops before it).
    mark_misses(&mut jobs, &mut states, &mut missed_hyper, end);
    let unit_ns = spec.unit_us * 1000.0;
    let cycles_to_units = |c: f64| c * t_ck_ns / unit_ns;
    let mut utilisation = 0.0;
    let task_json: Vec<Value> = states
        .iter()
        .map(|st| {
            let exec_mean = cycles_to_units(st.exec.mean());
            let n = st.finished as f64;
            let var = if n > 1.0 { (st.exec_sum_sq / n - st.exec.mean().powi(2)).max(0.0) * n / (n - 1.0) } else { 0.0 };
            utilisation += exec_mean / st.task.period as f64;
            let lat = st.latency.summary();
            json!({
                "name": st.task.name, "period": st.task.period, "wcet": st.task.wcet,
                "jobs": st.jobs, "finished": st.finished, "deadline_misses": st.misses,
                "exec_mean": exec_mean, "exec_max": cycles_to_units(st.exec.max() as f64),
                "exec_min": if st.finished > 0 { cycles_to_units(st.exec_min as f64) } else { 0.0 },
                "exec_sd": cycles_to_units(var.sqrt()),
                "response_mean": if st.finished > 0 { cycles_to_units(st.response_sum / n) } else { 0.0 },
                "response_max": cycles_to_units(st.response_max as f64),
                "loads": st.loads_done, "latency_ns": lat.scaled(t_ck_ns), "refresh_met": st.met_refresh,
                "colours": st.colours, "ranks": st.instances.iter().map(|i| i.0.clone()).collect::<Vec<_>>(),
                "copies": st.copies, "switches": st.switches,
            })
        })
        .collect();
    let latency_all = {
        let mut h = LatencyHistogram::default();
        states.iter().for_each(|s| h.merge(&s.latency));
        h.summary().scaled(t_ck_ns)
    };
    let seconds = end as f64 * t_ck_ns * 1e-9;
    let attacker_json: Vec<Value> = bg
        .attackers
        .iter()
        .zip(&spec.attackers)
        .map(|(a, at)| {
            json!({
                "colours": at.colours, "requests": a.requests, "writes": a.writes,
                "bandwidth_gbps": a.requests as f64 * LINE as f64 / seconds / 1e9,
                "latency_ns": a.latency.summary().scaled(t_ck_ns),
            })
        })
        .collect();
    let hyperperiods = horizon.div_ceil(hyperperiod(&tasks).max(1));
    Ok(json!({
        "config": {
            "machine": cfg.machine.name, "schedule": spec.schedule, "refresh": spec.refresh,
            "controller_refresh": cfg.controller.refresh,
            "refresh_density_gbit": cfg.machine.dram.refresh_density_gbit.unwrap_or(cfg.org.density_gbit),
            "tRFC_ns": cfg.timing.tRFC as f64 * t_ck_ns, "tREFI_ns": cfg.timing.tREFI as f64 * t_ck_ns,
            "unit_us": spec.unit_us, "horizon": horizon, "retention": retention, "colour_frame": colour_frame,
            "colours": colours, "refs_per_window": spec.refs_per_window, "jedec": spec.jedec,
            "server_schedule": spec.server_schedule, "switch_us": spec.switch_us,
        },
        "tasks": task_json,
        "utilisation": utilisation,
        "deadline_misses": states.iter().map(|s| s.misses).sum::<u64>(),
        "hyperperiods": hyperperiods,
        "hyperperiods_missed": missed_hyper.len(),
        "analysis": schedule.analysis(&tasks).into_iter().map(|(of, v)| json!({
            "tasks": of, "test": v.test, "schedulable": v.schedulable, "detail": v.detail,
        })).collect::<Vec<_>>(),
        "attackers": attacker_json,
        "refresh_met": states.iter().map(|s| s.met_refresh).sum::<u64>(),
        "latency_ns": latency_all,
    }))
}

/// The registered real-time schedules, for the catalogue.
pub fn schedule_info() -> Vec<Value> {
    RT_SCHEDULES.all().iter().map(|s| json!({"name": s.name, "summary": s.summary})).collect()
}

/// `run` with a JSON spec in and JSON out (the Python extension's entry point).
pub fn run_json(spec: &str) -> Result<String> {
    let spec: RtRunSpec = crate::error::from_json(spec, "rt spec")?;
    Ok(run(&spec)?.to_string())
}
