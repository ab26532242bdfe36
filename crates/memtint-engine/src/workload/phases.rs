//! A program in phases: `phases:A@N+B@M+C` runs workload A for N instructions, then B for M,
//! then C for ever (or, when every part has a length, A again after the last: phases repeat).
//! Each part is any workload `open_cpu_workload` takes (a profile with parameters, a trace);
//! part k is seeded `seed + k`. Parts share the address space: profiles all start at the same
//! virtual base, so a later phase reuses (and grows) the earlier ones' pages, as a program
//! whose behaviour changes keeps its heap.

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
            let source = open_cpu_workload(program.trim(), seed.wrapping_add(k as u64)).map_err(|e| bad(k, e.to_string()))?;
            parts.push(Part { source, length });
        }
        Ok(Phases { name: format!("{PREFIX}{body}"), parts, current: 0, done: 0 })
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
            self.done += record.instructions();
            return Ok(Some(record));
        }
    }

    fn rewind(&mut self) -> Result<()> {
        self.current = 0;
        self.done = 0;
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

    fn instructions_until_read_of(source: &mut dyn CpuTraceSource, pred: impl Fn(u64) -> bool, limit: u64) -> Option<u64> {
        let mut n = 0;
        while n < limit {
            let r = source.next_record().unwrap()?;
            if pred(r.read) {
                return Some(n);
            }
            n += r.instructions();
        }
        None
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
