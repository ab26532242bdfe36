//! What a DRAM run keeps besides the controllers' counters, shared by the DRAM-trace drivers
//! (`routing.rs`) and the multicore driver: the run totals,
//! completions, the independent timing checker and the kept commands, and the driver options.

use crate::checker::TimingChecker;
use crate::config::MemoryConfig;
use crate::controller::Origin;
use crate::error::{Error, Result};
use crate::vector_isa::VectorIsa;
use crate::Cycle;

/// Options of the driver loop.
#[derive(Clone, Copy, Debug)]
pub struct DramSimOptions {
    /// Closed loop: requests in flight at once (ignored for timestamped traces).
    pub outstanding: usize,
    pub check: bool,
    pub cycle_by_cycle: bool,
    /// Keep every issued command in `RunTotals::commands` (memory grows with the run).
    pub keep_commands: bool,
    /// Requests are attributed round-robin to this many sources (request i to source i mod n),
    /// so application-aware schedulers see several applications; 1: all from source 0.
    pub sources: u32,
    /// The vector instruction set of the lane controllers and the closed loop on them
    /// (`vector_isa.rs`); `None`: the best
    /// this CPU runs. Results are the same at every level.
    pub isa: Option<VectorIsa>,
}

impl DramSimOptions {
    pub fn new(outstanding: usize) -> Self {
        DramSimOptions { outstanding, check: false, cycle_by_cycle: false, keep_commands: false, sources: 1, isa: None }
    }
}

/// Violations a run's statistics quote (all are counted).
pub const VIOLATION_EXAMPLES: usize = 20;

/// What a run produced besides the controllers' counters.
#[derive(Clone, Debug, Default)]
pub struct RunTotals {
    pub requests: u64,
    pub dram_cycles: Cycle,
    /// Cycles requests waited in the front end because their queue was full (summed).
    pub front_end_stalls: u64,
    pub commands_checked: u64,
    pub violations: u64,
    pub violation_examples: Vec<String>,
    pub wall_seconds: f64,
    pub timestamped: bool,
    /// The instruction-set level the run's hot code ran at (`simulate`: the closed loop's, else
    /// the lane controllers'; the baseline for recording closed-loop runs and general controllers).
    pub vector_isa: VectorIsa,
    /// The issued commands, when `keep_commands` was set.
    pub commands: Vec<crate::dram::CommandRecord>,
}

/// The independent timing checker for a memory system's device, organisation and timing,
/// expecting each rank's refreshes as the controller's refresh manager declares them.
pub fn timing_checker(cfg: &MemoryConfig) -> TimingChecker {
    // A manager that cannot be built fails the run before any command; expect none then.
    let obligation = crate::controller::refresh::obligation(&cfg.controller, &cfg.org, &cfg.timing)
        .unwrap_or(crate::dram::refresh_timing::RefreshObligation::None);
    TimingChecker::new(cfg.device.standard, &cfg.org, &cfg.timing).with_refresh(obligation)
}

/// What the routing loop keeps besides the memory system: the run totals, the checker, and
/// (with `check`) which requests completed.
pub(crate) struct Books {
    pub checker: Option<TimingChecker>,
    pub totals: RunTotals,
    pub commands: Vec<crate::dram::CommandRecord>,
    pub completed: Vec<bool>,
    pub opts: DramSimOptions,
}

impl Books {
    /// Count a completion and, with `check`, prove each request completes once.
    #[inline(always)]
    pub fn completion(&mut self, id: u64, now: Cycle) -> Result<()> {
        self.totals.requests += 1;
        if self.opts.check {
            self.check_completed_once(id, now)?;
        }
        Ok(())
    }

    fn check_completed_once(&mut self, id: u64, now: Cycle) -> Result<()> {
        let id = id as usize;
        if self.completed.len() <= id {
            self.completed.resize(id + 1, false);
        }
        if std::mem::replace(&mut self.completed[id], true) {
            return Err(Error::Violation(format!("request {id} completed twice (cycle {now})")));
        }
        Ok(())
    }

    /// Pass the commands a step issued (drained into `self.commands`) to the checker and keep
    /// them if asked.
    #[inline]
    pub fn commands_issued(&mut self) {
        if let Some(checker) = self.checker.as_mut() {
            checker.observe_all(&self.commands);
        }
        if self.opts.keep_commands {
            self.totals.commands.append(&mut self.commands);
        } else {
            self.commands.clear();
        }
    }

    /// The error of a driver that found no next event.
    pub fn stalled(now: Cycle, in_flight: usize) -> Error {
        Error::config("engine", format!("internal error: simulation stalled at cycle {now} with {in_flight} requests in flight"))
    }
}

/// The drivers' front end: the next request's id and source (request i comes from source
/// i mod `sources`), and how long a request has waited for a full queue.
pub(crate) struct FrontEnd {
    pub next_id: u64,
    next_source: u32,
    sources: u32,
    blocked_since: Option<Cycle>,
}

impl FrontEnd {
    pub fn new(sources: u32) -> Self {
        FrontEnd { next_id: 0, next_source: 0, sources, blocked_since: None }
    }

    /// The origin of the next request.
    #[inline(always)]
    pub fn origin(&self) -> Origin {
        Origin::single(self.next_source)
    }

    /// The next request found its queue full at `now`.
    #[inline(always)]
    pub fn refused(&mut self, now: Cycle) {
        self.blocked_since.get_or_insert(now);
    }

    /// The next request entered at `now`: count the cycles it waited, move to the next one.
    #[inline(always)]
    pub fn entered(&mut self, now: Cycle, totals: &mut RunTotals) {
        if let Some(since) = self.blocked_since.take() {
            totals.front_end_stalls += now - since;
        }
        self.next_id += 1;
        // No division on the hot path.
        self.next_source += 1;
        if self.next_source >= self.sources {
            self.next_source = 0;
        }
    }
}
