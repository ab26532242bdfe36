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
pub const DEVICES: &[(&str, &str)] = &[
    preset!("devices", "ddr2-800"),
    preset!("devices", "ddr3-1333"),
    preset!("devices", "ddr3-1600"),
    preset!("devices", "ddr4-2400"),
    preset!("devices", "ddr4-2400-throttled-2x"),
    preset!("devices", "ddr4-2400-throttled-5x"),
    preset!("devices", "ddr4-2400-throttled-10x"),
    preset!("devices", "lpddr4-3200"),
    preset!("devices", "ddr5-4800"),
];

/// Machines (`configs/machines`).
pub const MACHINES: &[(&str, &str)] = &[
    preset!("machines", "ddr2-800"),
    preset!("machines", "ddr3-1333"),
    preset!("machines", "ddr3-1600"),
    preset!("machines", "ddr3-1600-8r"),
    preset!("machines", "ddr4-2400"),
    preset!("machines", "ddr4-2400-2ch2r"),
    preset!("machines", "ddr4-2400-8r"),
    preset!("machines", "ddr4-2400-xor"),
    preset!("machines", "lpddr4-3200"),
    preset!("machines", "ddr5-4800"),
    preset!("machines", "i7-860"),
    preset!("machines", "i7-860-bpm-plus"),
    preset!("machines", "i7-860-8t"),
    preset!("machines", "i7-860-8t-bpm-plus"),
    preset!("machines", "xor-bank"),
    preset!("machines", "opteron-6128-node"),
    preset!("machines", "ccps-4c-64b"),
    preset!("machines", "ccps-8c-64b"),
    preset!("machines", "ccps-16c-64b"),
    preset!("machines", "ccps-4c-256b"),
    preset!("machines", "ccps-8c-256b"),
    preset!("machines", "ccps-16c-256b"),
    preset!("machines", "tcm-24c"),
    preset!("machines", "opteron-6128"),
    preset!("machines", "tiering-2to1"),
    preset!("machines", "tiering-5to1"),
    preset!("machines", "tiering-10to1"),
];

/// Explicit address mappings (`configs/mappings`); named layouts such as `RoBaRaCoCh` need no file.
pub const MAPPINGS: &[(&str, &str)] = &[
    preset!("mappings", "i7-860"),
    preset!("mappings", "i7-860-bpm-plus"),
    preset!("mappings", "xor-bank"),
    preset!("mappings", "opteron-6128-node"),
    preset!("mappings", "ddr4-xor"),
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

/// A device preset by name, or a device TOML file by path (a device of the user's own, such as
/// a slow memory tier's).
pub fn device(name: &str) -> Result<DeviceSpec> {
    if let Ok(text) = find(DEVICES, "device", name) {
        return DeviceSpec::from_toml(text, &format!("configs/devices/{name}.toml"));
    }
    let path = std::path::Path::new(name);
    if name.ends_with(".toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| crate::error::Error::io(path, e))?;
        return DeviceSpec::from_toml(&text, name);
    }
    find(DEVICES, "device", name).and_then(|text| DeviceSpec::from_toml(text, name))
}

pub fn machine_text(name: &str) -> Result<&'static str> {
    find(MACHINES, "machine", name)
}

pub fn mapping_text(name: &str) -> Option<&'static str> {
    MAPPINGS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
