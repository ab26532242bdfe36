//! The fused closed-loop driver: `dram_sim::simulate` hands a closed-loop, event-skipping run
//! to this loop when every channel runs the lane controller. It
//! is `dram_sim`'s general loop with the memory system's layers taken out: it ticks and fills
//! the `LaneController`s directly (no per-implementation dispatch per call), decodes each
//! request once when it is read (not on every retry), retries a refused request by asking its
//! channel's queue (`can_accept`) instead of re-entering the memory system, and takes the next
//! event over the lane controllers alone. The controllers' own code (`tick`, `enqueue`) is the
//! one source of the semantics; completions, the command log, the checker, `keep_commands`,
//! `sources` and front-end stall counting go through the same `Books` as the general loop, so
//! results are identical (tests/lanes_equal_general.rs compares whole runs). One channel (the
//! bench's machine) gets its own loop, `run_one_channel`.

use super::books::{Books, FrontEnd};
use crate::controller::shape::Shape;
use crate::controller::{Completion, LaneController};
use crate::dram::DramAddress;
use crate::error::Result;
use crate::mapping::AddressMapping;
use crate::memory_system::MemorySystem;
use crate::trace::TraceSource;
use crate::vector_isa::{v2_features, v3_features, with_features, VectorIsa};
use crate::{Cycle, NEVER};

/// The request that enters next, read and decoded once when it is needed (not on every retry
/// while its queue is full): line address, DRAM coordinates, direction.
#[derive(Default)]
struct Feed {
    pending: bool,
    exhausted: bool,
    addr: u64,
    dram: DramAddress,
    is_write: bool,
}

impl Feed {
    /// Whether a request waits to enter, reading the next one from `source` if none does;
    /// false once the source is exhausted (`exhausted`).
    #[inline(always)]
    fn ready(&mut self, source: &mut dyn TraceSource, mapping: &AddressMapping, line_mask: u64) -> Result<bool> {
        if !self.pending && !self.exhausted {
            match source.next_request()? {
                Some(r) => {
                    self.addr = r.addr & line_mask;
                    self.dram = mapping.decode(self.addr);
                    self.is_write = r.is_write;
                    self.pending = true;
                }
                None => self.exhausted = true,
            }
        }
        Ok(self.pending)
    }
}

/// Run `source` closed-loop (`books.opts.outstanding` in flight) on a memory system of lane
/// controllers, in code compiled for `isa` (which the caller has checked this CPU runs).
/// Returns the final cycle and the number of requests that entered.
pub(crate) fn run(mem: &mut MemorySystem, source: &mut dyn TraceSource, books: &mut Books, isa: VectorIsa) -> Result<(Cycle, u64)> {
    debug_assert!(isa.is_supported());
    let record = books.opts.check || books.opts.keep_commands;
    let (mapping, line_mask, lanes) = mem.lane_parts();
    debug_assert!(!lanes.is_empty(), "the fused driver runs lane controllers only");
    // The controllers' shape as a type, chosen once (`controller/shape.rs`). Every channel has
    // the same organisation and scheduler, so the same shape.
    let shape = lanes[0].shape();
    debug_assert!(lanes.iter().all(|c| c.shape() == shape));
    let one = lanes.len() == 1;
    crate::with_shape!(shape, S => match (record, one) {
        (true, true) => one_channel::<true, S>(isa, &mut lanes[0], mapping, line_mask, source, books),
        (false, true) => one_channel::<false, S>(isa, &mut lanes[0], mapping, line_mask, source, books),
        (true, false) => channels::<true, S>(isa, lanes, mapping, line_mask, source, books),
        (false, false) => channels::<false, S>(isa, lanes, mapping, line_mask, source, books),
    })
}

/// The level `run` runs at for `isa`: recording runs have the baseline entry only.
pub(crate) fn level(isa: VectorIsa, record: bool) -> VectorIsa {
    if record {
        VectorIsa::Baseline
    } else {
        isa
    }
}

/// Each loop has one entry per instruction-set level (`vector_isa.rs`): the loop and everything
/// it calls per request are `#[inline(always)]`, so each entry compiles all of it for its
/// level. An entry stays one function per loop, shape and recording choice, as before;
/// recording runs have the baseline entry only.
macro_rules! entries {
    ($dispatch:ident, $base:ident, $body:ident, $first:ident: $first_ty:ty,
     [$(($entry:ident, $level:ident, $features:ident)),*]) => {
        #[inline(always)]
        fn $dispatch<const RECORD: bool, S: Shape>(
            isa: VectorIsa,
            $first: $first_ty,
            mapping: &AddressMapping,
            line_mask: u64,
            source: &mut dyn TraceSource,
            books: &mut Books,
        ) -> Result<(Cycle, u64)> {
            // Recording runs (checker, kept commands) stay on the baseline: the checker costs
            // more than the lanes, and each level compiled is more build time.
            match isa {
                $(
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: the CPU runs this level (`VectorIsa::is_supported`, checked by `simulate`).
                    VectorIsa::$level if !RECORD => unsafe { $entry::<S>($first, mapping, line_mask, source, books) },
                )*
                _ => $base::<RECORD, S>($first, mapping, line_mask, source, books),
            }
        }

        #[inline(never)]
        fn $base<const RECORD: bool, S: Shape>(
            $first: $first_ty,
            mapping: &AddressMapping,
            line_mask: u64,
            source: &mut dyn TraceSource,
            books: &mut Books,
        ) -> Result<(Cycle, u64)> {
            $body::<RECORD, S>($first, mapping, line_mask, source, books)
        }

        $(
            $features!(with_features! {
                #[cfg(target_arch = "x86_64")]
                #[inline(never)]
                unsafe fn $entry<S: Shape>(
                    $first: $first_ty,
                    mapping: &AddressMapping,
                    line_mask: u64,
                    source: &mut dyn TraceSource,
                    books: &mut Books,
                ) -> Result<(Cycle, u64)> {
                    $body::<false, S>($first, mapping, line_mask, source, books)
                }
            });
        )*
    };
}

// x86-64-v2: SSE4.1's 32-bit minimum and maximum; x86-64-v3: AVX2, an 8-lane block in one
// register (the feature lists are `vector_isa.rs`'s).
entries!(one_channel, one_channel_baseline, run_one_channel, c: &mut LaneController, [
    (one_channel_v2, V2, v2_features),
    (one_channel_v3, V3, v3_features)
]);
entries!(channels, channels_baseline, run_channels, lanes: &mut [LaneController], [
    (channels_v2, V2, v2_features),
    (channels_v3, V3, v3_features)
]);

/// The loop for two or more channels.
#[inline(always)]
fn run_channels<const RECORD: bool, S: Shape>(
    lanes: &mut [LaneController],
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
) -> Result<(Cycle, u64)> {
    let opts = books.opts;
    let mut done: Vec<Completion> = Vec::new();
    let mut feed = Feed::default();
    let mut front = FrontEnd::new(opts.sources);
    let mut in_flight = 0usize;
    let mut now: Cycle = 0;
    loop {
        for c in lanes.iter_mut() {
            if c.next_event() <= now {
                c.tick_inlined::<S>(now, |d| done.push(d));
            }
        }
        if !done.is_empty() {
            in_flight -= done.len();
            books.completions(&done, now)?;
            done.clear();
        }
        if RECORD {
            for c in lanes.iter_mut() {
                c.drain_log_into(&mut books.commands);
            }
            books.commands_issued();
        }
        // Let in what may enter now, in order. Unlike the general loop, the next request is
        // read only when one may enter: reading it earlier changes nothing (with the loop
        // full, `exhausted` cannot yet end the run, and completions matter anyway).
        while in_flight < opts.outstanding {
            if !feed.ready(source, mapping, line_mask)? {
                break;
            }
            let c = &mut lanes[feed.dram.channel as usize];
            if !c.can_accept(feed.is_write) {
                front.refused(now);
                break;
            }
            c.enqueue_inlined::<S>(now, front.next_id, feed.addr, &feed.dram, feed.is_write, front.origin());
            front.entered(now, &mut books.totals);
            in_flight += 1;
            feed.pending = false;
        }
        if feed.exhausted && in_flight == 0 {
            break;
        }
        // As the general loop: a completion matters in its own cycle only when it lets a
        // request in or may end the run.
        let completion_matters = feed.exhausted || in_flight >= opts.outstanding;
        let mut next = NEVER;
        for c in lanes.iter() {
            next = next.min(if completion_matters { c.next_event() } else { c.next_work() });
        }
        if next == NEVER || next <= now {
            return Err(Books::stalled(now, in_flight));
        }
        now = next;
    }
    Ok((now, front.next_id))
}

/// `run` for one channel: one loop around the controller's inlined `tick` and `enqueue` (their
/// code is the semantics; nothing is copied), with no per-controller loops or dispatch and the
/// command recording decided at compile time (`RECORD`), and the controller's lane shape a type
/// (`S`). Every iteration ticks: the loop only
/// jumps to the controller's next event (or next work), so the tick is always due. Completions
/// are counted as `retire` yields them, not collected in a list: the step measured +12 % CPU
/// time on random.
#[inline(always)]
fn run_one_channel<const RECORD: bool, S: Shape>(
    c: &mut LaneController,
    mapping: &AddressMapping,
    line_mask: u64,
    source: &mut dyn TraceSource,
    books: &mut Books,
) -> Result<(Cycle, u64)> {
    let outstanding = books.opts.outstanding;
    let mut feed = Feed::default();
    let mut front = FrontEnd::new(books.opts.sources);
    let mut in_flight = 0usize;
    let mut now: Cycle = 0;
    loop {
        debug_assert!(c.next_event() <= now);
        // Completions are counted as they retire; a check failure is kept and returned after
        // the tick (the general loop also returns it after the tick that retired it).
        let mut failed = Ok(());
        c.tick_inlined::<S>(now, |done| {
            in_flight -= 1;
            if failed.is_ok() {
                failed = books.completion(done.id, now);
            }
        });
        failed?;
        if RECORD {
            c.drain_log_into(&mut books.commands);
            books.commands_issued();
        }
        while in_flight < outstanding {
            if !feed.ready(source, mapping, line_mask)? {
                break;
            }
            if !c.can_accept(feed.is_write) {
                front.refused(now);
                break;
            }
            c.enqueue_inlined::<S>(now, front.next_id, feed.addr, &feed.dram, feed.is_write, front.origin());
            front.entered(now, &mut books.totals);
            in_flight += 1;
            feed.pending = false;
        }
        if feed.exhausted && in_flight == 0 {
            break;
        }
        let next = if feed.exhausted || in_flight >= outstanding { c.next_event() } else { c.next_work() };
        if next == NEVER || next <= now {
            return Err(Books::stalled(now, in_flight));
        }
        now = next;
    }
    Ok((now, front.next_id))
}
