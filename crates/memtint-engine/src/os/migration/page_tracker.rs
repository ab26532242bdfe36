//! What the tiering policies know of each mapped page, beyond its page-table entry: who maps it
//! (the kernel's reverse map, so a daemon can move a page no fault pointed at), when the scanner
//! marked it (Linux keeps that time in the folio for the tiering mode's hot threshold), whether
//! it was referenced since its access bit was last cleared (the LRU's aging), and a sampled heat
//! (PEBS samples of LLC misses, as HeMem, MEMTIS and Colloid use).
//!
//! An access bit is modelled by the page table's mark (`page_table::HINT`), so unwatched pages
//! cost nothing on the translation path: clearing a page's access bit marks its entry, and the
//! next load through it takes the slow path, which records the reference and unmarks it
//! without a fault (`OsModel`). A page the scanner marked faults as usual.

use crate::os::nodes::NodeLayout;
use crate::os::page_table::{PageTable, HINT};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// One tracked page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackedPage {
    pub pid: u32,
    pub vpage: u64,
    pub node: u32,
    /// When the scanner marked it for a hinting fault, ns (`None`: not marked).
    pub marked_ns: Option<f64>,
    /// Its access bit was cleared and no load has used it since.
    pub watched: bool,
    /// A load used it since its access bit was last cleared.
    pub referenced: bool,
    /// Sampled LLC misses, halved every cooling period.
    pub heat: f32,
}

/// Every mapped page of a run that tracks pages, by frame.
pub struct PageTracker {
    pub layout: NodeLayout,
    pages: FxHashMap<u32, TrackedPage>,
    /// Per node: its frames in the order the CLOCK hand visits them (entries for frames that
    /// left the node are dropped when the hand meets them).
    clock: Vec<VecDeque<u32>>,
    /// Per node: loads of LLC-miss samples since the last period.
    pub samples: Vec<u64>,
}

impl PageTracker {
    pub fn new(layout: &NodeLayout) -> Self {
        let n = layout.count() as usize;
        PageTracker { layout: layout.clone(), pages: FxHashMap::default(), clock: vec![VecDeque::new(); n], samples: vec![0; n] }
    }

    /// Frame `frame` now holds `vpage` of process `pid` (a first touch, or a move's destination).
    pub fn mapped(&mut self, frame: u32, pid: u32, vpage: u64) {
        let node = self.layout.node_of_frame(frame);
        let page = TrackedPage { pid, vpage, node, marked_ns: None, watched: false, referenced: true, heat: 0.0 };
        self.pages.insert(frame, page);
        self.clock[node as usize].push_back(frame);
    }

    /// The page in `old` moved to `new`: it keeps its owner and heat.
    pub fn moved(&mut self, old: u32, new: u32) {
        if let Some(mut p) = self.pages.remove(&old) {
            p.node = self.layout.node_of_frame(new);
            p.marked_ns = None;
            p.watched = false;
            self.pages.insert(new, p);
            self.clock[p.node as usize].push_back(new);
        }
    }

    pub fn get(&self, frame: u32) -> Option<&TrackedPage> {
        self.pages.get(&frame)
    }

    pub fn get_mut(&mut self, frame: u32) -> Option<&mut TrackedPage> {
        self.pages.get_mut(&frame)
    }

    /// One sampled LLC miss on `frame`.
    pub fn sample(&mut self, frame: u32) {
        if let Some(p) = self.pages.get_mut(&frame) {
            p.heat += 1.0;
            self.samples[p.node as usize] += 1;
        }
    }

    /// Halves every page's heat (HeMem's and MEMTIS's cooling), so heat follows recent use.
    pub fn cool(&mut self) {
        for p in self.pages.values_mut() {
            p.heat *= 0.5;
        }
    }

    /// Pages on `node` with heat above zero, hottest first (ties by frame, for determinism).
    pub fn hottest_on(&self, node: u32) -> Vec<(u32, f32)> {
        let mut v: Vec<(u32, f32)> = self.pages.iter().filter(|(_, p)| p.node == node && p.heat > 0.0).map(|(&f, p)| (f, p.heat)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// The sum of every page's heat on each node.
    pub fn heat_per_node(&self) -> Vec<f64> {
        let mut h = vec![0.0; self.layout.count() as usize];
        for p in self.pages.values() {
            h[p.node as usize] += p.heat as f64;
        }
        h
    }

    /// The CLOCK hand over `node`'s pages (Linux's LRU aging with the access bit): up to
    /// `want` pages not referenced since the hand last passed, visiting at most `budget`
    /// pages. A referenced page gets its access bit cleared and a second chance; so does a page
    /// whose bit was cleared less than one pass ago (it is still `watched`: unknown yet).
    pub fn cold_pages(&mut self, tables: &mut [PageTable], node: u32, want: usize, budget: usize) -> Vec<u32> {
        let mut cold = Vec::new();
        let q = &mut self.clock[node as usize];
        let mut seen = 0;
        while cold.len() < want && seen < budget {
            let Some(frame) = q.pop_front() else { break };
            let Some(p) = self.pages.get_mut(&frame) else { continue };
            if p.node != node {
                continue;
            }
            seen += 1;
            if p.referenced || !p.watched {
                // Clear the access bit: mark the entry so that the next load reports itself.
                p.referenced = false;
                p.watched = true;
                let table = &mut tables[p.pid as usize];
                if let Some(entry) = table.lookup(p.vpage) {
                    table.set(p.vpage, entry | HINT);
                }
                q.push_back(frame);
            } else {
                cold.push(frame);
                q.push_back(frame);
            }
        }
        cold
    }

    /// Clears `frame`'s access bit (DAMON's `mkold`): marks its entry, so the next load reports.
    pub fn clear_access(&mut self, tables: &mut [PageTable], frame: u32) {
        if let Some(p) = self.pages.get_mut(&frame) {
            p.referenced = false;
            p.watched = true;
            let table = &mut tables[p.pid as usize];
            if let Some(entry) = table.lookup(p.vpage) {
                table.set(p.vpage, entry | HINT);
            }
        }
    }

    /// Whether a load used `frame` since its access bit was cleared.
    pub fn accessed(&self, frame: u32) -> bool {
        self.pages.get(&frame).is_some_and(|p| p.referenced)
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::migration::numa_balancing::tests::two_nodes;

    #[test]
    fn the_clock_gives_referenced_pages_a_second_chance() {
        let mut t = PageTracker::new(&two_nodes());
        let mut tables = vec![PageTable::new()];
        for v in 0..4u64 {
            tables[0].insert(v, v as u32);
            t.mapped(v as u32, 0, v);
        }
        // A fresh page counts as referenced: the first pass only clears bits.
        assert!(t.cold_pages(&mut tables, 0, 4, 4).is_empty());
        assert!((0..4).all(|v| tables[0].lookup(v).unwrap() & HINT != 0), "every access bit cleared");
        // Page 1 is used again (the OS model's slow path records it).
        t.get_mut(1).unwrap().referenced = true;
        t.get_mut(1).unwrap().watched = false;
        let cold = t.cold_pages(&mut tables, 0, 4, 4);
        assert_eq!(cold, vec![0, 2, 3], "only the page used since survives");
        assert!(t.cold_pages(&mut tables, 1, 4, 4).is_empty(), "node 1 has no pages");
    }

    #[test]
    fn heat_follows_the_page_and_cools() {
        let mut t = PageTracker::new(&two_nodes());
        t.mapped(5, 0, 50);
        t.mapped(1005, 0, 51);
        for _ in 0..4 {
            t.sample(5);
        }
        t.sample(1005);
        assert_eq!(t.hottest_on(0), vec![(5, 4.0)]);
        t.moved(5, 1006);
        assert_eq!(t.hottest_on(1), vec![(1006, 4.0), (1005, 1.0)]);
        assert_eq!(t.get(1006).unwrap().vpage, 50);
        t.cool();
        assert_eq!(t.heat_per_node(), vec![0.0, 2.5]);
        assert_eq!(t.samples, vec![4, 1]);
    }
}
