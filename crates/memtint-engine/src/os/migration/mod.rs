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
//! Each policy is one file declaring a `MigrationInfo` and one line in `MIGRATIONS`.

mod bw_migration;
mod numa_balancing;

use super::config::OsConfig;
use super::nodes::NodeLayout;
use crate::error::{Error, Result};
use crate::params::{ParamSchema, ParamTables};
use crate::registry::{Component, Registry};
use serde::{Deserialize, Serialize};

/// A hinting fault: thread `tid` of process `pid`, on a core of `thread_node`, loaded a marked
/// page held in `frame` (global) on `page_node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintFault {
    pub pid: u32,
    pub tid: u32,
    pub frame: u32,
    pub page_node: u32,
    pub thread_node: u32,
    /// The scanner has passed over the process's pages at most `EARLY_PASSES` times (Linux's
    /// `numa_scan_seq <= 4`: early in a task's life first and private faults migrate at once).
    pub early: bool,
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

pub trait MigrationPolicy: Send {
    fn on_hint_fault(&mut self, f: &HintFault) -> Proposal;
}

/// What the policies are built from.
pub struct MigrationView<'a> {
    pub nodes: &'a NodeLayout,
    pub params: &'a ParamTables,
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
pub static MIGRATIONS: Registry<MigrationInfo> = Registry::new("migration policy", &[&NONE, &numa_balancing::INFO, &bw_migration::INFO]);

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
}

impl Default for NumaScanConfig {
    fn default() -> Self {
        NumaScanConfig { period_ns: 1_000_000.0, scan_mb: 0.25, fault_ns: 1_000.0, migrate_ns: 3_000.0, shootdown_ns: 2_000.0 }
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
    let policy = (info.build)(&MigrationView { nodes, params: &cfg.params })?;
    Ok(Some(Box::new(Migrating::new(policy, info.name, &cfg.numa_scan, cfg.page_bytes, processes, nodes.count()))))
}

/// What a load's translation did besides translating, for the memory hierarchy to charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsEvent {
    /// Thread `tid` took a hinting fault.
    HintFault { tid: u32 },
    /// ... and its page moved from physical page address `old` to `new` (bytes).
    Migrated { tid: u32, pid: u32, old: u64, new: u64 },
}

/// The run's migration counters (`migration` in the statistics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MigrationStats {
    pub policy: String,
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
}

/// A run's migration state inside the OS model.
pub struct Migrating {
    pub policy: Box<dyn MigrationPolicy>,
    /// Pages each scan marks per process, and where each process's scan goes on.
    pub scan_pages: usize,
    pub cursors: Vec<usize>,
    /// Per process: full passes the scanner has made over its pages.
    pub passes: Vec<u32>,
    pub events: Vec<OsEvent>,
    pub stats: MigrationStats,
}

impl Migrating {
    pub fn new(policy: Box<dyn MigrationPolicy>, name: &str, scan: &NumaScanConfig, page_bytes: u64, processes: u32, nodes: u32) -> Self {
        Migrating {
            policy,
            scan_pages: ((scan.scan_mb * (1u64 << 20) as f64 / page_bytes as f64).round() as usize).max(1),
            cursors: vec![0; processes as usize],
            passes: vec![0; processes as usize],
            events: Vec::new(),
            stats: MigrationStats { policy: name.to_string(), moves: vec![vec![0; nodes as usize]; nodes as usize], ..Default::default() },
        }
    }
}
