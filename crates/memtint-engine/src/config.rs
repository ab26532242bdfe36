//! Machine configurations (TOML presets under `configs/machines/`, or a user's file) and their
//! resolution into the objects the engine runs: device timing, organisation, address mapping and
//! controller settings. The same names are used in TOML, the Python API and the CLI.

use crate::cache::CacheHierarchyConfig;
use crate::cpu::CoreConfig;
use crate::dram::{DeviceSpec, Organisation, TimingParams};
use crate::error::{Error, Result};
use crate::mapping::AddressMapping;
use crate::presets;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where a run's machine comes from: a preset name or TOML path, or a complete machine table
/// (the TOML schema, as JSON from the Python API).
#[derive(Clone, Debug)]
pub enum MachineSource {
    Name(String),
    Table(Box<MachineConfig>),
}

impl<'de> Deserialize<'de> for MachineSource {
    // By hand rather than `untagged`, so a mistake inside a machine table keeps serde's message.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MachineSource;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a machine preset name, a machine TOML path, or a machine table")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MachineSource, E> {
                Ok(MachineSource::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<MachineSource, A::Error> {
                MachineConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|m| MachineSource::Table(Box::new(m)))
            }
        }
        d.deserialize_any(V)
    }
}

impl MachineSource {
    pub fn load(&self) -> Result<MachineConfig> {
        match self {
            MachineSource::Name(n) => MachineConfig::load(n),
            MachineSource::Table(m) => Ok((**m).clone()),
        }
    }

    /// The machine with a run's overrides (a partial machine table), mapping and scheduler
    /// applied, in that order.
    pub fn load_with(
        &self,
        overrides: Option<&serde_json::Value>,
        mapping: Option<&str>,
        scheduler: Option<&str>,
    ) -> Result<MachineConfig> {
        let mut m = self.load()?;
        if let Some(o) = overrides {
            m = m.with_overrides(o)?;
        }
        if let Some(v) = mapping {
            m.dram.mapping = v.to_string();
        }
        if let Some(v) = scheduler {
            m.controller.scheduler = v.to_string();
        }
        Ok(m)
    }
}

/// A machine as written in TOML.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// What a comparison on this machine must be read with (its baseline differs from the
    /// paper's, say); `memtint compare` prints it and its results carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison_note: Option<String>,
    pub dram: DramConfig,
    #[serde(default)]
    pub controller: ControllerConfig,
    /// Cores (CPU-trace runs only).
    #[serde(default)]
    pub cpu: CpuConfig,
    /// Caches below the cores (CPU-trace runs only).
    #[serde(default)]
    pub cache: CacheHierarchyConfig,
}

/// The processor side of a machine. Defaults are Ramulator's out-of-order core (4-wide,
/// 128-entry window) at 3.2 GHz, four of them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CpuConfig {
    /// Cores available; a run uses one per program.
    pub cores: u32,
    pub issue_width: u32,
    pub rob_size: u32,
    /// Outstanding loads per core.
    pub mshrs: u32,
    pub frequency_ghz: f64,
}

impl Default for CpuConfig {
    fn default() -> Self {
        let c = CoreConfig::default();
        CpuConfig { cores: 4, issue_width: c.issue_width, rob_size: c.rob_size, mshrs: c.mshrs, frequency_ghz: c.frequency_ghz }
    }
}

impl CpuConfig {
    pub fn core_config(&self) -> CoreConfig {
        CoreConfig { issue_width: self.issue_width, rob_size: self.rob_size, mshrs: self.mshrs, frequency_ghz: self.frequency_ghz }
    }

    pub fn validate(&self) -> Result<()> {
        if self.cores == 0 {
            return Err(Error::config("cpu.cores", "must be at least 1"));
        }
        self.core_config().validate().map_err(|e| match e {
            Error::Config { field, reason } => Error::config(field.replacen("core.", "cpu.", 1), reason),
            other => other,
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Device preset name (`configs/devices`), e.g. "ddr4-2400".
    pub device: String,
    pub density_gbit: u32,
    #[serde(default = "default_device_width")]
    pub device_width: u32,
    #[serde(default = "one")]
    pub channels: u32,
    #[serde(default = "one")]
    pub ranks: u32,
    #[serde(default = "default_bus_width")]
    pub bus_width_bits: u32,
    /// A named layout ("RoBaRaCoCh"), a mapping preset ("i7-860") or a path to a mapping TOML.
    pub mapping: String,
}

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

fn one() -> u32 {
    1
}
fn default_device_width() -> u32 {
    8
}
fn default_bus_width() -> u32 {
    64
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

impl MachineConfig {
    /// A preset name, or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self> {
        if let Ok(text) = presets::machine_text(name_or_path) {
            return Self::from_toml(text, &format!("configs/machines/{name_or_path}.toml"));
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.exists() {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            return Self::from_toml(&text, name_or_path);
        }
        Err(Error::unknown("machine", name_or_path, presets::MACHINES.iter().map(|(n, _)| *n)))
    }

    pub fn from_toml(text: &str, origin: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::config(origin, e.to_string().trim_end().to_string()))
    }

    /// Apply a partial table of overrides (`{"dram": {...}, "controller": {...}}`); unknown keys are errors.
    pub fn with_overrides(&self, overrides: &serde_json::Value) -> Result<Self> {
        let mut value = serde_json::to_value(self).expect("machine config serialises");
        merge(&mut value, overrides, "")?;
        // Through serde_path_to_error so a value of the wrong kind names its key (serde alone does not).
        serde_path_to_error::deserialize(value).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." { "overrides".to_string() } else { key };
            Error::config(key, e.into_inner().to_string())
        })
    }
}

fn merge(base: &mut serde_json::Value, over: &serde_json::Value, path: &str) -> Result<()> {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                let key = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() => merge(slot, v, &key)?,
                    Some(slot) => *slot = v.clone(),
                    None if matches!(path, "dram" | "controller" | "cpu" | "cache" | "cache.llc" | "cache.l2") => {
                        // Let deny_unknown_fields name the key.
                        b.insert(k.clone(), v.clone());
                    }
                    None => return Err(Error::config(key, "unknown key")),
                }
            }
            Ok(())
        }
        (slot, v) => {
            *slot = v.clone();
            Ok(())
        }
    }
}

/// A machine resolved into engine objects.
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    pub machine: MachineConfig,
    pub device: DeviceSpec,
    pub org: Organisation,
    pub timing: TimingParams,
    pub mapping: AddressMapping,
    pub controller: ControllerConfig,
}

impl MemoryConfig {
    pub fn resolve(machine: &MachineConfig) -> Result<Self> {
        let d = &machine.dram;
        let device = presets::device(&d.device)?;
        let org = device.organisation(d.density_gbit, d.device_width, d.channels, d.ranks, d.bus_width_bits)?;
        let timing = device.timing(d.density_gbit, d.device_width)?;
        let mapping = resolve_mapping(&d.mapping, &org)?;
        machine.controller.validate()?;
        Ok(MemoryConfig { machine: machine.clone(), device, org, timing, mapping, controller: machine.controller.clone() })
    }
}

/// A mapping preset name, a path to a mapping TOML, or a named layout.
pub fn resolve_mapping(name: &str, org: &Organisation) -> Result<AddressMapping> {
    if let Some(text) = presets::mapping_text(name) {
        return AddressMapping::from_toml(text, &format!("configs/mappings/{name}.toml"), org);
    }
    let path = Path::new(name);
    if name.ends_with(".toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        return AddressMapping::from_toml(&text, name, org);
    }
    AddressMapping::from_layout(name, org).map_err(|e| {
        if name.len().is_multiple_of(2) && name.chars().all(|c| c.is_ascii_alphabetic()) && name.len() >= 8 {
            e
        } else {
            let mut valid: Vec<String> = presets::MAPPINGS.iter().map(|(n, _)| n.to_string()).collect();
            valid.extend(presets::LAYOUTS.iter().map(|s| s.to_string()));
            Error::unknown("mapping", name, valid)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn override_error(over: serde_json::Value) -> String {
        MachineConfig::load("ddr4-2400").unwrap().with_overrides(&over).unwrap_err().to_string()
    }

    #[test]
    fn overrides_apply_and_keep_the_other_keys() {
        let m = MachineConfig::load("ddr4-2400").unwrap();
        let o = m.with_overrides(&json!({"controller": {"read_queue": 8, "write_high_watermark": 1}})).unwrap();
        assert_eq!(o.controller.read_queue, 8);
        assert_eq!(o.controller.write_high_watermark, Some(1.0));
        assert_eq!(o.controller.write_queue, m.controller.write_queue);
    }

    #[test]
    fn write_settings_follow_their_bundle_unless_set() {
        let m = MachineConfig::load("ddr4-2400").unwrap();
        let w = m.controller.writes().unwrap();
        assert_eq!((w.queue, w.high_count(), w.low_count(), w.idle_drain_min, w.min_per_switch), (64, 55, 32, 33, 16));
        let r = m.with_overrides(&json!({"controller": {"write_handling": "ramulator"}})).unwrap();
        let w = r.controller.writes().unwrap();
        assert_eq!((w.queue, w.high_count(), w.low_count(), w.idle_drain_min, w.min_per_switch), (32, 26, 6, 1, 0));
        let o = m.with_overrides(&json!({"controller": {"write_queue": 16, "write_min_per_switch": 4}})).unwrap();
        let w = o.controller.writes().unwrap();
        assert_eq!((w.queue, w.low_count(), w.idle_drain_min, w.min_per_switch), (16, 8, 9, 4), "the idle drain follows the low watermark");
        let e = m.with_overrides(&json!({"controller": {"write_handling": "dramsim"}})).unwrap().controller.validate().unwrap_err();
        assert!(e.to_string().contains("write_handling") && e.to_string().contains("batched, ramulator"), "{e}");
        let small = m.with_overrides(&json!({"controller": {"write_queue": 8}})).unwrap();
        assert_eq!(small.controller.writes().unwrap().min_per_switch, 8);
        let e = small.with_overrides(&json!({"controller": {"write_min_per_switch": 9}})).unwrap().controller.validate().unwrap_err();
        assert!(e.to_string().contains("write_min_per_switch"), "9 writes per switch do not fit 8 entries: {e}");
    }

    /// `--read-queue 1000000000` used to abort with an allocation failure.
    #[test]
    fn a_huge_queue_is_an_error_naming_the_key_not_an_abort() {
        let m = MachineConfig::load("ddr4-2400").unwrap();
        for key in ["read_queue", "write_queue"] {
            let e = m.with_overrides(&json!({"controller": {key: 1_000_000_000u64}})).unwrap().controller.validate().unwrap_err();
            assert!(e.to_string().contains(&format!("controller.{key}")) && e.to_string().contains("65536"), "{e}");
        }
        let ok = m.with_overrides(&json!({"controller": {"read_queue": MAX_QUEUE, "write_queue": MAX_QUEUE}})).unwrap();
        ok.controller.validate().unwrap();
    }

    #[test]
    fn an_override_of_the_wrong_kind_names_its_key() {
        let e = override_error(json!({"controller": {"read_queue": "many"}}));
        assert!(e.contains("controller.read_queue") && e.contains("\"many\""), "{e}");
        let e = override_error(json!({"controller": {"read_queue": 8.5}}));
        assert!(e.contains("controller.read_queue"), "{e}");
        let e = override_error(json!({"controller": {"scheduler": 3}}));
        assert!(e.contains("controller.scheduler") && e.contains("string"), "{e}");
        let e = override_error(json!({"controller": {"write_low_watermark": "low"}}));
        assert!(e.contains("controller.write_low_watermark") && e.contains("\"low\""), "{e}");
    }

    #[test]
    fn an_override_may_change_a_value_of_another_kind_where_the_type_takes_both() {
        // The LLC is a table or "none": either way round is a valid override.
        let m = MachineConfig::load("i7-860").unwrap();
        let none = m.with_overrides(&json!({"cache": {"llc": "none"}})).unwrap();
        let back = serde_json::to_value(&m).unwrap()["cache"]["llc"].clone();
        let again = none.with_overrides(&json!({"cache": {"llc": back}})).unwrap();
        assert_eq!(again.cache, m.cache);
    }

    #[test]
    fn an_unknown_override_key_is_named() {
        let e = override_error(json!({"controller": {"turbo": 1}}));
        assert!(e.contains("turbo"), "{e}");
        let e = override_error(json!({"gpu": {"cores": 1}}));
        assert!(e.contains("gpu"), "{e}");
    }
}
