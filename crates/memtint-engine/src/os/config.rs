//! The `[os]` configuration: the placement policy by name, colouring and allocation settings,
//! thread scheduling (`[os.sched]`), profiles, and the policies' own parameter tables.

use crate::error::{Error, Result};
pub use crate::params::ParamTables;
use crate::params::{Params, Renamed};
use serde::{Deserialize, Serialize};

/// The `[os]` configuration.
// Unknown keys are refused by `placement::warnings` (serde cannot refuse them beside a flattened map).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsConfig {
    /// A placement policy, one of `placement::POLICIES` (default "buddy", the uncoloured baseline).
    pub policy: String,
    /// Page size in bytes; only 4096 for now.
    pub page_bytes: u64,
    /// When a process's colours are full: false borrows from the least-used other colours
    /// (counted as `colour_overflow_pages`), true is an error.
    pub strict: bool,
    /// Seed of the baseline's frame order and of random interleaving (`seed()`); unset: the
    /// run's seed (`sim_spec::run_sim`), else 1.
    pub seed: Option<u64>,
    /// How virtual addresses become physical: "paged" (default: page tables filled on first
    /// touch by the placement policy) or "identity" (physical = the trace's address modulo the
    /// memory's capacity, no OS model, as Ramulator's `NoTranslation`: for comparisons with
    /// simulators that have none; needs policy "buddy", which then places nothing).
    pub translation: String,
    /// The order a colour-restricted policy takes frames in: "aged" (default; the baseline's
    /// aged-system order, `frame_order.rs`, restricted to the process's colours, so a policy
    /// differs from `buddy` only in its colours) or "ascending" (lowest free frame of each
    /// colour, round-robin over the colours).
    pub frame_order: String,
    /// Explicit colour sets (colours of the policy's space); one per process unless `groups`
    /// maps processes to them. Default: the colours split evenly, as `colour_split` says.
    pub colours: Option<Vec<Vec<u32>>>,
    /// The even split's shape (`placement::ColourSplit`): "contiguous" (default: consecutive
    /// colours, so BPM on the i7-860 gives each program one rank's banks and partitions banks
    /// only, as the paper's contiguous bank ranges) or "strided" (every n-th colour: fixes the
    /// low colour bits, which also index LLC sets on the i7-860, so it partitions the LLC too).
    pub colour_split: String,
    /// Coalescing: process -> colour-set index; processes with the same index share one set.
    pub groups: Option<Vec<u32>>,
    /// Address bits kept out of the B/C/O classes and LLC colours (HVR leaves out b13).
    pub exclude_bits: Vec<u32>,
    /// Map each program's known footprint (synthetic profiles) before the measured run, page by
    /// page in ascending virtual order, one program after the other (default true). A measured
    /// window of a real program (a SimPoint, or any window after initialisation) finds its data
    /// already mapped in the order it was initialised; without this, a short run is dominated by
    /// first touches, whose allocation order correlates with the access order (consecutive random
    /// jumps land in consecutive frames under the baseline).
    pub populate: bool,
    /// Thread scheduling (`[os.sched]`, os/cfs.rs).
    pub sched: super::cfs::SchedConfig,
    /// Per-process profile (MPKI, row-buffer hit rate) for policies that need one (`mcp`,
    /// `imps`), one per process; `memtint compare` fills it from the alone runs.
    pub profiles: Option<Vec<AppProfile>>,
    /// Page migration between nodes, one of `migration::MIGRATIONS` (default "none";
    /// "numa-balancing", "bw-migration", "memory-tiering", "colloid", "damon"), over the scanner and costs of `[os.numa_scan]`.
    pub migration: String,
    pub numa_scan: super::migration::NumaScanConfig,
    /// MiB of each node's memory the OS may allocate, in node order (0 or absent: all of it),
    /// as booting with part of a node reserved; how tiering experiments make the fast tier
    /// smaller than the footprint. Node placement policies only.
    pub node_memory_mb: Vec<f64>,
    /// MiB of memory the OS may allocate on a one-node machine (0: all of it), the lowest
    /// physical addresses, as Linux's `mem=` boot parameter: how memory-pressure experiments
    /// (BPM Fig. 11's 4 GB machine) shrink the machine without changing its address mapping.
    pub memory_mb: f64,
    /// When a process's colours (every colour, under an uncoloured policy) have no free frame:
    /// "borrow" (default: a frame of another colour, counted as `colour_overflow_pages`; an
    /// error when no frame is free at all) or "swap" (one of its own pages goes to swap,
    /// `os/swap.rs`). `strict = true` makes a full colour set an error instead.
    pub overflow: String,
    /// The cost of swapping (`[os.swap]`).
    pub swap: super::swap::SwapConfig,
    /// A dynamic partitioning policy, one of `dynamic::DYNAMIC` (default "none"), which adapts
    /// the placement policy's colours every epoch (`[os.<name>] epoch_ns`).
    pub dynamic: String,
    /// How fast re-colouring copies pages (`[os.recolour]`, os/recolour.rs): all at the epoch
    /// by default, or a copy daemon's rate.
    pub recolour: super::recolour::RecolourConfig,
    /// HVR's accessed-bit sampling and classes (`[os.hot_pages]`, os/hot_pages.rs): off by
    /// default; on, each process's statistics carry its hot-page features and HVR class.
    pub hot_pages: super::hot_pages::HotPageConfig,
    /// Hardware partitioning through resctrl, beside the placement policy: names from
    /// `resctrl::RESCTRL` (`"cat"`), each with its table (`[os.cat]`). Default: none.
    pub resctrl: Vec<String>,
    /// The placement policies' own parameters, one table each by name (`[os.ccps]`,
    /// `[os.mcp]`, `[os.vertical]`), declared in the policy's file (`crate::params`).
    #[serde(flatten)]
    pub params: ParamTables,
}

impl Default for OsConfig {
    fn default() -> Self {
        OsConfig {
            policy: "buddy".to_string(),
            page_bytes: 4096,
            strict: false,
            seed: None,
            translation: "paged".into(),
            frame_order: FrameOrderKind::Aged.name().into(),
            colours: None,
            colour_split: "contiguous".into(),
            groups: None,
            exclude_bits: Vec::new(),
            populate: true,
            sched: Default::default(),
            profiles: None,
            migration: "none".into(),
            numa_scan: Default::default(),
            node_memory_mb: Vec::new(),
            memory_mb: 0.0,
            overflow: "borrow".into(),
            swap: Default::default(),
            dynamic: "none".into(),
            recolour: Default::default(),
            hot_pages: Default::default(),
            resctrl: Vec::new(),
            params: ParamTables::default(),
        }
    }
}

/// `OsConfig::frame_order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameOrderKind {
    Aged,
    Ascending,
}

impl FrameOrderKind {
    pub fn name(self) -> &'static str {
        match self {
            FrameOrderKind::Aged => "aged",
            FrameOrderKind::Ascending => "ascending",
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "aged" => Ok(FrameOrderKind::Aged),
            "ascending" => Ok(FrameOrderKind::Ascending),
            _ => Err(Error::config("os.frame_order", format!("unknown frame order '{name}'; choose aged or ascending"))),
        }
    }
}

impl OsConfig {
    /// The seed of the frame order and of random placement: `seed`, else 1.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }

    /// Policy `name`'s parameters (`[os.<name>]`), checked; `renamed` are its deprecated flat keys.
    pub fn params<P: Params>(&self, name: &str, renamed: Renamed) -> Result<P> {
        self.params.get("os", name, renamed)
    }

    /// This configuration with `[os.<policy>] <param> = value`.
    pub fn with_param(mut self, policy: &str, param: &str, value: impl Into<serde_json::Value>) -> Self {
        self.params.set(policy, param, value);
        self
    }
}

/// One application's profile.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppProfile {
    /// LLC misses per kilo-instruction.
    pub mpki: f64,
    /// Row-buffer hit rate, 0-1.
    pub rbh: f64,
    /// DRAM traffic alone, in any unit the same for every profile (`memtint compare`: lines
    /// read and written per 1000 CPU cycles); `bpm-plus-balanced` balances channels by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<f64>,
}
