//! Swapping (`os.overflow = "swap"`): a process that faults when its colours (every colour,
//! under an uncoloured policy) have no free frame gives up one of its own resident pages there
//! instead of borrowing another process's colour. The page goes to swap (its lines are read
//! out of DRAM, its mapping removed, a TLB shootdown for the process's other threads); touching
//! it again is a major fault that stalls the thread `[os.swap] fault_ns` and writes the page
//! back into a frame. This is what static colour partitions do to a program whose footprint
//! outgrows its colours (BPM §2.8, §5.8), the case dynamic BPM exists to avoid.
//!
//! The victim is the process's oldest-mapped resident page in its own colours (FIFO, the order
//! pages were first mapped or swapped back in): Linux's LRU lists approximate this for the
//! streaming and random footprints traces have, and FIFO needs no access bits on the hot path.

use crate::error::{Error, Result};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[os.swap]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwapConfig {
    /// Stall of a major fault on a swapped-out page, ns: reading 4 KiB back from the swap
    /// device plus the kernel's fault path (default 50 µs, an NVMe SSD's read latency and
    /// the block layer; a disk's is milliseconds).
    pub fault_ns: f64,
}

impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig { fault_ns: 50_000.0 }
    }
}

impl SwapConfig {
    pub fn validate(&self) -> Result<()> {
        if !(self.fault_ns.is_finite() && (0.0..=1e12).contains(&self.fault_ns)) {
            return Err(Error::config("os.swap.fault_ns", format!("must be between 0 and 10^12 ns, got {}", self.fault_ns)));
        }
        Ok(())
    }
}

/// `os.overflow`: what a fault does when the process's colours are full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Take a frame of the least-used other colour (counted as `colour_overflow_pages`).
    Borrow,
    /// Swap one of the process's own pages out (this file).
    Swap,
}

impl Overflow {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "borrow" => Ok(Overflow::Borrow),
            "swap" => Ok(Overflow::Swap),
            _ => Err(Error::config("os.overflow", format!("unknown overflow '{name}'; choose borrow or swap"))),
        }
    }
}

/// One process's swapping.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProcessSwap {
    /// Pages swapped out, and major faults that brought one back.
    pub swap_outs: u64,
    pub swap_ins: u64,
    /// Pages in swap at the end.
    pub swapped: u64,
}

/// The swap state of every process.
pub struct Swap {
    /// Per process: its resident pages, oldest mapped first.
    resident: Vec<VecDeque<u64>>,
    /// Per process: its pages in swap.
    swapped: Vec<FxHashSet<u64>>,
    /// Per thread: the page its last fault mapped, `(pid, vpage)`. Its load waits out the fault
    /// (a major fault's `fault_ns`) and then uses it, so the page is not a victim meanwhile, as
    /// Linux's reclaim passes over a page locked for its swap-in and then just referenced.
    /// Without this, two threads of a process with no other resident page took each other's
    /// page during the stall, for ever.
    faulted: Vec<Option<(u32, u64)>>,
    pub stats: Vec<ProcessSwap>,
}

impl Swap {
    pub fn new(processes: u32) -> Self {
        let n = processes as usize;
        Swap {
            resident: vec![VecDeque::new(); n],
            swapped: vec![FxHashSet::default(); n],
            faulted: Vec::new(),
            stats: vec![ProcessSwap::default(); n],
        }
    }

    /// Thread `tid` of process `pid` mapped `vpage` in a fault; true if the page came back from
    /// swap (a major fault).
    pub fn mapped(&mut self, pid: u32, tid: u32, vpage: u64) -> bool {
        let p = pid as usize;
        self.resident[p].push_back(vpage);
        let t = tid as usize;
        if self.faulted.len() <= t {
            self.faulted.resize(t + 1, None);
        }
        self.faulted[t] = Some((pid, vpage));
        let back = self.swapped[p].remove(&vpage);
        if back {
            self.stats[p].swap_ins += 1;
            self.stats[p].swapped -= 1;
        }
        back
    }

    /// The oldest resident page of `pid` whose frame `fits` (looked up by `frame_of`) and that no
    /// thread's last fault mapped, taken off the resident list and put in swap; pages passed
    /// over keep their age order at the back. `None` if no resident page qualifies.
    pub fn evict(&mut self, pid: u32, frame_of: impl Fn(u64) -> Option<u32>, fits: impl Fn(u32) -> bool) -> Option<(u64, u32)> {
        let p = pid as usize;
        let queue = &mut self.resident[p];
        let faulted = &self.faulted;
        let in_use = |vpage: u64| faulted.iter().any(|&f| f == Some((pid, vpage)));
        for _ in 0..queue.len() {
            let vpage = queue.pop_front()?;
            match frame_of(vpage) {
                Some(frame) if fits(frame) && !in_use(vpage) => {
                    self.swapped[p].insert(vpage);
                    self.stats[p].swap_outs += 1;
                    self.stats[p].swapped += 1;
                    return Some((vpage, frame));
                }
                Some(_) => queue.push_back(vpage),
                None => {}
            }
        }
        None
    }

    /// Process `pid` exited: its resident list and its pages in swap go.
    pub fn forget(&mut self, pid: u32) {
        let p = pid as usize;
        self.resident[p].clear();
        self.swapped[p].clear();
        self.stats[p].swapped = 0;
    }

    /// Pages of `pid` in swap now.
    pub fn swapped_pages(&self, pid: u32) -> u64 {
        self.swapped.get(pid as usize).map_or(0, |s| s.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_fitting_page_goes_and_comes_back_as_a_major_fault() {
        let mut s = Swap::new(2);
        for v in [10, 11, 12, 15] {
            assert!(!s.mapped(0, 0, v));
        }
        // Frames: page v in frame v; only even frames fit.
        let evicted = s.evict(0, |v| Some(v as u32), |f| f % 2 == 0);
        assert_eq!(evicted, Some((10, 10)));
        let evicted = s.evict(0, |v| Some(v as u32), |f| f % 2 == 0);
        assert_eq!(evicted, Some((12, 12)), "11 does not fit and is passed over");
        assert_eq!(s.evict(0, |v| Some(v as u32), |f| f % 2 == 0), None, "only 11 and 15 are left");
        assert_eq!(s.swapped_pages(0), 2);
        assert!(s.mapped(0, 0, 12));
        assert!(!s.mapped(0, 0, 13));
        assert_eq!(s.stats[0], ProcessSwap { swap_outs: 2, swap_ins: 1, swapped: 1 });
        assert_eq!(s.stats[1], ProcessSwap::default());
        assert!(Overflow::from_name("spill").unwrap_err().to_string().contains("os.overflow"));
    }

    /// The page a thread's fault just mapped is not a victim while its load waits on it: two
    /// threads of a process whose only resident pages are theirs no longer take each other's.
    #[test]
    fn a_page_a_thread_just_faulted_in_stays() {
        let mut s = Swap::new(2);
        assert!(!s.mapped(0, 0, 10));
        assert!(!s.mapped(0, 1, 11));
        assert_eq!(s.evict(0, |v| Some(v as u32), |_| true), None, "both are a thread's last fault");
        assert!(!s.mapped(0, 0, 12));
        assert_eq!(s.evict(0, |v| Some(v as u32), |_| true), Some((10, 10)), "thread 0 has moved on to 12");
        assert!(!s.mapped(1, 1, 20));
        assert_eq!(s.evict(0, |v| Some(v as u32), |_| true), Some((11, 11)), "thread 1's last fault is now in process 1");
    }
}
