//! The multi-programmed run: one trace-driven core per program, each a process of the OS
//! model, sharing the LLC and the memory system. Two clock domains advance by events: the next
//! thing to happen is either a core event (core cycles) or a memory-system event (DRAM cycles),
//! compared on one time line through the exact `ClockRatio`. At equal times the memory system
//! goes first, so data returned at a cycle is visible to the core in that cycle.
//!
//! Each core runs until it has retired its instruction target; its statistics are frozen
//! there, and it keeps running (wrapping its trace) until every core has reached its target,
//! as in Ramulator.
//!
//! Software threads (`ThreadDef`): each has its own trace and `OooCore` (its window and trace
//! position); the per-core CFS (`os/cfs.rs`) decides which thread a core runs. At a context
//! switch the outgoing thread's window drains (`OooCore::start_drain`), the core loses the
//! switch cost, and the incoming thread resumes with an empty window at the cycle the switch
//! ends. With one thread per core nothing is ever switched and the run is exactly the
//! one-program-per-core run. Requests carry the thread id as `source`.

use super::barriers::Barriers;
use super::dram_export::{DramExport, DramExportSpec};
use super::memory_hierarchy::{CoreMemoryStats, MemoryHierarchy, MigrationClock};
use super::sampling::{SampledRun, SamplingSpec};
use crate::cache::{CacheLevelConfig, LlcConfig};
use crate::checker::TimingChecker;
use crate::config::MemoryConfig;
use crate::controller::Completion;
use crate::cpu::{ClockRatio, CoreStats, OooCore};
use crate::dram::CommandRecord;
use crate::dram_sim::RunTotals;
use crate::error::{Error, Result};
use crate::memory_system::MemorySystem;
use crate::os::placement::ThreadPlace;
use crate::os::{bind_threads, Cfs, CpuState, OsConfig, OsModel, ProcessPlacement, SchedThread, ThreadSchedStats};
use crate::workload::{CpuRecord, CpuTraceSource};
use crate::{Cycle, NEVER};
use std::ops::Range;

/// One thread's results, frozen when it reached its instruction target (one thread per core
/// without time-sharing, so "core" results are thread results).
#[derive(Clone, Debug)]
pub struct CoreResult {
    pub program: String,
    pub core: CoreStats,
    pub memory: CoreMemoryStats,
    pub placement: ProcessPlacement,
    /// The thread's process.
    pub process: u32,
    pub sched: ThreadSchedStats,
    /// Core cycle at which the thread reached its target (wall time, on or off its core).
    pub finished_at: Cycle,
    /// Cycles it waited at barriers inside the run (not in `core.cycles`), and barriers passed.
    pub barrier_wait_cycles: Cycle,
    pub barriers: u64,
    /// Cycles on a core over the whole run (it keeps running after its target).
    pub run_cycles: Cycle,
    /// Times its trace ended and started again during the warm-up (the measured window's are
    /// `core.trace_wraps`).
    pub warmup_wraps: u64,
}

pub struct MulticoreResult {
    pub cores: Vec<CoreResult>,
    pub memory: MemorySystem,
    pub totals: RunTotals,
    pub core_cycles: Cycle,
    pub llc: Option<crate::cache::CacheStats>,
    pub colour_report: Option<crate::os::ColourReport>,
    pub processes: u32,
    /// Context switches on all cores, and those between threads of one process.
    pub context_switches: u64,
    pub same_process_switches: u64,
    /// Pages placed outside their region under a region policy (`ccps`).
    pub spilled_pages: u64,
    pub load_balance: bool,
    pub binding: String,
    /// Requests written to the DRAM-stream export (0 without one).
    pub exported_requests: u64,
    /// CAT under UCP: repartitions, and each process's LLC ways after the latest (empty before
    /// one or without UCP).
    pub ucp_repartitions: u64,
    pub ucp_ways: Vec<u32>,
    /// Per process: pages per node (one entry on a one-node machine; an exited process's at its exit).
    pub pages_per_node: Vec<Vec<u64>>,
    /// Per node: the pages resident at the end, over all processes.
    pub node_pages: Vec<u64>,
    /// Pages a node policy's node could not take (full), placed on the nearest with room.
    pub fallback_pages: u64,
    /// Page migration's counters (`None` when pages do not migrate).
    pub migration: Option<crate::os::migration::MigrationStats>,
    /// What the OS model says of the configuration (a migration policy that cannot apply).
    pub os_warnings: Vec<String>,
    /// Per process: its swapping (`None` unless `os.overflow = "swap"`).
    pub swap: Option<Vec<crate::os::swap::ProcessSwap>>,
    /// Per process: its accessed-bit windows (`[os.hot_pages] enabled`), and the LLC's pages
    /// (NPC, 0 without an LLC) its classes scale to.
    pub hot_pages: Option<Vec<Vec<crate::os::hot_pages::WindowFeatures>>>,
    pub llc_pages: u64,
    /// The dynamic policy's counters (`None` without one).
    pub dynamic: Option<crate::os::dynamic::DynamicStats>,
    /// A sampled run's units and intervals (`sampling.rs`); its cores' statistics are their units'.
    pub sampling: Option<super::sampling::SampledRun>,
}

/// What is wrong with an affinity on a machine of `ncores` cores, if anything; its callers
/// name the key it was written at.
pub(crate) fn affinity_problem(affinity: &[u32], ncores: u32) -> Option<String> {
    if affinity.is_empty() {
        return Some("is empty: give at least one core".to_string());
    }
    let c = affinity.iter().find(|&&c| c >= ncores)?;
    Some(format!("names core {c}, but the machine has cores 0-{}", ncores - 1))
}

/// One software thread: its trace, its process (threads of a process share the page table),
/// its priority and the cores it may run on (`None`: all).
pub struct ThreadDef {
    pub trace: Box<dyn CpuTraceSource>,
    pub process: u32,
    pub nice: i32,
    pub affinity: Option<Vec<u32>>,
    /// Once at its target, wait at the program's end (`sim_spec::AtEnd::Wait`): the core halts.
    pub wait_at_end: bool,
    /// Once its process's last thread is at its target, the process exits (`AtEnd::Exit`):
    /// its pages are freed. Implies `wait_at_end`.
    pub exit_at_end: bool,
    /// When the thread starts, ns (an open mix's arrival; 0: at once).
    pub arrive_ns: f64,
    /// Its own instruction target (programs of different lengths); `None`: the run's.
    pub instructions: Option<u64>,
    /// `(group, every)`: wait at a barrier with the other threads of its group every this many
    /// instructions (`barriers.rs`); `None`: no barriers inside the run.
    pub barrier: Option<(u32, u64)>,
}

/// What the driver's loop reads from the scheduler on every iteration, taken after each change.
#[derive(Default)]
struct SchedView {
    /// The threads on cores (running or draining), in core order.
    on_core: Vec<u32>,
    /// The earliest per-core scheduler event (slice end, switch done).
    next_core_event: Cycle,
    next_balance: Cycle,
    /// Some core drains its window for a context switch (the scheduler waits for it).
    draining: bool,
}

impl SchedView {
    fn update(&mut self, sched: &Cfs, ncores: u32) {
        self.on_core.clear();
        self.on_core.extend((0..ncores).filter_map(|c| sched.on_core(c)));
        self.next_core_event = (0..ncores).map(|c| sched.next_event(c)).min().unwrap_or(NEVER);
        self.next_balance = sched.next_balance();
        self.draining = (0..ncores).any(|c| matches!(sched.state(c), CpuState::Draining { .. }));
    }

    /// At core cycle `now` the scheduler has nothing to do: no slice end, switch or balancing
    /// is due and no core drains. Then a core step only ticks cores, which leaves the
    /// scheduler (and this view) as they are.
    fn idle_at(&self, now: Cycle) -> bool {
        !self.draining && self.next_core_event > now && self.next_balance > now
    }

    /// The scheduler's next event as seen at core cycle `now` (a past slice end is due now).
    fn next_event(&self, now: Cycle) -> Cycle {
        self.next_balance.min(self.next_core_event.max(now))
    }
}

/// Ticks thread `tid` at core cycle `now` (its event is due), and freezes its memory
/// statistics when it reaches its target; returns whether it reached it in this tick.
fn tick_thread(
    tid: u32,
    core: &mut OooCore,
    trace: &mut dyn CpuTraceSource,
    hier: &mut MemoryHierarchy,
    frozen: &mut Option<(CoreMemoryStats, Cycle)>,
    wait_at_end: bool,
    now: Cycle,
) -> Result<bool> {
    core.tick(now, trace, hier)?;
    hier.note_retired(tid, core.retired());
    if frozen.is_none() && core.reached_target() {
        *frozen = Some((hier.core_stats_at(tid, now), now));
        if wait_at_end {
            core.halt();
        }
        return Ok(true);
    }
    Ok(false)
}

/// Thread `i` reached its target and its process exits at its end: once every thread of the
/// process has, the process leaves and its pages are freed.
fn exit_if_done(threads: &[ThreadDef], frozen: &[Option<(CoreMemoryStats, Cycle)>], i: usize, hier: &mut MemoryHierarchy) -> Result<()> {
    let pid = threads[i].process;
    if threads.iter().zip(frozen).all(|(t, f)| t.process != pid || f.is_some()) {
        hier.exit_process(pid)?;
    }
    Ok(())
}

/// Passes the commands the controllers issued since the last call to their node's checker.
pub(super) fn observe_commands(mem: &mut MemorySystem, checkers: &mut [(Range<usize>, TimingChecker)], commands: &mut Vec<CommandRecord>) {
    for (channels, checker) in checkers {
        mem.drain_channel_commands(channels.clone(), commands);
        checker.observe_all(commands);
        commands.clear();
    }
}

/// A timing checker for each memory node's channels.
fn node_checkers(cfg: &MemoryConfig, mem: &MemorySystem) -> Vec<(Range<usize>, TimingChecker)> {
    mem.node_channels()
        .into_iter()
        .map(|(node, channels)| {
            let node_cfg = cfg.topology.as_ref().and_then(|t| t.memories[node as usize].as_ref()).unwrap_or(cfg);
            (channels, crate::dram_sim::timing_checker(node_cfg))
        })
        .collect()
}

/// Map each thread's footprint, page by page in ascending virtual order, one thread after the
/// other (`os.populate`): the state a measured window of a long-running program starts in. A
/// thread that arrives later has no pages yet: it faults them in when it runs.
fn populate(os: &mut OsModel, threads: &[ThreadDef], bound: &[u32], page_bytes: u64) -> Result<()> {
    for (t, th) in threads.iter().enumerate().filter(|(_, th)| th.arrive_ns == 0.0) {
        if let Some((start, end)) = th.trace.footprint() {
            let mut page = start / page_bytes * page_bytes;
            while page < end {
                os.translate_thread(th.process, t as u32, bound[t], page)?;
                page += page_bytes;
            }
        }
    }
    Ok(())
}

/// Simulate `programs` (one per core, each a single-threaded process pinned to its core) until
/// each has retired `instructions`.
pub fn simulate_multicore(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    programs: Vec<Box<dyn CpuTraceSource>>,
    instructions: u64,
) -> Result<MulticoreResult> {
    simulate_threads(cfg, os_cfg, pinned_threads(cfg, programs)?, instructions)
}

/// One single-threaded process per program, pinned to core i (the program-list run).
pub fn pinned_threads(cfg: &MemoryConfig, programs: Vec<Box<dyn CpuTraceSource>>) -> Result<Vec<ThreadDef>> {
    let machine = &cfg.machine;
    machine.cpu.validate()?;
    let n = programs.len() as u32;
    if n > machine.cpu.cores {
        return Err(Error::config(
            "programs",
            format!(
                "{n} program{} but machine '{}' has {} core{} (cpu.cores); give processes to time-share cores (docs/threads.md)",
                if n == 1 { "" } else { "s" },
                machine.name,
                machine.cpu.cores,
                if machine.cpu.cores == 1 { "" } else { "s" }
            ),
        ));
    }
    Ok(programs
        .into_iter()
        .enumerate()
        .map(|(i, trace)| ThreadDef {
            trace,
            process: i as u32,
            nice: 0,
            affinity: Some(vec![i as u32]),
            wait_at_end: false,
            exit_at_end: false,
            arrive_ns: 0.0,
            instructions: None,
            barrier: None,
        })
        .collect())
}

/// `simulate_threads`, after a functional warm-up of `warmup` instructions per thread (see
/// `warm_up`), with every DRAM command checked by the independent timing checker when `check`
/// is set (the violations and commands checked land in the result's `totals`).
pub fn simulate_threads_checked(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    threads: Vec<ThreadDef>,
    instructions: u64,
    warmup: u64,
    check: bool,
) -> Result<MulticoreResult> {
    simulate(cfg, os_cfg, threads, instructions, warmup, check, None, None)
}

/// Instructions one thread runs in a turn of the functional warm-up: threads take turns so the
/// shared LLC ends up holding each one's lines as it would after running side by side.
pub(super) const WARMUP_TURN: u64 = 10_000;

/// Core cycles between two checks of a run's progress (the watchdog, a requested stop) at most.
pub(super) const CHECK_CYCLES: u64 = 1 << 20;

/// Functional warm-up: each thread's next `warmup` instructions go through the page tables
/// and caches without DRAM timing (as gem5's and ZSim's fast-forward with warm caches), so the
/// measured run starts with full caches and dirty lines, as a program in its steady state has.
/// Row buffers and the controller start empty. The measured run continues each trace where
/// its warm-up stopped. A thread that arrives later is a program starting then: it starts cold.
/// Returns each thread's trace wraps.
fn warm_up(hier: &mut MemoryHierarchy, threads: &mut [ThreadDef], warmup: u64) -> Result<Vec<u64>> {
    let mut wraps = vec![0; threads.len()];
    let mut done: Vec<u64> = threads.iter().map(|t| if t.arrive_ns > 0.0 { warmup } else { 0 }).collect();
    // The warm-up stands for the programs' earlier execution, over many of a dynamic policy's epochs.
    hier.set_populating(true);
    let mut batch = [CpuRecord::default(); RECORD_BATCH];
    while done.iter().any(|&d| d < warmup) {
        crate::interrupt::check()?;
        for (t, th) in threads.iter_mut().enumerate() {
            let end = warmup.min(done[t] + WARMUP_TURN);
            while done[t] < end {
                let (n, wrapped) = next_records_wrapping(th.trace.as_mut(), &mut batch, end - done[t])?;
                wraps[t] += wrapped as u64;
                for rec in &batch[..n] {
                    hier.warm(t as u32, rec.read, rec.writeback)?;
                    done[t] += rec.instructions();
                }
            }
        }
    }
    hier.set_populating(false);
    hier.reset_counters();
    hier.start_measuring();
    Ok(wraps)
}

/// Records a functional pass reads a call (`CpuTraceSource::next_records`).
pub(super) const RECORD_BATCH: usize = 64;

/// A trace's next records until they hold `budget` instructions (`CpuTraceSource::next_records`),
/// from its start again at its end (as a core wraps it); returns how many and whether it wrapped.
/// `out` is not empty and `budget` not 0.
pub(super) fn next_records_wrapping(trace: &mut dyn CpuTraceSource, out: &mut [CpuRecord], budget: u64) -> Result<(usize, bool)> {
    match trace.next_records(out, budget)? {
        0 => {
            trace.rewind()?;
            match trace.next_records(out, budget)? {
                0 => Err(Error::empty_trace("trace", trace.name(), "records")),
                n => Ok((n, true)),
            }
        }
        n => Ok((n, false)),
    }
}

/// A trace's next record, from its start again at its end (as a core wraps it).
pub(super) fn next_wrapping(trace: &mut dyn CpuTraceSource) -> Result<crate::workload::CpuRecord> {
    match trace.next_record()? {
        Some(r) => Ok(r),
        None => {
            trace.rewind()?;
            trace.next_record()?.ok_or_else(|| Error::empty_trace("trace", trace.name(), "records"))
        }
    }
}

/// Simulate software threads on the machine's cores under the per-core CFS scheduler
/// (`os/cfs.rs`) until every thread has retired `instructions`. Threads that reached their
/// target keep running, with frozen statistics, so that every thread is measured under the same
/// contention (today's rule for one program per core, as in Ramulator).
pub fn simulate_threads(cfg: &MemoryConfig, os_cfg: &OsConfig, threads: Vec<ThreadDef>, instructions: u64) -> Result<MulticoreResult> {
    simulate(cfg, os_cfg, threads, instructions, 0, false, None, None)
}

/// `simulate_threads_checked`, writing the DRAM request stream to `export` as it goes
/// (`dram_export.rs`); the result's `exported_requests` counts the lines written.
pub fn simulate_threads_exported(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    threads: Vec<ThreadDef>,
    instructions: u64,
    warmup: u64,
    check: bool,
    export: Option<&DramExportSpec>,
) -> Result<MulticoreResult> {
    simulate(cfg, os_cfg, threads, instructions, warmup, check, export, None)
}

/// `simulate_threads_checked`, sampled (`sampling.rs`): detailed units with functional warming
/// between them (`phases`: the units' plan of phase sampling, one program); the result's cores
/// report their units' statistics.
#[allow(clippy::too_many_arguments)]
pub fn simulate_threads_sampled(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    threads: Vec<ThreadDef>,
    instructions: u64,
    warmup: u64,
    check: bool,
    sampling: &SamplingSpec,
    phases: Option<&super::phase_sampling::PhasePlan>,
) -> Result<MulticoreResult> {
    simulate(cfg, os_cfg, threads, instructions, warmup, check, None, Some((sampling, phases)))
}

#[allow(clippy::too_many_arguments)]
fn simulate(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    mut threads: Vec<ThreadDef>,
    instructions: u64,
    warmup: u64,
    check: bool,
    export: Option<&DramExportSpec>,
    sampling: Option<(&SamplingSpec, Option<&super::phase_sampling::PhasePlan>)>,
) -> Result<MulticoreResult> {
    let started = std::time::Instant::now();
    let plan = validate(cfg, os_cfg, &threads, instructions)?;
    if let Some((s, _)) = sampling {
        s.validate(instructions)?;
        let mut used = vec![false; plan.cores as usize];
        let shared = plan.bound.iter().any(|&c| std::mem::replace(&mut used[c as usize], true));
        s.check_run(os_cfg, &threads, instructions, plan.cores, shared)?;
    }
    let mut sim = build(cfg, os_cfg, &mut threads, instructions, warmup, check, &plan)?;
    // Opened once the run is known to be valid, so a refused run leaves no file behind.
    sim.export = export.map(DramExport::create).transpose()?;
    let (end, sampled) = match sampling {
        None => (run(&mut sim, &mut threads, &plan)?, None),
        Some((s, phases)) => {
            let meter = crate::dram_sim::report::EnergyMeter::new(cfg, &sim.mem);
            let (end, rec) = match phases {
                Some(p) => {
                    super::phase_sampling::run(&mut sim, &mut threads, s, p, instructions, plan.clock, plan.watchdog_cycles, &meter)?
                }
                None => {
                    super::sampling::run(&mut sim, &mut threads, s, instructions, plan.clock, plan.watchdog_cycles, os_cfg.seed(), &meter)?
                }
            };
            for (i, slot) in sim.frozen.iter_mut().enumerate() {
                *slot = Some((rec.totals(i).1, end.now_core));
            }
            (end, Some(rec))
        }
    };
    let exported = match sim.export.take() {
        Some(x) => x.finish()?,
        None => 0,
    };
    let mut result = collect(sim, &threads, plan, end, started, sampled);
    result.exported_requests = exported;
    Ok(result)
}

/// What `validate` derives from a run's inputs, checked; `build` makes the run from it.
struct Plan {
    /// Threads, cores, processes.
    threads: u32,
    cores: u32,
    processes: u32,
    /// Each thread's process, priority and cores, for the scheduler.
    sched_threads: Vec<SchedThread>,
    binding: String,
    balance: bool,
    /// Each thread's first core.
    bound: Vec<u32>,
    llc: Option<CacheLevelConfig>,
    /// The address bits that index LLC sets (empty without an LLC), for page colours.
    llc_bits: Range<u32>,
    line_bytes: u64,
    clock: ClockRatio,
    watchdog_cycles: u64,
}

/// Check the machine, the threads and the target, and derive the run's plan.
fn validate(cfg: &MemoryConfig, os_cfg: &OsConfig, threads: &[ThreadDef], instructions: u64) -> Result<Plan> {
    let machine = &cfg.machine;
    machine.cpu.validate()?;
    machine.cache.validate()?;
    // A shared LLC with fewer MSHRs than one core may hold lets that core hold them all; under
    // `core-order` arbitration the others starve for ever (1 MSHR under 4 programs never
    // ended). Real LLCs track far more misses than a core's fill buffers.
    if let crate::cache::LlcConfig::Cache(llc) = &machine.cache.llc {
        if llc.mshrs < machine.cpu.mshrs {
            return Err(Error::config(
                "cache.llc.mshrs",
                format!("must be at least cpu.mshrs ({}), the misses one core may have outstanding, got {}", machine.cpu.mshrs, llc.mshrs),
            ));
        }
    }
    let n = threads.len() as u32;
    if n == 0 {
        return Err(Error::config("programs", "a run needs at least one program (thread)"));
    }
    let ncores = machine.cpu.cores;
    let processes = threads.iter().map(|t| t.process + 1).max().unwrap_or(0);
    if let Some(p) = (0..processes).find(|p| !threads.iter().any(|t| t.process == *p)) {
        return Err(Error::config("processes", format!("process {p} has no thread")));
    }
    if instructions == 0 {
        return Err(Error::config("instructions", "the per-core instruction target must be at least 1"));
    }
    if let Some((i, t)) = threads.iter().enumerate().find(|(_, t)| matches!(t.barrier, Some((_, 0)))) {
        return Err(Error::config("barrier_every", format!("thread {i} (process {}): must be at least 1 instruction", t.process)));
    }
    let mut sched_threads = Vec::with_capacity(threads.len());
    for (i, t) in threads.iter().enumerate() {
        let affinity = match &t.affinity {
            None => (0..ncores).collect(),
            Some(a) => {
                if let Some(reason) = affinity_problem(a, ncores) {
                    return Err(Error::config("affinity", format!("thread {i} ('{}'): the affinity {reason}", t.trace.name())));
                }
                let mut a = a.clone();
                a.sort_unstable();
                a.dedup();
                a
            }
        };
        crate::os::cfs::nice_weight(t.nice).map_err(|e| Error::config("nice", format!("thread {i}: {}", e.reason())))?;
        sched_threads.push(SchedThread { process: t.process, nice: t.nice, affinity });
    }
    os_cfg.sched.validate()?;
    let policy_binding = crate::os::placement::info(&os_cfg.policy)?.binds_threads;
    let binding = os_cfg.sched.binding_for(policy_binding).to_string();
    let balance = os_cfg.sched.load_balance_for(policy_binding);
    let bound = bind_threads(&sched_threads, ncores, &binding, os_cfg)?;
    own_cores(threads, &bound, ncores, &machine.name)?;
    let llc = match &machine.cache.llc {
        LlcConfig::Cache(c) => Some(*c),
        LlcConfig::None => None,
    };
    let line_bytes = cfg.org.burst_bytes();
    // The burst follows from dram.bus_width_bits, which the user may have changed instead.
    let burst = format!(
        "the DRAM burst ({line_bytes} bytes: dram.bus_width_bits {} / 8 x burst length {})",
        cfg.org.bus_width_bits, cfg.org.burst_length
    );
    if let Some(c) = &llc {
        if c.line_bytes as u64 != line_bytes {
            return Err(Error::config("cache.llc.line_bytes", format!("must equal {burst}, got {}", c.line_bytes)));
        }
    }
    // Without an LLC, colours cannot follow LLC sets: an empty set range.
    let llc_bits = llc.map(|c| c.geometry().set_index_bits()).unwrap_or(0..0);
    if let Some(c) = &llc {
        let capacity = cfg.address_bits();
        if llc_bits.end > capacity {
            return Err(Error::config(
                "cache.llc.size_bytes",
                format!(
                    "an LLC of {} bytes in {} ways indexes its sets with address bits {}-{}, beyond the machine's \
                     {capacity}-bit physical addresses ({} bytes of DRAM); give a smaller LLC or more ways",
                    c.size_bytes,
                    c.ways,
                    llc_bits.start,
                    llc_bits.end - 1,
                    1u64 << capacity
                ),
            ));
        }
    }
    let clock = ClockRatio::from_ghz(machine.cpu.frequency_ghz, 1.0 / cfg.timing.tCK_ns)?;
    if let Some(l2) = &machine.cache.l2 {
        if l2.line_bytes as u64 != line_bytes {
            return Err(Error::config("cache.l2.line_bytes", format!("must equal {burst}, got {}", l2.line_bytes)));
        }
    }
    Ok(Plan {
        threads: n,
        cores: ncores,
        processes,
        sched_threads,
        binding,
        balance,
        bound,
        llc,
        llc_bits,
        line_bytes,
        clock,
        watchdog_cycles: machine.cpu.watchdog_cycles,
    })
}

/// A run's parts: the OS model and caches, the memory system, the cores and their scheduler.
pub(super) struct Sim {
    pub(super) hier: MemoryHierarchy,
    pub(super) mem: MemorySystem,
    /// With `check`: each memory node's channels and their checker.
    pub(super) checkers: Vec<(Range<usize>, TimingChecker)>,
    /// The checker's buffer of commands.
    pub(super) commands: Vec<CommandRecord>,
    pub(super) cores: Vec<OooCore>,
    sched: Cfs,
    /// Per thread: its memory statistics and the core cycle when it reached its target.
    frozen: Vec<Option<(CoreMemoryStats, Cycle)>>,
    /// The DRAM request stream's file, when the run exports it.
    pub(super) export: Option<DramExport>,
    barriers: Barriers,
    /// Per thread: its trace's wraps in the warm-up.
    warmup_wraps: Vec<u64>,
}

/// Node-colour policies (`camc`, `tintmalloc`) colour every node by the first memory node's
/// mapping: refuse a machine whose nodes decode addresses differently.
fn same_mapping_for_node_colours(cfg: &MemoryConfig, os_cfg: &OsConfig) -> Result<()> {
    let (Some(t), true) = (&cfg.topology, crate::os::placement::info(&os_cfg.policy)?.colours_nodes) else { return Ok(()) };
    let same = |m: &crate::mapping::AddressMapping| {
        m.capacity_bits() == cfg.mapping.capacity_bits()
            && crate::mapping::Field::ALL.iter().all(|&f| m.field_bits(f) == cfg.mapping.field_bits(f))
    };
    match t.memories.iter().position(|m| m.as_ref().is_some_and(|m| !same(&m.mapping))) {
        Some(i) => Err(Error::config(
            "os.policy",
            format!(
                "policy {} colours every node's memory alike, but node {i}'s mapping ({}) differs from the first memory node's ({})",
                os_cfg.policy,
                t.memories[i].as_ref().map_or("", |m| m.mapping.name()),
                cfg.mapping.name()
            ),
        )),
        None => Ok(()),
    }
}

/// Build the run's parts from its plan, and warm the caches up (`warm_up`).
fn build(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    threads: &mut [ThreadDef],
    instructions: u64,
    warmup: u64,
    check: bool,
    plan: &Plan,
) -> Result<Sim> {
    let machine = &cfg.machine;
    same_mapping_for_node_colours(cfg, os_cfg)?;
    let places: Vec<ThreadPlace> = threads.iter().zip(&plan.bound).map(|(t, &core)| ThreadPlace { process: t.process, core }).collect();
    let mut os = OsModel::with_nodes(os_cfg, &cfg.mapping, plan.llc_bits.clone(), plan.processes, plan.cores, cfg.node_layout(), &places)?;
    if os_cfg.populate {
        os.set_populating(true);
        populate(&mut os, threads, &plan.bound, os_cfg.page_bytes)?;
        os.set_populating(false);
        os.start_measuring();
    }
    let mut hier =
        MemoryHierarchy::new(os, machine.cache.l2.as_ref(), plan.llc.as_ref(), plan.cores.max(plan.threads), plan.clock, plan.line_bytes)?;
    hier.set_prefetcher(&machine.cache.prefetcher)?;
    if let Some(t) = &cfg.topology {
        hier.set_numa(super::numa_paths::NumaPaths::new(t, cfg.timing.tCK_ns, plan.line_bytes));
    }
    hier.set_threads(threads.iter().map(|t| t.process).collect(), plan.bound.clone())?;
    // Hardware partitioning (resctrl), in force from the first access, warm-up included.
    let resctrl =
        crate::os::resctrl::plan(os_cfg, &crate::os::resctrl::ResctrlContext { processes: plan.processes, llc_ways: hier.llc_ways() })?;
    if let Some(masks) = resctrl.llc_way_masks {
        hier.set_llc_way_masks(&masks);
    }
    if let Some(ns) = resctrl.llc_ucp_epoch_ns {
        hier.repartition_llc_every((ns / cfg.timing.tCK_ns).round() as Cycle);
    }
    if let Some(percent) = resctrl.bandwidth_percent {
        // One line per line / (share x peak) ns, in DRAM cycles; 100 %: no cap.
        let per_line =
            |p: u32| if p >= 100 { 0.0 } else { plan.line_bytes as f64 / (cfg.peak_gbps() * p as f64 / 100.0) / cfg.timing.tCK_ns };
        hier.set_bandwidth_caps(threads.iter().map(|t| per_line(percent[t.process as usize])).collect());
    }
    let mut warmup_wraps = vec![0; threads.len()];
    if warmup > 0 {
        warmup_wraps = warm_up(&mut hier, threads, warmup)?;
        // UCP's partition as a warmed-up machine would have it, from the warm-up's monitors.
        hier.repartition_llc_now();
    }
    let scan = &os_cfg.numa_scan;
    let cycles = |ns: f64| (ns * machine.cpu.frequency_ghz).round() as Cycle;
    // A row miss's read (tRCD + CL + burst) on each node's own memory, plus the added latency
    // from the first thread's node: the unloaded latency the tiering policies compare with.
    let layout = cfg.node_layout();
    let home = layout.node_of_core(plan.bound.first().copied().unwrap_or(0));
    let idle_ns = (0..layout.count() as usize)
        .map(|n| {
            let t = match &cfg.topology {
                Some(topo) => topo.memories[n].as_ref().map(|m| &m.timing),
                None => Some(&cfg.timing),
            };
            t.map_or(0.0, |t| (t.tRCD + t.CL + t.tBL) as f64 * t.tCK_ns) + layout.latency_ns[home as usize][n]
        })
        .collect();
    hier.set_migration(MigrationClock {
        period: cycles(scan.period_ns),
        fault: cycles(scan.fault_ns),
        migrate: cycles(scan.migrate_ns),
        shootdown: cycles(scan.shootdown_ns),
        copy_lines: scan.copy_lines as usize,
        swap_fault: cycles(os_cfg.swap.fault_ns),
        epoch: hier.os().dynamic_epoch_ns().map(cycles),
        copy_period: hier.os().copy_period_ns().map(cycles),
        channel_peak_gbps: cfg.peak_gbps() / cfg.org.channels.max(1) as f64,
        page_bytes: os_cfg.page_bytes,
        core_ghz: machine.cpu.frequency_ghz,
        dram_tck_ns: cfg.timing.tCK_ns,
        idle_ns,
    });
    let mut mem = MemorySystem::new(cfg)?;
    mem.record_commands(check);
    // One checker per memory node, each with its node's timing.
    let checkers = if check { node_checkers(cfg, &mem) } else { Vec::new() };
    let core_cfg = machine.cpu.core_config();
    let mut cores = threads
        .iter()
        .enumerate()
        .map(|(i, t)| OooCore::new(i as u32, &core_cfg, t.instructions.unwrap_or(instructions)))
        .collect::<Result<Vec<_>>>()?;
    let members: Vec<(u32, u64, u64)> = threads
        .iter()
        .map(|t| {
            let (group, every) = t.barrier.unwrap_or((0, 0));
            (group, every, t.instructions.unwrap_or(instructions))
        })
        .collect();
    let barriers = Barriers::new(&members, &mut cores);
    arrivals(threads, &mut cores, machine.cpu.frequency_ghz)?;
    let mut sched = Cfs::new(&os_cfg.sched, plan.balance, plan.sched_threads.clone(), plan.cores, &plan.bound)?;
    sched.start();
    let frozen = vec![None; plan.threads as usize];
    Ok(Sim { hier, mem, checkers, commands: Vec::new(), cores, sched, frozen, export: None, barriers, warmup_wraps })
}

/// A thread that holds its core while it does not run needs a core of its own: one not yet
/// arrived (`arrive_ns`), one waiting at a barrier (`barrier_every`) or at its program's end
/// (`at_end = "wait"` or `"exit"`: a spin-wait). The scheduler never switches such a thread out
/// (a halted window does not drain), so a thread queued behind it on its core would never run:
/// a run that shares a core with one (more threads than cores, or affinities that put two on
/// one core) is refused, naming the setting.
fn own_cores(threads: &[ThreadDef], bound: &[u32], ncores: u32, machine: &str) -> Result<()> {
    let mut used = vec![false; ncores as usize];
    let shared = bound.iter().any(|&c| std::mem::replace(&mut used[c as usize], true));
    let n = threads.len();
    if n <= ncores as usize && !shared {
        return Ok(());
    }
    let how = format!(
        "{n} threads on machine '{machine}' with {ncores} cores{}",
        if shared && n <= ncores as usize { ", some sharing one by their affinity" } else { "" }
    );
    if let Some(t) = threads.iter().find(|t| t.arrive_ns > 0.0) {
        return Err(Error::config(
            format!("processes[{}].arrive_ns", t.process),
            format!(
                "threads that arrive later need cores of their own: {how}; the scheduler does not put a thread to sleep until it arrives"
            ),
        ));
    }
    if threads.iter().any(|t| t.barrier.is_some()) {
        return Err(Error::config(
            "barrier_every",
            format!("a run with barriers needs a core per thread (time-sharing a core with a thread waiting at a barrier is not modelled): {how}"),
        ));
    }
    if let Some(t) = threads.iter().find(|t| t.wait_at_end) {
        return Err(Error::config(
            "at_end",
            format!(
                "process {}'s threads wait at its end holding their cores (at_end = \"{}\"), so every thread needs a core of its \
                 own (time-sharing a core with a waiting thread is not modelled): {how}; give each thread a core (fewer threads, or affinities on distinct cores) or at_end = \"continue\"",
                t.process,
                if t.exit_at_end { "exit" } else { "wait" }
            ),
        ));
    }
    Ok(())
}

/// Threads that arrive later (`arrive_ns`) start on their cores then: the cycles before count
/// as off the core, as a switched-out thread's. They have cores of their own (`own_cores`),
/// which the scheduler then never hands to another thread before they arrive.
fn arrivals(threads: &[ThreadDef], cores: &mut [OooCore], core_ghz: f64) -> Result<()> {
    for (core, t) in cores.iter_mut().zip(threads) {
        if t.arrive_ns > 0.0 {
            core.resume_at((t.arrive_ns * core_ghz).round() as Cycle);
        }
    }
    Ok(())
}

/// The memory side of a run's parts, which a memory-system step changes.
pub(super) struct MemoryStep<'a> {
    pub mem: &'a mut MemorySystem,
    pub hier: &'a mut MemoryHierarchy,
    pub cores: &'a mut [OooCore],
    pub checkers: &'a mut Vec<(Range<usize>, TimingChecker)>,
    pub commands: &'a mut Vec<CommandRecord>,
    pub export: &'a mut Option<DramExport>,
}

/// One memory-system step at the memory system's next event `dram_next` (after `now_dram`):
/// tick the controllers, hand completions to the hierarchy and wake their cores, and move the
/// requests due from the outboxes into the controllers. `state` is the loop's (DRAM cycle, ticked
/// at all, blocked outboxes, requests completed, the memory system's next event). Returns
/// whether a core was woken. Shared by the detailed loop and the sampled one (`sampling.rs`).
#[inline(always)]
pub(super) fn memory_step(
    p: MemoryStep<'_>,
    dram_next: Cycle,
    now_core: Cycle,
    state: (&mut Cycle, &mut bool, &mut u64, &mut u64, &mut Cycle),
    done: &mut Vec<Completion>,
    woken: &mut Vec<(crate::cache::Waiter, Cycle)>,
) -> Result<bool> {
    let MemoryStep { mem, hier, cores, checkers, commands, export } = p;
    let (now_dram, dram_ticked, outbox_blocked, requests, mem_next) = state;
    // Memory system step at DRAM cycle `d`.
    // Never twice at one cycle: a request made after this cycle's step enters at the next.
    let d = if *dram_ticked { dram_next.max(*now_dram + 1) } else { dram_next };
    *now_dram = d;
    *dram_ticked = true;
    mem.tick(d, done, false);
    if !checkers.is_empty() {
        observe_commands(mem, checkers, commands);
    }
    // Iterated and cleared rather than drained: `Drain` costs more than the loop body.
    for c in done.iter() {
        *requests += 1;
        hier.complete(c, woken);
    }
    done.clear();
    hier.sample_llc_occupancy(d);
    for &(w, at) in woken.iter() {
        cores[w.core as usize].complete(w.token, at.max(now_core));
    }
    let woke = !woken.is_empty();
    woken.clear();
    *outbox_blocked = 0;
    for n in 0..hier.outbox_count() {
        while let Some(o) = hier.outbox_front(n) {
            if o.at > d {
                break;
            }
            if !mem.try_enqueue(d, o.id, o.addr, o.is_write, o.origin) {
                *outbox_blocked |= 1 << n;
                break;
            }
            hier.outbox_pop(n);
            hier.entered_memory(&o, d);
            if let Some(x) = export.as_mut() {
                x.record(o.addr, o.is_write, d)?;
            }
        }
    }
    *mem_next = mem.next_event();
    if *mem_next <= d {
        return Err(Error::config("engine", format!("internal error: memory system stalled at DRAM cycle {d}")));
    }
    Ok(woke)
}

/// Where a run ended: the last DRAM and core cycles, and the DRAM requests completed.
pub(super) struct RunEnd {
    pub(super) now_dram: Cycle,
    pub(super) now_core: Cycle,
    pub(super) requests: u64,
}

/// The event loop: until every thread has reached its target, step the memory system or the
/// cores, whichever event comes first.
/// Per thread: retired instructions and on-core cycles when it last retired one; a thread on a
/// core that retires nothing for `limit` of its cycles (`cpu.watchdog_cycles`) ends the run
/// with an error naming it instead of running for ever.
pub(super) struct Progress {
    last: Vec<(u64, u64)>,
    pub(super) limit: u64,
}

impl Progress {
    pub(super) fn new(threads: usize, limit: u64) -> Progress {
        Progress { last: vec![(0, 0); threads], limit }
    }

    pub(super) fn check(
        &mut self,
        cores: &[OooCore],
        frozen: &[Option<(CoreMemoryStats, Cycle)>],
        on_core: &[u32],
        threads: &[ThreadDef],
        (waiting, limit): (usize, usize),
        kernel_work_until: impl Fn(u32) -> Option<Cycle>,
    ) -> Result<()> {
        crate::interrupt::check()?;
        for &t in on_core {
            let i = t as usize;
            if frozen[i].is_some() {
                continue;
            }
            let s = cores[i].stats();
            let last = &mut self.last[i];
            if s.retired != last.0 {
                *last = (s.retired, s.cycles);
            } else if s.cycles >= last.1 + self.limit {
                // Requests past the outbox limit refuse every load (page copies are paced by
                // os.numa_scan.copy_lines, so they are not what fills it).
                if let Some(until) = kernel_work_until(t) {
                    // Its loads are refused while the OS works for it: a repartition that displaces
                    // more pages than one epoch can copy stalls it again at every epoch.
                    return Err(Error::config(
                        format!("thread {t} (process {})", threads[i].process),
                        format!(
                            "retired no instruction in {} cycles on its core: the OS's page work for it (re-colouring \
                             copies, migrations, faults, shootdowns) holds it until core cycle {until}; a dynamic policy \
                             whose repartitions displace more pages than an epoch can copy never lets it run: copy them \
                             later (os.recolour.mode = \"lazy\" or \"daemon\") or repartition less often; raise \
                             cpu.watchdog_cycles if the thread is only slow",
                            s.cycles - last.1
                        ),
                    ));
                }
                let flooded = if waiting >= limit {
                    format!("; {waiting} requests wait to enter the memory controllers (loads are refused above {limit})")
                } else {
                    String::new()
                };
                return Err(Error::config(
                    format!("thread {t} (process {})", threads[i].process),
                    format!(
                        "retired no instruction in {} cycles on its core (stuck at {} retired, {} loads outstanding, {} cycles \
                         refused a shared LLC MSHR or queue slot{flooded}); cache.llc.mshr_arbitration = \"core-order\" lets \
                         lower-numbered cores take every freed entry, \"fifo\" (the default) does not; raise \
                         cpu.watchdog_cycles if the thread is only slow",
                        s.cycles - last.1,
                        s.retired,
                        cores[i].outstanding_loads(),
                        s.stall_refused
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn run(sim: &mut Sim, threads: &mut [ThreadDef], plan: &Plan) -> Result<RunEnd> {
    let Sim { hier, mem, checkers, commands, cores, sched, frozen, export, barriers, .. } = sim;
    let (ncores, clock) = (plan.cores, plan.clock);
    // Threads still short of their target; counted rather than rescanning `frozen` every event.
    let mut running = plan.threads as usize;
    let mut done: Vec<Completion> = Vec::new();
    let mut woken = Vec::new();
    let mut now_dram: Cycle = 0;
    let mut dram_ticked = false;
    let mut now_core: Cycle = 0;
    // Bit n: node n's outbox head was refused; nothing there enters before the next step.
    let mut outbox_blocked = 0u64;
    let mut requests = 0u64;
    // Only the memory-system step below changes the memory system (cores only fill the
    // outbox), so its next event is computed there once, not on every iteration.
    let mut mem_next = mem.next_event();
    // Likewise only the core step changes the scheduler: which threads are on cores and its
    // next event are kept from there (the cores' own next events change in both steps).
    let mut sched_view = SchedView::default();
    sched_view.update(sched, ncores);
    // The cores' earliest event changes only when a core steps or is woken by a completion;
    // most memory-system steps wake nobody, so it is kept until then instead of re-read from
    // every core's state (host cache misses) on each iteration.
    let mut core_next = NEVER;
    let mut core_next_stale = true;
    let mut progress = Progress::new(threads.len(), plan.watchdog_cycles);
    // Often enough to stop within twice the limit and to notice a requested stop within about
    // a million cycles, rarely enough to cost nothing.
    let check_every = (plan.watchdog_cycles / 4).clamp(1, CHECK_CYCLES);
    let mut next_progress_check = check_every;
    loop {
        if running == 0 {
            break;
        }
        if core_next_stale {
            core_next = sched_view.next_event(now_core);
            for &t in &sched_view.on_core {
                core_next = core_next.min(cores[t as usize].next_event());
            }
            core_next_stale = false;
        }
        let outbox_next = hier.outbox_ready(outbox_blocked);
        let dram_next = mem_next.min(outbox_next);
        let dram_first = dram_next != NEVER && (core_next == NEVER || clock.dram_not_after_core(dram_next, core_next));
        if dram_first {
            let woke = memory_step(
                MemoryStep {
                    mem: &mut *mem,
                    hier: &mut *hier,
                    cores: &mut cores[..],
                    checkers: &mut *checkers,
                    commands: &mut *commands,
                    export: &mut *export,
                },
                dram_next,
                now_core,
                (&mut now_dram, &mut dram_ticked, &mut outbox_blocked, &mut requests, &mut mem_next),
                &mut done,
                &mut woken,
            )?;
            core_next_stale |= woke;
        } else if core_next != NEVER {
            now_core = core_next;
            core_next_stale = true;
            hier.set_next_memory_event(dram_next);
            if now_core >= next_progress_check {
                progress
                    .check(cores, frozen, &sched_view.on_core, threads, hier.waiting_requests(), |t| hier.kernel_work_until(t, now_core))?;
                next_progress_check = now_core + check_every;
            }
            if sched_view.idle_at(now_core) {
                // The common case, the per-core loop below without its scheduler checks.
                for &t in &sched_view.on_core {
                    let i = t as usize;
                    if cores[i].next_event() <= now_core {
                        let reached = tick_thread(
                            t,
                            &mut cores[i],
                            threads[i].trace.as_mut(),
                            hier,
                            &mut frozen[i],
                            threads[i].wait_at_end,
                            now_core,
                        )?;
                        running -= reached as usize;
                        if reached && threads[i].exit_at_end {
                            exit_if_done(threads, frozen, i, hier)?;
                        }
                        if barriers.any {
                            barriers.after_tick(i, reached, cores, now_core);
                        }
                    }
                }
                continue;
            }
            for c in 0..ncores {
                if let Some(t) = sched.on_core(c) {
                    let i = t as usize;
                    if cores[i].next_event() <= now_core {
                        let reached = tick_thread(
                            t,
                            &mut cores[i],
                            threads[i].trace.as_mut(),
                            hier,
                            &mut frozen[i],
                            threads[i].wait_at_end,
                            now_core,
                        )?;
                        running -= reached as usize;
                        if reached && threads[i].exit_at_end {
                            exit_if_done(threads, frozen, i, hier)?;
                        }
                        if barriers.any {
                            barriers.after_tick(i, reached, cores, now_core);
                        }
                    }
                    let core = &mut cores[i];
                    if matches!(sched.state(c), CpuState::Draining { .. }) && core.is_drained() {
                        sched.drained(c, core.cycle().max(now_core));
                    }
                }
                if sched.next_event(c) <= now_core {
                    match sched.state(c) {
                        CpuState::Running { .. } => {
                            if let Some(t) = sched.slice_end(c, now_core) {
                                barriers.check_not_switched(t)?;
                                let core = &mut cores[t as usize];
                                core.start_drain(now_core);
                                if core.is_drained() {
                                    sched.drained(c, core.cycle().max(now_core));
                                }
                            }
                        }
                        CpuState::Switching { .. } => {
                            if let Some(t) = sched.switch_done(c, now_core) {
                                hier.set_thread_core(t, c);
                                cores[t as usize].resume_at(now_core);
                            }
                        }
                        _ => {}
                    }
                }
            }
            if sched.next_balance() <= now_core {
                sched.balance(now_core);
            }
            sched_view.update(sched, ncores);
        } else {
            return Err(Error::config(
                "engine",
                format!("internal error: deadlock at core cycle {now_core}, DRAM cycle {now_dram}: no core or memory event pending"),
            ));
        }
    }
    mem.finish(now_dram);
    if !checkers.is_empty() {
        observe_commands(mem, checkers, commands);
    }
    Ok(RunEnd { now_dram, now_core, requests })
}

/// The run's results: each thread's frozen statistics, the totals, the OS model's reports.
fn collect(
    sim: Sim,
    threads: &[ThreadDef],
    plan: Plan,
    end: RunEnd,
    started: std::time::Instant,
    sampled: Option<SampledRun>,
) -> MulticoreResult {
    let Sim { hier, mem, checkers, cores, sched, mut frozen, barriers, warmup_wraps, .. } = sim;
    let sched_stats = sched.stats();
    let mut results = Vec::with_capacity(plan.threads as usize);
    for (i, core) in cores.iter().enumerate() {
        let (memory, finished_at) = frozen[i].take().expect("frozen at target");
        let (barrier_wait_cycles, barriers) = barriers.waited(i);
        results.push(CoreResult {
            program: threads[i].trace.name().to_string(),
            core: match &sampled {
                Some(s) => s.totals(i).0,
                None => *core.target_stats().expect("every thread reached its target"),
            },
            memory,
            placement: hier.os().process_placement(threads[i].process),
            process: threads[i].process,
            sched: sched_stats[i].clone(),
            finished_at,
            barrier_wait_cycles,
            barriers,
            run_cycles: core.stats().cycles,
            warmup_wraps: warmup_wraps[i],
        });
    }
    let totals = RunTotals {
        requests: end.requests,
        dram_cycles: end.now_dram,
        wall_seconds: started.elapsed().as_secs_f64(),
        commands_checked: checkers.iter().map(|(_, c)| c.commands_checked()).sum(),
        violations: checkers.iter().map(|(_, c)| c.violation_count()).sum(),
        violation_examples: checkers
            .iter()
            .flat_map(|(_, c)| c.violation_examples(crate::dram_sim::VIOLATION_EXAMPLES))
            .take(crate::dram_sim::VIOLATION_EXAMPLES)
            .collect(),
        ..RunTotals::default()
    };
    MulticoreResult {
        cores: results,
        llc: hier.llc().map(|l| l.stats().clone()),
        colour_report: hier.os().colour_report().ok(),
        spilled_pages: hier.os().spilled_pages(),
        pages_per_node: (0..plan.processes).map(|p| hier.os().pages_per_node(p)).collect(),
        node_pages: hier.os().node_pages(),
        fallback_pages: hier.os().fallback_pages(),
        migration: hier.migration_stats().cloned(),
        os_warnings: hier.os().warnings().to_vec(),
        swap: hier.os().swap_stats().map(|s| s.to_vec()),
        hot_pages: hier.os().hot_page_windows(),
        llc_pages: hier.llc_pages(),
        dynamic: hier.os().dynamic_stats().cloned(),
        memory: mem,
        totals,
        core_cycles: end.now_core,
        processes: plan.processes,
        context_switches: sched.switches,
        same_process_switches: sched.same_process_switches,
        load_balance: plan.balance,
        binding: plan.binding,
        exported_requests: 0,
        ucp_repartitions: hier.ucp_state().0,
        ucp_ways: hier.ucp_state().1.to_vec(),
        sampling: sampled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MachineConfig;
    use crate::workload::open_cpu_workload;

    fn pages_mapped(populate: bool) -> (u64, Vec<u32>) {
        let cfg = MemoryConfig::resolve(&MachineConfig::load("i7-860").unwrap()).unwrap();
        let os = OsConfig { populate, ..OsConfig::default() };
        let programs = vec![open_cpu_workload("light:footprint_bytes=1048576", 1).unwrap()];
        let r = simulate_multicore(&cfg, &os, programs, 10_000).unwrap();
        let p = &r.cores[0].placement;
        (p.pages, p.banks_used.clone())
    }

    #[test]
    fn populate_maps_the_whole_footprint_before_the_run() {
        // 1 MiB = 256 pages, all mapped although 10 000 instructions touch a few lines only.
        let (pages, banks) = pages_mapped(true);
        assert_eq!(pages, 256);
        // Ascending faults in the baseline's runs of 8 contiguous frames cover every bank.
        assert_eq!(banks.len(), 64);
        let (pages, _) = pages_mapped(false);
        assert!(pages < 20, "without populate only touched pages are mapped: {pages}");
    }
}
