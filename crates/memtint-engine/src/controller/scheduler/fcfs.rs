//! FCFS: the oldest request with an issuable command goes first; row hits get no priority.

use super::{Candidate, Scheduler};
use crate::Cycle;

pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn select(&mut self, _now: Cycle, _ready: &[Candidate]) -> usize {
        0
    }
}
