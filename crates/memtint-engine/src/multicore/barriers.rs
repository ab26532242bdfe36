//! Barriers inside an SPMD program's run (`barrier_every`): every `every` instructions each
//! thread of a group (a process's threads, or all of a run's: sim_spec.rs) waits until all the
//! group's threads still short of their target have got there, as an OpenMP program's threads
//! do at the end of each parallel loop.
//!
//! A thread reaches barrier k when it has retired `k × every` instructions. It then stops
//! inserting instructions and its window drains (the instructions already in it, at most a
//! reorder buffer's worth past the barrier, complete first: the prefetching of a spin-wait
//! loop's speculation is not modelled); once empty, it waits holding its core (a spin-wait,
//! OpenMP's default wait policy) and issuing nothing. The last arrival releases all of them at
//! its cycle. A thread that has reached its target no longer takes part. Waiting counts as off
//! the core (`cycles` stays the work's, so IPC is comparable with an alone run) and is reported
//! per thread as `barrier_wait_cycles`. Time-sharing a core with a waiting thread is not
//! modelled: a run with barriers needs a core per thread.

use crate::cpu::OooCore;
use crate::error::{Error, Result};
use crate::{Cycle, NEVER};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Working,
    Draining,
    Waiting,
}

/// Per thread: its group's interval (0: no barriers), its next barrier, where it is.
struct Member {
    group: u32,
    every: u64,
    target: u64,
    next: u64,
    phase: Phase,
    since: Cycle,
    wait_cycles: Cycle,
    passed: u64,
}

pub(super) struct Barriers {
    members: Vec<Member>,
    /// Per group: its threads that still take part (short of their target), those waiting.
    taking_part: Vec<u32>,
    waiting: Vec<Vec<u32>>,
    /// Some process has barriers: the driver's loop asks only then.
    pub any: bool,
}

impl Barriers {
    /// `threads[i] = (group, every, target)`; arms each thread's first barrier on its core.
    pub fn new(threads: &[(u32, u64, u64)], cores: &mut [OooCore]) -> Barriers {
        let groups = threads.iter().map(|t| t.0 as usize + 1).max().unwrap_or(0);
        let mut taking_part = vec![0u32; groups];
        let members = threads
            .iter()
            .zip(cores.iter_mut())
            .map(|(&(group, every, target), core)| {
                let next = if every > 0 && core.pause_at(every) { every } else { NEVER };
                if every > 0 {
                    taking_part[group as usize] += 1;
                }
                Member { group, every, target, next, phase: Phase::Working, since: 0, wait_cycles: 0, passed: 0 }
            })
            .collect();
        Barriers { members, taking_part, waiting: vec![Vec::new(); groups], any: threads.iter().any(|t| t.1 > 0) }
    }

    pub fn has(&self, t: u32) -> bool {
        self.members[t as usize].every > 0
    }

    /// Cycles thread `t` waited at barriers inside the run, and the barriers it passed.
    pub fn waited(&self, t: usize) -> (Cycle, u64) {
        (self.members[t].wait_cycles, self.members[t].passed)
    }

    /// After thread `t` ticked at core cycle `now` (`reached`: it reached its target there).
    pub fn after_tick(&mut self, t: usize, reached: bool, cores: &mut [OooCore], now: Cycle) {
        let (every, p) = (self.members[t].every, self.members[t].group as usize);
        if every == 0 {
            return;
        }
        if reached {
            self.taking_part[p] -= 1;
            self.release_if_all(p, cores, now);
            return;
        }
        let m = &mut self.members[t];
        if m.phase == Phase::Working && m.next != NEVER && cores[t].take_pause() {
            m.phase = Phase::Draining;
            cores[t].start_drain(now);
        }
        if m.phase == Phase::Draining && cores[t].is_drained() {
            m.phase = Phase::Waiting;
            m.since = cores[t].cycle();
            cores[t].halt();
            self.waiting[p].push(t as u32);
            self.release_if_all(p, cores, now);
        }
    }

    /// Error if thread `t` (about to leave its core) waits at barriers: not modelled.
    pub fn check_not_switched(&self, t: u32) -> Result<()> {
        if self.has(t) {
            return Err(Error::config(
                "barrier_every",
                format!("thread {t} would share its core with another thread; a run with barriers needs a core per thread"),
            ));
        }
        Ok(())
    }

    fn release_if_all(&mut self, p: usize, cores: &mut [OooCore], now: Cycle) {
        let waiting = &mut self.waiting[p];
        if waiting.is_empty() || waiting.len() < self.taking_part[p] as usize {
            return;
        }
        let at = waiting.iter().map(|&w| self.members[w as usize].since).max().unwrap_or(now).max(now);
        for w in waiting.drain(..) {
            let m = &mut self.members[w as usize];
            let core = &mut cores[w as usize];
            m.wait_cycles += at - m.since;
            m.passed += 1;
            m.phase = Phase::Working;
            core.release(at);
            m.next = m.next.saturating_add(m.every);
            if m.next >= m.target || !core.pause_at(m.next) {
                m.next = NEVER;
            }
        }
    }
}
