//! The lane controller's candidates (`lane_controller.rs`): one lane per bank, its candidate in
//! the active direction, each holding its full earliest-issue cycle (bank, bank-group, rank and
//! tFAW parts, and its request's front-end delay) as a 32-bit offset from a base cycle, its
//! command kind and its scheduler key. A command raises in place every lane it constrains
//! (`raise_kind`); the next command is a minimum over the lanes and the smallest key among
//! those ready. Plain loops over fixed arrays of 8-lane `i32`
//! blocks, a constant number of blocks per operation, which LLVM unrolls and
//! vectorises (SSE2 compares, selects and minima). Keys are 24-bit (the controller renumbers
//! its requests' ages before they run out, so they order exactly as the general controller's
//! 64-bit keys for any run length) and carry their lane in 7 low bits, so the smallest ready
//! key is one branch-free vector minimum that also names its lane. Keys below `FIRST_KEYS`
//! (the controller's activated requests) are never gated: a rank waiting for refresh still
//! offers them.

/// An empty lane (no candidate), or a ready time no run reaches: larger than every offset.
pub const NEVER_LANE: i32 = i32::MAX;

// Candidate kinds, the rows of the shared ready-time table (`lane_timing.rs`).
pub const K_RD: i32 = 0;
pub const K_ACT: i32 = 1;
pub const K_PRE: i32 = 2;
pub const K_WR: i32 = 3;
pub const K_NONE: i32 = 4;

use super::shape::Shape;

/// Keys `set` accepts are below this (`NO_KEY`: an empty lane); shifted and with their lane,
/// they stay below `NO_STORED_KEY`.
pub const KEY_LIMIT: u32 = (1 << 24) - 1;
pub const NO_KEY: u32 = u32::MAX;
/// Keys below this are never gated (a rank waiting for refresh offers them).
pub const FIRST_KEYS: u32 = 1 << 23;
/// A stored key: `key << LANE_BITS | lane`, or `i32::MAX` for none.
const LANE_BITS: u32 = 7;
const NO_STORED_KEY: i32 = i32::MAX;
/// Stored keys at or above this are gated with their rank.
const GATED_STORED_KEYS: i32 = (FIRST_KEYS << LANE_BITS) as i32;

/// Lanes per block: the arrays are blocks of this many lanes (every organisation has a
/// multiple of 8 banks per channel), so the loops below have a constant inner width that
/// LLVM turns into SIMD compares, selects and maxima.
pub const BLOCK: usize = 8;
type Block = [i32; BLOCK];
/// Most lanes: 64 banks. The arrays have this fixed size (a power of two), so a lane index
/// masked with `MAX_LANES - 1` needs no bounds check and no `Vec` pointer is loaded.
pub const MAX_LANES: usize = 64;
const MAX_BLOCKS: usize = MAX_LANES / BLOCK;
const _: () = assert!(MAX_LANES <= 1 << LANE_BITS && ((KEY_LIMIT as u64) << LANE_BITS) - 1 < NO_STORED_KEY as u64);

pub struct Lanes {
    /// Earliest issue cycle without the command bus, as an offset from the base cycle.
    ready: [Block; MAX_BLOCKS],
    kind: [Block; MAX_BLOCKS],
    /// `key << LANE_BITS | lane` (`NO_STORED_KEY`: none).
    key: [Block; MAX_BLOCKS],
    /// Bank group (within the channel) and rank of each lane's bank: fixed.
    group: [Block; MAX_BLOCKS],
    rank: [Block; MAX_BLOCKS],
    /// `NEVER_LANE` in the lanes of a rank waiting for refresh, else 0.
    gate: [Block; MAX_BLOCKS],
    /// Blocks in use (the loops run over these only): 1, 2, 4 or 8.
    blocks: usize,
    /// More than one rank: raises then have a third scope (the other ranks).
    multi_rank: bool,
}

fn blocks(values: impl Iterator<Item = i32>) -> [Block; MAX_BLOCKS] {
    let mut v = [[0; BLOCK]; MAX_BLOCKS];
    for (l, x) in values.enumerate() {
        v[l / BLOCK][l % BLOCK] = x;
    }
    v
}

/// Run `$body` with `$n` the number of blocks in use as a constant, so the loops over blocks
/// unroll and need no bounds checks: the shape's (`shape.rs`), else one predictable branch per
/// operation on the lanes' own count.
macro_rules! by_blocks {
    ($self:ident, $S:ident, $n:ident => $body:expr) => {
        match if $S::BLOCKS != 0 { $S::BLOCKS } else { $self.blocks } {
            1 => {
                let $n: usize = 1;
                $body
            }
            2 => {
                let $n: usize = 2;
                $body
            }
            4 => {
                let $n: usize = 4;
                $body
            }
            _ => {
                let $n: usize = MAX_BLOCKS;
                $body
            }
        }
    };
}

#[inline(always)]
fn at(l: usize) -> (usize, usize) {
    let l = l & (MAX_LANES - 1);
    (l / BLOCK, l % BLOCK)
}

impl Lanes {
    /// Lane `b` is bank `b`'s. Padding lanes (to a whole block) stay empty.
    pub fn new(banks: usize, group_of_bank: impl Fn(usize) -> usize, rank_of_bank: impl Fn(usize) -> usize) -> Self {
        assert!(banks <= MAX_LANES, "{banks} lanes (at most {MAX_LANES}; checked by lane_controller::unsupported)");
        let ranks = (0..banks).map(&rank_of_bank).max().map_or(1, |r| r + 1);
        Lanes {
            ready: [[NEVER_LANE; BLOCK]; MAX_BLOCKS],
            kind: [[K_NONE; BLOCK]; MAX_BLOCKS],
            key: [[NO_STORED_KEY; BLOCK]; MAX_BLOCKS],
            group: blocks((0..banks).map(|b| group_of_bank(b) as i32)),
            rank: blocks((0..banks).map(|b| rank_of_bank(b) as i32)),
            gate: [[0; BLOCK]; MAX_BLOCKS],
            // A power of two (padding lanes stay empty), so `by_blocks!` has four widths.
            blocks: banks.div_ceil(BLOCK).next_power_of_two(),
            multi_rank: ranks > 1,
        }
    }

    /// Lanes, padding included.
    #[inline(always)]
    pub fn lane_count(&self) -> usize {
        self.blocks * BLOCK
    }

    #[inline(always)]
    pub fn ready(&self, l: usize) -> i32 {
        let (j, i) = at(l);
        self.ready[j][i]
    }

    #[inline(always)]
    pub fn kind(&self, l: usize) -> i32 {
        let (j, i) = at(l);
        self.kind[j][i]
    }

    #[inline(always)]
    pub fn group(&self, l: usize) -> i32 {
        let (j, i) = at(l);
        self.group[j][i]
    }

    /// Lane `l`'s key (`NO_KEY`: none).
    #[inline(always)]
    pub fn key(&self, l: usize) -> u32 {
        let (j, i) = at(l);
        let k = self.key[j][i];
        if k == NO_STORED_KEY {
            NO_KEY
        } else {
            k as u32 >> LANE_BITS
        }
    }

    /// Lane `l` is hidden by its rank's gate (its key is not below `FIRST_KEYS`).
    #[inline(always)]
    pub fn is_gated(&self, l: usize) -> bool {
        let (j, i) = at(l);
        self.gate[j][i] != 0 && self.key[j][i] >= GATED_STORED_KEYS
    }

    /// Give lane `l` a candidate (`K_NONE`, `NEVER_LANE`, `NO_KEY`: none); `key` is below
    /// `KEY_LIMIT`, unique among the lanes.
    #[inline(always)]
    pub fn set(&mut self, l: usize, ready: i32, kind: i32, key: u32) {
        debug_assert!(key < KEY_LIMIT || key == NO_KEY, "lane key {key}");
        let (j, i) = at(l);
        self.ready[j][i] = ready;
        self.kind[j][i] = kind;
        self.key[j][i] = if key == NO_KEY { NO_STORED_KEY } else { (key << LANE_BITS | (l & (MAX_LANES - 1)) as u32) as i32 };
    }

    /// Raise the lanes of kind `k`: those of bank group `g` to `same_group`, the other groups of
    /// rank `r` to `same_rank`, the other ranks' to `other_rank` (0: no constraint).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn raise_kind<S: Shape>(&mut self, k: i32, g: i32, r: i32, same_group: i32, same_rank: i32, other_rank: i32) {
        let multi_rank = S::MULTI_RANK.unwrap_or(self.multi_rank);
        by_blocks!(self, S, n => self.raise_kind_n(n, multi_rank, k, g, r, same_group, same_rank, other_rank))
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn raise_kind_n(&mut self, n: usize, multi_rank: bool, k: i32, g: i32, r: i32, same_group: i32, same_rank: i32, other_rank: i32) {
        // Written as masks (all ones / zero) and bitwise selects: the `if` chain of the same
        // computation stayed scalar, this form becomes SSE2 compares and selects.
        if !multi_rank {
            // One rank: every lane is in rank `r`, so two scopes (and one compare fewer).
            for j in 0..n {
                let (mut out, kb, gb) = (self.ready[j], &self.kind[j], &self.group[j]);
                for i in 0..BLOCK {
                    let in_group = -((gb[i] == g) as i32);
                    let of_kind = -((kb[i] == k) as i32);
                    let v = ((same_group & in_group) | (same_rank & !in_group)) & of_kind;
                    let above = -((v > out[i]) as i32);
                    out[i] = (v & above) | (out[i] & !above);
                }
                self.ready[j] = out;
            }
            return;
        }
        for j in 0..n {
            let (mut out, kb, gb, rkb) = (self.ready[j], &self.kind[j], &self.group[j], &self.rank[j]);
            for i in 0..BLOCK {
                let in_group = -((gb[i] == g) as i32);
                let in_rank = -((rkb[i] == r) as i32);
                let of_kind = -((kb[i] == k) as i32);
                let v = ((same_group & in_group) | (same_rank & in_rank & !in_group) | (other_rank & !in_rank)) & of_kind;
                let above = -((v > out[i]) as i32);
                out[i] = (v & above) | (out[i] & !above);
            }
            self.ready[j] = out;
        }
    }

    /// The smallest ready time (`NEVER_LANE`: no candidate).
    #[inline(always)]
    pub fn min<S: Shape>(&self) -> i32 {
        by_blocks!(self, S, n => self.min_n(n, false))
    }

    /// The smallest ready time of the lanes not gated (ranks not waiting for refresh, and
    /// keys below `FIRST_KEYS`).
    #[inline]
    pub fn min_gated<S: Shape>(&self) -> i32 {
        by_blocks!(self, S, n => self.min_n(n, true))
    }

    /// A lane's ready time `t` behind its gate `g`, unless its stored key `k` is below
    /// `GATED_STORED_KEYS`.
    #[inline(always)]
    fn gated_ready(t: i32, g: i32, k: i32) -> i32 {
        t.max(g & -((k >= GATED_STORED_KEYS) as i32))
    }

    #[inline(always)]
    fn min_n(&self, n: usize, gated: bool) -> i32 {
        let mut acc = [NEVER_LANE; BLOCK];
        // Two loops, so the common one (no rank waiting for refresh) stays as short as it was.
        if gated {
            for j in 0..n {
                let (rb, gb, kb) = (&self.ready[j], &self.gate[j], &self.key[j]);
                for i in 0..BLOCK {
                    acc[i] = acc[i].min(Self::gated_ready(rb[i], gb[i], kb[i]));
                }
            }
        } else {
            for j in 0..n {
                let rb = &self.ready[j];
                for i in 0..BLOCK {
                    acc[i] = acc[i].min(rb[i]);
                }
            }
        }
        acc.iter().fold(NEVER_LANE, |m, &t| m.min(t))
    }

    /// The lane with the smallest key among those ready at `now` (`gated`: leaving out ranks
    /// waiting for refresh, but for keys below `FIRST_KEYS`), if any: a vector minimum of the
    /// ready lanes' keys.
    #[inline(always)]
    pub fn best_ready<S: Shape>(&self, now: i32, gated: bool) -> Option<usize> {
        by_blocks!(self, S, n => self.best_ready_n(n, now, gated))
    }

    #[inline(always)]
    fn best_ready_n(&self, n: usize, now: i32, gated: bool) -> Option<usize> {
        // Lanes not ready at `now` (empty ones included) read as `NO_STORED_KEY`; the
        // minimum of the rest is the answer's key, and its low bits its lane. No branch per
        // lane or per ready lane (the loop over ready lanes' 64-bit keys this replaces
        // mispredicted about twice per request on random).
        let mut acc = [NO_STORED_KEY; BLOCK];
        if gated {
            for j in 0..n {
                let (rb, gb, kb) = (&self.ready[j], &self.gate[j], &self.key[j]);
                for i in 0..BLOCK {
                    let t = Self::gated_ready(rb[i], gb[i], kb[i]);
                    acc[i] = acc[i].min(kb[i] | (-((t > now) as i32) & NO_STORED_KEY));
                }
            }
        } else {
            for j in 0..n {
                let (rb, kb) = (&self.ready[j], &self.key[j]);
                for i in 0..BLOCK {
                    acc[i] = acc[i].min(kb[i] | (-((rb[i] > now) as i32) & NO_STORED_KEY));
                }
            }
        }
        let best = acc.iter().fold(NO_STORED_KEY, |m, &k| m.min(k));
        (best != NO_STORED_KEY).then_some((best as u32 & ((1 << LANE_BITS) - 1)) as usize)
    }

    /// Move the base cycle `delta` later: offsets fall by `delta`, those already in the past
    /// stay at 0 (still ready), empty lanes stay empty.
    pub fn rebase(&mut self, delta: u64) {
        // A delta beyond the offsets' range leaves every candidate in the past.
        let delta = delta.min(NEVER_LANE as u64) as i32;
        for t in self.ready.iter_mut().take(self.blocks).flatten() {
            if *t != NEVER_LANE {
                *t = t.saturating_sub(delta).max(0);
            }
        }
    }

    /// Gate rank `r`'s lanes off (`blocked`) or on.
    pub fn gate_rank(&mut self, r: usize, blocked: bool) {
        for (gb, rb) in self.gate.iter_mut().zip(&self.rank).take(self.blocks) {
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
    use crate::controller::shape::Dynamic;

    fn lanes() -> Lanes {
        // 8 banks, 2 groups of 2 banks per rank, 2 ranks.
        let mut l = Lanes::new(8, |b| b / 2, |b| b / 4);
        let kinds = [K_ACT, K_RD, K_ACT, K_ACT, K_ACT, K_PRE, K_ACT, K_NONE];
        for (i, &k) in kinds.iter().enumerate() {
            l.set(i, 5 + i as i32, k, FIRST_KEYS + 8 - i as u32);
        }
        l
    }

    #[test]
    fn a_raise_reaches_only_its_kind_with_the_value_of_each_lanes_scope() {
        let mut l = lanes();
        l.raise_kind::<Dynamic>(K_ACT, 1, 0, 100, 50, 20);
        // group 1 (banks 2, 3): 100; rank 0 group 0 (bank 0): 50; rank 1: 20; other kinds untouched.
        assert_eq!(l.ready[..1], [[50, 6, 100, 100, 20, 10, 20, 12]]);
        l.raise_kind::<Dynamic>(K_ACT, 2, 1, 30, 30, 0);
        assert_eq!(l.ready[..1], [[50, 6, 100, 100, 30, 10, 30, 12]]);
    }

    #[test]
    fn the_best_ready_lane_has_the_smallest_key_and_gates_hide_waiting_ranks() {
        let mut l = lanes();
        assert_eq!(l.best_ready::<Dynamic>(4, false), None);
        assert_eq!(l.best_ready::<Dynamic>(7, false), Some(2));
        assert_eq!(l.best_ready::<Dynamic>(10, false), Some(5));
        l.gate_rank(1, true);
        assert_eq!(l.best_ready::<Dynamic>(10, true), Some(3));
        assert_eq!(l.min_gated::<Dynamic>(), 5);
        l.gate_rank(0, true);
        assert_eq!(l.min_gated::<Dynamic>(), NEVER_LANE);
        assert_eq!(l.min::<Dynamic>(), 5);
    }

    #[test]
    fn keys_below_first_keys_pass_the_gate_and_go_first() {
        let mut l = lanes();
        l.gate_rank(1, true);
        assert!(l.is_gated(5));
        // Lane 6 (rank 1, ready at 11) gets a first key: it passes its rank's gate.
        l.set(6, 11, K_RD, 40);
        assert!(!l.is_gated(6) && l.key(6) == 40);
        assert_eq!(l.best_ready::<Dynamic>(10, true), Some(3));
        assert_eq!(l.best_ready::<Dynamic>(11, true), Some(6));
        l.gate_rank(0, true);
        assert_eq!(l.min_gated::<Dynamic>(), 11);
        assert_eq!(l.best_ready::<Dynamic>(20, true), Some(6));
        assert_eq!(l.best_ready::<Dynamic>(20, false), Some(6));
    }

    #[test]
    fn every_ready_mask_of_a_block_finds_the_smallest_ready_key() {
        // 16 lanes, one rank: each of the 2^8 patterns of ready lanes in the second block, keys
        // falling with the lane index, so the answer is the highest ready lane.
        let mut l = Lanes::new(16, |b| b / 4, |_| 0);
        for mask in 0u32..256 {
            for i in 0..16 {
                let ready = if i >= 8 && mask & (1 << (i - 8)) != 0 { 3 } else { 9 };
                l.set(i, ready, K_RD, 100 - i as u32);
            }
            let want = (mask != 0).then(|| 8 + 31 - mask.leading_zeros() as usize);
            assert_eq!(l.best_ready::<Dynamic>(5, false), want, "mask {mask:#010b}");
            assert_eq!(l.best_ready::<Dynamic>(9, false), Some(15));
        }
    }

    #[test]
    fn a_single_ready_lane_is_the_answer_in_any_block_and_with_any_block_count() {
        // 16, 32 and 64 lanes (8 blocks), each lane alone ready, then with a smaller-keyed lane
        // ready in another block.
        for banks in [16, 32, 64] {
            let mut l = Lanes::new(banks, |b| b / 4, |b| b / 16);
            let n = l.lane_count();
            for alone in 0..n {
                for i in 0..n {
                    l.set(i, if i == alone { 2 } else { 7 }, K_RD, 1000 + i as u32);
                }
                assert_eq!(l.best_ready::<Dynamic>(4, false), Some(alone), "{n} lanes, lane {alone}");
                let other = (alone + 9) % n;
                l.set(other, 1, K_RD, 5);
                assert_eq!(l.best_ready::<Dynamic>(4, false), Some(other), "{n} lanes, lanes {alone} and {other}");
            }
        }
    }

    #[test]
    fn the_largest_key_in_the_last_lane_is_a_candidate_not_an_empty_lane() {
        let mut l = Lanes::new(64, |b| b / 4, |b| b / 16);
        l.set(63, 0, K_RD, KEY_LIMIT - 1);
        assert_eq!(l.best_ready::<Dynamic>(0, false), Some(63));
        l.set(3, 0, K_ACT, KEY_LIMIT - 2);
        assert_eq!(l.best_ready::<Dynamic>(0, false), Some(3));
        l.set(3, NEVER_LANE, K_NONE, NO_KEY);
        l.set(63, NEVER_LANE, K_NONE, NO_KEY);
        assert_eq!(l.best_ready::<Dynamic>(NEVER_LANE - 1, false), None);
    }

    #[test]
    fn a_one_rank_raise_reaches_its_group_and_the_rest_of_its_kind() {
        let mut l = Lanes::new(8, |b| b / 2, |_| 0);
        let kinds = [K_ACT, K_RD, K_ACT, K_ACT, K_ACT, K_PRE, K_ACT, K_NONE];
        for (i, &k) in kinds.iter().enumerate() {
            l.set(i, 5 + i as i32, k, 8 - i as u32);
        }
        l.raise_kind::<Dynamic>(K_ACT, 1, 0, 100, 50, 0);
        assert_eq!(l.ready[..1], [[50, 6, 100, 100, 50, 10, 50, 12]]);
    }

    #[test]
    fn padding_blocks_stay_empty_and_out_of_every_answer() {
        // 24 banks: three blocks in use, four processed (`by_blocks!` widths are powers of two).
        let mut l = Lanes::new(24, |b| b / 4, |b| b / 8);
        assert_eq!(l.lane_count(), 32);
        assert_eq!((l.min::<Dynamic>(), l.best_ready::<Dynamic>(1 << 30, false)), (NEVER_LANE, None));
        for i in 0..24 {
            l.set(i, 40 + i as i32, K_ACT, FIRST_KEYS + 100 + i as u32);
        }
        l.raise_kind::<Dynamic>(K_ACT, 5, 2, 90, 80, 70);
        assert_eq!(l.ready(23), 90);
        assert_eq!(l.ready(24), NEVER_LANE);
        assert_eq!((l.min::<Dynamic>(), l.best_ready::<Dynamic>(80, false)), (70, Some(0)));
        l.gate_rank(0, true);
        assert_eq!(l.min_gated::<Dynamic>(), 70);
        assert_eq!(l.best_ready::<Dynamic>(80, true), Some(8));
    }

    #[test]
    fn rebasing_keeps_the_past_ready_and_empty_lanes_empty() {
        let mut l = lanes();
        l.set(7, NEVER_LANE, K_NONE, NO_KEY);
        l.rebase(8);
        assert_eq!(l.ready[..1], [[0, 0, 0, 0, 1, 2, 3, NEVER_LANE]]);
        l.rebase(1 << 40);
        assert_eq!(l.ready[..1], [[0, 0, 0, 0, 0, 0, 0, NEVER_LANE]]);
    }
}
