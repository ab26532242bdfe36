//! The cached scheduling candidates of one direction (reads or writes), indexed two ways.
//!
//! Per bank: at most two slots, the oldest hit's column command and the oldest other request's
//! PRE or ACT (see `BankQueue`). A slot stays valid until its bank's queue or state changes.
//!
//! Per class, a class being (command, bank group): every candidate of a class shares the rank,
//! command-bus, bank-group and tFAW parts of its ready time (`ChannelTiming::shared_ready`), so a
//! slot is ready at `max(t_bank, shared)` and a class's earliest member at
//! `max(min t_bank, shared)`. A scan therefore evaluates the shared part once per class, skips
//! classes whose earliest member is not due with one compare, and looks at single slots only in
//! classes that can issue now.

use super::ChannelTiming;
use crate::dram::Command;
use crate::{Cycle, NEVER};

/// One candidate, reduced to what scheduling reads.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// Bank-level earliest issue cycle and the request's own `ready_at`, combined: the parts
    /// of its ready time that change only when the bank does.
    pub t_bank: Cycle,
    /// Scheduler key (smaller wins); fixed while the slot is cached.
    pub key: u64,
    pub cmd: Command,
    pub is_hit: bool,
    /// Position of the request in its bank queue.
    pub index: u32,
}

/// Class kinds: a class is (kind, bank group); the column kind is RD or WR by direction.
const KINDS: usize = 3;

fn kind(cmd: Command) -> usize {
    match cmd {
        Command::Act => 0,
        Command::Pre => 1,
        _ => 2,
    }
}

/// Result of a scan: the best ready slot (`2 * bank + k`), if any, and a lower bound on the
/// next cycle a class that was not ready can issue.
pub struct Scan {
    pub best: Option<usize>,
    pub next: Cycle,
}

pub struct CandidateSet {
    /// Slot `2 * bank + k`; `None` when empty.
    slots: Vec<Option<Slot>>,
    /// Per bank: slots up to date.
    valid: Vec<bool>,
    banks_per_group: usize,
    /// Per class `KINDS * group + kind`: its members, bit `2 * (bank within group) + k`.
    members: Vec<u64>,
    /// Per class: the smallest `t_bank` of its members (`NEVER`: no members).
    earliest: Vec<Cycle>,
    class_cmd: Vec<Command>,
    class_rank: Vec<u32>,
    /// Classes found ready by the last scan (re-evaluated after the issue).
    ready: Vec<u32>,
}

impl CandidateSet {
    /// `column` is RD for the read direction, WR for the write direction. Members of a class
    /// are a 64-bit mask, so at most 32 banks per bank group.
    pub fn new(column: Command, ranks: u32, groups_per_rank: u32, banks_per_group: u32) -> Self {
        assert!(banks_per_group <= 32, "at most 32 banks per bank group");
        let groups = (ranks * groups_per_rank) as usize;
        let banks = groups * banks_per_group as usize;
        let classes = KINDS * groups;
        CandidateSet {
            slots: vec![None; 2 * banks],
            valid: vec![true; banks],
            banks_per_group: banks_per_group as usize,
            members: vec![0; classes],
            earliest: vec![NEVER; classes],
            class_cmd: (0..classes).map(|c| [Command::Act, Command::Pre, column][c % KINDS]).collect(),
            class_rank: (0..classes).map(|c| ((c / KINDS) as u32) / groups_per_rank).collect(),
            ready: Vec::with_capacity(classes),
        }
    }

    #[inline]
    pub fn is_valid(&self, bank: usize) -> bool {
        self.valid[bank]
    }

    /// Mark bank `bank`'s slots out of date; true if they were valid.
    #[inline]
    pub fn invalidate(&mut self, bank: usize) -> bool {
        std::mem::replace(&mut self.valid[bank], false)
    }

    #[inline]
    pub fn slot(&self, slot: usize) -> Option<&Slot> {
        self.slots[slot].as_ref()
    }

    /// Bank `bank`'s slots.
    #[inline]
    pub fn bank_slots(&self, bank: usize) -> [Option<Slot>; 2] {
        [self.slots[2 * bank], self.slots[2 * bank + 1]]
    }

    fn class_of(&self, bank: usize, cmd: Command) -> usize {
        KINDS * (bank / self.banks_per_group) + kind(cmd)
    }

    fn bit(&self, slot: usize) -> u64 {
        1 << (slot % (2 * self.banks_per_group))
    }

    /// Replace bank `bank`'s slots (and mark them valid).
    pub fn set_bank(&mut self, bank: usize, new: [Option<Slot>; 2]) {
        for k in 0..2 {
            let slot = 2 * bank + k;
            if let Some(old) = self.slots[slot] {
                let c = self.class_of(bank, old.cmd);
                self.members[c] &= !self.bit(slot);
                self.slots[slot] = None;
                self.recompute_earliest(c);
            }
        }
        for (k, s) in new.into_iter().enumerate() {
            if let Some(s) = s {
                let slot = 2 * bank + k;
                let c = self.class_of(bank, s.cmd);
                self.members[c] |= self.bit(slot);
                self.earliest[c] = self.earliest[c].min(s.t_bank);
                self.slots[slot] = Some(s);
            }
        }
        self.valid[bank] = true;
    }

    fn recompute_earliest(&mut self, c: usize) {
        let first = 2 * self.banks_per_group * (c / KINDS);
        let mut t = NEVER;
        let mut m = self.members[c];
        while m != 0 {
            let slot = first + m.trailing_zeros() as usize;
            m &= m - 1;
            t = t.min(self.slots[slot].map_or(NEVER, |s| s.t_bank));
        }
        self.earliest[c] = t;
    }

    #[inline]
    fn shared_ready(&self, timing: &ChannelTiming, c: usize) -> Cycle {
        timing.shared_ready(self.class_cmd[c], self.class_rank[c], (c / KINDS) as u32)
    }

    /// The earliest cycle class `c` can issue (`NEVER`: no members, or its rank is blocked).
    #[inline]
    pub fn class_ready(&self, timing: &ChannelTiming, c: usize, blocked: &[bool]) -> Cycle {
        let e = self.earliest[c];
        if e == NEVER || blocked[self.class_rank[c] as usize] {
            return NEVER;
        }
        e.max(self.shared_ready(timing, c))
    }

    /// Find the ready slot with the smallest key at `now`, skipping ranks marked in `blocked`
    /// (waiting for refresh). Remembers the ready classes for `next_after_issue`.
    pub fn scan(&mut self, now: Cycle, timing: &ChannelTiming, blocked: &[bool]) -> Scan {
        let (mut best_key, mut best) = (u64::MAX, None);
        let mut next = NEVER;
        self.ready.clear();
        for c in 0..self.earliest.len() {
            let e = self.earliest[c];
            if e > now {
                next = next.min(e);
                continue;
            }
            if blocked[self.class_rank[c] as usize] {
                continue;
            }
            let shared = self.shared_ready(timing, c);
            if shared > now {
                next = next.min(shared);
                continue;
            }
            self.ready.push(c as u32);
            let first = 2 * self.banks_per_group * (c / KINDS);
            let mut m = self.members[c];
            while m != 0 {
                let slot = first + m.trailing_zeros() as usize;
                m &= m - 1;
                let s = self.slots[slot].as_ref().expect("class members are occupied slots");
                if s.t_bank > now {
                    next = next.min(s.t_bank);
                } else if s.key < best_key {
                    best_key = s.key;
                    best = Some(slot);
                }
            }
        }
        Scan { best, next }
    }

    /// After the scan's choice issued (and the issuing bank's slots were rebuilt): the earliest
    /// cycle any class the scan found ready, or any slot of `bank`, can issue. Together with the
    /// scan's `next` (classes not ready, whose ready times only grew) this is the exact next
    /// issue cycle of the direction, as long as no request arrives and no refresh intervenes.
    pub fn next_after_issue(&self, timing: &ChannelTiming, bank: usize, blocked: &[bool]) -> Cycle {
        let mut t = NEVER;
        for &c in &self.ready {
            t = t.min(self.class_ready(timing, c as usize, blocked));
        }
        t.min(self.bank_earliest(timing, bank, blocked))
    }

    /// Earliest cycle any of `bank`'s slots can issue (`NEVER`: none, or its rank is blocked).
    pub fn bank_earliest(&self, timing: &ChannelTiming, bank: usize, blocked: &[bool]) -> Cycle {
        let mut t = NEVER;
        for k in 0..2 {
            if let Some(s) = &self.slots[2 * bank + k] {
                let c = self.class_of(bank, s.cmd);
                if blocked[self.class_rank[c] as usize] {
                    return NEVER;
                }
                t = t.min(s.t_bank.max(self.shared_ready(timing, c)));
            }
        }
        t
    }
}
