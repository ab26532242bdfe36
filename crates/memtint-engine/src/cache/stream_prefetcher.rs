//! A stream prefetcher after Intel's L2 streamer as the optimisation manual documents it: it
//! tracks up to `trackers` streams (one per 4 KB page, LRU-replaced), detects ascending or
//! descending accesses within the page, and once a direction is confirmed issues `degree`
//! prefetches per access, running up to `distance` lines ahead of the demand stream. It never
//! crosses the 4 KB page: frames are scattered (and coloured), so the next physical page is not
//! the program's next page.
//!
//! Simplifications (documented in docs/ARCHITECTURE.md): one stream per page, not a forward and
//! a backward one; a fixed distance rather than Intel's throttling by outstanding requests (the
//! hierarchy drops prefetches instead when MSHRs run short); trained on LLC demand accesses.

use super::prefetcher::{Prefetcher, PrefetcherConfig, PREFETCH_PAGE_BYTES};

#[derive(Clone, Copy, Debug)]
struct Tracker {
    /// Physical page number (address / 4 KB); `u64::MAX` when unused.
    page: u64,
    /// Line offset of the last demand access in the page.
    last: i32,
    /// +1 ascending, -1 descending, 0 not yet known.
    direction: i32,
    /// Consecutive accesses that moved in `direction`.
    confirmations: u32,
    /// The furthest line prefetched in `direction` (the last demand when none is).
    frontier: i32,
    /// LRU stamp: larger is more recent.
    used: u64,
}

pub struct StreamPrefetcher {
    trackers: Vec<Tracker>,
    distance: i32,
    degree: u32,
    confirmations: u32,
    line_bits: u32,
    lines_per_page: i32,
    clock: u64,
}

impl StreamPrefetcher {
    pub fn new(cfg: &PrefetcherConfig, line_bytes: u32) -> Self {
        let idle = Tracker { page: u64::MAX, last: 0, direction: 0, confirmations: 0, frontier: 0, used: 0 };
        StreamPrefetcher {
            trackers: vec![idle; cfg.trackers.max(1) as usize],
            distance: cfg.distance as i32,
            degree: cfg.degree,
            confirmations: cfg.train_confirmations,
            line_bits: line_bytes.trailing_zeros(),
            lines_per_page: (PREFETCH_PAGE_BYTES / line_bytes as u64) as i32,
            clock: 0,
        }
    }
}

impl Prefetcher for StreamPrefetcher {
    fn on_access(&mut self, line: u64, _hit: bool, out: &mut Vec<u64>) {
        self.clock += 1;
        let page = line / PREFETCH_PAGE_BYTES;
        let offset = ((line % PREFETCH_PAGE_BYTES) >> self.line_bits) as i32;
        let t = match self.trackers.iter().position(|t| t.page == page) {
            Some(i) => &mut self.trackers[i],
            None => {
                // A new page replaces the least recently used stream.
                let lru = self.trackers.iter_mut().min_by_key(|t| t.used).expect("at least one tracker");
                *lru = Tracker { page, last: offset, direction: 0, confirmations: 0, frontier: offset, used: self.clock };
                return;
            }
        };
        t.used = self.clock;
        let delta = offset - t.last;
        if delta == 0 {
            return;
        }
        let direction = delta.signum();
        if direction == t.direction {
            t.confirmations = t.confirmations.saturating_add(1);
        } else {
            // A new (or reversed) direction starts training again from here.
            t.direction = direction;
            t.confirmations = 1;
            t.frontier = offset;
        }
        t.last = offset;
        if t.confirmations < self.confirmations {
            return;
        }
        // Continue from the frontier, or from the demand if it has overtaken the frontier.
        let mut next = if (t.frontier - offset) * direction > 0 { t.frontier + direction } else { offset + direction };
        let base = page * PREFETCH_PAGE_BYTES;
        for _ in 0..self.degree {
            if (next - offset) * direction > self.distance || next < 0 || next >= self.lines_per_page {
                break;
            }
            out.push(base + ((next as u64) << self.line_bits));
            t.frontier = next;
            next += direction;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::prefetcher::PrefetcherKind;
    use proptest::prelude::*;

    fn prefetcher(distance: u32, degree: u32) -> StreamPrefetcher {
        let cfg = PrefetcherConfig { kind: PrefetcherKind::Stream, distance, degree, ..Default::default() };
        StreamPrefetcher::new(&cfg, 64)
    }

    #[test]
    fn an_ascending_stream_trains_then_runs_ahead_up_to_the_distance() {
        let mut p = prefetcher(8, 2);
        let mut out = Vec::new();
        let page = 0x7_3000;
        p.on_access(page, false, &mut out);
        p.on_access(page + 64, false, &mut out);
        assert!(out.is_empty(), "one step is not yet a confirmed stream");
        p.on_access(page + 128, false, &mut out);
        assert_eq!(out, vec![page + 3 * 64, page + 4 * 64]);
        // Two more per access until 8 lines ahead of the demand.
        for k in 3..12 {
            p.on_access(page + k * 64, true, &mut out);
        }
        let furthest = out.iter().max().unwrap();
        assert_eq!(*furthest, page + (11 + 8) * 64);
        let mut sorted = out.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), out.len(), "no line is proposed twice");
    }

    #[test]
    fn a_descending_stream_prefetches_downwards() {
        let mut p = prefetcher(20, 2);
        let mut out = Vec::new();
        let page = 0x10_0000;
        for k in [40u64, 39, 38] {
            p.on_access(page + k * 64, false, &mut out);
        }
        assert_eq!(out, vec![page + 37 * 64, page + 36 * 64]);
    }

    #[test]
    fn the_stream_stops_at_the_page_end() {
        let mut p = prefetcher(20, 4);
        let mut out = Vec::new();
        let page = 0x5000;
        for k in 58..64u64 {
            p.on_access(page + k * 64, false, &mut out);
        }
        assert!(out.iter().all(|&l| l / 4096 == page / 4096));
        assert_eq!(out.iter().max(), Some(&(page + 63 * 64)));
    }

    #[test]
    fn the_least_recently_used_stream_is_replaced() {
        let cfg = PrefetcherConfig { kind: PrefetcherKind::Stream, trackers: 2, ..Default::default() };
        let mut p = StreamPrefetcher::new(&cfg, 64);
        let mut out = Vec::new();
        let (a, b, c) = (0x1000, 0x2000, 0x3000);
        p.on_access(a, false, &mut out);
        p.on_access(b, false, &mut out);
        p.on_access(a + 64, false, &mut out);
        p.on_access(c, false, &mut out); // replaces b's stream, the least recently used
        p.on_access(a + 128, false, &mut out);
        assert!(!out.is_empty(), "a's stream survived and is confirmed");
        out.clear();
        p.on_access(b + 64, false, &mut out);
        p.on_access(b + 128, false, &mut out);
        assert!(out.is_empty(), "b's stream was forgotten and trains again");
    }

    proptest! {
        #[test]
        fn no_prefetch_ever_leaves_the_demand_page(
            pages in proptest::collection::vec(0u64..1 << 24, 1..6),
            steps in proptest::collection::vec((0usize..6, -3i32..=3, 0u32..64), 1..300),
            distance in 2u32..40,
            degree in 1u32..6,
        ) {
            let degree = degree.min(distance);
            let mut p = prefetcher(distance, degree);
            let mut cursor: Vec<i32> = pages.iter().map(|_| 0).collect();
            let mut out = Vec::new();
            for (which, step, jump) in steps {
                let i = which % pages.len();
                // Mostly strides of -3..3 lines, sometimes a jump anywhere in the page.
                cursor[i] = if step == 0 { jump as i32 } else { (cursor[i] + step).rem_euclid(64) };
                let line = pages[i] * 4096 + cursor[i] as u64 * 64;
                out.clear();
                p.on_access(line, false, &mut out);
                prop_assert!(out.len() <= degree as usize);
                for &l in &out {
                    prop_assert_eq!(l / 4096, line / 4096, "prefetch {:#x} left the page of {:#x}", l, line);
                    prop_assert_eq!(l % 64, 0);
                    prop_assert!(l.abs_diff(line) / 64 <= distance as u64);
                }
            }
        }
    }
}
