//! The cached scheduling candidates of one direction (reads or writes), indexed two ways.
//!
//! Per bank: at most one candidate, the command of the request its scheduler serves first
//! (`ChannelController::bank_candidate`). It stays valid until its bank's queue or state changes.
//!
//! Per class, a class being (command, bank group): every candidate of a class shares the rank,
//! bank-group and tFAW parts of its ready time, which `ChannelTiming` keeps in a dense table with
//! the same layout (`shared_table`, kind-major). A direction's classes are one contiguous range
//! of it (the other direction's column kind is never used), and only that range is scanned.
//! A candidate is ready at `max(t_bank, shared, bus)` and a class's earliest member at
//! `max(min t_bank, shared, bus)`, so a scan is one pass over two short arrays, and single
//! candidates are looked at only in classes that can issue now.
//!
//! An activated request's column command (`protect_activated`: its ACT issued, its RD/WR has
//! not) goes before every other candidate, the oldest first, and in ranks waiting for refresh
//! too (their PREA waits for it): it is marked `activated`, and the controller keys it by its
//! arrival order below every other key (`ChannelController::oldest_candidate`).

use super::channel_timing::{direction_kinds, shared_kind, SHARED_KINDS};
use super::ChannelTiming;
use crate::dram::Command;
use crate::{Cycle, NEVER};

/// One candidate, reduced to what scheduling reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cached {
    /// Bank-level earliest issue cycle and the request's own `ready_at`, combined: the parts
    /// of its ready time that change only when the bank does.
    pub t_bank: Cycle,
    /// Scheduler key (smaller wins); fixed while the candidate is cached. An activated
    /// candidate's key is its request's arrival order (`Request::seq`), below every other's.
    pub key: u64,
    pub cmd: Command,
    pub is_hit: bool,
    /// The column command of an activated request (offered by ranks waiting for refresh too).
    pub activated: bool,
    /// Position of the request in its bank queue.
    pub index: u32,
}

/// Result of a scan: the bank of the best ready candidate, if any, and a lower bound on the
/// next cycle a class that was not ready can issue.
pub struct Scan {
    pub best: Option<usize>,
    pub next: Cycle,
}

const NO_CLASS: u32 = u32::MAX;

/// A candidate as stored: the `Cached` and its class, in one record so a scan or an update
/// touches one cache line per candidate.
#[derive(Clone, Copy, Debug)]
struct Entry {
    t_bank: Cycle,
    key: u64,
    /// `NO_CLASS` when the bank has no candidate.
    class: u32,
    index: u32,
    cmd: Command,
    is_hit: bool,
    activated: bool,
}

const EMPTY: Entry = Entry { t_bank: NEVER, key: u64::MAX, class: NO_CLASS, index: 0, cmd: Command::Act, is_hit: false, activated: false };

pub struct CandidateSet {
    /// Per bank.
    entries: Vec<Entry>,
    /// Per bank: its entry up to date.
    valid: Vec<bool>,
    /// Bank groups of the channel (classes are `kind * groups + group`).
    groups: usize,
    /// This direction's classes (see the module header).
    classes: std::ops::Range<usize>,
    // Layout tables, so hot paths do not divide: per bank its group and its bit in a class's
    // member mask, per class its group and the first bank of that group.
    bank_group: Vec<u32>,
    bank_bit: Vec<u64>,
    class_group: Vec<u32>,
    class_first_bank: Vec<u32>,
    /// Per class `shared_kind(cmd) * groups + group`: its members, bit `bank within group`.
    /// (A direction never uses the other's column class.)
    members: Vec<u64>,
    /// Per class: the smallest `t_bank` of its members (`NEVER`: no members).
    earliest: Vec<Cycle>,
    /// Classes found ready by the last scan.
    ready: Vec<u32>,
}

impl CandidateSet {
    /// Members of a class are a 64-bit mask, so at most 64 banks per bank group.
    pub fn new(ranks: u32, groups_per_rank: u32, banks_per_group: u32, is_write: bool) -> Self {
        assert!(banks_per_group <= 64, "at most 64 banks per bank group");
        let groups = (ranks * groups_per_rank) as usize;
        let bpg = banks_per_group as usize;
        let banks = groups * bpg;
        let classes = SHARED_KINDS * groups;
        let kinds = direction_kinds(is_write);
        CandidateSet {
            groups,
            classes: kinds.start * groups..kinds.end * groups,
            entries: vec![EMPTY; banks],
            valid: vec![true; banks],
            bank_group: (0..banks).map(|b| (b / bpg) as u32).collect(),
            bank_bit: (0..banks).map(|b| 1 << (b % bpg)).collect(),
            class_group: (0..classes).map(|c| (c % groups) as u32).collect(),
            class_first_bank: (0..classes).map(|c| (bpg * (c % groups)) as u32).collect(),
            members: vec![0; classes],
            earliest: vec![NEVER; classes],
            ready: Vec::with_capacity(classes),
        }
    }

    #[inline]
    pub fn is_valid(&self, bank: usize) -> bool {
        self.valid[bank]
    }

    /// Mark bank `bank`'s candidate out of date; true if it was valid.
    #[inline]
    pub fn invalidate(&mut self, bank: usize) -> bool {
        std::mem::replace(&mut self.valid[bank], false)
    }

    #[inline]
    pub fn get(&self, bank: usize) -> Option<Cached> {
        let e = &self.entries[bank];
        (e.class != NO_CLASS).then_some(Cached {
            t_bank: e.t_bank,
            key: e.key,
            cmd: e.cmd,
            is_hit: e.is_hit,
            index: e.index,
            activated: e.activated,
        })
    }

    #[inline]
    fn class_of(&self, bank: usize, cmd: Command) -> usize {
        shared_kind(cmd) * self.groups + self.bank_group[bank] as usize
    }

    #[inline]
    fn group_of_class(&self, c: usize) -> usize {
        self.class_group[c] as usize
    }

    /// Class `c`'s members a scan may offer while `blocked` (its bank group's banks waiting
    /// for refresh, `RefreshState::blocked_banks`) holds some back: those not blocked, and the
    /// blocked ones' activated requests.
    #[inline]
    fn offered(&self, c: usize, blocked: u64) -> u64 {
        let m = self.members[c];
        if blocked == 0 {
            m
        } else {
            (m & !blocked) | (self.activated_members(c) & blocked)
        }
    }

    #[inline]
    fn first_bank_of_class(&self, c: usize) -> usize {
        self.class_first_bank[c] as usize
    }

    /// Replace bank `bank`'s candidate (and mark it valid).
    pub fn set_bank(&mut self, bank: usize, new: Option<Cached>) {
        self.valid[bank] = true;
        let bit = self.bank_bit[bank];
        let old = &self.entries[bank];
        let (old_class, t_old) = (old.class, old.t_bank);
        let entry = match new {
            Some(s) => Entry {
                t_bank: s.t_bank,
                key: s.key,
                class: self.class_of(bank, s.cmd) as u32,
                index: s.index,
                cmd: s.cmd,
                is_hit: s.is_hit,
                activated: s.activated,
            },
            // Common and cheap: a bank with nothing queued in this direction stays empty (every
            // issue invalidates both directions of its bank).
            None if old_class == NO_CLASS => return,
            None => EMPTY,
        };
        let (t_new, new_class) = (entry.t_bank, entry.class);
        self.entries[bank] = entry;
        if old_class != NO_CLASS {
            let c = old_class as usize;
            self.members[c] &= !bit;
            // Only a leaving member that was the earliest can raise the class's earliest, and
            // not when an earlier or equal one takes its place in the same class.
            if t_old == self.earliest[c] && !(new_class == old_class && t_new <= t_old) {
                self.recompute_earliest(c);
            }
        }
        if new_class != NO_CLASS {
            let c = new_class as usize;
            self.members[c] |= bit;
            self.earliest[c] = self.earliest[c].min(t_new);
        }
    }

    fn recompute_earliest(&mut self, c: usize) {
        let first = self.first_bank_of_class(c);
        let mut t = NEVER;
        let mut m = self.members[c];
        while m != 0 {
            t = t.min(self.entries[first + m.trailing_zeros() as usize].t_bank);
            m &= m - 1;
        }
        self.earliest[c] = t;
    }

    /// Find the ready candidate with the smallest key at `now`, leaving out those of the banks
    /// `blocked` (per bank group, banks waiting for refresh) marks but for activated ones. Remembers the
    /// ready classes for `next_after_issue`.
    #[inline(always)]
    pub fn scan(&mut self, now: Cycle, timing: &ChannelTiming, blocked: &[u64], any_blocked: bool) -> Scan {
        let shared = timing.shared_table();
        // No command issued yet this cycle, so the command bus is free: only later classes
        // contribute to `next`, and they are later than the bus too.
        debug_assert!(timing.cmd_bus() <= now);
        let mut next = NEVER;
        self.ready.clear();
        let first = self.classes.start;
        for (c, (&e, &s)) in self.earliest[self.classes.clone()].iter().zip(&shared[self.classes.clone()]).enumerate() {
            let t = e.max(s);
            if t > now {
                next = next.min(t);
            } else {
                self.ready.push((first + c) as u32);
            }
        }
        let (mut best_key, mut best) = (u64::MAX, None);
        for &c in &self.ready {
            let c = c as usize;
            let first = self.first_bank_of_class(c);
            let mut m = self.members[c];
            if any_blocked {
                // A bank waiting for refresh offers only its activated requests.
                m = self.offered(c, blocked[self.group_of_class(c)]);
            }
            while m != 0 {
                let bank = first + m.trailing_zeros() as usize;
                m &= m - 1;
                let e = &self.entries[bank];
                if e.t_bank > now {
                    next = next.min(e.t_bank);
                } else if e.key <= best_key {
                    // `<=`: keys are unique, and a scheduler may use the whole range, u64::MAX too
                    best_key = e.key;
                    best = Some(bank);
                }
            }
        }
        Scan { best, next }
    }

    /// The earliest cycle any class can issue: exact (for banks not `blocked`, and the
    /// activated ones of those that are) until a command issues, a request arrives or a
    /// refresh intervenes.
    #[inline(always)]
    pub fn next_issue(&self, timing: &ChannelTiming, blocked: &[u64], any_blocked: bool) -> Cycle {
        let shared = timing.shared_table();
        let (earliest, shared) = (&self.earliest[self.classes.clone()], &shared[self.classes.clone()]);
        let mut t = NEVER;
        if any_blocked {
            let first = self.classes.start;
            for (c, (&e, &s)) in earliest.iter().zip(shared).enumerate() {
                let mask = blocked[self.group_of_class(first + c)];
                if mask == 0 {
                    t = t.min(e.max(s));
                } else {
                    t = t.min(self.earliest_of(first + c, self.offered(first + c, mask)).max(s));
                }
            }
        } else {
            for (&e, &s) in earliest.iter().zip(shared) {
                t = t.min(e.max(s));
            }
        }
        t.max(timing.cmd_bus())
    }

    /// Class `c`'s activated members (bits as in `members`).
    #[cold]
    fn activated_members(&self, c: usize) -> u64 {
        let first = self.first_bank_of_class(c);
        let (mut m, mut activated) = (self.members[c], 0);
        while m != 0 {
            if self.entries[first + m.trailing_zeros() as usize].activated {
                activated |= m & m.wrapping_neg();
            }
            m &= m - 1;
        }
        activated
    }

    /// The smallest `t_bank` of class `c`'s members in mask `m` (`NEVER`: none).
    fn earliest_of(&self, c: usize, mut m: u64) -> Cycle {
        let first = self.first_bank_of_class(c);
        let mut t = NEVER;
        while m != 0 {
            t = t.min(self.entries[first + m.trailing_zeros() as usize].t_bank);
            m &= m - 1;
        }
        t
    }

    /// Earliest cycle `bank`'s candidate can issue (`NEVER`: none, or the bank waits for
    /// refresh and its candidate is not activated).
    pub fn bank_earliest(&self, timing: &ChannelTiming, bank: usize, blocked: &[u64]) -> Cycle {
        let e = &self.entries[bank];
        let waits = blocked[self.bank_group[bank] as usize] & self.bank_bit[bank] != 0;
        if e.class == NO_CLASS || (waits && !e.activated) {
            return NEVER;
        }
        e.t_bank.max(timing.shared_table()[e.class as usize]).max(timing.cmd_bus())
    }
}
