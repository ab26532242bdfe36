//! Sampled simulation (`sampling = { mode = "periodic", ... }` in a run spec): detailed units of
//! `unit` instructions every `period`, functional warming in between, a confidence interval on
//! every estimate. SMARTS's design (Wunderlich et al., ISCA 2003), with each period's unit at a
//! random point of the period (stratified rather than systematic sampling, so that no program
//! phase, as a short trace's wrap-around, aliases with the period; seeded by the OS seed): equal
//! units, each after a detailed warm-up (`warming`) that fills the pipeline, queues and row
//! buffers, with the caches and page tables kept warm by functional warming of the instructions
//! between units (`hier.warm`, as the run's initial warm-up; with `warm_prefetchers`, the LLC
//! prefetchers trained and their proposals installed too); CPI estimated by the mean of the
//! units' CPIs, corrected by a regression on the program's loads per instruction over the whole
//! run (`SampledRun::regression`), its interval by the central limit theorem over units.
//!
//! Several cores: the units are co-scheduled (every core runs its detailed warm-up and unit in
//! the same detailed segment; a core that finishes first keeps running, as in a detailed run, so
//! the others meet the same contention; a program k times faster than the slowest measures a unit
//! k times longer, instructions it runs in detail anyway) and the programs keep their relative
//! progress by fast-forwarding each core in proportion to its pace: between segments core c
//! advances `period x IPC_c / IPC of the slowest core` instructions, the time-based sampling of
//! Sniper (Carlson et al., "Sampled simulation of multi-threaded applications", ISPASS 2013),
//! with each core's IPC its units' estimate so far while it measures, and past its
//! `instructions` (where it has no units) the instructions it retired beside the slowest in the
//! last segment (the first period advances every core by `period`). The slowest program thus has
//! a unit every `period`; a faster one has its units evenly spaced in its own instructions, at
//! most `period x IPC_c / IPC_slowest` apart and at least `min_units` of them: while it measures,
//! the periods shorten so that it can, and a core measures only in the periods its spacing is
//! due (so its units weigh alike). A core's unit counts while it starts within the run's
//! `instructions`; a core past them keeps running unmeasured until every core is, as a detailed
//! run's core past its target does. A core's CPI estimate is its units' cycles over their
//! instructions, each unit weighted by the instructions it stands for (a ratio estimator, whose
//! interval comes from the units' linearised residuals; with equal units, the mean of their
//! CPIs).
//!
//! A core's position is exact to the instruction: a segment or a gap that ends inside a trace
//! record leaves the record's rest (`RecordRest`) to be run first from there (`advance`), so a
//! unit measures its own instructions, never the leftover of a long record read before the gap.
//!
//! Between segments the cores drain their windows (no load in flight) and the memory system
//! keeps its state and its clock: queued writes, open rows and refresh carry over, and every
//! DRAM command is still checked under `check`. Functional warming does not advance time.
//! `functional` limits the warming to the last instructions before each segment; the rest of
//! the gap is skipped (the trace read, nothing warmed), which is cheaper and less exact.
//!
//! Not sampled (refused): time-sharing, barriers, late arrivals, dynamic policies, page
//! migration, swapping and hot-page sampling, whose time-driven work functional warming would
//! skip; and the DRAM request export, which would have gaps (`sim_spec::run_sampled`).

use super::memory_hierarchy::CoreMemoryStats;
use super::multicore_sim::{memory_step, next_records_wrapping, next_wrapping, MemoryStep, Progress, RunEnd, Sim, ThreadDef};
use crate::cpu::{ClockRatio, CoreStats, RecordRest};
use crate::dram_sim::report::EnergyMeter;
use crate::error::{Error, Result};
use crate::os::OsConfig;
use crate::{Cycle, NEVER};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The normal quantile of the two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Units below which the interval's normal approximation is called weak.
const FEW_UNITS: usize = 10;

/// `sampling` in a run spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SamplingSpec {
    /// "periodic" (SMARTS) or "phases" (SimPoint's phases as strata, one program per run;
    /// `phase_sampling.rs`).
    pub mode: String,
    /// Instructions each core measures per unit (default 20 000).
    pub unit: u64,
    /// Instructions per core from one unit's start to the next's (default: the run's
    /// instructions / 100, so 100 units at the mix's mean IPC). With phases: the intervals
    /// the program's phases are found in, one unit at most in each.
    pub period: Option<u64>,
    /// Detailed warm-up instructions before each unit, not measured (default 30 000).
    pub warming: u64,
    /// Functional warming before each segment, instructions (default: the whole gap between
    /// units); the rest of the gap is skipped without warming.
    pub functional: Option<u64>,
    /// The 95 % interval's half-width each core's IPC should meet, relative to the estimate
    /// (0.01: 1 %). When the first pass misses it, the run is repeated once with the number of
    /// units the first pass's variation asks for (SMARTS's procedure).
    pub target_error: Option<f64>,
    /// The fewest units a program faster than the slowest gets over its `instructions` (default
    /// 30, the CLT's rule of thumb): while it measures, the period shrinks so that it has them.
    /// Without it, a program k times faster would have k times fewer units than the slowest.
    /// With phases: the units shared among the phases by their shares (at least 2 each).
    pub min_units: u64,
    /// With phases: the most phases tried (default 10); the BIC picks how many are kept.
    pub clusters: Option<u64>,
    /// Functional warming also trains the LLC prefetchers and installs their proposals (default
    /// off; docs/sampling.md has what it changes, measured).
    pub warm_prefetchers: bool,
    /// Another periodic run's segments to replay (its `sampling.schedule`): every core's gaps end
    /// and its units start at the instructions they did there, so two policies of one mix measure
    /// the same stretches of each program and their sampling errors largely cancel in the
    /// difference (matched pairs: Ekman and Stenström, ISPASS 2005). Default: none (the run paces
    /// itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
}

/// A periodic run's detailed segments, per core and segment: the instruction its gap ended at
/// (`at`), the unit it measured (`unit`, 0 for none) and the instructions of the run that unit
/// stands for (`weight`). Every periodic run reports its own (`sampling.schedule`); a run of the
/// same programs given one (`SamplingSpec::schedule`) replays it instead of pacing itself, so it
/// keeps the relative progress of the run it came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub at: Vec<Vec<u64>>,
    pub unit: Vec<Vec<u64>>,
    pub weight: Vec<Vec<u64>>,
    /// The instructions per core of the run it came from (absent in a schedule written by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
}

impl Schedule {
    fn new(n: usize, instructions: u64) -> Schedule {
        Schedule { at: vec![Vec::new(); n], unit: vec![Vec::new(); n], weight: vec![Vec::new(); n], instructions: Some(instructions) }
    }

    /// Segments in the schedule.
    pub fn segments(&self) -> usize {
        self.at.first().map_or(0, Vec::len)
    }

    fn push(&mut self, at: &[u64], sizes: &[u64], measured: &[bool], weights: &[u64]) {
        for c in 0..at.len() {
            self.at[c].push(at[c]);
            self.unit[c].push(if measured[c] { sizes[c] } else { 0 });
            self.weight[c].push(if measured[c] { weights[c] } else { 0 });
        }
    }

    /// Check a schedule given to a run of `cores` programs of `instructions` each, measuring
    /// units of at least `unit`.
    fn validate(&self, cores: usize, instructions: u64, unit: u64) -> Result<()> {
        let bad = |why: String| Err(Error::config("sampling.schedule", why));
        for (name, rows) in [("at", &self.at), ("unit", &self.unit), ("weight", &self.weight)] {
            if rows.len() != cores {
                return bad(format!(
                    "{name} has {} row(s) and the run has {cores} program(s): a schedule replays a run of the same programs",
                    rows.len()
                ));
            }
            if let Some(c) = rows.iter().position(|r| r.len() != self.segments()) {
                return bad(format!(
                    "{name}[{c}] has {} segment(s) and at[0] has {}: every row needs one value per segment",
                    rows[c].len(),
                    self.segments()
                ));
            }
        }
        if self.segments() == 0 {
            return bad("no segments: a schedule is a periodic run's `sampling.schedule`".into());
        }
        for c in 0..cores {
            if let Some(i) = (0..self.segments()).find(|&i| self.unit[c][i] > 0 && self.unit[c][i] < unit) {
                return bad(format!("unit[{c}][{i}] = {} is shorter than sampling.unit = {unit} (0 means no unit)", self.unit[c][i]));
            }
            if let Some(i) = (0..self.segments()).find(|&i| self.unit[c][i] > 0 && self.weight[c][i] == 0) {
                return bad(format!("weight[{c}][{i}] is 0 for a measured unit: it must be the instructions the unit stands for"));
            }
        }
        // A run of another length: its units stand for that length, and replayed they would
        // measure only the beginning of a longer run.
        if let Some(from) = self.instructions.filter(|&from| from != instructions) {
            return bad(format!(
                "comes from a run of {from} instructions per core and this run has {instructions}: a schedule replays a \
                 run of the same length"
            ));
        }
        if !(0..cores).any(|c| self.unit[c].iter().filter(|&&u| u > 0).count() >= 2) {
            return bad("no core measures 2 units: an interval needs at least 2".into());
        }
        Ok(())
    }
}

/// A detailed share of the run at or above which a sampled run is said to sample little.
const HARDLY_SAMPLED: f64 = 0.9;

/// Default `min_units`.
pub const DEFAULT_MIN_UNITS: u64 = 30;

impl Default for SamplingSpec {
    fn default() -> Self {
        SamplingSpec {
            mode: "periodic".into(),
            unit: 20_000,
            period: None,
            warming: 30_000,
            functional: None,
            target_error: None,
            min_units: DEFAULT_MIN_UNITS,
            clusters: None,
            warm_prefetchers: false,
            schedule: None,
        }
    }
}

/// Units in a run without `period`.
pub const DEFAULT_UNITS: u64 = 100;

/// Below this many instructions a unit is warned of (SMARTS's units are 1,000 instructions).
pub const MIN_UNIT: u64 = 1_000;

impl SamplingSpec {
    /// The period, given or by default.
    pub fn period(&self, instructions: u64) -> u64 {
        self.period.unwrap_or((instructions / DEFAULT_UNITS).max(self.unit.saturating_add(self.warming)))
    }

    /// Check the spec against a run of `instructions` per core.
    pub fn validate(&self, instructions: u64) -> Result<()> {
        match self.mode.as_str() {
            "periodic" => {
                if let Some(k) = self.clusters {
                    return Err(Error::config("sampling.clusters", format!("{k}: clusters apply to mode = \"phases\" only")));
                }
            }
            "phases" => {
                if self.clusters == Some(0) {
                    return Err(Error::config("sampling.clusters", "must be at least 1"));
                }
            }
            other => return Err(Error::config("sampling.mode", format!("unknown mode '{other}'; choose \"periodic\" or \"phases\""))),
        }
        if self.unit == 0 {
            return Err(Error::config("sampling.unit", "must be at least 1 instruction, got 0"));
        }
        if self.unit > instructions {
            return Err(Error::config(
                "sampling.unit",
                format!("{} instructions is longer than the run (instructions = {instructions})", self.unit),
            ));
        }
        let period = self.period(instructions);
        if period < self.unit.saturating_add(self.warming) {
            return Err(Error::config(
                "sampling.period",
                format!(
                    "{period} instructions is shorter than a unit and its detailed warm-up (unit {} + warming {} = {})",
                    self.unit,
                    self.warming,
                    self.unit.saturating_add(self.warming)
                ),
            ));
        }
        let units = instructions / period;
        if units < 2 {
            return Err(Error::config(
                "sampling.period",
                format!(
                    "{period} instructions leaves {units} unit(s) in instructions = {instructions}; an interval needs at least 2 (30 or more for a good one)"
                ),
            ));
        }
        if let Some(f) = self.functional {
            let gap = period - self.unit - self.warming;
            if f > gap {
                return Err(Error::config(
                    "sampling.functional",
                    format!(
                        "{f} instructions is longer than the gap between units (period {period} - unit {} - warming {} = {gap})",
                        self.unit, self.warming
                    ),
                ));
            }
        }
        if self.min_units == 0 {
            return Err(Error::config("sampling.min_units", "must be at least 1 (30 or more for a good interval), got 0"));
        }
        if let Some(e) = self.target_error {
            if !(e > 0.0 && e < 1.0) {
                return Err(Error::config("sampling.target_error", format!("must be above 0 and below 1 (0.01 is 1 %), got {e}")));
            }
        }
        Ok(())
    }

    /// Refuse what sampling would get wrong (see the module's documentation).
    pub fn check_run(&self, os: &OsConfig, threads: &[ThreadDef], instructions: u64, cores: u32, shared_cores: bool) -> Result<()> {
        let refuse =
            |key: &str, why: String| Err(Error::config(key, format!("{why}; sampled runs do not support it (run without sampling)")));
        if let Some(plan) = &self.schedule {
            if self.mode != "periodic" {
                return Err(Error::config(
                    "sampling.schedule",
                    format!("replays a periodic run's segments; mode = \"{}\" draws its own", self.mode),
                ));
            }
            plan.validate(threads.len(), instructions, self.unit)?;
        }
        if self.mode == "phases" && threads.len() > 1 {
            return Err(Error::config(
                "sampling.mode",
                format!("\"phases\" samples one program per run and this run has {}; use \"periodic\", which keeps co-running programs' relative progress", threads.len()),
            ));
        }
        if threads.len() as u32 > cores || shared_cores {
            return refuse("processes", format!("{} threads time-share {cores} cores", threads.len()));
        }
        if threads.iter().any(|t| t.barrier.is_some()) {
            return refuse("barrier_every", "the threads meet at barriers".into());
        }
        if threads.iter().any(|t| t.wait_at_end || t.exit_at_end) {
            return refuse("at_end", "threads wait or exit at their end".into());
        }
        if threads.iter().any(|t| t.arrive_ns > 0.0) {
            return refuse("processes.arrive_ns", "a thread arrives later".into());
        }
        if threads.iter().any(|t| t.instructions.is_some()) {
            return refuse("processes.instructions", "a thread has its own instruction target".into());
        }
        if os.dynamic != "none" {
            return refuse("os.dynamic", format!("the dynamic policy {} adapts every epoch of simulated time", os.dynamic));
        }
        if os.migration != "none" {
            return refuse("os.migration", format!("{} migrates pages on a timer", os.migration));
        }
        if os.overflow == "swap" {
            return refuse("os.overflow", "swapping charges faults that functional warming would skip".into());
        }
        if os.hot_pages.enabled {
            return refuse("os.hot_pages.enabled", "hot-page sampling runs on a timer".into());
        }
        Ok(())
    }
}

/// One core's measured unit.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Instructions the core had executed (detailed, warmed and skipped) when the unit began.
    pub position: u64,
    /// The detailed segment it was measured in (0-based): units of one segment ran together.
    pub segment: u64,
    /// Instructions of the run the unit stands for: from the end of the period of the core's last
    /// unit to the end of this one's (the last up to the run's end). They differ as the IPC
    /// estimates move and faster cores shorten the periods, so each unit is
    /// weighted by it (an expansion estimator), or the first period's unit, of `period`
    /// instructions for every core, would weigh as much as a later one k times longer.
    pub weight: u64,
    /// The phase (stratum) it was drawn in; 0 in periodic sampling.
    pub stratum: u32,
    pub core: CoreStats,
    pub memory: CoreMemoryStats,
}

/// A sampled run's record: every core's units and what was fast-forwarded.
#[derive(Clone, Debug)]
pub struct SampledRun {
    pub spec: SamplingSpec,
    pub period: u64,
    pub instructions: u64,
    /// Detailed segments run.
    pub segments: u64,
    /// Per core: its units, and instructions run in detail, warmed and skipped.
    pub units: Vec<Vec<Unit>>,
    pub detailed: Vec<u64>,
    pub warmed: Vec<u64>,
    pub skipped: Vec<u64>,
    /// Per core: its loads and instructions within the run's `instructions`, fast-forwarded and
    /// detailed alike (a stretch that crosses the end counts in proportion): the program's memory
    /// intensity over the whole run, which `regression` corrects the units' by.
    pub run_loads: Vec<f64>,
    pub run_instructions: Vec<f64>,
    /// Runs made to meet `target_error` (1 or 2), filled by the caller.
    pub passes: u32,
    pub warnings: Vec<String>,
    /// Per core: each stratum's share of the run (W_h) when the units are a stratified sample
    /// (phases); empty otherwise.
    pub strata: Vec<Vec<f64>>,
    /// What phase sampling found (`phase_sampling.rs`), for the report.
    pub phases: Option<Value>,
    /// The detailed segments run (periodic sampling), for another run to replay.
    pub schedule: Schedule,
    /// Per detailed segment: its core cycles and the DRAM energy spent in it,
    /// nanojoules (empty without the device's power figures): the memory system's sample.
    pub segment_cycles: Vec<u64>,
    pub segment_energy_nj: Vec<f64>,
}

impl SampledRun {
    pub(super) fn new(spec: &SamplingSpec, period: u64, instructions: u64, n: usize) -> SampledRun {
        SampledRun {
            spec: spec.clone(),
            period,
            instructions,
            segments: 0,
            units: vec![Vec::new(); n],
            detailed: vec![0; n],
            warmed: vec![0; n],
            skipped: vec![0; n],
            run_loads: vec![0.0; n],
            run_instructions: vec![0.0; n],
            passes: 1,
            warnings: Vec::new(),
            strata: vec![Vec::new(); n],
            phases: None,
            schedule: Schedule::new(n, instructions),
            segment_cycles: Vec::new(),
            segment_energy_nj: Vec::new(),
        }
    }

    /// Core `c` ran `length` instructions from `start` with `loads` loads: the part within the
    /// run's `instructions` counts towards its intensity over the run (`run_loads`).
    pub(super) fn count_in_run(&mut self, c: usize, start: u64, length: u64, loads: u64) {
        if length == 0 || start >= self.instructions {
            return;
        }
        let inside = (self.instructions - start).min(length) as f64 / length as f64;
        self.run_loads[c] += loads as f64 * inside;
        self.run_instructions[c] += length as f64 * inside;
    }

    /// The run's end: warnings on cores with few units, the memory system's last accounts.
    pub(super) fn finish(&mut self, sim: &mut Sim, now_dram: Cycle) {
        let floor = self.spec.unit + self.spec.warming;
        let remedy = if self.spec.mode == "phases" {
            "raise sampling.min_units".to_string()
        } else if self.period > floor {
            format!("lower sampling.period, now {}, to as little as unit + warming = {floor}", self.period)
        } else {
            "run more instructions, or shorten sampling.unit or sampling.warming".to_string()
        };
        // A faster program's units (`min_units`): a detailed segment is at least unit + warming
        // of the slowest program, so one k times faster covers k times that of its own
        // instructions per segment, and a run too short for `min_units` such segments gives fewer.
        let ipc: Vec<f64> = self.units.iter().map(|u| ipc_so_far(u)).collect();
        let slowest = (0..ipc.len()).filter(|&c| ipc[c] > 0.0).min_by(|&a, &b| ipc[a].total_cmp(&ipc[b]));
        for (c, u) in self.units.iter().enumerate() {
            let short_of = match slowest {
                Some(s) if self.strata[c].is_empty() && s != c => {
                    Some((s, (self.spec.min_units as usize).min(self.units[s].len()))).filter(|&(_, due)| u.len() < due)
                }
                _ => None,
            };
            if let Some((s, _)) = short_of {
                let k = ipc[c] / ipc[s];
                self.warnings.push(format!(
                    "sampling: core {c} measured {} unit(s), fewer than sampling.min_units = {} or the slowest program's {}: it runs {k:.1}x as fast, so each detailed segment covers about {} of its instructions (unit + warming = {floor} of the slowest's); run more instructions, or shorten sampling.unit or sampling.warming",
                    u.len(),
                    self.spec.min_units,
                    self.units[s].len(),
                    (k * floor as f64).round() as u64,
                ));
            } else if u.len() < FEW_UNITS {
                self.warnings.push(format!(
                    "sampling: core {c} measured {} unit(s): its interval's normal approximation is weak (30 or more recommended; {remedy})",
                    u.len()
                ));
            }
        }
        for c in 0..self.units.len() {
            let cpi = self.cpi(c);
            if cpi.len() >= 2 && cpi.iter().all(|&x| x == cpi[0]) && !self.loads_nothing(c) {
                // Short units measure the pipeline; longer ones that agree missed what varies.
                let why = if self.spec.unit < MIN_UNIT {
                    format!(
                        "units of sampling.unit = {} instructions are too short to measure the program (SMARTS uses 1,000 or more)",
                        self.spec.unit
                    )
                } else {
                    format!("the units missed whatever changes the program's pace, which more units may find: {remedy}")
                };
                self.warnings.push(format!(
                    "sampling: core {c}'s {} units all measured a CPI of {}: no spread to estimate an error from, so no interval; {why}",
                    cpi.len(),
                    cpi[0],
                ));
            } else if !self.strata[c].is_empty() && cpi.len() >= 2 && self.estimate(c).half_width().is_infinite() {
                self.warnings.push(format!(
                    "sampling: core {c}'s phases give no interval: no phase has two units whose CPIs differ, so a phase of one unit has no spread to borrow; raise sampling.min_units or lower sampling.clusters (now {})",
                    self.spec.clusters.map_or("the default".to_string(), |k| k.to_string())
                ));
            }
        }
        // A run too short to skip anything is a detailed run with a sampled label: said.
        let (detailed, covered) =
            (self.detailed.iter().sum::<u64>(), self.detailed.iter().chain(&self.warmed).chain(&self.skipped).sum::<u64>());
        if covered > 0 && detailed as f64 >= HARDLY_SAMPLED * covered as f64 {
            self.warnings.push(format!(
                "sampling: {:.0} % of the run's instructions ran in detail (sampling.period = {}, unit + warming = {floor}): the run is too short for sampling to skip much, so it saves little time; run in detail, or run more instructions",
                100.0 * detailed as f64 / covered as f64,
                self.period
            ));
        }
        if self.spec.unit < MIN_UNIT {
            self.warnings.push(format!(
                "sampling.unit = {} instructions is shorter than {MIN_UNIT}: a unit this short measures the pipeline's fill and drain more than the program (SMARTS's units are 1,000 instructions; the default is 20,000)",
                self.spec.unit
            ));
        }
        sim.mem.finish(now_dram);
        if !sim.checkers.is_empty() {
            super::multicore_sim::observe_commands(&mut sim.mem, &mut sim.checkers, &mut sim.commands);
        }
    }

    /// Core `c`'s statistics over its units (what the run reports as its counters).
    /// Its `cycles` are the units' instructions at the estimated CPI (`estimate`), so its IPC
    /// is the estimate; the other counters are the units' sums.
    pub fn totals(&self, c: usize) -> (CoreStats, CoreMemoryStats) {
        let mut core = CoreStats::default();
        let mut memory = CoreMemoryStats::default();
        for u in &self.units[c] {
            core.add(&u.core);
            memory.add(&u.memory);
        }
        if !self.units[c].is_empty() {
            core.cycles = (core.retired as f64 * self.estimate(c).mean).round() as u64;
        }
        (core, memory)
    }

    /// Core `c`'s CPI per unit.
    pub fn cpi(&self, c: usize) -> Vec<f64> {
        self.units[c].iter().map(|u| u.core.cycles as f64 / u.core.retired.max(1) as f64).collect()
    }

    /// Core `c`'s CPI estimate: the cycles its units' CPIs expand to over the instructions each
    /// stands for (`Unit::weight`), over those instructions (with equal periods, the mean of
    /// the units' CPIs), corrected by the program's loads per instruction over its whole run
    /// (`regression`) when that explains part of the units' variation. Its spread is the
    /// uncorrected estimator's, which is the wider: the interval stays conservative.
    pub fn estimate(&self, c: usize) -> Estimate {
        let e = if !self.strata[c].is_empty() {
            self.stratified(c)
        } else {
            let plain = self.plain(c);
            match self.regression(c) {
                Some(r) => Estimate { mean: r.mean, ..plain },
                None => plain,
            }
        };
        // Units that all measured one CPI show no spread to estimate an error from (units of a
        // few instructions measure the pipeline, not the program): no interval, not a zero one.
        // Not so for a core that loaded nothing over its whole run (counted, not sampled): every
        // instruction runs at the pace its units measured, so its CPI is exact.
        if e.n >= 2 && e.sd == 0.0 && !self.loads_nothing(c) {
            return Estimate { sd: f64::INFINITY, ..e };
        }
        e
    }

    /// Whether core `c` (periodic sampling, which counts every record of the run) had no load
    /// in its whole run: its pace is the pipeline's throughout, known rather than sampled.
    fn loads_nothing(&self, c: usize) -> bool {
        self.strata[c].is_empty() && self.run_instructions[c] > 0.0 && self.run_loads[c] == 0.0
    }

    /// The run's instructions per instruction core `c`'s units measured: what scales its units'
    /// counts (requests, row-buffer outcomes) to the run, whose every core counts its
    /// `instructions` as in a detailed run; 1 without units. Not the units' weights summed: those
    /// only weigh the units against each other, and fall short of the run when units go
    /// unmeasured (a replayed schedule's last units past a faster core's end: stream's 30 of
    /// buddy's 39 summed to 3.07 M of 4 M, and the mix's row-buffer miss rate read 49.8 % for
    /// 44.0 %).
    pub fn scale(&self, c: usize) -> f64 {
        let measured: u64 = self.units[c].iter().map(|u| u.core.retired).sum();
        if measured == 0 {
            1.0
        } else {
            self.instructions as f64 / measured as f64
        }
    }

    /// Core `c`'s plain (ratio) estimate: its units' CPIs weighted by the instructions each
    /// stands for.
    fn plain(&self, c: usize) -> Estimate {
        let cycles: Vec<f64> =
            self.units[c].iter().map(|u| u.weight as f64 * u.core.cycles as f64 / u.core.retired.max(1) as f64).collect();
        let weights: Vec<f64> = self.units[c].iter().map(|u| u.weight as f64).collect();
        Estimate::ratio(&cycles, &weights)
    }

    /// Core `c`'s regression estimate of its CPI on loads per instruction (Cochran, Sampling
    /// Techniques, ch. 7): mean(CPI) + b (X - mean(x)) over the units, weighted as `estimate`,
    /// where x is a unit's loads per instruction, b the least-squares slope of CPI on x over
    /// the units, and X the loads per instruction over the core's whole run (`run_loads`: the
    /// gaps read every record and the segments run every load, so X is known, not sampled). A
    /// unit that fell in a more load-intensive stretch than the program's average is thus
    /// weighed back, which removes most of the noise of where the units fell. None (the plain
    /// estimate stands) with fewer than `FEW_UNITS` units, none of the run counted, units of
    /// one intensity, a fit that leaves the units' CPIs no less spread than their mean does,
    /// or a correction wider than the plain estimate's 95 % half-width.
    pub fn regression(&self, c: usize) -> Option<Regression> {
        let units = &self.units[c];
        if units.len() < FEW_UNITS || self.run_instructions[c] <= 0.0 {
            return None;
        }
        let w: Vec<f64> = units.iter().map(|u| u.weight as f64).collect();
        let y: Vec<f64> = units.iter().map(|u| u.core.cycles as f64 / u.core.retired.max(1) as f64).collect();
        let x: Vec<f64> = units.iter().map(|u| u.core.loads as f64 / u.core.retired.max(1) as f64).collect();
        let total: f64 = w.iter().sum();
        let mean = |v: &[f64]| v.iter().zip(&w).map(|(v, w)| v * w).sum::<f64>() / total;
        let (ybar, xbar) = (mean(&y), mean(&x));
        let sxx: f64 = x.iter().zip(&w).map(|(x, w)| w * (x - xbar).powi(2)).sum();
        if sxx <= 0.0 {
            return None;
        }
        let slope = x.iter().zip(&y).zip(&w).map(|((x, y), w)| w * (x - xbar) * (y - ybar)).sum::<f64>() / sxx;
        let spread: f64 = y.iter().zip(&w).map(|(y, w)| w * (y - ybar).powi(2)).sum();
        let left: f64 = x.iter().zip(&y).zip(&w).map(|((x, y), w)| w * (y - ybar - slope * (x - xbar)).powi(2)).sum();
        // A fit that explains nothing after its lost degree of freedom is not used.
        let n = units.len() as f64;
        if left / (n - 2.0) >= spread / (n - 1.0) {
            return None;
        }
        let population = self.run_loads[c] / self.run_instructions[c];
        let mean = ybar + slope * (population - xbar);
        // A correction larger than the plain estimate's own 95 % half-width is not the noise
        // of where the units fell but a line extrapolated past what the units saw (a bursty
        // program whose units missed its bursts: CPI does not grow linearly with loads).
        if (mean - ybar).abs() > self.plain(c).half_width() {
            return None;
        }
        Some(Regression { mean, slope, units_loads: xbar, run_loads: population })
    }

    /// Core `c`'s stratified estimate of its CPI (`stratified_ratio` of cycles to instructions):
    /// sum_h W_h CPI_h, variance sum_h W_h^2 s_h^2 / n_h.
    fn stratified(&self, c: usize) -> Estimate {
        self.stratified_ratio(c, |u| u.core.cycles as f64, |u| u.core.retired as f64)
    }

    /// Core `c`'s stratified (phases) estimate of the ratio of two counts of its units:
    /// R = sum_h W_h y_h / sum_h W_h x_h, y_h and x_h the stratum's counts per instruction (its
    /// units' sums over their instructions), the combined ratio estimate (Cochran, Sampling
    /// Techniques, §6.11); its variance is sum_h W_h^2 s_h^2 / n_h over (sum_h W_h x_h)^2, s_h the
    /// spread of the stratum's residuals y - R x per instruction (a stratum with one unit takes
    /// the largest s_h of the others; with none to take, the variance is infinite). With x the
    /// instructions, a per-instruction mean (CPI, misses per instruction). Each phase then weighs
    /// its share of the run, not its units' share of the sample. An `Estimate` whose
    /// `sd / sqrt(n)` is the variance's root; 0, exactly, when no unit counted any x.
    pub fn stratified_ratio(&self, c: usize, y: impl Fn(&Unit) -> f64, x: impl Fn(&Unit) -> f64) -> Estimate {
        let weights = &self.strata[c];
        let stratum = |h: usize| self.units[c].iter().filter(move |u| u.stratum as usize == h);
        let n: usize = self.units[c].len();
        let per_instruction = |f: &dyn Fn(&Unit) -> f64| -> f64 {
            (0..weights.len())
                .map(|h| {
                    let instructions: f64 = stratum(h).map(|u| u.core.retired as f64).sum();
                    if instructions > 0.0 {
                        weights[h] * stratum(h).map(f).sum::<f64>() / instructions
                    } else {
                        0.0
                    }
                })
                .sum()
        };
        let (big_y, big_x) = (per_instruction(&y), per_instruction(&x));
        if big_x <= 0.0 {
            return Estimate { mean: 0.0, sd: 0.0, n };
        }
        let r = big_y / big_x;
        let strata: Vec<Estimate> = (0..weights.len())
            .map(|h| {
                let residuals: Vec<f64> = stratum(h).map(|u| y(u) - r * x(u)).collect();
                let instructions: Vec<f64> = stratum(h).map(|u| u.core.retired as f64).collect();
                Estimate::ratio(&residuals, &instructions)
            })
            .collect();
        // No stratum with two units: no spread to borrow, so no interval (infinite, as one unit's).
        let borrowed = strata.iter().filter(|e| e.n >= 2).map(|e| e.sd).reduce(f64::max).unwrap_or(f64::INFINITY);
        let variance: f64 = strata
            .iter()
            .zip(weights)
            .filter(|(e, _)| e.n > 0)
            .map(|(e, w)| w * w * if e.n >= 2 { e.sd } else { borrowed }.powi(2) / e.n as f64)
            .sum();
        Estimate { mean: r, sd: (variance * n as f64).sqrt() / big_x, n }
    }

    /// Core `c`'s row-buffer miss rate (misses and conflicts over requests) and its spread:
    /// the units' ratio estimate, or in phases mode their stratified one (`stratified_ratio`).
    pub fn row_miss_rate(&self, c: usize) -> Estimate {
        let (misses, requests) = (|u: &Unit| row_outcomes(u).0, |u: &Unit| row_outcomes(u).1);
        if !self.strata[c].is_empty() {
            return self.stratified_ratio(c, misses, requests);
        }
        let y: Vec<f64> = self.units[c].iter().map(misses).collect();
        let x: Vec<f64> = self.units[c].iter().map(requests).collect();
        Estimate::ratio(&y, &x)
    }

    /// Core `c`'s LLC misses per instruction: the units' sums' ratio, or in phases mode the
    /// stratified estimate (what the run reports as the core's MPKI).
    pub fn llc_misses_per_instruction(&self, c: usize) -> f64 {
        if !self.strata[c].is_empty() {
            return self.stratified_ratio(c, |u| u.memory.llc_misses as f64, |u| u.core.retired as f64).mean;
        }
        let misses: u64 = self.units[c].iter().map(|u| u.memory.llc_misses).sum();
        let instructions: u64 = self.units[c].iter().map(|u| u.core.retired).sum();
        if instructions == 0 {
            0.0
        } else {
            misses as f64 / instructions as f64
        }
    }

    /// The DRAM energy of unit `u`'s cycles: its segment's energy in proportion to the cycles
    /// the unit took of them (nJ; None without the segments' energy).
    pub fn unit_energy_nj(&self, u: &Unit) -> Option<f64> {
        let i = u.segment as usize;
        let (energy, cycles) = (*self.segment_energy_nj.get(i)?, *self.segment_cycles.get(i)?);
        Some(if cycles > 0 { energy * u.core.cycles as f64 / cycles as f64 } else { 0.0 })
    }

    /// The units a stratified (phases) run needs for a relative half-width of `target`: its
    /// units scaled by the square of the ratio of the reached to the asked error.
    pub fn units_for(&self, target: f64) -> u64 {
        let had = self.units.iter().map(|u| u.len()).sum::<usize>().max(1) as f64;
        (had * (self.worst_error() / target).powi(2)).ceil() as u64
    }

    /// The 95 % interval of the run's row-buffer miss rate (misses and conflicts over requests,
    /// each core's units scaled to the run by `scale`, as the reported rate): a combined ratio
    /// estimator, linearised (Cochran §6.4): each unit's residual, misses less the rate times
    /// requests, varies within its core, and two cores' residuals co-vary through the detailed
    /// segments both measured in (they met one contention), as the CPI estimates' do in
    /// `memtint.sampling`. A phases run (one program) has its core's stratified interval
    /// (`row_miss_rate`). None when a core measured fewer than two units, or no unit met a
    /// request in a run that made some; exactly 0 when no core loaded anything.
    pub fn row_miss_rate_interval(&self) -> Option<(f64, f64)> {
        if self.strata.iter().any(|s| !s.is_empty()) {
            if self.units.len() != 1 {
                return None;
            }
            if self.units[0].iter().all(|u| row_outcomes(u).1 == 0.0) {
                return None; // the units met no request; the run may have
            }
            let e = self.row_miss_rate(0);
            return e.half_width().is_finite().then(|| rate_interval(&e));
        }
        let scales: Vec<f64> = (0..self.units.len()).map(|c| self.scale(c)).collect();
        let (mut misses, mut accesses) = (0.0, 0.0);
        for (units, k) in self.units.iter().zip(&scales) {
            for (m, a) in units.iter().map(row_outcomes) {
                misses += k * m;
                accesses += k * a;
            }
        }
        if accesses == 0.0 {
            // Exact only where every core loaded nothing over its whole run (counted in its
            // gaps); otherwise the units missed whatever requests the run made.
            return (0..self.units.len()).all(|c| self.loads_nothing(c)).then_some((0.0, 0.0));
        }
        let rate = misses / accesses;
        // Per core: each unit's segment and residual.
        let residuals: Vec<Vec<(u64, f64)>> = self
            .units
            .iter()
            .map(|units| {
                units
                    .iter()
                    .map(|u| {
                        let (m, a) = row_outcomes(u);
                        (u.segment, m - rate * a)
                    })
                    .collect()
            })
            .collect();
        if residuals.iter().any(|r| r.len() == 1) {
            return None;
        }
        let mut variance = 0.0;
        for (c, rc) in residuals.iter().enumerate() {
            for (d, rd) in residuals.iter().enumerate() {
                // The residuals of the units the two cores measured in the same segments (a core
                // with itself: all its units). Units are in segment order, one per segment.
                let mut pairs: Vec<(f64, f64)> = Vec::new();
                let (mut i, mut j) = (0, 0);
                while i < rc.len() && j < rd.len() {
                    match rc[i].0.cmp(&rd[j].0) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            pairs.push((rc[i].1, rd[j].1));
                            i += 1;
                            j += 1;
                        }
                    }
                }
                if pairs.len() < 2 {
                    continue;
                }
                let n = pairs.len() as f64;
                let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
                let cov = pairs.iter().map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / (n - 1.0);
                // The covariance of the two cores' totals: k_c k_d n_cd cov.
                variance += scales[c] * scales[d] * n * cov;
            }
        }
        let h = Z95 * variance.max(0.0).sqrt() / accesses;
        Some(((rate - h).max(0.0), (rate + h).min(1.0)))
    }

    /// The largest relative half-width of the cores' IPC intervals.
    pub fn worst_error(&self) -> f64 {
        (0..self.units.len()).map(|c| self.estimate(c).relative_half_width()).fold(0.0, f64::max)
    }

    /// The period that gives every core the units its CPI's variation needs for a relative
    /// half-width of `target` (n = (z CV / e)^2, SMARTS's formula; 30 for a core with fewer than
    /// two units, whose variation is unknown): this period scaled by the smallest ratio of the
    /// units a core had to the units it needs. Also the most units a core needs.
    pub fn period_for(&self, target: f64) -> (u64, u64) {
        let mut scale = f64::INFINITY;
        let mut most = 0u64;
        for c in 0..self.units.len() {
            let e = self.estimate(c);
            let needed = if e.n < 2 { 30.0 } else { (Z95 * e.cv() / target).powi(2).ceil().max(2.0) };
            most = most.max(needed as u64);
            scale = scale.min(e.n.max(1) as f64 / needed);
        }
        (((self.period as f64) * scale.min(1.0)).floor() as u64, most)
    }

    /// The `sampling` section of the run's statistics and each core's.
    pub fn report(&self) -> (Value, Vec<Value>) {
        let cores: Vec<Value> = (0..self.units.len())
            .map(|c| {
                let cpi = self.cpi(c);
                let e = self.estimate(c);
                let regression = if self.strata[c].is_empty() { self.regression(c) } else { None };
                let (lo, hi) = e.interval();
                let accesses: Vec<u64> =
                    self.units[c].iter().map(|u| u.memory.row_hits + u.memory.row_misses + u.memory.row_conflicts).collect();
                let misses: Vec<u64> = self.units[c].iter().map(|u| u.memory.row_misses + u.memory.row_conflicts).collect();
                // No request in any unit: a rate of 0, known exactly where the core loaded
                // nothing over its whole run, else unknown (the units met none; the run may have).
                let rb = match accesses.iter().all(|&a| a == 0) {
                    true if self.loads_nothing(c) => (0.0, 0.0),
                    true => (0.0, 1.0),
                    false => rate_interval(&self.row_miss_rate(c)),
                };
                json!({
                    "units": e.n,
                    "cpi_mean": e.mean,
                    "cpi_stddev": e.sd,
                    "ipc_ci95": [if hi > 0.0 { 1.0 / hi } else { 0.0 }, if lo > 0.0 { 1.0 / lo } else { f64::INFINITY }],
                    "ipc_relative_error": e.relative_half_width(),
                    "row_buffer_miss_rate_ci95": [rb.0, rb.1],
                    "unit_cpi": cpi,
                    "unit_instructions": self.units[c].iter().map(|u| u.core.retired).collect::<Vec<_>>(),
                    "unit_cycles": self.units[c].iter().map(|u| u.core.cycles).collect::<Vec<_>>(),
                    "unit_weights": self.units[c].iter().map(|u| u.weight).collect::<Vec<_>>(),
                    "unit_positions": self.units[c].iter().map(|u| u.position).collect::<Vec<_>>(),
                    "unit_segments": self.units[c].iter().map(|u| u.segment).collect::<Vec<_>>(),
                    "unit_strata": self.units[c].iter().map(|u| u.stratum).collect::<Vec<_>>(),
                    "strata_weights": self.strata[c],
                    "unit_row_accesses": accesses,
                    "unit_row_misses": misses,
                    "unit_llc_misses": self.units[c].iter().map(|u| u.memory.llc_misses).collect::<Vec<_>>(),
                    "unit_loads": self.units[c].iter().map(|u| u.core.loads).collect::<Vec<_>>(),
                    // Counted by periodic sampling's gaps; a phases run's stratified estimate does not use them.
                    "run_loads": self.strata[c].is_empty().then_some(self.run_loads[c]),
                    "run_instructions": self.strata[c].is_empty().then_some(self.run_instructions[c]),
                    "estimator": if !self.strata[c].is_empty() { "stratified" } else if regression.is_some() { "regression" } else { "ratio" },
                    "regression_slope": regression.map(|r| r.slope),
                    "loads_per_instruction": regression.map(|r| json!({"units": r.units_loads, "run": r.run_loads})),
                    "detailed_instructions": self.detailed[c],
                    "warmed_instructions": self.warmed[c],
                    "skipped_instructions": self.skipped[c],
                })
            })
            .collect();
        let worst = self.worst_error();
        let mut run = json!({
            "mode": self.spec.mode,
            "unit": self.spec.unit,
            "period": self.period,
            "warming": self.spec.warming,
            "functional": self.spec.functional,
            "target_error": self.spec.target_error,
            "warm_prefetchers": self.spec.warm_prefetchers,
            "confidence": 0.95,
            "segments": self.segments,
            "passes": self.passes,
            "worst_ipc_relative_error": worst,
            "detailed_fraction": self.detailed.iter().sum::<u64>() as f64
                / (self.detailed.iter().sum::<u64>() + self.warmed.iter().sum::<u64>() + self.skipped.iter().sum::<u64>()).max(1) as f64,
        });
        if let Some(p) = &self.phases {
            run["phases"] = p.clone();
        }
        if self.schedule.segments() > 0 {
            run["schedule"] = json!(self.schedule);
        }
        if self.spec.schedule.is_some() {
            run["replayed"] = json!(true);
        }
        if let Some(k) = self.spec.clusters {
            run["clusters"] = json!(k);
        }
        (run, cores)
    }
}

/// A unit's row-buffer misses (and conflicts) and its requests.
fn row_outcomes(u: &Unit) -> (f64, f64) {
    let m = &u.memory;
    ((m.row_misses + m.row_conflicts) as f64, (m.row_hits + m.row_misses + m.row_conflicts) as f64)
}

/// A rate's 95 % interval, within [0, 1].
fn rate_interval(e: &Estimate) -> (f64, f64) {
    let h = e.half_width();
    ((e.mean - h).max(0.0), (e.mean + h).min(1.0))
}

/// A regression estimate of a core's CPI (`SampledRun::regression`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Regression {
    pub mean: f64,
    /// CPI per unit of loads per instruction, fitted over the units.
    pub slope: f64,
    /// Loads per instruction in the units (their weighted mean) and over the whole run.
    pub units_loads: f64,
    pub run_loads: f64,
}

/// An estimate, the standard deviation of the units' values it is the mean of (or of a ratio
/// estimator's linearised residuals), and the units; its 95 % interval by the CLT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub sd: f64,
    pub n: usize,
}

impl Estimate {
    /// sum(y) / sum(x) over units, with the residuals (y_k - R x_k) / mean(x) whose variance over
    /// n is the estimator's (Cochran, Sampling Techniques, §6.4); with equal x, the mean of y/x.
    pub fn ratio(y: &[f64], x: &[f64]) -> Estimate {
        let n = x.len();
        let sx: f64 = x.iter().sum();
        if n == 0 || sx <= 0.0 {
            return Estimate { mean: 0.0, sd: 0.0, n };
        }
        let r = y.iter().sum::<f64>() / sx;
        let xbar = sx / n as f64;
        let residuals: Vec<f64> = y.iter().zip(x).map(|(y, x)| (y - r * x) / xbar).collect();
        Estimate { mean: r, sd: Estimate::of(&residuals).sd, n }
    }

    pub fn of(x: &[f64]) -> Estimate {
        let n = x.len();
        if n == 0 {
            return Estimate { mean: 0.0, sd: 0.0, n };
        }
        let mean = x.iter().sum::<f64>() / n as f64;
        let sd = if n < 2 { 0.0 } else { (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() };
        Estimate { mean, sd, n }
    }

    pub fn half_width(&self) -> f64 {
        if self.n < 2 {
            f64::INFINITY
        } else {
            Z95 * self.sd / (self.n as f64).sqrt()
        }
    }

    pub fn interval(&self) -> (f64, f64) {
        let h = self.half_width();
        (self.mean - h, self.mean + h)
    }

    pub fn relative_half_width(&self) -> f64 {
        if self.mean > 0.0 {
            self.half_width() / self.mean
        } else {
            0.0
        }
    }

    /// Coefficient of variation.
    pub fn cv(&self) -> f64 {
        if self.mean > 0.0 {
            self.sd / self.mean
        } else {
            0.0
        }
    }
}

/// Where one core is in the current segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Running its detailed warm-up.
    Warming,
    /// Measuring its unit (since `start`).
    Measuring,
    /// Measured, or not measured in this segment: running for the others' contention.
    Done,
}

/// Run `sim` sampled: periods of functional warming then a detailed segment, until no core has
/// a unit left within `instructions` (see the module's documentation).
pub(super) fn run(
    sim: &mut Sim,
    threads: &mut [ThreadDef],
    spec: &SamplingSpec,
    instructions: u64,
    clock: ClockRatio,
    watchdog_cycles: u64,
    seed: u64,
    meter: &EnergyMeter,
) -> Result<(RunEnd, SampledRun)> {
    let n = threads.len();
    let period = spec.period(instructions);
    let (unit, warming) = (spec.unit, spec.warming);
    let mut rec = SampledRun::new(spec, period, instructions, n);
    sim.hier.set_warm_prefetching(spec.warm_prefetchers);
    // Per core: instructions fast-forwarded so far (its position is that plus `retired`), and
    // where its current period began.
    let mut forwarded = vec![0u64; n];
    let mut period_start = vec![0u64; n];
    let mut now = LoopClock::default();
    let mut progress = Progress::new(n, watchdog_cycles);
    let mut phases = vec![Phase::Done; n];
    let mut starts: Vec<Option<(u64, CoreStats, CoreMemoryStats)>> = vec![None; n];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Instructions each core retired in the last detailed segment.
    let mut pace = vec![0u64; n];
    // Per core: the instruction up to which its units stand for the run.
    let mut covered = vec![0u64; n];
    // Per core: periods since its last unit.
    let mut since = vec![0u64; n];
    // Per core: the rest of the record a segment or a gap ended inside, run first from there.
    let mut rest: Vec<Option<RecordRest>> = vec![None; n];
    let mut replayed = 0usize;
    loop {
        let position: Vec<u64> = (0..n).map(|c| forwarded[c] + sim.cores[c].retired()).collect();
        // A core already past its point counts what it ran in detail as warm-up, so the last
        // period's unit fits in the run.
        let warm_up_at = |at: &[u64]| -> Vec<u64> { (0..n).map(|c| detailed_warm_up(warming, position[c], at[c])).collect() };
        let (at, warm_up, sizes, measured, weights) = if let Some(plan) = &spec.schedule {
            // Another run's segments, replayed: each core's gap ends where that run's did, and
            // it measures the units that run measured (matched units; `Schedule`).
            let Some(i) = (replayed < plan.segments()).then_some(replayed) else { break };
            replayed += 1;
            let at: Vec<u64> = (0..n).map(|c| plan.at[c][i]).collect();
            let warm_up = warm_up_at(&at);
            let sizes: Vec<u64> =
                (0..n).map(|c| plan.unit[c][i].min(instructions.saturating_sub(position[c].max(at[c]) + warm_up[c]))).collect();
            let measured: Vec<bool> = (0..n).map(|c| plan.unit[c][i] > 0 && sizes[c] >= unit).collect();
            if !measured.iter().any(|&m| m) {
                continue;
            }
            let weights: Vec<u64> = (0..n).map(|c| plan.weight[c][i].max(1)).collect();
            (at, warm_up, sizes, measured, weights)
        } else {
            // Each core's pace against the slowest program (by its units' IPC so far): while it
            // measures, its units' IPC ratio; past its `instructions` (unmeasured, running only for
            // the contention it causes), the instructions it retired beside the slowest in the last
            // segment, as a detailed run advances it through whatever phases come next (held at its
            // units' pace, pagerank beside sort, fdtd and bzip2 came out 6.7 % fast; 1.9 % this way).
            let ipc: Vec<f64> = (0..n).map(|c| ipc_so_far(&rec.units[c])).collect();
            let known = n > 1 && ipc.iter().all(|&v| v > 0.0);
            let slowest = ipc.iter().copied().fold(f64::INFINITY, f64::min);
            let reference = (0..n).find(|&c| ipc[c] == slowest).unwrap_or(0);
            let measuring = |c: usize| period_start[c] < instructions;
            let ratio: Vec<f64> = (0..n)
                .map(|c| if !measuring(c) && pace[reference] > 0 { pace[c] as f64 / pace[reference] as f64 } else { ipc[c] / slowest })
                .collect();
            // Each core's spacing of units in its own instructions; the periods shorten to `period`
            // over a whole number so that the core asking for the closest units can have them, and
            // each core measures every `cadence` periods (so its units stay evenly spaced and weigh
            // alike).
            let least = spec.min_units.min(instructions / period).max(1) as f64;
            let spacing: Vec<f64> = (0..n).map(|c| (period as f64 * ratio[c]).min(instructions as f64 / least)).collect();
            let finest = (0..n)
                .filter(|&c| known && measuring(c))
                .map(|c| spacing[c] / ratio[c])
                .fold(period as f64, f64::min)
                .max((unit + warming) as f64);
            let base = (period as f64 / (period as f64 / finest).ceil()).max((unit + warming) as f64);
            let cadence: Vec<u64> =
                (0..n).map(|c| if known { (spacing[c] / (base * ratio[c]) + 1e-9).floor().max(1.0) as u64 } else { 1 }).collect();
            let length: Vec<u64> =
                (0..n).map(|c| if known { (base * ratio[c]).round().max((unit + warming) as f64) as u64 } else { period }).collect();
            // Fast-forward each core to its segment's start, at one random point of the period for
            // every core (stratified random sampling: a fixed point could alias with a program's
            // phases, as a short trace's wrap-around; the period's room is the least core's).
            let room = (0..n).map(|c| length[c] - unit - warming).min().unwrap_or(0);
            let offset = if room > 0 { rng.gen_range(0..=room) as f64 / room as f64 } else { 0.0 };
            let at: Vec<u64> = (0..n).map(|c| period_start[c] + ((length[c] - unit - warming) as f64 * offset) as u64).collect();
            let warm_up = warm_up_at(&at);
            // Each core's unit: `unit` instructions for the slowest program, k times as many for one
            // k times faster (whole multiples, from the IPC estimates, never from the current phase:
            // a length that followed the phase would over-represent its fast phases), which it runs
            // in detail anyway while the slowest measures its unit; shortened to end within the run.
            // A core measures this period's unit if `unit` instructions of it fit in the run.
            let sizes: Vec<u64> = (0..n)
                .map(|c| {
                    let k = if known { (ipc[c] / slowest).floor().max(1.0) as u64 } else { 1 };
                    let start = position[c].max(at[c]) + warm_up[c];
                    (unit * k).min(instructions.saturating_sub(start))
                })
                .collect();
            // A core measures when its spacing is due (so a core's units stay evenly spaced, and
            // weigh alike, while a faster core shortens the periods) and `unit` instructions fit.
            if !sizes.iter().any(|&u| u >= unit) {
                break;
            }
            let end: Vec<u64> = (0..n).map(|c| (period_start[c] + length[c]).min(instructions)).collect();
            let measured: Vec<bool> = (0..n).map(|c| sizes[c] >= unit && since[c] + 1 >= cadence[c]).collect();
            for c in 0..n {
                since[c] = if measured[c] { 0 } else { since[c] + 1 };
            }
            if !measured.iter().any(|&m| m) {
                // No unit due: the next period's fast-forward covers this one.
                for c in 0..n {
                    period_start[c] += length[c];
                }
                continue;
            }
            let weights: Vec<u64> = (0..n).map(|c| (end[c] - covered[c].min(end[c])).max(1)).collect();
            for c in (0..n).filter(|&c| measured[c]) {
                covered[c] = end[c];
            }
            for c in 0..n {
                period_start[c] += length[c];
            }
            (at, warm_up, sizes, measured, weights)
        };
        // A measured core's point as where its unit began less the warm-up (a core already
        // further on than its point plus the warm-up began at once): a run replaying this one
        // starts the unit there too, unless its core has run further still.
        let planned: Vec<u64> = (0..n).map(|c| if measured[c] { at[c].max(position[c].saturating_sub(warming)) } else { at[c] }).collect();
        rec.schedule.push(&planned, &sizes, &measured, &weights);
        let ahead: Vec<u64> = (0..n).map(|c| at[c].saturating_sub(position[c])).collect();
        let warm: Vec<u64> = (0..n).map(|c| spec.functional.map_or(ahead[c], |f| f.min(ahead[c]))).collect();
        let gap_start: Vec<u64> = (0..n).map(|c| forwarded[c] + sim.cores[c].retired()).collect();
        let mut gap_loads = vec![0u64; n];
        for c in 0..n {
            let skip = ahead[c] - warm[c];
            gap_loads[c] = advance(&mut rest[c], threads[c].trace.as_mut(), skip, |_| Ok(()))?;
            rec.skipped[c] += skip;
            forwarded[c] += skip;
        }
        let warmed_loads = warm_in_turns(&mut sim.hier, threads, &mut rest, &warm)?;
        for c in 0..n {
            rec.count_in_run(c, gap_start[c], ahead[c], gap_loads[c] + warmed_loads[c]);
            rec.warmed[c] += warm[c];
            forwarded[c] += warm[c];
        }
        // The detailed segment.
        for c in 0..n {
            let core = &mut sim.cores[c];
            if let Some(r) = rest[c].take() {
                core.put_record_rest(r);
            }
            if rec.segments > 0 {
                core.resume_at(now.core);
            }
            phases[c] = if !measured[c] {
                core.clear_target();
                Phase::Done
            } else if warm_up[c] > 0 {
                core.set_target(core.retired() + warm_up[c]);
                Phase::Warming
            } else {
                starts[c] = Some((forwarded[c] + core.retired(), core.stats(), sim.hier.core_stats_at(c as u32, now.core)));
                core.set_target(core.retired() + sizes[c]);
                Phase::Measuring
            };
        }
        let before: Vec<u64> = sim.cores.iter().map(|c| c.retired()).collect();
        let loads_before: Vec<u64> = sim.cores.iter().map(|c| c.stats().loads).collect();
        let this_segment = rec.segments;
        let (cycles0, energy0) = (now.core, meter.total_nj(&sim.mem, now.dram));
        let mut left = phases.iter().filter(|&&p| p != Phase::Done).count();
        segment(sim, threads, clock, &mut now, &mut progress, |sim, c, at| {
            let core = &mut sim.cores[c];
            let snap = *core.target_stats().expect("reached");
            let memory = sim.hier.core_stats_at(c as u32, at);
            match phases[c] {
                Phase::Warming => {
                    starts[c] = Some((forwarded[c] + snap.retired, snap, memory));
                    core.set_target(snap.retired + sizes[c]);
                    phases[c] = Phase::Measuring;
                }
                Phase::Measuring => {
                    let (position, core0, mem0) = starts[c].take().expect("started");
                    rec.units[c].push(Unit {
                        position,
                        segment: this_segment,
                        weight: weights[c],
                        stratum: 0,
                        core: snap.since(&core0),
                        memory: memory.since(&mem0),
                    });
                    core.clear_target();
                    phases[c] = Phase::Done;
                    left -= 1;
                }
                Phase::Done => {}
            }
            left == 0
        })?;
        for c in 0..n {
            pace[c] = sim.cores[c].retired() - before[c];
            rec.count_in_run(c, forwarded[c] + before[c], pace[c], sim.cores[c].stats().loads - loads_before[c]);
            rec.detailed[c] += pace[c];
            rest[c] = take_record_rest(sim, c)?;
        }
        rec.segment_cycles.push(now.core - cycles0);
        if let (Some(e0), Some(e1)) = (energy0, meter.total_nj(&sim.mem, now.dram)) {
            rec.segment_energy_nj.push(e1 - e0);
        }
        rec.segments += 1;
    }
    // The stretch after the last unit, which the last units stand for too: read (not warmed) so
    // that the run's intensity covers all of `instructions`.
    for c in 0..n {
        let at = forwarded[c] + sim.cores[c].retired();
        if at < instructions {
            let loads = advance(&mut rest[c], threads[c].trace.as_mut(), instructions - at, |_| Ok(()))?;
            rec.count_in_run(c, at, instructions - at, loads);
        }
    }
    rec.finish(sim, now.dram);
    Ok((RunEnd { now_dram: now.dram, now_core: now.core, requests: now.requests }, rec))
}

/// Core `c`'s IPC over its units so far (0 before any).
fn ipc_so_far(units: &[Unit]) -> f64 {
    let (w, c) = units
        .iter()
        .fold((0.0, 0.0), |(w, c), u| (w + u.weight as f64, c + u.weight as f64 * u.core.cycles as f64 / u.core.retired.max(1) as f64));
    if c == 0.0 {
        0.0
    } else {
        w / c
    }
}

/// Reads past at least `instructions` of a trace without simulating them (wrapping at its end);
/// returns the instructions read.
pub(super) fn skip_records(trace: &mut dyn crate::workload::CpuTraceSource, instructions: u64) -> Result<u64> {
    let mut done = 0;
    while done < instructions {
        done += next_wrapping(trace)?.instructions();
    }
    Ok(done)
}

/// After a segment: the rest of core `c`'s current record (`OooCore::take_record_rest`), for
/// `advance` to move on from; a record whose load was sent has only its write-back left, warmed
/// here.
pub(super) fn take_record_rest(sim: &mut Sim, c: usize) -> Result<Option<RecordRest>> {
    let (rest, writeback) = sim.cores[c].take_record_rest();
    if let Some(wb) = writeback {
        sim.hier.warm_writeback(c as u32, wb)?;
    }
    Ok(rest)
}

/// Moves a thread's trace exactly `amount` instructions on: first the rest of the record
/// its core or the last gap stopped inside (`rest`), then whole records; the record that
/// crosses the end is split, its rest left in `rest` for the core to run (its bubbles, then its
/// load). `pass` sees every record passed whole (functional warming sends its load and
/// write-back through the page tables and caches). A unit thus starts at its own instruction,
/// not at the next record's start: a record of a million compute instructions would otherwise
/// move every unit that falls inside it to the burst of loads after it.
pub(super) fn advance(
    rest: &mut Option<RecordRest>,
    trace: &mut dyn crate::workload::CpuTraceSource,
    amount: u64,
    mut pass: impl FnMut(&RecordRest) -> Result<()>,
) -> Result<u64> {
    let mut done = 0;
    let mut passed = 0;
    let mut take = |r: RecordRest, done: &mut u64, rest: &mut Option<RecordRest>| -> Result<()> {
        if *done + r.instructions() <= amount {
            pass(&r)?;
            *done += r.instructions();
            passed += 1;
        } else {
            // amount - done < bubbles + 1: only bubbles are passed.
            *rest = Some(RecordRest { bubbles: r.bubbles - (amount - *done), ..r });
            *done = amount;
        }
        Ok(())
    };
    if amount > 0 {
        if let Some(r) = rest.take() {
            take(r, &mut done, rest)?;
        }
    }
    let mut batch = [crate::workload::CpuRecord::default(); super::multicore_sim::RECORD_BATCH];
    while done < amount {
        // The batch ends at the record that reaches `amount`: only that one can cross it.
        let (n, _) = next_records_wrapping(trace, &mut batch, amount - done)?;
        for rec in &batch[..n] {
            take(RecordRest { bubbles: rec.bubbles as u64, read: rec.read, writeback: rec.writeback }, &mut done, rest)?;
        }
    }
    Ok(passed)
}

/// Functional warming of exactly `amounts[t]` instructions of each thread (`advance`), in turns
/// proportional to the amounts so the shared LLC sees the threads interleaved as they ran.
/// Returns each thread's records passed (`advance`).
pub(super) fn warm_in_turns(
    hier: &mut super::MemoryHierarchy,
    threads: &mut [ThreadDef],
    rest: &mut [Option<RecordRest>],
    amounts: &[u64],
) -> Result<Vec<u64>> {
    let mut passed = vec![0u64; threads.len()];
    let most = amounts.iter().copied().max().unwrap_or(0);
    if most == 0 {
        return Ok(passed);
    }
    let turns = most.div_ceil(super::multicore_sim::WARMUP_TURN);
    let mut done = vec![0u64; threads.len()];
    for turn in 1..=turns {
        crate::interrupt::check()?;
        for (t, th) in threads.iter_mut().enumerate() {
            let end = amounts[t] * turn / turns;
            passed[t] += advance(&mut rest[t], th.trace.as_mut(), end - done[t], |r| hier.warm(t as u32, r.read, r.writeback))?;
            done[t] = end;
        }
    }
    Ok(passed)
}

/// The event loop's clocks and counts, kept across segments.
#[derive(Default)]
pub(super) struct LoopClock {
    pub(super) dram: Cycle,
    dram_ticked: bool,
    pub(super) core: Cycle,
    pub(super) requests: u64,
}

/// The detailed warm-up a unit at instruction `at` still needs when its core is at `position`:
/// instructions a core already ran in detail past its point (a drain that ran on, or a segment
/// it did not measure in) count as warm-up, so the unit starts at the point plus the warm-up, or
/// at once when further past.
pub(super) fn detailed_warm_up(warming: u64, position: u64, at: u64) -> u64 {
    warming.saturating_sub(position.saturating_sub(at))
}

/// One detailed segment: every core runs (one thread per core, never switched) until `reached`,
/// called for each core whose retirement target was crossed with the core cycle, says that the
/// segment's units are all measured; then the cores drain their windows.
pub(super) fn segment(
    sim: &mut Sim,
    threads: &mut [ThreadDef],
    clock: ClockRatio,
    now: &mut LoopClock,
    progress: &mut Progress,
    mut reached: impl FnMut(&mut Sim, usize, Cycle) -> bool,
) -> Result<()> {
    let mut done = Vec::new();
    let mut woken = Vec::new();
    let mut outbox_blocked = 0u64;
    let mut mem_next = sim.mem.next_event();
    let mut draining = false;
    let on_core: Vec<u32> = (0..threads.len() as u32).collect();
    let frozen = vec![None; threads.len()];
    let check_every = (progress.limit / 4).clamp(1, super::multicore_sim::CHECK_CYCLES);
    let mut next_check = now.core + check_every;
    loop {
        let mut core_next = NEVER;
        for c in &sim.cores {
            core_next = core_next.min(c.next_event());
        }
        let dram_next = mem_next.min(sim.hier.outbox_ready(outbox_blocked));
        let dram_first = dram_next != NEVER && (core_next == NEVER || clock.dram_not_after_core(dram_next, core_next));
        if dram_first {
            let Sim { hier, mem, checkers, commands, cores, export, .. } = sim;
            memory_step(
                MemoryStep { mem, hier, cores: &mut cores[..], checkers, commands, export },
                dram_next,
                now.core,
                (&mut now.dram, &mut now.dram_ticked, &mut outbox_blocked, &mut now.requests, &mut mem_next),
                &mut done,
                &mut woken,
            )?;
        } else if core_next != NEVER {
            now.core = core_next;
            sim.hier.set_next_memory_event(dram_next);
            if now.core >= next_check {
                let now_core = now.core;
                progress.check(&sim.cores, &frozen, &on_core, threads, sim.hier.waiting_requests(), |t| {
                    sim.hier.kernel_work_until(t, now_core)
                })?;
                next_check = now.core + check_every;
            }
            let mut all_measured = false;
            for i in 0..threads.len() {
                if sim.cores[i].next_event() <= now.core {
                    sim.cores[i].tick(now.core, threads[i].trace.as_mut(), &mut sim.hier)?;
                    sim.hier.note_retired(i as u32, sim.cores[i].retired());
                    if sim.cores[i].reached_target() {
                        all_measured |= reached(sim, i, now.core);
                    }
                }
            }
            if all_measured && !draining {
                draining = true;
                for core in &mut sim.cores {
                    core.start_drain(now.core);
                }
            }
        } else {
            return Err(Error::config("engine", format!("internal error: deadlock at core cycle {}, DRAM cycle {}", now.core, now.dram)));
        }
        if draining && sim.cores.iter().all(|c| c.is_drained()) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(stratum: u32, cycles: u64, weight: u64) -> Unit {
        let core = CoreStats { cycles, retired: 1000, ..CoreStats::default() };
        Unit { position: 0, segment: 0, weight, stratum, core, memory: CoreMemoryStats::default() }
    }

    /// A run of one core whose units' CPIs are 1 + 20 x for loads per instruction x.
    fn run_with_units(loads: &[u64], run_loads: u64, run_instructions: u64) -> SampledRun {
        let mut rec = SampledRun::new(&SamplingSpec::default(), 100_000, 10_000_000, 1);
        for &l in loads {
            // 1000 instructions: CPI 1 + 20 l / 1000.
            let mut u = unit(0, 1000 + 20 * l, 100_000);
            u.core.loads = l;
            rec.units[0].push(u);
        }
        rec.run_loads[0] = run_loads as f64;
        rec.run_instructions[0] = run_instructions as f64;
        rec
    }

    #[test]
    fn the_regression_estimate_corrects_units_by_the_gaps_loads_per_instruction() {
        // Ten units with 10 to 100 loads per 1000 instructions (mean 0.055), and a run with 0.045:
        // the CPI at the run's intensity is 1 + 20 x 0.045 = 1.9, the units' mean 2.1 (the
        // correction, 0.2, is within the plain estimate's half-width, 0.38).
        let loads: Vec<u64> = (1..=10).map(|k| 10 * k).collect();
        let rec = run_with_units(&loads, 450, 10_000);
        let r = rec.regression(0).expect("a fit");
        assert!((r.slope - 20.0).abs() < 1e-9 && (r.run_loads - 0.045).abs() < 1e-12 && (r.units_loads - 0.055).abs() < 1e-12);
        let e = rec.estimate(0);
        assert!((e.mean - 1.9).abs() < 1e-9, "{}", e.mean);
        // The interval's spread is the plain estimator's (conservative), around the corrected mean.
        let plain = Estimate::ratio(&rec.cpi(0).iter().map(|c| c * 100_000.0).collect::<Vec<_>>(), &[100_000.0; 10]);
        assert!((plain.mean - 2.1).abs() < 1e-9);
        assert_eq!((e.sd, e.n), (plain.sd, plain.n));
        // Its report says which estimator it used.
        assert_eq!(rec.report().1[0]["estimator"], "regression");
    }

    #[test]
    fn the_plain_estimate_stands_without_what_a_regression_needs() {
        let loads: Vec<u64> = (1..=10).map(|k| 10 * k).collect();
        // Nine units: too few.
        assert_eq!(run_with_units(&loads[..9], 300, 10_000).regression(0), None);
        // Nothing of the run counted.
        assert_eq!(run_with_units(&loads, 0, 0).regression(0), None);
        // Every unit of one intensity.
        assert_eq!(run_with_units(&[40; 10], 300, 10_000).regression(0), None);
        // CPIs that do not follow the loads: the fit explains nothing, and the mean is the plain one.
        let mut rec = run_with_units(&loads, 300, 10_000);
        for (u, cycles) in rec.units[0].iter_mut().zip([1500, 1200, 1500, 1200, 1500, 1200, 1500, 1200, 1500, 1200]) {
            u.core.cycles = cycles;
        }
        assert_eq!(rec.regression(0), None);
        assert!((rec.estimate(0).mean - 1.35).abs() < 1e-9);
        assert_eq!(rec.report().1[0]["estimator"], "ratio");
        // A correction past the plain interval's half-width (0.38): a run at 0.03 loads per
        // instruction would move the estimate by 0.5.
        let mut rec = run_with_units(&loads, 300, 10_000);
        assert_eq!(rec.regression(0), None);
        assert!((rec.estimate(0).mean - 2.1).abs() < 1e-9);
        rec.run_loads[0] = 400.0; // 0.04: a move of 0.3, within it
        assert!(rec.regression(0).is_some());
    }

    #[test]
    fn advancing_a_trace_moves_exactly_and_splits_the_record_it_stops_in() {
        use crate::workload::{CpuRecord, VecCpuSource};
        let rec = |bubbles, read| CpuRecord { bubbles, read, writeback: None };
        // 11, 1,000,001 and 6 instructions.
        let mut trace = VecCpuSource::new("t", vec![rec(10, 0x40), rec(1_000_000, 0x80), rec(5, 0xc0)]);
        let (mut rest, mut passed) = (None, Vec::new());
        advance(&mut rest, &mut trace, 500, |r| {
            passed.push(r.read);
            Ok(())
        })
        .unwrap();
        assert_eq!(passed, [0x40], "only whole records are passed");
        assert_eq!(rest, Some(RecordRest { bubbles: 1_000_000 - 489, read: 0x80, writeback: None }));
        advance(&mut rest, &mut trace, 0, |_| unreachable!()).unwrap();
        assert_eq!(rest.map(|r| r.bubbles), Some(999_511), "nothing moves");
        // The rest, then the last record, then the first again (the trace wraps), split after 3.
        advance(&mut rest, &mut trace, 999_512 + 6 + 3, |r| {
            passed.push(r.read);
            Ok(())
        })
        .unwrap();
        assert_eq!(passed, [0x40, 0x80, 0xc0]);
        assert_eq!(rest, Some(RecordRest { bubbles: 7, read: 0x40, writeback: None }));
    }

    #[test]
    fn a_stratified_estimate_weighs_each_stratum_by_its_share_and_sums_their_variances() {
        // Stratum 0 (share 0.8): CPIs 1.0, 1.1, 0.9; stratum 1 (0.2): 3.0, 3.3, 2.7.
        let spec = SamplingSpec { mode: "phases".into(), ..SamplingSpec::default() };
        let mut rec = SampledRun::new(&spec, 100_000, 10_000_000, 1);
        rec.strata = vec![vec![0.8, 0.2]];
        rec.units[0] = [(0, 1000), (0, 1100), (0, 900), (1, 3000), (1, 3300), (1, 2700)]
            .iter()
            .map(|&(h, c)| unit(h, c, if h == 0 { 2_666_667 } else { 666_667 }))
            .collect();
        let e = rec.estimate(0);
        assert!((e.mean - (0.8 * 1.0 + 0.2 * 3.0)).abs() < 1e-12, "{e:?}");
        let variance: f64 = 0.64 * 0.01 / 3.0 + 0.04 * 0.09 / 3.0;
        assert!((e.half_width() - Z95 * variance.sqrt()).abs() < 1e-12, "{e:?}");
        // A stratum of one unit borrows the largest spread of the others.
        rec.units[0].truncate(4);
        let e = rec.estimate(0);
        let variance: f64 = 0.64 * 0.01 / 3.0 + 0.04 * 0.01 / 1.0;
        assert!((e.half_width() - Z95 * variance.sqrt()).abs() < 1e-12, "{e:?}");
        // Without strata, the same units are one sample (the ratio estimator).
        rec.strata = vec![Vec::new()];
        assert!((rec.estimate(0).mean - 0.8 * 1.0 - 0.2 * 3.0).abs() > 0.1);
    }

    #[test]
    fn a_phases_runs_rates_weigh_each_phase_by_its_share_not_its_units() {
        // Phase 0 (share 0.9): 100 requests per 1000 instructions, 10, 12 and 8 of them missing;
        // phase 1 (share 0.1): 400 requests, 360, 380 and 340 missing. The units' sums say
        // 1110 / 1500 = 74 %; the run's rate is 0.045 misses over 0.13 requests per instruction.
        let spec = SamplingSpec { mode: "phases".into(), ..SamplingSpec::default() };
        let mut rec = SampledRun::new(&spec, 100_000, 10_000_000, 1);
        rec.strata = vec![vec![0.9, 0.1]];
        rec.units[0] = [(0, 100, 10), (0, 100, 12), (0, 100, 8), (1, 400, 360), (1, 400, 380), (1, 400, 340)]
            .iter()
            .map(|&(h, requests, misses)| {
                let mut u = unit(h, 2000, 1);
                u.memory.row_misses = misses;
                u.memory.row_hits = requests - misses;
                u.memory.llc_misses = requests;
                u
            })
            .collect();
        let rate = 0.045 / 0.13;
        let e = rec.row_miss_rate(0);
        assert!((e.mean - rate).abs() < 1e-12, "{e:?}");
        // Residuals y - R x per instruction spread 0.002 in phase 0 and 0.02 in phase 1.
        let variance: f64 = 0.81 * 0.002f64.powi(2) / 3.0 + 0.01 * 0.02f64.powi(2) / 3.0;
        assert!((e.half_width() - Z95 * variance.sqrt() / 0.13).abs() < 1e-12, "{e:?}");
        let (lo, hi) = rec.row_miss_rate_interval().expect("one program, phases of three units");
        assert!((lo - (rate - e.half_width())).abs() < 1e-12 && (hi - (rate + e.half_width())).abs() < 1e-12);
        // Misses per instruction likewise: 0.9 x 0.1 + 0.1 x 0.4.
        assert!((rec.llc_misses_per_instruction(0) - 0.13).abs() < 1e-12);
        // Without strata, the units are one sample: their sums' ratio.
        rec.strata = vec![Vec::new()];
        assert!((rec.row_miss_rate(0).mean - 1110.0 / 1500.0).abs() < 1e-12);
        assert!((rec.llc_misses_per_instruction(0) - 1500.0 / 6000.0).abs() < 1e-12);
    }

    #[test]
    fn units_that_met_no_request_know_the_rate_only_when_the_run_loaded_nothing() {
        let mut rec = SampledRun::new(&SamplingSpec::default(), 100_000, 10_000_000, 1);
        rec.units[0] = vec![unit(0, 1000, 100_000), unit(0, 1200, 100_000)];
        rec.run_instructions[0] = 10_000_000.0;
        // The gaps counted loads: the run made requests the units did not meet.
        rec.run_loads[0] = 5_000.0;
        assert_eq!(rec.row_miss_rate_interval(), None);
        assert_eq!(rec.report().1[0]["row_buffer_miss_rate_ci95"], json!([0.0, 1.0]));
        // No load in the whole run: no request, a rate of 0 known exactly.
        rec.run_loads[0] = 0.0;
        assert_eq!(rec.row_miss_rate_interval(), Some((0.0, 0.0)));
        assert_eq!(rec.report().1[0]["row_buffer_miss_rate_ci95"], json!([0.0, 0.0]));
        // A phases run does not count its gaps' loads: unknown.
        rec.strata = vec![vec![1.0]];
        assert_eq!(rec.row_miss_rate_interval(), None);
    }

    #[test]
    fn a_units_energy_is_its_segments_by_the_cycles_it_took() {
        let mut rec = SampledRun::new(&SamplingSpec::default(), 100_000, 10_000_000, 1);
        rec.segment_cycles = vec![5000, 8000];
        rec.segment_energy_nj = vec![100.0, 400.0];
        let mut u = unit(0, 2000, 1);
        u.segment = 1;
        assert_eq!(rec.unit_energy_nj(&u), Some(100.0));
        u.segment = 2;
        assert_eq!(rec.unit_energy_nj(&u), None);
    }

    #[test]
    fn strata_of_one_unit_each_have_no_interval_rather_than_a_zero_width_one() {
        let spec = SamplingSpec { mode: "phases".into(), ..SamplingSpec::default() };
        let mut rec = SampledRun::new(&spec, 100_000, 10_000_000, 1);
        rec.strata = vec![vec![0.5, 0.5]];
        rec.units[0] = vec![unit(0, 1000, 5_000_000), unit(1, 3000, 5_000_000)];
        let e = rec.estimate(0);
        assert!((e.mean - 2.0).abs() < 1e-12, "{e:?}");
        assert!(e.half_width().is_infinite(), "{e:?}");
    }

    #[test]
    fn units_that_all_measured_one_cpi_give_no_interval_rather_than_a_zero_width_one() {
        let mut rec = SampledRun::new(&SamplingSpec::default(), 100_000, 10_000_000, 1);
        rec.units[0] = vec![unit(0, 2000, 100_000); 5];
        let e = rec.estimate(0);
        assert_eq!(e.mean, 2.0);
        assert!(e.half_width().is_infinite(), "{e:?}");
        // A stratified run whose only multi-unit phase has no spread lends none to its single units.
        let spec = SamplingSpec { mode: "phases".into(), ..SamplingSpec::default() };
        let mut rec = SampledRun::new(&spec, 100_000, 10_000_000, 1);
        rec.strata = vec![vec![0.5, 0.5]];
        rec.units[0] = vec![unit(0, 1000, 1), unit(0, 1000, 1), unit(1, 3000, 1)];
        assert!(rec.estimate(0).half_width().is_infinite());
    }

    #[test]
    fn a_cores_scale_is_the_runs_instructions_per_instruction_measured() {
        // Two units of 1000 instructions in a run of 10 M: scale 5000, whatever their weights
        // sum to (here 400,000: units left unmeasured took the rest with them).
        let mut rec = SampledRun::new(&SamplingSpec::default(), 100_000, 10_000_000, 2);
        rec.units[0] = vec![unit(0, 1000, 100_000), unit(0, 1500, 300_000)];
        assert_eq!(rec.scale(0), 5000.0);
        assert_eq!(rec.scale(1), 1.0);
    }
}
