//! The DRAM request stream of a multicore run, written as it is generated: each request that
//! enters a memory controller, with its physical address, read or write (write-backs are
//! writes), and the DRAM cycle it entered. Formats are those `memtint dram --trace` reads:
//! DRAMSim3's `0xADDR READ|WRITE CYCLE` and DRAMSim2's `0xADDR P_MEM_RD|P_MEM_WR CYCLE` (timed: a
//! replay gives every request the cycle it had here), Ramulator's `0xADDR R|W` and Ramulator 2's
//! LoadStoreTrace `LD|ST 0xADDR` (untimed: a replay issues as fast as the queues allow).

use crate::error::{Error, Result};
use crate::trace::DramTraceFormat;
use crate::Cycle;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Write};

/// `export_dram` of a run specification.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramExportSpec {
    /// The file written (created or replaced).
    pub path: String,
    /// `dramsim3` (default), `ramulator`, `ramulator2` or `dramsim2`.
    #[serde(default = "default_format")]
    pub format: String,
}

fn default_format() -> String {
    DramTraceFormat::DramSim3.name().to_string()
}

/// An open export: one line per request, buffered.
pub struct DramExport {
    out: BufWriter<File>,
    format: DramTraceFormat,
    path: String,
    /// Requests written.
    pub requests: u64,
}

impl DramExport {
    pub fn create(spec: &DramExportSpec) -> Result<Self> {
        let format = DramTraceFormat::from_name(&spec.format).map_err(|e| Error::config("export_dram.format", e.to_string()))?;
        let file = File::create(&spec.path).map_err(|e| Error::config("export_dram.path", format!("{}: cannot create: {e}", spec.path)))?;
        Ok(DramExport { out: BufWriter::with_capacity(1 << 16, file), format, path: spec.path.clone(), requests: 0 })
    }

    #[inline]
    pub fn record(&mut self, addr: u64, is_write: bool, cycle: Cycle) -> Result<()> {
        self.requests += 1;
        let written = match self.format {
            DramTraceFormat::DramSim3 => writeln!(self.out, "0x{addr:X} {} {cycle}", if is_write { "WRITE" } else { "READ" }),
            DramTraceFormat::Ramulator => writeln!(self.out, "0x{addr:x} {}", if is_write { "W" } else { "R" }),
            DramTraceFormat::Ramulator2 => writeln!(self.out, "{} 0x{addr:x}", if is_write { "ST" } else { "LD" }),
            DramTraceFormat::DramSim2 => writeln!(self.out, "0x{addr:X} {} {cycle}", if is_write { "P_MEM_WR" } else { "P_MEM_RD" }),
        };
        written.map_err(|e| self.error(e))
    }

    pub fn finish(mut self) -> Result<u64> {
        self.out.flush().map_err(|e| self.error(e))?;
        Ok(self.requests)
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::config("export_dram.path", format!("{}: cannot write: {e}", self.path))
    }
}
