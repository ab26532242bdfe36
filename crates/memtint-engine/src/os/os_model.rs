//! The operating-system model the multicore simulator calls: per-process page tables filled on
//! first touch by a placement policy from a colour-indexed buddy allocator (BPM §2.4, HVR §8.1),
//! plus the placement and colour reports.

use super::buddy::BuddyAllocator;
use super::colour::{colour_list_text, ColourBits, ColourBitsReport};
use super::config::{FrameOrderKind, OsConfig};
use super::dynamic::{self, Adjustment, DynamicPolicy, DynamicStats, EpochView};
use super::frame_order::FrameOrder;
use super::hot_pages::{HotPages, WindowFeatures};
use super::llc_class::{self, LlcClass};
use super::migration::{self, HintFault, Migrating, MigrationStats, NodeLoad, OsEvent, PeriodView, Proposal, ScanScope};
use super::monitor::Monitors;
use super::nodes::NodeLayout;
use super::page_table::{frame_of, PageTable, HINT};
use super::placement::{self, NodeFault, PlacementPolicy, ThreadPlace};
use super::recolour::{CopyQueue, RecolourMode};
use super::swap::{Overflow, ProcessSwap, Swap};
use crate::error::{Error, Result};
use crate::mapping::AddressMapping;
use serde::Serialize;
use std::ops::Range;

/// Where one process's pages went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessPlacement {
    pub pid: u32,
    pub pages: u64,
    /// Pages placed outside the process's own colours because those were full.
    pub colour_overflow_pages: u64,
    /// Global bank ids the process's frames cover, sorted.
    pub banks_used: Vec<u32>,
    pub channels_used: Vec<u32>,
    /// Colours the process owns in the policy's colour space.
    pub colours: Vec<u32>,
}

/// One process's colours and what they can reach.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessColours {
    pub pid: u32,
    pub colours: Vec<u32>,
    /// "16-23".
    pub colours_text: String,
    /// Frames the colours hold.
    pub frames: u64,
    pub banks: Vec<u32>,
    pub channels: Vec<u32>,
    pub llc_sets: usize,
}

/// Which bits colour pages, the policy's colour space and every process's reach.
#[derive(Clone, Debug, Serialize)]
pub struct ColourReport {
    pub policy: String,
    pub bits: ColourBitsReport,
    /// The policy's colour space, e.g. "bank: 32 colours from b13, b14, b15, b21, b22 ...".
    pub space: String,
    pub colours: u32,
    pub processes: Vec<ProcessColours>,
}

pub struct OsModel {
    /// `Some(mask)` under identity translation: physical = virtual & mask.
    identity: Option<u64>,
    policy: Box<dyn PlacementPolicy>,
    alloc: BuddyAllocator,
    bits: ColourBits,
    tables: Vec<PageTable>,
    overflow: Vec<u64>,
    page_shift: u32,
    /// Under a node policy: each node's frames (`None`: one allocator, `alloc`, for all).
    nodes: Option<Box<NodeFrames>>,
    /// Page migration between nodes (`None`: pages stay where placed).
    migrating: Option<Box<Migrating>>,
    /// What the run's statistics should say about the configuration.
    warnings: Vec<String>,
    /// The time of the translation under way, ns (kept only while pages migrate).
    now_ns: f64,
    /// Swapping when a process's colours are full (`os.overflow = "swap"`).
    swap: Option<Box<Swap>>,
    /// HVR's accessed-bit sampling (`[os.hot_pages] enabled`).
    hot: Option<Box<HotPages>>,
    /// Per process: its placement when it exited (`exit_process`), `None` while it runs.
    exited: Vec<Option<ProcessPlacement>>,
    /// Per process: its pages per node when it exited (node policies), as `exited`.
    exited_pages_per_node: Vec<Option<Vec<u64>>>,
    /// The dynamic partitioning policy (`os.dynamic`).
    dynamic: Option<Box<Dynamic>>,
    /// Kernel work the last translations or epoch left for the memory hierarchy to charge
    /// (hinting faults, migrations, re-colouring, swapping), oldest first.
    events: Vec<OsEvent>,
    /// Footprints are being mapped before the run (`set_populating`).
    populating: bool,
    /// Pages may carry a mark a load faults on (migration's scan, lazy re-colouring).
    marks: bool,
}

impl Dynamic {
    /// Pages displaced by a partition and not copied yet (a daemon's queue, lazy marks).
    fn pending(&self) -> u64 {
        self.copies.as_ref().map_or(0, |q| q.pending()) + self.lazy.as_ref().map_or(0, |l| l.iter().sum())
    }
}

/// A dynamic policy and what it sees.
struct Dynamic {
    policy: Box<dyn DynamicPolicy>,
    stats: DynamicStats,
    /// Per process, per colour: its resident pages there.
    pages_in_colour: Vec<Vec<u64>>,
    /// Per process: swap-ins counted up to the last epoch.
    swap_ins: Vec<u64>,
    /// The channel of each colour's frames.
    colour_channels: Vec<u32>,
    /// Pages waiting for the copy daemon (`[os.recolour] pages_per_ms`; `None`: copied at the
    /// epoch) and its period, ns.
    copies: Option<CopyQueue>,
    copy_period_ns: f64,
    /// Lazy re-colouring (`[os.recolour] mode = "lazy"`): per process, its pages marked and
    /// not yet copied.
    lazy: Option<Vec<u64>>,
}

/// The frames below `memory_mb` MiB (0: all `all` frames), checked.
fn limit_frames(memory_mb: f64, all: u32, page_shift: u32) -> Result<u32> {
    if !(memory_mb.is_finite() && memory_mb >= 0.0) {
        return Err(Error::config("os.memory_mb", format!("must be a number of MiB >= 0 (0: all), got {memory_mb}")));
    }
    if memory_mb == 0.0 {
        return Ok(all);
    }
    let want = (memory_mb * (1u64 << 20) as f64 / (1u64 << page_shift) as f64).floor() as u64;
    if want == 0 {
        return Err(Error::config("os.memory_mb", format!("{memory_mb} MiB is less than one page")));
    }
    if want > all as u64 {
        return Err(Error::config(
            "os.memory_mb",
            format!("{memory_mb} MiB is more than the machine's {} MiB", ((all as u64) << page_shift) >> 20),
        ));
    }
    Ok(want as u32)
}

/// Each node's frames under a node policy: its own allocator and baseline frame order.
struct NodeFrames {
    layout: NodeLayout,
    allocs: Vec<Option<BuddyAllocator>>,
    orders: Vec<FrameOrder>,
    /// Per node: the memory nodes nearest first (the fallback when a node is full).
    fallback: Vec<Vec<u32>>,
    /// Per process: pages per node.
    pages: Vec<Vec<u64>>,
    /// Pages placed off the policy's node because it was full.
    fallback_pages: u64,
    /// Per node: frames the OS may use (`os.node_memory_mb`), and frames in use.
    capacity: Vec<u64>,
    used: Vec<u64>,
}

impl NodeFrames {
    /// `space`: what each node's frames are indexed by (its own addresses' colours).
    fn new(
        layout: NodeLayout,
        space: &super::colour::ColourSpace,
        seed: u64,
        processes: u32,
        page_shift: u32,
        limit_mb: &[f64],
    ) -> Result<Self> {
        if limit_mb.len() > layout.count() as usize {
            return Err(Error::config("os.node_memory_mb", format!("{} values for a machine of {} nodes", limit_mb.len(), layout.count())));
        }
        let mut capacity = Vec::new();
        for (i, n) in layout.nodes.iter().enumerate() {
            let frames = n.frames.len() as u64;
            let mb = limit_mb.get(i).copied().unwrap_or(0.0);
            if !(mb.is_finite() && mb >= 0.0) {
                return Err(Error::config(format!("os.node_memory_mb[{i}]"), format!("must be a number of MiB >= 0 (0: all), got {mb}")));
            }
            let want = (mb * (1u64 << 20) as f64 / (1u64 << page_shift) as f64).floor() as u64;
            if mb > 0.0 && frames == 0 {
                return Err(Error::config(format!("os.node_memory_mb[{i}]"), format!("node {i} has no memory to limit (got {mb} MiB)")));
            }
            if mb > 0.0 && want == 0 {
                return Err(Error::config(format!("os.node_memory_mb[{i}]"), format!("{mb} MiB is less than one page")));
            }
            if want > frames {
                return Err(Error::config(
                    format!("os.node_memory_mb[{i}]"),
                    format!("{mb} MiB is more than node {i}'s {} MiB", (frames << page_shift) >> 20),
                ));
            }
            capacity.push(if mb > 0.0 { want } else { frames });
        }
        let used = vec![0; layout.count() as usize];
        let allocs = layout
            .nodes
            .iter()
            .map(|n| (!n.frames.is_empty()).then(|| BuddyAllocator::new(n.frames.len() as u32, space, page_shift)).transpose())
            .collect::<Result<Vec<_>>>()?;
        // Node 0 draws the one-node baseline's order; the others their own.
        let orders = (0..layout.count()).map(|n| FrameOrder::new(seed.wrapping_add(n as u64))).collect();
        let fallback = (0..layout.count()).map(|n| layout.by_distance(n)).collect();
        let pages = vec![vec![0; layout.count() as usize]; processes as usize];
        Ok(NodeFrames { layout, allocs, orders, fallback, pages, fallback_pages: 0, capacity, used })
    }

    /// A frame on node `want`, or on the nearest node with a free one; its global number.
    fn alloc_near(&mut self, pid: u32, want: u32, policy: &str) -> Result<u32> {
        let NodeFrames { layout, allocs, orders, fallback, pages, fallback_pages, capacity, used } = self;
        for node in std::iter::once(want).chain(fallback[want as usize].iter().copied().filter(|&n| n != want)) {
            let Some(alloc) = allocs[node as usize].as_mut() else { continue };
            if used[node as usize] >= capacity[node as usize] {
                continue;
            }
            if let Some(f) = orders[node as usize].next_frame(alloc) {
                used[node as usize] += 1;
                pages[pid as usize][node as usize] += 1;
                *fallback_pages += (node != want) as u64;
                return Ok(layout.nodes[node as usize].frames.start + f);
            }
        }
        let full = format!("out of physical memory under policy {policy}: every node is full when process {pid} faults");
        // A limit the user set is the likelier cause, so the error names it.
        let limited: Vec<String> =
            (0..capacity.len()).filter(|&n| capacity[n] < layout.nodes[n].frames.len() as u64).map(|n| n.to_string()).collect();
        if limited.is_empty() {
            Err(Error::config("os", full))
        } else {
            Err(Error::config("os.node_memory_mb", format!("{full} (it limits node {}: raise or remove the limit)", limited.join(", "))))
        }
    }

    /// A frame on node `node` exactly (a migration's destination), or `None` if it is full.
    fn alloc_on(&mut self, pid: u32, node: u32) -> Option<u32> {
        if self.used[node as usize] >= self.capacity[node as usize] {
            return None;
        }
        let f = self.orders[node as usize].next_frame(self.allocs[node as usize].as_mut()?)?;
        self.used[node as usize] += 1;
        self.pages[pid as usize][node as usize] += 1;
        Some(self.layout.nodes[node as usize].frames.start + f)
    }

    /// Returns global frame `frame` of process `pid` to its node.
    fn free(&mut self, pid: u32, frame: u32) -> Result<()> {
        let node = self.layout.node_of_frame(frame);
        self.pages[pid as usize][node as usize] -= 1;
        self.used[node as usize] -= 1;
        let alloc = self.allocs[node as usize].as_mut().expect("a frame's node has memory");
        alloc.free(frame - self.layout.nodes[node as usize].frames.start)
    }
}

impl OsModel {
    /// `llc_set_bits`: address bits that index LLC sets (b6-b18 for 8 MiB, 16-way, 64 B lines).
    pub fn new(cfg: &OsConfig, mapping: &AddressMapping, llc_set_bits: Range<u32>, processes: u32) -> Result<Self> {
        Self::with_cores(cfg, mapping, llc_set_bits, processes, processes)
    }

    /// `new` on a machine of `cores` cores (policies that partition by core, like `ccps`).
    pub fn with_cores(cfg: &OsConfig, mapping: &AddressMapping, llc_set_bits: Range<u32>, processes: u32, cores: u32) -> Result<Self> {
        let frames = 1u64 << mapping.capacity_bits().saturating_sub(12).min(31);
        let threads = placement::one_thread_each(processes, cores);
        Self::with_nodes(cfg, mapping, llc_set_bits, processes, cores, NodeLayout::single(cores, frames as u32, 1.0), &threads)
    }

    /// `with_cores` on a machine of `layout`'s nodes (`mapping`: every memory node's, for
    /// colours) running `threads`. Node policies place on nodes; colour policies need a one-node
    /// machine.
    pub fn with_nodes(
        cfg: &OsConfig,
        mapping: &AddressMapping,
        llc_set_bits: Range<u32>,
        processes: u32,
        cores: u32,
        layout: NodeLayout,
        threads: &[ThreadPlace],
    ) -> Result<Self> {
        let info = placement::info(&cfg.policy)?;
        if layout.count() > 1 && !info.places_nodes {
            let node_policies: Vec<&str> = placement::POLICIES.all().iter().filter(|p| p.places_nodes).map(|p| p.name).collect();
            return Err(Error::config(
                "os.policy",
                format!(
                    "policy '{}' places pages by colour within one memory, and this machine has {} nodes; choose a node policy: {}",
                    cfg.policy,
                    layout.count(),
                    node_policies.join(", ")
                ),
            ));
        }
        if cfg.page_bytes != 4096 {
            return Err(Error::config(
                "os.page_bytes",
                format!("{} is not supported; only 4096-byte pages are modelled for now", cfg.page_bytes),
            ));
        }
        if processes == 0 {
            return Err(Error::config("os", "needs at least one process"));
        }
        FrameOrderKind::from_name(&cfg.frame_order)?;
        placement::ColourSplit::from_name(&cfg.colour_split)?;
        let identity = match cfg.translation.as_str() {
            "paged" => None,
            "identity" if cfg.policy == placement::BASELINE => Some((1u64 << mapping.capacity_bits()) - 1),
            "identity" => {
                return Err(Error::config(
                    "os.translation",
                    format!(
                        "identity translation places no pages, so policy '{}' cannot apply; use policy {}",
                        cfg.policy,
                        placement::BASELINE
                    ),
                ))
            }
            other => return Err(Error::config("os.translation", format!("unknown translation '{other}'; choose paged or identity"))),
        };
        if identity.is_some() && cfg.hot_pages.enabled {
            return Err(Error::config(
                "os.hot_pages.enabled",
                "identity translation has no page tables, so no accessed bits to sample; use translation = \"paged\"",
            ));
        }
        let page_shift = cfg.page_bytes.trailing_zeros();
        let frame_bits = mapping.capacity_bits().saturating_sub(page_shift);
        if frame_bits > 31 {
            return Err(Error::config("os", format!("2^{frame_bits} page frames are more than the 2^31 the allocator supports")));
        }
        let bits = ColourBits::new(mapping, llc_set_bits, page_shift, &cfg.exclude_bits)?;
        let overflow = Overflow::from_name(&cfg.overflow)?;
        cfg.swap.validate()?;
        cfg.recolour.validate()?;
        if overflow == Overflow::Swap && cfg.strict {
            return Err(Error::config(
                "os.overflow",
                "\"swap\" swaps a page out when a process's colours are full, and os.strict = true makes that an error; set one",
            ));
        }
        let dynamic = dynamic::build(cfg, processes, &bits)?;
        let mut warnings = Vec::new();
        if cfg.recolour != Default::default() {
            match &dynamic {
                None => warnings.push("[os.recolour] paces a dynamic policy's page copies; os.dynamic is \"none\", so it has no effect".to_string()),
                Some(d) if !d.recolours() => warnings.push(format!(
                    "[os.recolour] paces a dynamic policy's page copies; {} moves no resident pages (its recolour = false: only pages placed later follow a new partition), so it has no effect; set [os.{}] recolour = true to move them",
                    cfg.dynamic, cfg.dynamic
                )),
                Some(_) => {}
            }
        }
        // Settings of a mechanism the run does not use: said, not dropped unseen.
        if overflow != Overflow::Swap && cfg.swap != Default::default() {
            warnings
                .push(format!("[os.swap] times swap faults; os.overflow is \"{}\", so nothing swaps and it has no effect", cfg.overflow));
        }
        let sampled = cfg.hot_pages.enabled || dynamic.as_ref().is_some_and(|d| d.needs_classes());
        if !sampled && cfg.hot_pages != super::hot_pages::HotPageConfig::default() {
            warnings.push(
                "[os.hot_pages] times accessed-bit sampling; os.hot_pages.enabled is false and no dynamic policy samples, so it has no effect"
                    .to_string(),
            );
        }
        let migrating = migration::build(cfg, &layout, processes, &mut warnings)?;
        let view = placement::MachineView { mapping, cores, nodes: &layout, threads };
        let policy = placement::build(cfg, &bits, processes, &view)?;
        warnings.extend(placement::exclusion_warning(cfg, &*policy, &bits, processes, &view));
        let nodes = if info.places_nodes {
            let uncoloured = super::colour::ColourSpace::uncoloured();
            let space = if info.colours_nodes { policy.colour_space() } else { &uncoloured };
            if info.colours_nodes && !cfg.node_memory_mb.is_empty() {
                return Err(Error::config(
                    "os.node_memory_mb",
                    format!("policy '{}' takes frames by colour; a node memory limit applies to node policies without colours", cfg.policy),
                ));
            }
            Some(Box::new(NodeFrames::new(layout, space, cfg.seed(), processes, page_shift, &cfg.node_memory_mb)?))
        } else {
            if !cfg.node_memory_mb.is_empty() {
                return Err(Error::config(
                    "os.node_memory_mb",
                    format!("policy '{}' does not place by node; limits apply to node policies", cfg.policy),
                ));
            }
            None
        };
        if nodes.is_some() {
            let one_node = |key: &str, what: &str| {
                Error::config(
                    key,
                    format!("{what} is modelled on one-node machines under colour policies; policy '{}' places by node", cfg.policy),
                )
            };
            if cfg.memory_mb != 0.0 {
                return Err(one_node("os.memory_mb", "a memory limit for the whole machine (use os.node_memory_mb per node)"));
            }
            if overflow == Overflow::Swap {
                return Err(one_node("os.overflow", "swapping"));
            }
        }
        // Under a node policy the nodes' own allocators hold the frames.
        let frames = if nodes.is_some() { 1 } else { limit_frames(cfg.memory_mb, 1 << frame_bits, page_shift)? };
        let alloc = BuddyAllocator::new(frames, policy.colour_space(), page_shift)?;
        let needs_classes = dynamic.as_ref().is_some_and(|d| d.needs_classes());
        let recolour = cfg.recolour.mode()?;
        let dynamic = match dynamic {
            Some(dynamic) => {
                let stats = DynamicStats { policy: cfg.dynamic.clone(), epoch_ns: dynamic.epoch_ns(), ..Default::default() };
                let colours = alloc.colours();
                let colour_channels = (0..colours)
                    .map(|c| Ok(bits.reach(policy.colour_space(), &[c])?.channels.first().copied().unwrap_or(0)))
                    .collect::<Result<Vec<u32>>>()?;
                Some(Box::new(Dynamic {
                    policy: dynamic,
                    stats,
                    pages_in_colour: vec![vec![0; colours as usize]; processes as usize],
                    swap_ins: vec![0; processes as usize],
                    colour_channels,
                    copies: (recolour == RecolourMode::Daemon).then(|| CopyQueue::new(&cfg.recolour, processes)),
                    copy_period_ns: cfg.recolour.period_ns,
                    lazy: (recolour == RecolourMode::Lazy).then(|| vec![0; processes as usize]),
                }))
            }
            None => None,
        };
        let marks = migrating.is_some() || dynamic.as_ref().is_some_and(|d| d.lazy.is_some());
        Ok(OsModel {
            identity,
            policy,
            alloc,
            bits,
            tables: (0..processes).map(|_| PageTable::new()).collect(),
            overflow: vec![0; processes as usize],
            page_shift,
            nodes,
            migrating,
            warnings,
            now_ns: 0.0,
            swap: (overflow == Overflow::Swap).then(|| Box::new(Swap::new(processes))),
            exited: vec![None; processes as usize],
            exited_pages_per_node: vec![None; processes as usize],
            hot: match cfg.hot_pages.enabled || needs_classes {
                true => Some(Box::new(HotPages::new(&cfg.hot_pages, processes)?)),
                false => None,
            },
            dynamic,
            events: Vec::new(),
            populating: false,
            marks,
        })
    }

    /// The physical address of `vaddr` in process `pid`; the first touch of a page places it.
    #[inline]
    pub fn translate(&mut self, pid: u32, vaddr: u64) -> Result<u64> {
        self.translate_on(pid, pid, vaddr)
    }

    /// `translate` for a thread of process `pid` bound to `core` (CCPS places by core).
    #[inline]
    pub fn translate_on(&mut self, pid: u32, core: u32, vaddr: u64) -> Result<u64> {
        self.translate_thread(pid, core, core, vaddr)
    }

    /// `translate_on` for thread `tid` (node policies keep per-thread counters).
    #[inline]
    pub fn translate_thread(&mut self, pid: u32, tid: u32, core: u32, vaddr: u64) -> Result<u64> {
        if let Some(h) = self.hot.as_deref_mut() {
            let tables = &self.tables;
            h.touch(pid, vaddr >> self.page_shift, self.now_ns, |p| tables.get(p).map_or(0, |t| t.len() as u64));
            if h.charges_due() {
                self.events.extend(h.take_charges().map(|(pid, ns)| OsEvent::Walks { pid, ns: ns.round() as u64 }));
            }
        }
        self.translate_unsampled(pid, tid, core, vaddr)
    }

    /// `translate_thread` without setting the page's accessed bit (a dirty line's write-back
    /// is the cache's doing, not the program's).
    #[inline]
    fn translate_unsampled(&mut self, pid: u32, tid: u32, core: u32, vaddr: u64) -> Result<u64> {
        if let Some(mask) = self.identity {
            return Ok(vaddr & mask);
        }
        let offset = vaddr & ((1 << self.page_shift) - 1);
        let vpage = vaddr >> self.page_shift;
        match self.tables.get_mut(pid as usize) {
            Some(table) => match table.lookup(vpage) {
                Some(frame) if frame & HINT == 0 => Ok((frame as u64) << self.page_shift | offset),
                Some(entry) => Ok((self.hint_fault(pid, tid, core, vpage, entry)? as u64) << self.page_shift | offset),
                None => Ok((self.fault(pid, tid, core, vpage)? as u64) << self.page_shift | offset),
            },
            None => Err(Error::config("os", format!("process {pid} does not exist ({} processes)", self.tables.len()))),
        }
    }

    /// `translate_thread` for what is not a load (a write-back of a dirty line): a page marked
    /// for a hinting fault does not fault.
    #[inline]
    pub fn translate_quiet(&mut self, pid: u32, tid: u32, core: u32, vaddr: u64) -> Result<u64> {
        if self.marks {
            let vpage = vaddr >> self.page_shift;
            if let Some(Some(entry)) = self.tables.get_mut(pid as usize).map(|t| t.lookup(vpage)) {
                if entry & HINT != 0 {
                    return Ok((frame_of(entry) as u64) << self.page_shift | (vaddr & ((1 << self.page_shift) - 1)));
                }
            }
        }
        self.translate_unsampled(pid, tid, core, vaddr)
    }

    /// Migration is on: pages are scanned and may move.
    pub fn migrating(&self) -> bool {
        self.migrating.is_some()
    }

    /// Pages may move or go to swap (migration, a dynamic policy, swapping): the memory
    /// hierarchy charges what the OS leaves in its events.
    pub fn moves_pages(&self) -> bool {
        self.migrating.is_some() || self.dynamic.is_some() || self.swap.is_some() || self.charges_walks()
    }

    /// The accessed-bit sampler's walks stall the threads (`[os.hot_pages] charge_walks`): they
    /// are charged as the OS's page work is.
    pub fn charges_walks(&self) -> bool {
        self.hot.as_ref().is_some_and(|h| h.config().charge_walks)
    }

    /// The time of the next translations, ns (hinting-fault latency, rate limits).
    #[inline]
    pub fn set_now_ns(&mut self, now_ns: f64) {
        self.now_ns = now_ns;
    }

    /// One period of `os.numa_scan`: marks the next window of every process's pages (those
    /// the policy's scope covers), then lets a tracking policy's daemon move pages (`loads`:
    /// each node's load over the period).
    pub fn scan(&mut self, loads: &[NodeLoad]) -> Result<()> {
        let Some(m) = self.migrating.as_mut() else { return Ok(()) };
        if m.scope != ScanScope::Nothing {
            m.stats.scans += 1;
        }
        let now = self.now_ns;
        let layout = self.nodes.as_ref().map(|n| &n.layout);
        for (pid, ((table, cursor), passes)) in self.tables.iter_mut().zip(m.cursors.iter_mut()).zip(m.passes.iter_mut()).enumerate() {
            let before = *cursor;
            let (next, marked) = match (m.scope, m.tracker.as_mut(), layout) {
                (ScanScope::Nothing, ..) => (before, 0),
                (ScanScope::All, ..) | (_, None, _) | (_, _, None) => (table.mark(before, m.scan_pages), m.scan_pages.min(table.len())),
                (ScanScope::SlowTiers, Some(t), Some(layout)) => {
                    let top = &m.top_tier;
                    table.mark_where(before, m.scan_pages, |frame| {
                        let slow = !top[layout.node_of_frame(frame) as usize];
                        if slow {
                            if let Some(p) = t.get_mut(frame) {
                                debug_assert_eq!(p.pid, pid as u32);
                                p.marked_ns = Some(now);
                            }
                        }
                        slow
                    })
                }
            };
            *cursor = next;
            // Wrapped round (or covered everything): one more full pass.
            if m.scope != ScanScope::Nothing && (next <= before || m.scan_pages >= table.len()) {
                *passes += 1;
            }
            m.stats.pages_marked += marked as u64;
        }
        let (Some(tracker), Some(nodes)) = (m.tracker.as_mut(), self.nodes.as_mut()) else { return Ok(()) };
        let free: Vec<u64> = nodes.capacity.iter().zip(&nodes.used).map(|(c, u)| c - u).collect();
        let mut view = PeriodView { free, capacity: nodes.capacity.clone(), loads, pages: tracker, tables: &mut self.tables };
        let moves = m.policy.on_period(&mut view);
        let keep = m.policy.keep_free_pct();
        for mv in moves {
            let Some(page) = tracker.get(mv.frame).copied() else { continue };
            if page.node == mv.to || !nodes.layout.has_memory(mv.to) {
                continue;
            }
            let to = mv.to as usize;
            if (nodes.capacity[to] - nodes.used[to]) as f64 <= nodes.capacity[to] as f64 * keep / 100.0 {
                m.stats.destination_full += 1;
                continue;
            }
            let Some(new) = nodes.alloc_on(page.pid, mv.to) else {
                m.stats.destination_full += 1;
                continue;
            };
            nodes.free(page.pid, mv.frame)?;
            // A new mapping: no scan mark, and its access bit set (the tracker's `moved`).
            self.tables[page.pid as usize].set(page.vpage, new);
            tracker.moved(mv.frame, new);
            m.stats.pages_moved += 1;
            m.stats.daemon_moves += 1;
            m.stats.moves[page.node as usize][to] += 1;
            let shift = self.page_shift;
            self.events.push(OsEvent::Moved { pid: page.pid, old: (mv.frame as u64) << shift, new: (new as u64) << shift });
        }
        Ok(())
    }

    /// One sampled LLC-miss read of physical address `addr` (policies that sample misses).
    #[cold]
    pub fn sample_miss(&mut self, addr: u64) {
        if let Some(t) = self.migrating.as_mut().and_then(|m| m.tracker.as_mut()) {
            t.sample((addr >> self.page_shift) as u32);
        }
    }

    /// One in how many LLC-miss reads the migration policy samples (0: none).
    pub fn miss_sample_period(&self) -> u32 {
        self.migrating.as_ref().map_or(0, |m| m.policy.miss_sample_period())
    }

    /// The migration policy's daemon period when it has its own, ns.
    pub fn daemon_period_ns(&self) -> Option<f64> {
        self.migrating.as_ref().and_then(|m| m.policy.period_ns())
    }

    /// The migration policy wants each node's load every period.
    pub fn tracks_pages(&self) -> bool {
        self.migrating.as_ref().is_some_and(|m| m.tracker.is_some())
    }

    /// The events the last translations or epoch left, oldest first.
    pub fn take_events(&mut self, out: &mut Vec<OsEvent>) {
        out.append(&mut self.events);
    }

    #[inline]
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// The measured run starts: work done while pages were populated or the caches warmed is
    /// not charged, and swapping counts from zero (pages in swap stay there).
    pub fn start_measuring(&mut self) {
        self.events.clear();
        if let Some(h) = self.hot.as_deref_mut() {
            h.restart(self.now_ns);
        }
        if let Some(s) = self.swap.as_mut() {
            for p in &mut s.stats {
                *p = ProcessSwap { swapped: p.swapped, ..Default::default() };
            }
        }
        if let Some(d) = self.dynamic.as_mut() {
            d.swap_ins.iter_mut().for_each(|n| *n = 0);
            d.stats.pages_recoloured_before_run += std::mem::take(&mut d.stats.pages_recoloured);
        }
    }

    /// Process `pid` exits: its frames go back to the allocator and its page table and swap
    /// empty, so a dynamic policy sees it own nothing; its placement as it was is kept for the
    /// statistics. Returns the pages freed.
    pub fn exit_process(&mut self, pid: u32) -> Result<u64> {
        if self.migrating.is_some() {
            return Err(Error::config(
                "at_end",
                "a process cannot exit while os.migration moves pages (not modelled); use at_end = \"wait\"",
            ));
        }
        let p = pid as usize;
        if p >= self.tables.len() || self.exited[p].is_some() {
            return Ok(0);
        }
        self.exited[p] = Some(self.process_placement(pid));
        self.exited_pages_per_node[p] = self.nodes.as_ref().and_then(|n| n.pages.get(p).cloned());
        let table = std::mem::take(&mut self.tables[p]);
        let mut freed = 0;
        for (_, entry) in table.mappings() {
            let frame = frame_of(entry);
            if let Some(d) = self.dynamic.as_mut() {
                d.pages_in_colour[p][self.alloc.colour_of(frame) as usize] -= 1;
            }
            match self.nodes.as_mut() {
                Some(nodes) => nodes.free(pid, frame)?,
                None => self.alloc.free(frame)?,
            }
            freed += 1;
        }
        if let Some(s) = self.swap.as_mut() {
            s.forget(pid);
        }
        if let Some(d) = self.dynamic.as_mut() {
            if let Some(q) = d.copies.as_mut() {
                q.forget(pid);
            }
            if let Some(lazy) = d.lazy.as_mut() {
                lazy[p] = 0;
            }
            d.stats.recolour_pending = d.pending();
        }
        Ok(freed)
    }

    /// Bytes of a page.
    pub fn page_bytes(&self) -> u64 {
        1 << self.page_shift
    }

    /// Accessed bits are sampled: the memory hierarchy keeps `set_now_ns` current.
    pub fn samples_hot_pages(&self) -> bool {
        self.hot.is_some()
    }

    /// Per process: its sampled windows (`None` unless `[os.hot_pages] enabled`).
    pub fn hot_page_windows(&self) -> Option<Vec<Vec<WindowFeatures>>> {
        let resident: Vec<u64> = self.tables.iter().map(|t| t.len() as u64).collect();
        self.hot.as_ref().map(|h| h.windows(&resident))
    }

    /// Per process: its swapping (`None` unless `os.overflow = "swap"`).
    pub fn swap_stats(&self) -> Option<&[ProcessSwap]> {
        self.swap.as_ref().map(|s| s.stats.as_slice())
    }

    /// The dynamic policy's counters (`None` without one).
    pub fn dynamic_stats(&self) -> Option<&DynamicStats> {
        self.dynamic.as_ref().map(|d| &d.stats)
    }

    /// The dynamic policy's epoch, ns (`None` without one).
    pub fn dynamic_epoch_ns(&self) -> Option<f64> {
        self.dynamic.as_ref().map(|d| d.policy.epoch_ns())
    }

    /// Footprints are mapped before the run (`os.populate`, a functional warm-up), standing for
    /// an initialisation or execution that spans many epochs: meanwhile, under a dynamic policy,
    /// a fault that finds its process's colours full ends an epoch first (the daemon would have
    /// seen the footprint grow), rather than swapping at once.
    pub fn set_populating(&mut self, on: bool) {
        self.populating = on;
    }

    /// The end of a dynamic policy's epoch: `monitors` as the memory hierarchy counted them
    /// (misses, write-backs, traffic); the OS adds the process sizes, asks the policy, and
    /// re-colours what it changed (the copies are left in the events).
    pub fn end_epoch(&mut self, monitors: Monitors) -> Result<()> {
        self.epoch(monitors, None)
    }

    /// `end_epoch`, with one more page touched by `pending` (a fault waiting for a frame).
    fn epoch(&mut self, mut monitors: Monitors, pending: Option<u32>) -> Result<()> {
        let Some(d) = self.dynamic.as_mut() else { return Ok(()) };
        for (pid, m) in monitors.processes.iter_mut().enumerate() {
            m.resident_pages = self.tables[pid].len() as u64;
            let swapped = self.swap.as_ref().map_or(0, |s| s.swapped_pages(pid as u32));
            m.touched_pages = m.resident_pages + swapped + (pending == Some(pid as u32)) as u64;
            let ins = self.swap.as_ref().map_or(0, |s| s.stats[pid].swap_ins);
            m.swap_ins = ins - d.swap_ins[pid];
            d.swap_ins[pid] = ins;
        }
        let classes: Vec<Option<LlcClass>> = match (d.policy.needs_classes(), self.hot.as_ref()) {
            (true, Some(h)) => {
                monitors
                    .processes
                    .iter()
                    .enumerate()
                    .map(|(pid, m)| {
                        let w = h.closed(pid as u32);
                        // Windows before a process arrived are empty: its class is from its own.
                        let own: Vec<WindowFeatures> = w.iter().copied().filter(|f| f.used > 0 || f.nhp > 0).collect();
                        let apki = if m.instructions == 0 { 0.0 } else { 1000.0 * m.llc_accesses as f64 / m.instructions as f64 };
                        (m.instructions > 0 && monitors.llc_pages > 0)
                            .then(|| llc_class::classify(&own, apki, monitors.llc_pages as f64, &Default::default()))
                            .flatten()
                            .map(|c| c.class)
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let d = self.dynamic.as_mut().expect("checked above");
        let colours: Vec<Vec<u32>> = (0..self.tables.len() as u32).map(|p| self.policy.colours_of(p).to_vec()).collect();
        let colour_frames: Vec<u64> =
            (0..self.alloc.colours()).map(|c| self.alloc.allocated_of_colour(c) + self.alloc.free_of_colour(c)).collect();
        d.stats.epochs += 1;
        let view = EpochView {
            monitors: &monitors,
            colours: &colours,
            colour_frames: &colour_frames,
            pages_in_colour: &d.pages_in_colour,
            colour_channels: &d.colour_channels,
            classes: &classes,
        };
        let decided = d.policy.on_epoch(&view);
        if let Some(c) = d.policy.channel_balance() {
            d.stats.channel_balance = Some(c.clone());
        }
        let Some(r) = decided else { return Ok(()) };
        let rnp = monitors.processes.iter().map(|m| m.touched_pages).collect();
        let bnp = colours.iter().map(|set| set.iter().map(|&c| colour_frames[c as usize]).sum()).collect();
        let recolours = d.policy.recolours();
        // Before the run nothing is charged: the copies are made at once.
        let (paced, lazy) = (d.copies.is_some() && !self.populating, d.lazy.is_some() && !self.populating);
        self.policy.set_colours(&r.colours)?;
        let (moved, blocked) = match (recolours, paced, lazy) {
            (false, _, _) => (0, 0),
            (true, true, _) => (self.queue_recolour(&colours), 0),
            (true, _, true) => (self.mark_recolour(&colours), 0),
            (true, false, false) => self.recolour(&colours)?,
        };
        let d = self.dynamic.as_mut().expect("checked above");
        d.stats.repartitions += 1;
        d.stats.colours_lent += r.colours_lent;
        d.stats.sets_shared += r.sets_shared;
        d.stats.pages_recoloured += if paced || lazy { 0 } else { moved };
        d.stats.recolour_blocked += blocked;
        d.stats.recolour_pending = d.pending();
        d.stats.adjustments.push(Adjustment {
            at_ns: monitors.now_ns,
            colours: r.colours.iter().map(|c| colour_list_text(c)).collect(),
            rnp,
            bnp,
            pages_recoloured: moved,
            classes,
        });
        Ok(())
    }

    /// Moves every resident page left in a colour its process no longer owns (`before`: each
    /// process's colours before the change) to a free frame of its new colours, round-robin;
    /// a page whose process has none free stays. Returns (moved, stayed).
    fn recolour(&mut self, before: &[Vec<u32>]) -> Result<(u64, u64)> {
        let (mut moved, mut blocked) = (0, 0);
        for pid in 0..self.tables.len() as u32 {
            let (now, owned) = self.owned_colours(pid);
            if before[pid as usize].iter().all(|&c| owned[c as usize]) {
                continue;
            }
            let mut next = 0;
            for vpage in self.displaced(pid, &owned) {
                match self.recolour_page(pid, vpage, &now, &owned, &mut next)? {
                    Some(true) => moved += 1,
                    Some(false) => blocked += 1,
                    None => {}
                }
            }
        }
        Ok((moved, blocked))
    }

    /// Process `pid`'s colours, as a list and as a mask over all colours.
    fn owned_colours(&self, pid: u32) -> (Vec<u32>, Vec<bool>) {
        let now = self.policy.colours_of(pid).to_vec();
        let mut owned = vec![false; self.alloc.colours() as usize];
        now.iter().for_each(|&c| owned[c as usize] = true);
        (now, owned)
    }

    /// Process `pid`'s resident pages in colours outside `owned`, in page-table order.
    fn displaced(&self, pid: u32, owned: &[bool]) -> Vec<u64> {
        self.tables[pid as usize].mappings().filter(|&(_, f)| !owned[self.alloc.colour_of(f) as usize]).map(|(v, _)| v).collect()
    }

    /// Copies page `vpage` of `pid` to a free frame of its colours `now` (round-robin from
    /// `next`): `Some(true)` moved, `Some(false)` no frame free (it stays), `None` nothing to do
    /// (not resident, or already in its colours).
    fn recolour_page(&mut self, pid: u32, vpage: u64, now: &[u32], owned: &[bool], next: &mut usize) -> Result<Option<bool>> {
        let p = pid as usize;
        let Some(old) = self.tables[p].lookup(vpage).map(frame_of) else { return Ok(None) };
        if owned[self.alloc.colour_of(old) as usize] || now.is_empty() {
            return Ok(None);
        }
        let new = (0..now.len()).find_map(|i| {
            let c = now[(*next + i) % now.len()];
            self.alloc.alloc_colour(c).map(|f| (f, (*next + i + 1) % now.len()))
        });
        let Some((new, at)) = new else { return Ok(Some(false)) };
        *next = at;
        self.alloc.free(old)?;
        self.tables[p].set(vpage, new);
        if let Some(d) = self.dynamic.as_mut() {
            d.pages_in_colour[p][self.alloc.colour_of(old) as usize] -= 1;
            d.pages_in_colour[p][self.alloc.colour_of(new) as usize] += 1;
        }
        let shift = self.page_shift;
        self.events.push(OsEvent::Recoloured { pid, old: (old as u64) << shift, new: (new as u64) << shift });
        Ok(Some(true))
    }

    /// Under a copy daemon: the displaced pages of every process that lost colours (`before`:
    /// each one's colours before the change) wait for it, replacing what waited from an earlier
    /// partition. Returns the pages queued.
    fn queue_recolour(&mut self, before: &[Vec<u32>]) -> u64 {
        let mut queued = Vec::new();
        for pid in 0..self.tables.len() as u32 {
            let (_, owned) = self.owned_colours(pid);
            if !before[pid as usize].iter().all(|&c| owned[c as usize]) {
                queued.push((pid, self.displaced(pid, &owned)));
            }
        }
        let Some(q) = self.dynamic.as_mut().and_then(|d| d.copies.as_mut()) else { return 0 };
        let mut total = 0;
        for (pid, pages) in queued {
            total += pages.len() as u64;
            q.replace(pid, pages);
        }
        total
    }

    /// The copy daemon's period, ns (`None`: copies are made at the epoch).
    pub fn copy_period_ns(&self) -> Option<f64> {
        self.dynamic.as_ref().filter(|d| d.copies.is_some()).map(|d| d.copy_period_ns)
    }

    /// Pages waiting for the copy daemon.
    pub fn copies_pending(&self) -> u64 {
        self.dynamic.as_ref().and_then(|d| d.copies.as_ref()).map_or(0, |q| q.pending())
    }

    /// One batch of the copy daemon, `elapsed_ns` after the last (the copies are left in the
    /// events).
    pub fn copy_batch(&mut self, elapsed_ns: f64) -> Result<()> {
        let Some(batch) = self.dynamic.as_mut().and_then(|d| d.copies.as_mut()).map(|q| q.batch(elapsed_ns)) else {
            return Ok(());
        };
        let (mut moved, mut blocked) = (0, 0);
        for (pid, pages) in batch {
            let (now, owned) = self.owned_colours(pid);
            let mut next = 0;
            for vpage in pages {
                match self.recolour_page(pid, vpage, &now, &owned, &mut next)? {
                    Some(true) => moved += 1,
                    Some(false) => blocked += 1,
                    None => {}
                }
            }
        }
        let d = self.dynamic.as_mut().expect("a batch came from it");
        d.stats.pages_recoloured += moved;
        d.stats.recolour_blocked += blocked;
        d.stats.recolour_pending = d.pending();
        Ok(())
    }

    /// Lazy re-colouring: the displaced pages of every process that lost colours (`before`:
    /// each one's colours before the change) are marked; the first load of each copies it
    /// (`lazy_recolour`). Returns the pages marked.
    fn mark_recolour(&mut self, before: &[Vec<u32>]) -> u64 {
        let mut total = 0;
        for pid in 0..self.tables.len() as u32 {
            let (_, owned) = self.owned_colours(pid);
            if before[pid as usize].iter().all(|&c| owned[c as usize]) {
                continue;
            }
            let pages = self.displaced(pid, &owned);
            for &vpage in &pages {
                let frame = self.tables[pid as usize].lookup(vpage).map(frame_of).expect("displaced pages are mapped");
                self.tables[pid as usize].set(vpage, frame | HINT);
            }
            total += pages.len() as u64;
            if let Some(lazy) = self.dynamic.as_mut().and_then(|d| d.lazy.as_mut()) {
                lazy[pid as usize] = pages.len() as u64;
            }
        }
        total
    }

    /// Thread `tid` of `pid` touched `vpage`, marked for lazy re-colouring (its mark already
    /// cleared): the page is copied into its process's colours if it is still outside them.
    /// Returns its frame now.
    fn lazy_recolour(&mut self, pid: u32, tid: u32, vpage: u64, frame: u32) -> Result<u32> {
        let (now, owned) = self.owned_colours(pid);
        // Spread the pages of one process over its colours by their virtual page.
        let mut next = if now.is_empty() { 0 } else { (vpage % now.len() as u64) as usize };
        let outcome = self.recolour_page(pid, vpage, &now, &owned, &mut next)?;
        let moved = match outcome {
            Some(true) => {
                let Some(OsEvent::Recoloured { old, new, .. }) = self.events.pop() else { unreachable!("recolour_page left it") };
                Some((old, new))
            }
            _ => None,
        };
        self.events.push(OsEvent::RecolourFault { tid, pid, moved });
        let d = self.dynamic.as_mut().expect("lazy re-colouring is a dynamic policy's");
        if let Some(lazy) = d.lazy.as_mut() {
            if outcome.is_some() {
                lazy[pid as usize] = lazy[pid as usize].saturating_sub(1);
            }
        }
        match outcome {
            Some(true) => d.stats.pages_recoloured += 1,
            Some(false) => d.stats.recolour_blocked += 1,
            None => {}
        }
        d.stats.recolour_pending = d.pending();
        Ok(self.tables[pid as usize].lookup(vpage).map_or(frame, frame_of))
    }

    /// Makes room for a fault of thread `tid` of `pid` when its colours have no free frame: the
    /// oldest resident page of its own there goes to swap, or, if it has none there (its
    /// colours are full of other processes' pages), the oldest of another's.
    fn swap_out(&mut self, pid: u32, tid: u32) -> Result<()> {
        let colours = self.alloc.colours() as usize;
        let mut owned = vec![false; colours];
        self.policy.colours_of(pid).iter().for_each(|&c| owned[c as usize] = true);
        let Some(swap) = self.swap.as_mut() else { return Ok(()) };
        let alloc = &self.alloc;
        let processes = self.tables.len() as u32;
        for victim in std::iter::once(pid).chain((0..processes).filter(|&q| q != pid)) {
            let table = &mut self.tables[victim as usize];
            let Some((vpage, frame)) = swap.evict(victim, |v| table.lookup(v).map(frame_of), |f| owned[alloc.colour_of(f) as usize]) else {
                continue;
            };
            let marked = table.remove(vpage).is_some_and(|e| e & HINT != 0);
            if let Some(d) = self.dynamic.as_mut() {
                d.pages_in_colour[victim as usize][self.alloc.colour_of(frame) as usize] -= 1;
                // A page marked for lazy re-colouring leaves for swap uncopied.
                if let (true, Some(lazy)) = (marked, d.lazy.as_mut()) {
                    lazy[victim as usize] = lazy[victim as usize].saturating_sub(1);
                    d.stats.recolour_pending = d.pending();
                }
            }
            self.alloc.free(frame)?;
            self.events.push(OsEvent::SwapOut { tid, pid: victim, old: (frame as u64) << self.page_shift });
            return Ok(());
        }
        Ok(())
    }

    pub fn migration_stats(&self) -> Option<&MigrationStats> {
        self.migrating.as_ref().map(|m| &m.stats)
    }

    /// What the run's statistics should say about the configuration (migration that cannot apply).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// A load through a page marked by the scan: the hinting fault asks the migration policy
    /// and moves the page if it says so. Returns the page's frame after.
    #[cold]
    fn hint_fault(&mut self, pid: u32, tid: u32, core: u32, vpage: u64, entry: u32) -> Result<u32> {
        let frame = frame_of(entry);
        self.tables[pid as usize].set(vpage, frame);
        if self.dynamic.as_ref().is_some_and(|d| d.lazy.is_some()) {
            return self.lazy_recolour(pid, tid, vpage, frame);
        }
        let (Some(m), Some(nodes)) = (self.migrating.as_mut(), self.nodes.as_mut()) else { return Ok(frame) };
        let mut latency_ns = None;
        if let Some(t) = m.tracker.as_mut() {
            // Under a tracking policy the mark is an access bit, a scan mark, or both.
            let Some(p) = t.get_mut(frame) else { return Ok(frame) };
            p.referenced = true;
            p.watched = false;
            match p.marked_ns.take() {
                Some(at) => latency_ns = Some(self.now_ns - at),
                None => return Ok(frame),
            }
        }
        let page_node = nodes.layout.node_of_frame(frame);
        let thread_node = nodes.layout.node_of_core(core);
        m.stats.hint_faults += 1;
        self.events.push(OsEvent::HintFault { tid });
        let pass = m.passes[pid as usize];
        let early = pass <= migration::EARLY_PASSES;
        let free = nodes.capacity.iter().zip(&nodes.used).map(|(c, u)| c - u).collect();
        let capacity = nodes.capacity.clone();
        let fault = HintFault { pid, tid, frame, page_node, thread_node, early, pass, latency_ns, now_ns: self.now_ns, free, capacity };
        match m.policy.on_hint_fault(&fault) {
            Proposal::Stay => Ok(frame),
            Proposal::Refused(_) => {
                m.stats.refused += 1;
                Ok(frame)
            }
            Proposal::MoveTo(to) => {
                let t = to as usize;
                let keep = nodes.capacity[t] as f64 * m.policy.keep_free_pct() / 100.0;
                let room = keep == 0.0 || (nodes.capacity[t] - nodes.used[t]) as f64 > keep;
                let Some(new) = (if room { nodes.alloc_on(pid, to) } else { None }) else {
                    m.stats.destination_full += 1;
                    return Ok(frame);
                };
                nodes.free(pid, frame)?;
                self.tables[pid as usize].set(vpage, new);
                if let Some(t) = m.tracker.as_mut() {
                    t.moved(frame, new);
                }
                m.stats.pages_moved += 1;
                m.stats.moves[page_node as usize][to as usize] += 1;
                let shift = self.page_shift;
                self.events.push(OsEvent::Migrated { tid, pid, old: (frame as u64) << shift, new: (new as u64) << shift });
                Ok(new)
            }
        }
    }

    #[cold]
    fn fault(&mut self, pid: u32, tid: u32, core: u32, vpage: u64) -> Result<u32> {
        if let Some(nodes) = self.nodes.as_mut() {
            let node = nodes.layout.node_of_core(core);
            let fault = NodeFault { pid, thread: tid, core, node, vpage };
            let frame = match self.policy.choose_node(&fault) {
                Some(want) => nodes.alloc_near(pid, want, self.policy.name())?,
                // A node-colour policy takes the frame itself.
                None => {
                    let p = self.policy.place_on_nodes(&fault, &mut nodes.allocs)?;
                    nodes.pages[pid as usize][p.node as usize] += 1;
                    nodes.used[p.node as usize] += 1;
                    self.overflow[pid as usize] += p.placed.borrowed as u64;
                    nodes.layout.nodes[p.node as usize].frames.start + p.placed.frame
                }
            };
            self.tables[pid as usize].insert(vpage, frame);
            if let Some(t) = self.migrating.as_mut().and_then(|m| m.tracker.as_mut()) {
                t.mapped(frame, pid, vpage);
            }
            return Ok(frame);
        }
        let room = |os: &Self| os.policy.colours_of(pid).iter().any(|&c| os.alloc.free_of_colour(c) > 0);
        if self.swap.is_some() && !room(self) {
            if self.populating && self.dynamic.is_some() {
                let processes = vec![Default::default(); self.tables.len()];
                self.epoch(Monitors { processes, ..Default::default() }, Some(pid))?;
            }
            if !room(self) {
                self.swap_out(pid, tid)?;
            }
        }
        let placed = self.policy.place_on(pid, core, vpage, &mut self.alloc)?;
        self.overflow[pid as usize] += placed.borrowed as u64;
        self.tables[pid as usize].insert(vpage, placed.frame);
        if let Some(d) = self.dynamic.as_mut() {
            d.pages_in_colour[pid as usize][self.alloc.colour_of(placed.frame) as usize] += 1;
        }
        if let Some(s) = self.swap.as_mut() {
            if s.mapped(pid, tid, vpage) {
                self.events.push(OsEvent::SwapIn { tid, new: (placed.frame as u64) << self.page_shift });
            }
        }
        Ok(placed.frame)
    }

    /// The machine's nodes, when the policy places by node.
    pub fn node_layout(&self) -> Option<&NodeLayout> {
        self.nodes.as_ref().map(|n| &n.layout)
    }

    /// Process `pid`'s pages per node (one entry, all its pages, under a colour policy); those
    /// of a process that exited as they were at its exit, as its other placement figures.
    pub fn pages_per_node(&self, pid: u32) -> Vec<u64> {
        if let Some(Some(at_exit)) = self.exited_pages_per_node.get(pid as usize) {
            return at_exit.clone();
        }
        self.resident_pages_per_node(pid)
    }

    /// Process `pid`'s pages per node now (none once it exited).
    fn resident_pages_per_node(&self, pid: u32) -> Vec<u64> {
        match &self.nodes {
            Some(n) => n.pages.get(pid as usize).cloned().unwrap_or_default(),
            None => vec![self.tables.get(pid as usize).map_or(0, |t| t.len() as u64)],
        }
    }

    /// Each node's pages now, over all processes (numastat's view: an exited process's are free).
    pub fn node_pages(&self) -> Vec<u64> {
        let mut pages = vec![0; self.nodes.as_ref().map_or(1, |n| n.layout.count() as usize)];
        for pid in 0..self.processes() {
            for (node, n) in self.resident_pages_per_node(pid).into_iter().enumerate() {
                pages[node] += n;
            }
        }
        pages
    }

    /// Pages placed on another node than the policy chose, because it was full.
    pub fn fallback_pages(&self) -> u64 {
        self.nodes.as_ref().map_or(0, |n| n.fallback_pages)
    }

    /// Pages placed outside their region (`ccps`).
    pub fn spilled_pages(&self) -> u64 {
        self.policy.spilled_pages()
    }

    pub fn processes(&self) -> u32 {
        self.tables.len() as u32
    }

    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    pub fn allocator(&self) -> &BuddyAllocator {
        &self.alloc
    }

    pub fn colour_bits(&self) -> &ColourBits {
        &self.bits
    }

    /// Pages, overflow and the banks and channels process `pid`'s frames cover (a frame covers
    /// several when a bank or channel bit lies inside the page). Walks the page table.
    pub fn process_placement(&self, pid: u32) -> ProcessPlacement {
        if let Some(Some(at_exit)) = self.exited.get(pid as usize) {
            return at_exit.clone();
        }
        let Some(table) = self.tables.get(pid as usize) else {
            return ProcessPlacement {
                pid,
                pages: 0,
                colour_overflow_pages: 0,
                banks_used: Vec::new(),
                channels_used: Vec::new(),
                colours: Vec::new(),
            };
        };
        // Ids are below 2^(number of id functions): flags, not ordered sets (one probe per page).
        // On several nodes a bank or channel id is node-major over the machine (node x ids per
        // node + the id within the node, each node decoding its own addresses).
        let node_count = self.nodes.as_ref().map_or(1, |n| n.layout.count() as usize);
        let (bank_ids, channel_ids) = (1usize << self.bits.bank_id_masks().len(), 1usize << self.bits.channel_id_masks().len());
        let mut banks = vec![false; node_count * bank_ids];
        let mut channels = vec![false; node_count * channel_ids];
        // Spread footprints cover every id after a few hundred pages: stop there rather than
        // walk the rest of the table (a fixed cost at the end of every run).
        let (mut banks_left, mut channels_left) = (banks.len(), channels.len());
        let mark = |used: &mut [bool], left: &mut usize, id: usize| {
            if !std::mem::replace(&mut used[id], true) {
                *left -= 1;
            }
        };
        for (_, frame) in table.mappings() {
            let (node, local) = match &self.nodes {
                Some(n) => {
                    let node = n.layout.node_of_frame(frame);
                    (node as usize, frame - n.layout.nodes[node as usize].frames.start)
                }
                None => (0, frame),
            };
            let addr = (local as u64) << self.page_shift;
            self.bits.banks_of_frame(addr).for_each(|b| mark(&mut banks, &mut banks_left, node * bank_ids + b as usize));
            self.bits.channels_of_frame(addr).for_each(|c| mark(&mut channels, &mut channels_left, node * channel_ids + c as usize));
            if banks_left == 0 && channels_left == 0 {
                break;
            }
        }
        let ids = |used: Vec<bool>| used.iter().enumerate().filter(|(_, &u)| u).map(|(i, _)| i as u32).collect();
        ProcessPlacement {
            pid,
            pages: table.len() as u64,
            colour_overflow_pages: self.overflow[pid as usize],
            banks_used: ids(banks),
            channels_used: ids(channels),
            colours: self.policy.colours_of(pid).to_vec(),
        }
    }

    /// The colour bits of the machine, the policy's colour space, and each process's colours with
    /// their exact reach.
    pub fn colour_report(&self) -> Result<ColourReport> {
        let space = self.policy.colour_space();
        let count = space.count();
        // On several nodes bank and channel ids are node-major over the machine, as the frames'
        // (`process_placement`). Node-colour policies number colours node-major; the other node
        // policies have one colour, whose pages may go to any node with memory.
        let colours_nodes = placement::POLICIES.get(self.policy.name()).is_ok_and(|info| info.colours_nodes);
        let memory_nodes = self.nodes.as_ref().map_or(vec![0], |n| n.layout.memory_nodes());
        let (bank_ids, channel_ids) = (1u32 << self.bits.bank_id_masks().len(), 1u32 << self.bits.channel_id_masks().len());
        let processes = (0..self.processes())
            .map(|pid| {
                let colours = self.policy.colours_of(pid).to_vec();
                let mut by_node: Vec<(u32, Vec<u32>)> = Vec::new();
                for &c in &colours {
                    let nodes = if colours_nodes { vec![c / count] } else { memory_nodes.clone() };
                    for node in nodes {
                        match by_node.iter_mut().find(|(n, _)| *n == node) {
                            Some((_, local)) => local.push(c % count),
                            None => by_node.push((node, vec![c % count])),
                        }
                    }
                }
                by_node.sort_unstable();
                let (mut banks, mut channels, mut llc_sets) = (Vec::new(), Vec::new(), Vec::new());
                for (node, mut local) in by_node {
                    local.sort_unstable();
                    local.dedup();
                    let reach = self.bits.reach(space, &local)?;
                    banks.extend(reach.banks.iter().map(|b| node * bank_ids + b));
                    channels.extend(reach.channels.iter().map(|c| node * channel_ids + c));
                    llc_sets.extend(reach.llc_sets);
                }
                llc_sets.sort_unstable();
                llc_sets.dedup();
                Ok(ProcessColours {
                    pid,
                    colours_text: colour_list_text(&colours),
                    frames: colours.iter().map(|&c| self.bits.frames_of_colour(space, c % count)).sum(),
                    colours,
                    banks,
                    channels,
                    llc_sets: llc_sets.len(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ColourReport {
            policy: self.policy.name().to_string(),
            bits: self.bits.report(),
            space: space.describe(),
            colours: space.count(),
            processes,
        })
    }
}
