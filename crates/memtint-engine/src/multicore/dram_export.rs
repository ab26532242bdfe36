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
    /// Gzip-compress the file (`memtint sim --export-dram x.dramsim3.gz`); every reader of DRAM
    /// traces takes gzip by its content.
    #[serde(default)]
    pub gzip: bool,
}

/// Where the lines go: the file, or a gzip stream into it.
enum Sink {
    Plain(File),
    Gzip(flate2::write::GzEncoder<File>),
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(f) => f.write(b),
            Sink::Gzip(g) => g.write(b),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(f) => f.flush(),
            Sink::Gzip(g) => g.flush(),
        }
    }
}

fn default_format() -> String {
    DramTraceFormat::DramSim3.name().to_string()
}

/// An open export: one line per request, buffered.
pub struct DramExport {
    out: BufWriter<Sink>,
    format: DramTraceFormat,
    path: String,
    /// Requests written.
    pub requests: u64,
}

impl DramExport {
    pub fn create(spec: &DramExportSpec) -> Result<Self> {
        let format = DramTraceFormat::from_name(&spec.format).map_err(|e| Error::config("export_dram.format", e.to_string()))?;
        let file = File::create(&spec.path).map_err(|e| Error::config("export_dram.path", format!("{}: cannot create: {e}", spec.path)))?;
        let sink = if spec.gzip { Sink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::fast())) } else { Sink::Plain(file) };
        Ok(DramExport { out: BufWriter::with_capacity(1 << 16, sink), format, path: spec.path.clone(), requests: 0 })
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
        let (requests, path) = (self.requests, std::mem::take(&mut self.path));
        let error = |e: std::io::Error| Error::config("export_dram.path", format!("{path}: cannot write: {e}"));
        match self.out.into_inner().map_err(|e| error(e.into_error()))? {
            Sink::Gzip(g) => g.finish().map(drop).map_err(error)?,
            Sink::Plain(_) => {}
        }
        Ok(requests)
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::config("export_dram.path", format!("{}: cannot write: {e}", self.path))
    }
}
