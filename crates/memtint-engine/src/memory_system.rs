//! The memory system: the address mapping plus one controller per channel. Decodes each
//! request's physical address once and routes it to its channel.

use crate::config::MemoryConfig;
use crate::controller::{ChannelController, Completion, ControllerRef, Implementation, LaneController, Origin};
use crate::dram::{CommandRecord, DramAddress};
use crate::error::Result;
use crate::mapping::AddressMapping;
use crate::vector_isa::VectorIsa;
use crate::{Cycle, NEVER};

/// The controllers are of one implementation (`controller.implementation`), kept in that
/// implementation's typed list (the other is empty), so the per-request loops are monomorphic
/// (a per-channel enum cost the general path 5-10 % through code layout: bench/README.md).
pub struct MemorySystem {
    mapping: AddressMapping,
    general: Vec<ChannelController>,
    lanes: Vec<LaneController>,
    line_mask: u64,
    /// The last address decoded and its coordinates: a driver retries a refused request (its
    /// queue full) after every tick, and decoding is most of a refused call's cost.
    last_decoded: (u64, DramAddress),
}

/// Apply `$body` to every channel controller (`$c`), whichever list holds them.
macro_rules! each {
    ($self:expr, $c:ident => $body:expr) => {{
        for $c in $self.general.iter_mut() {
            $body;
        }
        for $c in $self.lanes.iter_mut() {
            $body;
        }
    }};
}

/// The minimum of `$e` over every channel controller (`$c`).
macro_rules! min_over {
    ($self:expr, $c:ident => $e:expr) => {{
        let a = $self.general.iter().map(|$c| $e).min().unwrap_or(NEVER);
        let b = $self.lanes.iter().map(|$c| $e).min().unwrap_or(NEVER);
        a.min(b)
    }};
}

impl MemorySystem {
    pub fn new(cfg: &MemoryConfig) -> Result<Self> {
        let c = &cfg.controller;
        let (mut general, mut lanes) = (Vec::new(), Vec::new());
        let implementation = Implementation::resolve(cfg.device.standard, &cfg.org, &cfg.timing, c)?;
        for ch in 0..cfg.org.channels {
            match implementation {
                Implementation::General => general.push(ChannelController::new(ch, cfg.device.standard, &cfg.org, &cfg.timing, c)?),
                Implementation::Lanes => lanes.push(LaneController::new(ch, cfg.device.standard, &cfg.org, &cfg.timing, c)?),
            }
        }
        let line_mask = !(cfg.org.burst_bytes() - 1);
        // `u64::MAX` is never a line address (its offset bits are set), so the first decode runs.
        let last_decoded = (u64::MAX, DramAddress::default());
        Ok(MemorySystem { mapping: cfg.mapping.clone(), general, lanes, line_mask, last_decoded })
    }

    pub fn mapping(&self) -> &AddressMapping {
        &self.mapping
    }

    /// The channels' controllers, in channel order.
    pub fn channels(&self) -> Vec<ControllerRef<'_>> {
        self.general.iter().map(ControllerRef::General).chain(self.lanes.iter().map(ControllerRef::Lanes)).collect()
    }

    /// The implementation the controllers are.
    pub fn implementation(&self) -> Implementation {
        if self.lanes.is_empty() {
            Implementation::General
        } else {
            Implementation::Lanes
        }
    }

    /// Lane controllers rebase their 32-bit lane offsets every `cycles` (tests: many rebases in
    /// a short run); no effect on general controllers.
    #[doc(hidden)]
    pub fn set_rebase_after(&mut self, cycles: u64) {
        for c in &mut self.lanes {
            c.set_rebase_after(cycles);
        }
    }

    /// Lane controllers renumber their requests' ages once they reach `ages` (tests: many
    /// renumberings in a short run; `LaneController::set_age_limit`); no effect on general ones.
    #[doc(hidden)]
    pub fn set_age_limit(&mut self, ages: u32) {
        for c in &mut self.lanes {
            c.set_age_limit(ages);
        }
    }

    /// The instruction-set level the lane controllers' `tick` and `enqueue` run at (default:
    /// the best this CPU runs; the caller checks the CPU runs `isa`). Results are the same.
    pub fn set_vector_isa(&mut self, isa: VectorIsa) {
        for c in self.lanes.iter_mut() {
            c.set_vector_isa(isa);
        }
    }

    /// The level the controllers' `tick` and `enqueue` run at (general controllers: the baseline).
    pub fn vector_isa(&self) -> VectorIsa {
        self.lanes.first().map_or(VectorIsa::Baseline, |c| c.vector_isa())
    }

    pub fn record_commands(&mut self, on: bool) {
        each!(self, c => c.record_commands(on))
    }

    pub fn drain_commands(&mut self, out: &mut Vec<CommandRecord>) {
        each!(self, c => c.drain_log_into(out))
    }

    /// The mapping, the line mask and the lane controllers, for the fused closed-loop driver
    /// (`fused_loop.rs`); the controller list is empty unless the implementation is lanes.
    pub(crate) fn lane_parts(&mut self) -> (&AddressMapping, u64, &mut [LaneController]) {
        (&self.mapping, self.line_mask, &mut self.lanes)
    }

    /// Try to queue a request at `now`; false if its channel's queue is full.
    #[inline]
    pub fn try_enqueue(&mut self, now: Cycle, id: u64, addr: u64, is_write: bool, origin: Origin) -> bool {
        let addr = addr & self.line_mask;
        if self.last_decoded.0 != addr {
            self.last_decoded = (addr, self.mapping.decode(addr));
        }
        let dram = self.last_decoded.1;
        let ch = dram.channel as usize;
        if self.lanes.is_empty() {
            let c = &mut self.general[ch];
            if !c.can_accept(is_write) {
                return false;
            }
            c.enqueue(now, id, addr, &dram, is_write, origin);
        } else {
            let c = &mut self.lanes[ch];
            if !c.can_accept(is_write) {
                return false;
            }
            c.enqueue(now, id, addr, &dram, is_write, origin);
        }
        true
    }

    /// Tick every channel whose next event has come (all of them when `every_cycle`).
    #[inline]
    pub fn tick(&mut self, now: Cycle, done: &mut Vec<Completion>, every_cycle: bool) {
        each!(self, c => if every_cycle || c.next_event() <= now {
            c.tick(now, done);
        })
    }

    pub fn next_event(&self) -> Cycle {
        min_over!(self, c => c.next_event())
    }

    /// `next_event` leaving out finishing transfers (see `ChannelController::next_work`).
    pub fn next_work(&self) -> Cycle {
        min_over!(self, c => c.next_work())
    }

    /// The cycle the next transfer finishes on any channel.
    pub fn next_completion(&self) -> Cycle {
        min_over!(self, c => c.next_completion())
    }

    pub fn is_idle(&self) -> bool {
        self.general.iter().all(|c| c.is_idle()) && self.lanes.iter().all(|c| c.is_idle())
    }

    pub fn finish(&mut self, now: Cycle) {
        each!(self, c => c.finish(now))
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
