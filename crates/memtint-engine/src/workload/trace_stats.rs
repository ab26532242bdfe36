//! One-pass statistics of a CPU trace as the trace itself counts them (no cache, no timing):
//! records, instructions, reads, writebacks, reads per kilo-instruction and the footprint.
//! Simulated results are checked against these.

use rustc_hash::FxHashSet;
use serde::Serialize;

use super::reuse_distance::{ReuseDistance, ReuseSummary};
use super::{CpuRecord, CpuTraceSource};
use crate::error::Result;

const LINE_BYTES_LOG2: u32 = 6;
const PAGE_BYTES_LOG2: u32 = 12;

/// Counts over (a prefix of) a CPU trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceStats {
    pub records: u64,
    /// Sum over records of bubbles + 1.
    pub instructions: u64,
    /// One per record.
    pub reads: u64,
    pub writebacks: u64,
    /// Distinct 64 B lines touched by reads or writebacks.
    pub footprint_lines: u64,
    /// Distinct 4 KiB pages touched by reads or writebacks.
    pub footprint_pages: u64,
}

impl TraceStats {
    /// Reads per kilo-instruction (the trace's MPKI: its reads are last-level-cache misses).
    pub fn reads_pki(&self) -> f64 {
        per_kilo(self.reads, self.instructions)
    }

    /// Writebacks per kilo-instruction.
    pub fn writebacks_pki(&self) -> f64 {
        per_kilo(self.writebacks, self.instructions)
    }

    pub fn footprint_bytes(&self) -> u64 {
        self.footprint_lines << LINE_BYTES_LOG2
    }
}

fn per_kilo(n: u64, instructions: u64) -> f64 {
    if instructions == 0 {
        0.0
    } else {
        n as f64 * 1000.0 / instructions as f64
    }
}

/// Reads `source` from where it stands to its end, or over its first `instruction_limit`
/// instructions: exactly what a core that retires that many instructions has executed, so a
/// record whose load lies beyond the limit contributes only its bubbles up to the limit (the
/// record is consumed from the source). Synthetic profiles never end, so they need a limit.
pub fn trace_stats(source: &mut (impl CpuTraceSource + ?Sized), instruction_limit: Option<u64>) -> Result<TraceStats> {
    trace_stats_observed(source, instruction_limit, |_| {})
}

/// `trace_stats` plus the reuse-distance distribution of the same records.
pub fn trace_stats_with_reuse(
    source: &mut (impl CpuTraceSource + ?Sized),
    instruction_limit: Option<u64>,
) -> Result<(TraceStats, ReuseSummary)> {
    let mut reuse = ReuseDistance::default();
    let stats = trace_stats_observed(source, instruction_limit, |r| {
        reuse.read(r.read);
        if let Some(wb) = r.writeback {
            reuse.writeback(wb);
        }
    })?;
    Ok((stats, reuse.summary()))
}

/// The counting loop; `observe` sees every counted record.
fn trace_stats_observed(
    source: &mut (impl CpuTraceSource + ?Sized),
    instruction_limit: Option<u64>,
    mut observe: impl FnMut(&CpuRecord),
) -> Result<TraceStats> {
    let limit = instruction_limit.unwrap_or(u64::MAX);
    let mut s = TraceStats::default();
    let mut lines = FxHashSet::default();
    let mut pages = FxHashSet::default();
    let mut touch = |addr: u64| {
        // Consecutive accesses mostly share a page: skip the page set when the line is not new.
        if lines.insert(addr >> LINE_BYTES_LOG2) {
            pages.insert(addr >> PAGE_BYTES_LOG2);
        }
    };
    while s.instructions < limit {
        if s.records & crate::interrupt::RECORD_CHECK_MASK == 0 {
            crate::interrupt::check()?;
        }
        let Some(r) = source.next_record()? else { break };
        if s.instructions + r.instructions() > limit {
            // The limit falls among this record's bubbles: its load is not executed.
            s.instructions = limit;
            break;
        }
        s.records += 1;
        s.instructions += r.instructions();
        s.reads += 1;
        observe(&r);
        touch(r.read);
        if let Some(wb) = r.writeback {
            s.writebacks += 1;
            touch(wb);
        }
    }
    s.footprint_lines = lines.len() as u64;
    s.footprint_pages = pages.len() as u64;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::{spec_traces_dir, CpuTraceReader, VecCpuSource};
    use super::*;
    use crate::trace::text_input::TempFile;
    use std::collections::HashSet;
    use std::io::BufRead;

    /// 5 records: 3+1, 0+1, 9+1, 4+1, 1+1 = 22 instructions, 5 reads, 2 writebacks.
    /// Lines: 0x1000, 0x1040, 0x2000 (wb), 0x1000 again, 0x5000, 0x1040 again (wb) -> 4 distinct;
    /// pages 0x1, 0x2, 0x5 -> 3.
    const HANDMADE: &str = "# handmade\n3 0x1000\n0 0x1040 0x2000\n9 4096\n4 0x5000\n1 0x1000 0x1040\n";

    #[test]
    fn handmade_trace_counts_and_mpki_match_hand_computation() {
        let f = TempFile::with_bytes("stats", HANDMADE.as_bytes());
        let s = trace_stats(&mut CpuTraceReader::open(&f.0).unwrap(), None).unwrap();
        assert_eq!(s, TraceStats { records: 5, instructions: 22, reads: 5, writebacks: 2, footprint_lines: 4, footprint_pages: 3 });
        assert!((s.reads_pki() - 5000.0 / 22.0).abs() < 1e-9);
        assert!((s.writebacks_pki() - 2000.0 / 22.0).abs() < 1e-9);
        assert_eq!(s.footprint_bytes(), 256);
    }

    #[test]
    fn instruction_limit_counts_exactly_the_first_n_instructions() {
        let f = TempFile::with_bytes("statslim", HANDMADE.as_bytes());
        let mut r = CpuTraceReader::open(&f.0).unwrap();
        // Loads at instructions 4, 5, 15: the third lies beyond 14.
        let s = trace_stats(&mut r, Some(14)).unwrap();
        assert_eq!((s.records, s.instructions, s.reads, s.writebacks), (2, 14, 2, 1));
        // The source stands after the counted records.
        let rest = trace_stats(&mut r, None).unwrap();
        assert_eq!((rest.records, rest.instructions), (2, 7));
        assert_eq!(trace_stats(&mut VecCpuSource::new("none", vec![]), Some(10)).unwrap(), TraceStats::default());
        let one = vec![CpuRecord { bubbles: 99, read: 0, writeback: None }];
        let s = trace_stats(&mut VecCpuSource::new("one", one), Some(1)).unwrap();
        assert_eq!((s.instructions, s.reads), (1, 0));
    }

    /// Counts a trace with plain std code: split lines, parse with `str::parse`.
    fn independent_count(path: &std::path::Path) -> (u64, u64, u64, u64, u64, u64) {
        let r = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()));
        let (mut records, mut instructions, mut writebacks) = (0u64, 0u64, 0u64);
        let mut lines = HashSet::new();
        let mut pages = HashSet::new();
        for line in r.lines() {
            let line = line.unwrap();
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            records += 1;
            instructions += fields[0].parse::<u64>().unwrap() + 1;
            writebacks += (fields.len() == 3) as u64;
            for a in &fields[1..] {
                let a: u64 = a.parse().unwrap();
                lines.insert(a / 64);
                pages.insert(a / 4096);
            }
        }
        (records, instructions, records, writebacks, lines.len() as u64, pages.len() as u64)
    }

    #[test]
    fn spec_trace_counts_match_an_independent_count() {
        let Some(dir) = spec_traces_dir() else { return };
        for name in ["403.gcc.gz", "458.sjeng.gz"] {
            let path = dir.join(name);
            let s = trace_stats(&mut CpuTraceReader::open(&path).unwrap(), None).unwrap();
            let got = (s.records, s.instructions, s.reads, s.writebacks, s.footprint_lines, s.footprint_pages);
            assert_eq!(got, independent_count(&path), "{name}");
            assert!(s.records > 10_000 && s.reads_pki() > 0.0, "{name}: {s:?}");
        }
    }
}
