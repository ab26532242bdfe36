//! `numa-balancing`: Linux's automatic NUMA balancing (Gorman, "Foundation for automatic NUMA
//! balancing", LWN 2012; `should_numa_migrate_memory` in kernel/sched/fair.c). A hinting fault
//! records the faulting node on the page (the kernel keeps it in the page's `last_cpupid`); the
//! page moves to the faulting thread's node when that node also took the page's previous fault
//! (the two-stage filter) and holds memory. Pages of a node's own threads stay.

use super::{HintFault, MigrationInfo, MigrationPolicy, MigrationView, Proposal};
use crate::os::nodes::NodeLayout;
use crate::params::ParamSchema;
use rustc_hash::FxHashMap;

pub static INFO: MigrationInfo = MigrationInfo {
    name: "numa-balancing",
    summary: "Linux automatic NUMA balancing: a page moves to a node that faulted on it twice in a row",
    moves_pages_of: &["local"],
    params: ParamSchema::NONE,
    build: |v| Ok(Box::new(NumaBalancing::new(v))),
};

/// The two-stage filter, shared with `bw-migration`.
pub struct NumaBalancing {
    layout: NodeLayout,
    /// Frame -> the node of its last hinting fault.
    last_node: FxHashMap<u32, u32>,
}

impl NumaBalancing {
    pub fn new(v: &MigrationView) -> Self {
        NumaBalancing { layout: v.nodes.clone(), last_node: FxHashMap::default() }
    }

    /// The node the page should move to, if the filter passes.
    pub fn propose(&mut self, f: &HintFault) -> Option<u32> {
        let last = self.last_node.insert(f.frame, f.thread_node);
        let wanted = f.thread_node != f.page_node && last == Some(f.thread_node) && self.layout.has_memory(f.thread_node);
        if wanted {
            // The frame is freed by the move; whatever lands in it starts afresh.
            self.last_node.remove(&f.frame);
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
        HintFault { pid: 0, tid: 0, frame, page_node, thread_node }
    }

    #[test]
    fn a_page_moves_after_two_consecutive_faults_from_the_same_remote_node() {
        let layout = two_nodes();
        let params = Default::default();
        let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params });
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::Stay, "first fault only records node 1");
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::MoveTo(1));
        // Alternating nodes never pass the filter; local faults never move a page.
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay, "twice from its own node: stays");
    }
}
