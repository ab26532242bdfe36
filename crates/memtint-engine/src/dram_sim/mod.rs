//! DRAM-trace simulation: a workload (trace file or generator) feeds the memory system either
//! closed-loop (a fixed number of requests in flight) or timestamped (each request at its
//! cycle). Time jumps from event to event; `cycle_by_cycle` visits every cycle instead, and the
//! two give identical results. With `check`, every issued command goes through the
//! independent `TimingChecker`.

mod books;
pub mod drampower;
pub mod report;
mod routing;

pub(crate) use books::Books;
pub use books::{timing_checker, DramSimOptions, RunTotals, VIOLATION_EXAMPLES};

use crate::config::{MachineConfig, MachineSource, MemoryConfig};
use crate::controller::LaneSettings;
use crate::error::{Error, Result};
use crate::memory_system::MemorySystem;
use crate::trace::{DramTraceFormat, DramTraceReader, GeneratorSpec, RequestGenerator, TraceSource};
use crate::vector_isa::VectorIsa;
use report as dram_report;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A DRAM-level run, as the CLI and the Python API describe it (JSON; docs/stats.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramRunSpec {
    /// Machine preset name, path to a machine TOML, or a machine table (the TOML schema).
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    #[serde(default)]
    pub row_policy: Option<String>,
    #[serde(default)]
    pub refresh: Option<String>,
    /// Partial machine table: `{"dram": {...}, "controller": {...}}`.
    #[serde(default)]
    pub overrides: Option<serde_json::Value>,
    pub workload: WorkloadSpec,
    /// Requests in flight of an untimed workload (default 32); a timed trace's arrivals set them.
    #[serde(default)]
    pub outstanding: Option<usize>,
    #[serde(default)]
    pub check: bool,
    #[serde(default)]
    pub cycle_by_cycle: bool,
    /// Attribute request i to source i mod `sources` (for application-aware schedulers).
    #[serde(default = "one_source")]
    pub sources: u32,
    /// The driver loop's instruction-set level (`vector_isa.rs`): "best" (the default),
    /// "baseline", "x86-64-v2" or "x86-64-v3". Results are the same at every level.
    #[serde(default)]
    pub vector_isa: Option<String>,
    /// Write the run's commands and device in DRAMPower's formats into this directory
    /// (`drampower.rs`: `memspec.json`, `config.json`, `trace-ch<N>.csv`), to check the energy.
    #[serde(default)]
    pub export_drampower: Option<PathBuf>,
}

const DEFAULT_OUTSTANDING: usize = 32;

fn one_source() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkloadSpec {
    Trace(TraceSpec),
    Generate(GeneratorSpec),
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub path: PathBuf,
    #[serde(default = "default_format")]
    pub format: String,
}

fn default_format() -> String {
    "ramulator".into()
}

impl DramRunSpec {
    /// The machine with this run's overrides applied.
    pub fn machine_config(&self) -> Result<MachineConfig> {
        let mut m = self.machine.load_with(self.overrides.as_ref(), self.mapping.as_deref(), self.scheduler.as_deref())?;
        if let Some(v) = &self.row_policy {
            m.controller.row_policy = v.clone();
        }
        if let Some(v) = &self.refresh {
            m.controller.refresh = v.clone();
        }
        Ok(m)
    }
}

/// Open the workload a spec names.
pub fn open_workload(spec: &WorkloadSpec, cfg: &MemoryConfig) -> Result<(Box<dyn TraceSource + Send>, bool)> {
    Ok(match spec {
        WorkloadSpec::Trace(t) => {
            let format = DramTraceFormat::from_name(&t.format)?;
            (Box::new(DramTraceReader::open(&t.path, format)?.with_capacity(cfg.org.capacity_bytes())), format.is_timed())
        }
        WorkloadSpec::Generate(g) => {
            let mapping = cfg.mapping.clone();
            let encode = Box::new(move |d: &crate::dram::DramAddress| mapping.encode(d));
            (Box::new(RequestGenerator::new(g, &cfg.org, encode)?), false)
        }
    })
}

/// Simulate `source` on a fresh memory system. Returns the memory system (for its counters)
/// and the run totals.
pub fn simulate(
    cfg: &MemoryConfig,
    source: &mut dyn TraceSource,
    timestamped: bool,
    opts: DramSimOptions,
) -> Result<(MemorySystem, RunTotals)> {
    if opts.outstanding == 0 {
        return Err(Error::config("outstanding", "must be at least 1"));
    }
    if let Some(t) = &cfg.topology {
        return Err(Error::config(
            "machine",
            format!(
                "'{}' has {} nodes; a DRAM-trace run drives one memory: run a node's own machine, or a CPU-trace run (memtint sim)",
                cfg.machine.name,
                t.memories.len()
            ),
        ));
    }
    let isa = opts.isa.map_or(Ok(VectorIsa::best()), VectorIsa::checked)?;
    let started = std::time::Instant::now();
    let mut mem = MemorySystem::with_lane_settings(cfg, LaneSettings { isa, ..LaneSettings::default() })?;
    let record = opts.check || opts.keep_commands;
    mem.record_commands(record);
    let mut books = Books {
        checker: opts.check.then(|| timing_checker(cfg)),
        totals: RunTotals { timestamped, ..RunTotals::default() },
        commands: Vec::new(),
        completed: Vec::new(),
        opts,
    };
    books.totals.vector_isa = routing::vector_isa(&mem, timestamped, opts.cycle_by_cycle, record);
    let (now, entered) = routing::run(&mut mem, source, &mut books, timestamped)?;
    mem.finish(now);
    let Books { checker, mut totals, completed, .. } = books;
    totals.dram_cycles = now;
    if opts.check && (completed.len() as u64 != entered || completed.iter().any(|c| !c)) {
        return Err(Error::Violation(format!("{} requests entered but not all completed", entered)));
    }
    if let Some(c) = &checker {
        totals.commands_checked = c.commands_checked();
        totals.violations = c.violation_count();
        totals.violation_examples = c.violation_examples(VIOLATION_EXAMPLES);
    }
    totals.wall_seconds = started.elapsed().as_secs_f64();
    Ok((mem, totals))
}

/// Run a spec end to end and return the statistics as JSON (the documented schema).
pub fn run(spec: &DramRunSpec) -> Result<serde_json::Value> {
    let machine = spec.machine_config()?;
    let cfg = MemoryConfig::resolve(&machine)?;
    let (mut source, timestamped) = open_workload(&spec.workload, &cfg)?;
    if spec.sources == 0 {
        return Err(Error::config("sources", "must be at least 1"));
    }
    // Checked before the run: a device DRAMPower cannot model, or files it would replace. A
    // directory made for the export is removed again if the run fails (when still empty).
    let made = spec.export_drampower.as_ref().filter(|dir| !dir.exists());
    if let Some(dir) = &spec.export_drampower {
        drampower::check(&cfg)?;
        drampower::prepare_dir(dir, &cfg)?;
    }
    let result = run_prepared(spec, &cfg, source.as_mut(), timestamped);
    if let (Err(_), Some(dir)) = (&result, made) {
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// `run` once the workload is open and the export's directory is ready.
fn run_prepared(
    spec: &DramRunSpec,
    cfg: &MemoryConfig,
    source: &mut (dyn TraceSource + Send),
    timestamped: bool,
) -> Result<serde_json::Value> {
    let opts = DramSimOptions {
        check: spec.check,
        keep_commands: spec.export_drampower.is_some(),
        cycle_by_cycle: spec.cycle_by_cycle,
        sources: spec.sources,
        isa: spec.vector_isa.as_deref().map(VectorIsa::from_name).transpose()?,
        ..DramSimOptions::new(spec.outstanding.unwrap_or(DEFAULT_OUTSTANDING))
    };
    let (mem, totals) = simulate(cfg, source, timestamped, opts)?;
    if totals.requests == 0 {
        if let WorkloadSpec::Trace(t) = &spec.workload {
            return Err(Error::empty_trace("workload", &t.path.display().to_string(), "requests"));
        }
    }
    let mut stats = dram_report::report(cfg, &mem, &totals, opts);
    if let Some(w) = stats["warnings"].as_array_mut() {
        w.extend(source.warnings().into_iter().map(serde_json::Value::from));
        if timestamped && spec.outstanding.is_some() {
            w.push(
                "outstanding is set but the trace is timed: each request arrives at its cycle, so nothing limits requests in flight".into(),
            );
        }
    }
    // The workload as given, so the statistics say how to reproduce them.
    stats["config"]["workload"] = serde_json::to_value(&spec.workload).expect("workload serialises");
    if let Some(dir) = &spec.export_drampower {
        let files = drampower::write(dir, cfg, &totals.commands, totals.dram_cycles)?;
        stats["drampower_export"] = serde_json::json!({"dir": dir, "files": files});
    }
    Ok(stats)
}

/// `run` with a JSON spec in and JSON statistics out (the Python extension's entry point).
pub fn run_json(spec: &str) -> Result<String> {
    let spec: DramRunSpec = crate::error::from_json(spec, "run spec")?;
    Ok(run(&spec)?.to_string())
}
