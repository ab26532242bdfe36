//! BPM+: exclusive channel and bank colours (BPM §2.6). Needs a mapping whose channel bits are
//! above the page offset (i7-860-bpm-plus: b32). Colours are ordered with the channel bit
//! highest, so the default even split keeps each process inside one channel when there are at
//! least as many processes as channels (2 processes per channel x 16 banks for 4 on the i7-860).

use super::ColourSets;
use super::PolicyInfo;
use super::PAGE_CHANNEL;
use crate::error::Result;
use crate::os::colour::ColourBits;
use crate::os::OsConfig;

pub fn bpm_plus(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<ColourSets> {
    ColourSets::new("bpm-plus", bits.channel_bank_space()?, cfg, bits, processes)
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("bpm-plus", "exclusive channel and bank colours per process (BPM+)", |cfg, bits, processes, _| {
        Ok(Box::new(bpm_plus(cfg, bits, processes)?))
    })
    .needs("a mapping with channel bits above the page offset (e.g. machine i7-860-bpm-plus)")
    .machine_variant(PAGE_CHANNEL)
    .reads_keys(super::colour_sets::KEYS)
    .mechanism("bank + channel partitioning");
