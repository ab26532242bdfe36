//! The lane controller's candidates (`lane_controller.rs`): one lane per candidate slot of the
//! active direction, each holding its full earliest-issue cycle (bank, bank-group, rank and
//! tFAW parts, and its request's front-end delay) as a 32-bit offset from a base cycle, its
//! command kind and its scheduler key. A command raises in place every lane it constrains
//! (`raise_kind`); the next command is a minimum over the lanes and the smallest key among
//! those ready (bench/README.md, "stop 14"). Plain loops over `i32` slices, which LLVM
//! vectorises (SSE2 compares and selects); keys stay 64-bit and are only read for ready lanes,
//! so they order exactly as the general controller's for any run length.

/// An empty lane (no candidate), or a ready time no run reaches: larger than every offset.
pub const NEVER_LANE: i32 = i32::MAX;

// Candidate kinds, the rows of the shared ready-time table (`lane_timing.rs`).
pub const K_RD: i32 = 0;
pub const K_ACT: i32 = 1;
pub const K_PRE: i32 = 2;
pub const K_WR: i32 = 3;
pub const K_NONE: i32 = 4;

/// Lanes per block: the arrays are blocks of this many lanes (every organisation has a
/// multiple of 8 banks per channel), so the loops below have a constant inner width that
/// LLVM turns into SIMD compares, selects and maxima.
pub const BLOCK: usize = 8;
type Block = [i32; BLOCK];

pub struct Lanes {
    /// Earliest issue cycle without the command bus, as an offset from the base cycle.
    ready: Vec<Block>,
    kind: Vec<Block>,
    key: Vec<u64>,
    /// Bank group (within the channel) and rank of each lane's bank: fixed.
    group: Vec<Block>,
    rank: Vec<Block>,
    /// `NEVER_LANE` in the lanes of a rank waiting for refresh, else 0.
    gate: Vec<Block>,
}

fn blocks(values: impl Iterator<Item = i32>, n: usize) -> Vec<Block> {
    let mut v = vec![[0; BLOCK]; n.div_ceil(BLOCK)];
    for (l, x) in values.enumerate() {
        v[l / BLOCK][l % BLOCK] = x;
    }
    v
}

impl Lanes {
    /// `slots` lanes per bank: lane `slot * banks + bank`. Padding lanes (to a whole block)
    /// stay empty.
    pub fn new(banks: usize, slots: usize, group_of_bank: impl Fn(usize) -> usize, rank_of_bank: impl Fn(usize) -> usize) -> Self {
        let n = banks * slots;
        let nb = n.div_ceil(BLOCK);
        Lanes {
            ready: vec![[NEVER_LANE; BLOCK]; nb],
            kind: vec![[K_NONE; BLOCK]; nb],
            key: vec![u64::MAX; nb * BLOCK],
            group: blocks((0..n).map(|l| group_of_bank(l % banks) as i32), n),
            rank: blocks((0..n).map(|l| rank_of_bank(l % banks) as i32), n),
            gate: vec![[0; BLOCK]; nb],
        }
    }

    /// Lanes, padding included.
    #[inline(always)]
    pub fn lane_count(&self) -> usize {
        self.ready.len() * BLOCK
    }

    #[inline(always)]
    pub fn ready(&self, l: usize) -> i32 {
        self.ready[l / BLOCK][l % BLOCK]
    }

    #[inline(always)]
    pub fn kind(&self, l: usize) -> i32 {
        self.kind[l / BLOCK][l % BLOCK]
    }

    #[inline(always)]
    pub fn group(&self, l: usize) -> i32 {
        self.group[l / BLOCK][l % BLOCK]
    }

    #[inline(always)]
    pub fn is_gated(&self, l: usize) -> bool {
        self.gate[l / BLOCK][l % BLOCK] != 0
    }

    /// Give lane `l` a candidate (`K_NONE`, `NEVER_LANE`, `u64::MAX`: none).
    #[inline(always)]
    pub fn set(&mut self, l: usize, ready: i32, kind: i32, key: u64) {
        self.ready[l / BLOCK][l % BLOCK] = ready;
        self.kind[l / BLOCK][l % BLOCK] = kind;
        self.key[l] = key;
    }

    /// Raise the lanes of kind `k`: those of bank group `g` to `same_group`, the other groups of
    /// rank `r` to `same_rank`, the other ranks' to `other_rank` (0: no constraint).
    #[inline(always)]
    pub fn raise_kind(&mut self, k: i32, g: i32, r: i32, same_group: i32, same_rank: i32, other_rank: i32) {
        for (rb, (kb, (gb, rkb))) in self.ready.iter_mut().zip(self.kind.iter().zip(self.group.iter().zip(&self.rank))) {
            // Written as masks (all ones / zero) and bitwise selects: the `if` chain of the same
            // computation stayed scalar, this form becomes SSE2 compares and selects.
            let mut out = *rb;
            for i in 0..BLOCK {
                let in_group = -((gb[i] == g) as i32);
                let in_rank = -((rkb[i] == r) as i32);
                let of_kind = -((kb[i] == k) as i32);
                let v = ((same_group & in_group) | (same_rank & in_rank & !in_group) | (other_rank & !in_rank)) & of_kind;
                let above = -((v > out[i]) as i32);
                out[i] = (v & above) | (out[i] & !above);
            }
            *rb = out;
        }
    }

    /// The smallest ready time (`NEVER_LANE`: no candidate).
    #[inline(always)]
    pub fn min(&self) -> i32 {
        let mut acc = [NEVER_LANE; BLOCK];
        for rb in &self.ready {
            for i in 0..BLOCK {
                acc[i] = acc[i].min(rb[i]);
            }
        }
        acc.iter().fold(NEVER_LANE, |m, &t| m.min(t))
    }

    /// The smallest ready time of the lanes of ranks not waiting for refresh.
    #[inline]
    pub fn min_gated(&self) -> i32 {
        let mut acc = [NEVER_LANE; BLOCK];
        for (rb, gb) in self.ready.iter().zip(&self.gate) {
            for i in 0..BLOCK {
                acc[i] = acc[i].min(rb[i].max(gb[i]));
            }
        }
        acc.iter().fold(NEVER_LANE, |m, &t| m.min(t))
    }

    /// The lane with the smallest key among those ready at `now` (`gated`: leaving out ranks
    /// waiting for refresh), if any. A vector compare per block finds the ready lanes; only
    /// their (64-bit) keys are compared.
    #[inline(always)]
    pub fn best_ready(&self, now: i32, gated: bool) -> Option<usize> {
        let (mut best, mut best_key) = (usize::MAX, u64::MAX);
        for (j, (rb, gb)) in self.ready.iter().zip(&self.gate).enumerate() {
            let mut m = 0u32;
            for i in 0..BLOCK {
                let t = if gated { rb[i].max(gb[i]) } else { rb[i] };
                m |= ((t <= now) as u32) << i;
            }
            // Few lanes are ready at once: compare only their keys. (A branch-free select over
            // every lane of a block measured 20 % slower.)
            while m != 0 {
                let l = j * BLOCK + m.trailing_zeros() as usize;
                m &= m - 1;
                let k = self.key[l];
                if k < best_key {
                    best_key = k;
                    best = l;
                }
            }
        }
        (best != usize::MAX).then_some(best)
    }

    /// Move the base cycle `delta` later: offsets fall by `delta`, those already in the past
    /// stay at 0 (still ready), empty lanes stay empty.
    pub fn rebase(&mut self, delta: u64) {
        // A delta beyond the offsets' range leaves every candidate in the past.
        let delta = delta.min(NEVER_LANE as u64) as i32;
        for t in self.ready.iter_mut().flatten() {
            if *t != NEVER_LANE {
                *t = t.saturating_sub(delta).max(0);
            }
        }
    }

    /// Gate rank `r`'s lanes off (`blocked`) or on.
    pub fn gate_rank(&mut self, r: usize, blocked: bool) {
        for (gb, rb) in self.gate.iter_mut().zip(&self.rank) {
            for i in 0..BLOCK {
                if rb[i] as usize == r {
                    gb[i] = if blocked { NEVER_LANE } else { 0 };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> Lanes {
        // 8 banks, 2 groups of 2 banks per rank, 2 ranks, one slot.
        let mut l = Lanes::new(8, 1, |b| b / 2, |b| b / 4);
        let kinds = [K_ACT, K_RD, K_ACT, K_ACT, K_ACT, K_PRE, K_ACT, K_NONE];
        for i in 0..8 {
            l.set(i, 5 + i as i32, kinds[i], 8 - i as u64);
        }
        l
    }

    #[test]
    fn a_raise_reaches_only_its_kind_with_the_value_of_each_lanes_scope() {
        let mut l = lanes();
        l.raise_kind(K_ACT, 1, 0, 100, 50, 20);
        // group 1 (banks 2, 3): 100; rank 0 group 0 (bank 0): 50; rank 1: 20; other kinds untouched.
        assert_eq!(l.ready, vec![[50, 6, 100, 100, 20, 10, 20, 12]]);
        l.raise_kind(K_ACT, 2, 1, 30, 30, 0);
        assert_eq!(l.ready, vec![[50, 6, 100, 100, 30, 10, 30, 12]]);
    }

    #[test]
    fn the_best_ready_lane_has_the_smallest_key_and_gates_hide_waiting_ranks() {
        let mut l = lanes();
        assert_eq!(l.best_ready(4, false), None);
        assert_eq!(l.best_ready(7, false), Some(2));
        assert_eq!(l.best_ready(10, false), Some(5));
        l.gate_rank(1, true);
        assert_eq!(l.best_ready(10, true), Some(3));
        assert_eq!(l.min_gated(), 5);
        l.gate_rank(0, true);
        assert_eq!(l.min_gated(), NEVER_LANE);
        assert_eq!(l.min(), 5);
    }

    #[test]
    fn rebasing_keeps_the_past_ready_and_empty_lanes_empty() {
        let mut l = lanes();
        l.set(7, NEVER_LANE, K_NONE, u64::MAX);
        l.rebase(8);
        assert_eq!(l.ready, vec![[0, 0, 0, 0, 1, 2, 3, NEVER_LANE]]);
        l.rebase(1 << 40);
        assert_eq!(l.ready, vec![[0, 0, 0, 0, 0, 0, 0, NEVER_LANE]]);
    }
}
