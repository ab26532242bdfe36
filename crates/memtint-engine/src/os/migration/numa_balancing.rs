//! `numa-balancing`: Linux's automatic NUMA balancing (Gorman, "Foundation for automatic NUMA
//! balancing", LWN 2012; `should_numa_migrate_memory` in kernel/sched/fair.c). A hinting fault
//! records the faulting thread and node on the page (the kernel's `last_cpupid`). A page on
//! another node than the faulting thread's moves there (if that node has memory) when:
//! - early in the process's life (the scanner has passed over its pages at most 4 times), the
//!   fault is the page's first or the same thread's as the last (a private fault);
//! - later, the page's previous fault came from the same node (the two-stage filter that the
//!   tiering thesis describes). Linux then weighs shared pages by NUMA-group fault statistics,
//!   which are not modelled: a shared page passing the filter moves.

use super::{HintFault, MigrationInfo, MigrationPolicy, MigrationView, Proposal};
use crate::os::nodes::NodeLayout;
use crate::params::ParamSchema;
use rustc_hash::FxHashMap;

pub static INFO: MigrationInfo = MigrationInfo {
    name: "numa-balancing",
    summary: "Linux automatic NUMA balancing: a remote page moves to the faulting node (first or private faults early, then two faults in a row from it)",
    moves_pages_of: &["local"],
    params: ParamSchema::NONE,
    build: |v| Ok(Box::new(NumaBalancing::new(v))),
};

/// The two-stage filter, shared with `bw-migration`.
pub struct NumaBalancing {
    layout: NodeLayout,
    /// Frame -> (node, thread) of its last hinting fault.
    last: FxHashMap<u32, (u32, u32)>,
}

impl NumaBalancing {
    pub fn new(v: &MigrationView) -> Self {
        NumaBalancing { layout: v.nodes.clone(), last: FxHashMap::default() }
    }

    /// The node the page should move to, if the filter passes.
    pub fn propose(&mut self, f: &HintFault) -> Option<u32> {
        let last = self.last.insert(f.frame, (f.thread_node, f.tid));
        let passes = match last {
            None => f.early,
            Some((_, tid)) if f.early && tid == f.tid => true,
            Some((node, _)) => node == f.thread_node,
        };
        let wanted = passes && f.thread_node != f.page_node && self.layout.has_memory(f.thread_node);
        if wanted {
            // The frame is freed by the move; whatever lands in it starts afresh.
            self.last.remove(&f.frame);
        }
        wanted.then_some(f.thread_node)
    }
}

impl MigrationPolicy for NumaBalancing {
    fn on_hint_fault(&mut self, f: &HintFault) -> Proposal {
        match self.propose(f) {
            Some(n) => Proposal::MoveTo(n),
            None => Proposal::Stay,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::os::nodes::NodeInfo;

    pub(crate) fn two_nodes() -> NodeLayout {
        NodeLayout {
            nodes: vec![
                NodeInfo { cores: 0..4, frames: 0..1000, bandwidth_gbps: 20.0 },
                NodeInfo { cores: 4..8, frames: 1000..2000, bandwidth_gbps: 10.0 },
            ],
            latency_ns: vec![vec![0.0, 50.0], vec![50.0, 0.0]],
        }
    }

    fn fault(frame: u32, page_node: u32, thread_node: u32) -> HintFault {
        HintFault {
            pid: 0,
            tid: thread_node,
            frame,
            page_node,
            thread_node,
            early: false,
            latency_ns: None,
            now_ns: 0.0,
            free: vec![],
            capacity: vec![],
        }
    }

    #[test]
    fn a_page_moves_after_two_consecutive_faults_from_the_same_remote_node() {
        let layout = two_nodes();
        let params = Default::default();
        let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params, seed: 1 });
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::Stay, "first fault only records node 1");
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::MoveTo(1));
        // Alternating nodes never pass the filter; local faults never move a page.
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay, "twice from its own node: stays");
    }

    #[test]
    fn early_in_a_process_life_first_and_private_faults_move_at_once() {
        let layout = two_nodes();
        let params = Default::default();
        let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params, seed: 1 });
        let early = |frame, tid, thread_node| HintFault {
            pid: 0,
            tid,
            frame,
            page_node: 0,
            thread_node,
            early: true,
            latency_ns: None,
            now_ns: 0.0,
            free: vec![],
            capacity: vec![],
        };
        assert_eq!(p.on_hint_fault(&early(5, 4, 1)), Proposal::MoveTo(1), "a first fault");
        assert_eq!(p.on_hint_fault(&early(6, 0, 0)), Proposal::Stay, "a first fault from its own node");
        assert_eq!(p.on_hint_fault(&early(6, 4, 1)), Proposal::Stay, "shared (another thread faulted last) and from another node");
        assert_eq!(p.on_hint_fault(&early(6, 4, 1)), Proposal::MoveTo(1), "private now");
    }
}
