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

/// Raise `n` consecutive entries from `first` (a rank's bank groups in the `shared` table).
#[inline(always)]
fn raise_groups(shared: &mut [Cycle], first: usize, n: usize, t: Cycle) {
    for x in &mut shared[first..first + n] {
        raise(x, t);
    }
}

#[inline]
fn raise(slot: &mut Cycle, t: Cycle) {
    if *slot < t {
        *slot = t;
    }
}

/// Effects of one scope: (table entry, latency) or, for bank-group and rank scopes, (table
/// entry, index in `shared` or `NO_SHARED`, latency). Fixed arrays: no command of a DDR
/// standard has more than `MAX_EFFECTS` per scope (`Effects::of` checks).
const MAX_EFFECTS: usize = 6;
const NO_SHARED: usize = usize::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct Scoped {
    items: [(usize, usize, u64); MAX_EFFECTS],
    len: usize,
}

impl Scoped {
    fn push(&mut self, kind: usize, shared: Option<usize>, latency: u64) {
        assert!(self.len < MAX_EFFECTS, "more than {MAX_EFFECTS} timing effects of one command in one scope");
        self.items[self.len] = (kind, shared.unwrap_or(NO_SHARED), latency);
        self.len += 1;
    }
    #[inline(always)]
    fn iter(&self) -> &[(usize, usize, u64)] {
        &self.items[..self.len.min(MAX_EFFECTS)]
    }
}

/// One command's compiled effects, split by scope so applying them is straight loops.
#[derive(Clone, Copy, Debug, Default)]
struct Effects {
    bank: Scoped,
    group: Scoped,
    rank: Scoped,
    sibling: Scoped,
    /// The command bus's distance (0: none).
    bus: u64,
}

impl Effects {
    fn of(table: &TimingTable, cmd: Command) -> Self {
        let mut e = Effects::default();
        for x in table.after(cmd) {
            let kind = x.following as usize;
            match x.scope {
                Scope::Bank => e.bank.push(kind, None, x.latency),
                Scope::BankGroup => e.group.push(kind, shared_index(kind), x.latency),
                Scope::Rank => e.rank.push(kind, shared_index(kind), x.latency),
                Scope::SiblingRank => e.sibling.push(kind, shared_index(kind), x.latency),
                Scope::Channel => e.bus = e.bus.max(x.latency),
            }
        }
        e
    }
}

#[derive(Clone, Debug)]
pub struct ChannelTiming {
    table: TimingTable,
    effects: [Effects; Command::COUNT],
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
            effects: Command::ALL.map(|cmd| Effects::of(&table, cmd)),
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
    /// (an implicit precharge does not use it). Fields are borrowed one by one (the effects
    /// are read while the tables are raised).
    #[inline]
    fn apply_effects(&mut self, cmd: Command, at: Cycle, r: usize, g: usize, b: usize, bus: bool) {
        const K: usize = Command::COUNT - 1; // masks a table entry's index: no bounds check
        let e = &self.effects[cmd.index() & K];
        let (groups, gpr) = (self.groups, self.groups_per_rank);
        let shared = &mut self.shared[..];
        let bank = &mut self.bank[b];
        for &(kind, _, lat) in e.bank.iter() {
            raise(&mut bank[kind & K], at + lat);
        }
        let group = &mut self.group[g];
        for &(kind, k, lat) in e.group.iter() {
            raise(&mut group[kind & K], at + lat);
            if k != NO_SHARED {
                raise(&mut shared[k * groups + g], at + lat);
            }
        }
        for &(kind, k, lat) in e.rank.iter() {
            raise(&mut self.rank[r][kind & K], at + lat);
            if k != NO_SHARED {
                raise_groups(shared, k * groups + r * gpr, gpr, at + lat);
            }
        }
        for &(kind, k, lat) in e.sibling.iter() {
            for o in (0..self.ranks).filter(|&o| o != r) {
                raise(&mut self.rank[o][kind & K], at + lat);
                if k != NO_SHARED {
                    raise_groups(shared, k * groups + o * gpr, gpr, at + lat);
                }
            }
        }
        if bus && e.bus > 0 {
            raise(&mut self.cmd_bus, at + e.bus);
        }
    }
}
