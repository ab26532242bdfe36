//! Who gets a shared cache's free MSHR entry when several threads are waiting for one.
//!
//! The multicore driver steps the threads of one core cycle in core order, and every thread
//! refused by a full MSHR file retries at the same memory event; left alone, the lowest-numbered
//! thread takes each freed entry and the highest-numbered ones can starve for good (16 streaming
//! threads on 64 LLC MSHRs never finish). `Fifo` serves refused threads in the order they were
//! first refused, as gem5's crossbar retries its waiting ports (`BaseXBar::Layer`, a FIFO of
//! ports told to retry): a thread may allocate only while more entries are free than there are
//! live waiters ahead of it. `CoreOrder` keeps the first-come rule, for comparison.
//!
//! A waiter that stops retrying (its thread was descheduled or finished) would block the queue,
//! so one not refused again within `STALE_CYCLES` core cycles is dropped: live waiters retry at
//! every memory event, which comes within a few hundred cycles while entries are outstanding.

use crate::Cycle;
use serde::{Deserialize, Serialize};

/// The arbitration rule, `[llc] mshr_arbitration`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MshrArbitration {
    /// Refused threads are served oldest first (default).
    #[default]
    Fifo,
    /// The first thread to retry takes the entry: core order within a cycle.
    CoreOrder,
}

/// A waiter not refused again within this many core cycles is no longer waiting.
const STALE_CYCLES: u64 = 10_000;

#[derive(Debug, Default)]
pub struct MshrArbiter {
    rule: MshrArbitration,
    /// (thread, core cycle of its latest refusal), oldest first refusal first.
    waiting: Vec<(u32, u64)>,
}

impl MshrArbiter {
    pub fn new(rule: MshrArbitration) -> Self {
        MshrArbiter { rule, waiting: Vec::new() }
    }

    /// Threads waiting for an entry (after dropping stale ones at the last decision).
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// May `tid` take one of `free` entries at core cycle `now`? A refusal queues it.
    pub fn may_allocate(&mut self, tid: u32, free: usize, now: Cycle) -> bool {
        if self.rule == MshrArbitration::CoreOrder {
            return free > 0;
        }
        if self.waiting.is_empty() && free > 0 {
            return true;
        }
        self.waiting.retain(|&(_, at)| at + STALE_CYCLES >= now);
        let ahead = self.waiting.iter().position(|&(t, _)| t == tid);
        let rank = ahead.unwrap_or(self.waiting.len());
        if free > rank {
            if let Some(i) = ahead {
                self.waiting.remove(i);
            }
            return true;
        }
        match ahead {
            Some(i) => self.waiting[i].1 = now,
            None => self.waiting.push((tid, now)),
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_entries_go_to_the_oldest_waiter_not_the_lowest_thread() {
        let mut a = MshrArbiter::new(MshrArbitration::Fifo);
        assert!(a.may_allocate(0, 1, 0), "no contention: free entries are taken");
        assert!(!a.may_allocate(5, 0, 1));
        assert!(!a.may_allocate(0, 0, 1));
        assert_eq!(a.waiting(), 2);
        // One entry frees: thread 0 retries first in core order but thread 5 waited longer.
        assert!(!a.may_allocate(0, 1, 2));
        assert!(a.may_allocate(5, 1, 2));
        assert!(a.may_allocate(0, 1, 2), "now at the head");
        assert_eq!(a.waiting(), 0);
    }

    #[test]
    fn core_order_lets_the_first_retry_win() {
        let mut a = MshrArbiter::new(MshrArbitration::CoreOrder);
        assert!(!a.may_allocate(5, 0, 1));
        assert!(a.may_allocate(0, 1, 2));
        assert_eq!(a.waiting(), 0, "nothing is queued");
    }

    #[test]
    fn a_waiter_that_stops_retrying_does_not_block_the_queue() {
        let mut a = MshrArbiter::new(MshrArbitration::Fifo);
        assert!(!a.may_allocate(3, 0, 100));
        assert!(!a.may_allocate(1, 1, 200), "3 is ahead and still live");
        assert!(a.may_allocate(1, 1, 100 + STALE_CYCLES + 1), "3 went quiet: dropped");
    }

    #[test]
    fn with_several_entries_free_the_first_waiters_each_get_one() {
        let mut a = MshrArbiter::new(MshrArbitration::Fifo);
        for t in [7, 2, 9] {
            assert!(!a.may_allocate(t, 0, 0));
        }
        assert!(a.may_allocate(2, 2, 1), "second in line, two free");
        assert!(!a.may_allocate(9, 1, 1), "third in line, one free left for 7");
        assert!(a.may_allocate(7, 1, 1));
        assert!(a.may_allocate(9, 1, 1));
    }
}
