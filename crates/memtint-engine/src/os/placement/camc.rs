//! `camc`: the Pan thesis's Controller-Aware Memory Colouring (pan-camc-tintmalloc-refresh.md
//! §2.2). Each process (the thesis's RT task) owns private bank colours on its local node, the
//! node of its first thread's core (the nearest node with memory for a node without):
//! `colours_per_task` of them (default 1, the thesis's default), free ones chosen as `choose`
//! says (default "spread": bank indices the fewest processes hold on any node). When they
//! run out of frames it is given another free colour, its own node's first, then the nearest
//! node's (§2.2(e)). Every page it touches is coloured: CAMC colours the whole address space
//! (heap, stack, data, text), here every address of its trace.
//!
//! Colours are global, node-major (`node_colours.rs`); a colour is a bank colour of the node's
//! mapping (`ColourBits::bank_space`: the rank and bank bits above the page offset; channel bits
//! inside the page, as the Opteron's b6 interleave, make one colour cover both channels, §2.2(a)).
//! `os.colours` (one set per process, or per group with `os.groups`) fixes the colours instead,
//! as the thesis's same_bank, diff_bank and diff_controller experiments do; fixed colours never
//! grow. When no colour is left to give, a page is borrowed from the nearest node's buddy order
//! (counted as `colour_overflow_pages`), or with `os.strict` the run stops with an error (the
//! thesis's allocator returns NULL). The thesis returns colours at exit; processes here run to
//! the end of the run, so none are returned.

use super::node_colours::{flags, NodeColours};
use super::node_sets::home;
use super::{NodeFault, NodePlacement, Placement, PlacementPolicy, PolicyInfo};
use crate::error::{Error, Result};
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{colour_list_text, ColourSpace};
use crate::os::nodes::NodeLayout;
use crate::params::{Bound, ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.camc]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CamcParams {
    /// Colours a process is given at start (the thesis's `color_num`, default 1).
    pub colours_per_task: u32,
    /// Which free colour of a node a process is given (the thesis does not say): "spread"
    /// (default: the one whose index within the node the fewest processes on any node hold, so
    /// that where bank bits are LLC set bits, as on the Opteron, tasks on different nodes do not
    /// share LLC sets either) or "lowest" (the lowest free one: every node's first task gets the
    /// same bank index, and the same LLC sets).
    pub choose: String,
}

impl Default for CamcParams {
    fn default() -> Self {
        CamcParams { colours_per_task: 1, choose: "spread".into() }
    }
}

impl Params for CamcParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        const COLOURS: Bound = Bound { min: 1, max: 4096, unit: "colours", why: "a machine of 64 nodes x 64 bank colours has 4096" };
        COLOURS.check_params(&[("colours_per_task", self.colours_per_task as u64)])?;
        match self.choose.as_str() {
            "spread" | "lowest" => Ok(()),
            other => Err(("choose", format!("unknown choice '{other}'; choose spread or lowest"))),
        }
    }
}

pub struct Camc {
    nc: NodeColours,
    layout: NodeLayout,
    /// Colour sets (one per process, or per group) and each process's set.
    sets: Vec<Vec<u32>>,
    set_of: Vec<u32>,
    /// Per set: its home node.
    home: Vec<u32>,
    /// Global colour -> the set owning it.
    owner: Vec<Option<u32>>,
    /// Sets may be given more colours (not with explicit `os.colours`).
    grows: bool,
    /// `choose = "spread"`.
    spread: bool,
    strict: bool,
}

impl Camc {
    fn new(cfg: &crate::os::OsConfig, space: ColourSpace, processes: u32, m: &super::MachineView) -> Result<Self> {
        let p: CamcParams = cfg.params(INFO.name, &[])?;
        let nc = NodeColours::new(space, m.nodes, cfg, processes)?;
        // A process's home: its first thread's core's node.
        let process_home = |pid: u32| {
            let core = m.threads.iter().find(|t| t.process == pid).map_or(pid % m.cores.max(1), |t| t.core);
            home(m.nodes, m.nodes.node_of_core(core))
        };
        let set_of: Vec<u32> = match &cfg.groups {
            Some(g) => {
                if g.len() != processes as usize {
                    return Err(Error::config(
                        "os.groups",
                        format!("gives a colour set for {} processes, but there are {processes}", g.len()),
                    ));
                }
                g.clone()
            }
            None => (0..processes).collect(),
        };
        let set_count = set_of.iter().max().map_or(0, |&s| s + 1);
        let home: Vec<u32> =
            (0..set_count).map(|s| set_of.iter().position(|&x| x == s).map_or(0, |pid| process_home(pid as u32))).collect();
        let mut owner = vec![None; nc.count() as usize];
        let sets = match &cfg.colours {
            Some(sets) => {
                if sets.len() as u32 != set_count {
                    return Err(Error::config(
                        "os.colours",
                        format!("gives {} colour sets for {set_count} processes or groups; give one each", sets.len()),
                    ));
                }
                for (s, set) in sets.iter().enumerate() {
                    if set.is_empty() {
                        return Err(Error::config(format!("os.colours[{s}]"), "is empty"));
                    }
                    for (j, &c) in set.iter().enumerate() {
                        nc.check(c, &format!("os.colours[{s}][{j}]"))?;
                        if let Some(o) = owner[c as usize].replace(s as u32) {
                            return Err(Error::config(
                                format!("os.colours[{s}][{j}]"),
                                format!("colour {c} is also in set {o}; colours are private (share a set with os.groups)"),
                            ));
                        }
                    }
                }
                sets.clone()
            }
            None => {
                let mut sets = vec![Vec::new(); set_count as usize];
                for s in 0..set_count {
                    for _ in 0..p.colours_per_task {
                        let Some(c) = free_colour(&nc, &m.nodes.by_distance(home[s as usize]), &owner, p.choose == "spread") else {
                            return Err(Error::config(
                                "os.camc.colours_per_task",
                                format!(
                                    "process {s} needs a colour but all {} are taken ({} per node x {} nodes, {} per process); \
                                     run fewer processes, give fewer colours each, or share sets with os.groups",
                                    nc.count(),
                                    nc.per_node(),
                                    nc.memory_nodes.len(),
                                    p.colours_per_task
                                ),
                            ));
                        };
                        owner[c as usize] = Some(s);
                        sets[s as usize].push(c);
                    }
                }
                sets
            }
        };
        Ok(Camc {
            grows: cfg.colours.is_none(),
            spread: p.choose == "spread",
            strict: cfg.strict,
            nc,
            layout: m.nodes.clone(),
            sets,
            set_of,
            home,
            owner,
        })
    }

    /// A frame of set `s`'s colours, its nodes nearest its home first.
    fn from_set(&mut self, s: u32, allocs: &mut [Option<BuddyAllocator>]) -> Option<(u32, u32)> {
        for node in self.layout.by_distance(self.home[s as usize]) {
            let local: Vec<u32> =
                self.sets[s as usize].iter().filter(|&&c| self.nc.node_of(c) == node).map(|&c| self.nc.local(c)).collect();
            if local.is_empty() {
                continue;
            }
            if let Some(f) = self.nc.take(s, node, &flags(self.nc.per_node(), local), allocs) {
                return Some((node, f));
            }
        }
        None
    }
}

/// A colour no set owns, on the first of `nodes` that has one: the lowest, or with `spread` the
/// one whose index within the node is owned on the fewest nodes (then the lowest).
fn free_colour(nc: &NodeColours, nodes: &[u32], owner: &[Option<u32>], spread: bool) -> Option<u32> {
    let held = |l: u32| (0..nc.count()).filter(|&g| nc.local(g) == l && owner[g as usize].is_some()).count();
    nodes.iter().find_map(|&n| {
        let free = (0..nc.per_node()).filter(|&l| owner[nc.global(n, l) as usize].is_none());
        let l = if spread { free.min_by_key(|&l| (held(l), l)) } else { free.min() }?;
        Some(nc.global(n, l))
    })
}

impl PlacementPolicy for Camc {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.nc.space
    }
    fn colours_of(&self, pid: u32) -> &[u32] {
        &self.sets[self.set_of[pid as usize] as usize]
    }
    fn place(&mut self, _pid: u32, _vpage: u64, _alloc: &mut BuddyAllocator) -> Result<Placement> {
        Err(Error::config("os.policy", "internal error: camc places on nodes"))
    }
    fn place_on_nodes(&mut self, fault: &NodeFault, allocs: &mut [Option<BuddyAllocator>]) -> Result<NodePlacement> {
        let s = self.set_of[fault.pid as usize];
        loop {
            if let Some((node, frame)) = self.from_set(s, allocs) {
                return Ok(NodePlacement { node, placed: Placement { frame, borrowed: false } });
            }
            // Its colours are full: CAMC gives it another (§2.2(e)).
            if !self.grows {
                break;
            }
            let near = self.layout.by_distance(self.home[s as usize]);
            let mut given = None;
            while let Some(c) = free_colour(&self.nc, &near, &self.owner, self.spread) {
                let has = allocs[self.nc.node_of(c) as usize].as_ref().is_some_and(|a| a.free_of_colour(self.nc.local(c)) > 0);
                // A colour with no free frame left is claimed by nobody's use and passed over.
                self.owner[c as usize] = Some(if has { s } else { u32::MAX });
                if has {
                    given = Some(c);
                    break;
                }
            }
            let Some(c) = given else { break };
            self.sets[s as usize].push(c);
        }
        if self.strict {
            return Err(Error::config(
                "os.colours",
                format!(
                    "process {} (colours {}): no free frame left in its colours and no free colour to give it; \
                     set os.strict = false to borrow pages",
                    fault.pid,
                    colour_list_text(&self.sets[s as usize])
                ),
            ));
        }
        match self.nc.any_near(&self.layout, self.home[s as usize], allocs) {
            Some((node, frame)) => Ok(NodePlacement { node, placed: Placement { frame, borrowed: true } }),
            None => Err(Error::config("os", format!("out of physical memory under policy camc when process {} faults", fault.pid))),
        }
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new(
    "camc",
    "controller-aware colouring (Pan): each process private bank colours on its local node, more when they fill",
    |cfg, bits, processes, m| Ok(Box::new(Camc::new(cfg, bits.bank_space()?, processes, m)?)),
)
.colours_nodes()
.needs("bank bits above the page offset")
.params(ParamSchema::of::<CamcParams>(&[]))
.reads_keys(&["colours", "groups", "frame_order", "strict"])
.mechanism("controller-aware bank colouring");
