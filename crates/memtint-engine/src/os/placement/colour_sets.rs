//! Per-process colour sets, shared by every partitioning policy: the default even split, explicit
//! sets and coalescing (HVR §2.3: several processes share one set), the order frames come in
//! (`os.frame_order`: the baseline's aged order restricted to the set, or ascending frames
//! round-robin over the set's colours; BPM §2.4 leaves the order open), and what happens when
//! the colours are full.

use super::{Placement, PlacementPolicy};
use crate::error::{Error, Result};
use crate::os::buddy::{BuddyAllocator, Frame};
use crate::os::colour::{colour_list_text, ColourBits, ColourSpace};
use crate::os::frame_order::FrameOrder;
use crate::os::{FrameOrderKind, OsConfig};

/// How the default even split deals the colours out (`os.colour_split`). Colour numbers
/// count the space's bits from its first function up, so the two shapes fix different bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColourSplit {
    /// Consecutive colours: each set fixes the highest colour bits (on the i7-860 the rank
    /// bits b21-b22: a program owns all 8 banks of one rank in both channels).
    Contiguous,
    /// Every n-th colour: each set fixes the lowest colour bits (on the i7-860 b13-b14, which
    /// also index LLC sets, so the split partitions the LLC as well).
    Strided,
}

impl ColourSplit {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "contiguous" => Ok(ColourSplit::Contiguous),
            "strided" => Ok(ColourSplit::Strided),
            _ => Err(Error::config("os.colour_split", format!("unknown colour split '{name}'; choose contiguous or strided"))),
        }
    }
}

/// The flat `[os]` keys a `ColourSets` reads (`PolicyInfo::reads_keys` of every policy built on it).
pub const KEYS: &[&str] = &["colours", "groups", "colour_split", "frame_order", "strict"];

/// Of those, the keys that decide which colours each process gets; `frame_order` and `strict`
/// act as frames are handed out, over a run.
pub const SHAPING_KEYS: &[&str] = &["colours", "groups", "colour_split"];

pub struct ColourSets {
    space: ColourSpace,
    policy: &'static str,
    sets: Vec<Vec<u32>>,
    /// Process -> index into `sets`.
    set_of: Vec<u32>,
    /// Process -> next position in its set (round-robin).
    cursor: Vec<usize>,
    /// Per set: the aged order its frames come in, and its colours as flags over the space.
    orders: AgedFrames,
    members: Vec<Vec<bool>>,
    /// Frames each set can hold, and each colour.
    set_frames: Vec<u64>,
    colour_frames: Vec<u64>,
    strict: bool,
}

impl ColourSets {
    /// Colour sets over `space` from `cfg.colours` / `cfg.groups`, or an even split of the colours
    /// over the processes (or over the groups when `cfg.groups` coalesces them).
    pub fn new(policy: &'static str, space: ColourSpace, cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<Self> {
        let n = space.count();
        let set_count = match (&cfg.colours, &cfg.groups) {
            (Some(sets), _) => sets.len() as u32,
            (None, Some(groups)) => groups.iter().max().map_or(0, |&g| g + 1),
            (None, None) => processes,
        };
        let sets: Vec<Vec<u32>> = match &cfg.colours {
            Some(sets) => sets.clone(),
            None => {
                if set_count > n {
                    return Err(Error::config(
                        "os",
                        format!(
                            "policy {policy} gives each of {set_count} {} its own colours but has only {n} ({}); \
                             run fewer processes, share colours with os.groups, or pick a policy with more colours",
                            if cfg.groups.is_some() { "colour sets" } else { "processes" },
                            space.describe()
                        ),
                    ));
                }
                match ColourSplit::from_name(&cfg.colour_split)? {
                    ColourSplit::Contiguous => (0..set_count).map(|s| (s * n / set_count..(s + 1) * n / set_count).collect()).collect(),
                    ColourSplit::Strided => (0..set_count).map(|s| (s..n).step_by(set_count as usize).collect()).collect(),
                }
            }
        };
        let set_of: Vec<u32> = match &cfg.groups {
            Some(groups) => {
                if groups.len() != processes as usize {
                    return Err(Error::config(
                        "os.groups",
                        format!("gives a colour set for {} processes, but there are {processes}", groups.len()),
                    ));
                }
                if let Some((p, &g)) = groups.iter().enumerate().find(|(_, &g)| g as usize >= sets.len()) {
                    return Err(Error::config(
                        "os.groups",
                        format!("process {p} uses colour set {g}, but there are {} sets (0-{})", sets.len(), sets.len().max(1) - 1),
                    ));
                }
                if cfg.colours.is_none() {
                    if let Some(s) = (0..sets.len() as u32).find(|s| !groups.contains(s)) {
                        return Err(Error::config(
                            "os.groups",
                            format!("colour set {s} is used by no process; number the sets 0-{} without gaps", sets.len() - 1),
                        ));
                    }
                }
                groups.clone()
            }
            None => {
                if sets.len() != processes as usize {
                    return Err(Error::config(
                        "os.colours",
                        format!(
                            "gives {} colour sets for {processes} processes; give one per process or map processes \
                             to sets with os.groups",
                            sets.len()
                        ),
                    ));
                }
                (0..processes).collect()
            }
        };

        let mut owner = vec![None; n as usize];
        for (s, set) in sets.iter().enumerate() {
            if set.is_empty() {
                return Err(Error::config("os.colours", format!("colour set {s} is empty")));
            }
            for &c in set {
                space.check_colour(c)?;
                if let Some(other) = owner[c as usize].replace(s) {
                    let what = if other == s { format!("twice in colour set {s}") } else { format!("in colour sets {other} and {s}") };
                    return Err(Error::config(
                        "os.colours",
                        format!("colour {c} is {what}; colours are exclusive (share a whole set with os.groups)"),
                    ));
                }
            }
        }
        let colour_frames: Vec<u64> = (0..n).map(|c| bits.frames_of_colour(&space, c)).collect();
        let set_frames: Vec<u64> = sets.iter().map(|set| set.iter().map(|&c| colour_frames[c as usize]).sum()).collect();
        if cfg.strict {
            if let Some(s) = set_frames.iter().position(|&f| f == 0) {
                return Err(Error::config(
                    "os.colours",
                    format!("colour set {s} (colours {}) holds no frame on this machine", colour_list_text(&sets[s])),
                ));
            }
        }
        let orders = AgedFrames::new(cfg, sets.len())?;
        let members = sets.iter().map(|set| flags(n, set)).collect();
        Ok(ColourSets {
            space,
            policy,
            sets,
            set_of,
            cursor: vec![0; processes as usize],
            orders,
            members,
            set_frames,
            colour_frames,
            strict: cfg.strict,
        })
    }

    /// New colours per process (a dynamic policy's): equal lists become one shared set, and
    /// sets must not overlap otherwise. Frames keep coming in each set's aged order.
    pub fn set_colours(&mut self, colours: &[Vec<u32>]) -> Result<()> {
        if colours.len() != self.set_of.len() {
            return Err(Error::config("os.dynamic", format!("{} colour sets for {} processes", colours.len(), self.set_of.len())));
        }
        let n = self.space.count();
        let mut sets: Vec<Vec<u32>> = Vec::new();
        let mut set_of = Vec::with_capacity(colours.len());
        let mut owner = vec![None; n as usize];
        for (p, set) in colours.iter().enumerate() {
            let mut set = set.clone();
            set.sort_unstable();
            if set.is_empty() {
                return Err(Error::config("os.dynamic", format!("process {p} was left without colours")));
            }
            let s = match sets.iter().position(|x| *x == set) {
                Some(s) => s,
                None => {
                    for &c in &set {
                        self.space.check_colour(c)?;
                        if let Some(q) = owner[c as usize].replace(sets.len()) {
                            return Err(Error::config("os.dynamic", format!("colour {c} is in two colour sets ({q} and {})", sets.len())));
                        }
                    }
                    sets.push(set);
                    sets.len() - 1
                }
            };
            set_of.push(s as u32);
        }
        self.orders.ensure(sets.len());
        self.members = sets.iter().map(|set| flags(n, set)).collect();
        self.set_frames = sets.iter().map(|set| set.iter().map(|&c| self.colour_frames[c as usize]).sum()).collect();
        self.sets = sets;
        self.set_of = set_of;
        self.cursor.iter_mut().for_each(|c| *c = 0);
        Ok(())
    }

    pub fn space(&self) -> &ColourSpace {
        &self.space
    }

    pub fn colours_of(&self, pid: u32) -> &[u32] {
        &self.sets[self.set_of[pid as usize] as usize]
    }

    /// The set's next frame in aged order, else the next owned colour with a free frame,
    /// round-robin; otherwise borrow (or fail if strict).
    pub fn place(&mut self, pid: u32, alloc: &mut BuddyAllocator) -> Result<Placement> {
        let s = self.set_of[pid as usize] as usize;
        let member = &self.members[s];
        if let Some(frame) = self.orders.next(s, alloc, |a, f| member[a.colour_of(f) as usize]) {
            return Ok(Placement { frame, borrowed: false });
        }
        let set = &self.sets[s];
        let start = self.cursor[pid as usize];
        for i in 0..set.len() {
            let at = (start + i) % set.len();
            if let Some(frame) = alloc.alloc_colour(set[at]) {
                self.cursor[pid as usize] = (at + 1) % set.len();
                return Ok(Placement { frame, borrowed: false });
            }
        }
        if self.strict {
            return Err(Error::config(
                "os.colours",
                format!(
                    "process {pid} (colours {}): no free frame left in its {} colours ({} frames); set os.strict = \
                     false to borrow from other colours",
                    colour_list_text(set),
                    set.len(),
                    self.set_frames[self.set_of[pid as usize] as usize]
                ),
            ));
        }
        // Borrow from the least-used colour that still has a free frame.
        let lender = (0..self.space.count()).filter(|&c| alloc.free_of_colour(c) > 0).min_by_key(|&c| (alloc.allocated_of_colour(c), c));
        match lender.and_then(|c| alloc.alloc_colour(c)) {
            Some(frame) => Ok(Placement { frame, borrowed: true }),
            None => Err(out_of_memory(self.policy, pid, alloc)),
        }
    }
}

/// Colour `set` as flags over `n` colours.
fn flags(n: u32, set: &[u32]) -> Vec<bool> {
    let mut m = vec![false; n as usize];
    set.iter().for_each(|&c| m[c as usize] = true);
    m
}

/// Frames for colour-restricted placement in the baseline's aged order (`os.frame_order`
/// "aged"): one order per region (a colour set, a core, a process), region i seeded with
/// `os.seed + i`, so region 0 with every colour draws exactly the baseline's frames. With
/// "ascending" it gives nothing and the policy takes the lowest free frame of a colour.
pub struct AgedFrames {
    orders: Option<Vec<FrameOrder>>,
    seed: u64,
}

impl AgedFrames {
    pub fn new(cfg: &OsConfig, regions: usize) -> Result<Self> {
        Ok(AgedFrames {
            seed: cfg.seed(),
            orders: match FrameOrderKind::from_name(&cfg.frame_order)? {
                FrameOrderKind::Aged => Some((0..regions as u64).map(|i| FrameOrder::new(cfg.seed().wrapping_add(i))).collect()),
                FrameOrderKind::Ascending => None,
            },
        })
    }

    /// At least `regions` orders (new ones seeded as `new` seeds them).
    pub fn ensure(&mut self, regions: usize) {
        if let Some(o) = self.orders.as_mut() {
            while o.len() < regions {
                o.push(FrameOrder::new(self.seed.wrapping_add(o.len() as u64)));
            }
        }
    }

    /// Region `i`'s next frame among those `accept` takes; None with "ascending", or when random
    /// probing finds none (the policy then falls back to its ascending choice).
    pub fn next(&mut self, i: usize, alloc: &mut BuddyAllocator, accept: impl Fn(&BuddyAllocator, Frame) -> bool) -> Option<Frame> {
        self.orders.as_mut()?.get_mut(i)?.next_frame_where(alloc, accept)
    }
}

pub fn out_of_memory(policy: &str, pid: u32, alloc: &BuddyAllocator) -> Error {
    Error::config(
        "os",
        format!(
            "out of physical memory under policy {policy}: all {} frames are allocated when process {pid} faults",
            alloc.total_frames()
        ),
    )
}

/// Every colour-partitioning policy (BPM, BPM+, the HVR family) is a `ColourSets` over its own
/// colour space; the policy files only choose the space.
impl PlacementPolicy for ColourSets {
    fn name(&self) -> &'static str {
        self.policy
    }
    fn colour_space(&self) -> &ColourSpace {
        self.space()
    }
    fn colours_of(&self, pid: u32) -> &[u32] {
        ColourSets::colours_of(self, pid)
    }
    fn place(&mut self, pid: u32, _vpage: u64, alloc: &mut BuddyAllocator) -> Result<Placement> {
        ColourSets::place(self, pid, alloc)
    }
    fn set_colours(&mut self, colours: &[Vec<u32>]) -> Result<()> {
        ColourSets::set_colours(self, colours)
    }
}
