//! Hardware data prefetchers attached to the shared LLC: their configuration (`[cache.prefetcher]`),
//! the `Prefetcher` interface and the registry that builds one by name. Each core (thread) gets its
//! own instance; it trains on that core's demand accesses that reach the LLC (hits and misses, as
//! Intel's L2 streamer trains on every L2 lookup) and proposes physical lines to fetch. The memory
//! hierarchy decides whether each proposal is issued, redundant or dropped.
//!
//! A new prefetcher is a file implementing `Prefetcher`, a `PrefetcherKind` variant and one arm in
//! `build` (and its name in `NAMES`).

use super::next_line_prefetcher::NextLinePrefetcher;
use super::stream_prefetcher::StreamPrefetcher;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The registered prefetchers, as `memtint presets` lists them.
pub const NAMES: &[&str] = &["none", "next-line", "stream"];

/// Bytes of the page no prefetch may leave: physical frames are scattered (and coloured), so the
/// line after a 4 KB page's last line belongs to some other page, of this program or another.
pub const PREFETCH_PAGE_BYTES: u64 = 4096;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetcherKind {
    /// No prefetching (the default everywhere).
    #[default]
    None,
    /// On each demand miss, the next `degree` lines of the same 4 KB page.
    NextLine,
    /// Intel's L2 streamer as documented: per-page ascending/descending stream trackers.
    Stream,
}

/// `[cache.prefetcher]`. The defaults are the Intel optimisation manual's figures for the L2
/// streamer (Sandy Bridge chapter: "detects and maintains up to 32 streams", "may issue two
/// prefetch requests on every L2 lookup", "can run up to 20 lines ahead of the load request",
/// never across a 4 KB page); the confirmation count is not documented (2: a direction seen twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefetcherConfig {
    #[serde(default)]
    pub kind: PrefetcherKind,
    /// Streams tracked per core (LRU-replaced), one per 4 KB page.
    #[serde(default = "default_trackers")]
    pub trackers: u32,
    /// How far ahead of the demand stream prefetches may run, in lines.
    #[serde(default = "default_distance")]
    pub distance: u32,
    /// Prefetches proposed per triggering access.
    #[serde(default = "default_degree")]
    pub degree: u32,
    /// Consecutive accesses in one direction within a page before a stream prefetches.
    #[serde(default = "default_train_confirmations")]
    pub train_confirmations: u32,
}

fn default_trackers() -> u32 {
    32
}
fn default_distance() -> u32 {
    20
}
fn default_degree() -> u32 {
    2
}
fn default_train_confirmations() -> u32 {
    2
}

impl Default for PrefetcherConfig {
    fn default() -> Self {
        PrefetcherConfig {
            kind: PrefetcherKind::None,
            trackers: default_trackers(),
            distance: default_distance(),
            degree: default_degree(),
            train_confirmations: default_train_confirmations(),
        }
    }
}

impl PrefetcherConfig {
    pub fn is_off(&self) -> bool {
        self.kind == PrefetcherKind::None
    }

    /// Checks the parameters against a cache line size.
    pub fn validate(&self, line_bytes: u32) -> Result<()> {
        if self.is_off() {
            return Ok(());
        }
        let lines_per_page = (PREFETCH_PAGE_BYTES / line_bytes.max(1) as u64) as u32;
        if self.degree == 0 {
            return Err(Error::config("cache.prefetcher.degree", "must be at least 1 (or use kind = \"none\")"));
        }
        if self.kind == PrefetcherKind::Stream {
            crate::params::BUFFER_ENTRIES.check("cache.prefetcher.trackers", self.trackers as u64)?;
            if self.distance < self.degree {
                return Err(Error::config(
                    "cache.prefetcher.distance",
                    format!("must be at least degree ({}), got {}", self.degree, self.distance),
                ));
            }
            if self.train_confirmations == 0 {
                return Err(Error::config("cache.prefetcher.train_confirmations", "must be at least 1"));
            }
        }
        // A stream prefetcher reaches `distance` lines ahead, next-line `degree`: the key to change.
        let (key, reach) = match self.kind {
            PrefetcherKind::Stream => ("cache.prefetcher.distance", self.distance),
            _ => ("cache.prefetcher.degree", self.degree),
        };
        if reach >= lines_per_page {
            return Err(Error::config(
                key,
                format!(
                    "prefetches stay within a 4 KB page of {lines_per_page} lines, so the reach must be below {lines_per_page}, got {reach}"
                ),
            ));
        }
        Ok(())
    }
}

/// Per-core prefetch counters (docs/stats.md). Every prefetch that reaches DRAM is `issued`;
/// of those, `useful` ones were hit by a demand after they filled the LLC, `late` ones were still
/// in flight when a demand for the line arrived (the demand merged with them), `useless` ones
/// were evicted before any demand used them; the rest were still unused at the end of the run.
/// `dropped` proposals found no MSHR or outbox room (demands keep a reserve) and were not sent;
/// `redundant` proposals were already in the LLC or in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrefetchStats {
    pub issued: u64,
    pub useful: u64,
    pub late: u64,
    pub useless: u64,
    pub dropped: u64,
    pub redundant: u64,
}

impl PrefetchStats {
    pub fn since(&self, e: &Self) -> Self {
        PrefetchStats {
            issued: self.issued - e.issued,
            useful: self.useful - e.useful,
            late: self.late - e.late,
            useless: self.useless.saturating_sub(e.useless),
            dropped: self.dropped - e.dropped,
            redundant: self.redundant - e.redundant,
        }
    }

    pub fn add(&mut self, o: &Self) {
        self.issued += o.issued;
        self.useful += o.useful;
        self.late += o.late;
        self.useless += o.useless;
        self.dropped += o.dropped;
        self.redundant += o.redundant;
    }
}

/// One core's prefetcher.
pub trait Prefetcher {
    /// A demand access by this core to physical `line` (line-aligned) reached the LLC
    /// (`hit`: it hit there). Appends the lines to prefetch, in issue order, to `out`;
    /// they must lie in `line`'s 4 KB page.
    fn on_access(&mut self, line: u64, hit: bool, out: &mut Vec<u64>);
}

/// One prefetcher per core as configured (`None` for kind = "none"). `line_bytes` is the LLC's.
pub fn build(cfg: &PrefetcherConfig, line_bytes: u32) -> Result<Option<Box<dyn Prefetcher>>> {
    cfg.validate(line_bytes)?;
    Ok(match cfg.kind {
        PrefetcherKind::None => None,
        PrefetcherKind::NextLine => Some(Box::new(NextLinePrefetcher::new(cfg, line_bytes))),
        PrefetcherKind::Stream => Some(Box::new(StreamPrefetcher::new(cfg, line_bytes))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> PrefetcherConfig {
        PrefetcherConfig { kind: PrefetcherKind::Stream, ..Default::default() }
    }

    #[test]
    fn defaults_are_off_and_parse_from_an_empty_table() {
        let c: PrefetcherConfig = toml::from_str("").unwrap();
        assert_eq!(c, PrefetcherConfig::default());
        assert!(c.is_off());
        let s: PrefetcherConfig = toml::from_str("kind = \"stream\"").unwrap();
        assert_eq!((s.trackers, s.distance, s.degree, s.train_confirmations), (32, 20, 2, 2));
        s.validate(64).unwrap();
    }

    #[test]
    fn unknown_kind_lists_the_valid_ones() {
        let e = toml::from_str::<PrefetcherConfig>("kind = \"ip-stride\"").unwrap_err().to_string();
        assert!(e.contains("none") && e.contains("next-line") && e.contains("stream"), "{e}");
        let e = toml::from_str::<PrefetcherConfig>("kind = \"stream\"\ndegre = 2").unwrap_err().to_string();
        assert!(e.contains("degre"), "{e}");
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let msg = |c: PrefetcherConfig| c.validate(64).unwrap_err().to_string();
        assert!(msg(PrefetcherConfig { degree: 0, ..stream() }).contains("cache.prefetcher.degree"));
        let e = msg(PrefetcherConfig { distance: 1, degree: 2, ..stream() });
        assert!(e.contains("cache.prefetcher.distance") && e.contains("degree (2)"), "{e}");
        assert!(msg(PrefetcherConfig { trackers: 0, ..stream() }).contains("cache.prefetcher.trackers"));
        assert!(msg(PrefetcherConfig { train_confirmations: 0, ..stream() }).contains("train_confirmations"));
        let e = msg(PrefetcherConfig { distance: 64, ..stream() });
        assert!(e.contains("cache.prefetcher.distance") && e.contains("below 64"), "{e}");
        // Next-line reaches `degree` lines ahead and has no distance: degree is named.
        let e = msg(PrefetcherConfig { kind: PrefetcherKind::NextLine, degree: 64, ..Default::default() });
        assert!(e.contains("cache.prefetcher.degree") && e.contains("below 64"), "{e}");
        // Off: the parameters are not looked at.
        PrefetcherConfig { degree: 0, ..Default::default() }.validate(64).unwrap();
    }

    #[test]
    fn build_follows_the_kind() {
        assert!(build(&PrefetcherConfig::default(), 64).unwrap().is_none());
        assert!(build(&stream(), 64).unwrap().is_some());
        assert!(build(&PrefetcherConfig { kind: PrefetcherKind::NextLine, ..Default::default() }, 64).unwrap().is_some());
        assert!(build(&PrefetcherConfig { degree: 0, ..stream() }, 64).is_err());
    }
}
