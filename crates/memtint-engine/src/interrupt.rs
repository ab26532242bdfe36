//! Stopping a run from outside it: Ctrl-C in a Python session, whose engine call runs with the
//! GIL released and would otherwise only return at the run's end. `request_stop` raises a flag
//! that the runs' loops read now and then (`check`: CPU-trace runs about every million core
//! cycles and every warm-up turn, DRAM-trace runs every 262,144 requests, real-time runs every
//! 4,096 turns of their loop, passes over a CPU trace's records (statistics, conversion) every
//! 262,144 records); they end with `Error::Interrupted`. The caller clears it once the runs it
//! stopped have returned.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::{Error, Result};

static STOP: AtomicBool = AtomicBool::new(false);

/// A pass over a trace's records checks when `records & RECORD_CHECK_MASK == 0`.
pub const RECORD_CHECK_MASK: u64 = (1 << 18) - 1;

/// Ask every run in progress to end at its next check.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Let runs go on again (after the stopped ones returned).
pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}

/// `Err(Error::Interrupted)` once a stop was requested.
#[inline]
pub fn check() -> Result<()> {
    if STOP.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

// Tested end to end from Python (tests/python/test_api.py), in a process of its own: a stop
// requested here would end the other unit tests running beside it.
