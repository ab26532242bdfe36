//! LRU stack (reuse) distance of a trace's line references: for each read, the number of
//! distinct lines referenced since the previous reference to the same line (Mattson et al.,
//! 1970). A read at distance d hits in a fully associative LRU cache of more than d lines, so the
//! distribution says how a program's misses fall as its cache share grows: the cache-sensitivity
//! axis on which the HVR and BPM papers classify programs.
//!
//! Exact, O(log n) per reference: a Fenwick tree over reference slots marks each line's latest
//! reference; a distance is the count of marks after the line's previous one. Slots are
//! renumbered when they run out, so memory stays proportional to the footprint, not the trace.
//!
//! Writebacks are references too (a dirty line written into the LLC becomes its most recent
//! line, as in the simulator's cache) but only reads are counted in the distribution.

use rustc_hash::FxHashMap;
use serde::Serialize;

const LINE_BYTES_LOG2: u32 = 6;
/// Exact buckets below this distance; above it, 4 buckets per power of two (<= 25 % wide).
const EXACT_BELOW: u64 = 8;
const SUB_BUCKETS_LOG2: u32 = 2;
/// Cache sizes whose fully associative LRU hit fraction is reported exactly.
pub const LRU_SIZES_BYTES: [u64; 7] = [256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20];

/// Fenwick (binary indexed) tree of 0/1 marks.
struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    fn with_ones(capacity: usize, ones: usize) -> Self {
        let mut tree = vec![0u32; capacity + 1];
        // Linear build: each node passes its (complete) sum up to its parent.
        for i in 1..=capacity {
            tree[i] += (i <= ones) as u32;
            let parent = i + (i & i.wrapping_neg());
            if parent <= capacity {
                tree[parent] += tree[i];
            }
        }
        Fenwick { tree }
    }

    fn capacity(&self) -> usize {
        self.tree.len() - 1
    }

    fn add(&mut self, slot: usize, delta: i32) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Marks in slots `0..=slot`.
    fn prefix(&self, slot: usize) -> u64 {
        let mut i = slot + 1;
        let mut sum = 0u64;
        while i > 0 {
            sum += self.tree[i] as u64;
            i &= i - 1;
        }
        sum
    }
}

/// Streaming reuse-distance analysis.
pub struct ReuseDistance {
    slot_of: FxHashMap<u64, u32>,
    line_of_slot: Vec<u64>,
    marks: Fenwick,
    next_slot: usize,
    histogram: Vec<u64>,
    cold_reads: u64,
    reads: u64,
    lru_hits: [u64; LRU_SIZES_BYTES.len()],
    min_capacity: usize,
}

impl Default for ReuseDistance {
    fn default() -> Self {
        Self::with_capacity(1 << 16)
    }
}

impl ReuseDistance {
    fn with_capacity(capacity: usize) -> Self {
        ReuseDistance {
            slot_of: FxHashMap::default(),
            line_of_slot: vec![u64::MAX; capacity],
            marks: Fenwick::with_ones(capacity, 0),
            next_slot: 0,
            histogram: Vec::new(),
            cold_reads: 0,
            reads: 0,
            lru_hits: [0; LRU_SIZES_BYTES.len()],
            min_capacity: capacity,
        }
    }

    /// A read of byte address `addr`.
    pub fn read(&mut self, addr: u64) {
        self.reads += 1;
        match self.reference(addr >> LINE_BYTES_LOG2) {
            None => self.cold_reads += 1,
            Some(d) => {
                let b = bucket_of(d);
                if b >= self.histogram.len() {
                    self.histogram.resize(b + 1, 0);
                }
                self.histogram[b] += 1;
                for (hits, size) in self.lru_hits.iter_mut().zip(LRU_SIZES_BYTES) {
                    *hits += (d < size >> LINE_BYTES_LOG2) as u64;
                }
            }
        }
    }

    /// A writeback of byte address `addr`: makes the line most recent, counts nothing.
    pub fn writeback(&mut self, addr: u64) {
        self.reference(addr >> LINE_BYTES_LOG2);
    }

    /// References `line`; its stack distance, or None on its first reference.
    fn reference(&mut self, line: u64) -> Option<u64> {
        if self.next_slot == self.marks.capacity() {
            self.renumber();
        }
        let slot = self.next_slot;
        self.next_slot += 1;
        let distance = match self.slot_of.insert(line, slot as u32) {
            Some(prev) => {
                let prev = prev as usize;
                // Every mark lies before `slot`: those after `prev` are the distinct lines since.
                let d = self.slot_of.len() as u64 - self.marks.prefix(prev);
                self.marks.add(prev, -1);
                self.line_of_slot[prev] = u64::MAX;
                Some(d)
            }
            None => None,
        };
        self.marks.add(slot, 1);
        self.line_of_slot[slot] = line;
        distance
    }

    /// Packs the live marks into slots `0..lines` (order kept) and leaves room for as many again.
    fn renumber(&mut self) {
        let live = self.slot_of.len();
        let capacity = (2 * live).max(self.min_capacity);
        let mut line_of_slot = vec![u64::MAX; capacity];
        let mut n = 0;
        for &line in self.line_of_slot[..self.next_slot].iter().filter(|&&l| l != u64::MAX) {
            line_of_slot[n] = line;
            self.slot_of.insert(line, n as u32);
            n += 1;
        }
        debug_assert_eq!(n, live);
        self.line_of_slot = line_of_slot;
        self.marks = Fenwick::with_ones(capacity, live);
        self.next_slot = live;
    }

    pub fn summary(&self) -> ReuseSummary {
        let reused = self.reads - self.cold_reads;
        let quantile = |q: f64| -> Option<u64> {
            if reused == 0 {
                return None;
            }
            let want = (q * reused as f64).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (b, &n) in self.histogram.iter().enumerate() {
                seen += n;
                if seen >= want {
                    return Some(bucket_upper(b));
                }
            }
            None
        };
        let frac = |n: u64| if self.reads == 0 { 0.0 } else { n as f64 / self.reads as f64 };
        ReuseSummary {
            reads: self.reads,
            cold_reads: self.cold_reads,
            cold_fraction: frac(self.cold_reads),
            median_lines: quantile(0.5),
            p90_lines: quantile(0.9),
            lru_hit_fraction: LRU_SIZES_BYTES
                .iter()
                .zip(self.lru_hits)
                .map(|(&size, hits)| LruHit { cache_bytes: size, hit_fraction: frac(hits) })
                .collect(),
            histogram: self
                .histogram
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(b, &n)| ReuseBucket { min_lines: bucket_lower(b), max_lines: bucket_upper(b), reads: n })
                .collect(),
        }
    }
}

fn bucket_of(d: u64) -> usize {
    if d < EXACT_BELOW {
        return d as usize;
    }
    let octave = 63 - d.leading_zeros();
    let sub = (d >> (octave - SUB_BUCKETS_LOG2)) & ((1 << SUB_BUCKETS_LOG2) - 1);
    (EXACT_BELOW as usize) + (((octave - EXACT_BELOW.trailing_zeros()) << SUB_BUCKETS_LOG2) as usize) + sub as usize
}

fn bucket_lower(b: usize) -> u64 {
    if (b as u64) < EXACT_BELOW {
        return b as u64;
    }
    let i = b - EXACT_BELOW as usize;
    let octave = (i >> SUB_BUCKETS_LOG2) as u32 + EXACT_BELOW.trailing_zeros();
    let sub = (i & ((1 << SUB_BUCKETS_LOG2) - 1)) as u64;
    (1u64 << octave) + (sub << (octave - SUB_BUCKETS_LOG2))
}

fn bucket_upper(b: usize) -> u64 {
    bucket_lower(b + 1) - 1
}

/// The reuse-distance distribution of a trace's reads (distances in 64-byte lines).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReuseSummary {
    pub reads: u64,
    /// First references to a line (infinite distance).
    pub cold_reads: u64,
    pub cold_fraction: f64,
    /// Median and 90th percentile of the finite distances (upper edge of their bucket); None
    /// when no line was read twice.
    pub median_lines: Option<u64>,
    pub p90_lines: Option<u64>,
    /// Exact fraction of reads that would hit a fully associative LRU cache of each size.
    pub lru_hit_fraction: Vec<LruHit>,
    /// Non-empty buckets: exact below 8 lines, then 4 per power of two.
    pub histogram: Vec<ReuseBucket>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LruHit {
    pub cache_bytes: u64,
    pub hit_fraction: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReuseBucket {
    pub min_lines: u64,
    pub max_lines: u64,
    pub reads: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Distances by the definition: walk back to the previous reference, collecting lines.
    fn naive(refs: &[(bool, u64)]) -> Vec<Option<u64>> {
        let mut out = Vec::new();
        for (i, &(is_read, line)) in refs.iter().enumerate() {
            if !is_read {
                continue;
            }
            let prev = refs[..i].iter().rposition(|&(_, l)| l == line);
            out.push(prev.map(|p| {
                let mut seen: Vec<u64> = refs[p + 1..i].iter().map(|&(_, l)| l).collect();
                seen.sort_unstable();
                seen.dedup();
                seen.len() as u64
            }));
        }
        out
    }

    fn analyse(refs: &[(bool, u64)], capacity: usize) -> (ReuseDistance, Vec<Option<u64>>) {
        let mut r = ReuseDistance::with_capacity(capacity);
        let mut got = Vec::new();
        for &(is_read, line) in refs {
            if is_read {
                r.reads += 1;
                got.push(r.reference(line));
                r.reads -= 1;
            } else {
                r.reference(line);
            }
        }
        (r, got)
    }

    #[test]
    fn cyclic_sweep_over_n_lines_has_distance_n_minus_1() {
        let mut r = ReuseDistance::default();
        for _ in 0..3 {
            for line in 0..100u64 {
                r.read(line << 6);
            }
        }
        let s = r.summary();
        assert_eq!((s.reads, s.cold_reads), (300, 100));
        assert_eq!(s.histogram.len(), 1);
        assert!(s.histogram[0].min_lines <= 99 && 99 <= s.histogram[0].max_lines);
        // 100 lines fit in 256 KiB: every re-read hits.
        assert!((s.lru_hit_fraction[0].hit_fraction - 200.0 / 300.0).abs() < 1e-12);
    }

    #[test]
    fn writebacks_refresh_recency_but_are_not_counted() {
        let mut r = ReuseDistance::default();
        r.read(0);
        r.read(64);
        r.writeback(0);
        r.read(0); // distinct since the writeback: none
        let s = r.summary();
        assert_eq!((s.reads, s.cold_reads), (3, 2));
        assert_eq!(s.histogram, vec![ReuseBucket { min_lines: 0, max_lines: 0, reads: 1 }]);
    }

    #[test]
    fn buckets_tile_the_distances() {
        for d in 0..5000u64 {
            let b = bucket_of(d);
            assert!(bucket_lower(b) <= d && d <= bucket_upper(b), "{d} in bucket {b}");
        }
        assert_eq!(bucket_upper(bucket_of(8)), 9);
    }

    proptest! {
        #[test]
        fn equals_the_definition(refs in proptest::collection::vec((any::<bool>(), 0u64..40), 0..400), cap in 1usize..64) {
            let (_, got) = analyse(&refs, cap);
            prop_assert_eq!(got, naive(&refs));
        }
    }
}
