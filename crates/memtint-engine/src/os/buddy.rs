//! The physical-frame allocator: a binary buddy allocator (orders 0..=10, as Linux 2.6.32) whose
//! free lists are indexed by colour, so a frame of a given colour is found in O(orders).
//! Implements BPM §2.4 (coloured free lists per order) and HVR §4.2 / Pseudocode 1 (a block sits
//! in the list of its colours and is split around the wanted colour), generalised to any
//! GF(2)-linear colour space.
//!
//! # Colours of a block
//! Colours are linear in the frame number, so the frames of an order-k block with first frame
//! `base` have the colours `colour(base) ^ S_k`, where `S_k` is the span of the colours of the
//! frame numbers 1, 2, 4, ..., 2^(k-1). Each coset of `S_k` gets one free list per order, keyed
//! by its canonical member (the colour reduced by a basis of `S_k`). To allocate colour `c`, the
//! smallest order whose list for `c`'s coset is not empty gives a block; it is split down, each
//! time keeping the half whose coset holds `c` and putting the other half on its own list.
//!
//! # Memory
//! Per frame: one state byte and two u32 list links (9 bytes; 18 MiB for 8 GiB of 4 KiB pages).
//! Links store `index + 1` so a zeroed vector is an empty one and is allocated lazily by the OS;
//! initialisation only pushes the maximal blocks (2048 for 8 GiB).

use super::colour::ColourSpace;
use super::parity_table::eval_parity;
use crate::error::{Error, Result};

/// Highest buddy order: blocks of up to 2^10 frames (4 MiB of 4 KiB pages).
pub const MAX_ORDER: u32 = 10;

/// A frame inside a free block (not its first frame), or never handed out.
const INSIDE: u8 = 0;
/// The first frame of a free block of order k has state `HEAD + k`.
const HEAD: u8 = 1;
const ALLOCATED: u8 = 0xFF;

/// A physical frame number (address >> page_shift).
pub type Frame = u32;

pub struct BuddyAllocator {
    /// Colour functions over frame-number bits.
    frame_masks: Vec<u64>,
    colours: u32,
    total: u32,
    max_order: u32,
    state: Vec<u8>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// [order][key]: first block + 1, or 0.
    heads: Vec<Vec<u32>>,
    /// [order][key]: number of free blocks in the list.
    lens: Vec<Vec<u32>>,
    /// [order]: bitmap over keys of the non-empty lists.
    nonempty: Vec<Vec<u64>>,
    /// [order][colour]: the key of the colour's coset.
    key_of: Vec<Vec<u32>>,
    /// [order]: log2 of the number of colours one block spans.
    span_bits: Vec<u32>,
    free: u64,
    allocated_per_colour: Vec<u64>,
}

/// Reduce `v` by a pivot basis (pivots[p] has highest bit p): the canonical coset member.
fn reduce(pivots: &[u32; 32], mut v: u32) -> u32 {
    for p in (0..32).rev() {
        if v >> p & 1 == 1 && pivots[p] != 0 {
            v ^= pivots[p];
        }
    }
    v
}

impl BuddyAllocator {
    /// `total_frames` frames, coloured by `space` (address-bit functions, all at or above
    /// `page_shift`).
    pub fn new(total_frames: u32, space: &ColourSpace, page_shift: u32) -> Result<Self> {
        if total_frames == 0 {
            return Err(Error::config("os", "the machine has no page frames"));
        }
        let mut frame_masks = Vec::new();
        for f in space.functions() {
            if f.mask() & ((1u64 << page_shift) - 1) != 0 {
                return Err(Error::config("os", format!("colour bit {} lies inside the page, so it is not a page colour", f.label())));
            }
            frame_masks.push(f.mask() >> page_shift);
        }
        let colours = space.count();
        let max_order = MAX_ORDER.min(31 - total_frames.leading_zeros());
        let words = (colours as usize).div_ceil(64);

        let mut key_of = Vec::new();
        let mut span_bits = Vec::new();
        let mut pivots = [0u32; 32];
        let mut rank = 0;
        for k in 0..=max_order {
            key_of.push((0..colours).map(|c| reduce(&pivots, c)).collect::<Vec<u32>>());
            span_bits.push(rank);
            // S_{k+1} adds the colour of frame number 2^k.
            let mut v = eval_parity(&frame_masks, 1u64 << k);
            while v != 0 {
                let p = 31 - v.leading_zeros() as usize;
                if pivots[p] == 0 {
                    pivots[p] = v;
                    rank += 1;
                    break;
                }
                v ^= pivots[p];
            }
        }

        let lists = || vec![vec![0u32; colours as usize]; max_order as usize + 1];
        let mut a = BuddyAllocator {
            frame_masks,
            colours,
            total: total_frames,
            max_order,
            state: vec![INSIDE; total_frames as usize],
            next: vec![0; total_frames as usize],
            prev: vec![0; total_frames as usize],
            heads: lists(),
            lens: lists(),
            nonempty: vec![vec![0u64; words]; max_order as usize + 1],
            key_of,
            span_bits,
            free: total_frames as u64,
            allocated_per_colour: vec![0; colours as usize],
        };
        // Maximal aligned blocks, pushed from the top so every list starts at its lowest frame.
        let mut blocks = Vec::new();
        let mut p = 0u32;
        while p < total_frames {
            let mut k = max_order.min(p.trailing_zeros());
            while p as u64 + (1u64 << k) > total_frames as u64 {
                k -= 1;
            }
            blocks.push((p, k));
            p += 1 << k;
        }
        for &(p, k) in blocks.iter().rev() {
            a.push(p, k);
        }
        Ok(a)
    }

    pub fn total_frames(&self) -> u32 {
        self.total
    }

    pub fn free_frames(&self) -> u64 {
        self.free
    }

    pub fn allocated_frames(&self) -> u64 {
        self.total as u64 - self.free
    }

    pub fn colours(&self) -> u32 {
        self.colours
    }

    #[inline]
    pub fn colour_of(&self, frame: Frame) -> u32 {
        eval_parity(&self.frame_masks, frame as u64)
    }

    pub fn allocated_of_colour(&self, colour: u32) -> u64 {
        self.allocated_per_colour.get(colour as usize).copied().unwrap_or(0)
    }

    /// Free frames of `colour`, in O(orders): an order-k block spreads its 2^k frames evenly
    /// over the 2^span_bits[k] colours of its coset.
    pub fn free_of_colour(&self, colour: u32) -> u64 {
        if colour >= self.colours {
            return 0;
        }
        (0..=self.max_order as usize)
            .map(|k| {
                let n = self.lens[k][self.key_of[k][colour as usize] as usize] as u64;
                n << (k as u32 - self.span_bits[k].min(k as u32))
            })
            .sum()
    }

    /// A free frame of `colour`, or None when none is left (or the colour does not exist).
    pub fn alloc_colour(&mut self, colour: u32) -> Option<Frame> {
        if colour >= self.colours {
            return None;
        }
        let c = colour as usize;
        let k = (0..=self.max_order).find(|&k| self.heads[k as usize][self.key_of[k as usize][c] as usize] != 0)?;
        let mut block = self.heads[k as usize][self.key_of[k as usize][c] as usize] - 1;
        self.remove(block, k);
        for j in (0..k).rev() {
            let upper = block + (1 << j);
            let lower_holds = self.key_of[j as usize][c] == self.key_of[j as usize][self.colour_of(block) as usize];
            if lower_holds {
                self.push(upper, j);
            } else {
                self.push(block, j);
                block = upper;
            }
        }
        debug_assert_eq!(self.colour_of(block), colour);
        self.take(block);
        Some(block)
    }

    /// The first frame of the smallest free block, whatever its colour (Linux's order-0 path).
    pub fn alloc_any(&mut self) -> Option<Frame> {
        let (k, key) = (0..=self.max_order).find_map(|k| {
            let words = &self.nonempty[k as usize];
            words.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, w)| (k, i * 64 + w.trailing_zeros() as usize))
        })?;
        let block = self.heads[k as usize][key] - 1;
        self.remove(block, k);
        for j in (0..k).rev() {
            self.push(block + (1 << j), j);
        }
        self.take(block);
        Some(block)
    }

    /// The free block holding `frame`: (first frame, order).
    fn block_holding(&self, frame: Frame) -> Option<(Frame, u32)> {
        if frame >= self.total {
            return None;
        }
        (0..=self.max_order).find_map(|k| {
            let head = frame & !((1u32 << k) - 1);
            (self.state[head as usize] == HEAD + k as u8).then_some((head, k))
        })
    }

    pub fn is_free(&self, frame: Frame) -> bool {
        self.block_holding(frame).is_some()
    }

    /// Allocate this particular frame if it is free.
    pub fn alloc_frame(&mut self, frame: Frame) -> Option<Frame> {
        let (mut block, k) = self.block_holding(frame)?;
        self.remove(block, k);
        for j in (0..k).rev() {
            let half = 1 << j;
            if frame & half != 0 {
                self.push(block, j);
                block += half;
            } else {
                self.push(block + half, j);
            }
        }
        debug_assert_eq!(block, frame);
        self.take(frame);
        Some(frame)
    }

    /// Return a frame, merging it with its free buddies.
    pub fn free(&mut self, frame: Frame) -> Result<()> {
        if frame >= self.total || self.state[frame as usize] != ALLOCATED {
            return Err(Error::config("os", format!("frame {frame} is freed but is not allocated (of {} frames)", self.total)));
        }
        let c = self.colour_of(frame) as usize;
        self.allocated_per_colour[c] -= 1;
        self.free += 1;
        self.state[frame as usize] = INSIDE;
        let (mut block, mut k) = (frame, 0);
        while k < self.max_order {
            let buddy = block ^ (1 << k);
            if buddy >= self.total || self.state[buddy as usize] != HEAD + k as u8 {
                break;
            }
            self.remove(buddy, k);
            block = block.min(buddy);
            k += 1;
        }
        self.push(block, k);
        Ok(())
    }

    /// Every free block as (first frame, order), ascending. Scans all frames: for tests and
    /// reports, not for the simulation loop.
    pub fn free_blocks(&self) -> Vec<(Frame, u32)> {
        (0..self.total)
            .filter_map(|f| {
                let s = self.state[f as usize];
                (s != INSIDE && s != ALLOCATED).then(|| (f, (s - HEAD) as u32))
            })
            .collect()
    }

    fn take(&mut self, frame: Frame) {
        self.state[frame as usize] = ALLOCATED;
        let c = self.colour_of(frame) as usize;
        self.allocated_per_colour[c] += 1;
        self.free -= 1;
    }

    fn key(&self, block: Frame, k: u32) -> usize {
        self.key_of[k as usize][self.colour_of(block) as usize] as usize
    }

    fn push(&mut self, block: Frame, k: u32) {
        let key = self.key(block, k);
        let (ku, b) = (k as usize, block as usize);
        let first = self.heads[ku][key];
        self.next[b] = first;
        self.prev[b] = 0;
        if first != 0 {
            self.prev[first as usize - 1] = block + 1;
        }
        self.heads[ku][key] = block + 1;
        self.lens[ku][key] += 1;
        self.nonempty[ku][key / 64] |= 1 << (key % 64);
        self.state[b] = HEAD + k as u8;
    }

    fn remove(&mut self, block: Frame, k: u32) {
        let key = self.key(block, k);
        let (ku, b) = (k as usize, block as usize);
        let (next, prev) = (self.next[b], self.prev[b]);
        if prev == 0 {
            self.heads[ku][key] = next;
        } else {
            self.next[prev as usize - 1] = next;
        }
        if next != 0 {
            self.prev[next as usize - 1] = prev;
        }
        self.lens[ku][key] -= 1;
        if self.lens[ku][key] == 0 {
            self.nonempty[ku][key / 64] &= !(1 << (key % 64));
        }
        self.state[b] = INSIDE;
    }
}
