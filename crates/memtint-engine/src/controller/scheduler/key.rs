//! Packs a scheduler's priority rules into one `u64` key (smaller wins): fields from the most
//! important rule down, the request's arrival order (`seq`) in the remaining low bits, so every
//! key is unique and "oldest first" is always the last tie-break.

/// Bits of a per-source rank field; ranks above saturate (more sources than that tie).
const RANK_BITS: u32 = 16;

#[derive(Clone, Copy, Debug, Default)]
pub struct KeyBuilder {
    value: u64,
    used: u32,
}

impl KeyBuilder {
    pub fn new() -> Self {
        KeyBuilder::default()
    }

    /// A rule that prefers requests for which `wins` is true.
    #[inline]
    pub fn prefer(self, wins: bool) -> Self {
        KeyBuilder { value: (self.value << 1) | (!wins as u64), used: self.used + 1 }
    }

    /// A rank rule: smaller `rank` wins.
    #[inline]
    pub fn rank(self, rank: u32) -> Self {
        let r = rank.min((1 << RANK_BITS) - 1) as u64;
        KeyBuilder { value: (self.value << RANK_BITS) | r, used: self.used + RANK_BITS }
    }

    /// The key, with "oldest first" (smaller `seq`) as the final rule.
    #[inline]
    pub fn oldest(self, seq: u64) -> u64 {
        debug_assert!(self.used <= 24, "leave at least 40 bits for the arrival order");
        let age_bits = 64 - self.used;
        (self.value << age_bits) | (seq & ((1u64 << age_bits) - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_compare_in_order_and_age_breaks_ties() {
        let k = |hit: bool, rank: u32, seq: u64| KeyBuilder::new().prefer(hit).rank(rank).oldest(seq);
        assert!(k(true, 9, 100) < k(false, 0, 0), "the first rule dominates");
        assert!(k(true, 1, 100) < k(true, 2, 0), "then the rank");
        assert!(k(true, 1, 5) < k(true, 1, 6), "then the age");
    }
}
