//! FCFS: the oldest request with an issuable command goes first; row hits get no priority.

use super::{AgeOrder, Candidate, Scheduler};

pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn key(&self, c: &Candidate) -> u64 {
        AgeOrder::Fcfs.key(c)
    }
    fn age_order(&self) -> Option<AgeOrder> {
        Some(AgeOrder::Fcfs)
    }
}
