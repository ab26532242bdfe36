//! Machine configurations (TOML presets under `configs/machines/`, or a user's file) and their
//! resolution into the objects the engine runs: device timing, organisation, address mapping and
//! controller settings. The same names are used in TOML, the Python API and the CLI.

use crate::cache::CacheHierarchyConfig;
pub use crate::controller::config::{ControllerConfig, WriteHandling, WriteSettings, MAX_QUEUE};
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
    /// Other machines that are this one with a setting changed, by what the change offers
    /// (`page-channel = "i7-860-bpm-plus"`: the BIOS setting that selects the channel by a bit
    /// above the page offset). A sweep runs a policy that needs a variant on it
    /// (`PolicyInfo::machine_variant`), against the baseline on this machine.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub variants: std::collections::BTreeMap<String, String>,
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
        crate::params::CORES.check("cpu.cores", self.cores as u64)?;
        self.core_config().validate().map_err(|e| match e {
            Error::Config { field, reason } => Error::config(field.replacen("core.", "cpu.", 1), reason),
            other => other,
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Device preset name (`configs/devices`), e.g. "ddr4-2400", or a device TOML path.
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

fn one() -> u32 {
    1
}
fn default_device_width() -> u32 {
    8
}
fn default_bus_width() -> u32 {
    64
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
        let m: MachineConfig = crate::error::from_toml(text, origin)?;
        m.controller.warnings()?;
        Ok(m)
    }

    /// Apply a partial table of overrides (`{"dram": {...}, "controller": {...}}`); unknown keys are errors.
    pub fn with_overrides(&self, overrides: &serde_json::Value) -> Result<Self> {
        let mut value = serde_json::to_value(self).expect("machine config serialises");
        merge(&mut value, overrides, "")?;
        let m: MachineConfig = crate::error::from_value(value, "").map_err(|e| match e {
            // Overrides that are not a table at all.
            Error::Config { field, reason } if field.is_empty() => Error::config("overrides", reason),
            e => e,
        })?;
        // The controller's unknown keys and component tables (serde cannot check them).
        m.controller.warnings()?;
        Ok(m)
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
                    // Sections and components' tables: their own checks name an unknown key.
                    None if matches!(path, "dram" | "controller" | "cpu" | "cache" | "cache.llc" | "cache.l2")
                        || path.starts_with("controller.") =>
                    {
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
        let e = override_error(json!(5));
        assert!(e.contains("overrides: invalid type: integer `5`"), "{e}");
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
    fn machine_variants_are_built_in_machines_that_differ_in_their_mapping_only() {
        let mut seen = 0;
        for (name, _) in presets::MACHINES {
            let m = MachineConfig::load(name).unwrap();
            for (variant, target) in &m.variants {
                let v = MachineConfig::load(target).unwrap_or_else(|e| panic!("{name}: variant {variant}: {e}"));
                assert_ne!(v.dram.mapping, m.dram.mapping, "{name} -> {target}");
                let same = |c: &MachineConfig| (c.dram.device.clone(), c.dram.channels, c.dram.ranks, c.dram.density_gbit, c.cpu.clone());
                assert_eq!(same(&v), same(&m), "{name} -> {target}: only the mapping may differ");
                seen += 1;
            }
        }
        assert!(seen > 0);
    }

    #[test]
    fn an_unknown_override_key_is_named() {
        let e = override_error(json!({"controller": {"turbo": 1}}));
        assert!(e.contains("turbo"), "{e}");
        let e = override_error(json!({"gpu": {"cores": 1}}));
        assert!(e.contains("gpu"), "{e}");
    }
}
