//! Built-in synthetic CPU workloads, so that nothing external is needed: named profiles
//! (`stream`, `random`, `copy`, `light`) whose parameters can be overridden, and the seeded
//! generator that turns a profile into an endless stream of trace records.
//!
//! Per record the generator draws, in this order, from one `ChaCha8Rng` seeded with
//! `seed_from_u64(seed)`:
//! 1. bubbles, geometric with mean `1000 / reads_pki - 1`, so instructions per read average
//!    exactly `1000 / reads_pki` (no draw when `reads_pki` is 1000);
//! 2. the read: the streams take turns; a stream continues to its next line with probability
//!    `row_locality` and otherwise jumps to a uniformly random line of the footprint (no draw
//!    when `row_locality` is 0 or 1); with a hot set, a jump first draws whether it lands in the
//!    hot set (the last `hot_bytes` of the footprint) with probability `hot_share`, and then a
//!    uniform line of the hot set or of the whole footprint (no draw without a hot set);
//! 3. whether the record carries a writeback, with probability `writes_pki / reads_pki` (no draw
//!    when 0 or 1). The line written back is the one read `WRITEBACK_LAG` records earlier (in
//!    the first records, the first one read): dirty lines leave the cache some time after use.
//!
//! Integer arithmetic throughout except the geometric draw, which uses `f64::ln`.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{CpuRecord, CpuTraceSource};
use crate::error::{Error, Result};

/// Virtual address of the first byte of every profile's footprint (not 0, so that nothing
/// mistakes a virtual address for a physical one).
pub const VIRTUAL_BASE: u64 = 1 << 32;
/// Records between reading a line and writing it back.
pub const WRITEBACK_LAG: usize = 4096;
const LINE_BYTES: u64 = 64;
/// The "row-sized" region a sequential stream stays in; a stream needs at least one.
const REGION_BYTES: u64 = 8192;
const MAX_STREAMS: u32 = 64;
/// 64 TiB: a user-space virtual address range.
const MAX_FOOTPRINT_BYTES: u64 = 1 << 46;
/// Fewest reads per kilo-instruction: a mean gap of 10^8 instructions, whose geometric draws
/// stay within their 32 bits.
const MIN_READS_PKI: f64 = 1e-5;

/// A profile's parameters, all set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileParams {
    /// Reads (trace records) per kilo-instruction, in (0, 1000].
    pub reads_pki: f64,
    /// Writebacks per kilo-instruction, in [0, reads_pki].
    pub writes_pki: f64,
    /// Bytes the addresses span, from `VIRTUAL_BASE`; rounded down to whole lines.
    pub footprint_bytes: u64,
    /// Probability that a stream continues sequentially rather than jumping, in [0, 1].
    pub row_locality: f64,
    /// Concurrent sequential streams (bank-level parallelism), 1 to 64.
    pub streams: u32,
    pub seed: u64,
    /// A hot set: the last `hot_bytes` of the footprint (0: none), which a share `hot_share` of
    /// jumps land in (GUPS's hot set in HeMem's and Colloid's evaluations). At the end, so that
    /// first-touch placement in address order fills the fast tier with cold data first.
    #[serde(skip_serializing_if = "is_zero")]
    pub hot_bytes: u64,
    #[serde(skip_serializing_if = "is_zero_f")]
    pub hot_share: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f(v: &f64) -> bool {
    *v == 0.0
}

/// Parameters given by the user; unset ones keep the profile's defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileOverrides {
    pub reads_pki: Option<f64>,
    pub writes_pki: Option<f64>,
    pub footprint_bytes: Option<u64>,
    pub row_locality: Option<f64>,
    pub streams: Option<u32>,
    pub seed: Option<u64>,
    pub hot_bytes: Option<u64>,
    pub hot_share: Option<f64>,
}

impl ProfileOverrides {
    /// Parses `key=value` pairs separated by commas, e.g. `reads_pki=30,seed=2`; values are
    /// TOML numbers (so `1_048_576` and `0x100000` work).
    pub fn parse(text: &str) -> Result<Self> {
        let table: String = text.split(',').filter(|kv| !kv.trim().is_empty()).map(|kv| format!("{}\n", kv.trim())).collect();
        // One pair per line: the key path names the pair, the line adds nothing.
        let what = format!("workload parameters '{text}'");
        // Each pair alone first, so a mistake is named with its pair, not with TOML's grammar.
        const PAIRS: &str = "give key=number pairs separated by commas, e.g. random:reads_pki=30,seed=2";
        for kv in text.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(Error::config(what, format!("'{kv}' is not key=number; {PAIRS}")));
            };
            let number =
                toml::from_str::<toml::Table>(&format!("x = {}", v.trim())).is_ok_and(|t| t["x"].is_integer() || t["x"].is_float());
            if !number {
                return Err(Error::config(what, format!("{} = '{}' is not a number; {PAIRS}", k.trim(), v.trim())));
            }
        }
        crate::error::from_toml(&table, &what).map_err(|e| match e {
            // toml's message spans lines ("invalid string" then "expected ..."): one line here.
            Error::Parse { reason, .. } => {
                Error::config(what, reason.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": "))
            }
            e => e,
        })
    }
}

/// A named synthetic workload and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub name: &'static str,
    pub params: ProfileParams,
}

struct Builtin {
    name: &'static str,
    what: &'static str,
    defaults: ProfileParams,
}

const fn params(reads_pki: f64, writes_pki: f64, footprint_bytes: u64, row_locality: f64, streams: u32) -> ProfileParams {
    ProfileParams { reads_pki, writes_pki, footprint_bytes, row_locality, streams, seed: 1, hot_bytes: 0, hot_share: 0.0 }
}

const BUILTINS: [Builtin; 5] = [
    Builtin {
        name: "stream",
        // 462.libquantum: one sequential sweep of its register array (BPM §4: LLC MPKI 50,
        // RBL 99 %); 55 reads per kilo-instruction give an LLC MPKI of about 48 alone.
        what: "libquantum-like: one sequential sweep, LLC MPKI about 50, very high locality, few writebacks",
        defaults: params(55.0, 4.0, 64 << 20, 0.99, 1),
    },
    Builtin {
        name: "random",
        what: "mcf-like: random lines over a large footprint, low locality",
        defaults: params(30.0, 10.0, 1 << 30, 0.02, 1),
    },
    Builtin {
        name: "copy",
        what: "lbm-like stencil/copy: eight concurrent sequential streams with writebacks, high bank-level parallelism",
        defaults: params(20.0, 10.0, 256 << 20, 0.95, 8),
    },
    Builtin {
        name: "light",
        // 403.gcc / 447.dealII / 444.namd (BPM §4: LLC MPKI 0.4 / 0.5 / 0.3): rare accesses
        // that miss the LLC in the steady state too, over a footprint larger than the LLC.
        what: "gcc/dealII/namd-like: compute-bound, rare LLC misses (MPKI about 0.5) over a 64 MiB footprint",
        defaults: params(0.5, 0.1, 64 << 20, 0.5, 1),
    },
    Builtin {
        name: "hotset",
        // GUPS with a hot set (HeMem, SOSP 2021; Colloid, SOSP 2024): random read-modify-write
        // updates, 90 % of them to an eighth of the footprint.
        what: "GUPS-like: random updates over 64 MiB, 90 % of them to a hot 8 MiB at its end",
        defaults: ProfileParams { hot_bytes: 8 << 20, hot_share: 0.9, ..params(30.0, 30.0, 64 << 20, 0.0, 1) },
    },
];

impl Profile {
    /// The built-in profile names.
    pub const NAMES: [&'static str; 5] = [BUILTINS[0].name, BUILTINS[1].name, BUILTINS[2].name, BUILTINS[3].name, BUILTINS[4].name];

    /// The profile `name` with `overrides` applied; checks every parameter.
    pub fn from_name(name: &str, overrides: &ProfileOverrides) -> Result<Self> {
        let b = BUILTINS.iter().find(|b| b.name == name).ok_or_else(|| Error::unknown("workload profile", name, Self::NAMES))?;
        let d = &b.defaults;
        let o = overrides;
        let p = ProfileParams {
            reads_pki: o.reads_pki.unwrap_or(d.reads_pki),
            writes_pki: o.writes_pki.unwrap_or(d.writes_pki),
            footprint_bytes: o.footprint_bytes.unwrap_or(d.footprint_bytes),
            row_locality: o.row_locality.unwrap_or(d.row_locality),
            streams: o.streams.unwrap_or(d.streams),
            seed: o.seed.unwrap_or(d.seed),
            hot_bytes: o.hot_bytes.unwrap_or(d.hot_bytes),
            hot_share: o.hot_share.unwrap_or(d.hot_share),
        };
        let profile = Profile { name: b.name, params: p };
        profile.validate()?;
        Ok(profile)
    }

    /// `name` or `name:key=value,...`; `seed` applies unless the parameters set one.
    pub fn parse(spec: &str, seed: u64) -> Result<Self> {
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut overrides = ProfileOverrides::parse(rest)?;
        overrides.seed = overrides.seed.or(Some(seed));
        Self::from_name(name, &overrides)
    }

    fn validate(&self) -> Result<()> {
        let p = &self.params;
        let err = |field: &str, reason: String| Err(Error::config(format!("workload.{}.{field}", self.name), reason));
        // Below this the gaps drawn outgrow their 32 bits, and under about 1e-13 the draw's
        // probability rounds to 0 and every instruction became a read.
        if !(p.reads_pki >= MIN_READS_PKI && p.reads_pki <= 1000.0) {
            return err(
                "reads_pki",
                format!(
                    "must be between {MIN_READS_PKI} (a read per 10^8 instructions) and 1000 (one read per instruction), got {}",
                    p.reads_pki
                ),
            );
        }
        if !(p.writes_pki >= 0.0 && p.writes_pki <= p.reads_pki) {
            return err(
                "writes_pki",
                format!("must be between 0 and reads_pki ({}): a record carries at most one writeback; got {}", p.reads_pki, p.writes_pki),
            );
        }
        if !(0.0..=1.0).contains(&p.row_locality) {
            return err("row_locality", format!("must be between 0 and 1, got {}", p.row_locality));
        }
        if p.streams == 0 || p.streams > MAX_STREAMS {
            return err("streams", format!("must be between 1 and {MAX_STREAMS}, got {}", p.streams));
        }
        if !(0.0..=1.0).contains(&p.hot_share) {
            return err("hot_share", format!("must be between 0 and 1, got {}", p.hot_share));
        }
        if p.hot_bytes > p.footprint_bytes || (p.hot_bytes > 0 && p.hot_bytes < LINE_BYTES) {
            return err(
                "hot_bytes",
                format!("must be 0 or between one line and footprint_bytes ({}), got {}", p.footprint_bytes, p.hot_bytes),
            );
        }
        if (p.hot_bytes == 0) != (p.hot_share == 0.0) {
            return err(
                if p.hot_bytes == 0 { "hot_bytes" } else { "hot_share" },
                format!("a hot set needs both hot_bytes and hot_share above 0 (got {} and {})", p.hot_bytes, p.hot_share),
            );
        }
        let min = p.streams as u64 * REGION_BYTES;
        if p.footprint_bytes < min || p.footprint_bytes > MAX_FOOTPRINT_BYTES {
            return err(
                "footprint_bytes",
                format!("must be between {min} ({REGION_BYTES} B per stream) and {MAX_FOOTPRINT_BYTES}, got {}", p.footprint_bytes),
            );
        }
        Ok(())
    }

    /// One line: what the profile imitates and its parameters.
    pub fn describe(&self) -> String {
        let what = BUILTINS.iter().find(|b| b.name == self.name).map_or("", |b| b.what);
        let p = &self.params;
        let hot = if p.hot_bytes > 0 { format!(", hot_bytes={}, hot_share={}", p.hot_bytes, p.hot_share) } else { String::new() };
        format!(
            "{}: {what} (reads_pki={}, writes_pki={}, footprint_bytes={}, row_locality={}, streams={}, seed={}{hot})",
            self.name, p.reads_pki, p.writes_pki, p.footprint_bytes, p.row_locality, p.streams, p.seed
        )
    }

    pub fn generator(&self) -> ProfileGenerator {
        ProfileGenerator::new(self)
    }
}

/// An event that happens with a fixed probability; draws only when the outcome is uncertain.
#[derive(Clone, Copy, Debug)]
enum Chance {
    Never,
    Always,
    /// Happens when the next `u64` is below this (= probability * 2^64).
    Below(u64),
}

impl Chance {
    fn new(p: f64) -> Self {
        if p <= 0.0 {
            Chance::Never
        } else if p >= 1.0 {
            Chance::Always
        } else {
            Chance::Below((p * 18_446_744_073_709_551_616.0) as u64)
        }
    }

    #[inline]
    fn happens(self, rng: &mut ChaCha8Rng) -> bool {
        match self {
            Chance::Never => false,
            Chance::Always => true,
            Chance::Below(t) => rng.next_u64() < t,
        }
    }
}

/// The endless record stream of a profile. Same profile, same records; `rewind` restarts them.
pub struct ProfileGenerator {
    name: String,
    seed: u64,
    rng: ChaCha8Rng,
    /// `ln(1 - p)` for the geometric bubbles, p = reads per instruction; `None` when p = 1.
    ln_miss: Option<f64>,
    sequential: Chance,
    writeback: Chance,
    /// A jump lands in the hot set (its first line and length in lines).
    hot: Chance,
    hot_first: u64,
    hot_lines: u64,
    lines: u64,
    starts: Vec<u64>,
    /// Per stream, the line it reads next, in [0, lines).
    cursors: Vec<u64>,
    next_stream: usize,
    /// The last `WRITEBACK_LAG` lines read; `recent_head` is the oldest once full.
    recent: Vec<u64>,
    recent_head: usize,
}

impl std::fmt::Debug for ProfileGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileGenerator").field("name", &self.name).field("seed", &self.seed).finish_non_exhaustive()
    }
}

impl ProfileGenerator {
    /// The same generator under another name (the spec it was opened from).
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    fn new(profile: &Profile) -> Self {
        let p = &profile.params;
        let per_instruction = p.reads_pki / 1000.0;
        let lines = p.footprint_bytes / LINE_BYTES;
        // Streams start evenly spread, each in its own part of the footprint.
        let starts: Vec<u64> = (0..p.streams as u64).map(|i| (i as u128 * lines as u128 / p.streams as u128) as u64).collect();
        ProfileGenerator {
            name: profile.name.to_string(),
            seed: p.seed,
            rng: ChaCha8Rng::seed_from_u64(p.seed),
            ln_miss: (per_instruction < 1.0).then(|| (1.0 - per_instruction).ln()),
            sequential: Chance::new(p.row_locality),
            writeback: Chance::new(p.writes_pki / p.reads_pki),
            hot: Chance::new(p.hot_share),
            hot_first: lines - p.hot_bytes / LINE_BYTES,
            hot_lines: p.hot_bytes / LINE_BYTES,
            lines,
            cursors: starts.clone(),
            starts,
            next_stream: 0,
            recent: Vec::with_capacity(WRITEBACK_LAG),
            recent_head: 0,
        }
    }

    /// A uniform draw in `[0, n)` from one `u64` (bias below n / 2^64).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }

    #[inline]
    fn bubbles(&mut self) -> u32 {
        let Some(ln_miss) = self.ln_miss else { return 0 };
        // u in (0, 1]: P(bubbles >= k) = P(u <= (1-p)^k) = (1-p)^k, a geometric law.
        let u = ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        (u.ln() / ln_miss).min(u32::MAX as f64) as u32
    }
}

impl CpuTraceSource for ProfileGenerator {
    #[inline]
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        let bubbles = self.bubbles();

        let s = self.next_stream;
        self.next_stream = if s + 1 == self.cursors.len() { 0 } else { s + 1 };
        let line = self.cursors[s];
        self.cursors[s] = if self.sequential.happens(&mut self.rng) {
            if line + 1 == self.lines {
                0
            } else {
                line + 1
            }
        } else if self.hot.happens(&mut self.rng) {
            self.hot_first + self.below(self.hot_lines)
        } else {
            self.below(self.lines)
        };

        // Once full, recent[recent_head] is the line read WRITEBACK_LAG records ago; until then
        // the head stays on the first line read.
        let writeback = self.writeback.happens(&mut self.rng).then(|| {
            let old = self.recent.get(self.recent_head).copied().unwrap_or(line);
            VIRTUAL_BASE + old * LINE_BYTES
        });
        if self.recent.len() < WRITEBACK_LAG {
            self.recent.push(line);
        } else {
            self.recent[self.recent_head] = line;
            self.recent_head = if self.recent_head + 1 == WRITEBACK_LAG { 0 } else { self.recent_head + 1 };
        }
        Ok(Some(CpuRecord { bubbles, read: VIRTUAL_BASE + line * LINE_BYTES, writeback }))
    }

    fn rewind(&mut self) -> Result<()> {
        self.rng = ChaCha8Rng::seed_from_u64(self.seed);
        self.cursors.clone_from(&self.starts);
        self.next_stream = 0;
        self.recent.clear();
        self.recent_head = 0;
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn footprint(&self) -> Option<(u64, u64)> {
        Some((VIRTUAL_BASE, VIRTUAL_BASE + self.lines * LINE_BYTES))
    }
}

#[cfg(test)]
mod tests {
    use super::super::trace_stats;
    use super::*;

    fn profile(name: &str) -> Profile {
        Profile::from_name(name, &ProfileOverrides::default()).unwrap()
    }

    fn take(g: &mut ProfileGenerator, n: usize) -> Vec<CpuRecord> {
        (0..n).map(|_| g.next_record().unwrap().expect("profiles never end")).collect()
    }

    /// Fraction of reads in the same 8 KiB region as one of the previous 8 reads.
    fn region_locality(records: &[CpuRecord]) -> f64 {
        let region = |r: &CpuRecord| r.read / REGION_BYTES;
        let hits = (8..records.len()).filter(|&i| records[i - 8..i].iter().any(|p| region(p) == region(&records[i]))).count();
        hits as f64 / (records.len() - 8) as f64
    }

    #[test]
    fn names_round_trip_and_unknown_lists_valid_ones() {
        for name in Profile::NAMES {
            let p = profile(name);
            assert_eq!(p.name, name);
            assert!(p.describe().starts_with(&format!("{name}: ")) && p.describe().contains("reads_pki="), "{}", p.describe());
        }
        let e = Profile::from_name("zipf", &ProfileOverrides::default()).unwrap_err().to_string();
        assert!(e.contains("zipf"), "{e}");
        for name in Profile::NAMES {
            assert!(e.contains(name), "{e}");
        }
    }

    #[test]
    fn overrides_parse_apply_and_reject_unknown_fields() {
        let o = ProfileOverrides::parse("reads_pki=30, footprint_bytes=1_048_576,streams=0x4,seed=9").unwrap();
        let p = Profile::from_name("copy", &o).unwrap().params;
        assert_eq!((p.reads_pki, p.footprint_bytes, p.streams, p.seed), (30.0, 1 << 20, 4, 9));
        assert_eq!(p.writes_pki, profile("copy").params.writes_pki, "unset parameters keep the profile's default");
        assert_eq!(ProfileOverrides::parse("").unwrap(), ProfileOverrides::default());
        let e = ProfileOverrides::parse("reads_pk=3").unwrap_err().to_string();
        assert!(e.contains("unknown field") && e.contains("reads_pk"), "{e}");
        assert!(ProfileOverrides::parse("streams=-1").is_err());
        // A value that is not a TOML number: one line, no escaped "\n" in the middle.
        let e = ProfileOverrides::parse("reads_pki=abc").unwrap_err().to_string();
        assert!(e.contains("reads_pki=abc") && !e.contains("\\n") && !e.contains('\n'), "{e}");
        assert!(e.contains("reads_pki = 'abc' is not a number") && e.contains("separated by commas"), "{e}");
        // Pairs joined by ':' as the profile is by its name: one pair whose value is no number.
        let e = ProfileOverrides::parse("reads_pki=2:writes_pki=1").unwrap_err().to_string();
        assert!(e.contains("reads_pki = '2:writes_pki=1' is not a number") && e.contains("separated by commas"), "{e}");
        let e = ProfileOverrides::parse("reads_pki").unwrap_err().to_string();
        assert!(e.contains("'reads_pki' is not key=number"), "{e}");
        let o: ProfileOverrides = serde_json::from_str(r#"{"row_locality": 0.5}"#).unwrap();
        assert_eq!(o.row_locality, Some(0.5));
        assert!(serde_json::from_str::<ProfileOverrides>(r#"{"locality": 0.5}"#).is_err());
        // The seed argument applies unless the spec sets one.
        assert_eq!(Profile::parse("light", 42).unwrap().params.seed, 42);
        assert_eq!(Profile::parse("light:seed=3", 42).unwrap().params.seed, 3);
    }

    #[test]
    fn invalid_parameters_are_rejected_naming_the_field() {
        for (spec, field) in [
            ("stream:reads_pki=0", "workload.stream.reads_pki"),
            ("stream:reads_pki=1001", "workload.stream.reads_pki"),
            // Above 0, but every instruction became a read (the draw's probability rounded to 0).
            ("stream:reads_pki=5e-324", "workload.stream.reads_pki"),
            ("stream:reads_pki=0.000009", "workload.stream.reads_pki"),
            ("random:writes_pki=31", "workload.random.writes_pki"),
            ("random:writes_pki=-1", "workload.random.writes_pki"),
            ("copy:row_locality=1.5", "workload.copy.row_locality"),
            ("copy:streams=0", "workload.copy.streams"),
            ("copy:streams=65", "workload.copy.streams"),
            ("copy:footprint_bytes=32768", "workload.copy.footprint_bytes"),
            ("light:footprint_bytes=0x1000000000000", "workload.light.footprint_bytes"),
        ] {
            match Profile::parse(spec, 1) {
                Err(Error::Config { field: f, .. }) => assert_eq!(f, field, "{spec}"),
                other => panic!("{spec}: expected a config error, got {other:?}"),
            }
        }
    }

    #[test]
    fn same_seed_gives_the_same_records_and_another_seed_different_ones() {
        for name in Profile::NAMES {
            let p = profile(name);
            let a = take(&mut p.generator(), 20_000);
            assert_eq!(a, take(&mut p.generator(), 20_000), "{name}");
            let other = Profile::parse(&format!("{name}:seed=2"), 1).unwrap();
            assert_ne!(a, take(&mut other.generator(), 20_000), "{name}");
        }
    }

    #[test]
    fn rewind_reproduces_the_sequence() {
        for name in Profile::NAMES {
            let mut g = profile(name).generator();
            let a = take(&mut g, 10_000);
            g.rewind().unwrap();
            assert_eq!(take(&mut g, 10_000), a, "{name}");
        }
    }

    #[test]
    fn long_run_rates_are_within_two_percent_of_the_parameters() {
        for name in Profile::NAMES {
            let p = profile(name).params;
            let mut g = profile(name).generator();
            let s = trace_stats(&mut g, Some((400_000.0 * 1000.0 / p.reads_pki) as u64)).unwrap();
            let reads = s.reads_pki();
            assert!((reads / p.reads_pki - 1.0).abs() < 0.02, "{name}: reads_pki {reads} vs {}", p.reads_pki);
            let wb = s.writebacks_pki();
            assert!((wb / p.writes_pki - 1.0).abs() < 0.02, "{name}: writes_pki {wb} vs {}", p.writes_pki);
        }
        // Extremes: one read per instruction, no writebacks, every record a writeback.
        let s = trace_stats(&mut Profile::parse("random:reads_pki=1000,writes_pki=0", 1).unwrap().generator(), Some(1000)).unwrap();
        assert_eq!((s.records, s.instructions, s.writebacks), (1000, 1000, 0));
        let s = trace_stats(&mut Profile::parse("copy:writes_pki=20", 1).unwrap().generator(), Some(100_000)).unwrap();
        assert_eq!(s.writebacks, s.records);
    }

    #[test]
    fn addresses_stay_in_the_footprint_and_writebacks_reuse_read_lines() {
        for name in Profile::NAMES {
            let p = profile(name).params;
            let records = take(&mut profile(name).generator(), 50_000);
            let reads: std::collections::HashSet<u64> = records.iter().map(|r| r.read).collect();
            for r in &records {
                assert!(r.read >= VIRTUAL_BASE && r.read < VIRTUAL_BASE + p.footprint_bytes, "{name}: {:#x}", r.read);
                assert_eq!(r.read % LINE_BYTES, 0);
                if let Some(wb) = r.writeback {
                    assert!(reads.contains(&wb), "{name}: writeback {wb:#x} of a line never read");
                }
            }
        }
    }

    #[test]
    fn stream_has_far_higher_sequential_locality_than_random() {
        let stream = region_locality(&take(&mut profile("stream").generator(), 100_000));
        let random = region_locality(&take(&mut profile("random").generator(), 100_000));
        let copy = region_locality(&take(&mut profile("copy").generator(), 100_000));
        assert!(stream > 0.95, "stream {stream}");
        assert!(copy > 0.9, "copy {copy}");
        assert!(random < 0.05, "random {random}");
    }

    #[test]
    fn profiles_differ_in_the_intended_ways() {
        let limit = Some(20_000_000);
        let stats = |name: &str| trace_stats(&mut profile(name).generator(), limit).unwrap();
        let (stream, random, copy, light) = (stats("stream"), stats("random"), stats("copy"), stats("light"));
        // light is compute-bound: under one access per kilo-instruction (BPM's light programs
        // have LLC MPKI 0.3-0.5), spread over more than the 8 MiB LLC so that it misses.
        assert!(light.reads_pki() < 1.0 && light.footprint_pages * 4096 > 8 << 20, "{light:?}");
        // random spreads over far more pages than stream for a similar number of reads.
        assert!(random.footprint_pages > 10 * stream.footprint_pages, "{random:?} {stream:?}");
        // copy keeps eight streams going at once: reads of a window fall in ~8 regions.
        let records = take(&mut profile("copy").generator(), 64);
        let regions: std::collections::HashSet<u64> = records.iter().map(|r| r.read / REGION_BYTES).collect();
        assert!((8..=16).contains(&regions.len()), "{regions:?}");
        assert!(copy.writebacks_pki() > stream.writebacks_pki());
    }

    #[test]
    fn a_hot_set_takes_its_share_of_jumps_at_the_end_of_the_footprint() {
        let p = Profile::parse("hotset", 3).unwrap();
        assert_eq!((p.params.hot_bytes, p.params.hot_share), (8 << 20, 0.9));
        let mut g = p.generator();
        let records = take(&mut g, 50_000);
        let first_hot = VIRTUAL_BASE + (64 << 20) - (8 << 20);
        let hot = records.iter().filter(|r| r.read >= first_hot).count() as f64 / records.len() as f64;
        // 90 % aimed at the hot set, and an eighth of the other 10 % lands there anyway.
        assert!((hot - (0.9 + 0.1 / 8.0)).abs() < 0.01, "{hot}");
        assert!(records.iter().all(|r| r.read >= VIRTUAL_BASE && r.read < VIRTUAL_BASE + (64 << 20)));
        // Without a hot set nothing changes: no draw is added.
        let plain = Profile::parse("random:footprint_bytes=67108864", 3).unwrap();
        assert!(!p.describe().is_empty() && !plain.describe().contains("hot_"));
        for bad in ["hot_share=1.5", "hot_bytes=0", "hot_bytes=134217728", "hot_bytes=32", "hot_bytes=4096,hot_share=0"] {
            let e = Profile::parse(&format!("hotset:{bad}"), 1).unwrap_err().to_string();
            assert!(e.contains("hot_"), "{bad}: {e}");
        }
    }
}
