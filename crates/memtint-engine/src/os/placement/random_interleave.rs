//! Random interleaving (M³-like, HVR §2.3 and §4.2): every page gets a uniformly random colour
//! of the bank space (channel and bank when the channel is page-controllable), so each process
//! spreads evenly over all banks. Seeded; a colour with no free frame passes to the next one.

use super::colour_sets::out_of_memory;
use super::PolicyInfo;
use super::{Placement, PlacementPolicy};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{ColourBits, ColourSpace};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct RandomInterleave {
    rng: ChaCha8Rng,
    space: ColourSpace,
    all: Vec<u32>,
}

impl RandomInterleave {
    pub fn new(seed: u64, bits: &ColourBits) -> Result<Self> {
        let space = bits.all_dram_space()?;
        let all = (0..space.count()).collect();
        Ok(RandomInterleave { rng: ChaCha8Rng::seed_from_u64(seed), space, all })
    }
}

impl PlacementPolicy for RandomInterleave {
    fn name(&self) -> &'static str {
        "random-interleave"
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &self.all
    }
    fn place(&mut self, pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        let n = self.space.count();
        let first = self.rng.gen_range(0..n);
        (0..n)
            .find_map(|i| alloc.alloc_colour((first + i) % n))
            .map(|frame| Placement { frame, borrowed: false })
            .ok_or_else(|| out_of_memory("random-interleave", pid, alloc))
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new("random-interleave", "each page on a random colour", |cfg, bits, _, _| {
    Ok(Box::new(RandomInterleave::new(cfg.seed(), bits)?))
})
.mechanism("random page interleaving");
