//! BW-LOCAL, the tiering thesis's Algorithm 3 (bw-aware-tiering.md §2.6, following the
//! pseudocode, not the prose's typo): per thread one counter per cluster it runs in,
//! `a = aCount[current]`; the cycle starts with the current cluster's own share (a thread on the
//! fast cluster: D fast then N slow; on the slow one: N slow then D fast; n clusters: its own,
//! then the others fastest first), then `aCount[current] = (a + 1) % (D + N)`. The node is the
//! thread's own when the cluster holds it, else the cluster's nearest. The current cluster is
//! the faulting core's node's (the nearest memory node's for a node without memory).

use super::node_sets::{home, nearest_in, per_thread, ByNode, Clusters, NodeChooser, WeightParams};
use super::{NodeFault, PolicyInfo};
use crate::os::nodes::NodeLayout;
use crate::params::ParamSchema;

pub struct BwLocal {
    layout: NodeLayout,
    clusters: Clusters,
    /// Per thread: `aCount` per current cluster.
    counts: Vec<Vec<u32>>,
}

impl NodeChooser for BwLocal {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        let n = self.clusters.nodes.len();
        let own = home(&self.layout, f.node);
        let current = self.clusters.of_node[own as usize].expect("a memory node has a cluster");
        let counts = per_thread(&mut self.counts, f.thread);
        counts.resize(n, 0);
        let a = counts[current];
        let c = self.clusters.by_count(a, std::iter::once(current).chain((0..n).filter(|&c| c != current)));
        counts[current] = (a + 1) % self.clusters.total();
        Some(nearest_in(&self.layout, own, &self.clusters.nodes[c]))
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("bw-local", "per thread the local cluster's share first, then the others' (tiering thesis Alg. 3)", |cfg, _, _, m| {
        let p: WeightParams = cfg.params(INFO.name, &[])?;
        let clusters = Clusters::new(m.nodes, &p.weights, "os.bw-local.weights")?;
        Ok(ByNode::boxed(INFO.name, BwLocal { layout: m.nodes.clone(), clusters, counts: Vec::new() }))
    })
    .places_nodes()
    .params(ParamSchema::of::<WeightParams>(&[]))
    .mechanism("bandwidth-aware local node placement");
