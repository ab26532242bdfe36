//! The attackers of a real-time run: memory-bound tasks on cores of their own, their
//! completions taken and their requests refilled at every memory event.

use super::{ATTACK, LINE, PAGE};
use crate::controller::{Completion, Origin};
use crate::memory_system::MemorySystem;
use crate::stats::LatencyHistogram;
use crate::Cycle;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// One attacker's state.
pub(super) struct Attacker {
    pub(super) source: u32,
    pub(super) frames: Vec<u64>,
    pub(super) lines: u64,
    pub(super) cursor: u64,
    pub(super) random: bool,
    pub(super) outstanding: u32,
    pub(super) write_share: f64,
    pub(super) in_flight: u32,
    /// Write-backs owed: `write_share / (1 - write_share)` per read issued.
    pub(super) write_credit: f64,
    pub(super) write_cursor: u64,
    pub(super) rng: ChaCha8Rng,
    pub(super) requests: u64,
    pub(super) writes: u64,
    pub(super) latency: LatencyHistogram,
}

/// The attackers: their completions taken and their requests refilled at every memory event.
pub(super) struct Background {
    pub(super) attackers: Vec<Attacker>,
    pub(super) next_id: u64,
}

impl Background {
    /// One memory event at `t`: the attackers' completions leave `done`, the tasks' stay.
    pub(super) fn step(&mut self, mem: &mut MemorySystem, done: &mut Vec<Completion>, t: Cycle) {
        mem.tick(t, done, false);
        if self.attackers.is_empty() {
            return;
        }
        done.retain(|c| {
            if c.id & ATTACK == 0 {
                return true;
            }
            let a = &mut self.attackers[(c.id >> 40 & 0xff) as usize];
            a.requests += 1;
            if c.is_write {
                a.writes += 1;
            } else {
                a.in_flight -= 1;
                a.latency.record(c.done - c.arrival);
            }
            false
        });
        self.refill(mem, t);
    }

    /// Each attacker's owed write-backs, then its reads back up to `outstanding`, while its
    /// queues admit them. Reads go to the first half of its footprint, writes to the second.
    pub(super) fn refill(&mut self, mem: &mut MemorySystem, now: Cycle) {
        for (k, a) in self.attackers.iter_mut().enumerate() {
            let half = (a.lines / 2).max(1);
            loop {
                let write = a.write_credit >= 1.0;
                if !write && a.in_flight >= a.outstanding {
                    break;
                }
                let cursor = if write { a.write_cursor } else { a.cursor };
                let line = if a.random { a.rng.gen_range(0..half) } else { (cursor + 1) % half };
                let at = if write { line + half } else { line };
                let page = (at * LINE / PAGE) as usize;
                let addr = a.frames[page % a.frames.len()] * PAGE + (at * LINE) % PAGE;
                let id = ATTACK | (k as u64) << 40 | (self.next_id & ((1 << 40) - 1));
                if !mem.try_enqueue(now, id, addr, write, Origin::single(a.source)) {
                    break;
                }
                self.next_id += 1;
                if write {
                    a.write_cursor = line;
                    a.write_credit -= 1.0;
                } else {
                    a.cursor = line;
                    a.in_flight += 1;
                    a.write_credit += a.write_share / (1.0 - a.write_share).max(f64::MIN_POSITIVE);
                }
            }
        }
    }
}
