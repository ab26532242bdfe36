//! The baseline: an unmodified buddy allocator in a long-running system, no colours; frames come
//! in the quasi-random order of `frame_order.rs` (BPM §2.1, HVR §8.1).

use super::colour_sets::out_of_memory;
use super::PolicyInfo;
use super::{Placement, PlacementPolicy};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::ColourSpace;
use crate::os::frame_order::FrameOrder;

pub struct BuddyOrder {
    order: FrameOrder,
    space: ColourSpace,
}

impl BuddyOrder {
    pub fn new(seed: u64) -> Self {
        BuddyOrder { order: FrameOrder::new(seed), space: ColourSpace::uncoloured() }
    }
}

impl PlacementPolicy for BuddyOrder {
    fn name(&self) -> &'static str {
        "buddy"
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &[0]
    }
    fn place(&mut self, pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        match self.order.next_frame(alloc) {
            Some(frame) => Ok(Placement { frame, borrowed: false }),
            None => Err(out_of_memory("buddy", pid, alloc)),
        }
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("buddy", "the uncoloured baseline: the buddy allocator's seeded aged frame order", |cfg, _, _, _| {
        Ok(Box::new(BuddyOrder::new(cfg.seed())))
    })
    .mechanism("buddy placement");
