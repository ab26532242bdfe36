//! Miss status holding registers: the misses a cache has outstanding, one entry per line,
//! with the requests waiting on each. A second miss to a line already outstanding merges
//! into its entry instead of going to memory again.
//!
//! An entry may also be a prefetch's, with no waiter until a demand merges into it (a late
//! prefetch); `prefetch_owner` says which core's prefetcher asked for it.
//!
//! All storage is allocated up front (entries and their waiter lists), so the steady state
//! allocates nothing.

use super::line_index::LineIndex;
use serde::Serialize;

/// A request waiting for a line: which core, and the token to hand back to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    pub core: u32,
    pub token: u64,
}

/// What `insert` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MshrInsert {
    /// A new entry: the caller sends the miss to memory.
    Allocated,
    /// Joined the entry already outstanding for this line: nothing to send.
    Merged,
    /// No free entry (or the line's waiter list is full): retry later.
    Full,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MshrStats {
    pub allocated: u64,
    pub merged: u64,
    pub refused: u64,
}

const NO_OWNER: u32 = u32::MAX;

pub struct MshrFile {
    /// Outstanding line -> its entry. A table rather than a scan: the LLC's 64 entries are mostly
    /// in use under memory-bound mixes, and every miss and fill looks a line up.
    index: LineIndex,
    /// Entries not in use, taken from the end. Which entry a line gets is invisible outside.
    free: Vec<u32>,
    waiters: Vec<Vec<Waiter>>,
    /// Per entry: the core whose prefetch allocated it, while no demand has merged; `NO_OWNER` otherwise.
    prefetch_owner: Vec<u32>,
    max_waiters: usize,
    stats: MshrStats,
}

impl MshrFile {
    /// `entries` outstanding lines, each with up to `max_waiters` merged requests.
    /// Both are at least 1 (the configuration validates the user's values).
    pub fn new(entries: usize, max_waiters: usize) -> Self {
        let entries = entries.max(1);
        let max_waiters = max_waiters.max(1);
        MshrFile {
            index: LineIndex::new(entries),
            free: (0..entries as u32).rev().collect(),
            waiters: (0..entries).map(|_| Vec::with_capacity(max_waiters)).collect(),
            prefetch_owner: vec![NO_OWNER; entries],
            max_waiters,
            stats: MshrStats::default(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.waiters.len()
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// No entry is free: a miss to a line not already outstanding would be refused.
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    pub fn contains(&self, line: u64) -> bool {
        self.index.get(line).is_some()
    }

    pub fn stats(&self) -> &MshrStats {
        &self.stats
    }

    /// Records a miss of `waiter` on `line` (a line-aligned address).
    pub fn insert(&mut self, line: u64, waiter: Waiter) -> MshrInsert {
        if let Some(i) = self.index.get(line) {
            let list = &mut self.waiters[i as usize];
            if list.len() == self.max_waiters {
                self.stats.refused += 1;
                return MshrInsert::Full;
            }
            list.push(waiter);
            self.stats.merged += 1;
            return MshrInsert::Merged;
        }
        let Some(i) = self.free.pop() else {
            self.stats.refused += 1;
            return MshrInsert::Full;
        };
        self.index.insert(line, i);
        self.waiters[i as usize].push(waiter);
        self.stats.allocated += 1;
        MshrInsert::Allocated
    }

    /// Free entries.
    pub fn free_entries(&self) -> usize {
        self.free.len()
    }

    /// Allocates an entry for a prefetch of `line` by `owner`'s prefetcher, with no waiter.
    /// False if the line is already outstanding or no entry is free.
    pub fn insert_prefetch(&mut self, line: u64, owner: u32) -> bool {
        if self.index.get(line).is_some() {
            return false;
        }
        let Some(i) = self.free.pop() else { return false };
        self.index.insert(line, i);
        self.prefetch_owner[i as usize] = owner;
        self.stats.allocated += 1;
        true
    }

    /// If `line`'s entry is still a prefetch no demand has joined, returns its owner and makes
    /// it an ordinary miss (a demand is about to merge, or the data arrived).
    pub fn take_prefetch(&mut self, line: u64) -> Option<u32> {
        let i = self.index.get(line)? as usize;
        let owner = std::mem::replace(&mut self.prefetch_owner[i], NO_OWNER);
        (owner != NO_OWNER).then_some(owner)
    }

    /// The data of `line` arrived: frees its entry and yields its waiters in arrival order
    /// (`None` if the line was not outstanding).
    pub fn complete(&mut self, line: u64) -> Option<std::vec::Drain<'_, Waiter>> {
        let i = self.index.remove(line)?;
        self.free.push(i);
        self.prefetch_owner[i as usize] = NO_OWNER;
        Some(self.waiters[i as usize].drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(core: u32, token: u64) -> Waiter {
        Waiter { core, token }
    }

    #[test]
    fn secondary_misses_merge_and_complete_returns_every_waiter_in_order() {
        let mut m = MshrFile::new(2, 4);
        assert_eq!(m.insert(0x1000, w(0, 7)), MshrInsert::Allocated);
        assert_eq!(m.insert(0x1000, w(1, 9)), MshrInsert::Merged);
        assert_eq!(m.insert(0x1000, w(0, 8)), MshrInsert::Merged);
        assert_eq!(m.len(), 1);
        let got: Vec<_> = m.complete(0x1000).unwrap().collect();
        assert_eq!(got, vec![w(0, 7), w(1, 9), w(0, 8)]);
        assert!(m.is_empty());
        assert!(m.complete(0x1000).is_none());
        assert_eq!(m.stats(), &MshrStats { allocated: 1, merged: 2, refused: 0 });
    }

    #[test]
    fn full_file_refuses_new_lines_but_still_merges() {
        let mut m = MshrFile::new(2, 2);
        m.insert(0x40, w(0, 1));
        m.insert(0x80, w(0, 2));
        assert!(m.is_full());
        assert_eq!(m.insert(0xc0, w(0, 3)), MshrInsert::Full);
        assert_eq!(m.insert(0x40, w(1, 4)), MshrInsert::Merged);
        // The waiter list of 0x40 is now full too.
        assert_eq!(m.insert(0x40, w(1, 5)), MshrInsert::Full);
        assert_eq!(m.complete(0x80).unwrap().count(), 1);
        assert!(!m.is_full());
        assert_eq!(m.insert(0xc0, w(0, 3)), MshrInsert::Allocated);
        assert_eq!(m.stats().refused, 2);
    }

    #[test]
    fn a_prefetch_entry_has_no_waiter_until_a_demand_merges() {
        let mut m = MshrFile::new(2, 4);
        assert!(m.insert_prefetch(0x40, 3));
        assert!(!m.insert_prefetch(0x40, 3), "already outstanding");
        assert_eq!(m.free_entries(), 1);
        assert_eq!(m.take_prefetch(0x40), Some(3));
        assert_eq!(m.take_prefetch(0x40), None, "taken once");
        assert_eq!(m.insert(0x40, w(0, 1)), MshrInsert::Merged);
        assert_eq!(m.complete(0x40).unwrap().collect::<Vec<_>>(), vec![w(0, 1)]);
        // A prefetch nobody joined completes with no waiter, and its entry is reused clean.
        assert!(m.insert_prefetch(0x80, 1));
        assert_eq!(m.complete(0x80).unwrap().count(), 0);
        assert!(m.insert_prefetch(0xc0, 1) && m.insert_prefetch(0x100, 2));
        assert!(!m.insert_prefetch(0x140, 1), "full");
        assert_eq!(m.insert(0x180, w(0, 2)), MshrInsert::Full);
        m.complete(0xc0);
        assert_eq!(m.insert(0x180, w(0, 2)), MshrInsert::Allocated);
        assert_eq!(m.take_prefetch(0x180), None);
    }

    #[test]
    fn entries_are_reused_without_growing() {
        let mut m = MshrFile::new(4, 8);
        let caps: Vec<_> = m.waiters.iter().map(|v| v.capacity()).collect();
        for round in 0..100u64 {
            for k in 0..4 {
                m.insert((round * 4 + k) * 64, w(k as u32, round));
                m.insert((round * 4 + k) * 64, w(k as u32, round + 1));
            }
            for k in 0..4 {
                assert_eq!(m.complete((round * 4 + k) * 64).unwrap().count(), 2);
            }
        }
        assert_eq!(caps, m.waiters.iter().map(|v| v.capacity()).collect::<Vec<_>>());
    }
}
