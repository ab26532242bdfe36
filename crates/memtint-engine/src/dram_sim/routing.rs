//! The DRAM-trace driver's routing loop: it reads each trace request, decodes its address once
//! to its channel, lets it into that channel's controller when it may enter, ticks the
//! controllers and jumps to the next event. One loop, generic over the controller
//! (`Controller`), runs every implementation and mode (closed loop or timestamped, event
//! skipping or cycle by cycle); the mode is an argument each entry fixes, so an entry with a
//! constant mode has its branches folded away. Closed-loop, event-skipping runs on lane
//! controllers, the fast path, have entries per lane shape (`Shaped`: the controllers' inlined
//! `tick` and `enqueue` compiled for the shape), per vector level and recording choice, and
//! one channel or several. Completions, the command log, the checker, `keep_commands`,
//! `sources` and front-end stall counting go through `Books`, the same in every entry, so
//! results are identical (tests/engine/lanes_equal_general.rs compares whole runs).

use super::books::{Books, FrontEnd};
use crate::controller::{Controller, LaneController, Shaped};
use crate::dram::DramAddress;
use crate::error::Result;
use crate::mapping::AddressMapping;
use crate::memory_system::{Channels, MemorySystem};
use crate::trace::TraceSource;
use crate::vector_isa::{v2_features, v3_features, with_features, VectorIsa};
use crate::{Cycle, NEVER};

/// How the loop runs. Entries pass constants where they can, so their loops have no branch
/// on the parts that are fixed.
#[derive(Clone, Copy)]
struct Mode {
    /// Commands go to the checker or are kept (`Books::commands_issued`).
    record: bool,
    /// Requests enter at their arrival cycle; otherwise closed loop (`outstanding` in flight).
    timestamped: bool,
    /// Tick every cycle instead of jumping to the next event (same results).
    cycle_by_cycle: bool,
    /// One channel, ticked on every iteration: the loop jumps only to its next event or
    /// work, so its tick is always due (and a tick before it changes nothing).
    one_channel: bool,
}

/// Run `source` on `mem`'s controllers (`books.opts`: in flight, recording, cycle by cycle).
/// Returns the final cycle and the number of requests that entered.
pub(crate) fn run(mem: &mut MemorySystem, source: &mut dyn TraceSource, books: &mut Books, timestamped: bool) -> Result<(Cycle, u64)> {
    let opts = books.opts;
    let record = opts.check || opts.keep_commands;
    let fast = per_shape(timestamped, opts.cycle_by_cycle);
    let (mapping, line_mask, channels) = mem.parts();
    let mode = Mode { record, timestamped, cycle_by_cycle: opts.cycle_by_cycle, one_channel: false };
    match channels {
        Channels::Lanes(lanes) if fast => closed_loop(lanes, mapping, line_mask, source, books, record),
        Channels::Lanes(lanes) => any_mode(lanes, mapping, line_mask, source, books, mode),
        Channels::General(general) => any_mode(general, mapping, line_mask, source, books, mode),
    }
}

/// Whether lane controllers run the per-shape, per-level closed loop.
fn per_shape(timestamped: bool, cycle_by_cycle: bool) -> bool {
    !timestamped && !cycle_by_cycle
}

/// The level `run`'s hot code runs at: the closed loop's (its recording entries are baseline
/// only), else the controllers' own `tick` and `enqueue`.
pub(crate) fn vector_isa(mem: &MemorySystem, timestamped: bool, cycle_by_cycle: bool, record: bool) -> VectorIsa {
    match mem.lane_controllers().first() {
        Some(c) if per_shape(timestamped, cycle_by_cycle) && !record => c.requested_vector_isa(),
        Some(_) if per_shape(timestamped, cycle_by_cycle) => VectorIsa::Baseline,
        _ => mem.vector_isa(),
    }
}

/// The loop for any controller and mode, the mode read at run time.
#[inline(never)]
fn any_mode<C: Controller>(
    cs: &mut [C],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
    mode: Mode,
) -> Result<(Cycle, u64)> {
    route(cs, mapping, line_mask, source, books, mode)
}

/// The closed, event-skipping loop on lane controllers: the controllers' shape as a type,
/// chosen once (`controller/shape.rs`; every channel has the same organisation and scheduler,
/// so the same shape), and the level they were built for.
fn closed_loop(
    lanes: &mut [LaneController],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
    record: bool,
) -> Result<(Cycle, u64)> {
    debug_assert!(!lanes.is_empty());
    let (shape, isa) = (lanes[0].shape(), lanes[0].requested_vector_isa());
    debug_assert!(lanes.iter().all(|c| c.shape() == shape));
    let one = lanes.len() == 1;
    crate::with_shape!(shape, S => {
        let cs = Shaped::<S>::all(lanes);
        match (record, one) {
            (true, true) => per_level::<_, true, true>(isa, cs, mapping, line_mask, source, books),
            (false, true) => per_level::<_, false, true>(isa, cs, mapping, line_mask, source, books),
            (true, false) => per_level::<_, true, false>(isa, cs, mapping, line_mask, source, books),
            (false, false) => per_level::<_, false, false>(isa, cs, mapping, line_mask, source, books),
        }
    })
}

/// Each closed loop has one entry per instruction-set level (`vector_isa.rs`): the loop and
/// everything it calls per request are `#[inline(always)]`, so each entry compiles all of it for
/// its level. Recording runs stay on the baseline: the checker costs more than the lanes, and
/// each level compiled is more build time.
#[inline(always)]
fn per_level<C: Controller, const RECORD: bool, const ONE: bool>(
    isa: VectorIsa,
    cs: &mut [C],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
) -> Result<(Cycle, u64)> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU runs this level (`LaneController::with_settings` checks it).
        VectorIsa::V2 if !RECORD => unsafe { closed_v2::<C, ONE>(cs, mapping, line_mask, source, books) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        VectorIsa::V3 if !RECORD => unsafe { closed_v3::<C, ONE>(cs, mapping, line_mask, source, books) },
        _ => closed_baseline::<C, RECORD, ONE>(cs, mapping, line_mask, source, books),
    }
}

/// The closed, event-skipping mode of an entry.
const fn closed(record: bool, one_channel: bool) -> Mode {
    Mode { record, timestamped: false, cycle_by_cycle: false, one_channel }
}

#[inline(never)]
fn closed_baseline<C: Controller, const RECORD: bool, const ONE: bool>(
    cs: &mut [C],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
) -> Result<(Cycle, u64)> {
    route(cs, mapping, line_mask, source, books, closed(RECORD, ONE))
}

// x86-64-v2: SSE4.1's 32-bit minimum and maximum; x86-64-v3: AVX2, an 8-lane block in one
// register (the feature lists are `vector_isa.rs`'s).
v2_features!(with_features! {
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn closed_v2<C: Controller, const ONE: bool>(
        cs: &mut [C],
        mapping: &AddressMapping,
        line_mask: u64,
        source: &mut dyn TraceSource,
        books: &mut Books,
    ) -> Result<(Cycle, u64)> {
        route(cs, mapping, line_mask, source, books, closed(false, ONE))
    }
});
v3_features!(with_features! {
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn closed_v3<C: Controller, const ONE: bool>(
        cs: &mut [C],
        mapping: &AddressMapping,
        line_mask: u64,
        source: &mut dyn TraceSource,
        books: &mut Books,
    ) -> Result<(Cycle, u64)> {
        route(cs, mapping, line_mask, source, books, closed(false, ONE))
    }
});

/// A stop is looked for every this many requests read: about 10-50 ms of a run.
const CHECK_REQUESTS: u32 = 1 << 18;

/// The request that enters next, read and decoded once when it is needed (not on every retry
/// while its queue is full): line address, DRAM coordinates, direction, arrival.
#[derive(Default)]
struct Feed {
    pending: bool,
    exhausted: bool,
    /// Requests read, for the stop check (`interrupt.rs`) every `CHECK_REQUESTS`.
    read: u32,
    addr: u64,
    dram: DramAddress,
    is_write: bool,
    arrival: Cycle,
}

impl Feed {
    /// Whether a request waits to enter, reading the next one from `source` if none does;
    /// false once the source is exhausted (`exhausted`).
    #[inline(always)]
    fn ready(&mut self, source: &mut dyn TraceSource, mapping: &AddressMapping, line_mask: u64) -> Result<bool> {
        if !self.pending && !self.exhausted {
            self.read = self.read.wrapping_add(1);
            if self.read % CHECK_REQUESTS == 0 {
                crate::interrupt::check()?;
            }
            match source.next_request()? {
                Some(r) => {
                    self.addr = r.addr & line_mask;
                    self.dram = mapping.decode(self.addr);
                    self.is_write = r.is_write;
                    self.arrival = r.arrival.unwrap_or(0);
                    self.pending = true;
                }
                None => self.exhausted = true,
            }
        }
        Ok(self.pending)
    }
}

/// The routing loop: tick the controllers whose event has come, let requests in, in order,
/// jump to the next event. Completions are counted as the controllers retire them, not
/// collected in a list (measured +12 % CPU time on the random row).
#[inline(always)]
fn route<C: Controller>(
    cs: &mut [C],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
    mode: Mode,
) -> Result<(Cycle, u64)> {
    let opts = books.opts;
    // A slice of constant length lets the compiler drop the per-channel loops.
    let cs = if mode.one_channel { &mut cs[..1] } else { cs };
    let mut feed = Feed::default();
    let mut front = FrontEnd::new(opts.sources);
    let mut in_flight = 0usize;
    let mut now: Cycle = 0;
    loop {
        // A check failure is kept and returned after the tick that found it.
        let mut failed = Ok(());
        for c in cs.iter_mut() {
            if mode.one_channel || mode.cycle_by_cycle || c.next_event() <= now {
                c.tick(now, |done| {
                    in_flight -= 1;
                    if failed.is_ok() {
                        failed = books.completion(done.id, now);
                    }
                });
            }
        }
        failed?;
        if mode.record {
            for c in cs.iter_mut() {
                c.drain_log_into(&mut books.commands);
            }
            books.commands_issued();
        }
        // Let in what may enter now, in order. In a closed loop the next request is read only
        // when one may enter: reading it earlier changes nothing (with the loop full,
        // `exhausted` cannot yet end the run, and completions matter anyway).
        while mode.timestamped || in_flight < opts.outstanding {
            if !feed.ready(source, mapping, line_mask)? || (mode.timestamped && feed.arrival > now) {
                break;
            }
            let c = &mut cs[if mode.one_channel { 0 } else { feed.dram.channel as usize }];
            if !c.can_accept(feed.is_write) {
                front.refused(now);
                break;
            }
            c.enqueue(now, front.next_id, feed.addr, &feed.dram, feed.is_write, front.origin());
            front.entered(now, &mut books.totals);
            in_flight += 1;
            feed.pending = false;
        }
        if feed.exhausted && in_flight == 0 {
            break;
        }
        // Nothing in flight until the next arrival: its controllers take the refreshes due
        // before it at once instead of a tick each (a recording run steps: its checker sees
        // every REF).
        if mode.timestamped && !mode.record && !mode.cycle_by_cycle && in_flight == 0 && feed.pending && feed.arrival > now {
            for c in cs.iter_mut() {
                c.skip_idle(now, feed.arrival);
            }
        }
        let next = if mode.cycle_by_cycle {
            now + 1
        } else {
            // A completion matters in its own cycle only when it lets a request in (closed loop
            // at its limit) or may end the run; otherwise a later tick retires it, in order,
            // and nothing it affects has changed.
            let completion_matters = feed.exhausted || (!mode.timestamped && in_flight >= opts.outstanding);
            let mut next = NEVER;
            for c in cs.iter() {
                next = next.min(if completion_matters { c.next_event() } else { c.next_work() });
            }
            if mode.timestamped && feed.pending {
                next = next.min(feed.arrival.max(now + 1));
            }
            next
        };
        if next == NEVER || next <= now {
            return Err(Books::stalled(now, in_flight));
        }
        now = next;
    }
    Ok((now, front.next_id))
}
