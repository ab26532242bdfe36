//! Dynamic partitioning (`os.dynamic`): a policy daemon that, every epoch, reads the monitors
//! (`os/monitor.rs`) and may give processes new colour sets. The OS model then re-colours: each
//! resident page left in a colour its process no longer owns is copied to a frame of the
//! process's new colours (through the memory system: every line read at the old frame and
//! written at the new), costing the process's threads `os.numa_scan.migrate_ns` of kernel time
//! per page (migrate_pages' path) and one TLB shootdown per epoch (`shootdown_ns`), as Lin et
//! al.'s page re-colouring does (HPCA 2008, the cost BPM §2.8 cites); all at the epoch, or
//! paced by a copy daemon (`[os.recolour]`, os/recolour.rs). Pages in swap are not moved: they
//! come back in the new colours when touched.
//!
//! Each policy is one file declaring a `DynamicInfo` and one line in `DYNAMIC`; it runs beside
//! the placement policies it names (`works_with`), whose colour sets it changes.

mod channel_balance;
mod dynamic_bpm;
mod dynamic_bpm_plus;
mod dynamic_channel_only;
mod hvr;
pub mod hvr_rules;

pub use channel_balance::{assign_channels, unbalance_factor, Channel, ChannelBalanceStats};
pub use dynamic_bpm::rebalance;
pub use hvr::VerticalLayout;

use super::colour::ColourBits;
use super::config::OsConfig;
use super::llc_class::LlcClass;
use super::monitor::Monitors;
use crate::error::{Error, Result};
use crate::params::{ParamSchema, ParamTables};
use crate::registry::{Component, Registry};
use serde::Serialize;

/// What a policy sees at the end of an epoch.
pub struct EpochView<'a> {
    pub monitors: &'a Monitors,
    /// Each process's colours now (processes sharing a set list the same colours).
    pub colours: &'a [Vec<u32>],
    /// Frames of each colour the OS may use (within `os.memory_mb`).
    pub colour_frames: &'a [u64],
    /// Per process, per colour: its resident pages there.
    pub pages_in_colour: &'a [Vec<u64>],
    /// The channel each colour's frames lie in (the first, for a colour spanning several).
    pub colour_channels: &'a [u32],
    /// Each process's HVR class from its accessed-bit windows (`os/llc_class.rs`): `None` for a
    /// process that retired nothing this epoch (not arrived, or gone) or has no window yet;
    /// empty unless the policy `needs_classes`.
    pub classes: &'a [Option<LlcClass>],
}

/// New colour sets, one per process (processes that share list the same set; otherwise the
/// sets are disjoint), and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repartition {
    pub colours: Vec<Vec<u32>>,
    /// Whole colours moved from one set to another.
    pub colours_lent: u64,
    /// Sets merged into one shared set.
    pub sets_shared: u64,
}

pub trait DynamicPolicy: Send {
    /// Time between epochs, ns of simulated time.
    fn epoch_ns(&self) -> f64;
    /// The end of an epoch: new colour sets, or `None` to keep them.
    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition>;
    /// It reads HVR classes: the OS model samples accessed bits (`[os.hot_pages]`) for it.
    fn needs_classes(&self) -> bool {
        false
    }
    /// A new partition re-colours resident pages (copies them into their process's new
    /// colours); false: only pages placed from then on follow it.
    fn recolours(&self) -> bool {
        true
    }
    /// What its channel step read and decided so far (policies that balance channels).
    fn channel_balance(&self) -> Option<&ChannelBalanceStats> {
        None
    }
}

/// What the policies are built from.
pub struct DynamicView<'a> {
    pub params: &'a ParamTables,
    pub processes: u32,
    /// The machine's colour bits (a policy that reads the colour space's structure).
    pub colour_bits: &'a ColourBits,
}

pub type Builder = fn(&DynamicView) -> Result<Box<dyn DynamicPolicy>>;

pub struct DynamicInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The placement policies whose colour sets it adapts.
    pub works_with: &'static [&'static str],
    pub params: ParamSchema,
    pub build: Builder,
}

impl Component for DynamicInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// No dynamic policy: colours stay as placement set them.
pub static NONE: DynamicInfo = DynamicInfo {
    name: "none",
    summary: "colours stay as the placement policy set them",
    works_with: &[],
    params: ParamSchema::NONE,
    build: |_| unreachable!(),
};

/// The dynamic policies, one line each.
pub static DYNAMIC: Registry<DynamicInfo> =
    Registry::new("dynamic policy", &[&NONE, &dynamic_bpm::INFO, &dynamic_bpm_plus::INFO, &dynamic_channel_only::INFO, &hvr::INFO]);

pub fn info(name: &str) -> Result<&'static DynamicInfo> {
    DYNAMIC.get(name).map_err(|e| match e {
        Error::UnknownName { name, valid, .. } => {
            Error::config("os.dynamic", format!("unknown dynamic policy '{name}'; choose one of {}", valid.join(", ")))
        }
        e => e,
    })
}

/// The dynamic policy a configuration asks for (`None` for "none"); an error if the placement
/// policy is not one it adapts.
pub fn build(cfg: &OsConfig, processes: u32, bits: &ColourBits) -> Result<Option<Box<dyn DynamicPolicy>>> {
    let info = info(&cfg.dynamic)?;
    if info.name == NONE.name {
        return Ok(None);
    }
    if !info.works_with.contains(&cfg.policy.as_str()) {
        return Err(Error::config(
            "os.dynamic",
            format!("\"{}\" adapts the colour sets of policy {}; os.policy is \"{}\"", info.name, info.works_with.join(", "), cfg.policy),
        ));
    }
    (info.build)(&DynamicView { params: &cfg.params, processes, colour_bits: bits }).map(Some)
}

/// One re-partition, for the statistics' timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Adjustment {
    /// When, ns of simulated time.
    pub at_ns: f64,
    /// Each process's colours after it, as text ("0-7,12").
    pub colours: Vec<String>,
    /// Each process's RNP (pages touched) and BNP (frames its colours hold) before it.
    pub rnp: Vec<u64>,
    pub bnp: Vec<u64>,
    /// Pages it left outside their process's colours: copied at once, or queued for the copy
    /// daemon (`[os.recolour] pages_per_ms`).
    pub pages_recoloured: u64,
    /// Each process's HVR class the decision read (`None`: not running or not classified);
    /// empty for policies that read none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<Option<LlcClass>>,
}

/// The run's dynamic-partitioning counters (`dynamic` in the statistics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DynamicStats {
    pub policy: String,
    pub epoch_ns: f64,
    pub epochs: u64,
    /// Epochs that changed the colour sets.
    pub repartitions: u64,
    pub colours_lent: u64,
    pub sets_shared: u64,
    /// Pages copied to their process's new colours during the measured run, and pages that
    /// stayed in a colour their process no longer owns because its new colours had no free frame.
    pub pages_recoloured: u64,
    /// Pages copied before the measured run (populating, warm-up): not charged.
    pub pages_recoloured_before_run: u64,
    pub recolour_blocked: u64,
    /// Pages still waiting for the copy daemon at the end (in colours their process no
    /// longer owns); 0 when copies are made at the epoch.
    pub recolour_pending: u64,
    /// Policies that balance channels: what their channel step read and decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_balance: Option<ChannelBalanceStats>,
    pub adjustments: Vec<Adjustment>,
}
