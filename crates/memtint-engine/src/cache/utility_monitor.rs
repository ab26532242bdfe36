//! Utility monitors (UMON, Qureshi and Patt, MICRO 2006): per source, an auxiliary tag
//! directory over a sample of the cache's sets, kept in true LRU order as if the source had the
//! whole cache, counting hits by LRU stack position. `hits[p]` is how many of the source's
//! accesses would hit with p + 1 ways and not with p: the utility curve UCP partitions by.
//! Sampling every 32nd set (the paper's dynamic set sampling) keeps it cheap.

/// The sets a monitor samples: every `SAMPLE_EVERY`-th.
pub const SAMPLE_EVERY: u64 = 32;

pub struct UtilityMonitor {
    ways: usize,
    /// Per source, per sampled set: tags most recent first (at most `ways`).
    stacks: Vec<Vec<Vec<u64>>>,
    /// Per source: hits by stack position.
    hits: Vec<Vec<u64>>,
    sampled_sets: usize,
}

impl UtilityMonitor {
    pub fn new(ways: u32, sets: u64, sources: u32) -> Self {
        let sampled_sets = sets.div_ceil(SAMPLE_EVERY) as usize;
        UtilityMonitor {
            ways: ways as usize,
            stacks: vec![vec![Vec::new(); sampled_sets]; sources as usize],
            hits: vec![vec![0; ways as usize]; sources as usize],
            sampled_sets,
        }
    }

    /// An access by `source` to `set` with `tag` (only sampled sets are recorded).
    #[inline]
    pub fn observe(&mut self, set: u64, tag: u64, source: u32) {
        if set % SAMPLE_EVERY != 0 {
            return;
        }
        self.record((set / SAMPLE_EVERY) as usize, tag, source as usize);
    }

    #[cold]
    fn record(&mut self, s: usize, tag: u64, source: usize) {
        if self.stacks.len() <= source {
            self.stacks.resize(source + 1, vec![Vec::new(); self.sampled_sets]);
            self.hits.resize(source + 1, vec![0; self.ways]);
        }
        let stack = &mut self.stacks[source][s];
        match stack.iter().position(|&t| t == tag) {
            Some(p) => {
                self.hits[source][p] += 1;
                stack.remove(p);
            }
            None if stack.len() == self.ways => {
                stack.pop();
            }
            None => {}
        }
        stack.insert(0, tag);
    }

    /// Source `source`'s hits by stack position (empty for a source never seen).
    pub fn hits(&self, source: u32) -> &[u64] {
        self.hits.get(source as usize).map_or(&[], |h| h.as_slice())
    }

    /// Halves every counter, so older behaviour weighs less (UCP's decay at each epoch).
    pub fn decay(&mut self) {
        self.hits.iter_mut().flatten().for_each(|h| *h /= 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_count_by_lru_stack_position() {
        // One sampled set (set 0) of 4 ways; source 0 cycles over 3 tags, source 1 over 6.
        let mut m = UtilityMonitor::new(4, 32, 2);
        for round in 0..10u64 {
            for t in 0..3 {
                m.observe(0, t, 0);
            }
            for t in 0..6 {
                m.observe(0, 100 + t, 1);
            }
            m.observe(1, round, 0); // not a sampled set
        }
        // Source 0 hits at position 2 (three tags in turn) every time after the first round.
        assert_eq!(m.hits(0), &[0, 0, 27, 0]);
        // Source 1's six tags never fit four ways: no hits at any position.
        assert_eq!(m.hits(1), &[0, 0, 0, 0]);
        m.decay();
        assert_eq!(m.hits(0), &[0, 0, 13, 0]);
    }
}
