//! A trace-driven out-of-order core, after Ramulator's `Core`/`Window`.
//!
//! Each cycle the core retires up to `issue_width` completed instructions from the head of its
//! instruction window, then inserts up to `issue_width` new ones: non-memory instructions
//! ("bubbles") are complete at once; a record's load goes to the memory hierarchy and stays
//! incomplete until its data returns; the record's writeback follows the load, is not an
//! instruction and takes no window entry. Insertion stops when the window is full, when the
//! core's own MSHRs are all waiting, or when the hierarchy refuses a request.
//!
//! Representation: bubbles are not stored at all. Instructions carry sequence numbers; the
//! window is the range `retired..inserted` plus the list of loads in it, so a run of 1000
//! bubbles costs O(1).
//!
//! Event skipping: the core is lazy. `tick(now)` first catches up every cycle before `now`
//! in which the core does not touch memory or the trace, in closed form where the cycles are
//! alike (bubbles streaming through, or a stall); `next_event()` is the next cycle at which it
//! will touch memory (or reach its retirement target), `NEVER` while it can only wait for a
//! `complete`. When a look-ahead ends in such a wait, where it began and what kind it is are kept
//! (`Ahead::Parked`), so a completion jumps to its cycle in closed form. The result is exactly
//! that of a cycle-by-cycle run (tested below).

use super::slice_queue::SliceQueue;
use super::{CoreConfig, CoreMemory, LoadOutcome};
use crate::error::{Error, Result};
use crate::workload::CpuTraceSource;
use crate::{Cycle, NEVER};
use serde::Serialize;

/// Why a cycle inserted no instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    WindowFull = 0,
    Mshr = 1,
    Refused = 2,
}

/// Counters of one core. Cycles are core cycles from cycle 0 to the last one simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoreStats {
    pub cycles: u64,
    pub retired: u64,
    /// Loads accepted by the hierarchy.
    pub loads: u64,
    /// Loads served at a fixed latency (`LoadOutcome::Done`).
    pub load_hits: u64,
    /// Loads that waited for memory (`LoadOutcome::Pending`).
    pub load_misses: u64,
    /// Sum over retired loads of issue-to-data cycles.
    pub load_latency_sum: u64,
    pub writebacks: u64,
    pub refused_loads: u64,
    pub refused_writebacks: u64,
    /// Cycles in which no instruction entered the window, by cause.
    pub stall_window_full: u64,
    pub stall_mshr: u64,
    pub stall_refused: u64,
    pub records: u64,
    pub trace_wraps: u64,
    /// Cycles spent draining the window before a context switch (nothing inserted). Included
    /// in `cycles`; zero without time-sharing.
    pub drain_cycles: u64,
}

impl CoreStats {
    /// The counts since `earlier`, a snapshot of the same core (a sampled run's unit).
    pub fn since(&self, e: &CoreStats) -> CoreStats {
        CoreStats {
            cycles: self.cycles - e.cycles,
            retired: self.retired - e.retired,
            loads: self.loads - e.loads,
            load_hits: self.load_hits - e.load_hits,
            load_misses: self.load_misses - e.load_misses,
            load_latency_sum: self.load_latency_sum - e.load_latency_sum,
            writebacks: self.writebacks - e.writebacks,
            refused_loads: self.refused_loads - e.refused_loads,
            refused_writebacks: self.refused_writebacks - e.refused_writebacks,
            stall_window_full: self.stall_window_full - e.stall_window_full,
            stall_mshr: self.stall_mshr - e.stall_mshr,
            stall_refused: self.stall_refused - e.stall_refused,
            records: self.records - e.records,
            trace_wraps: self.trace_wraps - e.trace_wraps,
            drain_cycles: self.drain_cycles - e.drain_cycles,
        }
    }

    pub fn add(&mut self, o: &CoreStats) {
        self.cycles += o.cycles;
        self.retired += o.retired;
        self.loads += o.loads;
        self.load_hits += o.load_hits;
        self.load_misses += o.load_misses;
        self.load_latency_sum += o.load_latency_sum;
        self.writebacks += o.writebacks;
        self.refused_loads += o.refused_loads;
        self.refused_writebacks += o.refused_writebacks;
        self.stall_window_full += o.stall_window_full;
        self.stall_mshr += o.stall_mshr;
        self.stall_refused += o.stall_refused;
        self.records += o.records;
        self.trace_wraps += o.trace_wraps;
        self.drain_cycles += o.drain_cycles;
    }

    pub fn ipc(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.retired as f64 / self.cycles as f64
        }
    }
}

/// A load in the window. `seq` is its instruction number, and the token given to memory.
#[derive(Clone, Copy, Debug)]
struct LoadSlot {
    seq: u64,
    issued: Cycle,
    /// First cycle at which it may retire; `NEVER` until its data arrives.
    ready_at: Cycle,
}

/// The rest of a trace record: `bubbles` instructions still to run, then the load of `read`
/// and the write-back of `writeback` (sampled runs move a trace on from inside a record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRest {
    pub bubbles: u64,
    pub read: u64,
    pub writeback: Option<u64>,
}

impl RecordRest {
    /// Its instructions: the bubbles and the load.
    pub fn instructions(&self) -> u64 {
        self.bubbles + 1
    }
}

/// The state that changes in cycles without memory traffic; copied to look ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flow {
    /// Next cycle to simulate.
    cycle: Cycle,
    retired: u64,
    inserted: u64,
    /// Loads at the front of `loads` already retired in this copy (popped on commit).
    front: usize,
    /// Bubbles of the current record not yet inserted.
    bubbles: u64,
    stall: [u64; 3],
    load_latency_sum: u64,
    /// Cycles the thread was off its core (time-sharing); `cycles` counts the rest.
    off_core: u64,
    drain: u64,
}

/// What the rest of a cycle does once bubbles are inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    /// Nothing more this cycle.
    Done,
    /// Nothing entered the window this cycle, for this reason.
    Stall(Stall),
    /// The cycle touches memory or the trace: only `full_step` may simulate it.
    Call,
}

/// How a look-ahead ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quiet {
    /// Simulated up to the requested end.
    Reached,
    /// Stopped at `flow.cycle`, which must be simulated by `full_step`.
    Event,
    /// Nothing will ever happen without a `complete`: from `flow.cycle` on, every cycle is
    /// the same wait.
    Idle(Wait),
}

/// The one kind of cycle a core repeats while it waits for a `complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Stall(Stall),
    Drain,
}

impl Wait {
    /// Advances `f` over the waiting cycles before `end`.
    #[inline]
    fn run_to(self, f: &mut Flow, end: Cycle) {
        if end <= f.cycle {
            return;
        }
        let k = end - f.cycle;
        match self {
            Wait::Stall(s) => f.stall[s as usize] += k,
            Wait::Drain => f.drain += k,
        }
        f.cycle = end;
    }
}

/// What the last look-ahead from `flow` found.
#[derive(Clone, Copy, Debug)]
enum Ahead {
    Unknown,
    /// The state at the next event, which `full_step` simulates.
    Event(Flow),
    /// The state from which the core waits for a `complete`, and how: a completion jumps
    /// there in closed form instead of simulating the way again (most completions find the
    /// core waiting).
    Parked(Flow, Wait),
}

pub struct OooCore {
    id: u32,
    width: u64,
    /// log2 of `width` when it is a power of two: the look-ahead divides by the width on every
    /// call, and a 64-bit division cost more than the rest of a quiet cycle.
    width_shift: Option<u32>,
    rob: u64,
    mshrs: u32,
    retire_target: u64,
    /// A barrier: crossing this retired count is an event (`at_pause`); `NEVER` for none.
    pause_at: u64,
    /// The next retired count whose crossing is an event: the target until it is reached,
    /// or `pause_at`, whichever comes first (kept, not derived: the look-ahead reads it).
    stop: u64,
    loads: SliceQueue<LoadSlot>,
    flow: Flow,
    /// The current record: loaded at all, its load address, whether the load is in the
    /// window, and its writeback if not yet sent.
    has_record: bool,
    read: u64,
    load_sent: bool,
    writeback: Option<u64>,
    /// Loads waiting for `complete`.
    outstanding: u32,
    /// No request is retried before this cycle after a refusal.
    retry_at: Cycle,
    next_event: Cycle,
    /// The look-ahead behind `next_event`, reused by the next tick or completion if still valid.
    ahead: Ahead,
    /// Counters outside `flow`; `stats()` adds those in it.
    stats: CoreStats,
    target_stats: Option<CoreStats>,
    /// Simulate every cycle with `full_step` (the reference for tests).
    exact: bool,
    /// Draining for a context switch: retire, but insert nothing and touch neither memory nor
    /// the trace, until the window is empty (`is_drained`).
    draining: bool,
    /// Stopped for good (`halt`): its thread waits at its program's end.
    halted: bool,
}

impl OooCore {
    /// A core that records a statistics snapshot when `retire_target` instructions have retired.
    pub fn new(id: u32, cfg: &CoreConfig, retire_target: u64) -> Result<Self> {
        cfg.validate()?;
        if retire_target == 0 {
            return Err(Error::config("retire_target", "must be at least 1 instruction"));
        }
        Ok(OooCore {
            id,
            width: cfg.issue_width as u64,
            width_shift: cfg.issue_width.is_power_of_two().then(|| cfg.issue_width.trailing_zeros()),
            rob: cfg.rob_size as u64,
            mshrs: cfg.mshrs,
            retire_target,
            pause_at: NEVER,
            stop: retire_target,
            loads: SliceQueue::with_capacity(cfg.rob_size as usize),
            flow: Flow {
                cycle: 0,
                retired: 0,
                inserted: 0,
                front: 0,
                bubbles: 0,
                stall: [0; 3],
                load_latency_sum: 0,
                off_core: 0,
                drain: 0,
            },
            has_record: false,
            read: 0,
            load_sent: false,
            writeback: None,
            outstanding: 0,
            retry_at: 0,
            next_event: 0,
            ahead: Ahead::Unknown,
            stats: CoreStats::default(),
            target_stats: None,
            exact: false,
            draining: false,
            halted: false,
        })
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// The counters so far (those kept in `flow` are filled in here, not on every step).
    /// Instructions retired so far (what `stats().retired` says, without building the stats).
    #[inline]
    pub fn retired(&self) -> u64 {
        self.flow.retired
    }

    pub fn stats(&self) -> CoreStats {
        let (f, mut s) = (&self.flow, self.stats);
        s.cycles = f.cycle - f.off_core;
        s.drain_cycles = f.drain;
        s.retired = f.retired;
        s.stall_window_full = f.stall[Stall::WindowFull as usize];
        s.stall_mshr = f.stall[Stall::Mshr as usize];
        s.stall_refused = f.stall[Stall::Refused as usize];
        s.load_latency_sum = f.load_latency_sum;
        s
    }

    /// The statistics as of the end of the cycle in which the target was reached, with
    /// `retired` equal to the target exactly (as Ramulator records them).
    pub fn target_stats(&self) -> Option<&CoreStats> {
        self.target_stats.as_ref()
    }

    pub fn reached_target(&self) -> bool {
        self.target_stats.is_some()
    }

    /// Loads waiting for `complete`.
    pub fn outstanding_loads(&self) -> u32 {
        self.outstanding
    }

    /// Stop inserting instructions from cycle `now` on (after `tick(now - 1)`): the window drains
    /// for a context switch. The trace position (the current record's remaining bubbles, its
    /// load and writeback) is kept for when the thread runs again.
    pub fn start_drain(&mut self, now: Cycle) {
        let mut f = self.flow_before(now);
        self.commit(&mut f);
        self.draining = true;
        self.ahead = Ahead::Unknown;
        self.predict();
    }

    /// The window is empty after a drain: the thread can leave its core.
    pub fn is_drained(&self) -> bool {
        self.draining && self.flow.inserted == self.flow.retired && self.outstanding == 0
    }

    /// After a drain: takes the rest of the current record off the core, for a sampled run to
    /// move the trace on from there (kept, the next segment would begin with instructions read
    /// before the gap, out of order). Returns the rest if its load is not sent yet; a record
    /// whose load was sent leaves at most its write-back, returned second.
    pub fn take_record_rest(&mut self) -> (Option<RecordRest>, Option<u64>) {
        debug_assert!(self.flow.inserted == self.flow.retired && self.outstanding == 0, "drained");
        if !self.has_record {
            return (None, None);
        }
        self.has_record = false;
        self.ahead = Ahead::Unknown;
        let writeback = self.writeback.take();
        if self.load_sent {
            return (None, writeback);
        }
        let rest = RecordRest { bubbles: self.flow.bubbles, read: self.read, writeback };
        self.flow.bubbles = 0;
        (Some(rest), None)
    }

    /// Before a segment: the core goes on with the rest of a record (its bubbles, then its load
    /// and write-back) before it reads the next one. The core must hold no record.
    pub fn put_record_rest(&mut self, rest: RecordRest) {
        debug_assert!(!self.has_record && self.flow.bubbles == 0, "no record held");
        self.has_record = true;
        self.flow.bubbles = rest.bubbles;
        self.read = rest.read;
        self.load_sent = false;
        self.writeback = rest.writeback;
        self.ahead = Ahead::Unknown;
    }

    /// Next cycle not yet simulated.
    pub fn cycle(&self) -> Cycle {
        self.flow.cycle
    }

    /// The thread (drained) runs again from cycle `now`: the cycles since it left count as off
    /// the core, not in `cycles`.
    pub fn resume_at(&mut self, now: Cycle) {
        debug_assert!(self.flow.inserted == self.flow.retired && self.outstanding == 0);
        if now > self.flow.cycle {
            self.flow.off_core += now - self.flow.cycle;
            self.flow.cycle = now;
        }
        self.draining = false;
        self.retry_at = self.retry_at.min(now);
        self.ahead = Ahead::Unknown;
        self.predict();
    }

    /// The earliest cycle at which `tick` could do anything visible: touch memory or the
    /// trace, or reach the retirement target. `NEVER` while only a `complete` can help.
    pub fn next_event(&self) -> Cycle {
        self.next_event
    }

    /// Simulates every cycle up to and including `now`. Memory is called with the cycle each
    /// request is made at, which is `now` when the driver ticks at `next_event()`.
    pub fn tick(&mut self, now: Cycle, trace: &mut dyn CpuTraceSource, mem: &mut dyn CoreMemory) -> Result<()> {
        if self.halted {
            return Ok(());
        }
        if self.exact {
            while self.flow.cycle <= now {
                self.full_step(trace, mem)?;
            }
        } else {
            while self.flow.cycle <= now {
                let mut f = match self.ahead {
                    Ahead::Event(p) if p.cycle <= now => {
                        self.ahead = Ahead::Unknown;
                        p
                    }
                    // A look-ahead to a later event stays valid: these cycles lead to it.
                    _ => self.flow_before(now.saturating_add(1)),
                };
                self.commit(&mut f);
                if self.flow.cycle <= now {
                    self.full_step(trace, mem)?;
                }
            }
        }
        if matches!(self.ahead, Ahead::Unknown) {
            self.predict();
        }
        Ok(())
    }

    /// The data of the load `token` arrived at `now`: it may retire, and its MSHR is free,
    /// from cycle `now` on (this cycle, if called before `tick(now)`).
    pub fn complete(&mut self, token: u64, now: Cycle) {
        if self.halted {
            return;
        }
        // Cycles before `now` must not see the freed MSHR: simulate them first.
        let mut f = self.flow_before(now);
        self.commit(&mut f);
        let Ok(i) = self.loads.as_slice().binary_search_by_key(&token, |l| l.seq) else {
            debug_assert!(false, "core {}: complete of unknown token {token}", self.id);
            return;
        };
        let l = &mut self.loads.as_mut_slice()[i];
        if l.ready_at != NEVER {
            debug_assert!(false, "core {}: token {token} completed twice", self.id);
            return;
        }
        l.ready_at = now;
        self.outstanding -= 1;
        self.predict();
    }

    /// A new retirement target (a sampled run's next snapshot point, above `retired()`):
    /// `target_stats` is cleared and taken again when it is reached.
    pub fn set_target(&mut self, target: u64) {
        debug_assert!(target > self.flow.retired);
        self.retire_target = target;
        self.target_stats = None;
        self.stop = target.min(self.pause_at);
        self.ahead = Ahead::Unknown;
        self.predict();
    }

    /// No target from now on: nothing is snapshot until `set_target`.
    pub fn clear_target(&mut self) {
        self.retire_target = NEVER;
        self.target_stats = None;
        self.stop = self.pause_at;
        self.ahead = Ahead::Unknown;
        self.predict();
    }

    /// Makes retiring the `at`-th instruction an event (a barrier of the thread's program):
    /// the driver sees `take_pause` after that tick. A point already passed (a drain retires
    /// the whole window, which may reach past the next barrier) becomes the next instruction.
    /// Returns false, arming nothing, if that is not before the target.
    pub fn pause_at(&mut self, at: u64) -> bool {
        let at = at.max(self.flow.retired + 1);
        if self.target_stats.is_some() || at >= self.retire_target {
            return false;
        }
        self.pause_at = at;
        self.stop = at;
        self.ahead = Ahead::Unknown;
        self.predict();
        true
    }

    /// The pause set by `pause_at` has been reached: clears it (the driver then drains the
    /// window with `start_drain`).
    pub fn take_pause(&mut self) -> bool {
        if self.flow.retired < self.pause_at {
            return false;
        }
        self.pause_at = NEVER;
        self.stop = if self.target_stats.is_none() { self.retire_target } else { NEVER };
        true
    }

    /// Runs again from cycle `now` after `halt` at a barrier (drained): the wait counts as off
    /// the core, as a switched-out thread's.
    pub fn release(&mut self, now: Cycle) {
        debug_assert!(self.halted && self.is_drained());
        self.halted = false;
        self.resume_at(now);
    }

    /// Stop for good: the core's thread waits at its program's end, holding the core and
    /// issuing nothing; loads still in flight complete unseen.
    pub fn halt(&mut self) {
        self.halted = true;
        self.next_event = NEVER;
        self.ahead = Ahead::Unknown;
    }

    fn predict(&mut self) {
        if self.halted {
            return;
        }
        let mut f = self.flow;
        (self.next_event, self.ahead) = match self.quiet(&mut f, NEVER) {
            Quiet::Event => (f.cycle, Ahead::Event(f)),
            Quiet::Idle(wait) => (NEVER, Ahead::Parked(f, wait)),
            Quiet::Reached => (NEVER, Ahead::Unknown),
        };
    }

    /// The state after the cycles before `end` (none if `flow` is already there), from the
    /// parked look-ahead when `end` is past the point where the core started waiting.
    #[inline]
    fn flow_before(&self, end: Cycle) -> Flow {
        match self.ahead {
            Ahead::Parked(p, wait) if p.cycle <= end => {
                let mut f = p;
                wait.run_to(&mut f, end);
                f
            }
            _ => {
                let mut f = self.flow;
                self.quiet(&mut f, end);
                f
            }
        }
    }

    /// Adopts a look-ahead: pops the loads it retired and publishes its counters.
    fn commit(&mut self, f: &mut Flow) {
        // Usually none or one: popping is cheaper than a `Drain`.
        for _ in 0..f.front {
            self.loads.pop_front();
        }
        if let Ahead::Event(p) | Ahead::Parked(p, _) = &mut self.ahead {
            // A kept look-ahead is further along the same path: rebase its index.
            p.front -= f.front;
        }
        f.front = 0;
        self.flow = *f;
    }

    // ---- One cycle, in pieces shared by the look-ahead and the full step ----

    /// Retires up to `width` instructions at cycle `t`: everything before the first load
    /// whose data is not there yet.
    #[inline]
    fn retire(&self, f: &mut Flow, t: Cycle) {
        let mut limit = (f.retired + self.width).min(f.inserted);
        let mut i = f.front;
        while let Some(l) = self.loads.get(i) {
            if l.seq >= limit {
                break;
            }
            if l.ready_at > t {
                limit = l.seq;
                break;
            }
            f.load_latency_sum += l.ready_at.max(l.issued) - l.issued;
            i += 1;
        }
        f.front = i;
        f.retired = limit;
    }

    /// Inserts the current record's bubbles into `slots` free issue slots; returns the slots left.
    #[inline]
    fn fill_bubbles(&self, f: &mut Flow, slots: u64) -> u64 {
        let free = self.rob - (f.inserted - f.retired);
        let n = f.bubbles.min(slots).min(free);
        f.bubbles -= n;
        f.inserted += n;
        slots - n
    }

    /// What cycle `t` does after its bubbles, with `slots` issue slots left.
    #[inline]
    fn then(&self, f: &Flow, slots: u64, t: Cycle) -> Then {
        let stall = |cause| if slots == self.width { Then::Stall(cause) } else { Then::Done };
        if !self.has_record {
            return Then::Call;
        }
        if f.bubbles > 0 {
            // Bubbles remain: either the width is used up or the window is full.
            return stall(Stall::WindowFull);
        }
        if !self.load_sent {
            if slots == 0 {
                return Then::Done;
            }
            if f.inserted - f.retired == self.rob {
                return stall(Stall::WindowFull);
            }
            if self.outstanding >= self.mshrs {
                return stall(Stall::Mshr);
            }
        }
        if t < self.retry_at {
            return stall(Stall::Refused);
        }
        Then::Call
    }

    /// Whole cycles of `width` in `x`: `x / width`.
    #[inline]
    fn per_width(&self, x: u64) -> u64 {
        match self.width_shift {
            Some(s) => x >> s,
            None => x / self.width,
        }
    }

    #[inline]
    fn crosses_target(&self, f: &Flow) -> bool {
        f.retired >= self.stop
    }

    /// Simulates cycles from `f.cycle` up to (not including) `end` in which the core touches
    /// neither memory nor the trace, nor reaches its target.
    fn quiet(&self, f: &mut Flow, end: Cycle) -> Quiet {
        if self.draining {
            return self.quiet_drain(f, end);
        }
        while f.cycle < end {
            match self.skip_alike(f, end) {
                Some(idle @ Quiet::Idle(_)) => return idle,
                Some(_) => continue,
                None => {}
            }
            let mut g = *f;
            let t = g.cycle;
            self.retire(&mut g, t);
            if self.crosses_target(&g) {
                return Quiet::Event;
            }
            let slots = self.fill_bubbles(&mut g, self.width);
            match self.then(&g, slots, t) {
                Then::Call => return Quiet::Event,
                Then::Stall(s) => g.stall[s as usize] += 1,
                Then::Done => {}
            }
            g.cycle += 1;
            *f = g;
        }
        Quiet::Reached
    }

    /// `quiet` while draining: retire until the window is empty (an event: the driver switches),
    /// jumping over waits for a load's data.
    fn quiet_drain(&self, f: &mut Flow, end: Cycle) -> Quiet {
        while f.cycle < end {
            if f.inserted == f.retired {
                return Quiet::Event;
            }
            let t = f.cycle;
            let mut g = *f;
            self.retire(&mut g, t);
            if self.crosses_target(&g) {
                return Quiet::Event;
            }
            if g.retired == f.retired {
                // The head is a load still waiting for its data: nothing moves until it arrives.
                let until = self.loads.get(f.front).map_or(NEVER, |l| l.ready_at);
                if until == NEVER {
                    return Quiet::Idle(Wait::Drain);
                }
                let k = (until - t).min(end - t).max(1);
                f.drain += k;
                f.cycle += k;
                continue;
            }
            g.drain += 1;
            g.cycle += 1;
            *f = g;
        }
        Quiet::Reached
    }

    /// Skips, in closed form, a run of k >= 1 identical cycles starting at `f.cycle`, if the
    /// state is one of the steady patterns; `None` if it is not (then one cycle is simulated).
    fn skip_alike(&self, f: &mut Flow, end: Cycle) -> Option<Quiet> {
        if !self.has_record {
            return None;
        }
        let t = f.cycle;
        let w = self.width;
        let occ = f.inserted - f.retired;
        // Instructions retirable from the head at t, and when the first blocked load frees.
        let (ready_end, blocked_until) = match self.loads.as_slice()[f.front..].iter().find(|l| l.ready_at > t) {
            Some(l) => (l.seq, l.ready_at),
            None => (f.inserted, NEVER),
        };
        let ready = ready_end - f.retired;
        // Cycles of w retirements that stay below the target (its crossing is an event).
        let target_room = if self.stop == NEVER { NEVER } else { self.per_width((self.stop - 1).saturating_sub(f.retired)) };
        let retry_wait = self.retry_at.saturating_sub(t);
        let span = if end == NEVER { NEVER } else { end - t };

        if f.bubbles > 0 && ready >= w {
            // Retire w, insert w bubbles, every cycle: the occupancy stays put.
            let k = self.per_width(ready).min(self.per_width(f.bubbles)).min(target_room).min(span);
            if k == 0 {
                return None;
            }
            self.retire_run(f, k * w);
            f.bubbles -= k * w;
            f.inserted += k * w;
            f.cycle += k;
            return Some(Quiet::Reached);
        }
        if occ == 0 && f.bubbles == 0 {
            // An empty window with the record's memory operation next: refused (the thread is in
            // the kernel, say, for a page fault), nothing moves until the retry. Any other cause
            // ends with a memory event, so it is simulated cycle by cycle.
            return match self.then(f, w, t) {
                Then::Stall(Stall::Refused) => Some(self.stall_run(f, Stall::Refused, retry_wait, span)),
                _ => None,
            };
        }
        if ready > 0 || occ == 0 {
            return self.skip_retire_only(f, ready, retry_wait, span.min(target_room));
        }
        // The head is a load waiting until `blocked_until`: nothing retires before then.
        let wait = if blocked_until == NEVER { NEVER } else { blocked_until - t };
        if f.bubbles > 0 {
            let free = self.rob - occ;
            if free >= w {
                // Insert w bubbles per cycle.
                let k = self.per_width(f.bubbles).min(self.per_width(free)).min(wait).min(span);
                if k == 0 {
                    return None;
                }
                f.bubbles -= k * w;
                f.inserted += k * w;
                f.cycle += k;
                return Some(Quiet::Reached);
            }
            if free > 0 {
                return None;
            }
            return Some(self.stall_run(f, Stall::WindowFull, wait, span));
        }
        // No bubbles left: the load or writeback of the record is next.
        let cause = match self.then(f, w, t) {
            Then::Stall(c) => c,
            _ => return None,
        };
        let k = if cause == Stall::Refused { wait.min(retry_wait) } else { wait };
        Some(self.stall_run(f, cause, k, span))
    }

    /// Retire w per cycle while insertion is blocked on the MSHRs or a refusal.
    fn skip_retire_only(&self, f: &mut Flow, ready: u64, retry_wait: u64, span: u64) -> Option<Quiet> {
        let w = self.width;
        if f.bubbles > 0 || ready < w {
            return None;
        }
        // After retiring, the window has room, so only these two causes can hold the load back.
        let cause = if !self.load_sent && self.outstanding >= self.mshrs {
            Stall::Mshr
        } else if f.cycle < self.retry_at {
            Stall::Refused
        } else {
            return None;
        };
        let mut k = self.per_width(ready).min(span);
        if cause == Stall::Refused {
            k = k.min(retry_wait);
        }
        if k == 0 {
            return None;
        }
        self.retire_run(f, k * w);
        f.stall[cause as usize] += k;
        f.cycle += k;
        Some(Quiet::Reached)
    }

    /// `k` cycles (capped by `span`) in which nothing moves; `Idle` if they never end.
    fn stall_run(&self, f: &mut Flow, cause: Stall, k: u64, span: u64) -> Quiet {
        let k = k.min(span);
        if k == NEVER || k == 0 {
            debug_assert!(k != 0);
            return Quiet::Idle(Wait::Stall(cause));
        }
        f.stall[cause as usize] += k;
        f.cycle += k;
        Quiet::Reached
    }

    /// Retires `n` instructions known to be ready.
    fn retire_run(&self, f: &mut Flow, n: u64) {
        f.retired += n;
        while let Some(l) = self.loads.get(f.front) {
            if l.seq >= f.retired {
                break;
            }
            f.load_latency_sum += l.ready_at.max(l.issued) - l.issued;
            f.front += 1;
        }
    }

    // ---- The reference: one whole cycle, with memory and the trace ----

    fn full_step(&mut self, trace: &mut dyn CpuTraceSource, mem: &mut dyn CoreMemory) -> Result<()> {
        self.ahead = Ahead::Unknown;
        let t = self.flow.cycle;
        let mut f = self.flow;
        self.retire(&mut f, t);
        let crossed = self.crosses_target(&f);
        self.commit(&mut f);
        if self.draining {
            f.drain += 1;
            f.cycle += 1;
            self.flow = f;
            self.snapshot_if(crossed);
            return Ok(());
        }
        let mut slots = self.fill_bubbles(&mut f, self.width);
        loop {
            match self.then(&f, slots, t) {
                Then::Done => break,
                Then::Stall(s) => {
                    f.stall[s as usize] += 1;
                    break;
                }
                Then::Call => {}
            }
            if !self.has_record {
                f.bubbles = self.fetch(trace)?;
                slots = self.fill_bubbles(&mut f, slots);
                continue;
            }
            if !self.load_sent {
                match mem.load(self.id, self.read, f.inserted, t)? {
                    LoadOutcome::Refused => {
                        self.stats.refused_loads += 1;
                        self.refused(&mut f, slots, t, mem);
                        break;
                    }
                    outcome => {
                        let ready_at = match outcome {
                            LoadOutcome::Done { latency } => {
                                self.stats.load_hits += 1;
                                t.saturating_add(latency)
                            }
                            _ => {
                                self.stats.load_misses += 1;
                                self.outstanding += 1;
                                NEVER
                            }
                        };
                        self.loads.push_back(LoadSlot { seq: f.inserted, issued: t, ready_at });
                        self.stats.loads += 1;
                        f.inserted += 1;
                        slots -= 1;
                        self.load_sent = true;
                    }
                }
            }
            if let Some(addr) = self.writeback {
                if !mem.writeback(self.id, addr, t)? {
                    self.stats.refused_writebacks += 1;
                    self.refused(&mut f, slots, t, mem);
                    break;
                }
                self.stats.writebacks += 1;
                self.writeback = None;
            }
            self.has_record = false;
        }
        f.cycle += 1;
        self.flow = f;
        self.snapshot_if(crossed);
        Ok(())
    }

    fn snapshot_if(&mut self, crossed: bool) {
        if crossed && self.target_stats.is_none() && self.flow.retired >= self.retire_target {
            let mut snap = self.stats();
            snap.retired = self.retire_target;
            self.target_stats = Some(snap);
            self.stop = self.pause_at;
        }
    }

    fn refused(&mut self, f: &mut Flow, slots: u64, t: Cycle, mem: &dyn CoreMemory) {
        self.retry_at = mem.retry_at(self.id, t).max(t + 1);
        if slots == self.width {
            f.stall[Stall::Refused as usize] += 1;
        }
    }

    /// Loads the next record, wrapping around at the end of the trace; returns its bubbles.
    fn fetch(&mut self, trace: &mut dyn CpuTraceSource) -> Result<u64> {
        let rec = match trace.next_record()? {
            Some(r) => r,
            None => {
                trace.rewind()?;
                self.stats.trace_wraps += 1;
                trace.next_record()?.ok_or_else(|| Error::empty_trace("trace", trace.name(), "records"))?
            }
        };
        self.stats.records += 1;
        self.has_record = true;
        self.read = rec.read;
        self.load_sent = false;
        self.writeback = rec.writeback;
        Ok(rec.bubbles as u64)
    }
}

#[cfg(test)]
#[path = "ooo_core_tests.rs"]
mod tests;
