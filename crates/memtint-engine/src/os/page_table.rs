//! One process's page table: virtual page -> physical frame, filled on first touch (BPM §2.4,
//! HVR §8.1). Translation is on the simulator's hot path, so lookups go through a one-entry
//! last-page cache before a fast (Fx) hash map.

use super::buddy::Frame;
use rustc_hash::FxHashMap;

#[derive(Default)]
pub struct PageTable {
    map: FxHashMap<u64, Frame>,
    /// The last page translated and its frame; `last_page == u64::MAX` means empty (no virtual
    /// page number reaches it once the offset bits are shifted out).
    last_page: u64,
    last_frame: Frame,
}

impl PageTable {
    pub fn new() -> Self {
        PageTable { map: FxHashMap::default(), last_page: u64::MAX, last_frame: 0 }
    }

    #[inline]
    pub fn lookup(&mut self, vpage: u64) -> Option<Frame> {
        if vpage == self.last_page {
            return Some(self.last_frame);
        }
        let frame = *self.map.get(&vpage)?;
        self.last_page = vpage;
        self.last_frame = frame;
        Some(frame)
    }

    pub fn insert(&mut self, vpage: u64, frame: Frame) {
        self.map.insert(vpage, frame);
        self.last_page = vpage;
        self.last_frame = frame;
    }

    /// Mapped pages.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every (virtual page, frame), in no particular order.
    pub fn mappings(&self) -> impl Iterator<Item = (u64, Frame)> + '_ {
        self.map.iter().map(|(&p, &f)| (p, f))
    }
}
