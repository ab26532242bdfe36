//! `weighted-interleave`: Linux's `MPOL_WEIGHTED_INTERLEAVE` (6.9) in allocation order: each
//! thread gives every node with memory `weight` consecutive pages in turn, from the first node
//! (the task's `il_prev`/`il_weight`). Weights: `[os.weighted-interleave] weights`, one per
//! node with memory, 1-255; by default Linux's `auto` weights from the nodes' bandwidths
//! (`node_sets::linux_auto_weights`: 32 shares split by bandwidth, truncated, over their GCD).

use super::node_sets::{linux_auto_weights, per_thread, ByNode, NodeChooser, WeightParams};
use super::{NodeFault, PolicyInfo};
use crate::error::Error;
use crate::params::ParamSchema;

pub struct WeightedInterleave {
    nodes: Vec<u32>,
    weights: Vec<u32>,
    /// Per thread: (index into `nodes`, pages it has had in this turn).
    turn: Vec<(usize, u32)>,
}

impl NodeChooser for WeightedInterleave {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        let (i, used) = per_thread(&mut self.turn, f.thread);
        let node = self.nodes[*i];
        *used += 1;
        if *used == self.weights[*i] {
            *i = (*i + 1) % self.nodes.len();
            *used = 0;
        }
        Some(node)
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new(
    "weighted-interleave",
    "each thread's pages over the nodes, weight consecutive pages each (MPOL_WEIGHTED_INTERLEAVE, auto weights)",
    |cfg, _, _, m| {
        let p: WeightParams = cfg.params(INFO.name, &[])?;
        let nodes = m.nodes.memory_nodes();
        let weights = if p.weights.is_empty() {
            linux_auto_weights(&nodes.iter().map(|&n| m.nodes.nodes[n as usize].bandwidth_gbps).collect::<Vec<_>>())
        } else if p.weights.len() != nodes.len() {
            return Err(Error::config(
                "os.weighted-interleave.weights",
                format!("{} weights for {} nodes with memory ({nodes:?}): one weight per node", p.weights.len(), nodes.len()),
            ));
        } else {
            p.weights
        };
        Ok(ByNode::boxed(INFO.name, WeightedInterleave { nodes, weights, turn: Vec::new() }))
    },
)
.places_nodes()
.params(ParamSchema::of::<WeightParams>(&[]))
.mechanism("weighted node interleaving");
