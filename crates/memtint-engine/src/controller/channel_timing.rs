//! The earliest cycle each command may issue at each bank, bank group, rank and channel,
//! updated as commands issue (the "next allowed" tables of Ramulator, flattened) by applying
//! the standard's compiled timing rules (`dram::timing_rules::TimingTable`). RDA and WRA obey
//! exactly the rules of RD and WR (they differ only in what they cause), so they read the RD
//! and WR entries and no entries of their own are kept.

use crate::dram::constraints::Constraints;
use crate::dram::timing_rules::{Scope, TimingTable};
use crate::dram::Command;
use crate::Cycle;

type Next = [Cycle; Command::COUNT];

const RD: usize = Command::Rd as usize;
const WR: usize = Command::Wr as usize;
const ACT: usize = Command::Act as usize;
const PRE: usize = Command::Pre as usize;

/// The table entry `cmd` reads: its own, or RD's / WR's for the auto-precharge variants.
#[inline(always)]
fn entry(cmd: Command) -> usize {
    match cmd {
        Command::Rda => RD,
        Command::Wra => WR,
        _ => cmd as usize,
    }
}

#[inline]
fn raise(slot: &mut Cycle, t: Cycle) {
    if *slot < t {
        *slot = t;
    }
}

#[derive(Clone, Debug)]
pub struct ChannelTiming {
    table: TimingTable,
    c: Constraints,
    ranks: usize,
    bank: Vec<Next>,
    group: Vec<Next>,
    rank: Vec<Next>,
    /// One command per cycle on the command bus.
    cmd_bus: Cycle,
    /// Per rank, the cycles (ACT + tFAW) of its last four ACTs, as a ring.
    faw: Vec<[Cycle; 4]>,
    faw_pos: Vec<usize>,
    groups_per_rank: usize,
    /// Bank groups of the channel.
    groups: usize,
    /// Per kind and bank group (`kind * groups + group`): `shared_ready` without the command
    /// bus, kept up to date as commands issue, so schedulers read one dense table.
    shared: Vec<Cycle>,
}

/// Commands with a kept group-level ready time (`shared_kind`), in table order: RD, ACT, PRE,
/// WR. Kind-major with the column kinds at the ends, so a direction's three kinds (RD, ACT,
/// PRE for reads; ACT, PRE, WR for writes) are one contiguous range (`direction_kinds`).
pub const SHARED_KINDS: usize = 4;
const SHARED_CMDS: [Command; SHARED_KINDS] = [Command::Rd, Command::Act, Command::Pre, Command::Wr];
const KIND_RD: usize = 0;
const KIND_ACT: usize = 1;
const KIND_PRE: usize = 2;
const KIND_WR: usize = 3;

/// The kinds a direction's candidates use (their classes are `kinds.start * groups ..
/// kinds.end * groups`).
#[inline]
pub fn direction_kinds(is_write: bool) -> std::ops::Range<usize> {
    if is_write {
        KIND_ACT..KIND_WR + 1
    } else {
        KIND_RD..KIND_PRE + 1
    }
}

/// Index of command kind `kind` (a `Command as usize`) in the `shared` table, if it has one.
#[inline(always)]
const fn shared_index(kind: usize) -> Option<usize> {
    match kind {
        ACT => Some(KIND_ACT),
        PRE => Some(KIND_PRE),
        RD => Some(KIND_RD),
        WR => Some(KIND_WR),
        _ => None,
    }
}

/// Index of `cmd` in the `shared` table, for ACT, PRE, RD and WR.
#[inline]
pub fn shared_kind(cmd: Command) -> usize {
    match cmd {
        Command::Act => KIND_ACT,
        Command::Pre => KIND_PRE,
        Command::Rd => KIND_RD,
        Command::Wr => KIND_WR,
        _ => unreachable!("no shared ready time is kept for rank-wide or auto-precharge commands"),
    }
}

impl ChannelTiming {
    /// `c` is the same table's distances by name (`Constraints::from_table`), for readers.
    pub fn new(table: TimingTable, c: Constraints, ranks: u32, groups_per_rank: u32, banks_per_rank: u32) -> Self {
        let ranks = ranks as usize;
        ChannelTiming {
            table,
            c,
            ranks,
            bank: vec![[0; Command::COUNT]; ranks * banks_per_rank as usize],
            group: vec![[0; Command::COUNT]; ranks * groups_per_rank as usize],
            rank: vec![[0; Command::COUNT]; ranks],
            cmd_bus: 0,
            faw: vec![[0; 4]; ranks],
            faw_pos: vec![0; ranks],
            groups_per_rank: groups_per_rank as usize,
            groups: ranks * groups_per_rank as usize,
            shared: vec![0; SHARED_KINDS * ranks * groups_per_rank as usize],
        }
    }

    /// Per kind and bank group (`shared_kind(cmd) * groups + group`): the group-level
    /// earliest issue cycle without the command bus (see `cmd_bus`).
    #[inline]
    pub fn shared_table(&self) -> &[Cycle] {
        &self.shared
    }

    /// No command may issue before this cycle (one command per cycle).
    #[inline]
    pub fn cmd_bus(&self) -> Cycle {
        self.cmd_bus
    }

    pub fn constraints(&self) -> &Constraints {
        &self.c
    }

    /// Earliest cycle `cmd` may issue to this bank (rank-wide commands: pass any bank of the rank).
    #[inline]
    pub fn ready(&self, cmd: Command, rank: u32, group: u32, flat_bank: u32) -> Cycle {
        let i = entry(cmd);
        let r = rank as usize;
        let mut t = self.rank[r][i].max(self.cmd_bus);
        if !cmd.is_rank_wide() {
            t = t.max(self.bank[flat_bank as usize][i]).max(self.group[group as usize][i]);
        }
        if i == ACT {
            t = t.max(self.faw[r][self.faw_pos[r]]);
        }
        t
    }

    /// The bank's own part of `ready` (changes only when a command issues to this bank).
    #[inline]
    pub fn bank_ready(&self, cmd: Command, flat_bank: u32) -> Cycle {
        self.bank[flat_bank as usize][entry(cmd)]
    }

    /// The part of `ready` shared by the banks of a bank group (rank, bus, group and tFAW).
    #[inline]
    pub fn shared_ready(&self, cmd: Command, rank: u32, group: u32) -> Cycle {
        self.shared_without_bus(cmd, rank as usize, group as usize).max(self.cmd_bus)
    }

    #[inline]
    fn shared_without_bus(&self, cmd: Command, r: usize, g: usize) -> Cycle {
        let i = entry(cmd);
        let mut t = self.rank[r][i].max(self.group[g][i]);
        if i == ACT {
            t = t.max(self.faw[r][self.faw_pos[r]]);
        }
        t
    }

    /// Raise group `g`'s `kind` entry (and its `shared` entry: every part of a shared ready
    /// time only ever rises, so raising the maximum keeps it exact without recomputing it).
    #[inline(always)]
    fn raise_group(&mut self, g: usize, kind: usize, t: Cycle) {
        raise(&mut self.group[g][kind], t);
        if let Some(k) = shared_index(kind) {
            raise(&mut self.shared[k * self.groups + g], t);
        }
    }

    /// Raise rank `r`'s `kind` entry and the `shared` entries of its bank groups.
    #[inline(always)]
    fn raise_rank(&mut self, r: usize, kind: usize, t: Cycle) {
        raise(&mut self.rank[r][kind], t);
        if let Some(k) = shared_index(kind) {
            self.raise_rank_shared(r, k, t);
        }
    }

    #[inline(always)]
    fn raise_rank_shared(&mut self, r: usize, k: usize, t: Cycle) {
        let first = k * self.groups + r * self.groups_per_rank;
        for entry in &mut self.shared[first..first + self.groups_per_rank] {
            raise(entry, t);
        }
    }

    /// Record `cmd` issued at `now`. `act_cycle` is the bank's latest ACT (for auto-precharge).
    pub fn issue(&mut self, cmd: Command, now: Cycle, rank: u32, group: u32, flat_bank: u32, act_cycle: Cycle) {
        let (r, g, b) = (rank as usize, group as usize, flat_bank as usize);
        self.apply(cmd, now, r, g, b);
        if cmd == Command::Act {
            if let Some((window, latency)) = self.table.act_window {
                debug_assert_eq!(window, 4, "the ring holds four ACTs");
                let pos = self.faw_pos[r];
                self.faw[r][pos] = now + latency;
                let pos = (pos + 1) % 4;
                self.faw_pos[r] = pos;
                // The window's new oldest ACT (ACTs issue in time order, so this only rises).
                self.raise_rank_shared(r, KIND_ACT, self.faw[r][pos]);
            }
        }
        if cmd.auto_precharges() {
            let at = self.table.implicit_precharge(act_cycle, now, cmd.is_write());
            self.apply_effects(Command::Pre, at, r, g, b, false);
        }
        debug_assert!((0..self.shared.len()).all(|i| {
            let g = i % self.groups;
            self.shared[i] == self.shared_without_bus(SHARED_CMDS[i / self.groups], g / self.groups_per_rank, g)
        }));
    }

    #[inline]
    fn apply(&mut self, cmd: Command, now: Cycle, r: usize, g: usize, b: usize) {
        self.apply_effects(cmd, now, r, g, b, true);
    }

    /// Raise every entry `cmd`'s rules constrain, counting from `at`; `bus`: the command bus too
    /// (an implicit precharge does not use it).
    fn apply_effects(&mut self, cmd: Command, at: Cycle, r: usize, g: usize, b: usize, bus: bool) {
        for i in 0..self.table.after(cmd).len() {
            let e = self.table.after(cmd)[i];
            let (kind, t) = (e.following as usize, at + e.latency);
            match e.scope {
                Scope::Bank => raise(&mut self.bank[b][kind], t),
                Scope::BankGroup => self.raise_group(g, kind, t),
                Scope::Rank => self.raise_rank(r, kind, t),
                Scope::SiblingRank => {
                    for o in (0..self.ranks).filter(|&o| o != r) {
                        self.raise_rank(o, kind, t);
                    }
                }
                Scope::Channel => {
                    if bus {
                        raise(&mut self.cmd_bus, t);
                    }
                }
            }
        }
    }
}
