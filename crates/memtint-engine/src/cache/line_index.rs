//! The MSHRs' index, outstanding line -> entry: a fixed open-addressing table with linear
//! probing, at least four slots per entry so that probe runs stay short, and backward-shift
//! removal (no tombstones, so it never degrades). Every LLC miss inserts once and every fill
//! removes once; a general hash map spent more on its bookkeeping than these few probes.

const EMPTY: u32 = u32::MAX;

pub struct LineIndex {
    /// (line, entry); `EMPTY` entry: a free slot.
    slots: Vec<(u64, u32)>,
    /// log2 of the slot count.
    bits: u32,
    len: usize,
}

impl LineIndex {
    /// Room for `entries` lines (entries are below `u32::MAX`).
    pub fn new(entries: usize) -> Self {
        let n = (4 * entries.max(1)).next_power_of_two().max(8);
        LineIndex { slots: vec![(0, EMPTY); n], bits: n.trailing_zeros(), len: 0 }
    }

    #[inline]
    fn home(&self, line: u64) -> usize {
        // Fibonacci hashing: the product's top bits depend on every bit of the line address.
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `line`, if any.
    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let mut i = self.home(line);
        loop {
            let (l, e) = self.slots[i];
            if e == EMPTY {
                return None;
            }
            if l == line {
                return Some(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<u32> {
        self.find(line).map(|i| self.slots[i].1)
    }

    /// Adds `line` (not present) with `entry`; the caller keeps at most `entries` lines.
    pub fn insert(&mut self, line: u64, entry: u32) {
        debug_assert!(entry != EMPTY && self.find(line).is_none());
        debug_assert!(self.len < self.slots.len() / 2, "more lines than the index was made for");
        let mut i = self.home(line);
        while self.slots[i].1 != EMPTY {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = (line, entry);
        self.len += 1;
    }

    /// Removes `line`, returning its entry.
    pub fn remove(&mut self, line: u64) -> Option<u32> {
        let mut hole = self.find(line)?;
        let entry = self.slots[hole].1;
        self.len -= 1;
        // Move back every later entry of the run whose home is not between the hole and it,
        // so that lookups never stop early at the hole.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask();
            let (l, e) = self.slots[j];
            if e == EMPTY {
                break;
            }
            let home = self.home(l);
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = (l, e);
                hole = j;
            }
        }
        self.slots[hole] = (0, EMPTY);
        Some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    #[test]
    fn behaves_like_a_hash_map_under_random_inserts_and_removes() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut next = || rng.gen::<u64>();
        for entries in [1usize, 3, 16, 64] {
            let mut idx = LineIndex::new(entries);
            let mut model: HashMap<u64, u32> = HashMap::new();
            for step in 0..20_000u32 {
                // Few distinct lines (so removes hit and probe runs collide), some far apart.
                let line = (next() % 97) * 64 + (next() % 2) * (1 << 40);
                if model.contains_key(&line) {
                    assert_eq!(idx.remove(line), model.remove(&line), "step {step}");
                } else if model.len() < entries {
                    idx.insert(line, step);
                    model.insert(line, step);
                } else {
                    assert_eq!(idx.remove(line), None);
                }
                assert_eq!(idx.len(), model.len());
                let probe = (next() % 97) * 64;
                assert_eq!(idx.get(probe), model.get(&probe).copied(), "step {step}");
                for (&l, &e) in &model {
                    assert_eq!(idx.get(l), Some(e));
                }
            }
        }
    }
}
