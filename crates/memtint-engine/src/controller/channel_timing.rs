//! The earliest cycle each command may issue at each bank, bank group, rank and channel,
//! updated as commands issue (the "next allowed" tables of Ramulator, flattened) by applying
//! the standard's compiled timing rules (`dram::timing_rules::TimingTable`). RDA and WRA obey
//! the rules of RD and WR (they differ in what they cause), so they read the RD and WR
//! entries; a bank's RDA entry holds RDA's own rule (a write's recovery, `rda_ready`), which
//! the controller reads before turning an RD into an RDA.

use crate::dram::constraints::Constraints;
use crate::dram::timing_rules::{Effect, Scope, TimingTable};
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

/// One command's compiled effects for one issuing bank group: index lists, so applying them
/// is two flat loops with no per-effect branches (bank-group, rank and sibling-rank effects,
/// and the `shared` entries they keep up to date, are resolved to indices in `flat` when the
/// table is compiled).
#[derive(Clone, Debug, Default)]
struct Program {
    /// (entry, latency) in the issuing bank's table.
    bank: Vec<(usize, u64)>,
    /// (index, latency) in `flat`.
    flat: Vec<(usize, u64)>,
    /// The command bus's distance (0: none).
    bus: u64,
}

impl Program {
    /// `effects`: a command's (`TimingTable::after`); `g`: the issuing bank group, of `gpr` per rank.
    fn of(effects: &[Effect], g: usize, ranks: usize, gpr: usize) -> Self {
        let groups = ranks * gpr;
        let (rank0, group0) = (SHARED_KINDS * groups, SHARED_KINDS * groups + ranks * Command::COUNT);
        let r = g / gpr;
        let mut p = Program::default();
        for x in effects {
            let (kind, latency) = (x.following as usize, x.latency);
            let shared = shared_index(kind);
            let ranks = match x.scope {
                Scope::Bank => {
                    p.bank.push((kind, latency));
                    continue;
                }
                Scope::BankGroup => {
                    p.flat.push((group0 + g * Command::COUNT + kind, latency));
                    p.flat.extend(shared.map(|k| (k * groups + g, latency)));
                    continue;
                }
                Scope::Channel => {
                    p.bus = p.bus.max(latency);
                    continue;
                }
                Scope::Rank => r..r + 1,
                Scope::SiblingRank => 0..ranks,
            };
            for o in ranks.filter(|&o| x.scope == Scope::Rank || o != r) {
                p.flat.push((rank0 + o * Command::COUNT + kind, latency));
                if let Some(k) = shared {
                    p.flat.extend((0..gpr).map(|j| (k * groups + o * gpr + j, latency)));
                }
            }
        }
        // A shared entry raised by both a bank-group and a rank rule (tCCD_L and tCCD_S...)
        // needs only the larger latency.
        p.flat.sort_by_key(|&(i, latency)| (i, std::cmp::Reverse(latency)));
        p.flat.dedup_by_key(|e| e.0);
        p
    }
}

#[derive(Clone, Debug)]
pub struct ChannelTiming {
    table: TimingTable,
    /// Per command and issuing bank group (`cmd * groups + group`).
    programs: Vec<Program>,
    /// Per issuing bank group: the precharge an RDA or WRA implies.
    implied_pre: Vec<Program>,
    c: Constraints,
    bank: Vec<Next>,
    /// `shared` (per kind and bank group, `kind * groups + group`: `shared_ready` without the
    /// command bus, kept up to date so schedulers read one dense table), then each rank's table
    /// from `rank0`, then each bank group's from `group0`: one vector, so all effects beyond
    /// the bank are one index list.
    flat: Vec<Cycle>,
    rank0: usize,
    group0: usize,
    /// One command per cycle on the command bus.
    cmd_bus: Cycle,
    /// Per rank, the cycles (ACT + tFAW) of its last four ACTs, as a ring.
    faw: Vec<[Cycle; 4]>,
    faw_pos: Vec<usize>,
    /// With a column-command throttle (`TimingTable::col_window`): the channel's last column
    /// commands' cycles + the window, as a ring.
    col_ring: Vec<Cycle>,
    col_pos: usize,
    groups_per_rank: usize,
    banks_per_group: usize,
    /// Bank groups of the channel.
    groups: usize,
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
        let (ranks, gpr) = (ranks as usize, groups_per_rank as usize);
        let rank0 = SHARED_KINDS * ranks * gpr;
        let col_ring = vec![0; table.col_window.map_or(0, |(n, _)| n)];
        ChannelTiming {
            programs: Command::ALL
                .iter()
                .flat_map(|&cmd| (0..ranks * gpr).map(move |g| (cmd, g)))
                .map(|(cmd, g)| Program::of(table.after(cmd), g, ranks, gpr))
                .collect(),
            implied_pre: (0..ranks * gpr).map(|g| Program::of(table.after_implied_precharge(), g, ranks, gpr)).collect(),
            table,
            c,
            bank: vec![[0; Command::COUNT]; ranks * banks_per_rank as usize],
            flat: vec![0; rank0 + (ranks + ranks * gpr) * Command::COUNT],
            rank0,
            group0: rank0 + ranks * Command::COUNT,
            cmd_bus: 0,
            faw: vec![[0; 4]; ranks],
            faw_pos: vec![0; ranks],
            col_ring,
            col_pos: 0,
            groups_per_rank: groups_per_rank as usize,
            banks_per_group: (banks_per_rank / groups_per_rank.max(1)) as usize,
            groups: ranks * gpr,
        }
    }

    /// Per kind and bank group (`shared_kind(cmd) * groups + group`): the group-level
    /// earliest issue cycle without the command bus (see `cmd_bus`).
    #[inline]
    pub fn shared_table(&self) -> &[Cycle] {
        &self.flat[..self.rank0]
    }

    #[inline(always)]
    fn rank(&self, r: usize, i: usize) -> Cycle {
        self.flat[self.rank0 + r * Command::COUNT + i]
    }

    #[inline(always)]
    fn group(&self, g: usize, i: usize) -> Cycle {
        self.flat[self.group0 + g * Command::COUNT + i]
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
        let mut t = self.rank(r, i).max(self.cmd_bus);
        if cmd.addresses_bank_index() {
            for b in self.bank_index_banks(flat_bank as usize) {
                t = t.max(self.bank[b][i]);
            }
        } else if !cmd.is_rank_wide() {
            t = t.max(self.bank[flat_bank as usize][i]).max(self.group(group as usize, i));
        }
        if i == ACT {
            t = t.max(self.faw[r][self.faw_pos[r]]);
        }
        t
    }

    /// The banks a bank-index command (REFSB) addressed to `flat_bank` covers: its index in
    /// every bank group of its rank.
    fn bank_index_banks(&self, flat_bank: usize) -> impl Iterator<Item = usize> {
        let (bpg, gpr) = (self.banks_per_group, self.groups_per_rank);
        let first = flat_bank - flat_bank % (bpg * gpr) + flat_bank % bpg;
        (0..gpr).map(move |g| first + g * bpg)
    }

    /// The bank's own part of `ready` (changes only when a command issues to this bank).
    #[inline]
    pub fn bank_ready(&self, cmd: Command, flat_bank: u32) -> Cycle {
        self.bank[flat_bank as usize][entry(cmd)]
    }

    /// Before this cycle an RD to this bank may not auto-precharge (an earlier write's recovery
    /// would be cut short: `TimingTable::rda_after_write`); `ready(Rd)` holds the rest.
    #[inline]
    pub fn rda_ready(&self, flat_bank: u32) -> Cycle {
        self.bank[flat_bank as usize][Command::Rda as usize]
    }

    /// The part of `ready` shared by the banks of a bank group (rank, bus, group and tFAW).
    #[inline]
    pub fn shared_ready(&self, cmd: Command, rank: u32, group: u32) -> Cycle {
        self.shared_without_bus(cmd, rank as usize, group as usize).max(self.cmd_bus)
    }

    #[inline]
    fn shared_without_bus(&self, cmd: Command, r: usize, g: usize) -> Cycle {
        let i = entry(cmd);
        let mut t = self.rank(r, i).max(self.group(g, i));
        if i == ACT {
            t = t.max(self.faw[r][self.faw_pos[r]]);
        }
        t
    }

    #[inline(always)]
    fn raise_rank_shared(&mut self, r: usize, k: usize, t: Cycle) {
        let first = k * self.groups + r * self.groups_per_rank;
        for entry in &mut self.flat[first..first + self.groups_per_rank] {
            raise(entry, t);
        }
    }

    /// No command may issue to `rank` before `until` (a power-down exit's tXP): every rank
    /// entry of it, and the shared entries of its bank groups, rise to `until`.
    pub fn hold_rank(&mut self, rank: u32, until: Cycle) {
        let r = rank as usize;
        for i in 0..Command::COUNT {
            raise(&mut self.flat[self.rank0 + r * Command::COUNT + i], until);
        }
        for k in 0..SHARED_KINDS {
            self.raise_rank_shared(r, k, until);
        }
    }

    /// Record `cmd` issued at `now`. `act_cycle` is the bank's latest ACT (for auto-precharge).
    pub fn issue(&mut self, cmd: Command, now: Cycle, rank: u32, group: u32, flat_bank: u32, act_cycle: Cycle) {
        let (r, g, b) = (rank as usize, group as usize, flat_bank as usize);
        self.apply_effects(Some(cmd), now, g, b);
        if cmd.addresses_bank_index() {
            // The bank rules hold each bank the command covers.
            let p = &self.programs[cmd.index() * self.groups + g];
            let banks: Vec<usize> = self.bank_index_banks(b).filter(|&o| o != b).collect();
            for o in banks {
                for &(kind, lat) in &p.bank {
                    raise(&mut self.bank[o][kind], now + lat);
                }
            }
        }
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
        if let (Some((n, window)), true) = (self.table.col_window, cmd.is_column()) {
            self.col_ring[self.col_pos] = now + window;
            self.col_pos = (self.col_pos + 1) % n;
            // The window's new oldest column command holds every rank's and group's RD and WR.
            let t = self.col_ring[self.col_pos];
            for r in 0..self.groups / self.groups_per_rank.max(1) {
                for i in [RD, WR] {
                    raise(&mut self.flat[self.rank0 + r * Command::COUNT + i], t);
                }
            }
            for k in [KIND_RD, KIND_WR] {
                for entry in &mut self.flat[k * self.groups..(k + 1) * self.groups] {
                    raise(entry, t);
                }
            }
        }
        if cmd.auto_precharges() {
            let at = self.table.implicit_precharge(act_cycle, now, cmd.is_write());
            self.apply_effects(None, at, g, b);
        }
        debug_assert!((0..self.rank0).all(|i| {
            let g = i % self.groups;
            self.flat[i] == self.shared_without_bus(SHARED_CMDS[i / self.groups], g / self.groups_per_rank, g)
        }));
    }

    /// Raise every entry `cmd`'s rules constrain, counting from `at`, and the command bus;
    /// `None`: an RDA's or WRA's implied precharge (no command on the bus).
    #[inline(always)]
    fn apply_effects(&mut self, cmd: Option<Command>, at: Cycle, g: usize, b: usize) {
        const K: usize = Command::COUNT - 1; // clamps a table entry's index: no bounds check
        let p = match cmd {
            Some(cmd) => &self.programs[cmd.index() * self.groups + g],
            None => &self.implied_pre[g],
        };
        let bank = &mut self.bank[b];
        for &(kind, lat) in &p.bank {
            raise(&mut bank[kind.min(K)], at + lat);
        }
        for &(i, lat) in &p.flat {
            raise(&mut self.flat[i], at + lat);
        }
        if cmd.is_some() && p.bus > 0 {
            raise(&mut self.cmd_bus, at + p.bus);
        }
    }
}
