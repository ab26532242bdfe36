//! What the OS model knows of a machine's NUMA nodes (docs/numa.md): which cores each node has,
//! where its memory lies in physical memory (the nodes' memories concatenated, node-major), its
//! bandwidth, and the node-to-node latency matrix. A machine without `[[nodes]]` is one node
//! holding every core and all memory.

use std::ops::Range;

/// One node as the OS sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeInfo {
    pub cores: Range<u32>,
    /// Its frames in physical memory (empty: a node without memory).
    pub frames: Range<u32>,
    /// Peak bandwidth of its memory, GB/s (0 without memory); what weights are derived from.
    pub bandwidth_gbps: f64,
}

/// The machine's nodes and distances.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLayout {
    pub nodes: Vec<NodeInfo>,
    /// `latency_ns[a][b]`: added to every access from a core of node a to memory of node b.
    pub latency_ns: Vec<Vec<f64>>,
}

impl NodeLayout {
    /// One node with `cores` cores and `frames` frames of `bandwidth_gbps`.
    pub fn single(cores: u32, frames: u32, bandwidth_gbps: f64) -> Self {
        NodeLayout { nodes: vec![NodeInfo { cores: 0..cores, frames: 0..frames, bandwidth_gbps }], latency_ns: vec![vec![0.0]] }
    }

    pub fn count(&self) -> u32 {
        self.nodes.len() as u32
    }

    pub fn has_memory(&self, node: u32) -> bool {
        !self.nodes[node as usize].frames.is_empty()
    }

    /// The nodes with memory, in order.
    pub fn memory_nodes(&self) -> Vec<u32> {
        (0..self.count()).filter(|&n| self.has_memory(n)).collect()
    }

    /// The node core `core` belongs to (the last node for a core beyond all: never, validated).
    pub fn node_of_core(&self, core: u32) -> u32 {
        self.nodes.iter().position(|n| n.cores.contains(&core)).unwrap_or(self.nodes.len() - 1) as u32
    }

    /// The node frame `frame` lies in.
    #[inline]
    pub fn node_of_frame(&self, frame: u32) -> u32 {
        self.nodes.iter().position(|n| n.frames.contains(&frame)).unwrap_or(0) as u32
    }

    /// Nodes with memory from `from`, nearest first (latency, then id): Linux's fallback order.
    pub fn by_distance(&self, from: u32) -> Vec<u32> {
        let mut ns = self.memory_nodes();
        let row = &self.latency_ns[from as usize];
        ns.sort_by(|&a, &b| row[a as usize].total_cmp(&row[b as usize]).then(a.cmp(&b)));
        ns
    }
}
