//! `bw-migration`: the tiering thesis's BW-MIGRATION (Algorithm 4, bw-aware-tiering.md §2.7), a
//! gate on the moves automatic NUMA balancing proposes. Moves within a memory cluster (nodes of
//! equal bandwidth) always pass. Between two clusters, a counter per pair holds promotions
//! (toward the faster cluster) minus demotions and stays in [-M, M]: a move that would leave
//! the range is refused and the page stays. So migration shifts at most M pages of net
//! occupancy between any two clusters, and the placement's D:N ratio survives it. The thesis's
//! `migCount` is global across processes, and so is this one.
//!
//! M (`max_net_pages`) is not reported in the thesis (its example uses 10). The default, 256
//! pages (1 MiB), lets locality moves through while holding a 64 MiB footprint's ratio within
//! 2 %. One simulated core steps at a time, so the thesis's compare-and-set never fails here.

use super::numa_balancing::NumaBalancing;
use super::{HintFault, MigrationInfo, MigrationPolicy, Proposal};
use crate::error::{Error, Result};
use crate::os::placement::node_sets::Clusters;
use crate::params::{Bound, ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.bw-migration]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BwMigrationParams {
    /// M: the most pages net migration may move between two clusters, either way.
    pub max_net_pages: u64,
}

impl Default for BwMigrationParams {
    fn default() -> Self {
        BwMigrationParams { max_net_pages: 256 }
    }
}

impl Params for BwMigrationParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        const PAGES: Bound = Bound { min: 0, max: 1 << 31, unit: "pages", why: "the allocator holds at most 2^31 frames" };
        PAGES.check_params(&[("max_net_pages", self.max_net_pages)])
    }
}

pub static INFO: MigrationInfo = MigrationInfo {
    name: "bw-migration",
    summary: "NUMA balancing's moves, gated so net flow between memory clusters stays within M pages (tiering thesis Alg. 4)",
    moves_pages_of: &["local", "bw-local"],
    params: ParamSchema::of::<BwMigrationParams>(&[]),
    build: |v| {
        let p: BwMigrationParams = v.params.get("os", INFO.name, &[])?;
        Ok(Box::new(BwMigration {
            anb: NumaBalancing::new(v, Default::default()),
            gate: MigrationGate::new(Clusters::new(v.nodes, &[], "os.bw-migration")?, p.max_net_pages)?,
        }))
    },
};

/// The gate alone: pairwise counters over the clusters.
#[derive(Clone, Debug)]
pub struct MigrationGate {
    clusters: Clusters,
    max: i64,
    /// Per unordered pair (a < b, a the faster): moves b -> a minus moves a -> b.
    count: Vec<i64>,
}

impl MigrationGate {
    pub fn new(clusters: Clusters, max_net_pages: u64) -> Result<Self> {
        let n = clusters.nodes.len();
        if n < 2 {
            return Err(Error::config("os.migration", "bw-migration needs at least two memory clusters (nodes of different bandwidth)"));
        }
        Ok(MigrationGate { clusters, max: max_net_pages as i64, count: vec![0; n * n] })
    }

    /// May a page move from node `from` to node `to`? Counts it if so.
    pub fn admit(&mut self, from: u32, to: u32) -> bool {
        let (Some(a), Some(b)) = (self.clusters.of_node[from as usize], self.clusters.of_node[to as usize]) else {
            return false;
        };
        if a == b {
            return true;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        let n = self.clusters.nodes.len();
        let c = &mut self.count[lo * n + hi];
        // Toward the faster cluster (lower index) is a promotion.
        let next = if b == lo { *c + 1 } else { *c - 1 };
        if next.abs() > self.max {
            return false;
        }
        *c = next;
        true
    }

    /// Net promotions minus demotions between clusters `a` and `b` (a faster).
    #[cfg(test)]
    pub fn net(&self, a: usize, b: usize) -> i64 {
        self.count[a * self.clusters.nodes.len() + b]
    }
}

struct BwMigration {
    anb: NumaBalancing,
    gate: MigrationGate,
}

impl MigrationPolicy for BwMigration {
    fn on_hint_fault(&mut self, f: &HintFault) -> Proposal {
        match self.anb.propose(f) {
            Some(to) if self.gate.admit(f.page_node, to) => Proposal::MoveTo(to),
            Some(to) => Proposal::Refused(to),
            None => Proposal::Stay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::numa_balancing::tests::{fault, two_nodes};
    use super::super::MigrationView;
    use super::*;
    use crate::os::nodes::{NodeInfo, NodeLayout};

    fn gate(layout: &NodeLayout, m: u64) -> MigrationGate {
        MigrationGate::new(Clusters::new(layout, &[], "t").unwrap(), m).unwrap()
    }

    /// §6.3 test 9: under one-sided pressure exactly M moves pass, then none until the reverse
    /// flow; |migCount| <= M always; moves within a cluster always pass.
    #[test]
    fn one_sided_pressure_admits_exactly_m_then_waits_for_reverse_flow() {
        let layout = two_nodes();
        let mut g = gate(&layout, 10);
        let admitted = (0..1000).filter(|_| g.admit(1, 0)).count();
        assert_eq!(admitted, 10, "NVM -> DRAM promotions");
        assert_eq!(g.net(0, 1), 10);
        assert!(!g.admit(1, 0));
        assert!(g.admit(0, 1), "a demotion makes room");
        assert!(g.admit(1, 0) && !g.admit(1, 0), "for exactly one promotion");
        // The other way: down to -M, never beyond.
        let demoted = (0..1000).filter(|_| g.admit(0, 1)).count();
        assert_eq!(demoted, 20);
        assert_eq!(g.net(0, 1), -10);
        for _ in 0..100 {
            g.admit(0, 1);
            g.admit(1, 0);
            assert!(g.net(0, 1).abs() <= 10);
        }
    }

    #[test]
    fn moves_within_a_cluster_always_pass_and_three_clusters_keep_a_counter_per_pair() {
        let nodes = vec![
            NodeInfo { cores: 0..2, frames: 0..100, bandwidth_gbps: 20.0 },
            NodeInfo { cores: 2..4, frames: 100..200, bandwidth_gbps: 20.0 },
            NodeInfo { cores: 4..6, frames: 200..300, bandwidth_gbps: 10.0 },
            NodeInfo { cores: 6..8, frames: 300..400, bandwidth_gbps: 4.0 },
        ];
        let layout = NodeLayout { nodes, latency_ns: vec![vec![0.0; 4]; 4] };
        let mut g = gate(&layout, 2);
        assert!((0..50).all(|_| g.admit(0, 1) && g.admit(1, 0)), "nodes 0 and 1 share a cluster");
        assert_eq!((0..9).filter(|_| g.admit(2, 0)).count(), 2);
        assert_eq!((0..9).filter(|_| g.admit(3, 1)).count(), 2, "its own pair's counter");
        assert_eq!((0..9).filter(|_| g.admit(3, 2)).count(), 2);
        assert_eq!((g.net(0, 1), g.net(0, 2), g.net(1, 2)), (2, 2, 2));
    }

    #[test]
    fn the_policy_gates_what_numa_balancing_proposes() {
        let layout = two_nodes();
        let params = crate::params::ParamTables::default();
        let params = params_with_m(params, 1);
        let mut p = (INFO.build)(&MigrationView { nodes: &layout, params: &params, seed: 1 }).unwrap();
        let f = |frame| fault(frame, 1, 0);
        let mut answers = Vec::new();
        for frame in [1, 2] {
            answers.push(p.on_hint_fault(&f(frame)));
            answers.push(p.on_hint_fault(&f(frame)));
        }
        assert_eq!(answers, vec![Proposal::Stay, Proposal::MoveTo(0), Proposal::Stay, Proposal::Refused(0)]);
    }

    fn params_with_m(mut t: crate::params::ParamTables, m: u64) -> crate::params::ParamTables {
        t.set(INFO.name, "max_net_pages", m);
        t
    }
}
