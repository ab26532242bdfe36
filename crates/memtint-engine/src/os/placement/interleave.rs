//! `interleave`: Linux's `MPOL_INTERLEAVE` in allocation order (the task's `il_prev`): each
//! thread places its pages round-robin, one page per node with memory in turn, from the first.

use super::node_sets::{per_thread, ByNode, NodeChooser};
use super::{NodeFault, PolicyInfo};

pub struct Interleave {
    nodes: Vec<u32>,
    /// Per thread: pages placed so far.
    next: Vec<u64>,
}

impl NodeChooser for Interleave {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        let n = per_thread(&mut self.next, f.thread);
        let node = self.nodes[(*n % self.nodes.len() as u64) as usize];
        *n += 1;
        Some(node)
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("interleave", "each thread's pages round-robin over the nodes with memory (MPOL_INTERLEAVE)", |_, _, _, m| {
        Ok(ByNode::boxed(INFO.name, Interleave { nodes: m.nodes.memory_nodes(), next: Vec::new() }))
    })
    .places_nodes()
    .mechanism("node interleaving");
