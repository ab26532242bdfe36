//! What the node policies share (docs/numa.md): memory clusters (the tiering thesis's §3.1:
//! nodes of one memory type, here of one bandwidth, fastest first) with integer weights D:N
//! reduced by their GCD, Linux's `auto` interleave weights, the `[os.<policy>] weights` table,
//! and per-thread state.

use super::{NodeFault, Placement, PlacementPolicy};
use crate::error::{Error, Result};
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::ColourSpace;
use crate::os::nodes::NodeLayout;
use crate::params::Params;
use serde::{Deserialize, Serialize};

/// `[os.<policy>] weights`: integer weights, empty for the ones derived from bandwidths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WeightParams {
    pub weights: Vec<u32>,
}

impl Params for WeightParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        match self.weights.iter().position(|&w| w == 0 || w > 255) {
            Some(i) => Err(("weights", format!("weight {i} is {}: weights are 1-255, as Linux's", self.weights[i]))),
            None => Ok(()),
        }
    }
}

/// Memory clusters: the nodes with memory grouped by bandwidth (within 1 %), fastest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Clusters {
    /// Each cluster's nodes, ascending.
    pub nodes: Vec<Vec<u32>>,
    /// Each cluster's integer share, reduced by the GCD (the thesis's D:N for two).
    pub weights: Vec<u32>,
    /// Node -> its cluster (`None` without memory).
    pub of_node: Vec<Option<usize>>,
}

impl Clusters {
    /// `explicit` weights (one per cluster), or the clusters' summed bandwidths as the smallest
    /// integer ratio within 1 %. `key` names the weights in errors.
    pub fn new(layout: &NodeLayout, explicit: &[u32], key: &str) -> Result<Self> {
        let mut nodes: Vec<Vec<u32>> = Vec::new();
        let mut bws: Vec<f64> = Vec::new();
        for n in layout.memory_nodes() {
            let b = layout.nodes[n as usize].bandwidth_gbps;
            match bws.iter().position(|&c| (c - b).abs() <= 0.01 * c.max(b)) {
                Some(c) => nodes[c].push(n),
                None => {
                    bws.push(b);
                    nodes.push(vec![n]);
                }
            }
        }
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by(|&a, &b| bws[b].total_cmp(&bws[a]).then(nodes[a][0].cmp(&nodes[b][0])));
        let nodes: Vec<Vec<u32>> = order.iter().map(|&c| nodes[c].clone()).collect();
        let sums: Vec<f64> = order.iter().map(|&c| bws[c] * nodes_len(&nodes, &order, c) as f64).collect();
        let weights = if explicit.is_empty() {
            integer_ratio(&sums)
        } else if explicit.len() != nodes.len() {
            return Err(Error::config(
                key,
                format!("{} weights for {} memory clusters (nodes by bandwidth, fastest first: {:?})", explicit.len(), nodes.len(), nodes),
            ));
        } else {
            reduce(explicit.to_vec())
        };
        let mut of_node = vec![None; layout.count() as usize];
        for (c, ns) in nodes.iter().enumerate() {
            ns.iter().for_each(|&n| of_node[n as usize] = Some(c));
        }
        Ok(Clusters { nodes, weights, of_node })
    }

    pub fn total(&self) -> u32 {
        self.weights.iter().sum()
    }

    /// The cluster a counter value `a` in `0..total` falls in, taking the clusters in `order`.
    pub fn by_count(&self, a: u32, order: impl Iterator<Item = usize>) -> usize {
        let mut end = 0;
        let mut last = 0;
        for c in order {
            end += self.weights[c];
            last = c;
            if a < end {
                return c;
            }
        }
        last
    }
}

fn nodes_len(nodes: &[Vec<u32>], order: &[usize], c: usize) -> usize {
    nodes[order.iter().position(|&o| o == c).expect("c is in order")].len()
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn reduce(w: Vec<u32>) -> Vec<u32> {
    let g = w.iter().fold(0, |g, &x| gcd(g, x)).max(1);
    w.into_iter().map(|x| x / g).collect()
}

/// The smallest integer ratio within 1 % of `bw` (at most 64 times the smallest), reduced.
fn integer_ratio(bw: &[f64]) -> Vec<u32> {
    let min = bw.iter().cloned().fold(f64::INFINITY, f64::min);
    let ratio = |k: u32| bw.iter().map(|&b| (k as f64 * b / min).round().max(1.0) as u32).collect::<Vec<_>>();
    let close = |k: u32| bw.iter().all(|&b| ((k as f64 * b / min).round() - k as f64 * b / min).abs() <= 0.01 * k as f64 * b / min);
    reduce(ratio((1..=64).find(|&k| close(k)).unwrap_or(64)))
}

/// Linux's `auto` weighted-interleave weights (mm/mempolicy.c, `reduce_interleave_weights`,
/// 6.16): each node `max(1, 32 * B_i / sum(B))` truncated, then divided by their GCD.
pub fn linux_auto_weights(bw: &[f64]) -> Vec<u32> {
    let sum: f64 = bw.iter().sum();
    reduce(bw.iter().map(|&b| ((32.0 * b / sum) as u32).max(1)).collect())
}

/// A node policy's own part: the node for a first touch (`PlacementPolicy::choose_node`).
pub trait NodeChooser: Send {
    fn choose_node(&mut self, fault: &NodeFault) -> Option<u32>;
}

/// A `NodeChooser` as a `PlacementPolicy`: what every node policy shares (no colours: frames
/// come in the node's baseline order; the OS model calls `choose_node`, never `place`).
pub struct ByNode<C> {
    name: &'static str,
    space: ColourSpace,
    chooser: C,
}

impl<C: NodeChooser + 'static> ByNode<C> {
    pub fn boxed(name: &'static str, chooser: C) -> Box<dyn PlacementPolicy> {
        Box::new(ByNode { name, space: ColourSpace::uncoloured(), chooser })
    }
}

impl<C: NodeChooser> PlacementPolicy for ByNode<C> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.space
    }
    fn colours_of(&self, _pid: u32) -> &[u32] {
        &[0]
    }
    fn place(&mut self, _pid: u32, _vpage: u64, _alloc: &mut BuddyAllocator) -> Result<Placement> {
        Err(Error::config("os.policy", format!("internal error: node policy {} asked for a colour", self.name)))
    }
    fn choose_node(&mut self, fault: &NodeFault) -> Option<u32> {
        self.chooser.choose_node(fault)
    }
}

/// Thread `t`'s slot of per-thread state, grown on first use.
pub fn per_thread<T: Default + Clone>(v: &mut Vec<T>, t: u32) -> &mut T {
    if v.len() <= t as usize {
        v.resize(t as usize + 1, T::default());
    }
    &mut v[t as usize]
}

/// The node of `set` nearest `from` (latency, then id); `from` itself when in `set`.
pub fn nearest_in(layout: &NodeLayout, from: u32, set: &[u32]) -> u32 {
    let row = &layout.latency_ns[from as usize];
    *set.iter()
        .min_by(|&&a, &&b| (a != from).cmp(&(b != from)).then(row[a as usize].total_cmp(&row[b as usize])).then(a.cmp(&b)))
        .expect("a non-empty set")
}

/// A thread's home memory node: its core's node, or the nearest node with memory.
pub fn home(layout: &NodeLayout, node: u32) -> u32 {
    nearest_in(layout, node, &layout.memory_nodes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_auto_weights_truncate_32_shares_and_divide_by_the_gcd() {
        assert_eq!(linux_auto_weights(&[2.0, 1.0]), vec![21, 10]);
        assert_eq!(linux_auto_weights(&[1.0, 1.0]), vec![1, 1]);
        assert_eq!(linux_auto_weights(&[10.0, 1.0]), vec![29, 2]);
        assert_eq!(linux_auto_weights(&[100.0, 1.0]), vec![31, 1]);
    }

    #[test]
    fn bandwidth_ratios_become_small_integers() {
        assert_eq!(integer_ratio(&[19.2, 9.6]), vec![2, 1]);
        assert_eq!(integer_ratio(&[19.2, 3.84]), vec![5, 1]);
        assert_eq!(integer_ratio(&[19.2, 1.92]), vec![10, 1]);
        assert_eq!(integer_ratio(&[3.0, 2.0, 1.0]), vec![3, 2, 1]);
        assert_eq!(integer_ratio(&[4.0, 3.0]), vec![4, 3]);
    }
}
