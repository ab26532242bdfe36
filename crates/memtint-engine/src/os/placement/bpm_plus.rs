//! BPM+: exclusive channel and bank colours (BPM §2.6). Needs a mapping whose channel bits are
//! above the page offset (i7-860-bpm-plus: b32). Colours are ordered with the channel bit
//! highest, so the default even split keeps each process inside one channel when there are at
//! least as many processes as channels (2 processes per channel x 16 banks for 4 on the i7-860).

use super::{ColourSets, Placement, PlacementPolicy};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{ColourBits, ColourSpace};
use crate::os::os_model::OsConfig;

pub struct BpmPlus {
    sets: ColourSets,
}

impl BpmPlus {
    pub fn new(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<Self> {
        Ok(BpmPlus { sets: ColourSets::new("bpm-plus", bits.channel_bank_space()?, cfg, bits, processes)? })
    }
}

impl PlacementPolicy for BpmPlus {
    fn name(&self) -> &'static str {
        "bpm-plus"
    }
    fn colour_space(&self) -> &ColourSpace {
        self.sets.space()
    }
    fn colours_of(&self, pid: u32) -> &[u32] {
        self.sets.colours_of(pid)
    }
    fn place(&mut self, pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        self.sets.place(pid, alloc)
    }
}
