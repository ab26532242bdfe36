//! `tintmalloc`: the Pan thesis's TintMalloc (pan-camc-tintmalloc-refresh.md §3.2): each thread
//! gets frames that are at once on its node's controller, in its bank colours and in its LLC
//! colours (Algorithm 3's `color_list[MEM_ID][LLC_ID]`). The colours are the workload
//! description's `tint_init(node, bank colours, LLC colours)` per thread
//! (`[[os.tintmalloc.threads]]`), or derived from the threads' cores:
//! - the node is the thread's core's (threads are pinned, as the thesis assumes);
//! - a node's bank colours are split evenly, in contiguous runs, over groups of `bank_sharers`
//!   of its threads (1: private banks, the default; 0: all its threads share all its banks, the
//!   thesis's "LLC only");
//! - the LLC colours over groups of `llc_sharers` threads of the machine (1: private, the
//!   default; 0: shared, "MEM only"; 4 of 16 threads is "MEM+LLC(part)"). Bank and LLC colours
//!   are not independent where a bank bit is an LLC set bit (the Opteron's b15 and b16, §3.2(b)):
//!   an LLC colour goes only to a group holding a bank colour it agrees with, to the one with
//!   fewest so far.
//!
//! With `nodes = "interleave"` the colours ignore the node, as BPM does on a NUMA machine (the
//! thesis's node-unaware baseline, §3.4): bank colours are split over all the machine's threads
//! (in groups of `bank_sharers`), and a thread's frames lie in its colours on every memory node
//! in turn. BPM's colour lists span the whole physical memory, so which node a frame comes from
//! is whatever the list yields; memtint takes the nodes round-robin (an interleave) rather than
//! guess an address order.
//!
//! The thesis colours the heap only; a trace does not say which addresses are heap, so every
//! page a thread touches is coloured (as `camc`). When a thread's colours are full, a page is
//! borrowed from the nearest node's buddy order (`colour_overflow_pages`), or with `os.strict`
//! the run stops with an error (the thesis's allocator returns NULL).

use super::node_colours::{flags, NodeColours};
use super::node_sets::home;
use super::{MachineView, NodeFault, NodePlacement, Placement, PlacementPolicy, PolicyInfo};
use crate::error::{Error, Result};
use crate::os::buddy::BuddyAllocator;
use crate::os::colour::{colour_list_text, ColourBits, ColourFunction, ColourSpace};
use crate::os::nodes::NodeLayout;
use crate::os::OsConfig;
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// `[os.tintmalloc]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TintParams {
    /// Threads of a node sharing one set of its bank colours (1 private, 0 all of the node's).
    pub bank_sharers: u32,
    /// Threads of the machine sharing one set of LLC colours (1 private, 0 all).
    pub llc_sharers: u32,
    /// Each thread's colours, in thread order (empty: derived as above).
    pub threads: Vec<TintThread>,
    /// Where a thread's frames lie: on its node (`local`, TintMalloc) or on every memory node
    /// in turn (`interleave`: node-unaware colouring, BPM on a NUMA machine).
    pub nodes: NodeChoice,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeChoice {
    #[default]
    Local,
    Interleave,
}

impl Default for TintParams {
    fn default() -> Self {
        TintParams { bank_sharers: 1, llc_sharers: 1, threads: Vec::new(), nodes: NodeChoice::Local }
    }
}

impl Params for TintParams {}

/// One thread's `tint_init(node, bank colours, LLC colours)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TintThread {
    /// Its memory node (default: its core's).
    pub node: Option<u32>,
    /// Bank colours of the node (default: all).
    pub banks: Vec<u32>,
    /// LLC colours (default: all).
    pub llc: Vec<u32>,
}

/// The per-node space of bank and LLC bits together, and how a colour of it projects.
struct BankLlc {
    space: ColourSpace,
    banks: u32,
    llcs: u32,
    /// Per LLC colour bit: its bit in the combined colour.
    llc_at: Vec<u32>,
}

impl BankLlc {
    fn new(bits: &ColourBits) -> Result<Self> {
        let bank = bits.bank_space()?;
        let llc = bits.llc_space()?;
        let mut fs: Vec<ColourFunction> = bank.functions().to_vec();
        let mut llc_at = Vec::new();
        for f in llc.functions() {
            match fs.iter().position(|g| g.mask() == f.mask()) {
                Some(i) => llc_at.push(i as u32),
                None => {
                    llc_at.push(fs.len() as u32);
                    fs.push(*f);
                }
            }
        }
        Ok(BankLlc { space: ColourSpace::new("bank+llc", fs)?, banks: bank.count(), llcs: llc.count(), llc_at })
    }

    fn bank(&self, c: u32) -> u32 {
        c & (self.banks - 1)
    }

    fn llc(&self, c: u32) -> u32 {
        self.llc_at.iter().enumerate().fold(0, |x, (j, &i)| x | (c >> i & 1) << j)
    }

    /// Whether LLC colour `x` can hold a page of bank colour `b`.
    fn agree(&self, x: u32, b: u32) -> bool {
        (0..self.space.count()).any(|c| self.bank(c) == b && self.llc(c) == x)
    }
}

pub struct TintMalloc {
    nc: NodeColours,
    layout: NodeLayout,
    /// Per thread: its node and its local colours (flags over the per-node space).
    node: Vec<u32>,
    accept: Vec<Vec<bool>>,
    /// Per process: its threads' colours, global.
    colours: Vec<Vec<u32>>,
    strict: bool,
    /// `nodes = "interleave"`: per thread, the next memory node's position (`None`: local).
    turn: Option<Vec<usize>>,
}

impl TintMalloc {
    fn new(cfg: &OsConfig, bits: &ColourBits, processes: u32, m: &MachineView) -> Result<Self> {
        let p: TintParams = cfg.params(INFO.name, &[])?;
        let bl = BankLlc::new(bits)?;
        let threads = m.threads;
        let key = "os.tintmalloc";
        if !p.threads.is_empty() && p.threads.len() != threads.len() {
            return Err(Error::config(
                format!("{key}.threads"),
                format!("gives colours for {} threads, but the run has {}; give one entry per thread", p.threads.len(), threads.len()),
            ));
        }
        let core_node = |t: usize| home(m.nodes, m.nodes.node_of_core(threads[t].core));
        let (node, banks, llcs): (Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>) = if p.threads.is_empty() {
            derive(&bl, m, &p, core_node)?
        } else {
            let mut out = (Vec::new(), Vec::new(), Vec::new());
            for (t, d) in p.threads.iter().enumerate() {
                if p.nodes == NodeChoice::Interleave && d.node.is_some() {
                    return Err(Error::config(
                        format!("{key}.threads[{t}].node"),
                        "a node is given, but nodes = \"interleave\" puts every thread's pages on all nodes",
                    ));
                }
                let n = match d.node {
                    None => core_node(t),
                    Some(n) if n >= m.nodes.count() => {
                        return Err(Error::config(
                            format!("{key}.threads[{t}].node"),
                            format!("node {n} does not exist (nodes 0-{})", m.nodes.count() - 1),
                        ))
                    }
                    Some(n) if !m.nodes.has_memory(n) => {
                        return Err(Error::config(format!("{key}.threads[{t}].node"), format!("node {n} has no memory to colour")))
                    }
                    Some(n) => n,
                };
                let list = |v: &[u32], count: u32, what: &str, label: &str| -> Result<Vec<u32>> {
                    if let Some((j, c)) = v.iter().enumerate().find(|(_, &c)| c >= count) {
                        return Err(Error::config(
                            format!("{key}.threads[{t}].{what}[{j}]"),
                            format!("colour {c} does not exist: there are {count} {label} colours (0-{})", count - 1),
                        ));
                    }
                    Ok(if v.is_empty() { (0..count).collect() } else { v.to_vec() })
                };
                out.0.push(n);
                out.1.push(list(&d.banks, bl.banks, "banks", "bank")?);
                out.2.push(list(&d.llc, bl.llcs, "llc", "LLC")?);
            }
            out
        };
        let mut accept = Vec::with_capacity(threads.len());
        for t in 0..threads.len() {
            let ok: Vec<u32> = (0..bl.space.count()).filter(|&c| banks[t].contains(&bl.bank(c)) && llcs[t].contains(&bl.llc(c))).collect();
            let frames: u64 = ok.iter().map(|&c| bits.frames_of_colour(&bl.space, c)).sum();
            if frames == 0 {
                return Err(Error::config(
                    key,
                    format!(
                        "thread {t}: bank colours {} and LLC colours {} share no page frame ({}); give LLC colours that agree \
                         with its banks",
                        colour_list_text(&banks[t]),
                        colour_list_text(&llcs[t]),
                        bl.space.describe()
                    ),
                ));
            }
            accept.push(flags(bl.space.count(), ok));
        }
        let nc = NodeColours::new(bl.space, m.nodes, cfg, threads.len() as u32)?;
        let interleave = p.nodes == NodeChoice::Interleave;
        let mut colours = vec![Vec::new(); processes as usize];
        for (t, th) in threads.iter().enumerate() {
            let set = &mut colours[th.process as usize];
            let on = if interleave { nc.memory_nodes.clone() } else { vec![node[t]] };
            for n in on {
                set.extend((0..nc.per_node()).filter(|&c| accept[t][c as usize]).map(|c| nc.global(n, c)));
            }
            set.sort_unstable();
            set.dedup();
        }
        let turn = interleave.then(|| vec![0; threads.len()]);
        Ok(TintMalloc { nc, layout: m.nodes.clone(), node, accept, colours, strict: cfg.strict, turn })
    }
}

type Sets = (Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>);

/// Each thread's node, bank colours and LLC colours from its core and the sharing parameters.
fn derive(bl: &BankLlc, m: &MachineView, p: &TintParams, core_node: impl Fn(usize) -> u32) -> Result<Sets> {
    let n = m.threads.len();
    let node: Vec<u32> = (0..n).map(&core_node).collect();
    let mut banks = vec![Vec::new(); n];
    // Node-unaware colouring splits the bank colours over all the machine's threads at once.
    let interleave = p.nodes == NodeChoice::Interleave;
    let memory_nodes = if interleave { vec![u32::MAX] } else { m.nodes.memory_nodes() };
    for nd in memory_nodes {
        let on: Vec<usize> = (0..n).filter(|&t| interleave || node[t] == nd).collect();
        let groups = if p.bank_sharers == 0 { 1 } else { on.len().div_ceil(p.bank_sharers as usize) } as u32;
        if groups > bl.banks {
            return Err(Error::config(
                "os.tintmalloc.bank_sharers",
                format!(
                    "{} has {} threads in {groups} groups of private banks but only {} bank colours; \
                     share banks (a larger bank_sharers) or run fewer threads there",
                    if interleave { "the machine (nodes = \"interleave\")".to_string() } else { format!("node {nd}") },
                    on.len(),
                    bl.banks
                ),
            ));
        }
        for (i, &t) in on.iter().enumerate() {
            let g = if p.bank_sharers == 0 { 0 } else { i as u32 / p.bank_sharers };
            banks[t] = (g * bl.banks / groups..(g + 1) * bl.banks / groups).collect();
        }
    }
    let group_of = |t: usize| if p.llc_sharers == 0 { 0 } else { t / p.llc_sharers as usize };
    let groups = if n == 0 { 0 } else { group_of(n - 1) + 1 };
    let mut llc_sets = vec![Vec::new(); groups];
    for x in 0..bl.llcs {
        let agrees = |g: usize| (0..n).any(|t| group_of(t) == g && banks[t].iter().any(|&b| bl.agree(x, b)));
        if let Some(g) = (0..groups).filter(|&g| agrees(g)).min_by_key(|&g| (llc_sets[g].len(), g)) {
            llc_sets[g].push(x);
        }
    }
    if let Some(g) = (0..groups).find(|&g| llc_sets[g].is_empty()) {
        return Err(Error::config(
            "os.tintmalloc.llc_sharers",
            format!(
                "{groups} groups of threads need private LLC colours and group {g} gets none of the {} that agree with its \
                 banks; share LLC colours (a larger llc_sharers)",
                bl.llcs
            ),
        ));
    }
    let llcs = (0..n).map(|t| llc_sets[group_of(t)].clone()).collect();
    Ok((node, banks, llcs))
}

impl PlacementPolicy for TintMalloc {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn colour_space(&self) -> &ColourSpace {
        &self.nc.space
    }
    fn colours_of(&self, pid: u32) -> &[u32] {
        &self.colours[pid as usize]
    }
    fn place(&mut self, _pid: u32, _vpage: u64, _alloc: &mut BuddyAllocator) -> Result<Placement> {
        Err(Error::config("os.policy", "internal error: tintmalloc places on nodes"))
    }
    fn place_on_nodes(&mut self, fault: &NodeFault, allocs: &mut [Option<BuddyAllocator>]) -> Result<NodePlacement> {
        let t = fault.thread as usize;
        let Some(&node) = self.node.get(t) else {
            return Err(Error::config("os", format!("internal error: tintmalloc has no colours for thread {t}")));
        };
        if let Some(turn) = &mut self.turn {
            // Node-unaware: the memory nodes in turn, from this thread's next one.
            let count = self.nc.memory_nodes.len();
            for k in 0..count {
                let n = self.nc.memory_nodes[(turn[t] + k) % count];
                if let Some(frame) = self.nc.take(fault.thread, n, &self.accept[t], allocs) {
                    turn[t] = (turn[t] + k + 1) % count;
                    return Ok(NodePlacement { node: n, placed: Placement { frame, borrowed: false } });
                }
            }
        } else if let Some(frame) = self.nc.take(fault.thread, node, &self.accept[t], allocs) {
            return Ok(NodePlacement { node, placed: Placement { frame, borrowed: false } });
        }
        if self.strict {
            return Err(Error::config(
                "os.tintmalloc",
                format!("thread {t}: no free frame left in its colours on node {node}; set os.strict = false to borrow pages"),
            ));
        }
        match self.nc.any_near(&self.layout, node, allocs) {
            Some((node, frame)) => Ok(NodePlacement { node, placed: Placement { frame, borrowed: true } }),
            None => Err(Error::config("os", format!("out of physical memory under policy tintmalloc when thread {t} faults"))),
        }
    }
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new(
    "tintmalloc",
    "TintMalloc (Pan): each thread pages on its node's controller, in its bank and LLC colours",
    |cfg, bits, processes, m| Ok(Box::new(TintMalloc::new(cfg, bits, processes, m)?)),
)
.colours_nodes()
.needs("bank bits above the page offset")
.params(ParamSchema::of::<TintParams>(&[]))
.reads_keys(&["frame_order", "strict"])
.mechanism("controller-aware bank + LLC colouring");
