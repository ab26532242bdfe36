//! Channel-only partitioning (BPM §2.6 without bank colours; Fig. 5 and 12's "channel-only"):
//! each process's pages come from one channel, and the processes of a channel share all its
//! banks. Needs a mapping whose channel bits are above the page offset (i7-860-bpm-plus: b32).
//! By default process `p` of `n` gets channel `p * channels / n` (the first half of the processes
//! channel 0 on two channels, as BPM+'s even split); with fewer processes than channels the
//! channels are split evenly. `os.colours` / `os.groups` choose otherwise.

use super::ColourSets;
use super::PolicyInfo;
use super::PAGE_CHANNEL;
use crate::error::Result;
use crate::os::colour::ColourBits;
use crate::os::OsConfig;

pub fn channel_only(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<ColourSets> {
    let space = bits.channel_space()?;
    let channels = space.count();
    if cfg.colours.is_some() || cfg.groups.is_some() || processes <= channels {
        return ColourSets::new("channel-only", space, cfg, bits, processes);
    }
    let mut shared = cfg.clone();
    shared.colours = Some((0..channels).map(|c| vec![c]).collect());
    shared.groups = Some((0..processes).map(|p| p * channels / processes).collect());
    ColourSets::new("channel-only", space, &shared, bits, processes)
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("channel-only", "each process in one channel, its banks shared (channel partitioning)", |cfg, bits, processes, _| {
        Ok(Box::new(channel_only(cfg, bits, processes)?))
    })
    .needs("a mapping with channel bits above the page offset (e.g. machine i7-860-bpm-plus)")
    .machine_variant(PAGE_CHANNEL)
    .reads_keys(super::colour_sets::KEYS)
    .mechanism("channel partitioning");
