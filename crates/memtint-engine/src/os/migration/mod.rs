//! Page migration between memory nodes (docs/numa.md, "Migration"): which pages a periodic scan
//! marks, what a hinting fault on a marked page proposes, and which proposals are admitted.
//!
//! The mechanism is Linux's automatic NUMA balancing (`task_numa_work`, `do_numa_page`): every
//! `os.numa_scan.period_ns` a window of `scan_mb` of each process's mapped pages is marked; the
//! next load of a marked page takes a hinting fault (`fault_ns` of system time on the faulting
//! thread), and the migration policy says where the page should live. A migration copies the
//! page through both nodes' memory systems (a read of every line at the source, a write at the
//! destination), costs the faulting thread `migrate_ns` more and the process's other threads a
//! TLB shootdown of `shootdown_ns`, and drops the page's old lines from the caches. The OS model
//! here decides; the memory hierarchy charges the costs (`OsEvent`).
//!
//! Tiering policies add a daemon: every period `on_period` sees each node's free frames and
//! loaded read latency and the tracked pages (`PageTracker`: owners, access bits, sampled heat),
//! and returns pages to move (kswapd's demotions, Colloid's balancing moves). Such moves cost
//! the owner's threads a TLB shootdown and both nodes the copy; the daemon's own CPU time is
//! not charged (it runs on a core the workload does not use).
//!
//! Each policy is one file declaring a `MigrationInfo` and one line in `MIGRATIONS`.

mod bw_migration;
mod colloid;
mod damon;
mod memory_tiering;
mod numa_balancing;
pub mod page_tracker;

use super::config::OsConfig;
use super::nodes::NodeLayout;
use super::page_table::PageTable;
use crate::error::{Error, Result};
use crate::params::{ParamSchema, ParamTables};
use crate::registry::{Component, Registry};
pub use page_tracker::PageTracker;
use serde::{Deserialize, Serialize};

/// A hinting fault: thread `tid` of process `pid`, on a core of `thread_node`, loaded a marked
/// page held in `frame` (global) on `page_node`.
#[derive(Clone, Debug, PartialEq)]
pub struct HintFault {
    pub pid: u32,
    pub tid: u32,
    pub frame: u32,
    pub page_node: u32,
    pub thread_node: u32,
    /// The scanner has passed over the process's pages at most `EARLY_PASSES` times (Linux's
    /// `numa_scan_seq <= 4`: early in a task's life first and private faults migrate at once).
    pub early: bool,
    /// The scanner's passes over the process's pages so far (Linux's `numa_scan_seq`).
    pub pass: u32,
    /// Time since the scanner marked the page, ns (tracked pages only: Linux's tiering mode
    /// keeps the scan time in the folio).
    pub latency_ns: Option<f64>,
    /// When the fault happened, ns from the start of the run.
    pub now_ns: f64,
    /// Free and total frames per node at the fault (empty where the caller has no nodes).
    pub free: Vec<u64>,
    pub capacity: Vec<u64>,
}

/// Scan passes over a process's pages during which Linux lets first and private faults
/// migrate at once (`should_numa_migrate_memory`: "two full passes of the multi-stage node
/// selection", its magic number 4).
pub const EARLY_PASSES: u32 = 4;

/// What a policy answers to a hinting fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proposal {
    /// Leave the page where it is.
    Stay,
    /// Move it to this node.
    MoveTo(u32),
    /// The policy wanted to move it to this node and its gate refused (counted).
    Refused(u32),
}

/// Which pages the periodic scan marks for hinting faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanScope {
    /// Every mapped page (automatic NUMA balancing).
    All,
    /// Pages outside the top tier only (Linux's tiering mode skips top-tier nodes).
    SlowTiers,
    /// None: the policy samples accesses its own way.
    Nothing,
}

/// The load one memory node served over the last period, as the cores saw it: reads, and their
/// mean latency from leaving the core's LLC to the data's return (queues, DRAM, links).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeLoad {
    pub reads: u64,
    pub latency_ns: f64,
    /// Its unloaded latency: a row miss's (tRCD + CL + burst) plus the link's added latency.
    pub idle_ns: f64,
}

/// A page the policy's daemon moves: the frame it is in, and the node it goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageMove {
    pub frame: u32,
    pub to: u32,
}

/// What a policy's daemon sees every period.
pub struct PeriodView<'a> {
    /// Free frames per node, within `os.node_memory_mb` (0 for a node without memory).
    pub free: Vec<u64>,
    /// Frames per node the OS may use.
    pub capacity: Vec<u64>,
    pub loads: &'a [NodeLoad],
    pub pages: &'a mut PageTracker,
    pub tables: &'a mut [PageTable],
}

pub trait MigrationPolicy: Send {
    /// A load took a hinting fault on a page the scan marked (policies that scan).
    fn on_hint_fault(&mut self, _f: &HintFault) -> Proposal {
        Proposal::Stay
    }
    /// The pages the scan marks.
    fn scan_scope(&self) -> ScanScope {
        ScanScope::All
    }
    /// Needs the page tracker (and then `on_period` runs every period).
    fn tracks_pages(&self) -> bool {
        false
    }
    /// A move leaves its destination at least this share of its capacity free, % (Linux's
    /// watermark check before a promotion); a move that would not is dropped as
    /// `destination_full`.
    fn keep_free_pct(&self) -> f64 {
        0.0
    }
    /// Samples one in this many LLC-miss reads into the tracker's heat (0: none).
    fn miss_sample_period(&self) -> u32 {
        0
    }
    /// The daemon's period, ns, when it is not `os.numa_scan.period_ns` (DAMON samples faster).
    fn period_ns(&self) -> Option<f64> {
        None
    }
    /// How often it can first move a page, ns, and the keys that set it, when not every period
    /// of `os.numa_scan.period_ns` (DAMON acts every `aggr_samples` samples).
    fn acting_interval(&self) -> Option<(f64, &'static str)> {
        None
    }
    /// The daemon's moves this period (tracked policies only).
    fn on_period(&mut self, _v: &mut PeriodView) -> Vec<PageMove> {
        Vec::new()
    }
}

/// What the policies are built from.
pub struct MigrationView<'a> {
    pub nodes: &'a NodeLayout,
    pub params: &'a ParamTables,
    /// The run's seed (`os.seed`), for policies that sample at random.
    pub seed: u64,
}

pub type Builder = fn(&MigrationView) -> Result<Box<dyn MigrationPolicy>>;

pub struct MigrationInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The placement policies whose pages it moves (Linux scans only VMAs whose policy carries
    /// `MPOL_F_MOF`: the default, local, policy). Under any other it scans nothing.
    pub moves_pages_of: &'static [&'static str],
    pub params: ParamSchema,
    pub build: Builder,
}

impl Component for MigrationInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// No migration: pages stay where placement put them.
pub static NONE: MigrationInfo = MigrationInfo {
    name: "none",
    summary: "pages stay where placement put them",
    moves_pages_of: &[],
    params: ParamSchema::NONE,
    build: |_| unreachable!(),
};

/// The migration policies, one line each (`MIGRATIONS.register` adds more).
pub static MIGRATIONS: Registry<MigrationInfo> = Registry::new(
    "migration policy",
    &[&NONE, &numa_balancing::INFO, &bw_migration::INFO, &memory_tiering::INFO, &colloid::INFO, &damon::INFO],
);

pub fn info(name: &str) -> Result<&'static MigrationInfo> {
    MIGRATIONS.get(name).map_err(|e| match e {
        Error::UnknownName { name, valid, .. } => {
            Error::config("os.migration", format!("unknown migration policy '{name}'; choose one of {}", valid.join(", ")))
        }
        e => e,
    })
}

/// `[os.numa_scan]`: the scanner and the costs, Linux's `kernel.numa_balancing_*` sysctls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NumaScanConfig {
    /// Period between scans, ns (default 1 ms). Linux scans `numa_balancing_scan_size_mb` (256)
    /// every `numa_balancing_scan_period_min_ms` (1000) at most; simulated runs last
    /// milliseconds, so the default scans in 1 ms steps at Linux's rate (256 MiB/s), which keeps
    /// the fault overhead per second, and how fast pages can move, what Linux's are.
    pub period_ns: f64,
    /// MiB of each process's mapped pages marked per scan (default 0.25: Linux's rate).
    pub scan_mb: f64,
    /// System time of one hinting fault on the faulting thread, ns (a minor fault: ~1 µs).
    pub fault_ns: f64,
    /// Further system time of migrating one 4 KB page, ns: isolating, unmapping, copying and
    /// remapping it (migrate_pages measures a few µs per base page).
    pub migrate_ns: f64,
    /// Stall of the process's other threads for the TLB shootdown, ns (IPIs: a few µs).
    pub shootdown_ns: f64,
    /// Lines one thread's page copies keep in flight (default 10: the kernel copies on a core,
    /// whose memcpy is bound by its line fill buffers, 10 on Nehalem and Skylake). Copies wait
    /// their turn rather than entering the memory system all at once.
    pub copy_lines: u32,
}

impl Default for NumaScanConfig {
    fn default() -> Self {
        NumaScanConfig {
            period_ns: 1_000_000.0,
            scan_mb: 0.25,
            fault_ns: 1_000.0,
            migrate_ns: 3_000.0,
            shootdown_ns: 2_000.0,
            copy_lines: 10,
        }
    }
}

impl NumaScanConfig {
    pub fn validate(&self) -> Result<()> {
        let ns = |key: &str, v: f64, min: f64| {
            if v.is_finite() && v >= min && v <= 1e12 {
                Ok(())
            } else {
                Err(Error::config(format!("os.numa_scan.{key}"), format!("must be between {min} and 10^12 ns, got {v}")))
            }
        };
        ns("period_ns", self.period_ns, 1_000.0)?;
        ns("fault_ns", self.fault_ns, 0.0)?;
        ns("migrate_ns", self.migrate_ns, 0.0)?;
        ns("shootdown_ns", self.shootdown_ns, 0.0)?;
        if !(1..=1024).contains(&self.copy_lines) {
            return Err(Error::config("os.numa_scan.copy_lines", format!("must be between 1 and 1024, got {}", self.copy_lines)));
        }
        if !(self.scan_mb > 0.0 && self.scan_mb <= (1u64 << 20) as f64) {
            return Err(Error::config("os.numa_scan.scan_mb", format!("must be above 0 and at most 1048576 MiB, got {}", self.scan_mb)));
        }
        Ok(())
    }
}

/// The migration policy a configuration asks for, or `None` for "none"; with the placement
/// policy in use, whether it moves anything at all (`Ok(None)` and a warning if not).
pub fn build(cfg: &OsConfig, nodes: &NodeLayout, processes: u32, warnings: &mut Vec<String>) -> Result<Option<Box<Migrating>>> {
    let info = info(&cfg.migration)?;
    cfg.numa_scan.validate()?;
    if info.name == NONE.name {
        return Ok(None);
    }
    if nodes.memory_nodes().len() < 2 {
        warnings.push(format!("os.migration = \"{}\": this machine has one memory node; there is nothing to migrate", info.name));
        return Ok(None);
    }
    if !info.moves_pages_of.contains(&cfg.policy.as_str()) {
        warnings.push(format!(
            "os.migration = \"{}\" moves only pages placed by {} (as Linux scans only MPOL_F_MOF memory); policy '{}' migrates nothing",
            info.name,
            info.moves_pages_of.join(", "),
            cfg.policy
        ));
        return Ok(None);
    }
    let policy = (info.build)(&MigrationView { nodes, params: &cfg.params, seed: cfg.seed() })?;
    unread_scan_keys(&cfg.numa_scan, info.name, policy.as_ref(), warnings);
    Ok(Some(Box::new(Migrating::new(policy, info.name, &cfg.numa_scan, cfg.page_bytes, processes, nodes))))
}

/// `[os.numa_scan]` keys the migration policy in force does not read, said rather than dropped
/// unseen: the period under a policy with its own (DAMON), the scan's size and its faults' cost
/// under one that samples accesses its own way (DAMON, Colloid). Moves' costs are every policy's.
fn unread_scan_keys(scan: &NumaScanConfig, name: &str, policy: &dyn MigrationPolicy, warnings: &mut Vec<String>) {
    let default = NumaScanConfig::default();
    let mut unread = Vec::new();
    if policy.period_ns().is_some() && scan.period_ns != default.period_ns {
        unread.push(("period_ns", format!("it runs on its own period ([os.{name}])")));
    }
    if policy.scan_scope() == ScanScope::Nothing {
        let why = || "it marks no pages for hinting faults (it samples accesses its own way)".to_string();
        if scan.scan_mb != default.scan_mb {
            unread.push(("scan_mb", why()));
        }
        if scan.fault_ns != default.fault_ns {
            unread.push(("fault_ns", why()));
        }
    }
    for (key, why) in unread {
        warnings.push(format!("os.numa_scan.{key} is set but os.migration = \"{name}\" does not read it: {why}"));
    }
}

/// What a load's translation did besides translating, for the memory hierarchy to charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsEvent {
    /// Thread `tid` took a hinting fault.
    HintFault { tid: u32 },
    /// ... and its page moved from physical page address `old` to `new` (bytes).
    Migrated { tid: u32, pid: u32, old: u64, new: u64 },
    /// The policy's daemon moved a page of process `pid` (no thread faulted).
    Moved { pid: u32, old: u64, new: u64 },
    /// A dynamic policy re-coloured a page of process `pid` (`os/dynamic`).
    Recoloured { pid: u32, old: u64, new: u64 },
    /// Thread `tid` of process `pid` touched a page marked for lazy re-colouring
    /// (`[os.recolour] mode = "lazy"`): a fault, and the page's copy from `old` to `new` when it
    /// was still outside its process's colours and they had a free frame.
    RecolourFault { tid: u32, pid: u32, moved: Option<(u64, u64)> },
    /// A page of process `pid` went to swap to make room for thread `tid`'s fault (`os/swap.rs`).
    SwapOut { tid: u32, pid: u32, old: u64 },
    /// Thread `tid`'s fault brought a page of its process back from swap into `new`.
    SwapIn { tid: u32, new: u64 },
    /// HVR's sampler walked process `pid`'s page table for `ns` (`[os.hot_pages] charge_walks`).
    Walks { pid: u32, ns: u64 },
}

/// The run's migration counters (`migration` in the statistics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MigrationStats {
    pub policy: String,
    /// How often it could act, ns, and the key(s) that set it: `os.numa_scan.period_ns`, or the
    /// policy's own (DAMON: every `aggr_samples` samples of `sample_ns`).
    pub period_ns: f64,
    pub period_key: String,
    /// Scans made, and pages marked by them.
    pub scans: u64,
    pub pages_marked: u64,
    pub hint_faults: u64,
    /// Pages moved, and per (from, to) node (`moves[from][to]`).
    pub pages_moved: u64,
    pub moves: Vec<Vec<u64>>,
    /// Moves the policy's gate refused (`bw-migration`).
    pub refused: u64,
    /// Moves dropped because the destination node had no free frame.
    pub destination_full: u64,
    /// Pages the policy's daemon moved (kswapd's demotions, Colloid), included in `pages_moved`.
    pub daemon_moves: u64,
}

/// A run's migration state inside the OS model.
pub struct Migrating {
    pub policy: Box<dyn MigrationPolicy>,
    /// Pages each scan marks per process, and where each process's scan goes on.
    pub scan_pages: usize,
    pub cursors: Vec<usize>,
    /// Per process: full passes the scanner has made over its pages.
    pub passes: Vec<u32>,
    pub stats: MigrationStats,
    /// The tracked pages (policies that `tracks_pages`).
    pub tracker: Option<PageTracker>,
    pub scope: ScanScope,
    /// The top-tier nodes (the fastest memory cluster): the scan skips them under `SlowTiers`.
    pub top_tier: Vec<bool>,
}

impl Migrating {
    pub fn new(
        policy: Box<dyn MigrationPolicy>,
        name: &str,
        scan: &NumaScanConfig,
        page_bytes: u64,
        processes: u32,
        layout: &NodeLayout,
    ) -> Self {
        let nodes = layout.count();
        let tracker = policy.tracks_pages().then(|| PageTracker::new(layout));
        let scope = policy.scan_scope();
        let acting = policy.acting_interval().unwrap_or((scan.period_ns, "os.numa_scan.period_ns"));
        let top_tier = top_tier(layout);
        Migrating {
            tracker,
            scope,
            top_tier,
            policy,
            scan_pages: ((scan.scan_mb * (1u64 << 20) as f64 / page_bytes as f64).round() as usize).max(1),
            cursors: vec![0; processes as usize],
            passes: vec![0; processes as usize],
            stats: MigrationStats {
                policy: name.to_string(),
                period_ns: acting.0,
                period_key: acting.1.to_string(),
                moves: vec![vec![0; nodes as usize]; nodes as usize],
                ..Default::default()
            },
        }
    }
}

/// Per node: whether it is in the top tier, the memory nodes of the highest bandwidth (within
/// 1 %; Linux ranks tiers by HMAT's abstract distance, which bandwidth dominates here).
pub fn top_tier(layout: &NodeLayout) -> Vec<bool> {
    let best = layout.memory_nodes().iter().map(|&n| layout.nodes[n as usize].bandwidth_gbps).fold(0.0, f64::max);
    (0..layout.count()).map(|n| layout.has_memory(n) && layout.nodes[n as usize].bandwidth_gbps >= 0.99 * best).collect()
}

/// The memory node nearest `from` among those `want` accepts (latency, then id).
pub fn nearest(layout: &NodeLayout, from: u32, want: impl Fn(u32) -> bool) -> Option<u32> {
    layout.by_distance(from).into_iter().find(|&n| want(n))
}
