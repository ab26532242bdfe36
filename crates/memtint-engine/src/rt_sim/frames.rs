//! The pages of a real-time run's tasks and attackers: each frame handed out once, by rank in
//! address order or by bank colour (node-major, as `os::placement::node_colours` numbers them).

use super::PAGE;
use crate::config::MemoryConfig;
use crate::dram::DramAddress;
use crate::error::{Error, Result};
use crate::os::colour::{ColourBits, ColourSpace};
use std::collections::{HashSet, VecDeque};

/// Physical pages, each handed out once: by rank in address order, or by bank colour.
pub(super) struct Frames {
    mapping: crate::mapping::AddressMapping,
    next: u64,
    limit: u64,
    spare: Vec<VecDeque<u64>>,
    taken: HashSet<u64>,
    colours: Option<BankColours>,
}

/// Bank colours over the machine, node-major (`os::placement::node_colours`'s numbering).
struct BankColours {
    space: ColourSpace,
    /// The memory nodes' frames.
    nodes: Vec<std::ops::Range<u32>>,
    /// Per global colour: the next frame to look at.
    cursor: Vec<u64>,
}

impl Frames {
    pub(super) fn new(cfg: &MemoryConfig, colours: bool) -> Result<Self> {
        let colours = if colours {
            let space = ColourBits::new(&cfg.mapping, 0..0, PAGE.trailing_zeros(), &[])?.bank_space()?;
            let layout = cfg.node_layout();
            let nodes: Vec<_> = layout.memory_nodes().iter().map(|&n| layout.nodes[n as usize].frames.clone()).collect();
            let per = space.count() as usize;
            let cursor = (0..per * nodes.len()).map(|g| nodes[g / per].start as u64).collect();
            Some(BankColours { space, nodes, cursor })
        } else {
            None
        };
        Ok(Frames {
            mapping: cfg.mapping.clone(),
            next: 0,
            limit: cfg.memory_bytes() / PAGE,
            spare: vec![VecDeque::new(); cfg.org.ranks as usize],
            taken: HashSet::new(),
            colours,
        })
    }

    /// The lowest free page of `rank`; pages of other ranks met on the way are kept for later.
    pub(super) fn take_rank(&mut self, rank: u32) -> Result<u64> {
        while let Some(p) = self.spare[rank as usize].pop_front() {
            if self.taken.insert(p) {
                return Ok(p);
            }
        }
        while self.next < self.limit {
            let p = self.next;
            self.next += 1;
            if self.taken.contains(&p) {
                continue;
            }
            let d: DramAddress = self.mapping.decode(p * PAGE);
            if d.rank == rank {
                self.taken.insert(p);
                return Ok(p);
            }
            self.spare[d.rank as usize].push_back(p);
        }
        Err(Error::config("tasks", format!("rank {rank} has no free page left for the tasks' footprints")))
    }

    /// Page `i` of an owner of `colours`: the lowest free page of its colours in turn.
    pub(super) fn take_colour(&mut self, colours: &[u32], i: usize, key: &str) -> Result<u64> {
        let bc = self.colours.as_mut().expect("built with colours");
        let per = bc.space.count();
        let count = per * bc.nodes.len() as u32;
        if let Some(&c) = colours.iter().find(|&&c| c >= count) {
            return Err(Error::config(key, format!("colour {c} is beyond the machine's {count} bank colours ({per} per memory node)")));
        }
        let g = colours[i % colours.len()];
        let node = &bc.nodes[(g / per) as usize];
        let cursor = &mut bc.cursor[g as usize];
        while *cursor < node.end as u64 {
            let p = *cursor;
            *cursor += 1;
            let local = bc.space.colour_of((p - node.start as u64) * PAGE);
            if local == g % per && self.taken.insert(p) {
                return Ok(p);
            }
        }
        Err(Error::config(key, format!("bank colour {g} has no free page left")))
    }
}
