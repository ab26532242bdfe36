//! DRAM-trace simulation driver: closed-loop or timestamped injection, event skipping.

use crate::error::{Error, Result};

/// Run a DRAM-level simulation described by a JSON run specification (docs/stats.md) and
/// return its statistics as JSON.
pub fn run_json(spec: &str) -> Result<String> {
    let _ = spec;
    Err(Error::config("engine", "DRAM simulation not built yet"))
}
