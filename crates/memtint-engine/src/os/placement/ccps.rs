//! CCPS page mapping (ccps.md §2.2 and §2.4, Algorithm 2): core c owns a region, channel
//! c mod C and, inside it, a group of `banks_per_core` banks packed into as few ranks as possible
//! (the k-th core of a channel group gets rank group k mod G, [rec] §2.2). A thread's page
//! faults are served by the buddy allocator from its core's region only: the allocator's free
//! lists are indexed by (channel, rank) colours, so buddy splits and merges stay inside a colour.
//! When the region is full: (a) another region of the same channel (most free frames), then
//! (b) the least-used other channel; never blocking. Such pages are counted as spilled
//! ([rec] §2.4, reported as `colour_overflow_pages` and `spilled_pages`). With `os.strict` a full
//! region is an error instead.

use super::colour_sets::{out_of_memory, AgedFrames};
use super::PolicyInfo;
use super::{MachineView, Placement, PlacementPolicy};
use crate::error::{Error, Result};
use crate::mapping::Field;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{ColourBits, ColourFunction, ColourSpace};
use crate::os::OsConfig;
use crate::params::{at_least_one, ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.ccps]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcpsParams {
    /// Banks of a core's region inside its channel ([paper] 16).
    pub banks_per_core: u32,
    /// Algorithm 1's load threshold Δ ([paper] 5 threads).
    pub delta: u32,
}

impl Default for CcpsParams {
    fn default() -> Self {
        CcpsParams { banks_per_core: 16, delta: 5 }
    }
}

impl Params for CcpsParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        at_least_one(&[("banks_per_core", self.banks_per_core as u64)])
    }
}

/// The `[os.ccps]` parameters (also Algorithm 1's Δ for the `ccps` thread binding).
pub fn params(cfg: &OsConfig) -> Result<CcpsParams> {
    cfg.params(INFO.name, &[])
}

pub struct CcpsRegions {
    space: ColourSpace,
    /// Colour -> (channel, rank).
    coords: Vec<(u32, u32)>,
    /// Core -> its region's colours.
    regions: Vec<Vec<u32>>,
    cursor: Vec<usize>,
    /// Core -> its region's colours as flags, and the aged order of its frames.
    members: Vec<Vec<bool>>,
    aged: AgedFrames,
    all: Vec<u32>,
    strict: bool,
    spilled: u64,
}

impl CcpsRegions {
    pub fn new(cfg: &OsConfig, bits: &ColourBits, machine: &MachineView) -> Result<Self> {
        let channel = bits.channel_space().map_err(|e| {
            Error::config("os.policy", format!("ccps partitions channels by page: {} (e.g. machine ccps-4c-64b)", e.reason()))
        })?;
        let count = |f: Field| 1u32 << machine.mapping.field_bits(f).len();
        let (channels, ranks) = (count(Field::Channel), count(Field::Rank));
        let banks_per_rank = count(Field::BankGroup) * count(Field::Bank);
        let rank_fns = bits.rank_space()?.functions().to_vec();
        if (1u32 << rank_fns.len()) < ranks {
            return Err(Error::config(
                "os.policy",
                format!(
                    "ccps gives each core a bank group of whole ranks, but mapping {} selects the rank with bits inside \
                     the page; use a mapping with rank bits above the page offset (e.g. machine ccps-4c-256b)",
                    machine.mapping.name()
                ),
            ));
        }
        let mut fns: Vec<ColourFunction> = channel.functions().to_vec();
        fns.extend(rank_fns);
        let space = ColourSpace::new("channel+rank", fns)?;
        let n = space.count();
        // Colour -> (channel, rank) by decoding one frame of each colour.
        let page = 1u64 << bits.page_shift();
        let frames = 1u64 << (bits.capacity_bits() - bits.page_shift());
        let mut coords = vec![None; n as usize];
        let mut seen = 0;
        for f in 0..frames.min(1 << 24) {
            let addr = f * page;
            let c = space.colour_of(addr) as usize;
            if coords[c].is_none() {
                let d = machine.mapping.decode(addr);
                coords[c] = Some((d.channel, d.rank));
                seen += 1;
                if seen == n {
                    break;
                }
            }
        }
        let coords: Vec<(u32, u32)> = coords.into_iter().map(|c| c.unwrap_or((u32::MAX, u32::MAX))).collect();
        let ranks_per_core = params(cfg)?.banks_per_core.div_ceil(banks_per_rank).clamp(1, ranks);
        let groups = (ranks / ranks_per_core).max(1);
        let regions: Vec<Vec<u32>> = (0..machine.cores)
            .map(|core| {
                let ch = core % channels;
                let g = (core / channels) % groups;
                let rs = g * ranks_per_core..(g + 1) * ranks_per_core;
                (0..n).filter(|&c| coords[c as usize].0 == ch && rs.contains(&coords[c as usize].1)).collect()
            })
            .collect();
        if let Some(core) = regions.iter().position(|r| r.is_empty()) {
            return Err(Error::config("os.policy", format!("ccps: core {core}'s region holds no frame on this machine")));
        }
        let members = regions
            .iter()
            .map(|r| {
                let mut m = vec![false; n as usize];
                r.iter().for_each(|&c| m[c as usize] = true);
                m
            })
            .collect();
        Ok(CcpsRegions {
            space,
            coords,
            cursor: vec![0; regions.len()],
            members,
            aged: AgedFrames::new(cfg, regions.len())?,
            regions,
            all: (0..n).collect(),
            strict: cfg.strict,
            spilled: 0,
        })
    }

    /// The colours of core `core`'s region.
    pub fn region(&self, core: u32) -> &[u32] {
        &self.regions[core as usize % self.regions.len()]
    }

    /// (channel, rank) of a colour.
    pub fn coords(&self, colour: u32) -> (u32, u32) {
        self.coords[colour as usize]
    }
}

impl PlacementPolicy for CcpsRegions {
    fn name(&self) -> &'static str {
        "ccps"
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    /// Processes are not partitioned, cores are: every colour (see `region`).
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &self.all
    }
    fn place(&mut self, pid: u32, vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        self.place_on(pid, pid, vpage, alloc)
    }
    fn place_on(&mut self, pid: u32, core: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        let ci = core as usize % self.regions.len();
        let member = &self.members[ci];
        if let Some(frame) = self.aged.next(ci, alloc, |a, f| member[a.colour_of(f) as usize]) {
            return Ok(Placement { frame, borrowed: false });
        }
        let region = &self.regions[ci];
        let start = self.cursor[ci];
        for i in 0..region.len() {
            let at = (start + i) % region.len();
            if let Some(frame) = alloc.alloc_colour(region[at]) {
                self.cursor[ci] = (at + 1) % region.len();
                return Ok(Placement { frame, borrowed: false });
            }
        }
        if self.strict {
            return Err(Error::config(
                "os.strict",
                format!("ccps: core {core}'s region is full when process {pid} faults; set os.strict = false to spill"),
            ));
        }
        let channel = self.coords[region[0] as usize].0;
        let coords = &self.coords;
        // (a) the same channel, most free frames; (b) the least-used other channel.
        let same = (0..self.space.count())
            .filter(|&c| coords[c as usize].0 == channel && alloc.free_of_colour(c) > 0)
            .max_by_key(|&c| (alloc.free_of_colour(c), std::cmp::Reverse(c)));
        let other = || (0..self.space.count()).filter(|&c| alloc.free_of_colour(c) > 0).min_by_key(|&c| (alloc.allocated_of_colour(c), c));
        match same.or_else(other).and_then(|c| alloc.alloc_colour(c)) {
            Some(frame) => {
                self.spilled += 1;
                Ok(Placement { frame, borrowed: true })
            }
            None => Err(out_of_memory("ccps", pid, alloc)),
        }
    }
    fn spilled_pages(&self) -> u64 {
        self.spilled
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new("ccps", "per-core channel-aware bank regions (CCPS)", |cfg, bits, _, machine| {
    Ok(Box::new(CcpsRegions::new(cfg, bits, machine)?))
})
.binds_threads("ccps")
.needs("a mapping with channel bits above the page offset (e.g. machine ccps-4c-64b)")
.params(ParamSchema::of::<CcpsParams>(&[]))
.reads_keys(&["frame_order", "strict"])
.mechanism("core regions of channels and banks");

#[cfg(test)]
mod tests {
    use crate::dram::Organisation;
    use crate::mapping::AddressMapping;
    use crate::os::{OsConfig, OsModel};

    /// 4 channels x `ranks` ranks x 8 banks of 16 rows of 8 KB: 512 frames per rank.
    fn tiny(ranks: u32) -> AddressMapping {
        let org = Organisation {
            channels: 4,
            ranks,
            bank_groups: 1,
            banks_per_group: 8,
            rows: 16,
            columns: 1024,
            bus_width_bits: 64,
            device_width: 8,
            burst_length: 8,
            density_gbit: 1,
        };
        AddressMapping::from_layout("RoRaBaChCo", &org).unwrap()
    }

    fn model(m: &AddressMapping, cores: u32, strict: bool) -> OsModel {
        let cfg = OsConfig { policy: "ccps".into(), strict, ..OsConfig::default() };
        OsModel::with_cores(&cfg, m, 0..0, cores, cores).unwrap()
    }

    #[test]
    fn a2_frames_of_a_core_decode_to_its_channel_and_rank_group() {
        // 8 ranks per channel, 8 cores: core c -> channel c % 4, ranks {2k, 2k+1}, k = c / 4.
        let m = tiny(8);
        let mut os = model(&m, 8, true);
        for core in 0..8u32 {
            for p in 0..200u64 {
                let a = os.translate_on(core, core, p << 12).unwrap();
                let d = m.decode(a);
                assert_eq!(d.channel, core % 4, "core {core} page {p}");
                let k = core / 4;
                assert!(d.rank == 2 * k || d.rank == 2 * k + 1, "core {core}: rank {}", d.rank);
            }
        }
        assert_eq!(os.spilled_pages(), 0);
    }

    #[test]
    fn a2_a_full_region_spills_to_the_least_used_channel_and_counts_it() {
        // 2 ranks per channel: a core's region is its whole channel, 2 x 8 x 16 rows x 2 pages.
        let m = tiny(2);
        let region = 2 * 8 * 16 * 2;
        let mut os = model(&m, 4, false);
        for p in 0..region {
            let a = os.translate_on(0, 0, p << 12).unwrap();
            assert_eq!(m.decode(a).channel, 0);
        }
        assert_eq!(os.spilled_pages(), 0);
        let a = os.translate_on(0, 0, region << 12).unwrap();
        assert_ne!(m.decode(a).channel, 0);
        assert_eq!(os.spilled_pages(), 1);
        assert_eq!(os.process_placement(0).colour_overflow_pages, 1);
        // Strict: the same fault is an error naming the core.
        let mut os = model(&m, 4, true);
        for p in 0..region {
            os.translate_on(0, 0, p << 12).unwrap();
        }
        let e = os.translate_on(0, 0, region << 12).unwrap_err().to_string();
        assert!(e.contains("core 0's region is full"), "{e}");
    }
}
