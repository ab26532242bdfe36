//! Everything between the cores and the DRAM controllers: address translation by the OS model
//! (first touch allocates a frame under the placement policy), the shared LLC indexed by
//! physical address with its MSHRs and an optional prefetcher per thread (cache/prefetcher.rs),
//! and the outbox of requests waiting to enter the memory system. Implements `CoreMemory` for
//! the cores; the driver moves the outbox into the memory system and hands DRAM completions back
//! with `complete`. It also keeps what explains row-buffer results per thread: row outcomes
//! by kind of request (demand read, prefetch, write-back) and by cause (`RowCause`), and the
//! LLC lines each thread holds, sampled every `LLC_SAMPLE_CYCLES`.

use super::bank_parallelism::{BankParallelism, BankParallelismCounters};
use super::inflight_reads::InflightReads;
use super::numa_paths::{NodeAccesses, NumaPaths};
use crate::cache::prefetcher::{self, PrefetchStats, Prefetcher, PrefetcherConfig};
use crate::cache::{Access, CacheLevelConfig, MshrArbiter, MshrFile, MshrInsert, SetAssocCache, Waiter};
use crate::controller::{Completion, Origin, RowOutcome};
use crate::cpu::{ClockRatio, CoreMemory, LoadOutcome};
use crate::error::Result;
use crate::os::migration::{NodeLoad, OsEvent};
use crate::os::monitor::{Monitors, ProcessMonitor};
use crate::os::OsModel;
use crate::stats::{LatencyHistogram, RowCauseCounts, RowOutcomesByKind};
use crate::{Cycle, NEVER};
use serde::Serialize;
use std::collections::VecDeque;

/// What one core caused below its own pipeline.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CoreMemoryStats {
    /// Loads that hit the core's private L2 (0 without one).
    pub l2_hits: u64,
    /// MBA: requests its bandwidth cap held back, and the DRAM cycles they waited (0 without).
    pub throttled_requests: u64,
    pub throttle_delay_cycles: u64,
    pub llc_accesses: u64,
    pub llc_misses: u64,
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    /// The same outcomes by kind of request; they sum to the three counts above.
    pub row_outcomes_by_kind: RowOutcomesByKind,
    /// The misses and conflicts by who left the bank so (same process, another, or neither).
    pub row_causes: RowCauseCounts,
    /// DRAM requests whose wait overlapped their rank's refresh.
    pub refresh_met: u64,
    /// LLC lines the thread installed (by its misses, prefetches and write-backs) still held,
    /// and their mean over the samples taken every `LLC_SAMPLE_CYCLES` DRAM cycles (0 without an LLC).
    pub llc_lines: u64,
    pub llc_lines_mean: f64,
    /// Banks busy with the core's reads (bank-level parallelism), integrated over DRAM cycles.
    pub bank_parallelism: BankParallelismCounters,
    /// DRAM read latency (controller arrival to last data beat), DRAM cycles.
    #[serde(skip)]
    pub read_latency: LatencyHistogram,
    /// The thread's prefetches (`None` without a prefetcher). Their DRAM reads are counted in
    /// `dram_reads`, the row outcomes, bank parallelism and read latency above; `llc_misses`
    /// stays demand misses only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<PrefetchStats>,
    /// Local and remote requests (multi-node machines only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodeAccesses>,
    /// Hinting faults, pages moved and system time (only when pages migrate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_migration: Option<ThreadMigration>,
}

/// One thread's part in page migration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadMigration {
    pub hint_faults: u64,
    /// Pages its faults moved.
    pub pages_moved: u64,
    /// Major faults it took on pages in swap (`os.overflow = "swap"`).
    pub swap_ins: u64,
    /// Of `system_cycles`: stalls for its process's pages a dynamic policy re-coloured (each
    /// page's migration and each batch's shootdown), the adjustment's overhead.
    pub recolour_cycles: u64,
    /// Of `system_cycles`: the accessed-bit sampler's walks of its process's page table
    /// (`[os.hot_pages] charge_walks`; the process's first thread pays them).
    #[serde(skip_serializing_if = "is_zero")]
    pub walk_cycles: u64,
    /// Core cycles stalled in the kernel: its hinting faults, migrations and major faults,
    /// its process's pages re-coloured, TLB shootdowns of its process's page moves, and the
    /// sampler's walks when charged.
    pub system_cycles: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Holds a thread in the kernel until at least `until` (a TLB shootdown, which runs beside what
/// already holds it); returns the cycles this adds to its hold from `now`, what it costs the
/// thread: a shootdown during a fault is not a second wait.
fn hold_until(blocked_until: &mut Cycle, now: Cycle, until: Cycle) -> Cycle {
    let added = until.saturating_sub((*blocked_until).max(now));
    *blocked_until = (*blocked_until).max(until);
    added
}

/// What the OS's page work costs and how often it runs, in core cycles: migration
/// (`os.numa_scan`), a dynamic policy's epoch (`os.dynamic`) and swapping (`os.swap`); and the
/// clocks to turn cycles into ns.
#[derive(Clone, Debug)]
pub struct MigrationClock {
    pub period: Cycle,
    pub fault: Cycle,
    pub migrate: Cycle,
    pub shootdown: Cycle,
    /// Lines one thread's page copies keep in flight (`os.numa_scan.copy_lines`).
    pub copy_lines: usize,
    /// A major fault on a page in swap.
    pub swap_fault: Cycle,
    /// The dynamic policy's epoch (`None`: no dynamic policy).
    pub epoch: Option<Cycle>,
    /// The re-colouring copy daemon's period (`None`: copies are made at the epoch).
    pub copy_period: Option<Cycle>,
    /// One channel's peak bandwidth, GB/s (the monitors report it beside the traffic).
    pub channel_peak_gbps: f64,
    pub page_bytes: u64,
    pub core_ghz: f64,
    pub dram_tck_ns: f64,
    /// Per node: its unloaded read latency, ns (`NodeLoad::idle_ns`).
    pub idle_ns: Vec<f64>,
}

/// The OS's page work in core cycles, and who is stalled until when.
struct MigrationCosts {
    fault: Cycle,
    migrate: Cycle,
    shootdown: Cycle,
    swap_fault: Cycle,
    period: Cycle,
    next_scan: Cycle,
    /// The dynamic policy's epoch, the next one's end and the last one's ( `NEVER`: none).
    epoch: Cycle,
    next_epoch: Cycle,
    last_epoch: Cycle,
    /// The copy daemon's period, its next batch (`NEVER` while no page waits) and its last.
    copy_period: Cycle,
    next_copy: Cycle,
    last_copy: Cycle,
    /// The earliest of `next_scan`, `next_epoch` and `next_copy`.
    next_work: Cycle,
    /// Per thread at the last epoch: LLC misses, DRAM reads, DRAM writes, kernel cycles, LLC
    /// accesses, instructions retired, DRAM reads of its program (not of page copies).
    counted: Vec<[u64; 7]>,
    /// Per thread since the last epoch: dirty lines it wrote back to DRAM (not page copies or
    /// swap-ins, whose writes `dram_writes` counts too).
    writebacks: Vec<u64>,
    channel_peak_gbps: f64,
    core_ghz: f64,
    dram_tck_ns: f64,
    /// Per node over the current period (tracking policies): reads, and DRAM cycles from their
    /// issue to their data's return.
    reads: Vec<u64>,
    read_cycles: Vec<u64>,
    idle_ns: Vec<f64>,
    tracks: bool,
    /// One LLC-miss read in `sample_period` is sampled (0: none); reads until the next.
    sample_period: u32,
    sample_left: u32,
    /// Per thread: the core cycle its kernel work ends (a load before it is refused).
    blocked_until: Vec<Cycle>,
    events: Vec<OsEvent>,
    page_bytes: u64,
}

/// The OS's page copies, one stream per thread that copies: (old line, new line) waiting their
/// turn, and the stream's reads in DRAM, at most `lines` at a time.
struct CopyStreams {
    lines: usize,
    waiting: Vec<VecDeque<(u64, u64)>>,
    in_flight: Vec<usize>,
}

/// What a DRAM request was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RequestKind {
    DemandRead,
    /// A read whose LLC MSHR a prefetch opened (a demand may have joined it since).
    PrefetchRead,
    WriteBack,
    /// A migrated page's line read from its old frame.
    MigrationRead,
}

/// DRAM cycles between samples of each thread's LLC lines (`CoreMemoryStats::llc_lines_mean`).
pub const LLC_SAMPLE_CYCLES: Cycle = 1000;

impl CoreMemoryStats {
    fn record(&mut self, c: &Completion, kind: RequestKind) {
        if c.is_write {
            self.dram_writes += 1;
        } else {
            self.dram_reads += 1;
            // A page copy's reads are the kernel's, not the program's latency.
            if kind != RequestKind::MigrationRead {
                self.read_latency.record(c.done - c.arrival);
            }
        }
        let by_kind = match kind {
            RequestKind::DemandRead => &mut self.row_outcomes_by_kind.demand_read,
            RequestKind::PrefetchRead => &mut self.row_outcomes_by_kind.prefetch_read,
            RequestKind::WriteBack => &mut self.row_outcomes_by_kind.write_back,
            RequestKind::MigrationRead => &mut self.row_outcomes_by_kind.migration_read,
        };
        match c.outcome {
            RowOutcome::Hit => {
                self.row_hits += 1;
                by_kind.hits += 1;
            }
            RowOutcome::Miss => {
                self.row_misses += 1;
                by_kind.misses += 1;
            }
            RowOutcome::Conflict => {
                self.row_conflicts += 1;
                by_kind.conflicts += 1;
            }
        }
        self.row_causes.record(c.cause);
        self.refresh_met += c.met_refresh as u64;
    }

    /// What happened since `earlier`, a snapshot of the same thread's statistics (a sampled
    /// run's unit). The LLC occupancy is the later snapshot's.
    pub fn since(&self, earlier: &CoreMemoryStats) -> CoreMemoryStats {
        CoreMemoryStats {
            l2_hits: self.l2_hits - earlier.l2_hits,
            throttled_requests: self.throttled_requests - earlier.throttled_requests,
            throttle_delay_cycles: self.throttle_delay_cycles - earlier.throttle_delay_cycles,
            llc_accesses: self.llc_accesses - earlier.llc_accesses,
            llc_misses: self.llc_misses - earlier.llc_misses,
            dram_reads: self.dram_reads - earlier.dram_reads,
            dram_writes: self.dram_writes - earlier.dram_writes,
            row_hits: self.row_hits - earlier.row_hits,
            row_misses: self.row_misses - earlier.row_misses,
            row_conflicts: self.row_conflicts - earlier.row_conflicts,
            row_outcomes_by_kind: self.row_outcomes_by_kind.since(&earlier.row_outcomes_by_kind),
            row_causes: self.row_causes.since(&earlier.row_causes),
            refresh_met: self.refresh_met - earlier.refresh_met,
            llc_lines: self.llc_lines,
            llc_lines_mean: self.llc_lines_mean,
            bank_parallelism: self.bank_parallelism.since(&earlier.bank_parallelism),
            read_latency: self.read_latency.since(&earlier.read_latency),
            prefetch: self.prefetch.as_ref().zip(earlier.prefetch.as_ref()).map(|(a, b)| a.since(b)),
            nodes: self.nodes.as_ref().zip(earlier.nodes.as_ref()).map(|(a, b)| a.since(b)),
            page_migration: None,
        }
    }

    /// Adds `o`'s counts (a sampled run's units, summed); the occupancy becomes `o`'s.
    pub fn add(&mut self, o: &CoreMemoryStats) {
        self.l2_hits += o.l2_hits;
        self.throttled_requests += o.throttled_requests;
        self.throttle_delay_cycles += o.throttle_delay_cycles;
        self.llc_accesses += o.llc_accesses;
        self.llc_misses += o.llc_misses;
        self.dram_reads += o.dram_reads;
        self.dram_writes += o.dram_writes;
        self.row_hits += o.row_hits;
        self.row_misses += o.row_misses;
        self.row_conflicts += o.row_conflicts;
        self.row_outcomes_by_kind.add(&o.row_outcomes_by_kind);
        self.row_causes.add(&o.row_causes);
        self.refresh_met += o.refresh_met;
        self.llc_lines = o.llc_lines;
        self.llc_lines_mean = o.llc_lines_mean;
        self.bank_parallelism.add(&o.bank_parallelism);
        self.read_latency.merge(&o.read_latency);
        match (&mut self.prefetch, &o.prefetch) {
            (Some(a), Some(b)) => a.add(b),
            (a @ None, Some(b)) => *a = Some(*b),
            _ => {}
        }
        match (&mut self.nodes, &o.nodes) {
            (Some(a), Some(b)) => a.add(b),
            (a @ None, Some(b)) => *a = Some(*b),
            _ => {}
        }
    }

    /// Row misses plus conflicts over all DRAM requests (0 when there were none).
    pub fn row_buffer_miss_rate(&self) -> f64 {
        let all = self.row_hits + self.row_misses + self.row_conflicts;
        if all == 0 {
            0.0
        } else {
            (self.row_misses + self.row_conflicts) as f64 / all as f64
        }
    }
}

/// A request waiting to enter the memory system, not before DRAM cycle `at`.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing {
    pub at: Cycle,
    pub id: u64,
    pub addr: u64,
    pub is_write: bool,
    /// The thread and its process.
    pub origin: Origin,
    /// A read's global bank id (bank-level parallelism); 0 for writes.
    pub bank: u32,
}

impl Throttle {
    /// The DRAM cycle a request of thread `t` ready at `at` leaves at, under its cap.
    fn admit(&mut self, t: usize, at: Cycle) -> Cycle {
        let interval = self.interval.get(t).copied().unwrap_or(0.0);
        if interval <= 0.0 {
            return at;
        }
        let start = (at as f64).max(self.next[t]);
        self.next[t] = start + interval;
        start.ceil() as Cycle
    }
}

/// A read on its way to or in DRAM.
struct InflightRead {
    line: u64,
    waiter: Waiter,
    /// Global bank id (bank-level parallelism).
    bank: u32,
    /// The DRAM cycle it was issued, modulo 2^32 (a read's latency is far below): loaded
    /// latency for the migration policies. It fills what was padding.
    sent: u32,
}

const _: () = assert!(std::mem::size_of::<InflightRead>() == 32, "an in-flight read stays half a cache line");

struct Llc {
    cache: SetAssocCache,
    mshrs: MshrFile,
    arbiter: MshrArbiter,
    latency: u64,
}

/// Token of the waiter a prefetch's in-flight read carries (never handed to a core).
const PREFETCH_TOKEN: u64 = u64::MAX;
/// Token of a migration copy's read (never handed to a core, never filled into a cache).
const MIGRATION_TOKEN: u64 = u64::MAX - 1;
/// Token of a page copy's read (`CopyStreams`): its completion lets the stream's next line go.
const COPY_TOKEN: u64 = u64::MAX - 2;

/// The prefetchers at the LLC, one per thread, with the configuration to build more.
struct Prefetching {
    cfg: PrefetcherConfig,
    line_bytes: u32,
    per_thread: Vec<Box<dyn Prefetcher>>,
    /// Scratch for one access's proposals.
    proposals: Vec<u64>,
    /// Functional warming trains the prefetchers and installs what they propose (a sampled
    /// run's gaps with `sampling.warm_prefetchers`; never the run's initial warm-up).
    warm: bool,
}

impl Prefetching {
    fn build(&mut self, threads: usize) -> Result<()> {
        self.per_thread =
            (0..threads).map(|_| Ok(prefetcher::build(&self.cfg, self.line_bytes)?.expect("prefetching is on"))).collect::<Result<_>>()?;
        Ok(())
    }
}

/// One private L2 per core. Misses are tracked by the LLC's MSHRs (the L2's own are not
/// modelled); fills come back through the LLC; dirty L2 victims are written into the LLC.
struct PrivateL2 {
    caches: Vec<SetAssocCache>,
    latency: u64,
}

pub struct MemoryHierarchy {
    os: OsModel,
    l2: Option<PrivateL2>,
    llc: Option<Llc>,
    line_mask: u64,
    clock: ClockRatio,
    /// Reads in DRAM: request id -> line (with an LLC) and, without one, the waiting load.
    reads: InflightReads<InflightRead>,
    /// Requests waiting to enter the memory system, a FIFO per node: each node's controllers
    /// are reached on their own path (a socket's home agent), so a full queue on one node does
    /// not hold back requests to another. One queue on a one-node machine.
    outboxes: Vec<VecDeque<Outgoing>>,
    /// Requests in all outboxes, against `outbox_limit`.
    outbox_len: usize,
    outbox_limit: usize,
    copies: Option<CopyStreams>,
    next_id: u64,
    /// Indexed by thread (the cores' `OooCore` ids; thread = core without time-sharing).
    per_core: Vec<CoreMemoryStats>,
    blp: Vec<BankParallelism>,
    /// Thread -> its process (address space) and the core it runs on (private L2, CCPS region).
    thread_process: Vec<u32>,
    thread_core: Vec<u32>,
    /// DRAM cycle of the next memory-system event: a refused request cannot succeed before it.
    next_memory_event: Cycle,
    prefetching: Option<Prefetching>,
    /// LLC occupancy samples: the next DRAM cycle to take one, per thread the sum of its
    /// lines over the samples, and how many were taken.
    next_llc_sample: Cycle,
    llc_line_sums: Vec<u64>,
    llc_samples: u64,
    /// Multi-node machines: nodes, latency and links (`None`: one node).
    numa: Option<Box<NumaPaths>>,
    /// Page migration's costs (`None`: pages do not migrate).
    migration: Option<Box<MigrationCosts>>,
    /// Instructions each thread has retired, as the driver last said (`note_retired`): the
    /// monitors' per-process instruction counts.
    retired: Vec<u64>,
    /// Core GHz when accessed bits are sampled without migration (`[os.hot_pages]`): loads
    /// give the OS model the time (0: not sampled, or `migration` does it).
    sample_clock_ghz: f64,
    /// MBA's per-thread bandwidth caps (`None`: no throttling).
    throttle: Option<Box<Throttle>>,
    /// UCP: the DRAM cycles between repartitions of CAT's ways and the next (`None`: static).
    ucp: Option<(Cycle, Cycle)>,
    /// UCP: repartitions so far, and each process's ways after the latest.
    ucp_repartitions: u64,
    ucp_ways: Vec<u32>,
    /// Bytes sent to each channel since the last epoch (empty: not monitored).
    channel_bytes: Vec<u64>,
}

/// MBA (`os/resctrl/mba.rs`): per thread, the DRAM cycles one line's request takes of its
/// share (0: unthrottled) and the earliest (fractional) cycle its next may leave.
struct Throttle {
    interval: Vec<f64>,
    next: Vec<f64>,
}

impl MemoryHierarchy {
    pub fn new(
        os: OsModel,
        l2: Option<&CacheLevelConfig>,
        llc: Option<&CacheLevelConfig>,
        cores: u32,
        clock: ClockRatio,
        line_bytes: u64,
    ) -> Result<Self> {
        let l2 = match l2 {
            Some(c) => Some(PrivateL2 { caches: (0..cores).map(|_| c.build_cache(1)).collect::<Result<_>>()?, latency: c.latency }),
            None => None,
        };
        let llc = match llc {
            Some(c) => Some(Llc {
                cache: c.build_cache(cores)?,
                mshrs: c.build_mshrs(),
                arbiter: MshrArbiter::new(c.mshr_arbitration),
                latency: c.latency,
            }),
            None => None,
        };
        Ok(MemoryHierarchy {
            os,
            l2,
            llc,
            line_mask: !(line_bytes - 1),
            clock,
            reads: InflightReads::default(),
            outboxes: vec![VecDeque::new()],
            outbox_len: 0,
            // Back-pressure: beyond this many requests waiting for a DRAM queue, refuse.
            outbox_limit: 64,
            copies: None,
            next_id: 0,
            per_core: vec![CoreMemoryStats::default(); cores as usize],
            blp: vec![BankParallelism::default(); cores as usize],
            thread_process: (0..cores).collect(),
            thread_core: (0..cores).collect(),
            next_memory_event: 0,
            prefetching: None,
            next_llc_sample: 0,
            llc_line_sums: vec![0; cores as usize],
            llc_samples: 0,
            numa: None,
            migration: None,
            sample_clock_ghz: 0.0,
            retired: Vec::new(),
            throttle: None,
            ucp: None,
            ucp_repartitions: 0,
            ucp_ways: Vec::new(),
            channel_bytes: Vec::new(),
        })
    }

    /// Pages migrate (`os.migration`): scan every `period` core cycles and charge each hinting
    /// fault `fault` cycles, each migration `migrate` more and a TLB shootdown of `shootdown` to
    /// the process's other threads. A dynamic policy's epochs and swapping are charged here as
    /// well. Call after `set_threads`.
    pub fn set_migration(&mut self, clock: MigrationClock) {
        if self.os.samples_hot_pages() {
            self.sample_clock_ghz = clock.core_ghz;
        }
        if !self.os.moves_pages() {
            return;
        }
        let threads = self.per_core.len();
        for s in &mut self.per_core {
            s.page_migration = Some(ThreadMigration::default());
        }
        let nodes = clock.idle_ns.len();
        let sample_period = self.os.miss_sample_period();
        // A daemon with its own period (DAMON's sampling) runs on that instead of the scan's.
        let period = self.os.daemon_period_ns().map_or(clock.period, |ns| (ns * clock.core_ghz).round() as Cycle);
        let period = if self.os.migrating() { period.max(1) } else { NEVER };
        let epoch = clock.epoch.map_or(NEVER, |e| e.max(1));
        if epoch != NEVER {
            let channels = 1usize << self.os.colour_bits().channel_id_masks().len();
            self.channel_bytes = vec![0; channels];
            self.retired = vec![0; threads];
        }
        self.copies =
            Some(CopyStreams { lines: clock.copy_lines.max(1), waiting: vec![VecDeque::new(); threads], in_flight: vec![0; threads] });
        self.migration = Some(Box::new(MigrationCosts {
            fault: clock.fault,
            migrate: clock.migrate,
            shootdown: clock.shootdown,
            swap_fault: clock.swap_fault,
            period,
            next_scan: period,
            epoch,
            next_epoch: epoch,
            last_epoch: 0,
            copy_period: clock.copy_period.map_or(NEVER, |p| p.max(1)),
            next_copy: NEVER,
            last_copy: 0,
            next_work: period.min(epoch),
            counted: vec![[0; 7]; threads],
            writebacks: vec![0; threads],
            channel_peak_gbps: clock.channel_peak_gbps,
            core_ghz: clock.core_ghz,
            dram_tck_ns: clock.dram_tck_ns,
            reads: vec![0; nodes],
            read_cycles: vec![0; nodes],
            idle_ns: clock.idle_ns,
            tracks: self.os.tracks_pages(),
            sample_period,
            sample_left: sample_period,
            blocked_until: vec![0; threads],
            events: Vec::new(),
            page_bytes: clock.page_bytes,
        }));
    }

    /// One period of migration at core cycle `now`: the scan, the policy's daemon with each
    /// node's load since the last period, and what their moves cost.
    #[cold]
    #[inline(never)]
    fn migration_period(&mut self, now: Cycle) -> Result<()> {
        let Some(m) = self.migration.as_deref_mut() else { return Ok(()) };
        m.next_scan = now.saturating_add(m.period);
        m.next_work = m.next_scan.min(m.next_epoch).min(m.next_copy);
        let loads: Vec<NodeLoad> = (0..m.reads.len())
            .map(|n| NodeLoad {
                reads: m.reads[n],
                latency_ns: if m.reads[n] > 0 { m.read_cycles[n] as f64 / m.reads[n] as f64 * m.dram_tck_ns } else { 0.0 },
                idle_ns: m.idle_ns[n],
            })
            .collect();
        m.reads.iter_mut().for_each(|r| *r = 0);
        m.read_cycles.iter_mut().for_each(|r| *r = 0);
        self.os.scan(&loads)?;
        if self.os.has_events() {
            self.charge_os_events(now);
        }
        Ok(())
    }

    /// The OS's periodic work due at core cycle `now`: a migration period, a dynamic epoch, a
    /// batch of the copy daemon.
    #[cold]
    #[inline(never)]
    fn os_work(&mut self, now: Cycle) -> Result<()> {
        let Some(m) = self.migration.as_deref() else { return Ok(()) };
        let (scan, epoch, copy) = (now >= m.next_scan, now >= m.next_epoch, now >= m.next_copy);
        if scan {
            self.migration_period(now)?;
        }
        if copy {
            self.copy_batch(now)?;
        }
        if epoch {
            self.dynamic_epoch(now)?;
        }
        Ok(())
    }

    /// The copy daemon's batch at core cycle `now` (the pages it may move since the last), charged.
    fn copy_batch(&mut self, now: Cycle) -> Result<()> {
        let Some(m) = self.migration.as_deref_mut() else { return Ok(()) };
        let elapsed_ns = (now - m.last_copy) as f64 / m.core_ghz;
        m.last_copy = now;
        self.os.copy_batch(elapsed_ns)?;
        if self.os.has_events() {
            self.charge_os_events(now);
        }
        self.schedule_copies(now);
        Ok(())
    }

    /// The copy daemon's next batch: a period from `now` while pages wait, none otherwise.
    fn schedule_copies(&mut self, now: Cycle) {
        let waiting = self.os.copies_pending() > 0;
        let Some(m) = self.migration.as_deref_mut() else { return };
        if !waiting {
            m.next_copy = NEVER;
        } else if m.next_copy == NEVER || m.next_copy <= now {
            if m.next_copy == NEVER {
                m.last_copy = now;
            }
            m.next_copy = now.saturating_add(m.copy_period);
        }
        m.next_work = m.next_scan.min(m.next_epoch).min(m.next_copy);
    }

    /// The end of a dynamic policy's epoch: the monitors' counts since the last (per process
    /// from its threads, per channel), handed to the OS model, whose re-colouring is charged.
    fn dynamic_epoch(&mut self, now: Cycle) -> Result<()> {
        let Some(m) = self.migration.as_deref_mut() else { return Ok(()) };
        m.next_epoch = now.saturating_add(m.epoch);
        m.next_work = m.next_scan.min(m.next_epoch).min(m.next_copy);
        let line = !self.line_mask + 1;
        let mut processes = vec![ProcessMonitor::default(); self.os.processes() as usize];
        for (t, s) in self.per_core.iter().enumerate() {
            let Some(&p) = self.thread_process.get(t) else { continue };
            let kernel = s.page_migration.as_ref().map_or(0, |k| k.system_cycles);
            let retired = self.retired.get(t).copied().unwrap_or(0);
            let copies = &s.row_outcomes_by_kind.migration_read;
            let own_reads = s.dram_reads - (copies.hits + copies.misses + copies.conflicts);
            let [misses, reads, writes, system, accesses, instructions, own] = std::mem::replace(
                &mut m.counted[t],
                [s.llc_misses, s.dram_reads, s.dram_writes, kernel, s.llc_accesses, retired, own_reads],
            );
            let p = &mut processes[p as usize];
            p.threads += 1;
            p.kernel_ns += (kernel - system) as f64 / m.core_ghz;
            p.llc_misses += s.llc_misses - misses;
            p.dram_reads += own_reads - own;
            p.llc_accesses += s.llc_accesses - accesses;
            p.instructions += retired - instructions;
            p.writebacks += m.writebacks.get_mut(t).map_or(0, std::mem::take);
            p.dram_bytes += (s.dram_reads - reads + s.dram_writes - writes) * line;
        }
        let epoch_ns = (now - m.last_epoch) as f64 / m.core_ghz;
        m.last_epoch = now;
        let channels = self.channel_bytes.len();
        let channel_bytes = std::mem::replace(&mut self.channel_bytes, vec![0; channels]);
        let now_ns = now as f64 / m.core_ghz;
        let channel_peak_gbps = m.channel_peak_gbps;
        let llc_pages = self.llc_pages();
        self.os.end_epoch(Monitors { now_ns, epoch_ns, processes, channel_bytes, channel_peak_gbps, line_bytes: line, llc_pages })?;
        if self.os.has_events() {
            self.charge_os_events(now);
        }
        self.schedule_copies(now);
        Ok(())
    }

    /// A read of memory node `node` issued at DRAM cycle `sent` (low 32 bits) delivered its
    /// data at `done`: the period's load, and maybe a sample of its page.
    #[cold]
    #[inline(never)]
    fn note_migration_read(&mut self, line: u64, node: usize, sent: u32, done: Cycle) {
        let Some(m) = self.migration.as_deref_mut() else { return };
        if m.tracks {
            m.reads[node] += 1;
            m.read_cycles[node] += (done as u32).wrapping_sub(sent) as u64;
        }
        if m.sample_period > 0 {
            m.sample_left -= 1;
            if m.sample_left == 0 {
                m.sample_left = m.sample_period;
                self.os.sample_miss(line);
            }
        }
    }

    /// The migration statistics of the run (`None` when pages do not migrate).
    pub fn migration_stats(&self) -> Option<&crate::os::migration::MigrationStats> {
        self.migration.as_ref().and(self.os.migration_stats())
    }

    /// Charges what the last translation's hinting fault and migration cost (see `set_migration`).
    #[cold]
    #[inline(never)]
    fn charge_os_events(&mut self, now: Cycle) {
        let Some(mut m) = self.migration.take() else { return };
        self.os.take_events(&mut m.events);
        let line = !self.line_mask + 1;
        // A daemon's moves of one period are one batch: one TLB shootdown per process (Linux's
        // `migrate_pages_batch` unmaps up to 512 pages under one flush).
        let mut flushed: Vec<u32> = Vec::new();
        for e in m.events.drain(..) {
            match e {
                OsEvent::HintFault { tid } => {
                    let t = tid as usize;
                    m.blocked_until[t] = m.blocked_until[t].max(now) + m.fault;
                    let s = self.per_core[t].page_migration.as_mut().expect("set with the costs");
                    s.hint_faults += 1;
                    s.system_cycles += m.fault;
                }
                OsEvent::RecolourFault { tid, pid, moved } => {
                    // Lazy re-colouring: the touching thread takes the fault and, if its page
                    // moves, the copy; the process's other threads a shootdown.
                    let t = tid as usize;
                    let cost = m.fault + if moved.is_some() { m.migrate } else { 0 };
                    m.blocked_until[t] = m.blocked_until[t].max(now) + cost;
                    let s = self.per_core[t].page_migration.as_mut().expect("set with the costs");
                    s.system_cycles += cost;
                    s.recolour_cycles += cost;
                    let Some((old, new)) = moved else { continue };
                    for (u, &p) in self.thread_process.iter().enumerate() {
                        if p == pid && u != t {
                            let held = hold_until(&mut m.blocked_until[u], now, now + m.shootdown);
                            let s = self.per_core[u].page_migration.as_mut().expect("set with the costs");
                            s.system_cycles += held;
                            s.recolour_cycles += held;
                        }
                    }
                    self.copy_page(now, old, new, tid, m.page_bytes);
                }
                OsEvent::Walks { pid, ns } => {
                    // The sampler's walks run in the kernel on the process's behalf, once per
                    // process: its first thread stalls for them.
                    if let Some(t) = self.thread_process.iter().position(|&p| p == pid) {
                        let cost = (ns as f64 * m.core_ghz).round() as Cycle;
                        m.blocked_until[t] = m.blocked_until[t].max(now) + cost;
                        let s = self.per_core[t].page_migration.as_mut().expect("set with the costs");
                        s.system_cycles += cost;
                        s.walk_cycles += cost;
                    }
                }
                OsEvent::SwapIn { tid, new } => {
                    let t = tid as usize;
                    m.blocked_until[t] = m.blocked_until[t].max(now) + m.swap_fault;
                    let s = self.per_core[t].page_migration.as_mut().expect("set with the costs");
                    s.swap_ins += 1;
                    s.system_cycles += m.swap_fault;
                    // The device's DMA writes the page into its new frame.
                    let mut off = 0;
                    while off < m.page_bytes {
                        self.send_copy_write(now, new + off, tid);
                        off += line;
                    }
                }
                OsEvent::SwapOut { tid, pid, old } => {
                    for (u, &p) in self.thread_process.iter().enumerate() {
                        if p == pid && u != tid as usize {
                            let held = hold_until(&mut m.blocked_until[u], now, now + m.shootdown);
                            self.per_core[u].page_migration.as_mut().expect("set with the costs").system_cycles += held;
                        }
                    }
                    // The lines leave the caches and the device's DMA reads the page out.
                    let mut off = 0;
                    while off < m.page_bytes {
                        self.invalidate(old + off);
                        self.send_read(now, 0, old + off, Waiter { core: tid, token: MIGRATION_TOKEN });
                        off += line;
                    }
                }
                OsEvent::Migrated { .. } | OsEvent::Moved { .. } | OsEvent::Recoloured { .. } => {
                    // `faulting`: the thread that moved it in a fault (`None`: the daemon).
                    let (faulting, pid, old, new) = match e {
                        OsEvent::Migrated { tid, pid, old, new } => (Some(tid), pid, old, new),
                        OsEvent::Moved { pid, old, new } | OsEvent::Recoloured { pid, old, new } => (None, pid, old, new),
                        _ => unreachable!("matched above"),
                    };
                    let recolour = matches!(e, OsEvent::Recoloured { .. });
                    if recolour {
                        // The process's pages are unmapped while the kernel copies them: its
                        // threads wait out each page's migration.
                        for (u, &p) in self.thread_process.iter().enumerate() {
                            if p == pid {
                                m.blocked_until[u] = m.blocked_until[u].max(now) + m.migrate;
                                let s = self.per_core[u].page_migration.as_mut().expect("set with the costs");
                                s.system_cycles += m.migrate;
                                s.recolour_cycles += m.migrate;
                            }
                        }
                    }
                    if let Some(t) = faulting {
                        let t = t as usize;
                        // After its hinting fault's hold, which is charged: the copy adds to it.
                        let until = m.blocked_until[t] + m.migrate;
                        let held = hold_until(&mut m.blocked_until[t], now, until);
                        let s = self.per_core[t].page_migration.as_mut().expect("set with the costs");
                        s.pages_moved += 1;
                        s.system_cycles += held;
                    }
                    // The copy's requests count for the faulting thread, or the process's first.
                    let tid = faulting.unwrap_or_else(|| self.thread_process.iter().position(|&p| p == pid).unwrap_or(0) as u32);
                    let t = faulting.map_or(usize::MAX, |t| t as usize);
                    let batched = faulting.is_none() && flushed.contains(&pid);
                    if faulting.is_none() && !batched {
                        flushed.push(pid);
                    }
                    for (u, &p) in self.thread_process.iter().enumerate() {
                        if p == pid && u != t && !batched {
                            let s = self.per_core[u].page_migration.as_mut().expect("set with the costs");
                            if recolour {
                                // After the batch's copies: the stall adds to theirs.
                                m.blocked_until[u] = m.blocked_until[u].max(now) + m.shootdown;
                                s.system_cycles += m.shootdown;
                                s.recolour_cycles += m.shootdown;
                            } else {
                                s.system_cycles += hold_until(&mut m.blocked_until[u], now, now + m.shootdown);
                            }
                        }
                    }
                    self.copy_page(now, old, new, tid, m.page_bytes);
                }
            }
        }
        self.migration = Some(m);
    }

    /// A page's copy from `old` to `new` (bytes), its requests counted for thread `tid`: every
    /// line read at the old frame and written at the new one, after the old lines leave the
    /// caches (their dirty data goes with the copy).
    fn copy_page(&mut self, now: Cycle, old: u64, new: u64, tid: u32, page_bytes: u64) {
        let line = !self.line_mask + 1;
        let mut off = 0;
        while off < page_bytes {
            self.invalidate(old + off);
            self.copies.as_mut().expect("set with the migration costs").waiting[tid as usize].push_back((old + off, new + off));
            off += line;
        }
        self.next_copies(now, tid);
    }

    /// Sends thread `tid`'s waiting copy lines while its stream has room: each a read at the
    /// old frame and a write at the new.
    fn next_copies(&mut self, now: Cycle, tid: u32) {
        let t = tid as usize;
        loop {
            let copies = self.copies.as_mut().expect("set with the migration costs");
            if copies.in_flight[t] >= copies.lines {
                return;
            }
            let Some((old, new)) = copies.waiting[t].pop_front() else { return };
            copies.in_flight[t] += 1;
            self.send_read(now, 0, old, Waiter { core: tid, token: COPY_TOKEN });
            self.send_copy_write(now, new, tid);
        }
    }

    /// Drops `line` from every cache (its page moved or went to swap).
    fn invalidate(&mut self, line: u64) {
        if let Some(llc) = self.llc.as_mut() {
            llc.cache.invalidate(line);
        }
        if let Some(l2) = self.l2.as_mut() {
            for c in &mut l2.caches {
                c.invalidate(line);
            }
        }
    }

    /// The OS's page work during a functional warm-up: nothing is charged, but lines of pages
    /// that left their frames leave the caches.
    fn drop_os_events(&mut self) {
        let mut events = Vec::new();
        self.os.take_events(&mut events);
        let page = self.migration.as_ref().map_or(4096, |m| m.page_bytes);
        let line = !self.line_mask + 1;
        for e in events {
            if let OsEvent::Migrated { old, .. }
            | OsEvent::Moved { old, .. }
            | OsEvent::Recoloured { old, .. }
            | OsEvent::SwapOut { old, .. }
            | OsEvent::RecolourFault { moved: Some((old, _)), .. } = e
            {
                (0..page / line).for_each(|i| self.invalidate(old + i * line));
            }
        }
    }

    /// Pages are being mapped before the measured run (a functional warm-up): see
    /// `OsModel::set_populating`.
    pub fn set_populating(&mut self, on: bool) {
        self.os.set_populating(on);
    }

    /// The measured run starts (after populating pages and warming the caches).
    pub fn start_measuring(&mut self) {
        self.os.start_measuring();
    }

    /// The machine has several nodes: route, delay and count requests by node. Call before
    /// `set_threads`.
    pub fn set_numa(&mut self, paths: NumaPaths) {
        assert!(paths.nodes() <= 64, "node masks are 64 bits (the topology checks the count)");
        self.outboxes = vec![VecDeque::new(); paths.nodes()];
        self.numa = Some(Box::new(paths));
    }

    /// Attaches a prefetcher of kind `cfg` to the LLC for every thread (a no-op for kind
    /// "none"). Call before `set_threads`; needs an LLC.
    pub fn set_prefetcher(&mut self, cfg: &PrefetcherConfig) -> Result<()> {
        if cfg.is_off() {
            return Ok(());
        }
        let Some(llc) = self.llc.as_mut() else {
            return Err(crate::error::Error::config("cache.prefetcher", "prefetchers fill the LLC: they need one (cache.llc is \"none\")"));
        };
        let threads = self.per_core.len();
        llc.cache.track_prefetches(threads as u32);
        let line_bytes = (!self.line_mask + 1) as u32;
        let mut p = Prefetching { cfg: *cfg, line_bytes, per_thread: Vec::new(), proposals: Vec::new(), warm: false };
        p.build(threads)?;
        self.prefetching = Some(p);
        for s in &mut self.per_core {
            s.prefetch = Some(PrefetchStats::default());
        }
        Ok(())
    }

    /// Threads with their processes and initial cores; requests carry the thread id as source.
    pub fn set_threads(&mut self, process: Vec<u32>, core: Vec<u32>) -> Result<()> {
        let prefetch = self.prefetching.as_ref().map(|_| PrefetchStats::default());
        let nodes = self.numa.as_ref().map(|_| NodeAccesses::default());
        self.per_core = vec![CoreMemoryStats { prefetch, nodes, ..Default::default() }; process.len()];
        if let Some(p) = self.prefetching.as_mut() {
            p.build(process.len())?;
        }
        self.blp = vec![BankParallelism::default(); process.len()];
        self.llc_line_sums = vec![0; process.len()];
        self.thread_process = process;
        self.thread_core = core;
        Ok(())
    }

    /// Ways of the shared last-level cache (0: none).
    pub fn llc_ways(&self) -> u32 {
        self.llc.as_ref().map_or(0, |l| l.cache.geometry().ways)
    }

    /// CAT: each thread fills only its process's LLC ways (`per_process[p]`, bit w: way w).
    /// Call after `set_threads`, with an LLC.
    pub fn set_llc_way_masks(&mut self, per_process: &[u64]) {
        let llc = self.llc.as_mut().expect("resctrl plans way masks only for a machine with an LLC");
        llc.cache.set_way_masks(self.thread_process.iter().map(|&p| per_process[p as usize]).collect());
    }

    /// UCP: from now on, choose each process's LLC ways every `epoch` DRAM cycles from utility
    /// monitors (`os/resctrl/cat.rs`). Call after `set_llc_way_masks`.
    pub fn repartition_llc_every(&mut self, epoch: Cycle) {
        let threads = self.thread_process.len() as u32;
        let llc = self.llc.as_mut().expect("resctrl plans UCP only for a machine with an LLC");
        llc.cache.monitor_utility(threads);
        self.ucp = Some((epoch.max(1), epoch.max(1)));
    }

    /// UCP: repartitions so far and each process's ways after the latest (empty before one).
    pub fn ucp_state(&self) -> (u64, &[u32]) {
        (self.ucp_repartitions, &self.ucp_ways)
    }

    /// UCP: repartition at once (after a warm-up), keeping the epoch's schedule.
    pub fn repartition_llc_now(&mut self) {
        if let Some((_, next)) = self.ucp {
            self.repartition_llc(next);
        }
    }

    #[cold]
    #[inline(never)]
    fn repartition_llc(&mut self, now: Cycle) {
        let Some((epoch, next)) = self.ucp else { return };
        let Some(llc) = self.llc.as_mut() else { return };
        let processes = self.thread_process.iter().copied().max().map_or(0, |p| p + 1) as usize;
        let ways = llc.cache.geometry().ways;
        let monitor = llc.cache.utility().expect("monitors on with UCP");
        let mut curves = vec![vec![0u64; ways as usize]; processes];
        for (t, &p) in self.thread_process.iter().enumerate() {
            for (c, h) in curves[p as usize].iter_mut().zip(monitor.hits(t as u32)) {
                *c += h;
            }
        }
        monitor.decay();
        let alloc = crate::os::resctrl::cat::lookahead(&curves, ways);
        let masks = crate::os::resctrl::cat::runs(&alloc);
        llc.cache.set_way_masks(self.thread_process.iter().map(|&p| masks[p as usize]).collect());
        self.ucp_ways = alloc;
        self.ucp_repartitions += 1;
        self.ucp = Some((epoch, next + ((now - next) / epoch + 1) * epoch));
    }

    /// MBA: thread `tid` may send one line's request per `interval[tid]` DRAM cycles (0: no
    /// cap). Call after `set_threads`.
    pub fn set_bandwidth_caps(&mut self, interval: Vec<f64>) {
        let n = interval.len();
        self.throttle = Some(Box::new(Throttle { interval, next: vec![0.0; n] }));
    }

    /// The LLC ways thread `tid` may fill (every way without CAT; 0 without an LLC).
    pub fn llc_way_mask(&self, tid: u32) -> u64 {
        self.llc.as_ref().map_or(0, |l| l.cache.way_mask(tid))
    }

    /// Functional warm-up: thread `tid`'s load of `vaddr` (and the dirty line `writeback`, if
    /// any) through the page tables and caches, without DRAM timing. Misses fill at once; dirty
    /// victims leave without a DRAM write. Leaves the caches and page tables as a run that had
    /// executed these records would, and counts nothing (see `MulticoreSim`'s warm-up).
    pub fn warm(&mut self, tid: u32, vaddr: u64, writeback: Option<u64>) -> Result<()> {
        let (pid, cpu) = self.owner(tid);
        let line = self.os.translate_thread(pid, tid, cpu, vaddr)? & self.line_mask;
        if self.os.has_events() {
            self.drop_os_events();
        }
        let l2_hit = match self.l2.as_mut() {
            Some(l2) => l2.caches[cpu as usize].access(line, false, 0) == Access::Hit,
            None => false,
        };
        if !l2_hit {
            if let Some(llc) = self.llc.as_mut() {
                let hit = llc.cache.access(line, false, tid) == Access::Hit;
                if !hit {
                    llc.cache.fill(line, false, tid);
                }
                if self.prefetching.as_ref().is_some_and(|p| p.warm) {
                    self.warm_prefetch(tid, line, hit);
                }
            }
            if let Some(l2) = self.l2.as_mut() {
                if let Some(victim) = l2.caches[cpu as usize].fill(line, false, tid) {
                    self.warm_write_llc(tid, victim);
                }
            }
        }
        if let Some(w) = writeback {
            self.warm_writeback(tid, w)?;
        }
        Ok(())
    }

    /// `warm`'s write-back of the dirty line at `vaddr` alone.
    pub fn warm_writeback(&mut self, tid: u32, vaddr: u64) -> Result<()> {
        let (pid, cpu) = self.owner(tid);
        let line = self.os.translate_thread(pid, tid, cpu, vaddr)? & self.line_mask;
        if self.os.has_events() {
            self.drop_os_events();
        }
        match self.l2.as_mut() {
            Some(l2) => {
                if let Some(victim) = l2.caches[cpu as usize].write(line, 0) {
                    self.warm_write_llc(tid, victim);
                }
            }
            None => self.warm_write_llc(tid, line),
        }
        Ok(())
    }

    fn warm_write_llc(&mut self, tid: u32, line: u64) {
        if let Some(llc) = self.llc.as_mut() {
            llc.cache.write(line, tid);
        }
    }

    /// Zero the caches' counters after a warm-up (their contents stay).
    pub fn reset_counters(&mut self) {
        if let Some(llc) = self.llc.as_mut() {
            llc.cache.reset_stats();
        }
        if let Some(l2) = self.l2.as_mut() {
            l2.caches.iter_mut().for_each(|c| c.reset_stats());
        }
    }

    /// Thread `tid` now runs on `core`.
    pub fn set_thread_core(&mut self, tid: u32, core: u32) {
        self.thread_core[tid as usize] = core;
    }

    /// Process and core of a thread.
    fn owner(&self, tid: u32) -> (u32, u32) {
        (self.thread_process[tid as usize], self.thread_core[tid as usize])
    }

    pub fn os(&self) -> &OsModel {
        &self.os
    }

    /// Thread `tid` has retired `retired` instructions (the driver, after each of its ticks).
    #[inline]
    pub fn note_retired(&mut self, tid: u32, retired: u64) {
        if let Some(r) = self.retired.get_mut(tid as usize) {
            *r = retired;
        }
    }

    /// Process `pid` exits: the OS frees its pages (`OsModel::exit_process`).
    pub fn exit_process(&mut self, pid: u32) -> Result<()> {
        self.os.exit_process(pid).map(|_| ())
    }

    /// The LLC's capacity in pages (0 without an LLC): HVR's NPC.
    pub fn llc_pages(&self) -> u64 {
        self.llc.as_ref().map_or(0, |l| l.cache.geometry().size_bytes / self.os.page_bytes())
    }

    pub fn llc(&self) -> Option<&SetAssocCache> {
        self.llc.as_ref().map(|l| &l.cache)
    }

    pub fn core_stats(&self, core: u32) -> &CoreMemoryStats {
        &self.per_core[core as usize]
    }

    /// A copy of `core`'s statistics as at core cycle `now_core`: its bank parallelism integrated
    /// up to then, and its kernel time without the part of a hold still to come.
    pub fn core_stats_at(&self, core: u32, now_core: Cycle) -> CoreMemoryStats {
        let now = self.clock.core_to_dram_ceil(now_core);
        let mut s = self.per_core[core as usize].clone();
        s.bank_parallelism = self.blp[core as usize].counters_at(now);
        if let (Some(k), Some(m)) = (s.page_migration.as_mut(), self.migration.as_deref()) {
            // A hold is charged when it starts, and a thread can reach its target inside one
            // (its older instructions retire while the load that faulted waits).
            let ahead = m.blocked_until[core as usize].saturating_sub(now_core).min(k.system_cycles);
            k.system_cycles -= ahead;
            // The part to come is the latest holds', whose kinds are not kept.
            k.recolour_cycles = k.recolour_cycles.min(k.system_cycles);
            k.walk_cycles = k.walk_cycles.min(k.system_cycles);
        }
        if let (Some(p), Some(llc)) = (s.prefetch.as_mut(), self.llc.as_ref()) {
            p.useless = llc.cache.unused_prefetch_evictions(core);
        }
        if let Some(llc) = self.llc.as_ref() {
            s.llc_lines = llc.cache.occupancy(core);
            s.llc_lines_mean = match self.llc_samples {
                0 => s.llc_lines as f64,
                n => self.llc_line_sums[core as usize] as f64 / n as f64,
            };
        }
        s
    }

    /// The memory system stepped to DRAM cycle `now`: take the LLC occupancy samples due by
    /// then (each sample boundary passed counts once, with the lines held now).
    #[inline]
    pub fn sample_llc_occupancy(&mut self, now: Cycle) {
        if now >= self.next_llc_sample {
            self.take_llc_samples(now);
            if self.ucp.is_some_and(|(_, next)| now >= next) {
                self.repartition_llc(now);
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn take_llc_samples(&mut self, now: Cycle) {
        let Some(llc) = self.llc.as_ref() else {
            self.next_llc_sample = NEVER;
            return;
        };
        let k = (now - self.next_llc_sample) / LLC_SAMPLE_CYCLES + 1;
        self.next_llc_sample += k * LLC_SAMPLE_CYCLES;
        self.llc_samples += k;
        for (t, sum) in self.llc_line_sums.iter_mut().enumerate() {
            *sum += k * llc.cache.occupancy(t as u32);
        }
    }

    /// The driver moved request `o` into a controller queue at DRAM cycle `now`.
    pub fn entered_memory(&mut self, o: &Outgoing, now: Cycle) {
        if !o.is_write {
            self.blp[o.origin.source as usize].enter(o.bank, now);
        }
    }

    /// The driver tells the DRAM cycle of the next memory-system event before ticking cores.
    pub fn set_next_memory_event(&mut self, dram_cycle: Cycle) {
        self.next_memory_event = dram_cycle;
    }

    /// How many outboxes there are (one per node).
    pub fn outbox_count(&self) -> usize {
        self.outboxes.len()
    }

    /// Node `n`'s first waiting request.
    #[inline]
    pub fn outbox_front(&self, n: usize) -> Option<Outgoing> {
        self.outboxes[n].front().copied()
    }

    /// Remove node `n`'s first waiting request (it entered the memory system).
    #[inline]
    pub fn outbox_pop(&mut self, n: usize) {
        self.outboxes[n].pop_front();
        self.outbox_len -= 1;
    }

    /// DRAM cycle at which the first request of an outbox not in `blocked` (bit n: node n's
    /// head was refused) may enter (`NEVER` if none).
    #[inline]
    pub fn outbox_ready(&self, blocked: u64) -> Cycle {
        if let [only] = self.outboxes.as_slice() {
            return if blocked & 1 != 0 { NEVER } else { only.front().map_or(NEVER, |o| o.at) };
        }
        let mut t = NEVER;
        for (n, q) in self.outboxes.iter().enumerate() {
            if blocked >> n & 1 == 0 {
                t = t.min(q.front().map_or(NEVER, |o| o.at));
            }
        }
        t
    }

    /// Queues a writeback of `addr`, a dirty line `source` wrote.
    fn send_write(&mut self, core_now: Cycle, extra: u64, addr: u64, source: u32) {
        if let Some(n) = self.migration.as_deref_mut().and_then(|m| m.writebacks.get_mut(source as usize)) {
            *n += 1;
        }
        self.send(core_now, extra, addr, true, source, 0);
    }

    /// Queues the write of a page copy's or swap-in's line on `source`'s behalf: the kernel's
    /// traffic, not the program's write-backs.
    fn send_copy_write(&mut self, core_now: Cycle, addr: u64, source: u32) {
        self.send(core_now, 0, addr, true, source, 0);
    }

    /// Queues a read of `line` for `waiter` (with an LLC, one of the line's MSHR waiters).
    fn send_read(&mut self, core_now: Cycle, extra: u64, line: u64, waiter: Waiter) {
        // The bank is known from the address: computed once, kept to the read's completion.
        let bank = match &self.numa {
            None => self.os.colour_bits().bank_id(line),
            Some(n) => n.bank_id(line),
        };
        let (id, at) = self.send(core_now, extra, line, false, waiter.core, bank);
        self.reads.insert(id, InflightRead { line, waiter, bank, sent: at as u32 });
    }

    /// Queues a request; returns its id and the DRAM cycle it is issued at.
    fn send(&mut self, core_now: Cycle, extra: u64, addr: u64, is_write: bool, source: u32, bank: u32) -> (u64, Cycle) {
        let id = self.next_id;
        self.next_id += 1;
        let at = self.clock.core_to_dram_ceil(core_now + extra.max(1));
        let origin = Origin { source, process: self.thread_process[source as usize] };
        let mut node = 0;
        if let Some(n) = &self.numa {
            node = n.node_of(addr) as usize;
            let local = node as u32 == n.node_of_core(self.thread_core[source as usize]);
            let a = self.per_core[source as usize].nodes.as_mut().expect("counted on multi-node machines");
            match (is_write, local) {
                (false, true) => a.local_reads += 1,
                (false, false) => a.remote_reads += 1,
                (true, true) => a.local_writes += 1,
                (true, false) => a.remote_writes += 1,
            }
        }
        let mut at = at;
        if let Some(t) = self.throttle.as_mut() {
            let leave = t.admit(source as usize, at);
            if leave > at {
                let c = &mut self.per_core[source as usize];
                c.throttled_requests += 1;
                c.throttle_delay_cycles += leave - at;
            }
            at = leave;
        }
        if !self.channel_bytes.is_empty() {
            let c = self.os.colour_bits().channel_id(addr) as usize;
            self.channel_bytes[c] += !self.line_mask + 1;
        }
        let o = Outgoing { at, id, addr, is_write, origin, bank };
        let q = &mut self.outboxes[node];
        if self.throttle.is_some() && q.back().is_some_and(|b| b.at > at) {
            // A throttled thread's later request does not hold back others' (FIFO by time).
            let pos = q.partition_point(|x| x.at <= at);
            q.insert(pos, o);
        } else {
            q.push_back(o);
        }
        self.outbox_len += 1;
        (id, at)
    }

    /// A DRAM request finished at DRAM cycle `c.done`: fill the LLC, and return the loads
    /// (core, token) whose data arrived, with the core cycle it arrived at.
    pub fn complete(&mut self, c: &Completion, woken: &mut Vec<(Waiter, Cycle)>) {
        if c.is_write {
            self.per_core[c.source as usize].record(c, RequestKind::WriteBack);
            return;
        }
        let Some(InflightRead { line, waiter, bank, sent }) = self.reads.remove(c.id) else {
            debug_assert!(false, "completion of unknown read {}", c.id);
            return;
        };
        if (waiter.token == MIGRATION_TOKEN || waiter.token == COPY_TOKEN) && self.migration.is_some() {
            self.per_core[c.source as usize].record(c, RequestKind::MigrationRead);
            self.blp[c.source as usize].leave(bank, c.done);
            if waiter.token == COPY_TOKEN {
                self.copies.as_mut().expect("set with the migration costs").in_flight[waiter.core as usize] -= 1;
                self.next_copies(self.clock.dram_to_core_ceil(c.done), waiter.core);
            }
            return;
        }
        let prefetch = self.prefetching.is_some() && waiter.token == PREFETCH_TOKEN;
        let kind = if prefetch { RequestKind::PrefetchRead } else { RequestKind::DemandRead };
        self.per_core[c.source as usize].record(c, kind);
        debug_assert!(self.numa.is_some() || bank == self.os.colour_bits().bank_id(line));
        self.blp[c.source as usize].leave(bank, c.done);
        let (done, node) = match self.numa.as_mut() {
            None => (c.done, 0),
            Some(n) => {
                let core_node = n.node_of_core(self.thread_core[c.source as usize]);
                let node = n.node_of(line);
                (n.deliver(core_node, node, c.done), node as usize)
            }
        };
        if self.migration.is_some() {
            self.note_migration_read(line, node, sent, done);
        }
        let at = self.clock.dram_to_core_ceil(done);
        match self.llc.as_mut() {
            Some(llc) => {
                // The line is the thread's that opened the miss (`waiter`, the prefetch's own).
                let victim = if self.prefetching.is_some() {
                    fill_maybe_prefetched(llc, line, waiter.core)
                } else {
                    llc.cache.fill(line, false, waiter.core)
                };
                let writer = llc.cache.victim_writer();
                let first = woken.len();
                if let Some(w) = llc.mshrs.complete(line) {
                    woken.extend(w.map(|w| (w, at)));
                }
                if let Some(v) = victim {
                    // Written back from the cycle the fill evicted it, on behalf of the thread
                    // that dirtied it.
                    self.send_write(at, 0, v, writer);
                }
                if self.l2.is_some() {
                    for w in &woken[first..] {
                        self.fill_l2(w.0.core, line, at);
                    }
                }
            }
            None => woken.push((waiter, at)),
        }
    }
}

/// A demand hit `line` in the LLC: the first use of a prefetched line makes its prefetch useful.
#[inline(never)]
fn note_prefetch_use(llc: &mut Llc, per_core: &mut [CoreMemoryStats], line: u64) {
    if let Some(owner) = llc.cache.take_prefetch_mark(line) {
        prefetch_stats(per_core, owner).useful += 1;
    }
}

/// A demand missed `line`: joining a prefetch still in flight makes that prefetch late.
#[inline(never)]
fn note_late_prefetch(llc: &mut Llc, per_core: &mut [CoreMemoryStats], line: u64) {
    if let Some(owner) = llc.mshrs.take_prefetch(line) {
        prefetch_stats(per_core, owner).late += 1;
    }
}

/// Fills `line` into the LLC for thread `owner`: marked as prefetched if a prefetch no demand
/// joined brought it.
#[inline(never)]
fn fill_maybe_prefetched(llc: &mut Llc, line: u64, owner: u32) -> Option<u64> {
    match llc.mshrs.take_prefetch(line) {
        Some(prefetcher) => llc.cache.fill_prefetch(line, prefetcher),
        None => llc.cache.fill(line, false, owner),
    }
}

/// The prefetch counters of `owner` (a thread), which exist whenever prefetching is on.
fn prefetch_stats(per_core: &mut [CoreMemoryStats], owner: u32) -> &mut PrefetchStats {
    per_core[owner as usize].prefetch.as_mut().expect("prefetch statistics exist when prefetching is on")
}

impl MemoryHierarchy {
    /// Thread `tid`'s demand access to `line` reached the LLC at core cycle `now`: train its
    /// prefetcher and send what it proposes. Demands keep priority: a prefetch needs a free
    /// MSHR beyond a quarter of them kept for demands and room in the first half of the outbox,
    /// or it is dropped (never retried), so prefetching cannot starve or deadlock demands.
    #[inline(never)]
    fn prefetch(&mut self, tid: u32, line: u64, hit: bool, now: Cycle, latency: u64) {
        let Some(p) = self.prefetching.as_mut() else { return };
        let mut proposals = std::mem::take(&mut p.proposals);
        proposals.clear();
        p.per_thread[tid as usize].on_access(line, hit, &mut proposals);
        for &target in &proposals {
            debug_assert_eq!(target / prefetcher::PREFETCH_PAGE_BYTES, line / prefetcher::PREFETCH_PAGE_BYTES);
            let llc = self.llc.as_mut().expect("prefetching needs an LLC");
            let stats = prefetch_stats(&mut self.per_core, tid);
            if llc.cache.contains(target) || llc.mshrs.contains(target) {
                stats.redundant += 1;
                continue;
            }
            // Threads refused an entry come first too.
            let reserve = (llc.mshrs.capacity() / 4).max(llc.arbiter.waiting());
            if llc.mshrs.free_entries() <= reserve || self.outbox_len >= self.outbox_limit / 2 {
                stats.dropped += 1;
                continue;
            }
            let inserted = llc.mshrs.insert_prefetch(target, tid);
            debug_assert!(inserted, "not outstanding and an entry free, checked above");
            stats.issued += 1;
            self.send_read(now, latency, target, Waiter { core: tid, token: PREFETCH_TOKEN });
        }
        if let Some(p) = self.prefetching.as_mut() {
            p.proposals = proposals;
        }
    }

    /// Functional warming's prefetch: thread `tid`'s demand access to `line` trains its
    /// prefetcher, and the lines it proposes are installed at once, marked as prefetched (no
    /// timing, so none is dropped or late; dirty victims go nowhere, as in all warming).
    #[inline(never)]
    fn warm_prefetch(&mut self, tid: u32, line: u64, hit: bool) {
        let (Some(p), Some(llc)) = (self.prefetching.as_mut(), self.llc.as_mut()) else { return };
        let mut proposals = std::mem::take(&mut p.proposals);
        proposals.clear();
        p.per_thread[tid as usize].on_access(line, hit, &mut proposals);
        for &target in &proposals {
            if !llc.cache.contains(target) {
                llc.cache.fill_prefetch(target, tid);
            }
        }
        p.proposals = proposals;
    }

    /// Whether functional warming (`warm`) trains the prefetchers and installs their lines (a
    /// sampled run's gaps stand for detailed execution, where the prefetchers run).
    pub fn set_warm_prefetching(&mut self, on: bool) {
        if let Some(p) = self.prefetching.as_mut() {
            p.warm = on;
        }
    }

    /// Put `line` in `core`'s L2; a dirty victim goes into the LLC (whose own victim, if dirty,
    /// goes to memory).
    fn fill_l2(&mut self, tid: u32, line: u64, now: Cycle) {
        let Some(l2) = self.l2.as_mut() else { return };
        let core = self.thread_core[tid as usize];
        if let Some(victim) = l2.caches[core as usize].fill(line, false, tid) {
            self.write_llc(tid, victim, now);
        }
    }

    /// A dirty line written into the LLC (or to memory without one).
    fn write_llc(&mut self, core: u32, line: u64, now: Cycle) {
        match self.llc.as_mut() {
            Some(llc) => {
                let latency = llc.latency;
                if let Some(victim) = llc.cache.write(line, core) {
                    let writer = llc.cache.victim_writer();
                    self.send_write(now, latency, victim, writer);
                }
            }
            None => {
                self.send_write(now, 1, line, core);
            }
        }
    }
}

impl MemoryHierarchy {
    /// Requests waiting to enter the memory controllers, and the count above which loads are refused.
    pub fn waiting_requests(&self) -> (usize, usize) {
        (self.outbox_len, self.outbox_limit)
    }

    /// The core cycle the OS's work for thread `tid` (faults, page copies, shootdowns) ends, when
    /// that is after `now`: its loads are refused until then.
    pub fn kernel_work_until(&self, tid: u32, now: Cycle) -> Option<Cycle> {
        let until = self.migration.as_deref()?.blocked_until[tid as usize];
        (until > now).then_some(until)
    }
}

impl CoreMemory for MemoryHierarchy {
    fn load(&mut self, tid: u32, vaddr: u64, token: u64, now: Cycle) -> Result<LoadOutcome> {
        if self.outbox_len >= self.outbox_limit {
            return Ok(LoadOutcome::Refused);
        }
        let (pid, cpu) = self.owner(tid);
        if let Some(m) = self.migration.as_deref_mut() {
            if m.blocked_until[tid as usize] > now {
                return Ok(LoadOutcome::Refused);
            }
            self.os.set_now_ns(now as f64 / m.core_ghz);
            if now >= m.next_work {
                self.os_work(now)?;
                if self.migration.as_ref().is_some_and(|m| m.blocked_until[tid as usize] > now) {
                    return Ok(LoadOutcome::Refused);
                }
            }
        } else if self.sample_clock_ghz > 0.0 {
            self.os.set_now_ns(now as f64 / self.sample_clock_ghz);
        }
        let line = self.os.translate_thread(pid, tid, cpu, vaddr)? & self.line_mask;
        if self.migration.is_some() && self.os.has_events() {
            // The thread is in the kernel now; the load runs again when it is back.
            self.charge_os_events(now);
            return Ok(LoadOutcome::Refused);
        }
        // `core` below is the thread: the source of requests and statistics.
        let core = tid;
        let waiter = Waiter { core, token };
        let mut l2_latency = 0;
        if let Some(l2) = self.l2.as_mut() {
            if l2.caches[cpu as usize].access(line, false, 0) == Access::Hit {
                self.per_core[core as usize].l2_hits += 1;
                return Ok(LoadOutcome::Done { latency: l2.latency });
            }
            l2_latency = l2.latency;
        }
        let stats = &mut self.per_core[core as usize];
        stats.llc_accesses += 1;
        let Some(llc) = self.llc.as_mut() else {
            stats.llc_misses += 1;
            self.send_read(now, 1, line, waiter);
            return Ok(LoadOutcome::Pending);
        };
        if (llc.mshrs.is_full() || llc.arbiter.waiting() > 0)
            && !llc.mshrs.contains(line)
            && !llc.arbiter.may_allocate(tid, llc.mshrs.free_entries(), now)
        {
            stats.llc_accesses -= 1;
            return Ok(LoadOutcome::Refused);
        }
        let latency = l2_latency + llc.latency;
        let (outcome, hit) = match llc.cache.access(line, false, core) {
            Access::Hit => {
                if self.prefetching.is_some() {
                    note_prefetch_use(llc, &mut self.per_core, line);
                }
                self.fill_l2(core, line, now);
                (LoadOutcome::Done { latency }, true)
            }
            Access::Miss => {
                stats.llc_misses += 1;
                if self.prefetching.is_some() {
                    note_late_prefetch(llc, &mut self.per_core, line);
                }
                match llc.mshrs.insert(line, waiter) {
                    MshrInsert::Allocated => {
                        self.send_read(now, latency, line, waiter);
                        (LoadOutcome::Pending, false)
                    }
                    MshrInsert::Merged => (LoadOutcome::Pending, false),
                    MshrInsert::Full => return Ok(LoadOutcome::Refused),
                }
            }
        };
        if self.prefetching.is_some() {
            self.prefetch(core, line, hit, now, latency);
        }
        Ok(outcome)
    }

    /// Refusals come from full MSHRs or a full outbox, which only a memory-system event frees.
    fn retry_at(&self, core: u32, now: Cycle) -> Cycle {
        if let Some(m) = self.migration.as_deref() {
            let until = m.blocked_until[core as usize];
            if until > now {
                return until;
            }
        }
        self.clock.dram_to_core_ceil(self.next_memory_event).max(now + 1)
    }

    fn writeback(&mut self, tid: u32, vaddr: u64, now: Cycle) -> Result<bool> {
        if self.outbox_len >= self.outbox_limit {
            return Ok(false);
        }
        let (pid, cpu) = self.owner(tid);
        let line = self.os.translate_quiet(pid, tid, cpu, vaddr)? & self.line_mask;
        let core = tid;
        match self.l2.as_mut() {
            Some(l2) => {
                if let Some(victim) = l2.caches[cpu as usize].write(line, 0) {
                    self.write_llc(core, victim, now);
                }
            }
            None => self.write_llc(core, line, now),
        }
        Ok(true)
    }
}
