//! The memory system: the address mapping plus one controller per channel. Decodes each
//! request's physical address once and routes it to its channel (the multicore driver's and
//! tests' router; the DRAM-trace driver routes with its own loop, `dram_sim/routing.rs`).
//! A multi-node machine (docs/numa.md) has every node's channels in one list, node-major, and
//! routes an address to its node's memory (the nodes' memories are concatenated) and there by
//! the node's own mapping; node-to-node latency and links are the multicore driver's.

use crate::config::MemoryConfig;
use crate::controller::{ChannelController, Completion, Controller, Implementation, LaneController, LaneSettings, Origin};
use crate::dram::{CommandRecord, DramAddress};
use crate::error::Result;
use crate::mapping::AddressMapping;
use crate::vector_isa::VectorIsa;
use crate::{Cycle, NEVER};

/// The channels' controllers, all of one implementation (`controller.implementation`) in that
/// implementation's typed list, so the loops over them are compiled for it (a per-channel enum
/// cost the general path 5-10 % through code layout: bench/README.md).
pub enum Channels {
    General(Vec<ChannelController>),
    Lanes(Vec<LaneController>),
}

pub struct MemorySystem {
    mapping: AddressMapping,
    channels: Channels,
    line_mask: u64,
    /// The last address decoded and its coordinates: a driver retries a refused request (its
    /// queue full) after every tick, and decoding is most of a refused call's cost.
    last_decoded: (u64, DramAddress),
    /// Several nodes: where each node's memory lies and its channels (`None`: one node).
    nodes: Option<Box<[NodeRoute]>>,
}

/// One memory node's part of physical memory and of the channel list.
struct NodeRoute {
    /// The node's index among all nodes (nodes without memory have no route).
    node: u32,
    base: u64,
    end: u64,
    mapping: AddressMapping,
    channels: std::ops::Range<usize>,
}

impl MemorySystem {
    pub fn new(cfg: &MemoryConfig) -> Result<Self> {
        Self::with_lane_settings(cfg, LaneSettings::default())
    }

    /// `new`, with `lanes` for lane controllers (no effect on general ones).
    pub fn with_lane_settings(cfg: &MemoryConfig, lanes: LaneSettings) -> Result<Self> {
        if let Some(t) = &cfg.topology {
            return Self::with_nodes(cfg, t, lanes);
        }
        let c = &cfg.controller;
        let (std, org, timing) = (cfg.device.standard, &cfg.org, &cfg.timing);
        let channels = match Implementation::resolve(std, org, timing, c)? {
            Implementation::General => {
                Channels::General((0..org.channels).map(|ch| ChannelController::new(ch, std, org, timing, c)).collect::<Result<_>>()?)
            }
            Implementation::Lanes => Channels::Lanes(
                (0..org.channels).map(|ch| LaneController::with_settings(ch, std, org, timing, c, lanes)).collect::<Result<_>>()?,
            ),
        };
        let line_mask = !(org.burst_bytes() - 1);
        // `u64::MAX` is never a line address (its offset bits are set), so the first decode runs.
        let last_decoded = (u64::MAX, DramAddress::default());
        Ok(MemorySystem { mapping: cfg.mapping.clone(), channels, line_mask, last_decoded, nodes: None })
    }

    /// Every memory node's controllers in one list. Lane controllers when every node takes
    /// them, else general ones everywhere (the two issue the same commands).
    fn with_nodes(cfg: &MemoryConfig, t: &crate::config::Topology, lanes: LaneSettings) -> Result<Self> {
        let mems: Vec<(u32, &MemoryConfig)> =
            t.memories.iter().enumerate().filter_map(|(i, m)| m.as_ref().map(|m| (i as u32, m))).collect();
        let mut all_lanes = true;
        for (_, m) in &mems {
            all_lanes &= Implementation::resolve(m.device.standard, &m.org, &m.timing, &m.controller)? == Implementation::Lanes;
        }
        let (mut general, mut lane, mut routes) = (Vec::new(), Vec::new(), Vec::new());
        for (node, m) in mems {
            let (std, org, timing, c) = (m.device.standard, &m.org, &m.timing, &m.controller);
            let first = general.len() + lane.len();
            for ch in 0..org.channels {
                if all_lanes {
                    lane.push(LaneController::with_settings(ch, std, org, timing, c, lanes)?);
                } else {
                    general.push(ChannelController::new(ch, std, org, timing, c)?);
                }
            }
            let base = t.bases[node as usize];
            let end = base + (1u64 << m.mapping.capacity_bits());
            routes.push(NodeRoute { node, base, end, mapping: m.mapping.clone(), channels: first..first + org.channels as usize });
        }
        let channels = if all_lanes { Channels::Lanes(lane) } else { Channels::General(general) };
        Ok(MemorySystem {
            mapping: cfg.mapping.clone(),
            channels,
            line_mask: !(cfg.org.burst_bytes() - 1),
            last_decoded: (u64::MAX, DramAddress::default()),
            nodes: Some(routes.into_boxed_slice()),
        })
    }

    /// The node each channel of `channels()` belongs to (all 0 on a one-node machine).
    pub fn channel_nodes(&self) -> Vec<u32> {
        let n = self.channels().len();
        match &self.nodes {
            None => vec![0; n],
            Some(rs) => (0..n).map(|c| rs.iter().find(|r| r.channels.contains(&c)).map_or(0, |r| r.node)).collect(),
        }
    }

    /// The memory nodes' channel ranges in `channels()`, by node (one range on a one-node machine).
    pub fn node_channels(&self) -> Vec<(u32, std::ops::Range<usize>)> {
        match &self.nodes {
            None => vec![(0, 0..self.channels().len())],
            Some(rs) => rs.iter().map(|r| (r.node, r.channels.clone())).collect(),
        }
    }

    /// The commands node channels `range` issued since the last call (per-node checking).
    pub fn drain_channel_commands(&mut self, range: std::ops::Range<usize>, out: &mut Vec<CommandRecord>) {
        self.channels_mut().skip(range.start).take(range.len()).for_each(|c| c.drain_log_into(out))
    }

    pub fn mapping(&self) -> &AddressMapping {
        &self.mapping
    }

    /// The channels' controllers, in channel order.
    pub fn channels(&self) -> Vec<&dyn Controller> {
        let (general, lanes): (&[ChannelController], &[LaneController]) = match &self.channels {
            Channels::General(cs) => (cs, &[]),
            Channels::Lanes(cs) => (&[], cs),
        };
        general.iter().map(|c| c as &dyn Controller).chain(lanes.iter().map(|c| c as &dyn Controller)).collect()
    }

    /// The channels' controllers, in channel order.
    fn channels_mut(&mut self) -> impl Iterator<Item = &mut dyn Controller> {
        let (general, lanes): (&mut [ChannelController], &mut [LaneController]) = match &mut self.channels {
            Channels::General(cs) => (cs, &mut []),
            Channels::Lanes(cs) => (&mut [], cs),
        };
        general.iter_mut().map(|c| c as &mut dyn Controller).chain(lanes.iter_mut().map(|c| c as &mut dyn Controller))
    }

    /// The lane controllers (empty unless the implementation is lanes).
    pub fn lane_controllers(&self) -> &[LaneController] {
        match &self.channels {
            Channels::General(_) => &[],
            Channels::Lanes(cs) => cs,
        }
    }

    /// The implementation the controllers are.
    pub fn implementation(&self) -> Implementation {
        match self.channels {
            Channels::General(_) => Implementation::General,
            Channels::Lanes(_) => Implementation::Lanes,
        }
    }

    /// The level the controllers' `tick` and `enqueue` run at (general controllers: the baseline).
    pub fn vector_isa(&self) -> VectorIsa {
        self.lane_controllers().first().map_or(VectorIsa::Baseline, |c| c.vector_isa())
    }

    pub fn record_commands(&mut self, on: bool) {
        self.channels_mut().for_each(|c| c.record_commands(on))
    }

    pub fn drain_commands(&mut self, out: &mut Vec<CommandRecord>) {
        self.channels_mut().for_each(|c| c.drain_log_into(out))
    }

    /// The mapping, the line mask and the controllers, for the DRAM-trace driver
    /// (`dram_sim/routing.rs`), which routes requests itself.
    pub(crate) fn parts(&mut self) -> (&AddressMapping, u64, &mut Channels) {
        (&self.mapping, self.line_mask, &mut self.channels)
    }

    /// Try to queue a request at `now`; false if its channel's queue is full.
    #[inline]
    pub fn try_enqueue(&mut self, now: Cycle, id: u64, addr: u64, is_write: bool, origin: Origin) -> bool {
        if self.nodes.is_some() {
            return self.enqueue_on_node(now, id, addr, is_write, origin);
        }
        let addr = addr & self.line_mask;
        if self.last_decoded.0 != addr {
            self.last_decoded = (addr, self.mapping.decode(addr));
        }
        let dram = self.last_decoded.1;
        match &mut self.channels {
            Channels::General(cs) => enqueue_on(cs, now, id, addr, &dram, is_write, origin),
            Channels::Lanes(cs) => enqueue_on(cs, now, id, addr, &dram, is_write, origin),
        }
    }

    /// `try_enqueue` on a multi-node machine: the address's node, then its channel there.
    #[inline(never)]
    fn enqueue_on_node(&mut self, now: Cycle, id: u64, addr: u64, is_write: bool, origin: Origin) -> bool {
        let addr = addr & self.line_mask;
        let routes = self.nodes.as_ref().expect("called with nodes");
        let Some(r) = routes.iter().find(|r| addr >= r.base && addr < r.end) else {
            debug_assert!(false, "address {addr:#x} beyond every node's memory");
            return false;
        };
        // The controller sees its node-local coordinates; its index is the node's first plus the channel.
        let dram = r.mapping.decode(addr - r.base);
        let i = r.channels.start + dram.channel as usize;
        match &mut self.channels {
            Channels::General(cs) => enqueue_at(&mut cs[i], now, id, addr, &dram, is_write, origin),
            Channels::Lanes(cs) => enqueue_at(&mut cs[i], now, id, addr, &dram, is_write, origin),
        }
    }

    /// Tick every channel whose next event has come (all of them when `every_cycle`).
    #[inline]
    pub fn tick(&mut self, now: Cycle, done: &mut Vec<Completion>, every_cycle: bool) {
        match &mut self.channels {
            Channels::General(cs) => tick_due(cs, now, done, every_cycle),
            Channels::Lanes(cs) => tick_due(cs, now, done, every_cycle),
        }
    }

    pub fn next_event(&self) -> Cycle {
        self.earliest(Next::Event)
    }

    /// `next_event` leaving out finishing transfers (`Controller::next_work`).
    pub fn next_work(&self) -> Cycle {
        self.earliest(Next::Work)
    }

    /// The cycle the next transfer finishes on any channel.
    pub fn next_completion(&self) -> Cycle {
        self.earliest(Next::Completion)
    }

    #[inline]
    fn earliest(&self, next: Next) -> Cycle {
        match &self.channels {
            Channels::General(cs) => earliest(cs, next),
            Channels::Lanes(cs) => earliest(cs, next),
        }
    }

    pub fn is_idle(&self) -> bool {
        match &self.channels {
            Channels::General(cs) => cs.iter().all(|c| c.is_idle()),
            Channels::Lanes(cs) => cs.iter().all(|c| c.is_idle()),
        }
    }

    pub fn finish(&mut self, now: Cycle) {
        self.channels_mut().for_each(|c| c.finish(now))
    }
}

/// Queue a request on its channel of `cs` unless that queue is full.
#[inline(always)]
fn enqueue_on<C: Controller>(cs: &mut [C], now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) -> bool {
    let c = &mut cs[dram.channel as usize];
    if !c.can_accept(is_write) {
        return false;
    }
    c.enqueue(now, id, addr, dram, is_write, origin);
    true
}

/// Queue a request on controller `c` unless its queue is full.
#[inline(always)]
fn enqueue_at<C: Controller>(c: &mut C, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) -> bool {
    if !c.can_accept(is_write) {
        return false;
    }
    c.enqueue(now, id, addr, dram, is_write, origin);
    true
}

/// Which of the controllers' next cycles `earliest` takes.
#[derive(Clone, Copy)]
enum Next {
    Event,
    Work,
    Completion,
}

/// The earliest `next` over `cs`.
#[inline(always)]
fn earliest<C: Controller>(cs: &[C], next: Next) -> Cycle {
    let at = |c: &C| match next {
        Next::Event => c.next_event(),
        Next::Work => c.next_work(),
        Next::Completion => c.next_completion(),
    };
    cs.iter().map(at).min().unwrap_or(NEVER)
}

/// Tick every controller of `cs` whose next event has come (all of them when `every_cycle`).
#[inline(always)]
fn tick_due<C: Controller>(cs: &mut [C], now: Cycle, done: &mut Vec<Completion>, every_cycle: bool) {
    for c in cs {
        if every_cycle || c.next_event() <= now {
            c.tick(now, |d| done.push(d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MachineConfig;

    #[test]
    fn completions_carry_the_thread_and_its_process() {
        let machine = MachineConfig::load("ddr4-2400").unwrap();
        let mut mem = MemorySystem::new(&MemoryConfig::resolve(&machine).unwrap()).unwrap();
        let origins = [Origin { source: 5, process: 2 }, Origin { source: 6, process: 2 }, Origin::single(9)];
        for (i, &o) in origins.iter().enumerate() {
            assert!(mem.try_enqueue(0, i as u64, (i as u64) << 20, i == 1, o));
        }
        let (mut done, mut now) = (Vec::new(), 0);
        while done.len() < origins.len() {
            mem.tick(now, &mut done, false);
            now = mem.next_event().max(now + 1);
        }
        done.sort_by_key(|c| c.id);
        let got: Vec<_> = done.iter().map(|c| Origin { source: c.source, process: c.process }).collect();
        assert_eq!(got, origins);
    }
}
