//! The shape of a set-associative cache, and which physical-address bits pick its set.
//!
//! The OS model derives "LLC colours" from `set_index_bits()`: the set-index bits above the
//! page offset are the ones page colouring can control.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheGeometry {
    pub size_bytes: u64,
    pub ways: u32,
    #[serde(default = "default_line_bytes")]
    pub line_bytes: u32,
}

fn default_line_bytes() -> u32 {
    64
}

/// The most ways a set may have: LRU ranks are 16-bit (`SetAssocCache`).
pub const MAX_WAYS: u32 = 1 << 16;

impl CacheGeometry {
    /// Checks the geometry; `field` prefixes error names (e.g. "cache.llc").
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.ways == 0 || self.ways > MAX_WAYS {
            return Err(Error::config(format!("{field}.ways"), format!("must be between 1 and {MAX_WAYS}, got {}", self.ways)));
        }
        if self.line_bytes == 0 || !self.line_bytes.is_power_of_two() {
            return Err(Error::config(format!("{field}.line_bytes"), format!("must be a power of two, got {}", self.line_bytes)));
        }
        let way_bytes = self.ways as u64 * self.line_bytes as u64;
        if self.size_bytes == 0 || !self.size_bytes.is_multiple_of(way_bytes) {
            return Err(Error::config(
                format!("{field}.size_bytes"),
                format!("must be a non-zero multiple of ways x line_bytes = {way_bytes}, got {}", self.size_bytes),
            ));
        }
        let sets = self.size_bytes / way_bytes;
        if !sets.is_power_of_two() {
            return Err(Error::config(
                format!("{field}.size_bytes"),
                format!("gives {sets} sets (size / (ways x line_bytes)); the number of sets must be a power of two"),
            ));
        }
        Ok(())
    }

    pub fn sets(&self) -> u64 {
        self.size_bytes / (self.ways as u64 * self.line_bytes as u64)
    }

    /// Bits of the byte offset within a line.
    pub fn line_bits(&self) -> u32 {
        self.line_bytes.trailing_zeros()
    }

    /// The physical-address bits that index the sets: `line_bits .. line_bits + log2(sets)`.
    pub fn set_index_bits(&self) -> Range<u32> {
        let lo = self.line_bits();
        lo..lo + self.sets().trailing_zeros()
    }

    pub fn set_of(&self, addr: u64) -> u64 {
        (addr >> self.line_bits()) & (self.sets() - 1)
    }

    pub fn tag_of(&self, addr: u64) -> u64 {
        addr >> self.set_index_bits().end
    }

    /// The line-aligned address of (`tag`, `set`): the inverse of `tag_of`/`set_of`.
    pub fn line_addr(&self, tag: u64, set: u64) -> u64 {
        (tag << self.set_index_bits().end) | (set << self.line_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(size_bytes: u64, ways: u32, line_bytes: u32) -> CacheGeometry {
        CacheGeometry { size_bytes, ways, line_bytes }
    }

    #[test]
    fn set_index_bits_of_8mib_16way_64b_are_6_to_19() {
        let g = geo(8 << 20, 16, 64);
        g.validate("llc").unwrap();
        assert_eq!(g.sets(), 8192);
        assert_eq!(g.set_index_bits(), 6..19);
    }

    #[test]
    fn set_and_tag_round_trip_to_the_line_address() {
        let g = geo(2 << 20, 16, 64);
        let addr = 0x1234_5678_9abc;
        assert_eq!(g.line_addr(g.tag_of(addr), g.set_of(addr)), addr & !63);
    }

    #[test]
    fn non_power_of_two_ways_are_fine_when_sets_are_a_power_of_two() {
        geo(6 << 20, 12, 64).validate("llc").unwrap();
        geo(10 << 20, 20, 64).validate("llc").unwrap();
    }

    #[test]
    fn geometry_errors_name_the_field() {
        let msg = |g: CacheGeometry| g.validate("cache.llc").unwrap_err().to_string();
        assert!(msg(geo(8 << 20, 0, 64)).contains("cache.llc.ways"));
        assert!(msg(geo(8 << 20, MAX_WAYS * 2, 64)).contains("between 1 and 65536"));
        geo(4 << 20, MAX_WAYS, 64).validate("llc").unwrap();
        assert!(msg(geo(8 << 20, 16, 48)).contains("cache.llc.line_bytes"));
        assert!(msg(geo(8 << 20, 16, 0)).contains("cache.llc.line_bytes"));
        assert!(msg(geo(1000, 16, 64)).contains("multiple"));
        assert!(msg(geo(0, 16, 64)).contains("cache.llc.size_bytes"));
        assert!(msg(geo(3 << 20, 16, 64)).contains("power of two"));
    }
}
