//! One process's page table: virtual page -> physical frame, filled on first touch (BPM §2.4,
//! HVR §8.1). Translation is on the simulator's hot path, and random access over a large
//! footprint made hash-map probes cache misses; so the pages near the first one touched live
//! in a dense array (one 4-byte slot per page, one load per lookup), and only pages far from
//! it go to a fast (Fx) hash map.

use super::buddy::Frame;
use rustc_hash::FxHashMap;

/// An empty dense slot. Frames are below 2^31 (the allocator's limit), so none is this.
const UNMAPPED: Frame = Frame::MAX;

/// A frame's top bit marks its page for a NUMA hinting fault (Linux's `PROT_NONE` PTE): the
/// next load through it faults (`os/migration`). `lookup` returns it; `frame_of` strips it.
pub const HINT: Frame = 1 << 31;

/// The frame without its hint mark.
#[inline]
pub fn frame_of(entry: Frame) -> Frame {
    entry & !HINT
}

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
    pub fn lookup(&self, vpage: u64) -> Option<Frame> {
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

    /// Replaces `vpage`'s entry (a migrated page's new frame, or a mark set or cleared).
    pub fn set(&mut self, vpage: u64, entry: Frame) {
        let i = vpage.wrapping_sub(self.base);
        if i < self.dense.len() as u64 && self.dense[i as usize] != UNMAPPED {
            self.dense[i as usize] = entry;
        } else if let Some(f) = self.sparse.get_mut(&vpage) {
            *f = entry;
        } else {
            debug_assert!(false, "set on unmapped page {vpage}");
        }
    }

    /// Unmaps `vpage` (a page swapped out); returns its entry, if it was mapped.
    pub fn remove(&mut self, vpage: u64) -> Option<Frame> {
        let i = vpage.wrapping_sub(self.base);
        let old = if i < self.dense.len() as u64 {
            let slot = &mut self.dense[i as usize];
            (*slot != UNMAPPED).then(|| std::mem::replace(slot, UNMAPPED))
        } else {
            self.sparse.remove(&vpage)
        };
        self.mapped -= old.is_some() as usize;
        old
    }

    /// Marks up to `pages` mapped pages for a hinting fault, from the `cursor`-th dense slot on,
    /// wrapping round (Linux's scanner walks the address space from where it stopped). Returns
    /// the next cursor. Pages far from the first touched (the sparse map) are not scanned.
    pub fn mark(&mut self, cursor: usize, pages: usize) -> usize {
        self.mark_where(cursor, pages, |_| true).0
    }

    /// `mark`, marking only the pages whose frame `want` accepts: up to `pages` marked, over at
    /// most 8 x `pages` mapped pages (Linux's `task_numa_work` charges its scan budget only for
    /// ranges it changed, and walks at most eight times the budget of address space). Returns
    /// the next cursor and the pages marked.
    pub fn mark_where(&mut self, cursor: usize, pages: usize, mut want: impl FnMut(Frame) -> bool) -> (usize, usize) {
        let n = self.dense.len();
        if n == 0 {
            return (0, 0);
        }
        let mut i = cursor % n;
        let (mut marked, mut visited, mut seen) = (0, 0, 0);
        while marked < pages && visited < pages.saturating_mul(8) && seen < n {
            let e = &mut self.dense[i];
            if *e != UNMAPPED {
                if want(frame_of(*e)) {
                    *e |= HINT;
                    marked += 1;
                }
                visited += 1;
            }
            seen += 1;
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        (i, marked)
    }

    /// The virtual pages the dense window spans (mapped or not): a process's address range as
    /// DAMON's virtual-address monitoring sees it.
    pub fn dense_range(&self) -> std::ops::Range<u64> {
        self.base..self.base + self.dense.len() as u64
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
        dense.map(|(i, &f)| (self.base + i as u64, frame_of(f))).chain(self.sparse.iter().map(|(&p, &f)| (p, frame_of(f))))
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
        for p in [101u64, 1 << 40] {
            assert_eq!(t.remove(p), reference.remove(&p));
            assert_eq!(t.lookup(p), None);
            assert_eq!(t.remove(p), None, "twice");
        }
        assert_eq!(t.len(), pages.len() - 2);
        let mut all: Vec<_> = t.mappings().collect();
        all.sort();
        let mut want: Vec<_> = reference.into_iter().collect();
        want.sort();
        assert_eq!(all, want);
    }

    #[test]
    fn marks_wrap_round_the_mapped_pages_and_set_replaces_an_entry() {
        let mut t = PageTable::new();
        for (p, f) in [(10u64, 1), (11, 2), (13, 3)] {
            t.insert(p, f);
        }
        let next = t.mark(0, 2);
        assert_eq!((t.lookup(10), t.lookup(11), t.lookup(13)), (Some(1 | HINT), Some(2 | HINT), Some(3)));
        assert_eq!(next, 2);
        t.set(10, 7);
        let next = t.mark(next, 2);
        assert_eq!((t.lookup(10), t.lookup(13)), (Some(7 | HINT), Some(3 | HINT)), "wrapped past the hole at 12");
        assert_eq!(next, 1);
        assert_eq!(t.mappings().map(|(_, f)| f).max(), Some(7), "mappings strip the mark");
    }
}
