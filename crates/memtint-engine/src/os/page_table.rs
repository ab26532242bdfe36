//! One process's page table: virtual page -> physical frame, filled on first touch (BPM §2.4,
//! HVR §8.1). Translation is on the simulator's hot path, and random access over a large
//! footprint made hash-map probes cache misses; so the pages near the first one touched live
//! in a dense array (one 4-byte slot per page, one load per lookup), and only pages far from
//! it go to a fast (Fx) hash map.

use super::buddy::Frame;
use rustc_hash::FxHashMap;

/// An empty dense slot. Frames are below 2^31 (the allocator's limit), so none is this.
const UNMAPPED: Frame = Frame::MAX;

/// The most pages the dense window covers (16 MiB of slots, 16 GiB of virtual space).
const MAX_DENSE_PAGES: u64 = 1 << 22;

#[derive(Default)]
pub struct PageTable {
    /// Frames of virtual pages `base..base + dense.len()`, `UNMAPPED` where none yet.
    dense: Vec<Frame>,
    base: u64,
    /// Pages outside the dense window.
    sparse: FxHashMap<u64, Frame>,
    mapped: usize,
}

impl PageTable {
    pub fn new() -> Self {
        PageTable::default()
    }

    #[inline]
    pub fn lookup(&mut self, vpage: u64) -> Option<Frame> {
        let i = vpage.wrapping_sub(self.base);
        if i < self.dense.len() as u64 {
            let frame = self.dense[i as usize];
            return (frame != UNMAPPED).then_some(frame);
        }
        self.sparse.get(&vpage).copied()
    }

    /// Maps `vpage`, which must not be mapped yet.
    pub fn insert(&mut self, vpage: u64, frame: Frame) {
        debug_assert!(frame != UNMAPPED && self.lookup(vpage).is_none());
        self.mapped += 1;
        if self.dense.is_empty() {
            self.base = vpage;
        }
        let end = self.base + self.dense.len() as u64;
        if vpage >= self.base && vpage < end {
            self.dense[(vpage - self.base) as usize] = frame;
        } else if vpage >= end && vpage - self.base < MAX_DENSE_PAGES {
            // Growing upwards (the common case: ascending first touches); amortised by `Vec`.
            self.dense.resize((vpage - self.base) as usize, UNMAPPED);
            self.dense.push(frame);
        } else if vpage < self.base && end - vpage <= MAX_DENSE_PAGES {
            // Growing downwards: move the window, with slack below so that this is rare.
            let slack = (self.dense.len() as u64).min(MAX_DENSE_PAGES - (end - vpage)).min(vpage);
            let new_base = vpage - slack;
            let mut dense = vec![UNMAPPED; (self.base - new_base) as usize];
            dense.extend_from_slice(&self.dense);
            dense[(vpage - new_base) as usize] = frame;
            self.dense = dense;
            self.base = new_base;
        } else {
            self.sparse.insert(vpage, frame);
        }
    }

    /// Mapped pages.
    pub fn len(&self) -> usize {
        self.mapped
    }

    pub fn is_empty(&self) -> bool {
        self.mapped == 0
    }

    /// Every (virtual page, frame), in no particular order.
    pub fn mappings(&self) -> impl Iterator<Item = (u64, Frame)> + '_ {
        let dense = self.dense.iter().enumerate().filter(|(_, &f)| f != UNMAPPED);
        dense.map(|(i, &f)| (self.base + i as u64, f)).chain(self.sparse.iter().map(|(&p, &f)| (p, f)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_pages_agree_with_a_map() {
        let mut t = PageTable::new();
        let mut reference = std::collections::HashMap::new();
        // Ascending, then below the base, then far away (sparse), then inside holes.
        let pages = [100u64, 101, 105, 90, 3, 1 << 40, 102, 0, 95, (1 << 40) + 1, 4_000_000, 99];
        for (k, &p) in pages.iter().enumerate() {
            assert_eq!(t.lookup(p), None);
            t.insert(p, k as Frame);
            reference.insert(p, k as Frame);
            for &q in &pages {
                assert_eq!(t.lookup(q), reference.get(&q).copied(), "page {q}");
            }
        }
        assert_eq!(t.len(), pages.len());
        let mut all: Vec<_> = t.mappings().collect();
        all.sort();
        let mut want: Vec<_> = reference.into_iter().collect();
        want.sort();
        assert_eq!(all, want);
    }
}
