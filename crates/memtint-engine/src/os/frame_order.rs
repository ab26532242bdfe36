//! The order in which a long-running Linux hands out free frames: the baseline of BPM §2.1/§8.1
//! ("pages of one process scatter over all banks") and HVR §8.1 ("a buddy allocator whose free
//! list becomes semi-random after fragmentation").
//!
//! # Model
//! After hours of uptime the buddy free lists hold short runs of contiguous frames freed by
//! unrelated processes, in unrelated order. We model this as runs of [`RUN_FRAMES`] contiguous
//! frames (one aligned order-3 block) that start at a uniformly random frame: a fault takes the
//! next free frame of the current run, and a new run starts at a random aligned place when the
//! run is used up or its next frame is taken. Consequences, which is why this model:
//! - a process's pages spread over all banks and rows, as the papers observe, and unlike a fresh
//!   boot's sequential order (which would put every process in the same few rows);
//! - consecutive faults still share a little locality (a run covers bits 12-14), unlike fully
//!   random frames, which HVR §8.1 warns would make the baseline identical to random
//!   interleaving (M³).
//!
//! Colour-restricted policies draw from the same order, passing over frames of other colours
//! (`next_frame_where`), so that a policy differs from the baseline only in its colours
//! (docs/stats.md, "Frame order").
//!
//! Deterministic: a ChaCha8 generator with an explicit seed. When free memory is too scarce for
//! random probing to find a run, the allocator's own order is used.

use super::buddy::{BuddyAllocator, Frame};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Frames in one run of contiguous free memory.
pub const RUN_FRAMES: u32 = 8;

/// Random probes for a new run before falling back to the allocator's own order.
const PROBES: u32 = 64;

pub struct FrameOrder {
    rng: ChaCha8Rng,
    /// Next frame of the current run and frames left in it.
    next: Frame,
    left: u32,
}

impl FrameOrder {
    pub fn new(seed: u64) -> Self {
        FrameOrder { rng: ChaCha8Rng::seed_from_u64(seed), next: 0, left: 0 }
    }

    /// The next frame in aged-Linux order, allocated from `alloc`; None when memory is full.
    pub fn next_frame(&mut self, alloc: &mut BuddyAllocator) -> Option<Frame> {
        self.next_frame_where(alloc, |_, _| true).or_else(|| {
            self.left = 0;
            alloc.alloc_any()
        })
    }

    /// The next frame in aged-Linux order among those `accept` takes (a colour-restricted
    /// policy's colours: frames of other colours in a run are passed over, as a coloured free
    /// list would); None when random probing finds none, and the caller falls back to its own
    /// order. With `accept` taking every frame this is `next_frame`, draw for draw.
    pub fn next_frame_where(&mut self, alloc: &mut BuddyAllocator, accept: impl Fn(&BuddyAllocator, Frame) -> bool) -> Option<Frame> {
        while self.left > 0 {
            self.left -= 1;
            let f = self.next;
            self.next += 1;
            if !accept(alloc, f) {
                continue;
            }
            if let Some(f) = alloc.alloc_frame(f) {
                return Some(f);
            }
            break;
        }
        let total = alloc.total_frames();
        let run = RUN_FRAMES.min(total);
        for _ in 0..PROBES {
            let start = self.rng.gen_range(0..total) / run * run;
            let end = (start + run).min(total);
            if let Some(f) = (start..end).find(|&f| alloc.is_free(f) && accept(alloc, f)) {
                self.next = f + 1;
                self.left = end - f - 1;
                return alloc.alloc_frame(f);
            }
        }
        self.left = 0;
        None
    }
}
