//! MCP, memory channel partitioning (Muralidhara et al., MICRO 2011, as summarised in ccps.md
//! §5.4), and the OS side of IMPS. From a per-application profile (LLC MPKI and row-buffer hit
//! rate) applications are classified as low intensity (MPKI < `mpki_threshold`), high intensity
//! with low row-buffer locality (RBH < `rbh_threshold`) and high intensity with high locality;
//! the channels are split between the non-empty groups in proportion to their number of
//! applications (at least one each, largest remainder; with more groups than channels the
//! low-intensity group shares the high-locality group's channels); inside its group each
//! application gets one preferred channel, greedily balancing summed MPKI (heaviest first). A
//! page fault takes a frame of the preferred channel, then of the group's other channels, then
//! of the least-used channel (counted as `colour_overflow_pages`).
//!
//! The profile is offline: `os.profiles`, which `memtint compare` fills from each program's
//! alone run (the whole measured window under the baseline placement), not MCP's per-interval
//! hardware counters; without interval re-partitioning this equals MCP's first interval applied
//! to the whole run. Under `imps`, applications below `very_low_mpki` are left out of the
//! partition and interleaved over every channel (IMPS's scheduler side, prioritising them, is
//! the controller's `imps` scheduler). The thresholds are [ext, unverified] (ccps.md §5.4).

use super::colour_sets::{out_of_memory, AgedFrames};
use super::PolicyInfo;
use super::{MachineView, Placement, PlacementPolicy};
use crate::error::{Error, Result};
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{ColourBits, ColourSpace};
use crate::os::AppProfile;
use crate::os::OsConfig;
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.mcp]`, read by `mcp` and `imps`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpParams {
    /// Low intensity below this LLC MPKI ([ext, unverified] ≈ 10).
    pub mpki_threshold: f64,
    /// Low row-buffer locality below this hit rate ([ext, unverified] ≈ 0.5).
    pub rbh_threshold: f64,
    /// `imps` only: below this MPKI an application is interleaved over all channels
    /// ([ext, unverified] 1-1.5).
    pub very_low_mpki: f64,
}

impl Default for McpParams {
    fn default() -> Self {
        McpParams { mpki_threshold: 10.0, rbh_threshold: 0.5, very_low_mpki: 1.5 }
    }
}

impl Params for McpParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        for (key, v) in [("mpki_threshold", self.mpki_threshold), ("very_low_mpki", self.very_low_mpki)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err((key, format!("must be a finite number >= 0, got {v}")));
            }
        }
        if !(0.0..=1.0).contains(&self.rbh_threshold) {
            return Err(("rbh_threshold", format!("must be in [0, 1], got {}", self.rbh_threshold)));
        }
        Ok(())
    }
}

/// Where both policies read their thresholds.
const TABLE: &str = "mcp";

/// MCP's application classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppClass {
    /// IMPS only: interleaved over all channels.
    VeryLow,
    Low,
    HighLowRbh,
    HighHighRbh,
}

pub struct Mcp {
    imps: bool,
    space: ColourSpace,
    /// Process -> channel colours it may use, preferred first.
    allowed: Vec<Vec<u32>>,
    classes: Vec<AppClass>,
    cursor: Vec<usize>,
    /// Per process: the aged order of its frames.
    aged: AgedFrames,
    strict: bool,
}

pub fn classify(p: &AppProfile, cfg: &McpParams, imps: bool) -> AppClass {
    if imps && p.mpki < cfg.very_low_mpki {
        AppClass::VeryLow
    } else if p.mpki < cfg.mpki_threshold {
        AppClass::Low
    } else if p.rbh < cfg.rbh_threshold {
        AppClass::HighLowRbh
    } else {
        AppClass::HighHighRbh
    }
}

/// Channels per group (Low, HighLowRbh, HighHighRbh) for `counts` applications in each.
fn split_channels(counts: [usize; 3], channels: u32) -> [Vec<u32>; 3] {
    let nonempty: Vec<usize> = (0..3).filter(|&g| counts[g] > 0).collect();
    let mut out: [Vec<u32>; 3] = Default::default();
    if nonempty.is_empty() {
        return out;
    }
    let c = channels as usize;
    if nonempty.len() > c {
        // Too few channels: the high-intensity groups take them; the low group shares with
        // the high-locality group (or the only high group).
        let highs: Vec<usize> = nonempty.iter().copied().filter(|&g| g != 0).collect();
        for (i, &g) in highs.iter().enumerate() {
            out[g] = vec![(i % c) as u32];
        }
        out[0] = out[*highs.last().unwrap()].clone();
        return out;
    }
    let total: usize = counts.iter().sum();
    let mut share: Vec<(usize, usize, usize)> = nonempty
        .iter()
        .map(|&g| {
            let exact = counts[g] * c;
            (g, (exact / total).max(1), exact % total)
        })
        .collect();
    let mut given: usize = share.iter().map(|s| s.1).sum();
    while given > c {
        let i = (0..share.len()).filter(|&i| share[i].1 > 1).max_by_key(|&i| (share[i].1, i)).unwrap();
        share[i].1 -= 1;
        given -= 1;
    }
    let mut order: Vec<usize> = (0..share.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(share[i].2), i));
    let mut k = 0;
    while given < c {
        share[order[k % order.len()]].1 += 1;
        given += 1;
        k += 1;
    }
    let mut next = 0u32;
    for (g, n, _) in share {
        out[g] = (next..next + n as u32).collect();
        next += n as u32;
    }
    out
}

impl Mcp {
    pub fn new(imps: bool, cfg: &OsConfig, bits: &ColourBits, machine: &MachineView, processes: u32) -> Result<Self> {
        let name = if imps { "imps" } else { "mcp" };
        let space =
            bits.channel_space().map_err(|e| Error::config("os.policy", format!("{name} partitions channels by page: {}", e.reason())))?;
        let profiles = cfg.profiles.as_ref().ok_or_else(|| {
            Error::config(
                "os.profiles",
                format!(
                    "policy {name} needs each process's profile ([{{mpki, rbh}}, ...], from alone runs); memtint compare \
                     fills it, or give os.profiles"
                ),
            )
        })?;
        if profiles.len() != processes as usize {
            return Err(Error::config("os.profiles", format!("gives {} profiles for {processes} processes", profiles.len())));
        }
        for (i, p) in profiles.iter().enumerate() {
            if !(p.mpki.is_finite() && p.mpki >= 0.0 && (0.0..=1.0).contains(&p.rbh)) {
                return Err(Error::config("os.profiles", format!("profile {i}: mpki must be >= 0 and rbh in 0-1, got {p:?}")));
            }
        }
        // Channel colour -> channel id, by decoding a frame of each colour.
        let n = space.count();
        let mut channel_colour = vec![u32::MAX; n as usize];
        let page = 1u64 << bits.page_shift();
        let mut seen = 0;
        for f in 0..(1u64 << (bits.capacity_bits() - bits.page_shift())).min(1 << 24) {
            let c = space.colour_of(f * page);
            let ch = machine.mapping.decode(f * page).channel as usize;
            if ch < channel_colour.len() && channel_colour[ch] == u32::MAX {
                channel_colour[ch] = c;
                seen += 1;
                if seen == n {
                    break;
                }
            }
        }
        let thresholds: McpParams = cfg.params(TABLE, &[])?;
        let classes: Vec<AppClass> = profiles.iter().map(|p| classify(p, &thresholds, imps)).collect();
        let group_of = |c: AppClass| match c {
            AppClass::Low => Some(0),
            AppClass::HighLowRbh => Some(1),
            AppClass::HighHighRbh => Some(2),
            AppClass::VeryLow => None,
        };
        let mut counts = [0usize; 3];
        for &c in &classes {
            if let Some(g) = group_of(c) {
                counts[g] += 1;
            }
        }
        let groups = split_channels(counts, n);
        // Preferred channel: heaviest first, to the group channel with the least MPKI so far.
        let mut load = vec![0.0f64; n as usize];
        let mut order: Vec<usize> = (0..profiles.len()).collect();
        order.sort_by(|&a, &b| profiles[b].mpki.partial_cmp(&profiles[a].mpki).unwrap().then(a.cmp(&b)));
        let mut allowed = vec![Vec::new(); profiles.len()];
        for p in order {
            let Some(g) = group_of(classes[p]) else {
                allowed[p] = channel_colour.clone();
                continue;
            };
            let chans = &groups[g];
            let pref = *chans
                .iter()
                .min_by(|&&a, &&b| load[a as usize].partial_cmp(&load[b as usize]).unwrap().then(a.cmp(&b)))
                .expect("a non-empty group has channels");
            load[pref as usize] += profiles[p].mpki;
            let mut list = vec![channel_colour[pref as usize]];
            list.extend(chans.iter().filter(|&&c| c != pref).map(|&c| channel_colour[c as usize]));
            allowed[p] = list;
        }
        let aged = AgedFrames::new(cfg, processes as usize)?;
        Ok(Mcp { imps, space, allowed, classes, cursor: vec![0; processes as usize], aged, strict: cfg.strict })
    }

    pub fn class_of(&self, pid: u32) -> AppClass {
        self.classes[pid as usize]
    }
}

impl PlacementPolicy for Mcp {
    fn name(&self) -> &'static str {
        if self.imps {
            "imps"
        } else {
            "mcp"
        }
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    /// The process's channel colours, preferred first.
    fn colours_of(&self, pid: u32) -> &[u32] {
        &self.allowed[pid as usize]
    }
    fn place(&mut self, pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        let p = pid as usize;
        let list = &self.allowed[p];
        let interleave = self.classes[p] == AppClass::VeryLow;
        // Preferred channel first (interleaved apps: round-robin over all).
        let tries: Vec<u32> = if interleave {
            let s = self.cursor[p];
            self.cursor[p] = (s + 1) % list.len();
            (0..list.len()).map(|i| list[(s + i) % list.len()]).collect()
        } else {
            list.clone()
        };
        for &c in &tries {
            if let Some(frame) = self.aged.next(p, alloc, |a, f| a.colour_of(f) == c) {
                return Ok(Placement { frame, borrowed: false });
            }
        }
        for c in tries {
            if let Some(frame) = alloc.alloc_colour(c) {
                return Ok(Placement { frame, borrowed: false });
            }
        }
        if self.strict {
            return Err(Error::config("os.strict", format!("{}: process {pid}'s channels are full", self.name())));
        }
        let lender = (0..self.space.count()).filter(|&c| alloc.free_of_colour(c) > 0).min_by_key(|&c| (alloc.allocated_of_colour(c), c));
        match lender.and_then(|c| alloc.alloc_colour(c)) {
            Some(frame) => Ok(Placement { frame, borrowed: true }),
            None => Err(out_of_memory(self.name(), pid, alloc)),
        }
    }
}

/// Registered in `placement::POLICIES`.
pub const MCP: PolicyInfo =
    PolicyInfo::new("mcp", "preferred channels by intensity and row-buffer locality (MCP)", |cfg, bits, processes, machine| {
        Ok(Box::new(Mcp::new(false, cfg, bits, machine, processes)?))
    })
    .needs_profiles()
    .needs("a mapping with channel bits above the page offset")
    .machine_variant(super::PAGE_CHANNEL)
    .params(ParamSchema::of::<McpParams>(&[]))
    .reads_keys(&["frame_order", "strict"])
    .mechanism("channel partitioning");

/// Registered in `placement::POLICIES`.
pub const IMPS: PolicyInfo =
    PolicyInfo::new("imps", "MCP's channel partition for IMPS (very light programs share)", |cfg, bits, processes, machine| {
        Ok(Box::new(Mcp::new(true, cfg, bits, machine, processes)?))
    })
    .needs_profiles()
    .needs("a mapping with channel bits above the page offset")
    .machine_variant(super::PAGE_CHANNEL)
    .reads_table(TABLE)
    .reads_keys(&["frame_order", "strict"])
    .mechanism("channel partitioning");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_split_in_proportion_to_group_sizes() {
        assert_eq!(split_channels([2, 1, 1], 4), [vec![0, 1], vec![2], vec![3]]);
        assert_eq!(split_channels([2, 2, 0], 4), [vec![0, 1], vec![2, 3], vec![]]);
        assert_eq!(split_channels([0, 0, 3], 4), [vec![], vec![], vec![0, 1, 2, 3]]);
        // More groups than channels: high groups get channels, low shares the high-locality one.
        assert_eq!(split_channels([1, 1, 1], 2), [vec![1], vec![0], vec![1]]);
    }
}
