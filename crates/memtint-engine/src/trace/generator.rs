//! Seeded request generators: synthetic DRAM-level workloads.
//!
//! Every generator draws from one `ChaCha8Rng` seeded with `seed_from_u64(spec.seed)` and uses
//! only `next_u64` plus integer arithmetic written here (no `gen_range`/`gen_bool`, whose
//! algorithms may change between `rand` releases), so the same spec gives the same sequence on
//! every platform and with every version of `rand`. Per request, the address is drawn first, then
//! the read/write choice (skipped when `read_fraction` is exactly 0 or 1).
//!
//! Addresses are line-aligned (line = `Organisation::burst_bytes()`) and lie in
//! `[0, footprint_bytes)`; a footprint that is not a whole number of lines is rounded down to one.

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{DramRequest, TraceSource};
use crate::dram::{DramAddress, Organisation};
use crate::error::{Error, Result};

/// Which synthetic access pattern to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GeneratorKind {
    /// Interleaved sequential streams.
    Stream,
    /// Uniform random lines.
    Random,
    /// A fixed stride, wrapping at the footprint.
    Strided,
    /// Every request a row conflict in a rotating set of banks.
    Conflict,
    /// Random addresses with a read/write mix (2:1 by default).
    Mix,
}

impl GeneratorKind {
    pub const ALL: [GeneratorKind; 5] =
        [GeneratorKind::Stream, GeneratorKind::Random, GeneratorKind::Strided, GeneratorKind::Conflict, GeneratorKind::Mix];

    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| Error::unknown("generator", name, Self::ALL.map(|k| k.name())))
    }

    pub fn name(self) -> &'static str {
        match self {
            GeneratorKind::Stream => "stream",
            GeneratorKind::Random => "random",
            GeneratorKind::Strided => "strided",
            GeneratorKind::Conflict => "conflict",
            GeneratorKind::Mix => "mix",
        }
    }
}

fn default_seed() -> u64 {
    1
}

/// What to generate; the `[generate]` table of a configuration.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSpec {
    pub kind: GeneratorKind,
    /// Number of requests; must be > 0.
    pub requests: u64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Probability that a request is a read, in [0, 1]. Default: 2/3 for `mix`, 1 otherwise.
    #[serde(default)]
    pub read_fraction: Option<f64>,
    /// Bytes the addresses span, from 0. Default: the whole capacity. At least one line and at
    /// most the capacity. Not used by `conflict`, whose addresses span the chosen banks' rows.
    #[serde(default)]
    pub footprint_bytes: Option<u64>,
    /// `strided` only: the step; default 4096; a non-zero multiple of the line size.
    #[serde(default)]
    pub stride_bytes: Option<u64>,
    /// `stream` only: number of interleaved sequential streams; default 8.
    #[serde(default)]
    pub streams: Option<u32>,
    /// `conflict` only: number of banks the conflicts rotate over; default 1.
    #[serde(default)]
    pub banks: Option<u32>,
}

impl GeneratorSpec {
    /// A spec with every optional field at its default.
    pub fn new(kind: GeneratorKind, requests: u64) -> Self {
        GeneratorSpec {
            kind,
            requests,
            seed: default_seed(),
            read_fraction: None,
            footprint_bytes: None,
            stride_bytes: None,
            streams: None,
            banks: None,
        }
    }
}

pub const DEFAULT_STRIDE_BYTES: u64 = 4096;
pub const DEFAULT_STREAMS: u32 = 8;
pub const DEFAULT_CONFLICT_BANKS: u32 = 1;
pub const DEFAULT_MIX_READ_FRACTION: f64 = 2.0 / 3.0;

/// How a request decides read vs write.
#[derive(Clone, Copy, Debug)]
enum ReadChoice {
    AlwaysRead,
    AlwaysWrite,
    /// Read when the next `u64` is below this threshold (= read_fraction * 2^64).
    Draw(u64),
}

enum Pattern {
    /// Per stream: (first line, lines in its share, current offset); `next` is the stream the
    /// next request goes to.
    Stream {
        streams: Vec<(u64, u64, u64)>,
        next: usize,
    },
    /// Uniform random lines in [0, lines) (random and mix).
    Random {
        lines: u64,
    },
    Strided {
        lines: u64,
        step: u64,
        line: u64,
    },
    Conflict {
        /// Per bank slot: its coordinates (row, column overwritten per request) and previous row.
        banks: Vec<(DramAddress, Option<u32>)>,
        next: usize,
        rows: u32,
        /// Columns / burst_length: the line-aligned column slots of a row.
        column_slots: u32,
        burst_length: u32,
        encode: Box<dyn Fn(&DramAddress) -> u64 + Send>,
    },
}

/// A seeded synthetic workload; yields exactly `spec.requests` requests, all with `arrival: None`.
pub struct RequestGenerator {
    rng: ChaCha8Rng,
    remaining: u64,
    line_bytes: u64,
    line_mask: u64,
    read: ReadChoice,
    pattern: Pattern,
}

impl std::fmt::Debug for RequestGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestGenerator")
            .field("remaining", &self.remaining)
            .field("line_bytes", &self.line_bytes)
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

fn field_error(field: &str, reason: impl Into<String>) -> Error {
    Error::config(format!("generate.{field}"), reason)
}

/// Rejects an option given for a kind that does not use it, so a typo'd kind cannot silently
/// ignore it.
fn only_for<T>(spec: &GeneratorSpec, value: &Option<T>, field: &str, kind: GeneratorKind) -> Result<()> {
    if value.is_some() && spec.kind != kind {
        return Err(field_error(field, format!("only applies to kind '{}', not '{}'", kind.name(), spec.kind.name())));
    }
    Ok(())
}

/// A uniform draw in `[0, n)` (n > 0) from one `u64`: the high half of `x * n`. Its bias is below
/// n / 2^64, far below anything a simulation can see.
#[inline]
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

impl RequestGenerator {
    /// `encode` maps DRAM coordinates to a physical address (the address mapping's inverse); the
    /// conflict generator uses it. Validates the spec against `org` up front.
    pub fn new(spec: &GeneratorSpec, org: &Organisation, encode: Box<dyn Fn(&DramAddress) -> u64 + Send>) -> Result<Self> {
        org.validate()?;
        let line = org.burst_bytes();
        let capacity = org.capacity_bytes();

        if spec.requests == 0 {
            return Err(field_error("requests", "must be at least 1"));
        }

        let read_fraction = spec.read_fraction.unwrap_or(match spec.kind {
            GeneratorKind::Mix => DEFAULT_MIX_READ_FRACTION,
            _ => 1.0,
        });
        if !(0.0..=1.0).contains(&read_fraction) {
            return Err(field_error("read_fraction", format!("must be between 0 and 1, got {read_fraction}")));
        }
        let read = if read_fraction >= 1.0 {
            ReadChoice::AlwaysRead
        } else if read_fraction <= 0.0 {
            ReadChoice::AlwaysWrite
        } else {
            // read_fraction < 1, so the product is < 2^64 and the cast does not saturate.
            ReadChoice::Draw((read_fraction * 18_446_744_073_709_551_616.0) as u64)
        };

        only_for(spec, &spec.stride_bytes, "stride_bytes", GeneratorKind::Strided)?;
        only_for(spec, &spec.streams, "streams", GeneratorKind::Stream)?;
        only_for(spec, &spec.banks, "banks", GeneratorKind::Conflict)?;

        let footprint = spec.footprint_bytes.unwrap_or(capacity);
        if spec.kind == GeneratorKind::Conflict {
            if spec.footprint_bytes.is_some_and(|f| f != capacity) {
                return Err(field_error(
                    "footprint_bytes",
                    "does not apply to kind 'conflict' (its addresses span every row of the chosen banks)",
                ));
            }
        } else if footprint < line || footprint > capacity {
            return Err(field_error(
                "footprint_bytes",
                format!("must be between one line ({line} B) and the capacity ({capacity} B), got {footprint}"),
            ));
        }
        let lines = footprint / line;

        let pattern = match spec.kind {
            GeneratorKind::Stream => {
                let n = spec.streams.unwrap_or(DEFAULT_STREAMS);
                if n == 0 {
                    return Err(field_error("streams", "must be at least 1"));
                }
                if n as u64 > lines {
                    return Err(field_error(
                        "streams",
                        format!("{n} streams do not fit in a footprint of {lines} lines (one line each at least)"),
                    ));
                }
                let base = |i: u64| (i as u128 * lines as u128 / n as u128) as u64;
                // Each stream starts in its own bank (bank groups alternating fastest), so
                // streams run in parallel instead of conflicting in one bank: its first line
                // is offset within its share by the address of bank slot i.
                let start = |i: u64| {
                    let i = i as u32;
                    let d = DramAddress {
                        bank_group: i % org.bank_groups,
                        bank: (i / org.bank_groups) % org.banks_per_group,
                        rank: (i / org.banks_per_rank()) % org.ranks,
                        channel: (i / org.banks_per_channel()) % org.channels,
                        ..DramAddress::default()
                    };
                    encode(&d) / line
                };
                let streams = (0..n as u64)
                    .map(|i| {
                        let len = base(i + 1) - base(i);
                        (base(i), len, start(i) % len)
                    })
                    .collect();
                Pattern::Stream { streams, next: 0 }
            }
            GeneratorKind::Random | GeneratorKind::Mix => Pattern::Random { lines },
            GeneratorKind::Strided => {
                let stride = spec.stride_bytes.unwrap_or(DEFAULT_STRIDE_BYTES);
                if stride == 0 || !stride.is_multiple_of(line) {
                    return Err(field_error(
                        "stride_bytes",
                        format!("must be a non-zero multiple of the line size ({line} B), got {stride}"),
                    ));
                }
                // Wrapping at the footprint, a stride of it or more is a shorter one: at a
                // multiple of it every access is the same line.
                if stride >= lines * line {
                    let given = if spec.stride_bytes.is_some() { "" } else { " (the default)" };
                    return Err(field_error(
                        "stride_bytes",
                        format!(
                            "must be below the footprint ({} B, footprint_bytes or the capacity): it wraps there, so a stride \
                             of a multiple of it hits one line every time; got {stride}{given}",
                            lines * line
                        ),
                    ));
                }
                Pattern::Strided { lines, step: (stride / line) % lines, line: 0 }
            }
            GeneratorKind::Conflict => {
                let n = spec.banks.unwrap_or(DEFAULT_CONFLICT_BANKS);
                let total = org.total_banks();
                if n == 0 || n > total {
                    return Err(field_error("banks", format!("must be between 1 and the {total} banks of the system, got {n}")));
                }
                if org.rows < 2 {
                    return Err(field_error("kind", "'conflict' needs at least 2 rows per bank"));
                }
                // Bank ids 0..n in nested order channel / rank / bank group / bank (bank fastest).
                let banks = (0..n)
                    .map(|id| {
                        let bank = id % org.banks_per_group;
                        let id = id / org.banks_per_group;
                        let bank_group = id % org.bank_groups;
                        let id = id / org.bank_groups;
                        let rank = id % org.ranks;
                        let channel = id / org.ranks;
                        (DramAddress { channel, rank, bank_group, bank, row: 0, column: 0 }, None)
                    })
                    .collect();
                Pattern::Conflict {
                    banks,
                    next: 0,
                    rows: org.rows,
                    column_slots: org.columns / org.burst_length,
                    burst_length: org.burst_length,
                    encode,
                }
            }
        };

        Ok(RequestGenerator {
            rng: ChaCha8Rng::seed_from_u64(spec.seed),
            remaining: spec.requests,
            line_bytes: line,
            line_mask: !(line - 1),
            read,
            pattern,
        })
    }

    /// Requests still to come.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The line size addresses are aligned to.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    #[inline]
    fn next_addr(&mut self) -> u64 {
        let line = self.line_bytes;
        match &mut self.pattern {
            Pattern::Stream { streams, next } => {
                let (base, len, off) = &mut streams[*next];
                let addr = (*base + *off) * line;
                *off += 1;
                if *off == *len {
                    *off = 0;
                }
                *next += 1;
                if *next == streams.len() {
                    *next = 0;
                }
                addr
            }
            Pattern::Random { lines } => below(&mut self.rng, *lines) * line,
            Pattern::Strided { lines, step, line: cur } => {
                let addr = *cur * line;
                *cur += *step;
                if *cur >= *lines {
                    *cur -= *lines;
                }
                addr
            }
            Pattern::Conflict { banks, next, rows, column_slots, burst_length, encode } => {
                let n_banks = banks.len();
                let (coords, prev_row) = &mut banks[*next];
                let row = match *prev_row {
                    None => below(&mut self.rng, *rows as u64) as u32,
                    Some(prev) => {
                        // Uniform over the other rows.
                        let r = below(&mut self.rng, *rows as u64 - 1) as u32;
                        if r >= prev {
                            r + 1
                        } else {
                            r
                        }
                    }
                };
                let column = below(&mut self.rng, *column_slots as u64) as u32 * *burst_length;
                *prev_row = Some(row);
                coords.row = row;
                coords.column = column;
                *next += 1;
                if *next == n_banks {
                    *next = 0;
                }
                encode(coords) & self.line_mask
            }
        }
    }
}

impl TraceSource for RequestGenerator {
    #[inline]
    fn next_request(&mut self) -> Result<Option<DramRequest>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let addr = self.next_addr();
        let is_write = match self.read {
            ReadChoice::AlwaysRead => false,
            ReadChoice::AlwaysWrite => true,
            ReadChoice::Draw(threshold) => self.rng.next_u64() >= threshold,
        };
        Ok(Some(DramRequest { addr, is_write, arrival: None }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 channels x 2 ranks x 4 bank groups x 4 banks, 64 Ki rows, 1 Ki columns, x64 bus, BL8:
    /// 64 B lines, 32 GiB.
    fn org() -> Organisation {
        crate::mapping::test_support::ddr4(2, 2)
    }

    /// Plain bit fields, low to high: bus byte, column, bank, bank group, rank, channel, row.
    fn test_encode(org: &Organisation) -> Box<dyn Fn(&DramAddress) -> u64 + Send> {
        let o = org.clone();
        Box::new(move |a: &DramAddress| {
            let mut x = a.row as u64;
            x = x * o.channels as u64 + a.channel as u64;
            x = x * o.ranks as u64 + a.rank as u64;
            x = x * o.bank_groups as u64 + a.bank_group as u64;
            x = x * o.banks_per_group as u64 + a.bank as u64;
            x = x * o.columns as u64 + a.column as u64;
            x * o.bus_bytes()
        })
    }

    fn test_decode(o: &Organisation, addr: u64) -> DramAddress {
        let mut x = addr / o.bus_bytes();
        let mut take = |n: u32| {
            let v = (x % n as u64) as u32;
            x /= n as u64;
            v
        };
        let column = take(o.columns);
        let bank = take(o.banks_per_group);
        let bank_group = take(o.bank_groups);
        let rank = take(o.ranks);
        let channel = take(o.channels);
        let row = take(o.rows);
        DramAddress { channel, rank, bank_group, bank, row, column }
    }

    fn generator(spec: &GeneratorSpec) -> Result<RequestGenerator> {
        let o = org();
        RequestGenerator::new(spec, &o, test_encode(&o))
    }

    fn collect(spec: &GeneratorSpec) -> Vec<DramRequest> {
        let mut g = generator(spec).unwrap();
        let mut out = Vec::new();
        while let Some(r) = g.next_request().unwrap() {
            out.push(r);
        }
        out
    }

    fn spec(kind: GeneratorKind, requests: u64) -> GeneratorSpec {
        GeneratorSpec::new(kind, requests)
    }

    fn assert_config_error(spec: &GeneratorSpec, field: &str) {
        match generator(spec) {
            Err(Error::Config { field: f, reason }) => {
                assert_eq!(f, field, "reason: {reason}");
                assert!(!reason.is_empty());
            }
            other => panic!("expected a config error on {field}, got {other:?}"),
        }
    }

    #[test]
    fn test_encoder_and_decoder_are_inverse() {
        let o = org();
        let enc = test_encode(&o);
        let a = DramAddress { channel: 1, rank: 0, bank_group: 3, bank: 2, row: 12345, column: 1016 };
        assert_eq!(test_decode(&o, enc(&a)), a);
    }

    #[test]
    fn kind_names_round_trip_and_unknown_lists_valid_ones() {
        for k in GeneratorKind::ALL {
            assert_eq!(GeneratorKind::from_name(k.name()).unwrap(), k);
        }
        let e = GeneratorKind::from_name("zipf").unwrap_err().to_string();
        for k in GeneratorKind::ALL {
            assert!(e.contains(k.name()), "{e}");
        }
        assert!(e.contains("zipf"));
    }

    #[test]
    fn spec_deserialises_with_defaults_and_rejects_unknown_fields() {
        let s: GeneratorSpec = serde_json::from_str(r#"{"kind": "strided", "requests": 10}"#).unwrap();
        assert_eq!(s.kind, GeneratorKind::Strided);
        assert_eq!(s.seed, 1);
        assert!(s.read_fraction.is_none() && s.stride_bytes.is_none());
        let s: GeneratorSpec = toml::from_str("kind = \"mix\"\nrequests = 5\nseed = 9\nread_fraction = 0.5\n").unwrap();
        assert_eq!((s.kind, s.requests, s.seed, s.read_fraction), (GeneratorKind::Mix, 5, 9, Some(0.5)));
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind": "stream", "requests": 1, "strde": 64}"#).is_err());
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind": "Stream", "requests": 1}"#).is_err());
    }

    #[test]
    fn every_kind_yields_exactly_the_requested_count_line_aligned_within_the_footprint() {
        let o = org();
        for kind in GeneratorKind::ALL {
            let mut s = spec(kind, 12_345);
            if kind != GeneratorKind::Conflict {
                s.footprint_bytes = Some(1 << 24);
            }
            let reqs = collect(&s);
            assert_eq!(reqs.len(), 12_345, "{kind:?}");
            let limit = if kind == GeneratorKind::Conflict { o.capacity_bytes() } else { 1 << 24 };
            for r in &reqs {
                assert_eq!(r.addr % 64, 0, "{kind:?}: {:#x}", r.addr);
                assert!(r.addr < limit, "{kind:?}: {:#x}", r.addr);
                assert_eq!(r.arrival, None);
            }
        }
    }

    #[test]
    fn same_seed_gives_the_same_sequence_and_another_seed_a_different_one() {
        for kind in [GeneratorKind::Random, GeneratorKind::Conflict, GeneratorKind::Mix] {
            let mut s = spec(kind, 5000);
            s.banks = (kind == GeneratorKind::Conflict).then_some(4);
            let a = collect(&s);
            assert_eq!(a, collect(&s), "{kind:?}");
            s.seed = 2;
            assert_ne!(a, collect(&s), "{kind:?}");
        }
        // Read/write draws are seeded too.
        let mut s = spec(GeneratorKind::Stream, 1000);
        s.read_fraction = Some(0.5);
        let a = collect(&s);
        assert_eq!(a, collect(&s));
        s.seed = 7;
        assert_ne!(a, collect(&s));
    }

    #[test]
    fn random_sequence_is_pinned_for_seed_1() {
        // Guards determinism across platforms and dependency updates: ChaCha8 is fully specified.
        let mut s = spec(GeneratorKind::Random, 4);
        s.footprint_bytes = Some(1 << 30);
        let got: Vec<u64> = collect(&s).iter().map(|r| r.addr).collect();
        assert_eq!(got, vec![432165632, 86311296, 640551616, 235497920]);
    }

    #[test]
    fn stream_is_sequential_per_stream_and_interleaves_round_robin() {
        let mut s = spec(GeneratorKind::Stream, 4 * 1000);
        s.streams = Some(4);
        s.footprint_bytes = Some(4 * 64 * 100); // 100 lines per stream
        let reqs = collect(&s);
        for (k, r) in reqs.iter().enumerate().skip(4) {
            let stream = (k % 4) as u64;
            let prev = reqs[k - 4].addr / 64 - stream * 100;
            assert_eq!(r.addr / 64, stream * 100 + (prev + 1) % 100, "request {k}");
            assert!(!r.is_write);
        }
    }

    #[test]
    fn streams_start_in_their_own_share_and_in_distinct_banks() {
        let o = org();
        let s = spec(GeneratorKind::Stream, 8);
        let reqs = collect(&s);
        let share = o.capacity_bytes() / 8;
        let mut banks = std::collections::HashSet::new();
        for (i, r) in reqs.iter().enumerate() {
            assert_eq!(r.addr / share, i as u64, "stream {i} starts outside its share");
            let d = test_decode(&o, r.addr);
            banks.insert((d.channel, d.rank, d.bank_group, d.bank));
        }
        assert_eq!(banks.len(), 8);
        // With a smaller footprint whose shares are not whole lines, streams stay in their share.
        let mut s = spec(GeneratorKind::Stream, 3);
        s.streams = Some(3);
        s.footprint_bytes = Some(10 * 64);
        let addrs: Vec<u64> = collect(&s).iter().map(|r| r.addr / 64).collect();
        for (i, a) in addrs.iter().enumerate() {
            assert!((3 * i as u64..3 * i as u64 + 3).contains(a), "{addrs:?}");
        }
    }

    #[test]
    fn strided_steps_by_the_stride_and_wraps_at_the_footprint() {
        let mut s = spec(GeneratorKind::Strided, 10);
        s.stride_bytes = Some(4096);
        s.footprint_bytes = Some(4 * 4096 + 64);
        let addrs: Vec<u64> = collect(&s).iter().map(|r| r.addr).collect();
        // 257 lines; step 64 lines.
        let mut want = Vec::new();
        let mut cur = 0u64;
        for _ in 0..10 {
            want.push(cur * 64);
            cur = (cur + 64) % 257;
        }
        assert_eq!(addrs, want);
        assert_eq!(&addrs[..5], &[0, 4096, 8192, 12288, 16384]);

        let s = spec(GeneratorKind::Strided, 3);
        let addrs: Vec<u64> = collect(&s).iter().map(|r| r.addr).collect();
        assert_eq!(addrs, vec![0, 4096, 8192], "default stride is 4096");
    }

    #[test]
    fn conflict_hits_the_configured_banks_with_a_new_row_every_time() {
        let o = org();
        for banks in [1u32, 3, 16, 64] {
            let mut s = spec(GeneratorKind::Conflict, 20_000);
            s.banks = Some(banks);
            let reqs = collect(&s);
            let mut prev_rows: Vec<Option<u32>> = vec![None; banks as usize];
            for (k, r) in reqs.iter().enumerate() {
                let a = test_decode(&o, r.addr);
                let id = (((a.channel * o.ranks + a.rank) * o.bank_groups + a.bank_group) * o.banks_per_group + a.bank) as usize;
                assert_eq!(id, k % banks as usize, "request {k} of {banks} banks hit bank {id}");
                assert_eq!(a.column % o.burst_length, 0);
                if let Some(prev) = prev_rows[id] {
                    assert_ne!(a.row, prev, "request {k}: same row as the previous access to bank {id}");
                }
                prev_rows[id] = Some(a.row);
            }
            assert!(prev_rows.iter().all(|r| r.is_some()));
        }
    }

    #[test]
    fn conflict_rows_are_different_even_with_two_rows() {
        let mut o = org();
        o.rows = 2;
        let mut s = spec(GeneratorKind::Conflict, 100);
        s.banks = Some(2);
        let mut g = RequestGenerator::new(&s, &o, test_encode(&o)).unwrap();
        let mut prev = [None, None];
        for k in 0..100 {
            let a = test_decode(&o, g.next_request().unwrap().unwrap().addr);
            if let Some(p) = prev[k % 2] {
                assert_ne!(a.row, p);
            }
            prev[k % 2] = Some(a.row);
        }
    }

    #[test]
    fn mix_read_fraction_is_two_thirds_by_default() {
        let reqs = collect(&spec(GeneratorKind::Mix, 100_000));
        let reads = reqs.iter().filter(|r| !r.is_write).count() as f64 / reqs.len() as f64;
        assert!((reads - 2.0 / 3.0).abs() < 0.02, "read fraction {reads}");
        let distinct: std::collections::HashSet<u64> = reqs.iter().map(|r| r.addr).collect();
        assert!(distinct.len() > 99_000, "mix addresses are random");
    }

    #[test]
    fn read_fraction_applies_to_every_kind() {
        for kind in GeneratorKind::ALL {
            let mut s = spec(kind, 20_000);
            s.read_fraction = Some(0.25);
            let reqs = collect(&s);
            let reads = reqs.iter().filter(|r| !r.is_write).count() as f64 / reqs.len() as f64;
            assert!((reads - 0.25).abs() < 0.02, "{kind:?}: {reads}");
            s.read_fraction = Some(0.0);
            assert!(collect(&s).iter().all(|r| r.is_write), "{kind:?}");
            s.read_fraction = None;
            let all_reads = collect(&s).iter().all(|r| !r.is_write);
            assert_eq!(all_reads, kind != GeneratorKind::Mix, "{kind:?}");
        }
    }

    #[test]
    fn invalid_specs_are_rejected_naming_the_field() {
        let o = org();
        assert_config_error(&spec(GeneratorKind::Random, 0), "generate.requests");

        for bad in [-0.1, 1.5, f64::NAN] {
            let mut s = spec(GeneratorKind::Mix, 10);
            s.read_fraction = Some(bad);
            assert_config_error(&s, "generate.read_fraction");
        }

        for bad in [0, 63, o.capacity_bytes() + 64] {
            let mut s = spec(GeneratorKind::Random, 10);
            s.footprint_bytes = Some(bad);
            assert_config_error(&s, "generate.footprint_bytes");
        }
        let mut s = spec(GeneratorKind::Conflict, 10);
        s.footprint_bytes = Some(1 << 20);
        assert_config_error(&s, "generate.footprint_bytes");

        for bad in [0, 100, 32] {
            let mut s = spec(GeneratorKind::Strided, 10);
            s.stride_bytes = Some(bad);
            assert_config_error(&s, "generate.stride_bytes");
        }
        // At or past the footprint the stride wrapped to another (the capacity's: one line).
        for (stride, footprint) in [(o.capacity_bytes(), None), (2 * o.capacity_bytes(), None), (8192, Some(8192)), (8192, Some(4096))] {
            let mut s = spec(GeneratorKind::Strided, 10);
            s.stride_bytes = Some(stride);
            s.footprint_bytes = footprint;
            assert_config_error(&s, "generate.stride_bytes");
        }
        let mut s = spec(GeneratorKind::Strided, 10);
        s.footprint_bytes = Some(4096);
        let e = generator(&s).expect_err("refused").to_string();
        assert!(e.contains("generate.stride_bytes: must be below the footprint (4096 B") && e.contains("got 4096 (the default)"), "{e}");

        let mut s = spec(GeneratorKind::Stream, 10);
        s.streams = Some(0);
        assert_config_error(&s, "generate.streams");
        s.streams = Some(5);
        s.footprint_bytes = Some(4 * 64);
        assert_config_error(&s, "generate.streams");

        for bad in [0, o.total_banks() + 1] {
            let mut s = spec(GeneratorKind::Conflict, 10);
            s.banks = Some(bad);
            assert_config_error(&s, "generate.banks");
        }

        // Options that belong to another kind.
        let mut s = spec(GeneratorKind::Random, 10);
        s.stride_bytes = Some(4096);
        assert_config_error(&s, "generate.stride_bytes");
        let mut s = spec(GeneratorKind::Strided, 10);
        s.streams = Some(2);
        assert_config_error(&s, "generate.streams");
        let mut s = spec(GeneratorKind::Mix, 10);
        s.banks = Some(2);
        assert_config_error(&s, "generate.banks");
    }

    /// Cost per request. Run with
    /// `cargo test -p memtint-engine trace_generator_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn trace_generator_speed() {
        const N: u64 = 10_000_000;
        for kind in GeneratorKind::ALL {
            let mut g = generator(&spec(kind, N)).unwrap();
            let start = std::time::Instant::now();
            let mut acc = 0u64;
            while let Some(r) = g.next_request().unwrap() {
                acc ^= r.addr ^ r.is_write as u64;
            }
            let ns = start.elapsed().as_secs_f64() * 1e9 / N as f64;
            println!("{:>8}: {ns:.1} ns/request ({acc:x})", kind.name());
        }
    }
}
