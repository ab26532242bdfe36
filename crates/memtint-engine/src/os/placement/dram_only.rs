//! `dram-only`: every page on the fast tier (the tiering thesis's D-only, a membind to the
//! DRAM cluster): the fastest memory cluster's node nearest the faulting core, or the nodes of
//! `[os.dram-only] nodes`. When they are full, the OS model falls back to the nearest node with
//! free frames (counted as `fallback_pages`) rather than failing as a strict membind would.

use super::node_sets::{home, nearest_in, ByNode, Clusters, NodeChooser};
use super::{NodeFault, PolicyInfo};
use crate::error::Error;
use crate::os::nodes::NodeLayout;
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.dram-only]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DramOnlyParams {
    /// The fast nodes; empty: the fastest cluster's.
    pub nodes: Vec<u32>,
}

impl Params for DramOnlyParams {}

pub struct DramOnly {
    layout: NodeLayout,
    fast: Vec<u32>,
}

impl NodeChooser for DramOnly {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        Some(nearest_in(&self.layout, home(&self.layout, f.node), &self.fast))
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("dram-only", "every page on the fastest memory cluster (the thesis's D-only)", |cfg, _, _, m| {
        let p: DramOnlyParams = cfg.params(INFO.name, &[])?;
        let fast = if p.nodes.is_empty() {
            Clusters::new(m.nodes, &[], "os.dram-only")?.nodes[0].clone()
        } else {
            for (i, &n) in p.nodes.iter().enumerate() {
                if n >= m.nodes.count() {
                    return Err(Error::config(
                        format!("os.dram-only.nodes[{i}]"),
                        format!("node {n} does not exist (nodes 0-{})", m.nodes.count() - 1),
                    ));
                }
                if !m.nodes.has_memory(n) {
                    return Err(Error::config(format!("os.dram-only.nodes[{i}]"), format!("node {n} has no memory")));
                }
            }
            p.nodes
        };
        Ok(ByNode::boxed(INFO.name, DramOnly { layout: m.nodes.clone(), fast }))
    })
    .places_nodes()
    .params(ParamSchema::of::<DramOnlyParams>(&[]))
    .mechanism("binding to the fast nodes");
