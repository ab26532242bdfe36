//! What the node-colour policies (`camc`, `tintmalloc`) share: colours within each node's own
//! addresses, numbered node-major over the machine (global colour = the memory node's position
//! among the memory nodes x colours per node + the local colour; on the Opteron 6128 the
//! thesis's "banks 0, 32, 64, 96", one per controller, are the first bank of each node), and the
//! frames of a set of local colours in the baseline's aged order (`colour_sets::AgedFrames`).

use super::colour_sets::AgedFrames;
use crate::error::{Error, Result};
use crate::os::buddy::{BuddyAllocator, Frame};
use crate::os::colour::ColourSpace;
use crate::os::nodes::NodeLayout;
use crate::os::OsConfig;

pub struct NodeColours {
    /// The colour space of one node's addresses (every memory node has the same mapping).
    pub space: ColourSpace,
    /// The nodes with memory, in order: global colour `g` lies on `memory_nodes[g / per_node]`.
    pub memory_nodes: Vec<u32>,
    nodes: u32,
    /// Aged order per (owner, node).
    orders: AgedFrames,
}

impl NodeColours {
    /// `owners`: the regions that draw frames (processes for `camc`, threads for `tintmalloc`).
    pub fn new(space: ColourSpace, layout: &NodeLayout, cfg: &OsConfig, owners: u32) -> Result<Self> {
        let memory_nodes = layout.memory_nodes();
        let orders = AgedFrames::new(cfg, owners as usize * layout.count() as usize)?;
        Ok(NodeColours { space, memory_nodes, nodes: layout.count(), orders })
    }

    pub fn per_node(&self) -> u32 {
        self.space.count()
    }

    /// Colours over the machine.
    pub fn count(&self) -> u32 {
        self.per_node() * self.memory_nodes.len() as u32
    }

    pub fn node_of(&self, global: u32) -> u32 {
        self.memory_nodes[(global / self.per_node()) as usize]
    }

    pub fn local(&self, global: u32) -> u32 {
        global % self.per_node()
    }

    /// Node `node`'s colour `local` as a global colour (`node` has memory).
    pub fn global(&self, node: u32, local: u32) -> u32 {
        let rank = self.memory_nodes.iter().position(|&n| n == node).expect("a memory node") as u32;
        rank * self.per_node() + local
    }

    /// An error naming `key` unless `global` is a colour of the machine.
    pub fn check(&self, global: u32, key: &str) -> Result<()> {
        if global < self.count() {
            return Ok(());
        }
        Err(Error::config(
            key,
            format!(
                "colour {global} does not exist: {} memory nodes x {} colours per node ({}) give colours 0-{}, node-major",
                self.memory_nodes.len(),
                self.per_node(),
                self.space.describe(),
                self.count() - 1
            ),
        ))
    }

    /// A free frame of node `node` whose local colour `member` flags, for `owner`: the next in
    /// its aged order, else the lowest free frame of its first colour with one.
    pub fn take(&mut self, owner: u32, node: u32, member: &[bool], allocs: &mut [Option<BuddyAllocator>]) -> Option<Frame> {
        let alloc = allocs.get_mut(node as usize)?.as_mut()?;
        let region = (owner * self.nodes + node) as usize;
        if let Some(f) = self.orders.next(region, alloc, |a, f| member[a.colour_of(f) as usize]) {
            return Some(f);
        }
        (0..member.len() as u32).filter(|&c| member[c as usize]).find_map(|c| alloc.alloc_colour(c))
    }

    /// Any free frame, on `from` or else the nearest node with one (a borrowed page).
    pub fn any_near(&self, layout: &NodeLayout, from: u32, allocs: &mut [Option<BuddyAllocator>]) -> Option<(u32, Frame)> {
        layout.by_distance(from).into_iter().find_map(|n| allocs[n as usize].as_mut().and_then(|a| a.alloc_any()).map(|f| (n, f)))
    }
}

/// Flags over `count` colours.
pub fn flags(count: u32, colours: impl IntoIterator<Item = u32>) -> Vec<bool> {
    let mut m = vec![false; count as usize];
    colours.into_iter().for_each(|c| m[c as usize] = true);
    m
}
