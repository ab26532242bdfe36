//! BW-INTERLEAVE, the tiering thesis's Algorithm 1 (Yu 2018, §3.2; bw-aware-tiering.md §2.4):
//! per thread one counter `aCount`; a page goes to the cluster the counter falls in (D pages to
//! the fast cluster, then N to the slow one; n clusters in turn with their shares
//! `B_i / sum(B)` as integer weights reduced by the GCD), then `aCount = (aCount + 1) % (D + N)`.
//! Inside a cluster, nodes take turns per thread (the thesis leaves this open). Weights:
//! `[os.bw-interleave] weights`, one per cluster, fastest first; default the clusters'
//! bandwidths as the smallest integer ratio.

use super::node_sets::{per_thread, ByNode, Clusters, NodeChooser, WeightParams};
use super::{NodeFault, PolicyInfo};
use crate::params::ParamSchema;

pub struct BwInterleave {
    clusters: Clusters,
    /// Per thread: `aCount` and a rotor per cluster.
    state: Vec<(u32, Vec<usize>)>,
}

impl NodeChooser for BwInterleave {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        let n = self.clusters.nodes.len();
        let (a, rotors) = per_thread(&mut self.state, f.thread);
        rotors.resize(n, 0);
        let c = self.clusters.by_count(*a, 0..n);
        *a = (*a + 1) % self.clusters.total();
        let nodes = &self.clusters.nodes[c];
        let node = nodes[rotors[c] % nodes.len()];
        rotors[c] += 1;
        Some(node)
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new(
    "bw-interleave",
    "per thread D pages to the fast cluster, then N to the slow (tiering thesis Alg. 1)",
    |cfg, _, _, m| {
        let p: WeightParams = cfg.params(INFO.name, &[])?;
        let clusters = Clusters::new(m.nodes, &p.weights, "os.bw-interleave.weights")?;
        Ok(ByNode::boxed(INFO.name, BwInterleave { clusters, state: Vec::new() }))
    },
)
.places_nodes()
.params(ParamSchema::of::<WeightParams>(&[]))
.mechanism("bandwidth-aware node interleaving");
