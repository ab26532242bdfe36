//! A program in phases: `phases:A@N+B@M+C` runs workload A for N instructions, then B for M,
//! then C for ever (or, when every part has a length, A again after the last: phases repeat).
//! Each part is any workload `open_cpu_workload` takes (a profile with parameters, a trace);
//! part k is seeded `seed + k`. Parts share the address space: profiles all start at the same
//! virtual base, so a later phase reuses (and grows) the earlier ones' pages, as a program
//! whose behaviour changes keeps its heap.
//!
//! A phase ends after exactly its N instructions of its workload. A record is a gap of
//! non-memory instructions and then its access, so the record that reaches past the end is cut
//! there: the part of its gap inside the phase runs (added to the gap before the next record,
//! the next phase's first), and its access, which lies after the end, is dropped. A phase that
//! comes back starts its workload over, so nothing of the cut record is owed.

use super::{open_cpu_workload, CpuRecord, CpuTraceSource};
use crate::error::{Error, Result};

pub const PREFIX: &str = "phases:";

struct Part {
    source: Box<dyn CpuTraceSource>,
    /// Instructions the phase lasts (`None`: for ever).
    length: Option<u64>,
}

pub struct Phases {
    name: String,
    parts: Vec<Part>,
    current: usize,
    /// Instructions of the current phase so far.
    done: u64,
    /// Non-memory instructions of cut records not yet given out (they precede the next record).
    carry: u64,
}

impl Phases {
    /// `spec` without its prefix: parts separated by `+`, each `workload@instructions` but the
    /// last, whose length is optional.
    pub fn open(spec: &str, seed: u64) -> Result<Self> {
        let body = spec.strip_prefix(PREFIX).unwrap_or(spec);
        let texts: Vec<&str> = body.split('+').collect();
        let bad = |k: usize, why: String| Error::config(format!("{PREFIX} part {} ('{}')", k + 1, texts[k]), why);
        let mut parts = Vec::with_capacity(texts.len());
        for (k, text) in texts.iter().enumerate() {
            let (program, length) = match text.rsplit_once('@') {
                Some((program, n)) => {
                    let n: u64 = n.trim().replace('_', "").parse().map_err(|_| bad(k, format!("'{n}' is not a number of instructions")))?;
                    if n == 0 {
                        return Err(bad(k, "a phase lasts at least 1 instruction".into()));
                    }
                    (program, Some(n))
                }
                None if k + 1 == texts.len() => (*text, None),
                None => return Err(bad(k, "give its length: workload@instructions (only the last phase may run for ever)".into())),
            };
            if program.trim().is_empty() || program.starts_with(PREFIX) {
                return Err(bad(k, "give a workload (a profile or a trace; phases do not nest)".into()));
            }
            let mut source = open_cpu_workload(program.trim(), seed.wrapping_add(k as u64)).map_err(|e| bad(k, e.keyed_reason()))?;
            // The first record says whether the part has any and whether a visit reaches it.
            let Some(first) = source.next_record()? else {
                return Err(bad(k, Error::empty_trace("workload", source.name(), "records").reason()));
            };
            source.rewind()?;
            parts.push((Part { source, length }, first.instructions()));
        }
        // Every visit starts its part over, so if no phase reaches its first access none ever will.
        if parts.iter().all(|(p, first)| p.length.is_some_and(|n| n < *first)) {
            let firsts: Vec<String> = parts.iter().map(|(p, first)| format!("{} of {}", first, p.length.unwrap_or(0))).collect();
            return Err(Error::config(
                format!("{PREFIX}{body}"),
                format!(
                    "every phase ends before its workload's first memory access (at instruction {}): the program would never access memory",
                    firsts.join(", ")
                ),
            ));
        }
        let parts = parts.into_iter().map(|(p, _)| p).collect();
        Ok(Phases { name: format!("{PREFIX}{body}"), parts, current: 0, done: 0, carry: 0 })
    }

    fn advance(&mut self) -> Result<()> {
        self.done = 0;
        self.current += 1;
        if self.current == self.parts.len() {
            self.current = 0;
        }
        self.parts[self.current].source.rewind()
    }
}

impl CpuTraceSource for Phases {
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        loop {
            let part = &mut self.parts[self.current];
            if part.length.is_some_and(|n| self.done >= n) {
                self.advance()?;
                continue;
            }
            let record = match part.source.next_record()? {
                Some(r) => r,
                None => {
                    // A trace shorter than its phase wraps around within it.
                    part.source.rewind()?;
                    match part.source.next_record()? {
                        Some(r) => r,
                        None => return Ok(None),
                    }
                }
            };
            if let Some(left) = part.length.map(|n| n - self.done).filter(|&left| record.instructions() > left) {
                // The phase ends inside this record's gap (the module's doc says the rule).
                self.carry += left;
                self.done += left;
                continue;
            }
            self.done += record.instructions();
            let bubbles = record.bubbles as u64 + std::mem::take(&mut self.carry);
            let Ok(bubbles) = u32::try_from(bubbles) else {
                return Err(Error::config(
                    &self.name,
                    format!("{bubbles} instructions without a memory access across a phase's end: a record holds at most {}", u32::MAX),
                ));
            };
            return Ok(Some(CpuRecord { bubbles, ..record }));
        }
    }

    fn rewind(&mut self) -> Result<()> {
        self.current = 0;
        self.done = 0;
        self.carry = 0;
        for p in &mut self.parts {
            p.source.rewind()?;
        }
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }

    /// The first phase's data: what the program has mapped when its measured window starts.
    /// Later phases fault theirs in as they run (a growing footprint).
    fn footprint(&self) -> Option<(u64, u64)> {
        self.parts[0].source.footprint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instructions before the first read `pred` accepts (the read is the next one).
    fn instructions_until_read_of(source: &mut dyn CpuTraceSource, pred: impl Fn(u64) -> bool, limit: u64) -> Option<u64> {
        let mut n = 0;
        while n < limit {
            let r = source.next_record().unwrap()?;
            if pred(r.read) {
                return Some(n + r.bubbles as u64);
            }
            n += r.instructions();
        }
        None
    }

    fn trace(tag: &str, text: &str) -> crate::trace::text_input::TempFile {
        crate::trace::text_input::TempFile::with_bytes(tag, text.as_bytes())
    }

    /// A: three records of 10 bubbles and a load (11 instructions each); B: one of 2 and a load.
    /// `A@25+B@6`: A's first two records end at 22; its third would end at 33, past 25, so its
    /// first 3 bubbles run and its load at 33 does not; B's first record comes after those 3
    /// (5 bubbles) and ends the 31st instruction, B's 3rd; B's only record again ends B at 6;
    /// then A starts over. Before, A ran its third record whole (to 33, 8 past its end).
    #[test]
    fn a_phase_ends_at_its_instruction_count_inside_a_record() {
        let a = trace("phase-a.txt", "10 0x1000\n10 0x1040\n10 0x1080\n");
        let b = trace("phase-b.txt", "2 0x9000\n");
        let spec = format!("phases:{}@25+{}@6", a.0.display(), b.0.display());
        let mut p = Phases::open(&spec, 1).unwrap();
        let rec = |bubbles, read| CpuRecord { bubbles, read, writeback: None };
        let cycle = [rec(10, 0x1000), rec(10, 0x1040), rec(5, 0x9000), rec(2, 0x9000)];
        let got: Vec<CpuRecord> = (0..8).map(|_| p.next_record().unwrap().unwrap()).collect();
        assert_eq!(got[..4], cycle);
        assert_eq!(got[4..], cycle, "the phases repeat, A from its start");
        assert_eq!(got[..4].iter().map(CpuRecord::instructions).sum::<u64>(), 25 + 6);
        // A phase that ends exactly at a record's end cuts nothing.
        let mut p = Phases::open(&format!("phases:{}@22+{}", a.0.display(), b.0.display()), 1).unwrap();
        let got: Vec<CpuRecord> = (0..3).map(|_| p.next_record().unwrap().unwrap()).collect();
        assert_eq!(got, [rec(10, 0x1000), rec(10, 0x1040), rec(2, 0x9000)]);
        // A phase shorter than its first gap gives its instructions to the next one's first record.
        let mut p = Phases::open(&format!("phases:{}@4+{}", a.0.display(), b.0.display()), 1).unwrap();
        assert_eq!(p.next_record().unwrap().unwrap(), rec(6, 0x9000));
        p.rewind().unwrap();
        assert_eq!(p.next_record().unwrap().unwrap(), rec(6, 0x9000), "rewind drops what was carried");
    }

    #[test]
    fn phases_that_never_reach_an_access_or_hold_an_empty_trace_are_refused() {
        let a = trace("never-a.txt", "10 0x1000\n");
        let b = trace("never-b.txt", "2 0x9000\n");
        let e = Phases::open(&format!("phases:{}@5+{}@2", a.0.display(), b.0.display()), 1).err().expect("refused").to_string();
        assert!(e.contains("every phase ends before its workload's first memory access (at instruction 11 of 5, 3 of 2)"), "{e}");
        Phases::open(&format!("phases:{}@5+{}@3", a.0.display(), b.0.display()), 1).unwrap();
        let empty = trace("never-empty.txt", "# nothing\n");
        let e = Phases::open(&format!("phases:light@100+{}", empty.0.display()), 1).err().expect("refused").to_string();
        assert!(e.contains("part 2") && e.contains("the trace has no records"), "{e}");
    }

    #[test]
    fn phases_follow_each_other_and_repeat() {
        // A 64 KiB random walk for 10 000 instructions, then a 64 MiB one for 10 000, then again.
        let mut p = Phases::open("phases:random:footprint_bytes=65536@10000+random:footprint_bytes=67108864@10000", 1).unwrap();
        let base = super::super::profile::VIRTUAL_BASE;
        let far = |a: u64| a >= base + 65536;
        let first = instructions_until_read_of(&mut p, far, 100_000).unwrap();
        assert!((10_000..10_100).contains(&first), "the second phase starts after 10 000 instructions: {first}");
        let near = |a: u64| a < base + 65536;
        let mut second = 0;
        // After 10 000 more, the first phase is back (the wide walk hits the first 64 KiB rarely).
        while second < 10_000 {
            second += p.next_record().unwrap().unwrap().instructions();
        }
        let mut near_reads = 0;
        for _ in 0..100 {
            near_reads += near(p.next_record().unwrap().unwrap().read) as u32;
        }
        assert!(near_reads >= 95, "{near_reads}");
        p.rewind().unwrap();
        assert_eq!(instructions_until_read_of(&mut p, far, 100_000), Some(first));
        assert_eq!(p.footprint(), Some((base, base + 65536)));
    }

    #[test]
    fn bad_phases_name_the_part() {
        for (spec, needle) in [
            ("phases:stream+light", "part 1 ('stream')"),
            ("phases:stream@x+light", "'x' is not a number"),
            ("phases:stream@0+light", "at least 1 instruction"),
            ("phases:stream@5+nosuch", "part 2 ('nosuch')"),
            ("phases:stream@5+phases:light", "do not nest"),
            ("phases:", "part 1"),
        ] {
            let e = Phases::open(spec, 1).err().unwrap_or_else(|| panic!("{spec} accepted")).to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
