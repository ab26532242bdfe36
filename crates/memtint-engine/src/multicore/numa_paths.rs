//! The way between cores and memory on a multi-node machine (docs/numa.md): which node an
//! address lies on, the latency a core's node adds to reach it (`[links] latency_ns`, request
//! and data together, charged when the data returns), and the links as queues: a read's line
//! crosses the link from the memory's node to the core's at the link's rate, after the lines
//! before it (FIFO, deterministic service), so a link slower than the memory behind it limits.
//! Write-backs are posted: they enter the remote controller at once and wait on no link.

use crate::config::Topology;
use crate::mapping::AddressMapping;
use crate::Cycle;
use serde::Serialize;

/// One thread's DRAM requests by where they went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeAccesses {
    pub local_reads: u64,
    pub remote_reads: u64,
    pub local_writes: u64,
    pub remote_writes: u64,
}

impl NodeAccesses {
    pub fn since(&self, e: &Self) -> Self {
        NodeAccesses {
            local_reads: self.local_reads - e.local_reads,
            remote_reads: self.remote_reads - e.remote_reads,
            local_writes: self.local_writes - e.local_writes,
            remote_writes: self.remote_writes - e.remote_writes,
        }
    }

    pub fn add(&mut self, o: &Self) {
        self.local_reads += o.local_reads;
        self.remote_reads += o.remote_reads;
        self.local_writes += o.local_writes;
        self.remote_writes += o.remote_writes;
    }
}

struct Route {
    node: u32,
    base: u64,
    end: u64,
    mapping: AddressMapping,
}

pub struct NumaPaths {
    routes: Vec<Route>,
    core_node: Vec<u32>,
    /// `[core node][memory node]`, DRAM cycles.
    latency: Vec<Vec<Cycle>>,
    /// `[core node][memory node]`: DRAM cycles a line occupies the link, and when it is free.
    link_service: Option<Vec<Vec<f64>>>,
    link_free: Vec<Vec<f64>>,
}

impl NumaPaths {
    pub fn new(t: &Topology, tck_ns: f64, line_bytes: u64) -> Self {
        let routes = t
            .memories
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                m.as_ref().map(|m| Route {
                    node: i as u32,
                    base: t.bases[i],
                    end: t.bases[i] + (1u64 << m.mapping.capacity_bits()),
                    mapping: m.mapping.clone(),
                })
            })
            .collect();
        let cores = t.layout.nodes.iter().map(|n| n.cores.end).max().unwrap_or(0);
        let core_node = (0..cores).map(|c| t.layout.node_of_core(c)).collect();
        let latency = t.layout.latency_ns.iter().map(|row| row.iter().map(|&ns| (ns / tck_ns).round() as Cycle).collect()).collect();
        // GB/s is bytes per ns.
        let link_service =
            t.link_gbps.as_ref().map(|m| m.iter().map(|row| row.iter().map(|&g| line_bytes as f64 / g / tck_ns).collect()).collect());
        let n = t.layout.nodes.len();
        NumaPaths { routes, core_node, latency, link_service, link_free: vec![vec![0.0; n]; n] }
    }

    #[inline]
    fn route(&self, addr: u64) -> &Route {
        self.routes.iter().find(|r| addr >= r.base && addr < r.end).unwrap_or(&self.routes[0])
    }

    /// How many nodes the machine has.
    pub fn nodes(&self) -> usize {
        self.latency.len()
    }

    /// The node holding `addr`.
    #[inline]
    pub fn node_of(&self, addr: u64) -> u32 {
        self.route(addr).node
    }

    pub fn node_of_core(&self, core: u32) -> u32 {
        self.core_node.get(core as usize).copied().unwrap_or(0)
    }

    /// A bank id unique over all nodes (bank-level parallelism): node, channel, rank, group, bank.
    pub fn bank_id(&self, addr: u64) -> u32 {
        let r = self.route(addr);
        let d = r.mapping.decode(addr - r.base);
        (r.node << 14) | (d.channel << 10) | (d.rank << 7) | (d.bank_group << 4) | d.bank
    }

    /// A read of memory node `mem` for a core of node `core` finished in DRAM at `done`: the
    /// DRAM cycle its data reaches the core.
    pub fn deliver(&mut self, core: u32, mem: u32, done: Cycle) -> Cycle {
        let (a, b) = (core as usize, mem as usize);
        let mut at = done;
        if a != b {
            if let Some(s) = &self.link_service {
                let start = self.link_free[a][b].max(done as f64);
                self.link_free[a][b] = start + s[a][b];
                at = self.link_free[a][b].ceil() as Cycle;
            }
        }
        at + self.latency[a][b]
    }
}
