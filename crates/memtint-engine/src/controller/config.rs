//! A channel controller's settings (`[controller]` in a machine TOML): queue sizes, write
//! handling, the scheduler, row policy and refresh manager by name, and the schedulers'
//! parameters. Re-exported by `crate::config`, which assembles a whole machine.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The largest read or write queue a controller takes (entries per channel): far beyond real
/// controllers (32-128), and small enough that a mistyped size is an error, not an allocation
/// failure.
pub const MAX_QUEUE: usize = 65_536;

/// Whose rule a controller's write handling follows when its `write_*` keys are unset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteHandling {
    /// Real controllers batch writes between watermarks and turn the bus round rarely (the
    /// write-to-read turnaround costs tWTR each time). Values of gem5's `MemCtrl`
    /// (src/mem/MemCtrl.py): 64-entry write queue, drain from 85 % down to 50 %, idle drain
    /// only above the low watermark, at least 16 writes per switch. Intel's write-major mode
    /// works the same way, but its thresholds are not public.
    Batched,
    /// Ramulator 2's `GenericDRAMController`: 32 entries, 80 % / 20 %, and a write drains
    /// whenever the read queue is empty, one at a time.
    Ramulator,
}

impl WriteHandling {
    pub const NAMES: [&'static str; 2] = ["batched", "ramulator"];

    pub fn name(self) -> &'static str {
        match self {
            WriteHandling::Batched => "batched",
            WriteHandling::Ramulator => "ramulator",
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "batched" => Ok(WriteHandling::Batched),
            "ramulator" => Ok(WriteHandling::Ramulator),
            _ => Err(Error::config(
                "controller.write_handling",
                format!("unknown write handling '{name}'; choose one of: {}", Self::NAMES.join(", ")),
            )),
        }
    }

    /// The bundle's values (`idle_drain_min` is resolved by `ControllerConfig::writes`).
    fn settings(self) -> WriteSettings {
        match self {
            WriteHandling::Batched => WriteSettings {
                queue: 64,
                high_watermark: 0.85,
                low_watermark: 0.5,
                idle_drain_min: 0,
                idle_drain_timeout: 1000,
                min_per_switch: 16,
            },
            WriteHandling::Ramulator => WriteSettings {
                queue: 32,
                high_watermark: 0.8,
                low_watermark: 0.2,
                idle_drain_min: 1,
                idle_drain_timeout: 1000,
                min_per_switch: 0,
            },
        }
    }
}

/// A controller's write settings, resolved (`ControllerConfig::writes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriteSettings {
    pub queue: usize,
    pub high_watermark: f64,
    pub low_watermark: f64,
    pub idle_drain_min: usize,
    pub idle_drain_timeout: u64,
    pub min_per_switch: usize,
}

impl WriteSettings {
    /// Writes queued that start a drain: the high watermark, rounded up.
    pub fn high_count(&self) -> usize {
        ((self.queue as f64 * self.high_watermark).ceil() as usize).clamp(1, self.queue.max(1))
    }

    /// Writes queued at or below which a drain may end: the low watermark, rounded down.
    pub fn low_count(&self) -> usize {
        ((self.queue as f64 * self.low_watermark).floor() as usize).min(self.high_count() - 1)
    }
}

/// Controller settings. Defaults: 32-entry read queue, FR-FCFS, open rows, all-bank refresh, and
/// writes handled in batches as real controllers do (`write_handling`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    pub read_queue: usize,
    /// Whose write handling the unset `write_*` keys follow (`WriteHandling`): "batched" (the
    /// default: gem5's `MemCtrl`) or "ramulator" (Ramulator 2's `GenericDRAMController`, for
    /// comparisons with it). A key set explicitly overrides its bundle value.
    pub write_handling: String,
    /// Write queue entries per channel.
    pub write_queue: Option<usize>,
    /// Start draining writes when the write queue is this full (fraction of its size).
    pub write_high_watermark: Option<f64>,
    /// Stop draining when it is down to this fraction (and reads are waiting).
    pub write_low_watermark: Option<f64>,
    /// With no read waiting, start draining once this many writes wait ("batched": more than
    /// the low watermark, as gem5; "ramulator": 1, any write). Fewer writes wait for
    /// `write_idle_drain_timeout`, so a short tail of writes still drains.
    pub write_idle_drain_min: Option<usize>,
    /// With no read waiting, drain anyway once the oldest write has waited this many cycles
    /// (only matters when `write_idle_drain_min` > 1).
    pub write_idle_drain_timeout: Option<u64>,
    /// Writes issued in one write-mode period before waiting reads may end it (gem5's
    /// `min_writes_per_switch`; 0 for Ramulator), unless the write queue empties.
    pub write_min_per_switch: Option<usize>,
    pub scheduler: String,
    pub row_policy: String,
    pub refresh: String,
    /// Timeout row policy: close a row idle for this many cycles.
    pub row_timeout: u64,
    /// FR-FCFS-Cap: at most this many younger row hits may bypass an older request to a bank.
    pub frfcfs_cap: u32,
    /// Cycles from a request's arrival at the controller to the first cycle it may be
    /// scheduled (the front-end/queue insertion delay). Part of the idle latency.
    pub frontend_latency: u64,
    /// Which channel-controller implementation runs: "general" (`ChannelController`, every
    /// scheduler), "lanes" (`LaneController`: fcfs, fr-fcfs, fr-fcfs-cap) or "auto" (lanes when
    /// it supports the configuration, else general). Both issue the same commands with the same
    /// statistics; only simulation speed differs.
    pub implementation: String,
    // Application-aware schedulers (one file each under controller/scheduler/, which cites the
    // source of each default). Cycles are controller (DRAM) cycles; the defaults are the papers'
    // numbers, which the papers count in processor cycles (docs/schedulers.md). A run shorter
    // than `scheduler::MIN_PERIODS` of its scheduler's period is warned about in its statistics.
    // "Requests" are the requests one controller receives from a source, the intensity every
    // scheduler measures itself.
    /// PAR-BS: requests marked per source per bank when a batch forms (Marking-Cap).
    pub parbs_marking_cap: u32,
    /// ATLAS: quantum length; attained service is re-ranked at each quantum boundary.
    pub atlas_quantum: u64,
    /// ATLAS: weight of history in the attained-service moving average.
    pub atlas_alpha: f64,
    /// ATLAS: a request that has waited this long goes before all others.
    pub atlas_starvation_threshold: u64,
    /// TCM: quantum length (re-clustering).
    pub tcm_quantum: u64,
    /// TCM: ClusterThresh, the share of the quantum's total bandwidth the latency-sensitive
    /// cluster may take, whatever the number of sources (the paper's 4/24).
    pub tcm_cluster_thresh: f64,
    /// TCM, deprecated: ClusterThresh as `tcm_cluster_share / N` for N active sources. When set
    /// it replaces `tcm_cluster_thresh` and the run reports a deprecation warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcm_cluster_share: Option<f64>,
    /// TCM: the bandwidth cluster's order is shuffled this often.
    pub tcm_shuffle_interval: u64,
    /// TCM: random (not insertion) shuffle when the bandwidth threads' BLP differ by less than
    /// this fraction of the banks and their row-buffer locality by less than this.
    pub tcm_shuffle_algo_threshold: f64,
    /// BLISS: consecutive requests served from one source that blacklist it.
    pub bliss_threshold: u32,
    /// BLISS: the blacklist is cleared this often.
    pub bliss_clearing_interval: u64,
    /// IMPS: epoch over which each source's request rate is measured.
    pub imps_epoch: u64,
    /// IMPS: a source below this many requests per 1000 cycles (smoothed) is "very light".
    pub imps_low_intensity: f64,
    /// CCPS: epoch over which each source's request rate is measured.
    pub ccps_epoch: u64,
    /// CCPS: a source below this many requests per 1000 cycles (smoothed) is "low memory request".
    pub ccps_low_intensity: f64,
    /// CCPS: a request that has waited this long goes first (the paper's T).
    pub ccps_age_threshold: u64,
    /// IMPS and CCPS: weight of history in the request-rate moving average.
    pub intensity_alpha: f64,
    /// Seed of randomised scheduler decisions (TCM's random shuffle).
    pub seed: u64,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            read_queue: 32,
            write_handling: WriteHandling::Batched.name().into(),
            write_queue: None,
            write_high_watermark: None,
            write_low_watermark: None,
            write_idle_drain_min: None,
            write_idle_drain_timeout: None,
            write_min_per_switch: None,
            scheduler: "fr-fcfs".into(),
            row_policy: "open".into(),
            refresh: "all-bank".into(),
            row_timeout: 100,
            frfcfs_cap: 16,
            frontend_latency: 1,
            implementation: "auto".into(),
            parbs_marking_cap: 5,
            atlas_quantum: 10_000_000,
            atlas_alpha: 0.875,
            atlas_starvation_threshold: 100_000,
            tcm_quantum: 1_000_000,
            tcm_cluster_thresh: 4.0 / 24.0,
            tcm_cluster_share: None,
            tcm_shuffle_interval: 800,
            tcm_shuffle_algo_threshold: 0.1,
            bliss_threshold: 4,
            bliss_clearing_interval: 10_000,
            imps_epoch: 1_000_000,
            imps_low_intensity: 10.0,
            ccps_epoch: 1_000_000,
            ccps_low_intensity: 10.0,
            ccps_age_threshold: 10_000,
            intensity_alpha: 0.875,
            seed: 1,
        }
    }
}

impl ControllerConfig {
    /// The write settings in force: each `write_*` key as set, else its `write_handling` value.
    pub fn writes(&self) -> Result<WriteSettings> {
        let bundle = WriteHandling::from_name(&self.write_handling)?.settings();
        let queue = self.write_queue.unwrap_or(bundle.queue);
        let mut w = WriteSettings {
            queue,
            high_watermark: self.write_high_watermark.unwrap_or(bundle.high_watermark),
            low_watermark: self.write_low_watermark.unwrap_or(bundle.low_watermark),
            idle_drain_min: 0,
            idle_drain_timeout: self.write_idle_drain_timeout.unwrap_or(bundle.idle_drain_timeout),
            // A bundle's minimum shrinks with a small queue; a value set explicitly is checked.
            min_per_switch: self.write_min_per_switch.unwrap_or(bundle.min_per_switch.min(queue)),
        };
        w.idle_drain_min = match (self.write_idle_drain_min, WriteHandling::from_name(&self.write_handling)?) {
            (Some(n), _) => n,
            (None, WriteHandling::Batched) => (w.low_count() + 1).min(queue.max(1)),
            (None, WriteHandling::Ramulator) => 1,
        };
        Ok(w)
    }

    pub fn validate(&self) -> Result<()> {
        let w = self.writes()?;
        for (key, n) in [("read_queue", self.read_queue), ("write_queue", w.queue)] {
            if n == 0 || n > MAX_QUEUE {
                return Err(Error::config(
                    format!("controller.{key}"),
                    format!("must be between 1 and {MAX_QUEUE} entries (real controllers hold 32-128), got {n}"),
                ));
            }
        }
        let (hi, lo) = (w.high_watermark, w.low_watermark);
        if !(0.0..=1.0).contains(&hi) || !(0.0..=1.0).contains(&lo) || lo > hi {
            return Err(Error::config(
                "controller.write_low_watermark",
                format!("watermarks must satisfy 0 <= low <= high <= 1, got low {lo}, high {hi}"),
            ));
        }
        if w.idle_drain_min == 0 || w.idle_drain_min > w.queue {
            return Err(Error::config(
                "controller.write_idle_drain_min",
                format!("must be between 1 and write_queue ({}), got {}", w.queue, w.idle_drain_min),
            ));
        }
        if w.idle_drain_timeout == 0 {
            return Err(Error::config("controller.write_idle_drain_timeout", "must be at least 1 cycle"));
        }
        if w.min_per_switch > w.queue {
            return Err(Error::config(
                "controller.write_min_per_switch",
                format!("must be at most write_queue ({}), got {}", w.queue, w.min_per_switch),
            ));
        }
        if self.frontend_latency == 0 {
            return Err(Error::config("controller.frontend_latency", "must be at least 1 cycle"));
        }
        crate::controller::Implementation::check_name(&self.implementation)?;
        if self.frfcfs_cap == 0 {
            return Err(Error::config("controller.frfcfs_cap", "must be at least 1"));
        }
        let at_least_one: [(&str, u64); 8] = [
            ("parbs_marking_cap", self.parbs_marking_cap as u64),
            ("atlas_quantum", self.atlas_quantum),
            ("tcm_quantum", self.tcm_quantum),
            ("tcm_shuffle_interval", self.tcm_shuffle_interval),
            ("bliss_threshold", self.bliss_threshold as u64),
            ("bliss_clearing_interval", self.bliss_clearing_interval),
            ("imps_epoch", self.imps_epoch),
            ("ccps_epoch", self.ccps_epoch),
        ];
        for (name, v) in at_least_one {
            if v == 0 {
                return Err(Error::config(format!("controller.{name}"), "must be at least 1"));
            }
        }
        let fractions = [
            ("atlas_alpha", self.atlas_alpha),
            ("intensity_alpha", self.intensity_alpha),
            ("tcm_shuffle_algo_threshold", self.tcm_shuffle_algo_threshold),
            ("tcm_cluster_thresh", self.tcm_cluster_thresh),
        ];
        for (name, v) in fractions {
            if !((0.0..1.0).contains(&v) || (name.starts_with("tcm") && v == 1.0)) {
                return Err(Error::config(format!("controller.{name}"), format!("must be in [0, 1), got {v}")));
            }
        }
        for (name, v) in [
            ("imps_low_intensity", self.imps_low_intensity),
            ("ccps_low_intensity", self.ccps_low_intensity),
            ("tcm_cluster_share", self.tcm_cluster_share.unwrap_or(0.0)),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::config(format!("controller.{name}"), format!("must be a finite number >= 0, got {v}")));
            }
        }
        Ok(())
    }
}
