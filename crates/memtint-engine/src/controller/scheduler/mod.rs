//! Schedulers decide which ready command issues. One file each; registered in `build` below.

mod fcfs;
mod fr_fcfs;
mod fr_fcfs_cap;

pub use fcfs::Fcfs;
pub use fr_fcfs::FrFcfs;
pub use fr_fcfs_cap::FrFcfsCap;

use crate::config::ControllerConfig;
use crate::dram::Command;
use crate::error::{Error, Result};
use crate::Cycle;

/// A command that could issue now on behalf of one queued request.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// Position in the active queue (0 = oldest).
    pub index: usize,
    pub command: Command,
    /// True for a column command to the open row (a row hit).
    pub is_hit: bool,
    pub flat_bank: u32,
    pub arrival: Cycle,
    pub source: u32,
}

pub trait Scheduler: Send {
    fn name(&self) -> &'static str;

    /// Pick one of `ready` (all issuable now, in arrival order); returns its position in `ready`.
    fn select(&mut self, now: Cycle, ready: &[Candidate]) -> usize;

    /// May a bank whose open row still has queued hits be precharged for an older conflicting
    /// request? Schedulers that prefer hits say no, so a row is not closed under its hits.
    fn may_close_row_with_hits(&self, _hits_since_act: u32) -> bool {
        true
    }

    /// Does this row hit keep its hit priority? (FR-FCFS-Cap withdraws it after the cap.)
    fn hit_counts_as_hit(&self, _hits_since_act: u32) -> bool {
        true
    }

    fn on_issue(&mut self, _now: Cycle, _chosen: &Candidate) {}
}

/// Registered schedulers, by name.
pub const NAMES: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];

pub fn build(name: &str, cfg: &ControllerConfig) -> Result<Box<dyn Scheduler>> {
    Ok(match name {
        "fcfs" => Box::new(Fcfs),
        "fr-fcfs" => Box::new(FrFcfs),
        "fr-fcfs-cap" => Box::new(FrFcfsCap::new(cfg.frfcfs_cap)),
        _ => return Err(Error::unknown("scheduler", name, NAMES.iter().copied())),
    })
}
