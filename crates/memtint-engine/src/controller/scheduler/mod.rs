//! Schedulers decide which ready command issues. One file each; registered in `build` below.
//!
//! A scheduler ranks candidates by a key (smaller wins). The controller evaluates, per bank, the
//! oldest request that hits the open row and the oldest that does not, and issues the ready
//! candidate with the smallest key, so a scheduler's key must prefer older requests within a
//! class of one bank (all keys below do; application-aware schedulers add a per-source rank in
//! the high bits).

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
    pub command: Command,
    /// True for a column command to the open row (a row hit).
    pub is_hit: bool,
    pub flat_bank: u32,
    pub arrival: Cycle,
    /// Arrival order at the controller (unique): smaller is older.
    pub seq: u64,
    pub source: u32,
}

/// Age part of a key: `seq` fits in 62 bits for any feasible run.
const AGE_BITS: u64 = (1 << 62) - 1;

/// Key of "hits first, then oldest first".
#[inline]
pub fn hit_first_key(c: &Candidate) -> u64 {
    ((!c.is_hit as u64) << 62) | (c.seq & AGE_BITS)
}

pub trait Scheduler: Send {
    fn name(&self) -> &'static str;

    /// Priority of a ready candidate: the smallest key issues. Must be unique per request
    /// (include `seq`) so the choice is deterministic.
    fn key(&self, c: &Candidate) -> u64;

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
