//! What the OS model reads each epoch of a dynamic policy: the performance counters a Linux
//! daemon would sample (per-core LLC misses and write-backs, as perf's `LLC-load-misses` and
//! the uncore's write counts; per-channel traffic, as the memory controller's CAS counts) and
//! the process sizes the kernel keeps (resident pages, `VmRSS`; pages touched so far including
//! those in swap, the simulator's stand-in for BPM's VMA-sum RNP, which counts every page a
//! process has mapped rather than reserved address space).
//!
//! Counts are over the epoch just ended; sizes are at its end.

use serde::Serialize;

/// One process over an epoch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProcessMonitor {
    /// Demand LLC accesses and misses of its threads.
    pub llc_accesses: u64,
    pub llc_misses: u64,
    /// Lines its threads read from DRAM: their demand misses' and their prefetchers' (which
    /// `llc_misses` leaves out), not page copies'; as Nehalem's
    /// `OFFCORE_RESPONSE.ANY_DATA.LOCAL_DRAM` counts a core's demand and L2-prefetch reads.
    pub dram_reads: u64,
    /// Its dirty lines written back to DRAM (not the writes of page copies or swap-ins).
    pub writebacks: u64,
    /// Bytes its threads moved to and from DRAM (reads and writes, page copies' included).
    pub dram_bytes: u64,
    /// Instructions its threads retired (for MPKI).
    pub instructions: u64,
    /// Pages mapped now (resident).
    pub resident_pages: u64,
    /// Pages touched so far: resident plus swapped out (RNP).
    pub touched_pages: u64,
    /// Major faults on swapped-out pages.
    pub swap_ins: u64,
    /// Its threads, and the ns they spent stalled in the kernel (faults, page copies,
    /// shootdowns) over the epoch, summed: what `schedstat`'s system time would show.
    pub threads: u32,
    pub kernel_ns: f64,
}

/// The monitors at the end of an epoch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Monitors {
    /// When the epoch ended, and how long it was, ns of simulated time.
    pub now_ns: f64,
    pub epoch_ns: f64,
    pub processes: Vec<ProcessMonitor>,
    /// Bytes each channel carried (reads and writes), channel ids as `ColourBits` numbers them.
    pub channel_bytes: Vec<u64>,
    /// One channel's peak bandwidth, GB/s.
    pub channel_peak_gbps: f64,
    /// Bytes of one LLC miss (a line).
    pub line_bytes: u64,
    /// The LLC's capacity in pages (0 without an LLC): HVR's NPC.
    pub llc_pages: u64,
}
