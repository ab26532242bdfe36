//! `Controller`: one channel's memory controller as the drivers use it, implemented by both
//! implementations (`ChannelController`, `LaneController`). The drivers are generic over it
//! (`fn f<C: Controller>`), so each loop is compiled for one implementation with no dispatch per
//! call; `&dyn Controller` serves the reports (every method but `tick`).

use super::{Completion, Implementation, Origin};
use crate::dram::{CommandRecord, DramAddress};
use crate::stats::ChannelStats;
use crate::Cycle;
use std::collections::BTreeMap;

pub trait Controller {
    fn implementation(&self) -> Implementation;

    /// Whether the queue of a request's direction has room.
    fn can_accept(&self, is_write: bool) -> bool;

    /// Queue a request arriving at `now`. The caller checks `can_accept` first.
    fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin);

    /// Advance to `now`: retire finished transfers, each passed to `completed` in completion
    /// order, then issue at most one command. Ticking before `next_event` changes nothing.
    fn tick(&mut self, now: Cycle, completed: impl FnMut(Completion))
    where
        Self: Sized;

    /// The earliest cycle at which `tick` could change anything.
    fn next_event(&self) -> Cycle;

    /// Idle with nothing to do before `until` but refresh (nothing queued or in flight, every
    /// bank closed, no command log kept): take the REFs due before then at once
    /// (`refresh::skip_idle`), so a long idle stretch costs a few ticks, not one per tREFI.
    /// The statistics are those of ticking through it. Does nothing otherwise.
    fn skip_idle(&mut self, now: Cycle, until: Cycle);

    /// `next_event` leaving out transfers that finish: a driver that does not need to see a
    /// completion in its own cycle may tick later; the completions come out then, in order.
    fn next_work(&self) -> Cycle;

    /// The cycle the next transfer finishes (`NEVER`: none in flight).
    fn next_completion(&self) -> Cycle;

    fn is_idle(&self) -> bool;

    /// Requests waiting in either queue.
    fn queued(&self) -> usize;

    /// Close the books at `now` (queue-occupancy integrals).
    fn finish(&mut self, now: Cycle);

    /// Keep a log of issued commands (for the timing checker).
    fn record_commands(&mut self, on: bool);

    /// Move the commands issued since the last call into `out`.
    fn drain_log_into(&mut self, out: &mut Vec<CommandRecord>);

    fn stats(&self) -> &ChannelStats;

    fn scheduler_name(&self) -> &'static str;

    /// The scheduler's per-source counters (empty for schedulers without per-source state).
    fn scheduler_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>>;
}
