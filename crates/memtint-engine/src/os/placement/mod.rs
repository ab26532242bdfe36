//! Placement policies choose the frame for a process's first touch of a page. One file each;
//! registered in `NAMES` and `build` below. Coloured policies share `colour_sets.rs`: per-process
//! colour sets, round-robin over owned colours, overflow.

mod bpm;
mod bpm_plus;
mod buddy_order;
mod ccps;
mod colour_sets;
mod mcp;
mod random_interleave;
mod vertical;

pub use bpm::bpm;
pub use bpm_plus::bpm_plus;
pub use buddy_order::BuddyOrder;
pub use ccps::{CcpsConfig, CcpsRegions};
pub use colour_sets::{ColourSets, ColourSplit};
pub use mcp::{AppProfile, Mcp, McpConfig};
pub use random_interleave::RandomInterleave;
pub use vertical::{vertical, NAMED_VERTICAL};

use super::buddy::{BuddyAllocator, Frame};
use super::colour::{ColourBits, ColourSpace};
use super::os_model::OsConfig;
use crate::error::{Error, Result};
use crate::mapping::AddressMapping;

/// What policies that partition by core or channel see of the machine.
pub struct MachineView<'a> {
    pub mapping: &'a AddressMapping,
    pub cores: u32,
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

    /// Pages placed outside the policy's region because it was full (`ccps`'s spill count).
    fn spilled_pages(&self) -> u64 {
        0
    }
}

/// Registered policies, by name.
pub const NAMES: &[&str] = &[
    "buddy",
    "bpm",
    "bpm-plus",
    "cache-only",
    "bank-only",
    "bank-only-8",
    "a-vp",
    "b-vp",
    "c-vp",
    "vertical",
    "random-interleave",
    "ccps",
    "mcp",
    "imps",
];

pub fn build(cfg: &OsConfig, bits: &ColourBits, processes: u32, machine: &MachineView) -> Result<Box<dyn PlacementPolicy>> {
    let name = cfg.policy.as_str();
    if cfg.vertical.is_some() && name != "vertical" {
        return Err(Error::config("os.vertical", format!("applies to policy 'vertical' only, not '{name}'")));
    }
    Ok(match name {
        "buddy" => Box::new(BuddyOrder::new(cfg.seed)),
        "bpm" => Box::new(bpm(cfg, bits, processes)?),
        "bpm-plus" => Box::new(bpm_plus(cfg, bits, processes)?),
        "vertical" => {
            let ijk = cfg
                .vertical
                .ok_or_else(|| Error::config("os.vertical", "policy 'vertical' needs os.vertical = [i, j, k] (B-, C- and O-bits)"))?;
            Box::new(vertical("vertical", ijk, cfg, bits, processes)?)
        }
        "random-interleave" => Box::new(RandomInterleave::new(cfg.seed, bits)?),
        "ccps" => Box::new(CcpsRegions::new(cfg, bits, machine)?),
        "mcp" | "imps" => Box::new(Mcp::new(name == "imps", cfg, bits, machine, processes)?),
        _ => match NAMED_VERTICAL.iter().find(|(n, _)| *n == name) {
            Some(&(n, ijk)) => Box::new(vertical(n, ijk, cfg, bits, processes)?),
            None => return Err(Error::unknown("placement policy", name, NAMES.iter().copied())),
        },
    })
}
