//! The memory system: the address mapping plus one controller per channel. Decodes each
//! request's physical address once and routes it to its channel.

use crate::config::MemoryConfig;
use crate::controller::{ChannelController, Completion, Origin};
use crate::dram::CommandRecord;
use crate::error::Result;
use crate::mapping::AddressMapping;
use crate::{Cycle, NEVER};

pub struct MemorySystem {
    mapping: AddressMapping,
    channels: Vec<ChannelController>,
    line_mask: u64,
}

impl MemorySystem {
    pub fn new(cfg: &MemoryConfig) -> Result<Self> {
        let channels = (0..cfg.org.channels)
            .map(|ch| ChannelController::new(ch, &cfg.org, &cfg.timing, &cfg.controller))
            .collect::<Result<Vec<_>>>()?;
        Ok(MemorySystem { mapping: cfg.mapping.clone(), channels, line_mask: !(cfg.org.burst_bytes() - 1) })
    }

    pub fn mapping(&self) -> &AddressMapping {
        &self.mapping
    }

    pub fn channels(&self) -> &[ChannelController] {
        &self.channels
    }

    pub fn record_commands(&mut self, on: bool) {
        for c in &mut self.channels {
            c.record_commands(on);
        }
    }

    pub fn drain_commands(&mut self, out: &mut Vec<CommandRecord>) {
        for c in &mut self.channels {
            c.drain_log_into(out);
        }
    }

    /// Try to queue a request at `now`; false if its channel's queue is full.
    #[inline]
    pub fn try_enqueue(&mut self, now: Cycle, id: u64, addr: u64, is_write: bool, origin: Origin) -> bool {
        let addr = addr & self.line_mask;
        let dram = self.mapping.decode(addr);
        let ch = &mut self.channels[dram.channel as usize];
        if !ch.can_accept(is_write) {
            return false;
        }
        ch.enqueue(now, id, addr, &dram, is_write, origin);
        true
    }

    /// Tick every channel whose next event has come (all of them when `every_cycle`).
    #[inline]
    pub fn tick(&mut self, now: Cycle, done: &mut Vec<Completion>, every_cycle: bool) {
        for c in &mut self.channels {
            if every_cycle || c.next_event() <= now {
                c.tick(now, done);
            }
        }
    }

    pub fn next_event(&self) -> Cycle {
        self.channels.iter().map(|c| c.next_event()).min().unwrap_or(NEVER)
    }

    /// `next_event` leaving out finishing transfers (see `ChannelController::next_work`).
    pub fn next_work(&self) -> Cycle {
        self.channels.iter().map(|c| c.next_work()).min().unwrap_or(NEVER)
    }

    /// The cycle the next transfer finishes on any channel.
    pub fn next_completion(&self) -> Cycle {
        self.channels.iter().map(|c| c.next_completion()).min().unwrap_or(NEVER)
    }

    pub fn is_idle(&self) -> bool {
        self.channels.iter().all(|c| c.is_idle())
    }

    pub fn finish(&mut self, now: Cycle) {
        for c in &mut self.channels {
            c.finish(now);
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
