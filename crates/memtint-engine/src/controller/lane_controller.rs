//! The lane controller: a second implementation of one channel's memory controller, for the
//! age-ordered schedulers (FCFS, FR-FCFS, FR-FCFS-Cap), any row policy and refresh manager, any
//! organisation of up to 64 banks per channel. It issues exactly what `ChannelController` issues
//! (same commands at the same cycles, same completions in the same order, same statistics, same
//! `next_event`), which `tests/engine/lanes_equal_general.rs` checks over random configurations;
//! `controller.implementation = "auto"` runs it whenever it supports the configuration
//! (`implementation.rs`). It is built the way bench/README.md measured to be fast:
//! the timing state is the candidates' lanes (`lanes.rs`, `lane_timing.rs`): a command raises
//! the ready time of every candidate it constrains, so choosing the next command is a minimum
//! and a key comparison over a few lanes; 8-byte queue entries with the rest of a request in a
//! slab; no virtual call per command (the scheduler's order is `AgeOrder` data, the row
//! policy's two answers are read once).
//!
//! The control flow (`tick`: retire, refresh, write-drain switch, schedule, row-policy closes,
//! the next event) is the general controller's, step for step, so the cycles it asks to be
//! ticked at are the same: see `channel_controller.rs` for the why of each step.

use super::bank_table::BankTable;
use super::lane_timing::{LaneTiming, LANE_MAX_RANKS};
use super::lanes::{Lanes, FIRST_KEYS, K_ACT, K_NONE, K_PRE, K_RD, K_WR, MAX_LANES, NEVER_LANE, NO_KEY};
use super::refresh::{self, RefreshState};
use super::row_policy;
use super::scheduler::{self, AgeOrder, Scheduler, LANE_AGES};
use super::shape::{Shape, ShapeKey};
use super::write_drain::WriteDrain;
use super::{Completion, Controller, Implementation, Origin, RowOutcome, RowOwners};
use crate::controller::ControllerConfig;
use crate::dram::constraints::Constraints;
use crate::dram::timing_rules::{TimingTable, DDR_RULES};
use crate::dram::{Command, CommandRecord, DramAddress, Organisation, Standard, TimingParams};
use crate::error::Result;
use crate::stats::{ChannelStats, RowCause};
use crate::vector_isa::VectorIsa;
use crate::{Cycle, NEVER};
use std::collections::{BTreeMap, VecDeque};
use std::marker::PhantomData;

const READS: usize = 0;
const WRITES: usize = 1;
const NO_ROW: u32 = u32::MAX;
/// Most banks per channel (a 64-bit mask of idle open rows).
pub const MAX_BANKS: u32 = 64;
/// Most ranks per channel (the timing tables' fixed size).
pub const MAX_RANKS: u32 = LANE_MAX_RANKS;
/// Constraints and the front-end latency must stay below this for 32-bit lane offsets.
const MAX_DELAY: u64 = 1 << 20;
/// Lane offsets are rebased once `now` is this far past the base (offsets then stay below
/// 2^30 + `MAX_DELAY`, inside `i32`).
const REBASE_AFTER: u64 = 1 << 30;

/// What only the lane controller takes besides `ControllerConfig`, fixed at construction.
/// None changes results.
#[derive(Clone, Copy, Debug)]
pub struct LaneSettings {
    /// The level `tick` and `enqueue` run at (`vector_isa.rs`), and the closed loop's on lane
    /// controllers (`dram_sim/routing.rs`); the caller checks the CPU runs it (`VectorIsa::checked`).
    pub isa: VectorIsa,
    /// Rebase lane offsets once `now` is this far past the base (tests: many rebases in a
    /// short run); clamped to 1..=2^30.
    pub rebase_after: u64,
    /// Renumber ages once `next_age` reaches this (tests: many renumberings in a short run);
    /// clamped to one more than the queues hold ..= 2^22.
    pub age_limit: u32,
}

impl Default for LaneSettings {
    /// The best level this CPU runs, and the limits the lanes' widths allow.
    fn default() -> Self {
        LaneSettings { isa: VectorIsa::best(), rebase_after: REBASE_AFTER, age_limit: LANE_AGES }
    }
}

/// A per-bank table (`bank_table.rs`): no bounds check per access.
type Banks<T> = BankTable<T, { MAX_BANKS as usize }>;

/// The rest of a queued request, read when it is chosen or completes.
#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u64,
    /// Arrival order among the queued requests (`AgeOrder::lane_key`), renumbered from 0
    /// before `next_age` reaches the limit (`renumber_ages`).
    age: u32,
    arrival: Cycle,
    ready_at: Cycle,
    source: u32,
    process: u32,
    column: u32,
    outcome: Option<RowOutcome>,
    /// Who left the bank as the request found it (set with `outcome`).
    cause: RowCause,
}

/// A queued request as its bank's queue holds it: its row (searched for hits) and its slab slot.
#[derive(Clone, Copy, Debug)]
struct Queued {
    row: u32,
    slot: u32,
}

/// Why `LaneController` cannot run a configuration (`None`: it can).
pub fn unsupported(standard: Standard, org: &Organisation, timing: &TimingParams, cfg: &ControllerConfig) -> Option<String> {
    let c = Constraints::derive(standard, timing);
    let order = scheduler::build(&cfg.scheduler, cfg, &c).ok().and_then(|s| s.age_order());
    if order.is_none() {
        let fast: Vec<&str> = scheduler::SCHEDULERS.all().iter().filter(|s| s.fast_path).map(|s| s.name).collect();
        return Some(format!("scheduler \"{}\" (the lane controller runs {})", cfg.scheduler, fast.join(", ")));
    }
    // The lane timing applies DDR3/DDR4's rules by hand; another standard's rules (a scope or
    // command they lack) run on the general controller, which applies any rule table.
    if !TimingTable::build(standard.timing_rules(), timing).same_rules_as(&TimingTable::build(DDR_RULES, timing)) {
        return Some(format!("{}'s timing rules (the lane controller implements DDR3's and DDR4's)", standard.name()));
    }
    if cfg.power_down_after.is_some() {
        return Some("power-down (controller.power_down_after runs on the general controller)".into());
    }
    if refresh::state(cfg, org, timing).is_ok_and(|s| s.per_bank()) {
        return Some(format!("refresh manager \"{}\" (per-bank refresh runs on the general controller)", cfg.refresh));
    }
    if org.banks_per_channel() > MAX_BANKS {
        return Some(format!("{} banks per channel (at most {MAX_BANKS})", org.banks_per_channel()));
    }
    if org.ranks > MAX_RANKS {
        return Some(format!("{} ranks per channel (at most {MAX_RANKS})", org.ranks));
    }
    let delays = [
        c.act_to_act,
        c.act_to_col,
        c.act_to_pre,
        c.pre_to_act,
        c.rd_to_pre,
        c.wr_to_pre,
        c.act_to_act_l,
        c.rd_to_rd_l,
        c.wr_to_wr_l,
        c.wr_to_rd_l,
        c.act_to_act_s,
        c.rd_to_rd_s,
        c.wr_to_wr_s,
        c.wr_to_rd_s,
        c.rd_to_wr,
        c.faw,
        c.refresh,
        c.rd_to_rd_rank,
        c.wr_to_wr_rank,
        c.rd_to_wr_rank,
        c.wr_to_rd_rank,
        c.read_data_end,
        c.write_data_end,
    ];
    if delays.iter().chain([&cfg.frontend_latency]).any(|&d| d >= MAX_DELAY) {
        return Some(format!("a timing constraint or frontend_latency of {MAX_DELAY} cycles or more"));
    }
    None
}

pub struct LaneController {
    channel: u32,
    org: Organisation,
    c: Constraints,
    banks: usize,
    banks_per_rank: usize,
    order: AgeOrder,
    /// `row_policy.auto_precharge(more_hits_queued)` for true and false.
    auto_precharge: [bool; 2],
    idle_close_after: Option<u64>,
    /// Kept for its name and counters; never called per command.
    scheduler: Box<dyn Scheduler>,
    refresh: RefreshState,
    drain: WriteDrain,
    write_mode: bool,
    /// Writes issued since the controller turned to writes (`WriteDrain::should_switch`).
    written: usize,
    /// `drain.may_switch` for the present mode and queue lengths (`note_lengths`).
    drain_maybe: bool,
    /// Per direction, per bank: waiting requests, oldest first, and how many hit the open row.
    queues: [Banks<Vec<Queued>>; 2],
    hits: [Banks<u32>; 2],
    len: [usize; 2],
    capacity: [usize; 2],
    /// `protect_activated` (`ChannelController`'s field of the same name).
    protect: bool,
    /// `ChannelController::waiting`.
    waiting: [usize; 2],
    /// Per direction, bit b: bank b holds an activated request of that direction (at most one:
    /// the bank cannot close). The active direction's have lanes keyed below `FIRST_KEYS`;
    /// the other direction's are searched.
    activated_mask: [u64; 2],
    /// Per bank with its bit in `activated_mask`: the activated request's slab slot.
    activated_slot: Banks<u32>,
    /// `ChannelController::activated_due`.
    activated_due: Cycle,
    slab: Vec<Pending>,
    free: Vec<u32>,
    frontend_latency: u64,
    next_age: u32,
    /// `next_age` never reaches this (`LANE_AGES`; tests lower it to cross many renumberings).
    age_limit: u32,
    // Per bank.
    open_row: Banks<u32>,
    act_cycle: Banks<Cycle>,
    last_use: Banks<Cycle>,
    hits_since_act: Banks<u32>,
    /// Requests in either queue.
    pending: Banks<u32>,
    /// Whose request opened each bank's row and closed it (row-buffer causes).
    owners: RowOwners,
    /// Bit b: bank b's row is open with nothing queued for it (row-policy closes look only here).
    idle_open: u64,
    open_banks: Vec<u32>,
    timing: LaneTiming,
    lanes: Lanes,
    /// Per lane: its candidate's position in its bank queue.
    lane_index: BankTable<u32, MAX_LANES>,
    /// Lane blocks and ranks > 1.
    shape: ShapeKey,
    /// Per bank: its rank (so hot paths do not divide).
    bank_rank: Banks<u8>,
    /// Lane offsets count from this cycle.
    base: Cycle,
    rebase_after: u64,
    in_flight: [VecDeque<Completion>; 2],
    next_completion: Cycle,
    next_work: Cycle,
    last_update: Cycle,
    stats: ChannelStats,
    log: Option<Vec<CommandRecord>>,
    sched_next: Cycle,
    idle_next: Cycle,
    /// The level asked for (`LaneSettings::isa`); `tick` and `enqueue` run it or the baseline.
    isa: VectorIsa,
}

impl LaneController {
    /// The controller of `channel` with the default `LaneSettings`, or a config error naming
    /// what it does not support.
    pub fn new(channel: u32, standard: Standard, org: &Organisation, timing: &TimingParams, cfg: &ControllerConfig) -> Result<Self> {
        Self::with_settings(channel, standard, org, timing, cfg, LaneSettings::default())
    }

    /// `new` with `settings`.
    pub fn with_settings(
        channel: u32,
        standard: Standard,
        org: &Organisation,
        timing: &TimingParams,
        cfg: &ControllerConfig,
        settings: LaneSettings,
    ) -> Result<Self> {
        assert!(settings.isa.is_supported(), "this CPU does not run {}", settings.isa.name());
        cfg.validate()?;
        if let Some(why) = unsupported(standard, org, timing, cfg) {
            return Err(crate::error::Error::config("controller.implementation", format!("\"lanes\" does not support {why}")));
        }
        let c = Constraints::derive(standard, timing);
        let scheduler = scheduler::build(&cfg.scheduler, cfg, &c)?;
        let order = scheduler.age_order().expect("checked by unsupported()");
        let row_policy = row_policy::build(&cfg.row_policy, cfg)?;
        let refresh = refresh::state(cfg, org, timing)?;
        assert!(!refresh.per_bank(), "per-bank refresh runs on the general controller (`unsupported`)");
        let banks = org.banks_per_channel() as usize;
        let bpr = org.banks_per_rank() as usize;
        let (gpr, bpg) = (org.bank_groups as usize, org.banks_per_group as usize);
        let lanes = Lanes::new(banks, |b| (b / bpr) * gpr + (b % bpr) / bpg, |b| b / bpr);
        let writes = cfg.writes()?;
        let slab_size = cfg.read_queue + writes.queue;
        // Activated requests leave admission's count: up to one per bank beyond the queues.
        let queued = (cfg.read_queue + writes.queue + banks) as u32;
        Ok(LaneController {
            channel,
            org: org.clone(),
            c: c.clone(),
            banks,
            banks_per_rank: bpr,
            order,
            auto_precharge: [row_policy.auto_precharge(false), row_policy.auto_precharge(true)],
            idle_close_after: row_policy.idle_close_after(),
            scheduler,
            refresh,
            drain: WriteDrain::new(&writes),
            write_mode: false,
            written: 0,
            drain_maybe: false,
            queues: [BankTable::from_fn(|_| Vec::new()), BankTable::from_fn(|_| Vec::new())],
            hits: [BankTable([0; MAX_BANKS as usize]), BankTable([0; MAX_BANKS as usize])],
            len: [0, 0],
            capacity: [cfg.read_queue, writes.queue],
            protect: cfg.protect_activated,
            waiting: [0, 0],
            activated_mask: [0, 0],
            activated_slot: BankTable([0; MAX_BANKS as usize]),
            activated_due: NEVER,
            slab: Vec::with_capacity(slab_size),
            free: Vec::with_capacity(slab_size),
            frontend_latency: cfg.frontend_latency,
            next_age: 0,
            age_limit: settings.age_limit.clamp(queued + 1, LANE_AGES),
            open_row: BankTable([NO_ROW; MAX_BANKS as usize]),
            act_cycle: BankTable([0; MAX_BANKS as usize]),
            last_use: BankTable([0; MAX_BANKS as usize]),
            hits_since_act: BankTable([0; MAX_BANKS as usize]),
            pending: BankTable([0; MAX_BANKS as usize]),
            owners: RowOwners::new(banks),
            idle_open: 0,
            open_banks: vec![0; org.ranks as usize],
            timing: LaneTiming::new(c, org.ranks, org.bank_groups, banks),
            lane_index: BankTable([0; MAX_LANES]),
            shape: ShapeKey { blocks: lanes.lane_count() / super::lanes::BLOCK, multi_rank: org.ranks > 1 },
            lanes,
            bank_rank: BankTable::from_fn(|b| (b / bpr) as u8),
            base: 0,
            rebase_after: settings.rebase_after.clamp(1, REBASE_AFTER),
            in_flight: [VecDeque::new(), VecDeque::new()],
            next_completion: NEVER,
            next_work: 0,
            last_update: 0,
            stats: ChannelStats::new(org.ranks, org.banks_per_channel()),
            log: None,
            sched_next: 0,
            idle_next: 0,
            isa: settings.isa,
        })
    }

    /// The level asked for at construction (`LaneSettings::isa`), which the closed loop on
    /// lane controllers runs at.
    pub fn requested_vector_isa(&self) -> VectorIsa {
        self.isa
    }

    /// The level `tick` and `enqueue` run at: x86-64-v3 or the baseline (`isa_entries`).
    pub fn vector_isa(&self) -> VectorIsa {
        if self.isa == VectorIsa::V3 {
            VectorIsa::V3
        } else {
            VectorIsa::Baseline
        }
    }

    #[inline]
    pub fn can_accept(&self, is_write: bool) -> bool {
        let d = is_write as usize;
        self.waiting(d) < self.capacity[d]
    }

    /// Requests of direction `d` not yet activated (`ChannelController::waiting`).
    #[inline(always)]
    fn waiting(&self, d: usize) -> usize {
        self.waiting[d]
    }

    /// Bank `b`'s row is held for an activated request: no PRE may close it.
    #[inline(always)]
    fn holds_activated(&self, b: usize) -> bool {
        ((self.activated_mask[READS] | self.activated_mask[WRITES]) >> (b & 63)) & 1 != 0
    }

    /// Bank `b` holds an activated request of direction `d`.
    #[inline(always)]
    fn holds_activated_in(&self, d: usize, b: usize) -> bool {
        (self.activated_mask[d] >> (b & 63)) & 1 != 0
    }

    /// Bank `b`'s lane key for a request of age `age` that is not activated (`is_hit`: its
    /// column command counts as a hit), or for the activated one: its age alone, below
    /// `FIRST_KEYS`, so activated requests go first, oldest first, and pass refresh's gate.
    #[inline(always)]
    fn lane_key(&self, is_hit: bool, age: u32) -> u32 {
        FIRST_KEYS | self.order.lane_key(is_hit, age)
    }

    /// `ChannelController::oldest_ready_activated`: the oldest activated request of direction
    /// `d` whose column command can issue at `now` (its age and bank), and the earliest cycle
    /// after `now` any other one's can.
    fn oldest_ready_activated(&self, now: Cycle, d: usize) -> (Option<(u32, usize)>, Cycle) {
        let mut best: Option<(u32, usize)> = None;
        let mut next = NEVER;
        let mut m = self.activated_mask[d];
        let k = if d == WRITES { K_WR } else { K_RD };
        while m != 0 {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            // The bank's part first: after a recent ACT it alone says "not yet".
            let t_bank = self.timing.bank_col[b];
            let t = if t_bank > now { t_bank } else { t_bank.max(self.timing.shared(k, self.group_of(b))).max(self.timing.bus) };
            if t > now {
                next = next.min(t);
            } else {
                // Whichever of the two is not chosen stays ready.
                if best.is_some() {
                    next = now + 1;
                }
                let age = self.slab[self.activated_slot[b] as usize].age;
                if best.is_none_or(|(a, _)| age < a) {
                    best = Some((age, b));
                }
            }
        }
        (best, next)
    }

    /// The lane shape this controller's organisation and scheduler give (`shape.rs`).
    pub fn shape(&self) -> ShapeKey {
        self.shape
    }

    // --- Lanes ---------------------------------------------------------------------------

    /// Keep `now` within `rebase_after` of the base (rare: once per 2^30 cycles).
    #[inline(always)]
    fn keep_base_near(&mut self, now: Cycle) {
        if now.saturating_sub(self.base) >= self.rebase_after {
            self.rebase(now);
        }
    }

    #[cold]
    #[inline(never)]
    fn rebase(&mut self, now: Cycle) {
        // A margin below `now`: callers may still name a slightly earlier cycle.
        let new_base = now.saturating_sub(self.rebase_after / 2).max(self.base);
        self.lanes.rebase(new_base - self.base);
        self.base = new_base;
    }

    #[inline(always)]
    fn offset(&self, t: Cycle) -> i32 {
        t.saturating_sub(self.base) as i32
    }

    #[inline(always)]
    fn absolute(&self, o: i32) -> Cycle {
        if o == NEVER_LANE {
            NEVER
        } else {
            self.base + o as u64
        }
    }

    /// Bank `b`'s bank group within the channel (its lane's).
    #[inline(always)]
    fn group_of(&self, b: usize) -> usize {
        self.lanes.group(b) as usize
    }

    /// Set bank `b`'s candidate (lane `b`).
    #[inline(always)]
    fn set_lane(&mut self, b: usize, kind: i32, key: u32, t_bank: Cycle, index: usize) {
        let t = t_bank.max(self.timing.shared(kind, self.group_of(b)));
        self.lanes.set(b, self.offset(t), kind, key);
        self.lane_index[b] = index as u32;
    }

    #[inline(always)]
    fn clear_lane(&mut self, b: usize) {
        self.lanes.set(b, NEVER_LANE, K_NONE, NO_KEY);
    }

    /// Bank `b`'s candidate in the active direction (`ChannelController::oldest_candidate`):
    /// with hits queued, the oldest hit's column command (or an older non-hit's PRE, for an
    /// order that may close a row under its hits); else PRE or ACT for the oldest request. The
    /// searches start at `hit_from` and `miss_from` (callers that know the requests before
    /// cannot match).
    #[inline(always)]
    fn rebuild_bank(&mut self, b: usize, hit_from: usize, miss_from: usize) {
        let d = self.write_mode as usize;
        let q = &self.queues[d][b];
        if q.is_empty() {
            self.clear_lane(b);
            return;
        }
        let row = self.open_row[b];
        if row == NO_ROW {
            self.set_act_candidate(d, b);
        } else if self.hits[d][b] > 0 {
            let i = hit_from + q[hit_from..].iter().position(|r| r.row == row).expect("hit count says a hit is queued");
            self.set_column_candidate(d, b, row, i, miss_from);
        } else if self.holds_activated(b) {
            self.clear_lane(b);
        } else {
            let p = &self.slab[q[0].slot as usize];
            let (key, t) = (self.lane_key(false, p.age), self.timing.bank_pre[b].max(p.ready_at));
            self.set_lane(b, K_PRE, key, t, 0);
        }
    }

    /// Bank `b`'s candidate with its row closed: the oldest request's ACT.
    #[inline(always)]
    fn set_act_candidate(&mut self, d: usize, b: usize) {
        let p = &self.slab[self.queues[d][b][0].slot as usize];
        let (key, t) = (self.lane_key(false, p.age), self.timing.bank_act[b].max(p.ready_at));
        self.set_lane(b, K_ACT, key, t, 0);
    }

    /// Bank `b`'s candidate with `row` open and its oldest hit at `i`: that hit's column
    /// command, or, if the order may close the row under its hits and an older non-hit waits
    /// (searched from `miss_from`), that request's PRE (`ChannelController::oldest_candidate`).
    /// An activated request is its bank's oldest hit (its ACT served the bank's oldest request).
    #[inline(always)]
    fn set_column_candidate(&mut self, d: usize, b: usize, row: u32, i: usize, miss_from: usize) {
        let q = &self.queues[d][b];
        let hsa = self.hits_since_act[b];
        let p = &self.slab[q[i].slot as usize];
        let activated = self.holds_activated_in(d, b);
        debug_assert!(!activated || self.activated_slot[b] == q[i].slot, "bank {b}'s activated request is its oldest hit");
        let key = if activated { p.age } else { self.lane_key(self.order.hit_counts_as_hit(hsa), p.age) };
        let t = self.timing.bank_col[b].max(p.ready_at);
        let col = if d == WRITES { K_WR } else { K_RD };
        let close = q.len() as u32 > self.hits[d][b] && self.order.may_close_row_with_hits(hsa) && !self.holds_activated(b);
        if close {
            let j = miss_from + q[miss_from..].iter().position(|r| r.row != row).expect("a non-hit is queued");
            if j < i {
                let p = &self.slab[q[j].slot as usize];
                let (key, t) = (self.lane_key(false, p.age), self.timing.bank_pre[b].max(p.ready_at));
                self.set_lane(b, K_PRE, key, t, j);
                return;
            }
        }
        self.set_lane(b, col, key, t, i);
    }

    #[cold]
    #[inline(never)]
    fn rebuild_all(&mut self) {
        for b in 0..self.banks {
            self.rebuild_bank(b, 0, 0);
        }
    }

    /// Earliest cycle bank `b`'s candidate can issue (`NEVER`: none, or its rank waits for
    /// refresh and it is not activated): `CandidateSet::bank_earliest`.
    #[inline(always)]
    fn bank_earliest(&self, b: usize) -> Cycle {
        // A rank waiting for refresh offers only its activated request.
        let t = if self.refresh.count > 0 && self.lanes.is_gated(b) { NEVER_LANE } else { self.lanes.ready(b) };
        if t == NEVER_LANE {
            return NEVER;
        }
        self.absolute(t).max(self.timing.bus)
    }

    // --- Requests ------------------------------------------------------------------------

    /// `Controller::enqueue`, at the level and shape chosen at construction.
    fn enqueue_outlined(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) {
        // The shape as a type here too (`shape.rs`), and the instruction-set level: two
        // predictable dispatches per call.
        crate::with_shape!(self.shape, S => match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_settings` keeps `isa` to levels this CPU runs.
            VectorIsa::V3 => unsafe { isa_entries::enqueue_v3::<S>(self, now, id, addr, dram, is_write, origin) },
            _ => self.enqueue_inlined::<S>(now, id, addr, dram, is_write, origin),
        })
    }

    /// `enqueue`'s body, inlined into the closed loop's entries (`Shaped`).
    #[inline(always)]
    pub(crate) fn enqueue_inlined<S: Shape>(
        &mut self,
        now: Cycle,
        id: u64,
        _addr: u64,
        dram: &DramAddress,
        is_write: bool,
        origin: Origin,
    ) {
        debug_assert!(self.can_accept(is_write));
        self.keep_base_near(now);
        if self.next_age >= self.age_limit {
            self.renumber_ages();
        }
        self.integrate_queues(now);
        let b = dram.rank as usize * self.banks_per_rank + self.org.flat_bank(dram.bank_group, dram.bank) as usize;
        let p = Pending {
            id,
            age: self.next_age,
            arrival: now,
            ready_at: now + self.frontend_latency,
            source: origin.source,
            process: origin.process,
            column: dram.column,
            outcome: None,
            cause: RowCause::Hit,
        };
        self.next_age += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = p;
                s
            }
            None => {
                self.slab.push(p);
                (self.slab.len() - 1) as u32
            }
        };
        self.pending[b] += 1;
        self.idle_open &= !(1u64 << b);
        let d = is_write as usize;
        let is_hit = self.open_row[b] == dram.row;
        let q_len = self.queues[d][b].len() as u32;
        let changes_candidates = if is_hit { self.hits[d][b] == 0 } else { q_len == self.hits[d][b] };
        if is_hit {
            self.hits[d][b] += 1;
        }
        self.queues[d][b].push(Queued { row: dram.row, slot });
        self.len[d] += 1;
        self.waiting[d] += 1;
        self.note_lengths();
        self.idle_next = self.idle_next.min(now + 1);
        if self.write_mode_should_switch(now) {
            self.sched_next = self.sched_next.min(now + 1);
        }
        if changes_candidates && d == self.write_mode as usize {
            self.rebuild_bank(b, 0, 0);
            let t = self.bank_earliest(b).max(now + 1);
            self.sched_next = self.sched_next.min(t);
        }
        let wake = if self.idle_close_after.is_some() { self.idle_next } else { NEVER };
        let wake = wake.min(self.idle_drain_due());
        self.next_work = self.next_work.min(self.sched_next.min(wake).max(now + 1));
    }

    /// Give the queued requests ages 0, 1, ... in their arrival order, and the next one the
    /// next age, so ages stay below `age_limit` (once per 2^22 requests): lane keys order as
    /// the general controller's 64-bit ones for any run length. Then every lane's key again.
    #[cold]
    #[inline(never)]
    fn renumber_ages(&mut self) {
        let mut queued: Vec<(u32, u32)> =
            self.queues.iter().flat_map(|q| q.0.iter().flatten()).map(|r| (self.slab[r.slot as usize].age, r.slot)).collect();
        queued.sort_unstable();
        for (age, &(_, slot)) in queued.iter().enumerate() {
            self.slab[slot as usize].age = age as u32;
        }
        self.next_age = queued.len() as u32;
        self.rebuild_all();
    }

    #[inline]
    fn integrate_queues(&mut self, now: Cycle) {
        let dt = now.saturating_sub(self.last_update) as u128;
        if dt > 0 {
            self.stats.read_queue_integral += dt * self.len[READS] as u128;
            self.stats.write_queue_integral += dt * self.len[WRITES] as u128;
            self.last_update = now;
        }
    }

    // --- The tick ------------------------------------------------------------------------

    /// `Controller::tick` (`ChannelController::tick`, step for step), at the level and shape
    /// chosen at construction.
    fn tick_outlined(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        crate::with_shape!(self.shape, S => match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_settings` keeps `isa` to levels this CPU runs.
            VectorIsa::V3 => unsafe { isa_entries::tick_v3::<S>(self, now, completed) },
            _ => self.tick_inlined::<S>(now, completed),
        })
    }

    /// `tick`'s body, inlined into the closed loop's entries (`Shaped`).
    #[inline(always)]
    pub(crate) fn tick_inlined<S: Shape>(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        self.keep_base_near(now);
        if self.next_completion <= now {
            self.retire(now, completed);
        }
        let mut next = NEVER;
        if self.refresh.next_due <= now {
            self.mark_refreshes_due(now);
        }
        let mut issued = false;
        if self.refresh.count > 0 {
            let (did, t) = self.try_refresh(now);
            issued = did;
            next = next.min(t);
        }
        if self.write_mode_should_switch(now) {
            self.switch_direction(now);
        }
        if !issued && now >= self.sched_next {
            let (did, t) = self.schedule::<S>(now);
            issued = did;
            self.sched_next = t;
        }
        next = next.min(self.sched_next.max(now + 1));
        if self.idle_close_after.is_some() {
            if issued {
                self.idle_next = now + 1;
            } else if now >= self.idle_next {
                let (_, t) = self.close_idle_rows(now);
                self.idle_next = t;
            }
            next = next.min(self.idle_next);
        }
        next = next.min(self.idle_drain_due().max(now + 1));
        next = next.min(self.refresh.next_event(now));
        debug_assert!(next > now);
        self.next_work = next;
    }

    #[cold]
    #[inline(never)]
    fn mark_refreshes_due(&mut self, now: Cycle) {
        let (pending, bpr, lanes) = (&self.pending, self.banks_per_rank, &mut self.lanes);
        let busy = |r: usize| pending.0[r * bpr..(r + 1) * bpr].iter().any(|&n| n > 0);
        let (channel, ranks) = (self.refresh.holds_channel(), self.org.ranks as usize);
        self.refresh.mark_due(now, busy, |r| {
            if channel {
                (0..ranks).for_each(|o| lanes.gate_rank(o, true));
            } else {
                lanes.gate_rank(r, true);
            }
        });
    }

    #[cold]
    #[inline(never)]
    fn switch_direction(&mut self, now: Cycle) {
        self.write_mode = !self.write_mode;
        self.written = 0;
        self.note_lengths();
        self.stats.write_mode_switches += 1;
        self.sched_next = now;
        // The direction left behind may hold activated requests: search them.
        self.activated_due = if self.activated_mask[!self.write_mode as usize] != 0 { now } else { NEVER };
        self.rebuild_all();
    }

    #[inline(always)]
    fn retire(&mut self, now: Cycle, mut completed: impl FnMut(Completion)) {
        let [reads, writes] = &mut self.in_flight;
        loop {
            let r = reads.front().filter(|c| c.done <= now);
            let w = writes.front().filter(|c| c.done <= now);
            let c = match (r, w) {
                (Some(r), Some(w)) if (w.done, w.id) < (r.done, r.id) => writes.pop_front(),
                (Some(_), _) => reads.pop_front(),
                (None, Some(_)) => writes.pop_front(),
                (None, None) => break,
            };
            let c = c.expect("front exists");
            if !c.is_write {
                self.stats.read_latency.record(c.done - c.arrival);
            }
            completed(c);
        }
        let first = |q: &VecDeque<Completion>| q.front().map_or(NEVER, |c| c.done);
        self.next_completion = first(reads).min(first(writes));
    }

    /// Recompute `drain_maybe` (after a queue length or the mode changes).
    #[inline(always)]
    fn note_lengths(&mut self) {
        self.drain_maybe = self.drain.may_switch(self.write_mode, self.waiting(READS), self.waiting(WRITES));
    }

    #[inline(always)]
    fn write_mode_should_switch(&self, now: Cycle) -> bool {
        self.drain_maybe
            && self
                .drain
                .should_switch(self.write_mode, self.waiting(READS), self.waiting(WRITES), self.written, now, || self.idle_drain_due())
    }

    #[inline(always)]
    fn idle_drain_due(&self) -> Cycle {
        if !self.drain_maybe {
            return NEVER;
        }
        let oldest = || {
            let first = |(b, q): (usize, &Vec<Queued>)| {
                let held = if self.holds_activated_in(WRITES, b) { self.activated_slot[b] } else { u32::MAX };
                q.iter().find(|r| r.slot != held).map(|r| self.slab[r.slot as usize].arrival)
            };
            self.queues[WRITES].0[..self.banks].iter().enumerate().filter_map(first).min()
        };
        self.drain.idle_drain_due(self.write_mode, self.waiting(READS), self.waiting(WRITES), oldest)
    }

    /// Refresh the lowest pending rank: PREA if any of its banks is open, else REF.
    #[cold]
    #[inline(never)]
    fn try_refresh(&mut self, now: Cycle) -> (bool, Cycle) {
        let mut next = NEVER;
        for r in 0..self.org.ranks as usize {
            if !self.refresh.pending[r] {
                continue;
            }
            let (cmd, t) =
                if self.open_banks[r] > 0 { (Command::Prea, self.timing.rank_prea[r]) } else { (Command::Ref, self.timing.rank_ref[r]) };
            let t = t.max(self.timing.bus);
            if cmd == Command::Prea && self.protect && (self.activated_mask[READS] | self.activated_mask[WRITES]) & self.rank_banks(r) != 0
            {
                next = next.min(t.max(now + 1));
                continue;
            }
            if t <= now {
                self.issue_rank_command(now, cmd, r);
                if cmd == Command::Ref {
                    self.sched_next = self.sched_next.min(now + 1);
                    self.idle_next = self.idle_next.min(now + 1);
                    self.refresh.refreshed(r, now);
                    if !self.refresh.holds_channel() {
                        self.lanes.gate_rank(r, false);
                    } else if self.refresh.count == 0 {
                        (0..self.org.ranks as usize).for_each(|o| self.lanes.gate_rank(o, false));
                    }
                }
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }

    /// `Controller::skip_idle` (`ChannelController`'s, step for step).
    fn skip_idle(&mut self, now: Cycle, until: Cycle) {
        let quiet = self.sched_next == NEVER && (self.idle_close_after.is_none() || self.idle_next == NEVER);
        if !quiet || self.log.is_some() || self.refresh.count > 0 || !self.is_idle() || self.open_banks.iter().any(|&n| n > 0) {
            return;
        }
        let timing = &self.timing;
        let ready = |r: u32| timing.rank_ref[r as usize].max(timing.bus);
        let skipped = refresh::skip_idle(self.refresh.manager.as_mut(), self.org.ranks, self.c.refresh, ready, until);
        for (r, n) in skipped.into_iter().enumerate() {
            self.stats.rank_commands[r][Command::Ref.index()] += n;
        }
        self.refresh.next_due = self.refresh.manager.next_due();
        self.next_work = self.refresh.next_due.max(now + 1);
    }

    /// Rank `r`'s banks as a bit mask.
    fn rank_banks(&self, r: usize) -> u64 {
        let bpr = self.banks_per_rank;
        let all = if bpr >= 64 { u64::MAX } else { (1u64 << bpr) - 1 };
        all << (r * bpr)
    }

    fn issue_rank_command(&mut self, now: Cycle, cmd: Command, r: usize) {
        let first = r * self.banks_per_rank;
        let g = r * self.org.bank_groups as usize;
        let (col, base) = (self.col_kind(), self.base);
        self.timing.issue(&mut self.lanes, base, col, cmd, now, r, g, first, 0);
        if cmd == Command::Prea {
            for b in first..first + self.banks_per_rank {
                if self.open_row[b] != NO_ROW {
                    self.owners.closed_by_controller(b);
                    self.close_bank(b);
                    self.rebuild_bank(b, 0, 0);
                }
            }
            if self.open_banks[r] > 0 {
                self.stats.rank_closed(r, now);
            }
            self.open_banks[r] = 0;
        }
        self.stats.rank_commands[r][cmd.index()] += 1;
        self.log_command(now, cmd, first, 0, 0);
    }

    #[inline(always)]
    fn col_kind(&self) -> i32 {
        if self.write_mode {
            K_WR
        } else {
            K_RD
        }
    }

    #[inline]
    fn close_bank(&mut self, b: usize) {
        self.open_row[b] = NO_ROW;
        self.hits[READS][b] = 0;
        self.hits[WRITES][b] = 0;
        self.idle_open &= !(1u64 << b);
    }

    /// Issue the ready candidate with the smallest key and return (issued, a lower bound on the
    /// next cycle anything can issue), as `ChannelController::schedule` computes both.
    /// Activated requests go first: the active direction's are keyed first in the lanes, the
    /// other direction's (left from before a switch) are searched, and the older ready one wins.
    #[inline(always)]
    fn schedule<S: Shape>(&mut self, now: Cycle) -> (bool, Cycle) {
        let d = self.write_mode as usize;
        let mut other = None;
        if self.activated_due <= now {
            let (ready, t) = self.oldest_ready_activated(now, 1 - d);
            self.activated_due = t;
            if let Some((_, b)) = ready {
                if self.len[d] == 0 {
                    return self.issue_other_activated::<S>(now, d, b);
                }
                other = ready;
            }
        }
        if self.len[d] == 0 {
            return (false, self.activated_due);
        }
        let blocked = self.refresh.count > 0;
        let now_off = self.offset(now);
        let best = self.lanes.best_ready::<S>(now_off, blocked);
        if let Some((age, b)) = other {
            if best.is_none_or(|l| self.lanes.key(l) >= age) {
                return self.issue_other_activated::<S>(now, d, b);
            }
            // An older one of the served direction goes first; this one stays ready.
            self.activated_due = now + 1;
        }
        let Some(l) = best else {
            let next = if blocked { self.blocked_scan_bound(now_off) } else { self.lanes.min::<S>() };
            return (false, self.absolute(next).min(self.activated_due));
        };
        // Lane `l` is bank `l`'s.
        let b = l;
        let index = self.lane_index[l] as usize;
        // One dispatch on the candidate's kind; each path issues with its command known and
        // rebuilds the bank's candidates searching from where they can be (`step_bank`).
        let kind = self.lanes.kind(l);
        if kind == K_ACT {
            // An ACT serves the oldest request, which is now the oldest hit.
            self.issue_act::<S>(now, d, b, index);
            let row = self.open_row[b];
            self.set_column_candidate(d, b, row, 0, 1);
        } else if kind == K_PRE {
            // The row is closed and the PRE's request still queued: its ACT is next.
            self.issue_pre(now, d, b, index);
            self.set_act_candidate(d, b);
        } else {
            self.issue_column::<S>(now, d, b, index, kind == K_WR);
            self.rebuild_bank(b, index, 0);
        }
        self.after_issue::<S>(now)
    }

    /// Issue the column command of bank `b`'s activated request of the direction the
    /// controller does not serve (`d` is the one it serves): `ChannelController::issue_other_activated`.
    #[cold]
    #[inline(never)]
    fn issue_other_activated<S: Shape>(&mut self, now: Cycle, d: usize, b: usize) -> (bool, Cycle) {
        let (da, slot) = (1 - d, self.activated_slot[b]);
        let index = self.queues[da][b].iter().position(|q| q.slot == slot).expect("an activated request is queued");
        self.issue_column::<S>(now, da, b, index, da == WRITES);
        // The lanes hold direction `d`, where the bank's hits start at 0.
        self.rebuild_bank(b, 0, 0);
        self.after_issue::<S>(now)
    }

    /// After an issue: (true, the next cycle anything can issue), as `ChannelController::after_issue`.
    #[inline(always)]
    fn after_issue<S: Shape>(&mut self, now: Cycle) -> (bool, Cycle) {
        if self.write_mode_should_switch(now) {
            return (true, now + 1);
        }
        let blocked = self.refresh.count > 0;
        let t = if blocked { self.lanes.min_gated::<S>() } else { self.lanes.min::<S>() };
        let t = self.absolute(t).max(self.timing.bus).min(self.activated_due);
        debug_assert!(t > now);
        (true, t)
    }

    /// With ranks waiting for refresh and nothing ready: the lower bound `CandidateSet::scan`
    /// returns, which counts a waiting rank's candidates unless their class (command kind and
    /// bank group) has a member ready now.
    #[cold]
    #[inline(never)]
    fn blocked_scan_bound(&self, now: i32) -> i32 {
        let (n, lanes) = (self.lanes.lane_count(), &self.lanes);
        let class_ready =
            |l: usize| (0..n).any(|m| lanes.kind(m) == lanes.kind(l) && lanes.group(m) == lanes.group(l) && lanes.ready(m) <= now);
        let mut next = NEVER_LANE;
        for l in 0..n {
            let t = lanes.ready(l);
            if t > now && t < next && !(lanes.is_gated(l) && class_ready(l)) {
                next = t;
            }
        }
        next
    }

    /// The queued request `index` of bank `b` in direction `d`: its row and slab slot, its
    /// column, and its row outcome (the first command issued for it decides it, and its cause).
    #[inline(always)]
    fn chosen(&mut self, d: usize, b: usize, index: usize, first: RowOutcome) -> (u32, u32, u32, RowOutcome) {
        let Queued { row, slot } = self.queues[d][b][index];
        let p = &mut self.slab[slot as usize];
        if p.outcome.is_none() {
            p.outcome = Some(first);
            p.cause = self.owners.cause(b, first, p.process);
        }
        (row, slot, p.column, p.outcome.unwrap_or(first))
    }

    /// ACT for request `index` of bank `b`'s queue in direction `d` (the three `issue_*` are
    /// `ChannelController::issue_for_request` per command). The caller rebuilds bank `b`'s lanes.
    #[inline(always)]
    fn issue_act<S: Shape>(&mut self, now: Cycle, d: usize, b: usize, index: usize) {
        let (row, slot, column, _) = self.chosen(d, b, index, RowOutcome::Miss);
        self.owners.activated(b, self.slab[slot as usize].process);
        let r = self.bank_rank[b] as usize;
        let g = self.group_of(b);
        let base = self.base;
        self.timing.act::<S>(&mut self.lanes, base, now, r, g, b);
        self.stats.banks[b].commands[Command::Act.index()] += 1;
        self.open_row[b] = row;
        self.act_cycle[b] = now;
        self.last_use[b] = now;
        self.hits_since_act[b] = 0;
        self.open_banks[r] += 1;
        if self.open_banks[r] == 1 {
            self.stats.rank_opened(r, now);
        }
        for dir in [READS, WRITES] {
            self.hits[dir][b] = self.queues[dir][b].iter().filter(|q| q.row == row).count() as u32;
        }
        if self.protect {
            self.activated_slot[b] = self.queues[d][b][index].slot;
            self.activated_mask[d] |= 1u64 << b;
            self.waiting[d] -= 1;
            self.note_lengths();
        }
        self.log_command(now, Command::Act, b, row, column);
    }

    /// PRE for request `index` of bank `b`'s queue in direction `d`.
    #[inline(always)]
    fn issue_pre(&mut self, now: Cycle, d: usize, b: usize, index: usize) {
        let (row, slot, column, _) = self.chosen(d, b, index, RowOutcome::Conflict);
        self.owners.precharged_for(b, self.slab[slot as usize].process);
        let r = self.bank_rank[b] as usize;
        self.timing.pre(now, r, b);
        self.stats.banks[b].commands[Command::Pre.index()] += 1;
        self.close_bank(b);
        self.open_banks[r] -= 1;
        if self.open_banks[r] == 0 {
            self.stats.rank_closed(r, now);
        }
        self.log_command(now, Command::Pre, b, row, column);
    }

    /// RD or WR (RDA / WRA where the row policy says so) for request `index` of bank `b`'s
    /// queue in direction `d`: the request leaves its queue and its transfer starts.
    #[inline(always)]
    fn issue_column<S: Shape>(&mut self, now: Cycle, d: usize, b: usize, index: usize, is_write: bool) {
        // Auto-precharge would close a row held for another request.
        let held = || self.holds_activated(b) && self.activated_slot[b] != self.queues[d][b][index].slot;
        // An RDA before a write's recovery is over would cut it short: an RD leaves the row
        // for an explicit PRE (the read itself is not delayed).
        let recovering = !is_write && now < self.timing.bank_rda[b];
        let auto = self.auto_precharge[(self.hits[d][b] > 1) as usize] && !held() && !recovering;
        let cmd = match (is_write, auto) {
            (false, false) => Command::Rd,
            (false, true) => Command::Rda,
            (true, false) => Command::Wr,
            (true, true) => Command::Wra,
        };
        let (row, slot, column, outcome) = self.chosen(d, b, index, RowOutcome::Hit);
        let r = self.bank_rank[b] as usize;
        let g = self.group_of(b);
        let (col, base) = (self.col_kind(), self.base);
        let auto_act = auto.then_some(self.act_cycle[b]);
        if is_write {
            self.timing.wr::<S>(&mut self.lanes, base, col, now, r, g, b, auto_act);
        } else {
            self.timing.rd::<S>(&mut self.lanes, base, col, now, r, g, b, auto_act);
        }
        self.stats.banks[b].commands[cmd.index()] += 1;
        self.last_use[b] = now;
        self.hits_since_act[b] += 1;
        self.pending[b] -= 1;
        let counters = &mut self.stats.banks[b];
        match outcome {
            RowOutcome::Hit => counters.row_hits += 1,
            RowOutcome::Miss => counters.row_misses += 1,
            RowOutcome::Conflict => counters.row_conflicts += 1,
        }
        counters.row_causes.record(self.slab[slot as usize].cause);
        self.integrate_queues(now);
        self.written += is_write as usize;
        self.queues[d][b].remove(index);
        self.hits[d][b] -= 1;
        self.len[d] -= 1;
        if self.holds_activated_in(d, b) && self.activated_slot[b] == slot {
            self.activated_mask[d] &= !(1u64 << b);
        } else {
            self.waiting[d] -= 1;
        }
        self.note_lengths();
        self.free.push(slot);
        if auto {
            let at = self.c.implicit_precharge(self.act_cycle[b], now, is_write);
            self.stats.rank_auto_precharge(r, at);
            self.owners.closed_by_controller(b);
            self.close_bank(b);
            self.open_banks[r] -= 1;
            if self.open_banks[r] == 0 {
                self.stats.rank_closed(r, now);
            }
        } else if self.pending[b] == 0 {
            self.idle_open |= 1u64 << b;
        }
        let done = now + if is_write { self.c.write_data_end } else { self.c.read_data_end };
        if is_write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        self.stats.busy_data_cycles += self.c.burst;
        let p = &self.slab[slot as usize];
        let met_refresh = self.refresh.met(b, p.arrival, now);
        self.stats.refresh_met[d] += met_refresh as u64;
        self.in_flight[d].push_back(Completion {
            id: p.id,
            source: p.source,
            process: p.process,
            is_write,
            arrival: p.arrival,
            done,
            outcome,
            cause: p.cause,
            met_refresh,
        });
        self.next_completion = self.next_completion.min(done);
        self.log_command(now, cmd, b, row, column);
    }

    #[inline(always)]
    fn log_command(&mut self, now: Cycle, command: Command, b: usize, row: u32, column: u32) {
        if self.log.is_some() {
            self.push_log(now, command, b, row, column);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_log(&mut self, now: Cycle, command: Command, b: usize, row: u32, column: u32) {
        let per_rank = self.banks_per_rank as u32;
        let (flat, bpg) = (b as u32, self.org.banks_per_group);
        let within = flat % per_rank;
        let addr = DramAddress { channel: self.channel, rank: flat / per_rank, bank_group: within / bpg, bank: within % bpg, row, column };
        if let Some(log) = self.log.as_mut() {
            log.push(CommandRecord { cycle: now, command, addr });
        }
    }

    /// Row policy: close rows nobody has wanted for the policy's idle time
    /// (`ChannelController::close_idle_rows`), looking only at open banks with nothing queued.
    #[cold]
    #[inline(never)]
    fn close_idle_rows(&mut self, now: Cycle) -> (bool, Cycle) {
        let idle = self.idle_close_after.unwrap_or(NEVER);
        let mut next = NEVER;
        let mut m = self.idle_open;
        while m != 0 {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            let r = b / self.banks_per_rank;
            if self.refresh.pending[r] {
                continue;
            }
            let g = self.group_of(b);
            let ready = self.timing.shared(K_PRE, g).max(self.timing.bank_pre[b]).max(self.timing.bus);
            let t = ready.max(self.last_use[b].saturating_add(idle));
            if t <= now {
                let (col, base) = (self.col_kind(), self.base);
                self.timing.issue(&mut self.lanes, base, col, Command::Pre, now, r, g, b, self.act_cycle[b]);
                self.owners.closed_by_controller(b);
                self.close_bank(b);
                self.open_banks[r] -= 1;
                if self.open_banks[r] == 0 {
                    self.stats.rank_closed(r, now);
                }
                self.stats.banks[b].commands[Command::Pre.index()] += 1;
                self.log_command(now, Command::Pre, b, 0, 0);
                self.rebuild_bank(b, 0, 0);
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }
}

impl Controller for LaneController {
    fn implementation(&self) -> Implementation {
        Implementation::Lanes
    }

    #[inline]
    fn can_accept(&self, is_write: bool) -> bool {
        LaneController::can_accept(self, is_write)
    }

    fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) {
        self.enqueue_outlined(now, id, addr, dram, is_write, origin)
    }

    fn tick(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        self.tick_outlined(now, completed)
    }

    #[inline]
    fn next_event(&self) -> Cycle {
        self.next_work.min(self.next_completion)
    }

    fn skip_idle(&mut self, now: Cycle, until: Cycle) {
        LaneController::skip_idle(self, now, until)
    }

    #[inline]
    fn next_work(&self) -> Cycle {
        self.next_work
    }

    #[inline]
    fn next_completion(&self) -> Cycle {
        self.next_completion
    }

    fn is_idle(&self) -> bool {
        self.len == [0, 0] && self.in_flight.iter().all(|f| f.is_empty())
    }

    fn queued(&self) -> usize {
        self.len[READS] + self.len[WRITES]
    }

    fn finish(&mut self, now: Cycle) {
        self.integrate_queues(now);
        self.stats.last_cycle = now;
    }

    fn record_commands(&mut self, on: bool) {
        self.log = if on { Some(Vec::new()) } else { None };
    }

    fn drain_log_into(&mut self, out: &mut Vec<CommandRecord>) {
        if let Some(log) = self.log.as_mut() {
            out.append(log);
        }
    }

    fn stats(&self) -> &ChannelStats {
        &self.stats
    }

    fn scheduler_name(&self) -> &'static str {
        self.scheduler.name()
    }

    fn scheduler_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.scheduler.source_counters()
    }
}

/// A lane controller with its shape `S` a type (`shape.rs`): its `tick` and `enqueue` are the
/// inlined bodies compiled for `S`, for the closed loop's per-shape, per-level entries
/// (`dram_sim/routing.rs`), where the outlined ones would dispatch on shape and level per call.
#[repr(transparent)]
pub(crate) struct Shaped<S: Shape> {
    c: LaneController,
    shape: PhantomData<fn() -> S>,
}

impl<S: Shape> Shaped<S> {
    /// `controllers` as `Shaped<S>`; each must have the shape `S` stands for (`with_shape!`).
    pub fn all(controllers: &mut [LaneController]) -> &mut [Shaped<S>] {
        // SAFETY: `Shaped<S>` is `repr(transparent)` over `LaneController` (its other field is
        // a zero-sized `PhantomData`), so the two slices have the same layout.
        unsafe { &mut *(controllers as *mut [LaneController] as *mut [Shaped<S>]) }
    }
}

impl<S: Shape> Controller for Shaped<S> {
    fn implementation(&self) -> Implementation {
        Implementation::Lanes
    }

    #[inline(always)]
    fn can_accept(&self, is_write: bool) -> bool {
        self.c.can_accept(is_write)
    }

    #[inline(always)]
    fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) {
        self.c.enqueue_inlined::<S>(now, id, addr, dram, is_write, origin)
    }

    #[inline(always)]
    fn tick(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        self.c.tick_inlined::<S>(now, completed)
    }

    #[inline(always)]
    fn next_event(&self) -> Cycle {
        self.c.next_event()
    }

    fn skip_idle(&mut self, now: Cycle, until: Cycle) {
        self.c.skip_idle(now, until)
    }

    #[inline(always)]
    fn next_work(&self) -> Cycle {
        self.c.next_work
    }

    #[inline(always)]
    fn next_completion(&self) -> Cycle {
        self.c.next_completion
    }

    fn is_idle(&self) -> bool {
        self.c.is_idle()
    }

    fn queued(&self) -> usize {
        self.c.queued()
    }

    fn finish(&mut self, now: Cycle) {
        self.c.finish(now)
    }

    fn record_commands(&mut self, on: bool) {
        self.c.record_commands(on)
    }

    #[inline(always)]
    fn drain_log_into(&mut self, out: &mut Vec<CommandRecord>) {
        self.c.drain_log_into(out)
    }

    fn stats(&self) -> &ChannelStats {
        self.c.stats()
    }

    fn scheduler_name(&self) -> &'static str {
        self.c.scheduler_name()
    }

    fn scheduler_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.c.scheduler_counters()
    }
}

/// `tick` and `enqueue` compiled for x86-64-v3 (`vector_isa.rs`): their bodies are
/// `#[inline(always)]`, so each entry compiles all of it for that level. x86-64-v2 runs the
/// baseline here (its gain is smaller and every level compiled costs build time). The closed
/// loop on lane controllers (`dram_sim/routing.rs`) inlines the same bodies into its own per-level entries.
#[cfg(target_arch = "x86_64")]
mod isa_entries {
    use super::*;
    use crate::vector_isa::{v3_features, with_features};

    v3_features!(with_features! {
        #[inline(never)]
        pub(super) unsafe fn tick_v3<S: Shape>(c: &mut LaneController, now: Cycle, completed: impl FnMut(Completion)) {
            c.tick_inlined::<S>(now, completed)
        }

        #[inline(never)]
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn enqueue_v3<S: Shape>(
            c: &mut LaneController,
            now: Cycle,
            id: u64,
            addr: u64,
            dram: &DramAddress,
            is_write: bool,
            origin: Origin,
        ) {
            c.enqueue_inlined::<S>(now, id, addr, dram, is_write, origin)
        }
    });
}
