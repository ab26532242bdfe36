//! Caches below the cores: the shared last-level cache (indexed by physical address, so page
//! colouring controls which sets a page uses), its MSHRs, and an optional private L2 per core.
//!
//! This module holds the pieces and their configuration; the multicore driver wires them
//! between the cores and the memory system.

mod geometry;
mod line_index;
mod mshr;
mod mshr_arbiter;
mod next_line_prefetcher;
pub mod prefetcher;
mod set_assoc_cache;
mod stream_prefetcher;
mod utility_monitor;

pub use geometry::CacheGeometry;
pub use mshr::{MshrFile, MshrInsert, MshrStats, Waiter};
pub use mshr_arbiter::{MshrArbiter, MshrArbitration};
pub use prefetcher::{PrefetchStats, Prefetcher, PrefetcherConfig, PrefetcherKind};
pub use set_assoc_cache::{Access, CacheStats, SetAssocCache, SourceStats};
pub use utility_monitor::UtilityMonitor;

use crate::error::{Error, Result};
use crate::params::{BUFFER_ENTRIES, LATENCY_CYCLES};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One cache level as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevelConfig {
    pub size_bytes: u64,
    pub ways: u32,
    #[serde(default = "default_line_bytes")]
    pub line_bytes: u32,
    /// Hit latency in core cycles.
    pub latency: u64,
    /// Outstanding misses (MSHR entries).
    pub mshrs: u32,
    /// Requests that may merge into one outstanding miss.
    #[serde(default = "default_waiters")]
    pub mshr_waiters: u32,
    /// Which waiting thread a freed entry goes to (shared levels: the LLC).
    #[serde(default)]
    pub mshr_arbitration: MshrArbitration,
}

fn default_line_bytes() -> u32 {
    64
}
fn default_waiters() -> u32 {
    16
}

impl CacheLevelConfig {
    /// Ramulator's shared L3 (8 MiB, 16 ways, 31 cycles), with 64 MSHRs.
    pub fn default_llc() -> Self {
        CacheLevelConfig {
            size_bytes: 8 << 20,
            ways: 16,
            line_bytes: 64,
            latency: 31,
            mshrs: 64,
            mshr_waiters: 16,
            mshr_arbitration: MshrArbitration::Fifo,
        }
    }

    /// Ramulator's private L2 (256 KiB, 8 ways, 12 cycles), with 16 MSHRs.
    pub fn default_l2() -> Self {
        CacheLevelConfig {
            size_bytes: 256 << 10,
            ways: 8,
            line_bytes: 64,
            latency: 12,
            mshrs: 16,
            mshr_waiters: 16,
            mshr_arbitration: MshrArbitration::Fifo,
        }
    }

    pub fn geometry(&self) -> CacheGeometry {
        CacheGeometry { size_bytes: self.size_bytes, ways: self.ways, line_bytes: self.line_bytes }
    }

    pub fn validate(&self, field: &str) -> Result<()> {
        self.geometry().validate(field)?;
        BUFFER_ENTRIES.check(format!("{field}.mshrs"), self.mshrs as u64)?;
        BUFFER_ENTRIES.check(format!("{field}.mshr_waiters"), self.mshr_waiters as u64)?;
        LATENCY_CYCLES.from(0).check(format!("{field}.latency"), self.latency)
    }

    pub fn build_cache(&self, sources: u32) -> Result<SetAssocCache> {
        SetAssocCache::new(self.geometry(), sources)
    }

    pub fn build_mshrs(&self) -> MshrFile {
        MshrFile::new(self.mshrs as usize, self.mshr_waiters as usize)
    }
}

/// The last-level cache, or `"none"`: every trace load goes to memory (to compare the
/// simulated MPKI with a trace's own miss count, when the trace was filtered by a cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlcConfig {
    None,
    Cache(CacheLevelConfig),
}

impl Serialize for LlcConfig {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            LlcConfig::None => s.serialize_str("none"),
            LlcConfig::Cache(c) => c.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for LlcConfig {
    // By hand rather than `untagged`, so a typo inside the table keeps serde's exact message.
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LlcConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a cache table or \"none\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<LlcConfig, E> {
                if v == "none" {
                    Ok(LlcConfig::None)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<LlcConfig, A::Error> {
                CacheLevelConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(LlcConfig::Cache)
            }
        }
        d.deserialize_any(V)
    }
}

/// The caches below each core: an optional private L2, then the shared LLC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheHierarchyConfig {
    #[serde(default = "default_llc")]
    pub llc: LlcConfig,
    #[serde(default)]
    pub l2: Option<CacheLevelConfig>,
    /// Hardware prefetcher at the LLC (`[cache.prefetcher]`); off by default, and then not
    /// serialised, so configurations and their hashes without one are unchanged.
    #[serde(default, skip_serializing_if = "PrefetcherConfig::is_off")]
    pub prefetcher: PrefetcherConfig,
}

fn default_llc() -> LlcConfig {
    LlcConfig::Cache(CacheLevelConfig::default_llc())
}

impl Default for CacheHierarchyConfig {
    fn default() -> Self {
        CacheHierarchyConfig { llc: default_llc(), l2: None, prefetcher: PrefetcherConfig::default() }
    }
}

impl CacheHierarchyConfig {
    pub fn validate(&self) -> Result<()> {
        if let LlcConfig::Cache(c) = &self.llc {
            c.validate("cache.llc")?;
        }
        if let Some(l2) = &self.l2 {
            l2.validate("cache.l2")?;
            if let LlcConfig::Cache(c) = &self.llc {
                if l2.line_bytes != c.line_bytes {
                    return Err(Error::config(
                        "cache.l2.line_bytes",
                        format!("must equal cache.llc.line_bytes ({}), got {}", c.line_bytes, l2.line_bytes),
                    ));
                }
            }
        }
        if !self.prefetcher.is_off() {
            let Some(llc) = self.llc() else {
                return Err(Error::config("cache.prefetcher", "prefetchers fill the LLC: they need one (cache.llc is \"none\")"));
            };
            self.prefetcher.validate(llc.line_bytes)?;
        }
        Ok(())
    }

    /// The LLC's configuration, if there is one.
    pub fn llc(&self) -> Option<&CacheLevelConfig> {
        match &self.llc {
            LlcConfig::None => None,
            LlcConfig::Cache(c) => Some(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hierarchy_defaults_to_a_shared_llc_and_no_l2() {
        let h: CacheHierarchyConfig = toml::from_str("").unwrap();
        assert_eq!(h, CacheHierarchyConfig::default());
        assert_eq!(h.llc().unwrap().geometry().set_index_bits(), 6..19);
        h.validate().unwrap();
    }

    #[test]
    fn llc_none_means_no_llc_and_round_trips() {
        let h: CacheHierarchyConfig = toml::from_str("llc = \"none\"").unwrap();
        assert_eq!(h.llc, LlcConfig::None);
        let text = toml::to_string(&h).unwrap();
        assert_eq!(toml::from_str::<CacheHierarchyConfig>(&text).unwrap(), h);
    }

    #[test]
    fn llc_table_and_optional_l2_parse_and_validate() {
        let h: CacheHierarchyConfig = toml::from_str(
            "[llc]\nsize_bytes = 2097152\nways = 16\nlatency = 20\nmshrs = 32\n\
             [l2]\nsize_bytes = 262144\nways = 8\nlatency = 12\nmshrs = 16\n",
        )
        .unwrap();
        assert_eq!(h.llc().unwrap().size_bytes, 2 << 20);
        assert_eq!(h.l2.unwrap().ways, 8);
        h.validate().unwrap();
        let text = toml::to_string(&h).unwrap();
        assert_eq!(toml::from_str::<CacheHierarchyConfig>(&text).unwrap(), h);
    }

    #[test]
    fn unknown_llc_keys_and_words_are_errors() {
        let typo = toml::from_str::<CacheHierarchyConfig>("[llc]\nsize_bytes = 1\nways = 1\nlatency = 1\nmshrs = 1\nwayz = 3\n");
        assert!(typo.unwrap_err().to_string().contains("wayz"));
        assert!(toml::from_str::<CacheHierarchyConfig>("llc = \"off\"").is_err());
    }

    #[test]
    fn prefetcher_is_off_by_default_unserialised_and_needs_an_llc() {
        let h = CacheHierarchyConfig::default();
        assert!(!toml::to_string(&h).unwrap().contains("prefetcher"));
        let on: CacheHierarchyConfig = toml::from_str("[prefetcher]\nkind = \"stream\"\ndistance = 16\n").unwrap();
        assert_eq!(on.prefetcher.kind, PrefetcherKind::Stream);
        assert_eq!(on.prefetcher.distance, 16);
        on.validate().unwrap();
        assert_eq!(toml::from_str::<CacheHierarchyConfig>(&toml::to_string(&on).unwrap()).unwrap(), on);
        let none = CacheHierarchyConfig { llc: LlcConfig::None, ..on };
        assert!(none.validate().unwrap_err().to_string().contains("cache.prefetcher"));
        let bad: CacheHierarchyConfig = toml::from_str("[prefetcher]\nkind = \"stream\"\ndegree = 0\n").unwrap();
        assert!(bad.validate().unwrap_err().to_string().contains("cache.prefetcher.degree"));
    }

    #[test]
    fn bad_levels_fail_validation_with_their_field() {
        let mut h =
            CacheHierarchyConfig { l2: Some(CacheLevelConfig { mshrs: 0, ..CacheLevelConfig::default_l2() }), ..Default::default() };
        assert!(h.validate().unwrap_err().to_string().contains("cache.l2.mshrs"));
        h.l2 = Some(CacheLevelConfig { line_bytes: 128, size_bytes: 256 << 10, ..CacheLevelConfig::default_l2() });
        assert!(h.validate().unwrap_err().to_string().contains("cache.l2.line_bytes"));
        let h = CacheHierarchyConfig {
            llc: LlcConfig::Cache(CacheLevelConfig { ways: 0, ..CacheLevelConfig::default_llc() }),
            ..Default::default()
        };
        assert!(h.validate().unwrap_err().to_string().contains("cache.llc.ways"));
    }
}
