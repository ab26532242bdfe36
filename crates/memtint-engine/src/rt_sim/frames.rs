//! The pages of a real-time run's tasks and attackers: each frame handed out once, by rank in
//! address order or by bank colour (node-major, as `os::placement::node_colours` numbers them).

use super::PAGE;
use crate::config::MemoryConfig;
use crate::dram::DramAddress;
use crate::error::{Error, Result};
use crate::os::colour::{ColourBits, ColourSpace};
use std::collections::{HashSet, VecDeque};

/// Physical pages, each handed out once: by rank in address order, or by bank colour.
///
/// A rank bit below the page offset (`opteron-6128`'s b7) varies inside every page, so a page
/// spans the ranks that differ in it: pages are chosen by the rank bits above the offset alone,
/// and a group of ranks that splits such pages (a colour of Colored Refresh) is refused.
pub(super) struct Frames {
    mapping: crate::mapping::AddressMapping,
    next: u64,
    limit: u64,
    /// Per rank class (a rank with its in-page bits cleared): pages met on the way to another.
    spare: Vec<VecDeque<u64>>,
    taken: HashSet<u64>,
    colours: Option<BankColours>,
    /// Rank bits that vary inside a page, with their address bits.
    in_page: Vec<(usize, Vec<u32>)>,
    /// `in_page`'s rank bits as a mask.
    in_page_mask: u32,
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
        let bits = ColourBits::new(&cfg.mapping, 0..0, PAGE.trailing_zeros(), &[])?;
        let in_page: Vec<(usize, Vec<u32>)> =
            bits.not_controllable().iter().filter(|n| n.field == "rank").map(|n| (n.bit, n.address_bits.clone())).collect();
        let in_page_mask = in_page.iter().fold(0u32, |m, (b, _)| m | 1 << b);
        let colours = if colours {
            let space = bits.bank_space()?;
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
            in_page,
            in_page_mask,
        })
    }

    /// Refuses rank groups a page cannot lie within: one holding a rank but not the ranks its
    /// pages share through an in-page rank bit. `schedule` names who chose the groups.
    pub(super) fn check_rank_groups(&self, groups: &[Vec<u32>], schedule: &str) -> Result<()> {
        for g in groups {
            for &r in g {
                let Some((bit, address_bits)) = self.in_page.iter().find(|(b, _)| !g.contains(&(r ^ 1 << b))) else { continue };
                let bits: Vec<String> = address_bits.iter().map(|b| format!("b{b}")).collect();
                return Err(Error::config(
                    "machine",
                    format!(
                        "the {schedule} schedule keeps pages in the ranks of their colour ({g:?}), but mapping {} selects rank bit \
                         {bit} with {}, inside the {} KiB page: every page spans ranks {r} and {}, so rank colouring is impossible \
                         on this machine (use one whose rank bits lie above the page offset, e.g. ddr4-2400-8r)",
                        self.mapping.name(),
                        bits.join("^"),
                        PAGE / 1024,
                        r ^ 1 << bit,
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The lowest free page of `rank` (of its class, when a rank bit lies inside the page); pages
    /// of other classes met on the way are kept for later.
    pub(super) fn take_rank(&mut self, rank: u32) -> Result<u64> {
        let class = rank & !self.in_page_mask;
        while let Some(p) = self.spare[class as usize].pop_front() {
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
            let c = d.rank & !self.in_page_mask;
            if c == class {
                self.taken.insert(p);
                return Ok(p);
            }
            self.spare[c as usize].push_back(p);
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
