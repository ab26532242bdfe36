//! BW-RANDOM, the tiering thesis's Algorithm 2 (bw-aware-tiering.md §2.5): `r = rand % (D + N)`;
//! the page goes to the cluster `r` falls in (fast for `r < D`), then to a uniformly random node
//! of it. No per-thread state; the ratio holds in expectation. Seeded by `os.seed`.

use super::node_sets::{ByNode, Clusters, NodeChooser, WeightParams};
use super::{NodeFault, PolicyInfo};
use crate::params::ParamSchema;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct BwRandom {
    clusters: Clusters,
    rng: ChaCha8Rng,
}

impl NodeChooser for BwRandom {
    fn choose_node(&mut self, _f: &NodeFault) -> Option<u32> {
        let r = self.rng.gen_range(0..self.clusters.total());
        let c = self.clusters.by_count(r, 0..self.clusters.nodes.len());
        let nodes = &self.clusters.nodes[c];
        Some(nodes[self.rng.gen_range(0..nodes.len())])
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("bw-random", "each page to a cluster with probability B_i / sum(B) (tiering thesis Alg. 2)", |cfg, _, _, m| {
        let p: WeightParams = cfg.params(INFO.name, &[])?;
        let clusters = Clusters::new(m.nodes, &p.weights, "os.bw-random.weights")?;
        Ok(ByNode::boxed(INFO.name, BwRandom { clusters, rng: ChaCha8Rng::seed_from_u64(cfg.seed()) }))
    })
    .places_nodes()
    .params(ParamSchema::of::<WeightParams>(&[]))
    .mechanism("bandwidth-aware random node placement");
