//! TEMPORARY stand-in until the trace readers land.
use super::{DramRequest, TraceSource};
use crate::error::{Error, Result};
use std::path::Path;
#[derive(Clone, Copy, Debug, PartialEq, Eq)] pub enum DramTraceFormat { Ramulator, DramSim3 }
impl DramTraceFormat { pub fn from_name(n: &str) -> Result<Self> { match n { "ramulator" => Ok(Self::Ramulator), "dramsim3" => Ok(Self::DramSim3), _ => Err(Error::unknown("trace format", n, ["ramulator", "dramsim3"])) } } }
pub struct DramTraceReader;
impl DramTraceReader { pub fn open(p: &Path, _f: DramTraceFormat) -> Result<Self> { Err(Error::config(p.display().to_string(), "not yet")) } }
impl TraceSource for DramTraceReader { fn next_request(&mut self) -> Result<Option<DramRequest>> { Ok(None) } }
