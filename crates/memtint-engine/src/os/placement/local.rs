//! `local`: Linux's default policy (first touch, `MPOL_LOCAL`): a page goes to the node of the
//! core that first touches it; when that node is full or has no memory, to the nearest node
//! with free frames (the OS model's fallback, as the kernel's zonelist order).

use super::node_sets::{home, placed_by_node, uncoloured};
use super::{NodeFault, Placement, PlacementPolicy, PolicyInfo};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::ColourSpace;
use crate::os::nodes::NodeLayout;

pub struct Local {
    space: ColourSpace,
    layout: NodeLayout,
}

impl PlacementPolicy for Local {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &[0]
    }
    fn place(&mut self, _pid: u32, _vpage: u64, _alloc: &mut BuddyAllocator) -> Result<Placement> {
        Err(placed_by_node(INFO.name))
    }
    fn choose_node(&mut self, f: &NodeFault) -> Option<u32> {
        Some(home(&self.layout, f.node))
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("local", "first touch: each page on the faulting core's node (Linux's default)", |_, _, _, m| {
        Ok(Box::new(Local { space: uncoloured(), layout: m.nodes.clone() }))
    })
    .places_nodes();
