//! A set-associative cache indexed by physical address, with true LRU replacement and
//! dirty bits. It keeps tags only (no data): the simulator needs hit/miss and victims.
//!
//! LRU is kept as each way's rank in its set (0 = most recently used): a use re-ranks the set
//! in one pass over a few bytes, which vectorises, and the victim is the way of the highest
//! rank, so a fill reads no per-way timestamps. Ways never used rank oldest, the lowest-numbered
//! first.
//!
//! Choices (Ramulator-style):
//! - Reads that miss do not allocate: the line is installed by `fill` when its data returns,
//!   so an outstanding miss never holds a way.
//! - Writes are writebacks of dirty lines from the level above. They are write-allocate
//!   without a fetch: a hit marks the line dirty, a miss installs it dirty at once (the whole
//!   line is written, so nothing needs reading). `write` does both steps.
//! - A dirty victim is returned to the caller exactly once, to be written to memory; a clean
//!   victim is dropped silently.
//! - With prefetch tracking on (`track_prefetches`), a line filled by a prefetch keeps its
//!   owner until a demand uses it (`take_prefetch_mark`) or it is evicted unused (counted per
//!   owner in `unused_prefetch_evictions`). Off, no per-line state is kept.
//! - Every line has an owner, the source whose fill or write installed it (a hit by another
//!   source does not change it), and `occupancy(owner)` counts the lines each owner holds.
//! - Way partitioning (Intel CAT, `set_way_masks`): a source with a way mask fills only ways in
//!   its mask, evicting the least recently used of them; it hits in any way, as CAT's capacity
//!   bitmasks restrict allocation, not lookup.

use super::CacheGeometry;
use crate::error::Result;
use serde::Serialize;

/// The outcome of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Hit,
    Miss,
}

/// Hits and misses of one requester (core) in a shared cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SourceStats {
    pub hits: u64,
    pub misses: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub read_misses: u64,
    pub write_misses: u64,
    /// Lines installed (by `fill` or a write miss).
    pub fills: u64,
    /// Valid lines replaced, clean or dirty.
    pub evictions: u64,
    /// Dirty victims handed back for writing to memory.
    pub writebacks: u64,
    /// Indexed by source (core) id.
    pub per_source: Vec<SourceStats>,
}

/// A tag that no address produces (tags are `addr >> set_index_bits().end`, at least 6 bits short).
const INVALID: u64 = u64::MAX;

pub struct SetAssocCache {
    geo: CacheGeometry,
    ways: usize,
    set_mask: u64,
    line_bits: u32,
    tag_shift: u32,
    // Flat per-way arrays, set-major: way w of set s is at s * ways + w.
    tags: Vec<u64>,
    /// Recency rank of each way in its set, a permutation of 0..ways (0: most recent).
    ranks: Vec<u16>,
    /// Per way: the rest of its state, one record, so a victim's state is one host cache line.
    state: Vec<WayState>,
    /// The writer of the dirty victim the last `fill` returned.
    victim_writer: u32,
    /// Per source: valid lines it owns.
    occupancy: Vec<u64>,
    /// Per source: the ways it may fill (CAT's capacity bitmask); empty, or a source past its
    /// end: every way.
    way_masks: Vec<u64>,
    /// Utility monitors of the sources' demand lookups (UCP), if on.
    monitor: Option<Box<super::UtilityMonitor>>,
    /// Whether prefetched lines are marked (`track_prefetches`).
    tracks_prefetches: bool,
    /// Per owner: its prefetched lines evicted before any demand used them.
    unused_prefetch_evictions: Vec<u64>,
    stats: CacheStats,
}

const NO_OWNER: u32 = u32::MAX;

/// A way's state besides its tag and rank. Kept as one record, not one array per field: a large
/// LLC's state is far bigger than the host's caches, and a fill reads and writes all of it for
/// the victim, so separate arrays cost one host cache miss (and one TLB entry) per field.
#[derive(Clone, Copy)]
struct WayState {
    /// The source whose fill or write installed the line (meaningful while valid).
    owner: u32,
    /// The source that last wrote the line (meaningful while it is dirty), so its write-back is
    /// charged to the program that dirtied it, not to whoever evicted it.
    writer: u32,
    /// The core whose prefetch filled the line and no demand has used yet (`NO_OWNER`
    /// otherwise; always `NO_OWNER` unless prefetches are tracked).
    prefetch_owner: u32,
    dirty: bool,
}

impl WayState {
    const EMPTY: WayState = WayState { owner: 0, writer: 0, prefetch_owner: NO_OWNER, dirty: false };
}

impl SetAssocCache {
    /// A cache shared by `sources` requesters (more are added if they appear).
    pub fn new(geo: CacheGeometry, sources: u32) -> Result<Self> {
        geo.validate("cache")?;
        let lines = (geo.sets() * geo.ways as u64) as usize;
        Ok(SetAssocCache {
            geo,
            ways: geo.ways as usize,
            set_mask: geo.sets() - 1,
            line_bits: geo.line_bits(),
            tag_shift: geo.set_index_bits().end,
            tags: vec![INVALID; lines],
            ranks: initial_ranks(geo.ways as usize, geo.sets() as usize),
            state: vec![WayState::EMPTY; lines],
            victim_writer: 0,
            occupancy: vec![0; sources as usize],
            way_masks: Vec::new(),
            monitor: None,
            tracks_prefetches: false,
            unused_prefetch_evictions: Vec::new(),
            stats: CacheStats { per_source: vec![SourceStats::default(); sources as usize], ..Default::default() },
        })
    }

    pub fn geometry(&self) -> &CacheGeometry {
        &self.geo
    }

    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Zero the counters (after a warm-up); contents, recency and dirty bits stay.
    pub fn reset_stats(&mut self) {
        let sources = self.stats.per_source.len();
        self.stats = CacheStats { per_source: vec![SourceStats::default(); sources], ..Default::default() };
        self.unused_prefetch_evictions.iter_mut().for_each(|n| *n = 0);
    }

    #[inline]
    fn base_and_tag(&self, addr: u64) -> (usize, u64) {
        let set = (addr >> self.line_bits) & self.set_mask;
        (set as usize * self.ways, addr >> self.tag_shift)
    }

    #[inline]
    fn find(&self, base: usize, tag: u64) -> Option<usize> {
        self.tags[base..base + self.ways].iter().position(|&t| t == tag).map(|w| base + w)
    }

    /// Asks the host for the set's per-way state a hit or a fill reads after its tags, so that
    /// the host cache misses overlap instead of following one another (a large LLC's state is
    /// far bigger than the host's caches; functional warming is mostly these misses).
    #[inline(always)]
    fn prefetch_set(&self, base: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = |p: *const u8| unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
            at(self.ranks.as_ptr().wrapping_add(base) as *const u8);
            // The set's way records, up to four host lines (16 ways).
            let state = self.state.as_ptr().wrapping_add(base) as *const u8;
            let bytes = (self.ways * std::mem::size_of::<WayState>()).min(256);
            for offset in (0..bytes).step_by(64) {
                at(state.wrapping_add(offset));
            }
        }
    }

    /// Makes way `i` (of the set at `base`) the most recently used.
    #[inline]
    fn touch(&mut self, base: usize, i: usize) {
        let ranks = &mut self.ranks[base..base + self.ways];
        let r = ranks[i - base];
        for x in ranks.iter_mut() {
            *x += (*x < r) as u16;
        }
        ranks[i - base] = 0;
    }

    /// Looks up `addr` for `source`. A hit updates LRU and, for a write, sets the dirty bit.
    /// A miss changes nothing but the counters (see the module notes).
    pub fn access(&mut self, addr: u64, is_write: bool, source: u32) -> Access {
        let (base, tag) = self.base_and_tag(addr);
        self.prefetch_set(base);
        if let Some(m) = self.monitor.as_mut() {
            if !is_write {
                m.observe((base / self.ways) as u64, tag, source);
            }
        }
        let hit = self.find(base, tag);
        let s = &mut self.stats;
        s.accesses += 1;
        if s.per_source.len() <= source as usize {
            s.per_source.resize(source as usize + 1, SourceStats::default());
        }
        let src = &mut s.per_source[source as usize];
        match hit {
            Some(i) => {
                s.hits += 1;
                src.hits += 1;
                if is_write {
                    self.state[i].dirty = true;
                    self.state[i].writer = source;
                }
                self.touch(base, i);
                Access::Hit
            }
            None => {
                s.misses += 1;
                src.misses += 1;
                if is_write {
                    s.write_misses += 1;
                } else {
                    s.read_misses += 1;
                }
                Access::Miss
            }
        }
    }

    /// Keeps, from now on, which lines prefetches filled (for `owners` cores, more if they appear).
    pub fn track_prefetches(&mut self, owners: u32) {
        self.tracks_prefetches = true;
        self.unused_prefetch_evictions = vec![0; owners as usize];
    }

    /// Prefetched lines of `owner` evicted before a demand used them.
    pub fn unused_prefetch_evictions(&self, owner: u32) -> u64 {
        self.unused_prefetch_evictions.get(owner as usize).copied().unwrap_or(0)
    }

    /// If the line of `addr` is present and was prefetched with no demand use yet, returns the
    /// prefetch's owner and clears the mark (the first demand use). Needs `track_prefetches`.
    pub fn take_prefetch_mark(&mut self, addr: u64) -> Option<u32> {
        let (base, tag) = self.base_and_tag(addr);
        let i = self.find(base, tag)?;
        let owner = std::mem::replace(&mut self.state[i].prefetch_owner, NO_OWNER);
        (owner != NO_OWNER).then_some(owner)
    }

    /// `fill` for a prefetch of `owner`'s: the line is marked until a demand uses it. A line
    /// already present is only touched (it was not brought in by this prefetch).
    pub fn fill_prefetch(&mut self, addr: u64, owner: u32) -> Option<u64> {
        let present = self.contains(addr);
        let victim = self.fill(addr, false, owner);
        if !present && self.tracks_prefetches {
            let (base, tag) = self.base_and_tag(addr);
            let i = self.find(base, tag).expect("just filled");
            self.state[i].prefetch_owner = owner;
        }
        victim
    }

    /// Way `i`, which held `old_tag`, was refilled: a prefetched line still unused there counts
    /// as useless. Out of line, last in `fill`: `fill` is hot and most runs track nothing.
    #[inline(never)]
    fn forget_prefetch(&mut self, i: usize, old_tag: u64) {
        let owner = std::mem::replace(&mut self.state[i].prefetch_owner, NO_OWNER);
        if owner != NO_OWNER && old_tag != INVALID {
            let k = owner as usize;
            if self.unused_prefetch_evictions.len() <= k {
                self.unused_prefetch_evictions.resize(k + 1, 0);
            }
            self.unused_prefetch_evictions[k] += 1;
        }
    }

    /// Installs the line of `addr` as most recently used, owned by `owner`. Returns the dirty
    /// victim to write back, if any. Filling a line already present only merges the dirty bit
    /// (its owner stays).
    pub fn fill(&mut self, addr: u64, dirty: bool, owner: u32) -> Option<u64> {
        self.fill_way(addr, dirty, owner).0
    }

    /// `fill`, and the way the line is in.
    fn fill_way(&mut self, addr: u64, dirty: bool, owner: u32) -> (Option<u64>, usize) {
        let (base, tag) = self.base_and_tag(addr);
        if let Some(i) = self.find(base, tag) {
            self.state[i].dirty |= dirty;
            self.touch(base, i);
            return (None, i);
        }
        // Invalid ways rank oldest until first used, so the oldest rank picks them first.
        let victim = match self.way_masks.get(owner as usize) {
            Some(&mask) => self.oldest_in(base, mask),
            _ => {
                let oldest = (self.ways - 1) as u16;
                self.ranks[base..base + self.ways].iter().position(|&r| r == oldest).expect("ranks are a permutation")
            }
        };
        let i = base + victim;
        let old_tag = self.tags[i];
        let old = self.state[i];
        let evicted = if old_tag != INVALID {
            self.stats.evictions += 1;
            self.occupancy[old.owner as usize] -= 1;
            if old.dirty {
                self.stats.writebacks += 1;
                self.victim_writer = old.writer;
                Some(self.geo.line_addr(old_tag, (base / self.ways) as u64))
            } else {
                None
            }
        } else {
            None
        };
        self.stats.fills += 1;
        if self.occupancy.len() <= owner as usize {
            self.occupancy.resize(owner as usize + 1, 0);
        }
        self.occupancy[owner as usize] += 1;
        self.state[i].owner = owner;
        self.state[i].dirty = dirty;
        self.tags[i] = tag;
        self.touch(base, i);
        if self.tracks_prefetches {
            self.forget_prefetch(i, old_tag);
        }
        (evicted, i)
    }

    /// The least recently used way of the set at `base` among those in `mask`.
    #[cold]
    fn oldest_in(&self, base: usize, mask: u64) -> usize {
        let ranks = &self.ranks[base..base + self.ways];
        (0..self.ways).filter(|w| mask >> w & 1 == 1).max_by_key(|&w| ranks[w]).expect("a way mask holds a way")
    }

    /// Restricts the ways each source may fill (Intel CAT's capacity bitmasks; index: source,
    /// bit w: way w). Every mask must hold at least one of the cache's ways; an empty list lifts
    /// every restriction. Lines already cached stay where they are.
    pub fn set_way_masks(&mut self, masks: Vec<u64>) {
        let all = if self.ways >= 64 { u64::MAX } else { (1u64 << self.ways) - 1 };
        assert!(masks.iter().all(|m| m & all != 0), "every way mask holds one of the {} ways", self.ways);
        self.way_masks = masks.into_iter().map(|m| m & all).collect();
    }

    /// Starts utility monitors on the sources' demand reads (`utility_monitor.rs`).
    pub fn monitor_utility(&mut self, sources: u32) {
        self.monitor = Some(Box::new(super::UtilityMonitor::new(self.ways as u32, self.geo.sets(), sources)));
    }

    /// The utility monitors, if on.
    pub fn utility(&mut self) -> Option<&mut super::UtilityMonitor> {
        self.monitor.as_deref_mut()
    }

    /// The ways `source` may fill (every way without a mask).
    pub fn way_mask(&self, source: u32) -> u64 {
        let all = if self.ways >= 64 { u64::MAX } else { (1u64 << self.ways) - 1 };
        self.way_masks.get(source as usize).copied().unwrap_or(all)
    }

    /// A writeback from the level above: a write access, and on a miss the line is installed
    /// dirty without a fetch. Returns the dirty victim, if any.
    pub fn write(&mut self, addr: u64, source: u32) -> Option<u64> {
        match self.access(addr, true, source) {
            Access::Hit => None,
            Access::Miss => {
                let (victim, i) = self.fill_way(addr, true, source);
                self.state[i].writer = source;
                victim
            }
        }
    }

    /// Valid lines `owner` installed (by `fill` or a write miss) and that are still here.
    pub fn occupancy(&self, owner: u32) -> u64 {
        self.occupancy.get(owner as usize).copied().unwrap_or(0)
    }

    /// The source that dirtied the victim the last `fill` or `write` returned.
    pub fn victim_writer(&self) -> u32 {
        self.victim_writer
    }

    /// Whether the line of `addr` is present (no state change).
    pub fn contains(&self, addr: u64) -> bool {
        let (base, tag) = self.base_and_tag(addr);
        self.find(base, tag).is_some()
    }

    /// Whether the line of `addr` is present and dirty (no state change).
    pub fn is_dirty(&self, addr: u64) -> bool {
        let (base, tag) = self.base_and_tag(addr);
        self.find(base, tag).is_some_and(|i| self.state[i].dirty)
    }

    /// Drops the line of `addr` (its page moved): its way becomes the set's next victim.
    /// Returns whether it was there, and dirty.
    pub fn invalidate(&mut self, addr: u64) -> Option<bool> {
        let (base, tag) = self.base_and_tag(addr);
        let i = self.find(base, tag)?;
        let dirty = self.state[i].dirty;
        self.occupancy[self.state[i].owner as usize] -= 1;
        self.state[i].prefetch_owner = NO_OWNER;
        self.state[i].dirty = false;
        self.tags[i] = INVALID;
        let ranks = &mut self.ranks[base..base + self.ways];
        let r = ranks[i - base];
        for x in ranks.iter_mut() {
            *x -= (*x > r) as u16;
        }
        ranks[i - base] = (self.ways - 1) as u16;
        Some(dirty)
    }

    /// Empties the cache, dropping dirty data (for a cold start); returns how many dirty
    /// lines were dropped. Counters are kept.
    pub fn invalidate_all(&mut self) -> u64 {
        let dropped = self.tags.iter().zip(&self.state).filter(|(&t, w)| t != INVALID && w.dirty).count();
        self.tags.fill(INVALID);
        self.ranks = initial_ranks(self.ways, self.tags.len() / self.ways);
        self.state.fill(WayState::EMPTY);
        self.occupancy.fill(0);
        dropped as u64
    }
}

/// Every set's ranks before any use: way w ranks `ways - 1 - w`, so way 0 is the first victim.
fn initial_ranks(ways: usize, sets: usize) -> Vec<u16> {
    let set = (0..ways).rev().map(|r| r as u16);
    set.cycle().take(ways * sets).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 sets x 4 ways x 64 B: addresses 128 B apart share a set.
    fn small() -> SetAssocCache {
        SetAssocCache::new(CacheGeometry { size_bytes: 512, ways: 4, line_bytes: 64 }, 1).unwrap()
    }
    /// The i-th line of set 0.
    fn line(i: u64) -> u64 {
        i * 128
    }

    #[test]
    fn lru_evicts_the_least_recently_used_way() {
        let mut c = small();
        for i in 0..4 {
            assert_eq!(c.access(line(i), false, 0), Access::Miss);
            assert_eq!(c.fill(line(i), false, 0), None);
        }
        // Use order now 0,1,2,3; touching 0 and 2 makes 1 the LRU, then 3.
        assert_eq!(c.access(line(0), false, 0), Access::Hit);
        assert_eq!(c.access(line(2), false, 0), Access::Hit);
        c.fill(line(4), false, 0);
        assert!(!c.contains(line(1)));
        assert!([0, 2, 3, 4].iter().all(|&i| c.contains(line(i))));
        c.fill(line(5), false, 0);
        assert!(!c.contains(line(3)));
        assert!([0, 2, 4, 5].iter().all(|&i| c.contains(line(i))));
        assert_eq!(c.stats().evictions, 2);
        assert_eq!(c.stats().hits, 2);
        assert_eq!(c.stats().misses, 4);
    }

    #[test]
    fn dirty_victim_produces_a_writeback_exactly_once() {
        let mut c = small();
        assert_eq!(c.write(line(0) + 8, 0), None); // write miss: allocated dirty, no fetch
        assert!(c.is_dirty(line(0)));
        for i in 1..4 {
            c.fill(line(i), false, 0);
        }
        assert_eq!(c.fill(line(4), false, 0), Some(line(0)));
        assert_eq!(c.stats().writebacks, 1);
        // Later evictions of clean lines, and of the refilled line, write nothing back.
        c.fill(line(0), false, 0);
        for i in 5..12 {
            assert_eq!(c.fill(line(i), false, 0), None);
        }
        assert_eq!(c.stats().writebacks, 1);
        assert_eq!(c.stats().evictions, 9);
    }

    #[test]
    fn read_misses_do_not_allocate_but_write_hits_make_lines_dirty() {
        let mut c = small();
        assert_eq!(c.access(line(0), false, 0), Access::Miss);
        assert!(!c.contains(line(0)));
        c.fill(line(0), false, 0);
        assert!(!c.is_dirty(line(0)));
        assert_eq!(c.write(line(0), 0), None);
        assert!(c.is_dirty(line(0)));
        // A clean refill of a present line keeps it dirty.
        c.fill(line(0), false, 0);
        assert!(c.is_dirty(line(0)));
    }

    #[test]
    fn shared_cache_counts_hits_and_misses_per_source() {
        let mut c = small();
        c.access(line(0), false, 0);
        c.fill(line(0), false, 0);
        c.access(line(0), false, 3);
        c.access(line(1), false, 3);
        let s = c.stats();
        assert_eq!(s.per_source[0], SourceStats { hits: 0, misses: 1 });
        assert_eq!(s.per_source[3], SourceStats { hits: 1, misses: 1 });
        assert_eq!((s.accesses, s.hits, s.misses, s.read_misses), (3, 1, 2, 2));
    }

    /// True LRU by last-use stamps, ways in a list per set: the obvious model.
    struct StampLru {
        sets: Vec<Vec<(u64, u64, bool)>>,
        ways: usize,
        clock: u64,
    }

    impl StampLru {
        fn set(&mut self, line: u64) -> &mut Vec<(u64, u64, bool)> {
            let n = self.sets.len() as u64;
            &mut self.sets[(line % n) as usize]
        }
        fn access(&mut self, line: u64, is_write: bool) -> Access {
            self.clock += 1;
            let clock = self.clock;
            match self.set(line).iter_mut().find(|w| w.0 == line) {
                Some(w) => {
                    w.1 = clock;
                    w.2 |= is_write;
                    Access::Hit
                }
                None => Access::Miss,
            }
        }
        /// Returns the dirty victim's line.
        fn fill(&mut self, line: u64, dirty: bool) -> Option<u64> {
            self.clock += 1;
            let (clock, ways) = (self.clock, self.ways);
            let set = self.set(line);
            if let Some(w) = set.iter_mut().find(|w| w.0 == line) {
                w.1 = clock;
                w.2 |= dirty;
                return None;
            }
            if set.len() < ways {
                set.push((line, clock, dirty));
                return None;
            }
            let lru = (0..set.len()).min_by_key(|&w| set[w].1).unwrap();
            let old = std::mem::replace(&mut set[lru], (line, clock, dirty));
            old.2.then_some(old.0)
        }
    }

    #[test]
    fn rank_lru_evicts_exactly_what_timestamp_lru_evicts() {
        // 4 sets x 5 ways x 64 B; lines are numbered, line l is at address l * 64.
        for seed in 0..20u64 {
            let mut c = SetAssocCache::new(CacheGeometry { size_bytes: 4 * 5 * 64, ways: 5, line_bytes: 64 }, 1).unwrap();
            let mut m = StampLru { sets: vec![Vec::new(); 4], ways: 5, clock: 0 };
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            for _ in 0..5000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let line = (x >> 8) % 40;
                match x % 3 {
                    0 => assert_eq!(c.access(line * 64, false, 0), m.access(line, false)),
                    1 => assert_eq!(c.fill(line * 64, false, 0), m.fill(line, false).map(|l| l * 64)),
                    _ => {
                        let want = match m.access(line, true) {
                            Access::Hit => None,
                            Access::Miss => m.fill(line, true).map(|l| l * 64),
                        };
                        assert_eq!(c.write(line * 64, 0), want);
                    }
                }
            }
            for line in 0..40 {
                assert_eq!(c.contains(line * 64), m.set(line).iter().any(|w| w.0 == line), "seed {seed} line {line}");
            }
        }
    }

    #[test]
    fn invalidate_all_empties_the_cache_and_counts_dropped_dirty_lines() {
        let mut c = small();
        c.write(line(0), 0);
        c.fill(line(1), false, 0);
        assert_eq!(c.invalidate_all(), 1);
        assert!(!c.contains(line(0)) && !c.contains(line(1)));
        assert_eq!(c.fill(line(0), false, 0), None);
    }

    #[test]
    fn prefetched_lines_count_once_as_used_or_as_evicted_unused() {
        let mut c = small();
        c.track_prefetches(2);
        c.fill_prefetch(line(0), 1);
        c.fill_prefetch(line(1), 1);
        assert_eq!(c.take_prefetch_mark(line(0)), Some(1));
        assert_eq!(c.take_prefetch_mark(line(0)), None, "only the first demand use counts");
        // Three more lines evict line 0 (used) and line 1 (never used), in LRU order.
        for i in 2..6 {
            c.fill(line(i), false, 0);
        }
        assert!(!c.contains(line(0)) && !c.contains(line(1)));
        assert_eq!(c.unused_prefetch_evictions(1), 1);
        assert_eq!(c.unused_prefetch_evictions(0), 0);
        // A prefetch of a line already present does not mark it.
        c.fill_prefetch(line(5), 0);
        assert_eq!(c.take_prefetch_mark(line(5)), None);
    }

    #[test]
    fn occupancy_counts_the_lines_each_owner_installed_until_they_leave() {
        let mut c = small();
        c.fill(line(0), false, 1);
        c.fill(line(1), false, 2);
        c.write(line(2), 2); // a write miss installs the line for its writer
        c.fill(line(0), false, 2); // already present: still owner 1's
        assert_eq!(c.access(line(1), false, 1), Access::Hit); // a hit does not change the owner
        assert_eq!((c.occupancy(1), c.occupancy(2), c.occupancy(7)), (1, 2, 0));
        // Owner 3 takes the free way, then evicts the least recently used line: owner 2's line(2).
        c.fill(line(3), false, 3);
        c.fill(line(4), false, 3);
        assert_eq!((c.occupancy(1), c.occupancy(2), c.occupancy(3)), (1, 1, 2));
        c.invalidate_all();
        assert_eq!((c.occupancy(1), c.occupancy(2), c.occupancy(3)), (0, 0, 0));
    }

    #[test]
    fn untracked_caches_keep_no_marks() {
        let mut c = small();
        c.fill_prefetch(line(0), 1);
        assert_eq!(c.take_prefetch_mark(line(0)), None);
        assert_eq!(c.unused_prefetch_evictions(1), 0);
    }

    #[test]
    fn an_invalidated_line_misses_and_its_way_is_the_next_victim() {
        let mut c = SetAssocCache::new(CacheGeometry { size_bytes: 512, ways: 4, line_bytes: 64 }, 2).unwrap();
        for k in 0..4u64 {
            c.fill(k * 128, k == 1, 0);
        }
        assert_eq!(c.occupancy(0), 4);
        assert_eq!(c.invalidate(128), Some(true), "present and dirty");
        assert_eq!(c.invalidate(128), None);
        assert!(!c.contains(128));
        assert_eq!(c.occupancy(0), 3);
        // The next fill in that set takes the freed way: no eviction of the three still there.
        assert_eq!(c.fill(4 * 128, false, 1), None);
        assert!([0u64, 256, 384, 512].iter().all(|&a| c.contains(a)));
    }

    /// CAT: a source fills only its ways, evicting the oldest of them, and hits in any way.
    #[test]
    fn a_way_mask_confines_a_sources_fills_to_its_ways() {
        // One set of 4 ways: source 0 may fill ways 0-1, source 1 ways 2-3.
        let mut c = SetAssocCache::new(CacheGeometry { size_bytes: 4 * 64, ways: 4, line_bytes: 64 }, 2).unwrap();
        c.set_way_masks(vec![0b0011, 0b1100]);
        for i in 0..2u64 {
            c.fill(i * 64, false, 1);
        }
        // Source 0 streams 10 lines through its two ways: source 1's lines survive.
        for i in 10..20u64 {
            c.fill(i * 64, false, 0);
        }
        assert!(c.contains(0) && c.contains(64), "source 1's lines stay");
        assert_eq!((c.occupancy(0), c.occupancy(1)), (2, 2));
        assert!(c.contains(19 * 64) && c.contains(18 * 64) && !c.contains(17 * 64), "source 0 keeps its two newest");
        // A hit by source 0 on source 1's line is a hit (lookup is unrestricted).
        assert_eq!(c.access(0, false, 0), Access::Hit);
        assert_eq!(c.way_mask(0), 0b0011);
        // No masks: every way again.
        c.set_way_masks(Vec::new());
        assert_eq!(c.way_mask(0), 0b1111);
    }
}
