//! Placement policies choose the frame for a process's first touch of a page. One file each;
//! registered in `POLICIES` below. Coloured policies share `colour_sets.rs`: per-process
//! colour sets, round-robin over owned colours, overflow.

mod bpm;
mod bpm_plus;
mod bpm_plus_balanced;
mod buddy_order;
mod bw_interleave;
mod bw_local;
mod bw_random;
mod camc;
mod ccps;
mod channel_only;
mod colour_sets;
mod dram_only;
mod interleave;
mod local;
mod mcp;
mod node_colours;
pub(crate) mod node_sets;
mod random_interleave;
mod tintmalloc;
mod vertical;
mod weighted_interleave;

pub use bpm::bpm;
pub use bpm_plus::bpm_plus;
pub use buddy_order::BuddyOrder;
pub use camc::CamcParams;
pub use ccps::{params as ccps_params, CcpsParams, CcpsRegions};
pub use colour_sets::SHAPING_KEYS;
pub use colour_sets::{ColourSets, ColourSplit};
pub use mcp::{Mcp, McpParams};
pub use node_sets::{linux_auto_weights, Clusters};
pub use random_interleave::RandomInterleave;
pub use tintmalloc::{TintParams, TintThread};
pub use vertical::{policy_bits, vertical, VerticalParams, HVR_SPACE, NAMED_VERTICAL};

use super::buddy::{BuddyAllocator, Frame};
use super::colour::{ColourBits, ColourSpace};
use super::config::OsConfig;
use super::nodes::NodeLayout;
use crate::error::{Error, Result};
use crate::mapping::AddressMapping;
use crate::params::{field_names, ParamSchema};
use crate::registry::{Component, Registry};

/// The uncoloured baseline policy (`buddy_order.rs`), the default and the one identity
/// translation allows.
pub const BASELINE: &str = buddy_order::INFO.name;

/// The machine variant whose mapping selects the channel by a bit above the page offset, so
/// the OS chooses a page's channel (BPM+'s BIOS setting on the i7-860).
pub const PAGE_CHANNEL: &str = "page-channel";

/// What policies that partition by core, channel or node see of the machine.
pub struct MachineView<'a> {
    pub mapping: &'a AddressMapping,
    pub cores: u32,
    pub nodes: &'a NodeLayout,
    /// Each thread's process and the core it is bound to, in thread order (per-thread policies
    /// colour by it: `tintmalloc`; `camc` puts a process's colours on its first thread's node).
    pub threads: &'a [ThreadPlace],
}

/// A thread as placement policies see it before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadPlace {
    pub process: u32,
    pub core: u32,
}

/// One thread per process, process `p` on core `p % cores`: the view of callers without threads.
pub fn one_thread_each(processes: u32, cores: u32) -> Vec<ThreadPlace> {
    (0..processes).map(|p| ThreadPlace { process: p, core: p % cores.max(1) }).collect()
}

/// A frame a node-colour policy chose: its node and its frame within the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodePlacement {
    pub node: u32,
    pub placed: Placement,
}

/// A first touch as node policies see it.
#[derive(Clone, Copy, Debug)]
pub struct NodeFault {
    pub pid: u32,
    pub thread: u32,
    pub core: u32,
    /// The faulting core's node.
    pub node: u32,
    pub vpage: u64,
}

/// The frame a policy chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub frame: Frame,
    /// True when the process's own colours were full and the frame came from another colour.
    pub borrowed: bool,
}

pub trait PlacementPolicy: Send {
    fn name(&self) -> &'static str;

    /// The colour space the buddy allocator's free lists are indexed by.
    fn colour_space(&self) -> &ColourSpace;

    /// Colours process `pid` owns (every colour of the space for unpartitioned policies).
    fn colours_of(&self, pid: u32) -> &[u32];

    /// A frame for the first touch of virtual page `vpage` by process `pid`.
    fn place(&mut self, pid: u32, vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement>;

    /// `place` for a thread bound to `core`; only core-partitioning policies (`ccps`) use it.
    fn place_on(&mut self, pid: u32, _core: u32, vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        self.place(pid, vpage, alloc)
    }

    /// A dynamic policy's new colours, one list per process (`os/dynamic`): processes listing
    /// the same colours share them; otherwise lists are disjoint. Colour-set policies only.
    fn set_colours(&mut self, _colours: &[Vec<u32>]) -> Result<()> {
        Err(crate::error::Error::config("os.dynamic", format!("policy {} does not change colours while it runs", self.name())))
    }

    /// Pages placed outside the policy's region because it was full (`ccps`'s spill count).
    fn spilled_pages(&self) -> u64 {
        0
    }

    /// Node policies (`PolicyInfo::places_nodes`): the node for a first touch, before the OS
    /// falls back to the nearest node with free frames; `None` from colour policies.
    fn choose_node(&mut self, _fault: &NodeFault) -> Option<u32> {
        None
    }

    /// Node-colour policies (`PolicyInfo::colours_nodes`: `camc`, `tintmalloc`): a node and a
    /// frame of it for a first touch, from the nodes' allocators (`None`: a node without
    /// memory), each indexed by `colour_space()` over the node's own addresses.
    fn place_on_nodes(&mut self, _fault: &NodeFault, _nodes: &mut [Option<BuddyAllocator>]) -> Result<NodePlacement> {
        Err(crate::error::Error::config("os.policy", format!("internal error: policy {} does not colour nodes", self.name())))
    }
}

/// What a placement policy is, needs and how to make one, declared in its own file.
pub struct PolicyInfo {
    pub name: &'static str,
    /// One line for listings (`memtint presets`).
    pub summary: &'static str,
    /// It needs each program's profile (`os.profiles`: MPKI and row-buffer hit rate alone);
    /// `memtint compare` and sweeps run the programs alone first.
    pub needs_profiles: bool,
    /// It partitions by core, binding threads by this rule (`os::binding`) with periodic load
    /// balancing off, unless `[os.sched]` says otherwise.
    pub binds_threads: Option<&'static str>,
    /// What the machine must offer, for listings (the policy's own check gives the error).
    pub needs: Option<&'static str>,
    /// The machine variant it needs (a key of a machine's `[variants]`, e.g. `page-channel`):
    /// a sweep runs it on that variant of each machine that declares one.
    pub machine_variant: Option<&'static str>,
    /// Its parameters (`[os.<name>]`), declared in its file.
    pub params: ParamSchema,
    /// It chooses nodes (`PlacementPolicy::choose_node`), not colours: it runs on multi-node
    /// machines, the colour policies only on one-node ones.
    pub places_nodes: bool,
    /// It colours within nodes (`PlacementPolicy::place_on_nodes`): each node's frames are
    /// indexed by its colour space; it runs on one-node and multi-node machines.
    pub colours_nodes: bool,
    /// Another policy's table it reads (IMPS reads MCP's thresholds, `[os.mcp]`).
    pub reads_table: Option<&'static str>,
    /// What it partitions or places by, as a phrase for sentences ("bank partitioning"): a
    /// report names it where the numbers show its effect. Empty: the report uses the name.
    pub mechanism: &'static str,
    /// The flat `[os]` keys it reads that not every policy does (`os.colours`, `os.strict`...;
    /// `os.profiles` goes with `needs_profiles`): one set under a policy that does not declare
    /// it is warned of.
    pub reads_keys: &'static [&'static str],
    pub build: Builder,
}

/// Makes the policy for a configuration, colour bits, process count and machine.
pub type Builder = fn(&OsConfig, &ColourBits, u32, &MachineView) -> Result<Box<dyn PlacementPolicy>>;

impl PolicyInfo {
    pub const fn new(name: &'static str, summary: &'static str, build: Builder) -> Self {
        PolicyInfo {
            name,
            summary,
            needs_profiles: false,
            binds_threads: None,
            needs: None,
            machine_variant: None,
            params: ParamSchema::NONE,
            places_nodes: false,
            colours_nodes: false,
            reads_table: None,
            mechanism: "",
            reads_keys: &[],
            build,
        }
    }
    pub const fn places_nodes(self) -> Self {
        PolicyInfo { places_nodes: true, ..self }
    }
    pub const fn colours_nodes(self) -> Self {
        PolicyInfo { places_nodes: true, colours_nodes: true, ..self }
    }
    pub const fn needs_profiles(self) -> Self {
        PolicyInfo { needs_profiles: true, ..self }
    }
    pub const fn binds_threads(self, rule: &'static str) -> Self {
        PolicyInfo { binds_threads: Some(rule), ..self }
    }
    pub const fn needs(self, what: &'static str) -> Self {
        PolicyInfo { needs: Some(what), ..self }
    }
    pub const fn machine_variant(self, variant: &'static str) -> Self {
        PolicyInfo { machine_variant: Some(variant), ..self }
    }
    pub const fn params(self, params: ParamSchema) -> Self {
        PolicyInfo { params, ..self }
    }
    pub const fn reads_table(self, table: &'static str) -> Self {
        PolicyInfo { reads_table: Some(table), ..self }
    }
    pub const fn mechanism(self, phrase: &'static str) -> Self {
        PolicyInfo { mechanism: phrase, ..self }
    }
    pub const fn reads_keys(self, keys: &'static [&'static str]) -> Self {
        PolicyInfo { reads_keys: keys, ..self }
    }
    /// Whether it reads flat `[os]` key `key` (see `reads_keys`).
    pub fn reads_key(&self, key: &str) -> bool {
        self.reads_keys.contains(&key) || (key == "profiles" && self.needs_profiles)
    }
}

impl Component for PolicyInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The placement policies: the built-in ones, one line each (`POLICIES.register` adds more).
pub static POLICIES: Registry<PolicyInfo> = Registry::new(
    "placement policy",
    &[
        &buddy_order::INFO,
        &bpm::INFO,
        &bpm_plus::INFO,
        &bpm_plus_balanced::INFO,
        &channel_only::INFO,
        &vertical::CACHE_ONLY,
        &vertical::BANK_ONLY,
        &vertical::BANK_ONLY_8,
        &vertical::A_VP,
        &vertical::B_VP,
        &vertical::C_VP,
        &vertical::VERTICAL,
        &vertical::HVR,
        &random_interleave::INFO,
        &ccps::INFO,
        &mcp::MCP,
        &mcp::IMPS,
        &local::INFO,
        &interleave::INFO,
        &weighted_interleave::INFO,
        &dram_only::INFO,
        &bw_interleave::INFO,
        &bw_random::INFO,
        &bw_local::INFO,
        &camc::INFO,
        &tintmalloc::INFO,
    ],
);

pub fn names() -> Vec<&'static str> {
    POLICIES.names()
}

/// The policy registered as `name`.
pub fn info(name: &str) -> Result<&'static PolicyInfo> {
    // Named by its key, as os.dynamic is, so a run file's error gives its line.
    POLICIES.get(name).map_err(|e| Error::config("os.policy", e.to_string()))
}

pub fn build(cfg: &OsConfig, bits: &ColourBits, processes: u32, machine: &MachineView) -> Result<Box<dyn PlacementPolicy>> {
    let info = info(&cfg.policy)?;
    warnings(cfg)?;
    (info.build)(cfg, bits, processes, machine)
}

/// `os.exclude_bits` takes bits out of the LLC colours and HVR's B/C/O classes. Under a policy
/// whose colour space and colour sets come out the same without it (bpm's bank bits, buddy) it
/// changes nothing, which is said rather than dropped unseen. A dynamic policy re-partitions from
/// the classes later, so it is not judged by its first sets.
pub fn exclusion_warning(
    cfg: &OsConfig,
    policy: &dyn PlacementPolicy,
    bits: &ColourBits,
    processes: u32,
    machine: &MachineView,
) -> Option<String> {
    if cfg.exclude_bits.is_empty() || cfg.dynamic != "none" {
        return None;
    }
    let plain = bits.without_exclusions(machine.mapping).ok()?;
    let other = build(cfg, &plain, processes, machine).ok()?;
    let masks = |p: &dyn PlacementPolicy| p.colour_space().functions().iter().map(|f| f.mask()).collect::<Vec<_>>();
    let same = masks(policy) == masks(&*other) && (0..processes).all(|pid| policy.colours_of(pid) == other.colours_of(pid));
    same.then(|| {
        format!(
            "os.exclude_bits is set but os.policy = \"{}\" colours by none of the bits it takes out ({:?}; its colour space and sets are the same without them): nothing reads it",
            cfg.policy, cfg.exclude_bits
        )
    })
}

/// Checks every policy table and flat key of `[os]` against the registered policies, and
/// returns the warnings a run carries (deprecated keys, and what the policy in use says of its
/// values).
pub fn warnings(cfg: &OsConfig) -> Result<Vec<String>> {
    let mut components: Vec<(&str, ParamSchema)> = POLICIES.all().iter().map(|p| (p.name, p.params)).collect();
    components.extend(crate::os::migration::MIGRATIONS.all().iter().map(|m| (m.name, m.params)));
    components.extend(crate::os::resctrl::RESCTRL.all().iter().map(|r| (r.name, r.params)));
    components.extend(crate::os::dynamic::DYNAMIC.all().iter().map(|d| (d.name, d.params)));
    for (i, name) in cfg.resctrl.iter().enumerate() {
        crate::os::resctrl::RESCTRL.get(name).map_err(|e| crate::error::Error::config("os.resctrl", e.to_string()))?;
        if cfg.resctrl[..i].contains(name) {
            return Err(crate::error::Error::config(format!("os.resctrl[{i}]"), format!("\"{name}\" is named twice")));
        }
    }
    let mut in_use = vec![cfg.policy.as_str(), cfg.migration.as_str(), cfg.dynamic.as_str()];
    in_use.extend(cfg.resctrl.iter().map(String::as_str));
    let mut warnings = cfg.params.check("os", &components, &in_use, &field_names::<OsConfig>())?;
    // A placement policy's, a dynamic policy's, a migration's or a hardware partitioning's table
    // while another (or none) is in force is read by nothing: said, not dropped unseen.
    let reads = info(&cfg.policy).ok().and_then(|p| p.reads_table);
    for name in cfg.params.table_names() {
        let placement = POLICIES.get(name).is_ok_and(|p| !p.params.is_empty());
        if placement && name != cfg.policy && Some(name) != reads {
            warnings.push(format!("[os.{name}] is set but os.policy = \"{}\": nothing reads it", cfg.policy));
        }
    }
    let owned = [
        ("os.dynamic", cfg.dynamic.as_str(), crate::os::dynamic::DYNAMIC.names()),
        ("os.migration", cfg.migration.as_str(), crate::os::migration::MIGRATIONS.names()),
    ];
    for name in cfg.params.table_names() {
        for (selector, chosen, names) in &owned {
            if names.contains(&name) && name != *chosen {
                warnings.push(format!("[os.{name}] is set but {selector} = \"{chosen}\": nothing reads it"));
            }
        }
        if crate::os::resctrl::RESCTRL.names().contains(&name) && !cfg.resctrl.iter().any(|r| r == name) {
            warnings.push(format!("[os.{name}] is set but os.resctrl does not name \"{name}\": nothing reads it"));
        }
    }
    // Likewise a flat key some policy reads, under a policy that does not (`os.colours` under
    // buddy reached every bank in silence).
    if let Ok(policy) = info(&cfg.policy) {
        let given = serde_json::to_value(cfg).unwrap_or_default();
        let default = serde_json::to_value(OsConfig::default()).unwrap_or_default();
        let mut keys: Vec<&str> = vec!["profiles"];
        for key in POLICIES.all().iter().flat_map(|p| p.reads_keys.iter()) {
            if !keys.contains(key) {
                keys.push(key);
            }
        }
        for key in keys {
            if given.get(key) != default.get(key) && !policy.reads_key(key) {
                warnings.push(format!("os.{key} is set but os.policy = \"{}\": nothing reads it", cfg.policy));
            }
        }
        // Explicit colour sets replace the even split.
        if policy.reads_key("colour_split") && cfg.colours.is_some() && given.get("colour_split") != default.get("colour_split") {
            warnings.push("os.colour_split is set but os.colours gives the colour sets: nothing reads it".to_string());
        }
    }
    // UCP's epoch under a static allocation times nothing.
    if cfg.resctrl.iter().any(|r| r == "cat") {
        let cat: crate::os::resctrl::cat::CatParams = cfg.params.get("os", "cat", &[])?;
        if cat.allocation == "static" && cat.epoch_ns != crate::os::resctrl::cat::CatParams::default().epoch_ns {
            warnings.push("os.cat.epoch_ns is set but os.cat.allocation = \"static\": the ways never change".to_string());
        }
    }
    // The scanner's keys; its costs are also re-colouring's, so those are not warned of.
    if cfg.migration == "none" {
        let default = crate::os::migration::NumaScanConfig::default();
        for (key, set) in
            [("period_ns", cfg.numa_scan.period_ns != default.period_ns), ("scan_mb", cfg.numa_scan.scan_mb != default.scan_mb)]
        {
            if set {
                warnings.push(format!("os.numa_scan.{key} is set but os.migration = \"none\": nothing scans"));
            }
        }
    }
    Ok(warnings)
}

/// The parameters of the policy in use, every value as the run uses it (`{name: table}`, or
/// empty for a policy without parameters).
pub fn params_in_use(cfg: &OsConfig) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut out = serde_json::Map::new();
    let p = info(&cfg.policy)?;
    if !p.params.is_empty() {
        out.insert(p.name.to_string(), cfg.params.resolved("os", p.name, &p.params)?.into());
    }
    let m = crate::os::migration::info(&cfg.migration)?;
    if !m.params.is_empty() {
        out.insert(m.name.to_string(), cfg.params.resolved("os", m.name, &m.params)?.into());
    }
    let d = crate::os::dynamic::info(&cfg.dynamic)?;
    if !d.params.is_empty() {
        out.insert(d.name.to_string(), cfg.params.resolved("os", d.name, &d.params)?.into());
    }
    for name in &cfg.resctrl {
        let r = crate::os::resctrl::RESCTRL.get(name)?;
        out.insert(r.name.to_string(), cfg.params.resolved("os", r.name, &r.params)?.into());
    }
    Ok(out)
}
