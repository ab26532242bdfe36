//! Machine configurations (TOML presets under `configs/machines/`, or a user's file) and their
//! resolution into the objects the engine runs: device timing, organisation, address mapping and
//! controller settings. The same names are used in TOML, the Python API and the CLI.

use crate::cache::CacheHierarchyConfig;
pub use crate::controller::config::{ControllerConfig, WriteHandling, WriteSettings, MAX_QUEUE};
use crate::cpu::CoreConfig;
use crate::dram::{DeviceSpec, Organisation, TimingParams};
use crate::error::{Error, Result};
use crate::mapping::AddressMapping;
use crate::os::nodes::{NodeInfo, NodeLayout};
use crate::params::{FloatBound, BANDWIDTH_GBPS};
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
        // One setting given two ways (`--mapping` and `--set dram.mapping`, a sweep's `mapping`
        // and its [overrides.dram]): the second used to win in silence.
        for (given, pointer, key, value) in [
            (mapping, "/dram/mapping", "mapping", "dram.mapping"),
            (scheduler, "/controller/scheduler", "scheduler", "controller.scheduler"),
        ] {
            if let (Some(v), Some(o)) = (given, overrides.and_then(|o| o.pointer(pointer)).and_then(|o| o.as_str())) {
                if v != o {
                    return Err(Error::config(key, format!("'{v}' here and overrides {value} = '{o}': one would be ignored; give one")));
                }
            }
        }
        if let Some(o) = overrides {
            m = m.with_overrides(o)?;
            let tables = o.get("controller").and_then(|c| c.as_object());
            m.controller.run_tables =
                tables.map_or_else(Vec::new, |t| t.iter().filter(|(_, v)| v.is_object()).map(|(k, _)| k.clone()).collect());
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
    /// NUMA nodes (docs/numa.md), cores numbered and memories concatenated node-major. None:
    /// one node with every core and `dram`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeConfig>,
    /// The nodes' interconnect: added latency and link bandwidth between nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<LinksConfig>,
}

/// One NUMA node as written (`[[nodes]]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// For messages and reports ("dram", "nvm"); default "node<i>".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Cores on this node (0: a memory-only tier).
    #[serde(default)]
    pub cores: u32,
    /// False: a node with cores and no memory.
    #[serde(default = "yes")]
    pub memory: bool,
    /// Its memory; default the machine's `[dram]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<DramConfig>,
    /// Its controllers' settings; default the machine's `[controller]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerConfig>,
    /// Bandwidth the placement policies weigh the node by, GB/s (as HMAT reports it); default
    /// its peak: channels x burst bytes per column-command interval, max(tBL, tCCD_S, a throttle's
    /// window / its commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gbps: Option<f64>,
}

fn yes() -> bool {
    true
}

/// `[links]`: what crossing between nodes costs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinksConfig {
    /// `latency_ns[a][b]`, ns added to every access from a core of node a to memory of node b
    /// (request and data together; the diagonal is usually 0).
    pub latency_ns: Vec<Vec<f64>>,
    /// `bandwidth_gbps[a][b]`, GB/s of the link carrying node b's data to node a's cores: a
    /// queue each read's line crosses at that rate. Absent: links never limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gbps: Option<Vec<Vec<f64>>>,
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
    /// A thread on a core that retires nothing for this many of its cycles is stuck and ends the
    /// run with an error naming it (gem5 Ruby's `deadlock_threshold`). No real instruction takes
    /// the default's 10^8 cycles (30 ms at 3.2 GHz).
    pub watchdog_cycles: u64,
}

impl Default for CpuConfig {
    fn default() -> Self {
        let c = CoreConfig::default();
        CpuConfig {
            cores: 4,
            issue_width: c.issue_width,
            rob_size: c.rob_size,
            mshrs: c.mshrs,
            frequency_ghz: c.frequency_ghz,
            watchdog_cycles: 100_000_000,
        }
    }
}

impl CpuConfig {
    pub fn core_config(&self) -> CoreConfig {
        CoreConfig { issue_width: self.issue_width, rob_size: self.rob_size, mshrs: self.mshrs, frequency_ghz: self.frequency_ghz }
    }

    pub fn validate(&self) -> Result<()> {
        crate::params::CORES.check("cpu.cores", self.cores as u64)?;
        if self.watchdog_cycles < 10_000 {
            return Err(Error::config(
                "cpu.watchdog_cycles",
                format!("must be at least 10000 cycles (a loaded DRAM access takes thousands), got {}", self.watchdog_cycles),
            ));
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
    /// Refresh as a device of this density would need it: tRFC from the refresh-timing table
    /// (`dram/refresh_timing.rs`, 1-64 Gb), everything else the device's. For density sweeps
    /// beyond the parts a preset lists, as the Pan thesis's refresh experiments do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_density_gbit: Option<u32>,
}

fn dedup_sorted(mut names: Vec<&str>) -> Vec<&str> {
    names.sort_unstable();
    names.dedup();
    names
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
            let mut m = Self::from_toml(&text, name_or_path)?;
            m.files_beside(path.parent().unwrap_or(Path::new("")));
            return Ok(m);
        }
        Err(Error::unknown("machine", name_or_path, presets::MACHINES.iter().map(|(n, _)| *n)))
    }

    /// A machine file's device and mapping files are read beside it, as `memtint probe
    /// --write-preset` writes them: a relative `.toml` path that names no file from the working
    /// directory but does from `dir` is made that path.
    fn files_beside(&mut self, dir: &Path) {
        let beside = |name: &mut String| {
            let p = Path::new(name.as_str());
            if name.ends_with(".toml") && p.is_relative() && !p.exists() && dir.join(p).exists() {
                *name = dir.join(p).to_string_lossy().into_owned();
            }
        };
        for d in std::iter::once(&mut self.dram).chain(self.nodes.iter_mut().filter_map(|n| n.dram.as_mut())) {
            beside(&mut d.device);
            beside(&mut d.mapping);
        }
    }

    pub fn from_toml(text: &str, origin: &str) -> Result<Self> {
        let m: MachineConfig = crate::error::from_toml(text, origin)?;
        m.controller.warnings()?;
        m.check_variants()?;
        Ok(m)
    }

    /// A `[variants]` key is what a placement policy needs of a machine (`PolicyInfo::
    /// machine_variant`); any other, a misspelling say, would never be used.
    fn check_variants(&self) -> Result<()> {
        let known: Vec<&str> = crate::os::placement::POLICIES.all().iter().filter_map(|p| p.machine_variant).collect();
        match self.variants.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(Error::config(
                format!("variants.{k}"),
                format!(
                    "no placement policy needs a machine variant of this name, so nothing would run on it (variants policies need: {})",
                    dedup_sorted(known).join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    /// Apply a partial table of overrides (`{"dram": {...}, "controller": {...}}`); unknown keys are errors.
    pub fn with_overrides(&self, overrides: &serde_json::Value) -> Result<Self> {
        if !overrides.is_object() {
            // Merged, a list or a value would replace the whole machine and its errors name no key.
            return Err(Error::config(
                "overrides",
                format!("invalid type: {overrides}, expected a table of machine sections (dram, controller, cache, ...)"),
            ));
        }
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
                    // `nodes`, `links` and the optional notes are left out of tables that lack them.
                    None if path.is_empty() && matches!(k.as_str(), "nodes" | "links" | "comparison_note" | "variants") => {
                        b.insert(k.clone(), v.clone());
                    }
                    None if matches!(path, "dram" | "controller" | "cpu" | "cache" | "cache.llc" | "cache.l2" | "links")
                        || path.starts_with("controller.") =>
                    {
                        b.insert(k.clone(), v.clone());
                    }
                    // Named as the run gives it: `[overrides.os]` is not the run's [os].
                    None if path.is_empty() => {
                        let run = matches!(k.as_str(), "os" | "sampling" | "programs" | "processes" | "instructions" | "seed");
                        return Err(Error::config(
                            format!("overrides.{k}"),
                            format!(
                                "not a machine section (a machine has cpu, cache, dram, controller, nodes, links){}",
                                if run { format!("; {k} is the run's own setting: give it outside [overrides]") } else { String::new() }
                            ),
                        ));
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

/// A machine resolved into engine objects. With several nodes, the fields are the first memory
/// node's and `topology` holds every node's.
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    pub machine: MachineConfig,
    pub device: DeviceSpec,
    pub org: Organisation,
    pub timing: TimingParams,
    pub mapping: AddressMapping,
    pub controller: ControllerConfig,
    /// `None` for a one-node machine, which runs exactly as before nodes existed.
    pub topology: Option<Box<Topology>>,
}

/// A multi-node machine resolved: each node's memory, where it lies, and the links.
#[derive(Clone, Debug)]
pub struct Topology {
    pub names: Vec<String>,
    /// Per node: its memory resolved (`None`: no memory) and its first byte in physical memory.
    pub memories: Vec<Option<MemoryConfig>>,
    pub bases: Vec<u64>,
    /// Cores, frames, bandwidths and latencies, as the OS model sees them.
    pub layout: NodeLayout,
    /// `link_gbps[a][b]` (`LinksConfig::bandwidth_gbps`).
    pub link_gbps: Option<Vec<Vec<f64>>>,
}

/// Frames are counted in 4 KiB pages, the only page size modelled (`os.page_bytes`).
const FRAME_SHIFT: u32 = 12;

impl MemoryConfig {
    pub fn resolve(machine: &MachineConfig) -> Result<Self> {
        // Checked whether or not the run has cores or caches (a DRAM-only or real-time run): a
        // machine with 0 cores is wrong in every command, not only in those that read it.
        machine.cpu.validate()?;
        machine.cache.validate()?;
        if machine.nodes.is_empty() {
            if machine.links.is_some() {
                return Err(Error::config("links", "links join nodes: declare [[nodes]] first"));
            }
            return Self::resolve_memory(machine, &machine.dram, &machine.controller);
        }
        let topology = Topology::resolve(machine)?;
        let first = topology.memories.iter().flatten().next().expect("validated: some node has memory");
        let mut cfg = first.clone();
        cfg.machine = machine.clone();
        // One declared node is the one-node machine, which has no link to add a latency on.
        if topology.memories.len() == 1 {
            let own = topology.layout.latency_ns[0][0];
            if own != 0.0 {
                return Err(Error::config(
                    "links.latency_ns[0][0]",
                    format!("{own} ns on a machine of one node, whose accesses cross no link: it would be ignored; leave [links] out"),
                ));
            }
        }
        cfg.topology = (topology.memories.len() > 1).then(|| Box::new(topology));
        Ok(cfg)
    }

    fn resolve_memory(machine: &MachineConfig, d: &DramConfig, controller: &ControllerConfig) -> Result<Self> {
        // A name no preset has is the key's fault: said with it (and a node's index, by the caller).
        // So is a file it names that cannot be read, and a named layout that does not parse.
        let at = |key: &'static str| {
            move |e: Error| match e {
                Error::UnknownName { .. } | Error::Io { .. } => Error::config(format!("dram.{key}"), e.to_string()),
                Error::Config { field, reason } if field == "layout" => Error::config(format!("dram.{key}"), reason),
                e => e,
            }
        };
        let device = presets::device(&d.device).map_err(at("device"))?;
        // The machine's [dram] keys by their own names (`dram.channels`), the device's levels by its.
        let org = device.organisation(d.density_gbit, d.device_width, d.channels, d.ranks, d.bus_width_bits).map_err(|e| match e {
            Error::Config { field, reason }
                if ["channels", "ranks", "bus_width_bits", "density_gbit", "device_width"].contains(&field.as_str()) =>
            {
                Error::config(format!("dram.{field}"), reason)
            }
            e => e,
        })?;
        controller.validate()?;
        let timing = refresh_timing(&device, d, controller, device.timing(d.density_gbit, d.device_width)?)?;
        // Power-down needs the device's exit and residency times; the lane controller does not run it.
        crate::controller::power_down::PowerDown::check(controller.power_down_after, &timing, &device.name)?;
        crate::controller::Implementation::resolve(device.standard, &org, &timing, controller)?;
        let mapping = resolve_mapping(&d.mapping, &org).map_err(at("mapping"))?;
        Ok(MemoryConfig { machine: machine.clone(), device, org, timing, mapping, controller: controller.clone(), topology: None })
    }

    /// Bytes of physical memory (all nodes').
    pub fn memory_bytes(&self) -> u64 {
        match &self.topology {
            None => 1u64 << self.mapping.capacity_bits(),
            Some(t) => t.memories.iter().flatten().map(|m| 1u64 << m.mapping.capacity_bits()).sum(),
        }
    }

    /// Address bits physical memory spans (rounded up over several nodes).
    pub fn address_bits(&self) -> u32 {
        let bytes = self.memory_bytes();
        64 - (bytes - 1).leading_zeros()
    }

    /// The peak bandwidth of this memory, GB/s: a burst per column-command interval per channel.
    pub fn peak_gbps(&self) -> f64 {
        let t = &self.timing;
        let mut cycles = t.tBL.max(t.tCCD_S) as f64;
        if t.col_window > 0 {
            // A throttle's average: its commands spread over its window.
            cycles = cycles.max(t.col_window as f64 / t.col_window_commands as f64);
        }
        let interval = cycles * t.tCK_ns;
        self.org.channels as f64 * self.org.burst_bytes() as f64 / interval
    }

    /// The nodes as the OS model sees them (one node for a one-node machine).
    pub fn node_layout(&self) -> NodeLayout {
        match &self.topology {
            Some(t) => t.layout.clone(),
            None => NodeLayout::single(self.machine.cpu.cores, (self.memory_bytes() >> FRAME_SHIFT) as u32, self.peak_gbps()),
        }
    }
}

/// The device's timing with the refresh the run asks for: `dram.refresh_density_gbit`'s tRFC,
/// then the refresh manager's own timing (DDR4 FGR shortens tREFI and tRFC).
fn refresh_timing(device: &DeviceSpec, d: &DramConfig, controller: &ControllerConfig, mut t: TimingParams) -> Result<TimingParams> {
    use crate::controller::refresh::{self, RefreshDevice};
    let key = "dram.refresh_density_gbit";
    if let Some(density) = d.refresh_density_gbit {
        let row = crate::dram::refresh_timing::trfc_row(device.standard, density, key)?;
        t.tRFC = crate::dram::device::ns_to_cycles(row.trfc1_ns, t.tCK_ns);
    }
    let density_gbit = d.refresh_density_gbit.unwrap_or(d.density_gbit);
    let dev = RefreshDevice { standard: device.standard, density_gbit, t_ck_ns: t.tCK_ns, t_refi: t.tREFI, t_rfc: t.tRFC };
    (t.tREFI, t.tRFC) = refresh::timing(controller, &dev)?;
    // As the device files are checked: a row cycle fits between two refreshes.
    if t.tREFI <= t.tRFC + t.tRC {
        return Err(Error::config(
            if d.refresh_density_gbit.is_some() { key } else { "controller.refresh" },
            format!(
                "refresh leaves no row cycle: tREFI {} cycles <= tRFC {} + tRC {} ({} refresh, {density_gbit} Gb)",
                t.tREFI, t.tRFC, t.tRC, controller.refresh
            ),
        ));
    }
    Ok(t)
}

/// Most nodes a machine may declare (node masks are 64 bits).
pub const MAX_NODES: usize = 64;

impl Topology {
    fn resolve(machine: &MachineConfig) -> Result<Self> {
        let n = machine.nodes.len();
        let key = |i: usize, k: &str| format!("nodes[{i}].{k}");
        if n > MAX_NODES {
            return Err(Error::config("nodes", format!("{n} nodes declared; at most {MAX_NODES} (Linux's default NODES_SHIFT allows 64)")));
        }
        let cores: u32 = machine.nodes.iter().map(|nd| nd.cores).sum();
        if cores != machine.cpu.cores {
            return Err(Error::config(
                "nodes",
                format!(
                    "the nodes have {cores} cores in all but cpu.cores is {}; give each node its cores so they add up",
                    machine.cpu.cores
                ),
            ));
        }
        let (mut memories, mut bases, mut nodes, mut names) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut base, mut first_core) = (0u64, 0u32);
        let mut clock: Option<(f64, u64, usize)> = None;
        for (i, nd) in machine.nodes.iter().enumerate() {
            if !nd.memory && nd.cores == 0 {
                return Err(Error::config(format!("nodes[{i}]"), "has neither cores nor memory"));
            }
            if !nd.memory && (nd.dram.is_some() || nd.bandwidth_gbps.is_some()) {
                return Err(Error::config(key(i, "memory"), "is false, so the node's dram and bandwidth_gbps mean nothing; remove them"));
            }
            if let Some(b) = nd.bandwidth_gbps {
                BANDWIDTH_GBPS.check(key(i, "bandwidth_gbps"), b)?;
            }
            let mem = if nd.memory {
                let dram = nd.dram.as_ref().unwrap_or(&machine.dram);
                let controller = nd.controller.as_ref().unwrap_or(&machine.controller);
                let m = MemoryConfig::resolve_memory(machine, dram, controller).map_err(|e| match e {
                    // A key the node takes from the machine's [dram] or [controller] is the machine's.
                    Error::Config { field, reason }
                        if !(field.starts_with("dram") && nd.dram.is_none()
                            || field.starts_with("controller") && nd.controller.is_none()) =>
                    {
                        Error::config(format!("nodes[{i}].{field}"), reason)
                    }
                    e => e,
                })?;
                let here = (m.timing.tCK_ns, m.org.burst_bytes(), i);
                match clock {
                    None => clock = Some(here),
                    Some((tck, burst, j)) if (tck - here.0).abs() > 1e-9 || burst != here.1 => {
                        return Err(Error::config(
                            key(i, "dram.device"),
                            format!(
                                "runs at tCK {} ns with {}-byte bursts, node {j} at tCK {tck} ns with {burst}-byte bursts: the nodes' \
                                 memories share one clock and line size (slow a tier by its timing instead: docs/numa.md)",
                                here.0, here.1
                            ),
                        ))
                    }
                    Some(_) => {}
                }
                Some(m)
            } else {
                None
            };
            let bytes = mem.as_ref().map_or(0, |m| 1u64 << m.mapping.capacity_bits());
            let frames = (base >> FRAME_SHIFT) as u32..((base + bytes) >> FRAME_SHIFT) as u32;
            let bandwidth_gbps = match &mem {
                Some(m) => nd.bandwidth_gbps.unwrap_or_else(|| m.peak_gbps()),
                None => 0.0,
            };
            nodes.push(NodeInfo { cores: first_core..first_core + nd.cores, frames, bandwidth_gbps });
            let name = nd.name.clone().unwrap_or_else(|| format!("node{i}"));
            if name.trim().is_empty() {
                return Err(Error::config(key(i, "name"), "is empty: name the node or leave the key out (node<i>)"));
            }
            if let Some(j) = names.iter().position(|n| *n == name) {
                // Statistics, weights and policies name nodes: two of one name would be one node.
                return Err(Error::config(key(i, "name"), format!("{name:?} is also node {j}'s name; give each node its own")));
            }
            names.push(name);
            bases.push(base);
            memories.push(mem);
            base += bytes;
            first_core += nd.cores;
        }
        if memories.iter().all(|m| m.is_none()) {
            return Err(Error::config("nodes", "no node has memory (memory = false on every node)"));
        }
        if (base >> FRAME_SHIFT) > 1 << 31 {
            return Err(Error::config(
                "nodes",
                format!("{base} bytes of memory are more than the 2^31 page frames the allocator supports"),
            ));
        }
        // Left out, every remote access would cost what a local one does: said, not assumed.
        if n > 1 && machine.links.is_none() {
            return Err(Error::config(
                "links",
                format!(
                    "a machine of {n} nodes needs [links] latency_ns: a matrix of {n} x {n} values, the ns a core of one node adds to \
                     reach another node's memory (zeros for none)"
                ),
            ));
        }
        let links = machine.links.clone().unwrap_or(LinksConfig { latency_ns: vec![vec![0.0; n]; n], bandwidth_gbps: None });
        check_matrix("links.latency_ns", &links.latency_ns, n, LINK_NS, "")?;
        if let Some(bw) = &links.bandwidth_gbps {
            check_matrix("links.bandwidth_gbps", bw, n, BANDWIDTH_GBPS, "; leave the table out for links that never limit")?;
        }
        Ok(Topology { names, memories, bases, layout: NodeLayout { nodes, latency_ns: links.latency_ns }, link_gbps: links.bandwidth_gbps })
    }
}

/// What a link adds to an access crossing it (each is converted to cycles and added).
const LINK_NS: FloatBound =
    FloatBound { min: 0.0, max: 100_000.0, unit: "ns", why: "100 us: a thousand times a remote access across sockets" };

/// An `n` x `n` matrix of values within `bound`, errors naming the entry (`more` ends the reason).
fn check_matrix(key: &str, m: &[Vec<f64>], n: usize, bound: FloatBound, more: &str) -> Result<()> {
    if m.len() != n {
        return Err(Error::config(key, format!("must be square, one row per node: {} rows for {n} nodes", m.len())));
    }
    for (a, row) in m.iter().enumerate() {
        if row.len() != n {
            return Err(Error::config(
                format!("{key}[{a}]"),
                format!("must be square, one entry per node: {} entries for {n} nodes", row.len()),
            ));
        }
        for (b, &v) in row.iter().enumerate() {
            // A node's own link is never crossed: only off-diagonal bandwidths must be > 0.
            let checked = a != b || key.ends_with("latency_ns");
            if let Some(reason) = bound.refuse(v).filter(|_| checked) {
                return Err(Error::config(format!("{key}[{a}][{b}]"), format!("{reason}{more}")));
            }
        }
    }
    Ok(())
}

/// A mapping preset name, a path to a mapping TOML, or a named layout.
pub fn resolve_mapping(name: &str, org: &Organisation) -> Result<AddressMapping> {
    if let Some(text) = presets::mapping_text(name) {
        return AddressMapping::from_toml(text, &format!("configs/mappings/{name}.toml"), org);
    }
    let path = Path::new(name);
    // A path (a separator in it) is a file, present or not: its absence is said as such.
    if name.ends_with(".toml") || name.contains('/') || path.exists() {
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

    #[test]
    fn a_mapping_or_scheduler_given_two_ways_that_disagree_is_an_error() {
        let src = MachineSource::Name("i7-860".into());
        let o = serde_json::json!({"dram": {"mapping": "i7-860-bpm-plus"}, "controller": {"scheduler": "fr-fcfs"}});
        let err = src.load_with(Some(&o), Some("i7-860"), None).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid configuration: mapping: 'i7-860' here and overrides dram.mapping = 'i7-860-bpm-plus': one would be ignored; give one"
        );
        let err = src.load_with(Some(&o), None, Some("fcfs")).unwrap_err().to_string();
        assert!(err.contains("scheduler: 'fcfs' here and overrides controller.scheduler = 'fr-fcfs'"), "{err}");
        // The same value both ways is one setting.
        let m = src.load_with(Some(&o), Some("i7-860-bpm-plus"), Some("fr-fcfs")).unwrap();
        assert_eq!((m.dram.mapping.as_str(), m.controller.scheduler.as_str()), ("i7-860-bpm-plus", "fr-fcfs"));
    }

    #[test]
    fn a_machine_file_reads_its_mapping_beside_it() {
        let dir = std::env::temp_dir().join(format!("memtint-beside-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("m.mapping.toml"), presets::mapping_text("xor-bank").unwrap()).unwrap();
        let machine = presets::machine_text("xor-bank").unwrap().replace("mapping = \"xor-bank\"", "mapping = \"m.mapping.toml\"");
        std::fs::write(dir.join("m.toml"), machine).unwrap();
        let m = MachineConfig::load(dir.join("m.toml").to_str().unwrap()).unwrap();
        assert_eq!(Path::new(&m.dram.mapping), dir.join("m.mapping.toml"));
        let cfg = MemoryConfig::resolve(&m).unwrap();
        let preset = MemoryConfig::resolve(&MachineConfig::load("xor-bank").unwrap()).unwrap();
        assert_eq!(cfg.mapping.describe(), preset.mapping.describe());
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
    fn an_override_outside_the_machine_is_named_as_the_run_gives_it() {
        let e = override_error(json!({"os": {"policy": "bpm"}}));
        assert!(e.contains("overrides.os: not a machine section") && e.contains("the run's own setting"), "{e}");
        let e = override_error(json!({"bogus": {"x": 1}}));
        assert!(e.contains("overrides.bogus: not a machine section") && !e.contains("run's own"), "{e}");
        // A level of the machine's [dram] by its key there, whatever checks it.
        let m = MachineConfig::load("ddr4-2400").unwrap().with_overrides(&json!({"dram": {"channels": 3}})).unwrap();
        let e = MemoryConfig::resolve(&m).unwrap_err().to_string();
        assert!(e.contains("dram.channels: must be a non-zero power of two, got 3"), "{e}");
        // And the cores and caches whatever the run reads of them.
        let m = MachineConfig::load("ddr4-2400").unwrap().with_overrides(&json!({"cpu": {"cores": 0}})).unwrap();
        assert!(MemoryConfig::resolve(&m).unwrap_err().to_string().contains("cpu.cores"));
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
        assert!(e.contains("overrides: invalid type: 5, expected a table"), "{e}");
        let e = override_error(json!([1]));
        assert!(e.contains("overrides: invalid type: [1], expected a table"), "{e}");
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
    fn a_variant_no_policy_needs_is_refused_by_name() {
        // A misspelt variant was accepted and never used: bpm-plus then ran on the machine itself.
        let text = presets::machine_text("i7-860").unwrap().replace("page-channel =", "page-chanel =");
        let e = MachineConfig::from_toml(&text, "m.toml").unwrap_err().to_string();
        assert!(e.contains("variants.page-chanel") && e.contains("need: page-channel"), "{e}");
    }

    #[test]
    fn an_unknown_override_key_is_named() {
        let e = override_error(json!({"controller": {"turbo": 1}}));
        assert!(e.contains("turbo"), "{e}");
        let e = override_error(json!({"gpu": {"cores": 1}}));
        assert!(e.contains("gpu"), "{e}");
    }
}
