//! FCFS: the oldest request with an issuable command goes first; row hits get no priority.

use super::{Candidate, Scheduler};

pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn key(&self, c: &Candidate) -> u64 {
        c.seq
    }
}
