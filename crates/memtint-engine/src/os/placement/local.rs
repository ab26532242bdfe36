//! `local`: Linux's default policy (first touch, `MPOL_LOCAL`): a page goes to the node of the
//! core that first touches it; when that node is full or has no memory, to the nearest node
//! with free frames (the OS model's fallback, as the kernel's zonelist order).

use super::node_sets::{home, ByNode, NodeChooser};
use super::{NodeFault, PolicyInfo};
use crate::os::nodes::NodeLayout;

pub struct Local {
    layout: NodeLayout,
}

impl NodeChooser for Local {
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        Some(home(&self.layout, f.node))
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("local", "first touch: each page on the faulting core's node (Linux's default)", |_, _, _, m| {
        Ok(ByNode::boxed(INFO.name, Local { layout: m.nodes.clone() }))
    })
    .places_nodes()
    .mechanism("first-touch node placement");
