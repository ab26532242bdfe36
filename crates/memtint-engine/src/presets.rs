//! The preset catalogue: every TOML file under `configs/`, embedded at build time so the engine
//! and the `memtint` command work from any directory. Presets are data; this file only lists them.

use crate::dram::DeviceSpec;
use crate::error::{Error, Result};

macro_rules! preset {
    ($dir:literal, $name:literal) => {
        ($name, include_str!(concat!("../../../configs/", $dir, "/", $name, ".toml")))
    };
}

/// Device speed bins (`configs/devices`).
pub const DEVICES: &[(&str, &str)] = &[preset!("devices", "ddr3-1333"), preset!("devices", "ddr3-1600"), preset!("devices", "ddr4-2400")];

/// Machines (`configs/machines`).
pub const MACHINES: &[(&str, &str)] = &[
    preset!("machines", "ddr3-1333"),
    preset!("machines", "ddr3-1600"),
    preset!("machines", "ddr4-2400"),
    preset!("machines", "ddr4-2400-2ch2r"),
    preset!("machines", "i7-860"),
    preset!("machines", "i7-860-bpm-plus"),
    preset!("machines", "i7-860-8t"),
    preset!("machines", "xor-bank"),
    preset!("machines", "opteron-6128-node"),
    preset!("machines", "ccps-4c-64b"),
    preset!("machines", "ccps-8c-64b"),
    preset!("machines", "ccps-16c-64b"),
    preset!("machines", "ccps-4c-256b"),
    preset!("machines", "ccps-8c-256b"),
    preset!("machines", "ccps-16c-256b"),
];

/// Explicit address mappings (`configs/mappings`); named layouts such as `RoBaRaCoCh` need no file.
pub const MAPPINGS: &[(&str, &str)] = &[
    preset!("mappings", "i7-860"),
    preset!("mappings", "i7-860-bpm-plus"),
    preset!("mappings", "xor-bank"),
    preset!("mappings", "opteron-6128-node"),
];

/// Named program mixes (`configs/mixes`): `programs = [...]` for `memtint compare --mix NAME`.
pub const MIXES: &[(&str, &str)] = &[
    preset!("mixes", "stream-light-4"),
    preset!("mixes", "intensive-4"),
    preset!("mixes", "mixed-8"),
    preset!("mixes", "real-intensive-4"),
    preset!("mixes", "real-spec-4"),
];

/// Named layouts offered in listings (any permutation of the codes is accepted).
pub use crate::mapping::EXAMPLE_LAYOUTS as LAYOUTS;

fn find<'a>(table: &'a [(&'a str, &'a str)], kind: &'static str, name: &str) -> Result<&'a str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, text)| *text).ok_or_else(|| Error::unknown(kind, name, table.iter().map(|(n, _)| *n)))
}

pub fn device(name: &str) -> Result<DeviceSpec> {
    DeviceSpec::from_toml(find(DEVICES, "device", name)?, &format!("configs/devices/{name}.toml"))
}

pub fn machine_text(name: &str) -> Result<&'static str> {
    find(MACHINES, "machine", name)
}

pub fn mapping_text(name: &str) -> Option<&'static str> {
    MAPPINGS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Every preset and registered component, as JSON for `memtint presets`.
pub fn catalogue_json() -> String {
    use crate::config::{MachineConfig, MemoryConfig};
    let machines: Vec<serde_json::Value> = MACHINES
        .iter()
        .map(|(name, text)| {
            let m = MachineConfig::from_toml(text, name).expect("built-in machine preset parses");
            let capacity = MemoryConfig::resolve(&m).map(|r| r.org.capacity_bytes()).unwrap_or(0);
            serde_json::json!({
                "name": name,
                "description": m.description,
                "device": m.dram.device,
                "density_gbit": m.dram.density_gbit,
                "channels": m.dram.channels,
                "ranks": m.dram.ranks,
                "mapping": m.dram.mapping,
                "capacity_bytes": capacity,
            })
        })
        .collect();
    let devices: Vec<serde_json::Value> = DEVICES
        .iter()
        .map(|(name, _)| {
            let d = device(name).expect("built-in device preset parses");
            serde_json::json!({
                "name": name,
                "standard": d.standard.name(),
                "speed_bin": d.speed_bin,
                "data_rate_mts": d.data_rate_mts,
                "densities_gbit": d.densities(),
            })
        })
        .collect();
    let mappings: Vec<serde_json::Value> = MAPPINGS
        .iter()
        .map(|(name, text)| {
            let description = toml::from_str::<toml::Table>(text)
                .ok()
                .and_then(|t| t.get("description").and_then(|d| d.as_str()).map(str::to_string))
                .unwrap_or_default();
            serde_json::json!({ "name": name, "description": description })
        })
        .collect();
    let mixes: Vec<serde_json::Value> = MIXES
        .iter()
        .map(|(name, text)| {
            let t = toml::from_str::<toml::Table>(text).expect("built-in mix parses");
            serde_json::json!({ "name": name, "description": t.get("description"), "programs": t.get("programs") })
        })
        .collect();
    let generators = crate::trace::GeneratorKind::ALL.map(|k| k.name());
    let trace_formats = [crate::trace::DramTraceFormat::Ramulator, crate::trace::DramTraceFormat::DramSim3].map(|f| f.name());
    serde_json::json!({
        "machines": machines,
        "devices": devices,
        "mappings": mappings,
        "layouts": LAYOUTS,
        "schedulers": crate::controller::scheduler::names(),
        "scheduler_info": crate::controller::scheduler::SCHEDULERS
            .all()
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "summary": s.summary, "fast_path": s.fast_path}))
            .collect::<Vec<_>>(),
        "row_policies": crate::controller::row_policy::names(),
        "row_policy_info": crate::controller::row_policy::ROW_POLICIES
            .all()
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "summary": p.summary}))
            .collect::<Vec<_>>(),
        "refresh": crate::controller::refresh::names(),
        "refresh_info": crate::controller::refresh::REFRESH_MANAGERS
            .all()
            .iter()
            .map(|m| serde_json::json!({"name": m.name, "summary": m.summary}))
            .collect::<Vec<_>>(),
        "generators": generators,
        "trace_formats": trace_formats,
        "mixes": mixes,
        "placement_policies": crate::os::placement::names(),
        "placement_policy_info": crate::os::placement::POLICIES
            .all()
            .iter()
            .map(|p| {
                serde_json::json!({"name": p.name, "summary": p.summary, "needs_profiles": p.needs_profiles,
                                   "binds_threads": p.binds_threads, "needs": p.needs})
            })
            .collect::<Vec<_>>(),
        "profiles": crate::workload::Profile::NAMES,
        "prefetchers": crate::cache::prefetcher::NAMES,
    })
    .to_string()
}
