//! BPM: each process owns an exclusive set of bank colours (BPM §2.3-2.5); by default the bank
//! colours are split evenly (32 colours / 4 processes = 8 each, 16 banks, on the i7-860).

use super::{ColourSets, Placement, PlacementPolicy};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{ColourBits, ColourSpace};
use crate::os::os_model::OsConfig;

pub struct Bpm {
    sets: ColourSets,
}

impl Bpm {
    pub fn new(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<Self> {
        Ok(Bpm { sets: ColourSets::new("bpm", bits.bank_space()?, cfg, bits, processes)? })
    }
}

impl PlacementPolicy for Bpm {
    fn name(&self) -> &'static str {
        "bpm"
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
