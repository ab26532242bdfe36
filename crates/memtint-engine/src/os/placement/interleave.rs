//! `interleave`: Linux's `MPOL_INTERLEAVE` in allocation order (the task's `il_prev`): each
//! thread places its pages round-robin, one page per node with memory in turn, from the first.

use super::node_sets::{per_thread, placed_by_node, uncoloured};
use super::{NodeFault, Placement, PlacementPolicy, PolicyInfo};
use crate::error::Result;
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::ColourSpace;

pub struct Interleave {
    space: ColourSpace,
    nodes: Vec<u32>,
    /// Per thread: pages placed so far.
    next: Vec<u64>,
}

impl PlacementPolicy for Interleave {
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
        let n = per_thread(&mut self.next, f.thread);
        let node = self.nodes[(*n % self.nodes.len() as u64) as usize];
        *n += 1;
        Some(node)
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("interleave", "each thread's pages round-robin over the nodes with memory (MPOL_INTERLEAVE)", |_, _, _, m| {
        Ok(Box::new(Interleave { space: uncoloured(), nodes: m.nodes.memory_nodes(), next: Vec::new() }))
    })
    .places_nodes();
