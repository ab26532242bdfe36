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

pub struct Lanes {
    /// Earliest issue cycle without the command bus, as an offset from the base cycle.
    pub ready: Vec<i32>,
    pub kind: Vec<i32>,
    pub key: Vec<u64>,
    /// Bank group (within the channel) and rank of each lane's bank: fixed.
    pub group: Vec<i32>,
    pub rank: Vec<i32>,
    /// `NEVER_LANE` in the lanes of a rank waiting for refresh, else 0.
    pub gate: Vec<i32>,
}

impl Lanes {
    /// `slots` lanes per bank: lane `slot * banks + bank`.
    pub fn new(banks: usize, slots: usize, group_of_bank: impl Fn(usize) -> usize, rank_of_bank: impl Fn(usize) -> usize) -> Self {
        let n = banks * slots;
        Lanes {
            ready: vec![NEVER_LANE; n],
            kind: vec![K_NONE; n],
            key: vec![u64::MAX; n],
            group: (0..n).map(|l| group_of_bank(l % banks) as i32).collect(),
            rank: (0..n).map(|l| rank_of_bank(l % banks) as i32).collect(),
            gate: vec![0; n],
        }
    }

    /// Raise the lanes of kind `k`: those of bank group `g` to `same_group`, the other groups of
    /// rank `r` to `same_rank`, the other ranks' to `other_rank` (0: no constraint).
    #[inline(always)]
    pub fn raise_kind(&mut self, k: i32, g: i32, r: i32, same_group: i32, same_rank: i32, other_rank: i32) {
        let n = self.ready.len();
        let (ready, kind, group, rank) = (&mut self.ready[..n], &self.kind[..n], &self.group[..n], &self.rank[..n]);
        for l in 0..n {
            let v = if group[l] == g {
                same_group
            } else if rank[l] == r {
                same_rank
            } else {
                other_rank
            };
            let v = if kind[l] == k { v } else { 0 };
            ready[l] = ready[l].max(v);
        }
    }

    /// Raise the lanes of kind `k` of rank `r` to `t`.
    #[inline]
    pub fn raise_rank(&mut self, k: i32, r: i32, t: i32) {
        let n = self.ready.len();
        let (ready, kind, rank) = (&mut self.ready[..n], &self.kind[..n], &self.rank[..n]);
        for l in 0..n {
            let v = if kind[l] == k && rank[l] == r { t } else { 0 };
            ready[l] = ready[l].max(v);
        }
    }

    /// The smallest ready time (`NEVER_LANE`: no candidate).
    #[inline(always)]
    pub fn min(&self) -> i32 {
        self.ready.iter().fold(NEVER_LANE, |m, &t| m.min(t))
    }

    /// The smallest ready time of the lanes of ranks not waiting for refresh.
    #[inline]
    pub fn min_gated(&self) -> i32 {
        self.ready.iter().zip(&self.gate).fold(NEVER_LANE, |m, (&t, &g)| m.min(t.max(g)))
    }

    /// The lane with the smallest key among those ready at `now` (`gated`: leaving out ranks
    /// waiting for refresh), if any.
    #[inline(always)]
    pub fn best_ready(&self, now: i32, gated: bool) -> Option<usize> {
        let (mut best, mut best_key) = (usize::MAX, u64::MAX);
        let n = self.ready.len();
        let (ready, key, gate) = (&self.ready[..n], &self.key[..n], &self.gate[..n]);
        for l in 0..n {
            let t = if gated { ready[l].max(gate[l]) } else { ready[l] };
            if t <= now && key[l] < best_key {
                best_key = key[l];
                best = l;
            }
        }
        (best != usize::MAX).then_some(best)
    }

    /// Move the base cycle `delta` later: offsets fall by `delta`, those already in the past
    /// stay at 0 (still ready), empty lanes stay empty.
    pub fn rebase(&mut self, delta: u64) {
        // A delta beyond the offsets' range leaves every candidate in the past.
        let delta = delta.min(NEVER_LANE as u64) as i32;
        for t in &mut self.ready {
            if *t != NEVER_LANE {
                *t = t.saturating_sub(delta).max(0);
            }
        }
    }

    /// Gate rank `r`'s lanes off (`blocked`) or on.
    pub fn gate_rank(&mut self, r: usize, blocked: bool) {
        for (g, &rank) in self.gate.iter_mut().zip(&self.rank) {
            if rank as usize == r {
                *g = if blocked { NEVER_LANE } else { 0 };
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
        l.ready = vec![5, 6, 7, 8, 9, 10, 11, 12];
        l.kind = vec![K_ACT, K_RD, K_ACT, K_ACT, K_ACT, K_PRE, K_ACT, K_NONE];
        l.key = vec![8, 7, 6, 5, 4, 3, 2, 1];
        l
    }

    #[test]
    fn a_raise_reaches_only_its_kind_with_the_value_of_each_lanes_scope() {
        let mut l = lanes();
        l.raise_kind(K_ACT, 1, 0, 100, 50, 20);
        // group 1 (banks 2, 3): 100; rank 0 group 0 (bank 0): 50; rank 1: 20; other kinds untouched.
        assert_eq!(l.ready, vec![50, 6, 100, 100, 20, 10, 20, 12]);
        l.raise_rank(K_ACT, 1, 30);
        assert_eq!(l.ready, vec![50, 6, 100, 100, 30, 10, 30, 12]);
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
        l.ready[7] = NEVER_LANE;
        l.rebase(8);
        assert_eq!(l.ready, vec![0, 0, 0, 0, 1, 2, 3, NEVER_LANE]);
    }
}
