//! CPU-level workloads: what one core executes, as a stream of trace records. Sources are
//! Ramulator CPU-trace text (`cpu_trace`), memtint's binary `.mtt` traces (`binary_trace`) and
//! built-in synthetic profiles (`profile`), and programs in phases of those (`phases`); `open`
//! picks one from a string, `trace_stats` counts
//! a trace in one pass.

pub mod binary_trace;
pub mod cpu_trace;
pub mod open;
pub mod phases;
pub mod profile;
pub mod reuse_distance;
pub mod trace_stats;

pub use binary_trace::{convert, BinaryTraceReader, BinaryTraceWriter, MttHeader};
pub use cpu_trace::CpuTraceReader;
pub use open::open_cpu_workload;
pub use profile::{Profile, ProfileGenerator, ProfileOverrides, ProfileParams};
pub use reuse_distance::{ReuseDistance, ReuseSummary};
pub use trace_stats::{trace_stats, TraceStats};

use crate::error::Result;

/// One trace record: `bubbles` non-memory instructions, then one memory instruction (a load of
/// `read`), and optionally a dirty-line writeback address (not an instruction).
///
/// Addresses are virtual byte addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuRecord {
    pub bubbles: u32,
    pub read: u64,
    pub writeback: Option<u64>,
}

impl CpuRecord {
    /// Instructions this record stands for: the bubbles plus the load (as Ramulator counts them).
    #[inline]
    pub fn instructions(&self) -> u64 {
        self.bubbles as u64 + 1
    }
}

/// A core's instruction stream. `Ok(None)` marks the end; errors carry file, line and reason.
pub trait CpuTraceSource: Send {
    fn next_record(&mut self) -> Result<Option<CpuRecord>>;
    /// The next records into `out`, in order, until `out` is full or they hold `budget`
    /// instructions or more (the last may pass it); returns how many. Fewer than would fit only at
    /// the trace's end (none: at its end). A functional pass reads a batch a call, not a record.
    fn next_records(&mut self, out: &mut [CpuRecord], budget: u64) -> Result<usize> {
        let (mut n, mut instructions) = (0, 0);
        while n < out.len() && instructions < budget {
            let Some(r) = self.next_record()? else { break };
            out[n] = r;
            n += 1;
            instructions += r.instructions();
        }
        Ok(n)
    }
    /// Start again from the beginning (traces that end early wrap around).
    fn rewind(&mut self) -> Result<()>;
    /// What the records come from (a path or a profile), for messages and statistics.
    fn name(&self) -> &str;
    /// The virtual byte range `[start, end)` the program's data occupies, when known (synthetic
    /// profiles). The multicore driver maps it, page by page in ascending order, before the
    /// measured run (`os.populate`): a program in its steady state has long since faulted its
    /// data in, in the order its initialisation touched it.
    fn footprint(&self) -> Option<(u64, u64)> {
        None
    }
}

/// Records held in memory (tests, and API users who build a workload in code).
#[derive(Clone, Debug)]
pub struct VecCpuSource {
    name: String,
    records: Vec<CpuRecord>,
    next: usize,
}

impl VecCpuSource {
    pub fn new(name: impl Into<String>, records: Vec<CpuRecord>) -> Self {
        VecCpuSource { name: name.into(), records, next: 0 }
    }
}

impl CpuTraceSource for VecCpuSource {
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        let r = self.records.get(self.next).copied();
        self.next += r.is_some() as usize;
        Ok(r)
    }

    fn rewind(&mut self) -> Result<()> {
        self.next = 0;
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Where the SPEC CPU2006 traces used by tests live: `$MEMTINT_SPEC_TRACES`, else
/// `../shared/traces/spec2006` relative to the workspace root. `None` (with a note printed) when
/// absent, so tests that need them skip.
#[cfg(test)]
pub(crate) fn spec_traces_dir() -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("MEMTINT_SPEC_TRACES") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/spec2006"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("note: SPEC traces not found at {}; skipping (set MEMTINT_SPEC_TRACES)", dir.display());
        None
    }
}

/// Reads a source to its end.
#[cfg(test)]
pub(crate) fn collect(source: &mut (impl CpuTraceSource + ?Sized)) -> Result<Vec<CpuRecord>> {
    let mut out = Vec::new();
    while let Some(r) = source.next_record()? {
        out.push(r);
    }
    Ok(out)
}

/// `trace_stats` with JSON in (`{"workload": "path-or-profile", "instructions": N?, "seed": S?}`)
/// and out (the Python extension's entry point).
pub fn trace_stats_json(request: &str) -> crate::error::Result<String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Req {
        workload: String,
        #[serde(default)]
        instructions: Option<u64>,
        #[serde(default)]
        seed: Option<u64>,
        /// Also the reuse-distance distribution (costs a hash lookup and a tree walk per record).
        #[serde(default)]
        reuse: bool,
    }
    let r: Req = crate::error::from_json(request, "trace stats")?;
    let mut source = open_cpu_workload(&r.workload, r.seed.unwrap_or(1))?;
    let generated = open::is_generated(&r.workload);
    if r.instructions.is_none() && generated {
        return Err(crate::error::Error::config("instructions", "a generated program never ends: give an instruction limit"));
    }
    // An empty trace file is refused as `sim` and `dram` refuse it (an instruction limit of 0 reads
    // nothing); a generated program with no access in a short window is a light one, not an empty file.
    let empty = |stats: &TraceStats| stats.records == 0 && r.instructions != Some(0) && !generated;
    if !r.reuse {
        let stats = trace_stats(source.as_mut(), r.instructions)?;
        if empty(&stats) {
            return Err(crate::error::Error::empty_trace("workload", source.name(), "records"));
        }
        return Ok(serde_json::to_string(&stats).expect("trace stats serialise"));
    }
    let (stats, reuse) = trace_stats::trace_stats_with_reuse(source.as_mut(), r.instructions)?;
    if empty(&stats) {
        return Err(crate::error::Error::empty_trace("workload", source.name(), "records"));
    }
    let mut v = serde_json::to_value(&stats).expect("trace stats serialise");
    v["reuse"] = serde_json::to_value(&reuse).expect("reuse summary serialises");
    Ok(v.to_string())
}

/// `convert` with JSON in (`{"input": path, "output": path, "to": "mtt" | "ramulator"}`, `to`
/// defaulting to `mtt`) and the written counts out.
pub fn convert_json(request: &str) -> crate::error::Result<String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Req {
        input: std::path::PathBuf,
        output: std::path::PathBuf,
        #[serde(default)]
        to: Option<String>,
    }
    let r: Req = crate::error::from_json(request, "convert")?;
    let h = match r.to.as_deref().unwrap_or("mtt") {
        "mtt" => convert(&r.input, &r.output)?,
        "ramulator" => binary_trace::convert_to_text(&r.input, &r.output)?,
        other => return Err(crate::error::Error::config("convert.to", format!("unknown format '{other}' (expected mtt or ramulator)"))),
    };
    Ok(serde_json::json!({
        "records": h.records, "instructions": h.instructions, "writebacks": h.writebacks, "gzip_body": h.gzip_body,
    })
    .to_string())
}
