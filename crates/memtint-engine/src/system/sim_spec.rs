//! A multi-programmed run as the CLI and the Python API describe it (JSON or TOML; the
//! statistics schema is in docs/stats.md, "CPU-trace runs"), and its statistics.

use super::multicore_sim::{simulate_multicore, MulticoreResult};
use crate::config::{MachineConfig, MachineSource, MemoryConfig};
use crate::dram_sim::DramSimOptions;
use crate::error::{Error, Result};
use crate::os::OsConfig;
use crate::stats::dram_report;
use crate::workload::open_cpu_workload;
use serde::Deserialize;
use serde_json::{json, Value};

/// Version of the CPU-trace run schema; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Machine preset name, path to a machine TOML, or a machine table (the TOML schema).
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Partial machine table (`{"cpu": {...}, "cache": {...}, "controller": {...}}`).
    #[serde(default)]
    pub overrides: Option<Value>,
    /// One per core: a built-in profile (`stream`, `random:reads_pki=20`, ...) or a trace path.
    pub programs: Vec<String>,
    /// Instructions each core must retire.
    pub instructions: u64,
    /// The OS model: placement policy and its colours.
    #[serde(default)]
    pub os: OsConfig,
    /// Seed of the synthetic programs (program i uses seed + i) and, unless `os.seed` is set
    /// apart from its default, of the OS frame order.
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_seed() -> u64 {
    1
}

impl SimSpec {
    pub fn machine_config(&self) -> Result<MachineConfig> {
        self.machine.load_with(self.overrides.as_ref(), self.mapping.as_deref(), self.scheduler.as_deref())
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Run a spec and return its statistics.
pub fn run_sim(spec: &SimSpec) -> Result<Value> {
    let machine = spec.machine_config()?;
    let cfg = MemoryConfig::resolve(&machine)?;
    if spec.programs.is_empty() {
        return Err(Error::config("programs", "give at least one program (a profile name or a trace path)"));
    }
    let programs = spec
        .programs
        .iter()
        .enumerate()
        .map(|(i, p)| open_cpu_workload(p, spec.seed.wrapping_add(i as u64)))
        .collect::<Result<Vec<_>>>()?;
    let mut os = spec.os.clone();
    if os.seed == OsConfig::default().seed {
        os.seed = spec.seed;
    }
    let result = simulate_multicore(&cfg, &os, programs, spec.instructions)?;
    Ok(report(&cfg, spec, &os, &result))
}

/// `run_sim` with JSON in and out (the Python extension's entry point).
pub fn run_sim_json(spec: &str) -> Result<String> {
    let spec: SimSpec = serde_json::from_str(spec).map_err(|e| Error::config("sim spec", e.to_string()))?;
    Ok(run_sim(&spec)?.to_string())
}

fn report(cfg: &MemoryConfig, spec: &SimSpec, os: &OsConfig, r: &MulticoreResult) -> Value {
    let tck = cfg.timing.tCK_ns;
    let global_bank = |b: &u32| *b;
    let cores: Vec<Value> = r
        .cores
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = &c.memory;
            let lat = m.read_latency.summary();
            let lat_ns = lat.scaled(tck);
            json!({
                "core": i,
                "program": c.program,
                "instructions": c.core.retired,
                "cycles": c.core.cycles,
                "ipc": c.core.ipc(),
                "l2_hits": m.l2_hits,
                "llc_accesses": m.llc_accesses,
                "llc_misses": m.llc_misses,
                "llc_mpki": 1000.0 * ratio(m.llc_misses, c.core.retired),
                "dram_reads": m.dram_reads,
                "dram_writes": m.dram_writes,
                "row_hits": m.row_hits,
                "row_misses": m.row_misses,
                "row_conflicts": m.row_conflicts,
                "row_buffer_miss_rate": m.row_buffer_miss_rate(),
                "bank_level_parallelism": m.bank_parallelism.bank_level_parallelism(),
                "read_latency": lat,
                "read_latency_ns": lat_ns,
                "pages": c.placement.pages,
                "colour_overflow_pages": c.placement.colour_overflow_pages,
                "colours": c.placement.colours,
                "banks_used": c.placement.banks_used.len(),
                "channels_used": c.placement.channels_used.len(),
                "banks": c.placement.banks_used.iter().map(global_bank).collect::<Vec<_>>(),
                "channels": c.placement.channels_used,
                "core_stats": c.core,
            })
        })
        .collect();
    let (hits, all) = r.cores.iter().fold((0u64, 0u64), |(h, a), c| {
        let m = &c.memory;
        (h + m.row_hits, a + m.row_hits + m.row_misses + m.row_conflicts)
    });
    let instructions: u64 = r.cores.iter().map(|c| c.core.retired).sum();
    let wall = r.totals.wall_seconds.max(1e-9);
    let mut dram = dram_report::report(cfg, &r.memory, &r.totals, DramSimOptions::new(1));
    if let Some(o) = dram.as_object_mut() {
        o.remove("config");
        o.remove("schema_version");
    }
    json!({
        "schema_version": SCHEMA_VERSION,
        "kind": "sim",
        "policy": os.policy,
        "config": {
            "machine": cfg.machine.name,
            "mapping": cfg.mapping.name(),
            "scheduler": cfg.controller.scheduler,
            "row_policy": cfg.controller.row_policy,
            "programs": spec.programs,
            "instructions": spec.instructions,
            "seed": spec.seed,
            "os": os,
            "cpu": cfg.machine.cpu,
            "cache": cfg.machine.cache,
        },
        "cores": cores,
        "row_buffer_miss_rate": 1.0 - ratio(hits, all),
        "llc": r.llc.as_ref().map(|s| json!({
            "accesses": s.accesses, "hits": s.hits, "misses": s.misses, "writebacks": s.writebacks,
        })),
        "colours": r.colour_report,
        "dram": dram,
        "core_cycles": r.core_cycles,
        "dram_cycles": r.totals.dram_cycles,
        "simulated_ns": r.totals.dram_cycles as f64 * tck,
        "dram_requests": r.totals.requests,
        "wall_seconds": r.totals.wall_seconds,
        "requests_per_second": r.totals.requests as f64 / wall,
        "instructions_per_second": instructions as f64 / wall,
    })
}
