//! A lean, monomorphic DRAM controller written for exactly one configuration: the DRAM bench's
//! random workload (one DDR4 channel, one or two ranks (`Ceiling<R>`) of 4 bank groups x 4 banks, FR-FCFS, open rows,
//! all-bank refresh, the preset's read queue and front-end latency, a closed loop of N requests
//! in flight). It exists to measure the "speed of light" of that workload (bench/README.md),
//! not to be used for anything else.
//!
//! **Reads and writes** (the bench's random and mix workloads): a write queue beside the read
//! queue, WR timing (tWTR_S/L, read-to-write turnaround, tWR before PRE) and the production
//! write drain (`write_mode_should_switch`, `idle_drain_due`: watermarks, idle minimum and
//! timeout), checked at the first cycle after any change, before that cycle's command, as the
//! production tick does; only the active direction's candidates are in the lanes (a switch
//! rebuilds them). **Two ranks**: 32 lanes, per-rank tRRD/tFAW/PREA/REF tables, rank-to-rank
//! turnarounds (`rd_to_rd_rank` etc.), all-bank refresh staggered by tREFI / 2 per rank with
//! only the waiting rank's lanes gated off (`try_refresh`: the lowest rank first). `Ceiling::new`
//! refuses any other configuration. **FCFS** (one rank, `Ceiling<1, true>`): keys by age
//! alone, and since FCFS may close a row under its hits a bank's one candidate is its oldest
//! request's command: an older non-hit's PRE before the oldest hit. **Closed rows** (`row_policy = "closed"`, a run-time
//! flag): the last queued hit of its direction issues RDA / WRA (auto-precharge timing as
//! `Constraints::auto_precharge_ready`), and a row left open with nothing queued for its bank
//! is closed when nothing else issues (`close_idle_rows`; under FR-FCFS no test reaches it,
//! since the last hit always auto-precharges, but it keeps the rules the production ones).
//!
//! It must produce the production controller's command stream record for record
//! (`controller/channel_controller.rs` + `candidates.rs` + `channel_timing.rs`, driven by
//! `dram_sim::simulate`); the binary and its test compare the two and run the independent
//! checker over this one. The semantics it reproduces, cycle by cycle:
//! - at each cycle, first a refresh that has fallen due (all-bank, `refresh/all_bank.rs`) blocks
//!   its rank: PREA when a bank is open, then REF, each as soon as it is legal; nothing else
//!   issues to that rank meanwhile;
//! - otherwise the ready candidate with the smallest FR-FCFS key issues (`hit_first_key`: row
//!   hits first, then by arrival order). A bank has one candidate: its oldest hit's RD if its
//!   open row has hits, else PRE (open row, no hits) or ACT (closed) for its oldest request;
//!   a candidate is ready once every constraint of `Constraints::derive` allows it and its
//!   request has left the front end (`ready_at = arrival + frontend_latency`);
//! - after the commands of a cycle, the driver lets requests in, in order, while the next one's
//!   queue has room and fewer than N are in flight; a read completes at RD + CL + tBL (its
//!   latency goes to a histogram, as the production `read_latency`), a write at WR + CWL + tBL.
//!
//! How it stays lean: one cached candidate per bank, kept as 16-lane arrays of 32-bit values
//! (its full ready time, its key, its kind; SSE2, module `lanes`); a command raises the ready
//! time of every lane whose candidate it constrains (masked maximum per kind and bank group)
//! instead of a scan recomputing them; choosing the next command is a minimum over the 16 ready
//! times and a minimum over the keys ready then; time jumps straight to that cycle. Per-bank
//! queues are small arrays. No ticks, no virtual calls; the production controller's counters
//! only when asked for (`run_feed::<_, true, _>`, to measure what they cost). Cycles and keys
//! are 31-bit, so lanes compare as signed integers: runs beyond 2^31 - 2^20 cycles (about 1.8 s
//! of DDR4-2400) or 2^30 requests are refused.

use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::constraints::Constraints;
use memtint_engine::dram::{Command, CommandRecord, DramAddress};
use memtint_engine::mapping::AddressMapping;
use memtint_engine::stats::LatencyHistogram;
use memtint_engine::trace::{DramRequest, TraceSource};
use memtint_engine::Cycle;

/// Banks and bank groups per rank.
pub const BANKS: usize = 16;
const GROUPS: usize = 4;
const BANKS_PER_GROUP: usize = 4;
/// One or two ranks: up to 32 banks in 8 groups.
pub const MAX_RANKS: usize = 2;
pub const MAX_BANKS: usize = BANKS * MAX_RANKS;
const MAX_GROUPS: usize = GROUPS * MAX_RANKS;
/// Capacity of one bank's queue: the whole read queue may target one bank.
pub const MAX_QUEUE: usize = 64;

/// A cycle, 31 bits used (see the module header), so lanes compare as signed 32-bit integers.
type T = u32;
const NEVER: T = i32::MAX as T;
/// Runs stop with an error before cycles get this large (room for the largest constraint).
const LAST_CYCLE: T = NEVER - (1 << 20);
/// Keys, like cycles, below 2^31; no candidate has the largest.
const NO_KEY: u32 = i32::MAX as u32;

// Candidate kinds, which are also the rows of `Timing::shared` (`kind * GROUPS + group`).
const K_RD: u32 = 0;
const K_ACT: u32 = 1;
const K_PRE: u32 = 2;
const K_WR: u32 = 3;
/// No candidate: its row of `shared` is `NEVER`.
const K_NONE: u32 = 4;
/// Rows of `Timing::shared` (a power of two, so an index masks instead of a bounds check).
const SHARED_ROWS: usize = 8;

const NO_ROW: u32 = u32::MAX;
/// `hit_first_key`'s non-hit bit (`scheduler/mod.rs`), here in a 31-bit key.
const NOT_HIT: u32 = 1 << 30;

/// Why a configuration or workload is outside what this controller models.
pub fn unsupported(what: &str) -> String {
    format!("the ceiling controller models only the DRAM bench's random workload configuration: {what}")
}

/// One queued request (its direction is its queue's).
#[derive(Clone, Copy, Default)]
struct Entry {
    seq: u32,
    arrival: T,
    row: u32,
    column: u32,
}

#[derive(Clone, Copy)]
struct BankQueue {
    len: usize,
    reqs: [Entry; MAX_QUEUE],
}

/// The derived constraints this controller needs, as 32-bit cycles.
#[derive(Clone, Copy)]
struct C {
    act_to_act: T,
    act_to_col: T,
    act_to_pre: T,
    pre_to_act: T,
    rd_to_pre: T,
    act_to_act_l: T,
    act_to_act_s: T,
    rd_to_rd_l: T,
    rd_to_rd_s: T,
    faw: T,
    refresh: T,
    read_data_end: T,
    burst: T,
    wr_to_pre: T,
    wr_to_wr_l: T,
    wr_to_wr_s: T,
    wr_to_rd_l: T,
    wr_to_rd_s: T,
    rd_to_wr: T,
    write_data_end: T,
    rd_to_rd_rank: T,
    rd_to_wr_rank: T,
    wr_to_wr_rank: T,
    wr_to_rd_rank: T,
}

impl C {
    fn new(c: &Constraints) -> Result<Self, String> {
        let t =
            |name: &str, v: u64| T::try_from(v).ok().filter(|&v| v < 1 << 20).ok_or_else(|| unsupported(&format!("{name} of {v} cycles")));
        Ok(C {
            act_to_act: t("tRC", c.act_to_act)?,
            act_to_col: t("tRCD", c.act_to_col)?,
            act_to_pre: t("tRAS", c.act_to_pre)?,
            pre_to_act: t("tRP", c.pre_to_act)?,
            rd_to_pre: t("tRTP", c.rd_to_pre)?,
            act_to_act_l: t("tRRD_L", c.act_to_act_l)?,
            act_to_act_s: t("tRRD_S", c.act_to_act_s)?,
            rd_to_rd_l: t("tCCD_L", c.rd_to_rd_l)?,
            rd_to_rd_s: t("tCCD_S", c.rd_to_rd_s)?,
            faw: t("tFAW", c.faw)?,
            refresh: t("tRFC", c.refresh)?,
            read_data_end: t("CL + tBL", c.read_data_end)?,
            burst: t("tBL", c.burst)?,
            wr_to_pre: t("CWL + tBL + tWR", c.wr_to_pre)?,
            wr_to_wr_l: t("tCCD_L (writes)", c.wr_to_wr_l)?,
            wr_to_wr_s: t("tCCD_S (writes)", c.wr_to_wr_s)?,
            wr_to_rd_l: t("CWL + tBL + tWTR_L", c.wr_to_rd_l)?,
            wr_to_rd_s: t("CWL + tBL + tWTR_S", c.wr_to_rd_s)?,
            rd_to_wr: t("read-to-write turnaround", c.rd_to_wr)?,
            write_data_end: t("CWL + tBL", c.write_data_end)?,
            rd_to_rd_rank: t("tBL + tRTRS", c.rd_to_rd_rank)?,
            rd_to_wr_rank: t("CL + tBL + tRTRS - CWL", c.rd_to_wr_rank)?,
            wr_to_wr_rank: t("tBL + tRTRS (writes)", c.wr_to_wr_rank)?,
            wr_to_rd_rank: t("CWL + tBL + tRTRS - CL", c.wr_to_rd_rank)?,
        })
    }
}

#[inline(always)]
fn raise(slot: &mut T, t: T) {
    if *slot < t {
        *slot = t;
    }
}

/// Earliest-issue tables (the constraints of `ChannelTiming` for the commands an open-row run
/// uses: ACT, PRE, RD, WR, PREA, REF) for `R` ranks and, per bank, its candidate in
/// `16 * R` lanes.
struct State<const R: usize> {
    // Per bank: the bank-level part of each command's ready time.
    bank_act: [T; MAX_BANKS],
    bank_rd: [T; MAX_BANKS],
    bank_pre: [T; MAX_BANKS],
    /// Per (kind, group): the bank-group, rank and tFAW parts of a command's ready time.
    shared: [T; SHARED_ROWS * MAX_GROUPS],
    rank_prea: [T; MAX_RANKS],
    rank_ref: [T; MAX_RANKS],
    /// Per rank: ACT + tFAW of its last four ACTs, as a ring.
    faw: [[T; 4]; MAX_RANKS],
    faw_pos: [usize; MAX_RANKS],
    /// One command per cycle.
    bus: T,
    // Lanes, per bank: its candidate's full ready time (without the bus), key and kind. Lanes
    // 4g..4g+3 are bank group g's banks (group g of rank g / 4), one SSE2 vector.
    ready: lanes::Lanes,
    key: lanes::Lanes,
    kind: lanes::Lanes,
    /// Two ranks: `NEVER` in the lanes of a rank waiting for refresh, else 0.
    gate: lanes::Lanes,
    /// Per bank: bank-level ready time and queue index of its candidate.
    cand_t: [T; MAX_BANKS],
    cand_index: [usize; MAX_BANKS],
}

/// Per group `j` of `R` ranks: `same_group` for group `g`, `same_rank` for the other groups of
/// its rank, `other_rank` for the other rank's (0: no constraint).
#[inline(always)]
fn per_group<const R: usize>(g: usize, same_group: T, same_rank: T, other_rank: T) -> [T; MAX_GROUPS] {
    let mut v = [0; MAX_GROUPS];
    for (j, x) in v.iter_mut().enumerate().take(GROUPS * R) {
        *x = if j == g {
            same_group
        } else if j / GROUPS == g / GROUPS {
            same_rank
        } else {
            other_rank
        };
    }
    v
}

impl<const R: usize> State<R> {
    fn new() -> Self {
        let mut shared = [0; SHARED_ROWS * MAX_GROUPS];
        shared[K_NONE as usize * MAX_GROUPS..].fill(NEVER);
        State {
            bank_act: [0; MAX_BANKS],
            bank_rd: [0; MAX_BANKS],
            bank_pre: [0; MAX_BANKS],
            shared,
            rank_prea: [0; MAX_RANKS],
            rank_ref: [0; MAX_RANKS],
            faw: [[0; 4]; MAX_RANKS],
            faw_pos: [0; MAX_RANKS],
            bus: 0,
            ready: lanes::Lanes([NEVER; MAX_BANKS]),
            key: lanes::Lanes([NO_KEY; MAX_BANKS]),
            kind: lanes::Lanes([K_NONE; MAX_BANKS]),
            gate: lanes::Lanes([0; MAX_BANKS]),
            cand_t: [NEVER; MAX_BANKS],
            cand_index: [0; MAX_BANKS],
        }
    }

    /// Raise kind `k`'s shared entries to `v[group]` only: `k` is the inactive direction's
    /// column kind, which no lane holds (lanes hold the active direction's candidates).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // one index into two arrays of different layouts
    fn raise_shared(&mut self, k: u32, v: &[T; MAX_GROUPS]) {
        let row = k as usize * MAX_GROUPS;
        for i in 0..GROUPS * R {
            raise(&mut self.shared[row + i], v[i]);
        }
    }

    /// Raise kind `k`'s shared entries to `v[group]`, and with them the ready lanes of that kind.
    #[inline(always)]
    fn raise_kind(&mut self, k: u32, v: &[T; MAX_GROUPS]) {
        self.raise_shared(k, v);
        lanes::raise_kind::<R>(&mut self.ready, &self.kind, k, v);
    }

    #[inline(always)]
    fn act(&mut self, c: &C, now: T, b: usize, g: usize) {
        let r = g / GROUPS;
        raise(&mut self.bank_act[b], now + c.act_to_act);
        raise(&mut self.bank_rd[b], now + c.act_to_col);
        raise(&mut self.bank_pre[b], now + c.act_to_pre);
        raise(&mut self.rank_prea[r], now + c.act_to_pre);
        let pos = self.faw_pos[r];
        self.faw[r][pos] = now + c.faw;
        self.faw_pos[r] = (pos + 1) & 3;
        // tRRD_S and the window's new oldest ACT bind every group of the rank, tRRD_L this
        // one; the other rank not at all.
        let t = (now + c.act_to_act_s).max(self.faw[r][(pos + 1) & 3]);
        self.raise_kind(K_ACT, &per_group::<R>(g, t.max(now + c.act_to_act_l), t, 0));
        self.bus = now + 1;
    }

    #[inline(always)]
    fn pre(&mut self, c: &C, now: T, b: usize) {
        raise(&mut self.bank_act[b], now + c.pre_to_act);
        raise(&mut self.rank_ref[b / BANKS], now + c.pre_to_act);
        self.bus = now + 1;
    }

    #[inline(always)]
    fn rd(&mut self, c: &C, now: T, b: usize, g: usize) {
        let r = g / GROUPS;
        raise(&mut self.bank_pre[b], now + c.rd_to_pre);
        raise(&mut self.rank_prea[r], now + c.rd_to_pre);
        let t = now + c.rd_to_rd_s;
        self.raise_kind(K_RD, &per_group::<R>(g, t.max(now + c.rd_to_rd_l), t, now + c.rd_to_rd_rank));
        let t = now + c.rd_to_wr;
        self.raise_shared(K_WR, &per_group::<R>(g, t, t, now + c.rd_to_wr_rank));
        self.bus = now + 1;
    }

    #[inline(always)]
    fn wr(&mut self, c: &C, now: T, b: usize, g: usize) {
        let r = g / GROUPS;
        raise(&mut self.bank_pre[b], now + c.wr_to_pre);
        raise(&mut self.rank_prea[r], now + c.wr_to_pre);
        let t = now + c.wr_to_wr_s;
        self.raise_kind(K_WR, &per_group::<R>(g, t.max(now + c.wr_to_wr_l), t, now + c.wr_to_wr_rank));
        let t = now + c.wr_to_rd_s;
        self.raise_shared(K_RD, &per_group::<R>(g, t.max(now + c.wr_to_rd_l), t, now + c.wr_to_rd_rank));
        self.bus = now + 1;
    }

    /// Every group of rank `r` to `t`, the other rank's untouched.
    fn rank_wide(r: usize, t: T) -> [T; MAX_GROUPS] {
        per_group::<R>(r * GROUPS, t, t, 0)
    }

    fn prea(&mut self, c: &C, now: T, r: usize) {
        let t = now + c.pre_to_act;
        self.raise_kind(K_ACT, &Self::rank_wide(r, t));
        raise(&mut self.rank_ref[r], t);
        self.bus = now + 1;
    }

    fn refresh(&mut self, c: &C, now: T, r: usize) {
        let t = now + c.refresh;
        self.raise_kind(K_ACT, &Self::rank_wide(r, t));
        self.raise_kind(K_PRE, &Self::rank_wide(r, t));
        raise(&mut self.rank_ref[r], t);
        raise(&mut self.rank_prea[r], t);
        self.bus = now + 1;
    }

    /// Set bank `b`'s candidate (`K_NONE`: none).
    #[inline(always)]
    fn set_candidate(&mut self, b: usize, kind: u32, key: u32, cand_t: T, index: usize) {
        self.kind.0[b] = kind;
        self.key.0[b] = key;
        self.cand_t[b] = cand_t;
        self.cand_index[b] = index;
        self.ready.0[b] = cand_t.max(self.shared[(kind as usize * MAX_GROUPS + b / BANKS_PER_GROUP) & (SHARED_ROWS * MAX_GROUPS - 1)]);
    }

    /// The earliest cycle a candidate of a rank not waiting for refresh can issue and, among
    /// the candidates ready then, the bank with the smallest key (`NEVER`: no candidate).
    /// `blocked`: some rank waits for refresh (one rank: all of them).
    #[inline(always)]
    fn next_command(&self, blocked: bool) -> (T, usize) {
        let gated;
        let ready = if !blocked {
            &self.ready
        } else if R == 1 {
            return (NEVER, 0);
        } else {
            gated = lanes::max::<R>(&self.ready, &self.gate);
            &gated
        };
        let first = lanes::min::<R>(ready);
        if first == NEVER {
            return (NEVER, 0);
        }
        let at = first.max(self.bus);
        (at, lanes::smallest_key_ready_at::<R>(ready, &self.key, at))
    }
}

/// The production controller's bookkeeping besides the latency histogram (`ChannelStats`'
/// counters and the per-bank state its row policies and FR-FCFS-Cap read), kept only by
/// `run::<_, true>`: what it costs is part of the price of generality.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Per bank, per `Command::index()`.
    pub commands: [[u64; Command::COUNT]; MAX_BANKS],
    pub rank_commands: [[u64; Command::COUNT]; MAX_RANKS],
    pub row_hits: [u64; MAX_BANKS],
    pub row_misses: [u64; MAX_BANKS],
    pub row_conflicts: [u64; MAX_BANKS],
    pub reads: u64,
    pub writes: u64,
    pub busy_data_cycles: u64,
    pub read_queue_integral: u128,
    pub write_queue_integral: u128,
    pub write_mode_switches: u64,
    last_update: T,
    // Per bank: last ACT or column command, column commands since ACT, queued requests.
    last_use: [T; MAX_BANKS],
    hits_since_act: [u32; MAX_BANKS],
    pending: [u32; MAX_BANKS],
}

impl Counters {
    #[inline(always)]
    fn integrate(&mut self, now: T, len: [usize; 2]) {
        let dt = now.saturating_sub(self.last_update) as u128;
        if dt > 0 {
            self.read_queue_integral += dt * len[0] as u128;
            self.write_queue_integral += dt * len[1] as u128;
            self.last_update = now;
        }
    }
}

// A request's row outcome, recorded at its first command in two spare bits of its column
// (columns are below 2^16) when counting: 0 none yet, then `RowOutcome`'s order.
const OUTCOME_SHIFT: u32 = 30;
const COLUMN_MASK: u32 = (1 << OUTCOME_SHIFT) - 1;
const OUT_HIT: u32 = 1;
const OUT_MISS: u32 = 2;
const OUT_CONFLICT: u32 = 3;

/// Where requests come from: a slice (the bench's way, everything up front) or, to measure
/// the production driver's way, a `dyn TraceSource` read one request at a time.
pub trait Feed {
    /// The next request's address and whether it is a write, without taking it (`None`: no more).
    fn peek(&mut self) -> Result<Option<(u64, bool)>, String>;
    /// Take the request `peek` returned.
    fn take(&mut self);
}

pub struct SliceFeed<'a> {
    requests: &'a [DramRequest],
    next: usize,
}

impl<'a> SliceFeed<'a> {
    pub fn new(requests: &'a [DramRequest]) -> Result<Self, String> {
        if requests.len() >= 1 << 30 {
            return Err(unsupported(&format!("at most 2^30 requests, not {}", requests.len())));
        }
        Ok(SliceFeed { requests, next: 0 })
    }
}

impl Feed for SliceFeed<'_> {
    #[inline(always)]
    fn peek(&mut self) -> Result<Option<(u64, bool)>, String> {
        Ok(self.requests.get(self.next).map(|r| (r.addr, r.is_write)))
    }
    #[inline(always)]
    fn take(&mut self) {
        self.next += 1;
    }
}

/// One request of look-ahead, as `dram_sim::simulate` keeps it.
pub struct SourceFeed<'a> {
    source: &'a mut dyn TraceSource,
    pending: Option<(u64, bool)>,
    exhausted: bool,
    taken: u64,
}

impl<'a> SourceFeed<'a> {
    pub fn new(source: &'a mut dyn TraceSource) -> Self {
        SourceFeed { source, pending: None, exhausted: false, taken: 0 }
    }
}

impl Feed for SourceFeed<'_> {
    #[inline(always)]
    fn peek(&mut self) -> Result<Option<(u64, bool)>, String> {
        if self.pending.is_none() && !self.exhausted {
            match self.source.next_request().map_err(|e| e.to_string())? {
                Some(_) if self.taken >= (1 << 30) - 1 => return Err(unsupported("at most 2^30 requests")),
                Some(r) => self.pending = Some((r.addr, r.is_write)),
                None => self.exhausted = true,
            }
        }
        Ok(self.pending)
    }
    #[inline(always)]
    fn take(&mut self) {
        self.pending = None;
        self.taken += 1;
    }
}

/// What a run produced.
pub struct RunResult {
    pub requests: u64,
    /// The cycle the last request completed (the production driver's `dram_cycles`).
    pub cycles: Cycle,
    pub read_latency: LatencyHistogram,
    /// Issued commands (only when logging).
    pub commands: Vec<CommandRecord>,
    /// Only when counting.
    pub counters: Option<Box<Counters>>,
}

/// `cfg` as the lean controller models it: without `protect_activated` (a PRE or PREA may
/// close a row opened for a request that has not had its column command), the production
/// rule before that setting. Its speed is the ceiling of that rule; the production default
/// adds a few activated requests to check per scheduling pass.
pub fn modelled(cfg: &MemoryConfig) -> MemoryConfig {
    let mut cfg = cfg.clone();
    cfg.controller.protect_activated = false;
    cfg
}

/// `Ceiling::run_feed` on `cfg`'s one or two ranks.
pub fn run_feed_on<const LOG: bool, const STATS: bool, F: Feed>(
    cfg: &MemoryConfig,
    feed: &mut F,
    outstanding: usize,
) -> Result<RunResult, String> {
    match cfg.org.ranks {
        1 if cfg.controller.scheduler == "fcfs" => Ceiling::<1, true>::new(cfg)?.run_feed::<LOG, STATS, F>(feed, outstanding),
        1 => Ceiling::<1, false>::new(cfg)?.run_feed::<LOG, STATS, F>(feed, outstanding),
        2 => Ceiling::<2, false>::new(cfg)?.run_feed::<LOG, STATS, F>(feed, outstanding),
        n => Err(unsupported(&format!("1 or 2 ranks, not {n}"))),
    }
}

/// The lean controller for `R` ranks (1 or 2) of one channel, one lane per bank: FR-FCFS, or
/// FCFS (one rank) if `FCFS`.
pub struct Ceiling<const R: usize, const FCFS: bool> {
    c: C,
    mapping: AddressMapping,
    line_mask: u64,
    /// Per direction (0 reads, 1 writes): queue capacity and requests waiting.
    capacity: [usize; 2],
    len: [usize; 2],
    write_high: usize,
    write_low: usize,
    write_idle_min: usize,
    write_idle_timeout: u64,
    write_min_per_switch: usize,
    /// Writes issued since the turn to writes.
    written: usize,
    /// Writes are the active direction (its candidates are in the lanes).
    write_mode: bool,
    write_mode_switches: u64,
    /// Closed row policy (`row_policy/closed.rs`): the last queued hit auto-precharges, a row
    /// open with nothing queued for its bank closes at once. Else open rows.
    closed: bool,
    /// Per bank: its last ACT (auto-precharge timing).
    act_cycle: [T; MAX_BANKS],
    /// Closed rows: bit b set while bank b's row is open with nothing queued for it (so the
    /// idle-close search runs only when there is something to find).
    idle_open: u32,
    frontend_latency: T,
    t_refi: T,
    s: State<R>,
    open_row: [u32; MAX_BANKS],
    open_banks: [u32; MAX_RANKS],
    /// Per direction, per bank.
    queues: Box<[[BankQueue; MAX_BANKS]; 2]>,
    queued: usize,
    next_seq: u32,
}

impl<const R: usize, const FCFS: bool> Ceiling<R, FCFS> {
    /// Refuses (with the reason) any configuration other than the one it is written for.
    pub fn new(cfg: &MemoryConfig) -> Result<Self, String> {
        let (org, ctl) = (&cfg.org, &cfg.controller);
        if org.channels != 1 || org.ranks as usize != R || !(1..=MAX_RANKS).contains(&R) {
            return Err(unsupported(&format!("1 channel x {R} rank(s), not {} x {}", org.channels, org.ranks)));
        }
        if org.bank_groups as usize != GROUPS || org.banks_per_group as usize != BANKS_PER_GROUP {
            return Err(unsupported(&format!(
                "{GROUPS} bank groups x {BANKS_PER_GROUP} banks, not {} x {}",
                org.bank_groups, org.banks_per_group
            )));
        }
        let want_scheduler = if FCFS { "fcfs" } else { "fr-fcfs" };
        if FCFS && R != 1 {
            return Err(unsupported("fcfs with one rank only"));
        }
        for (what, got, want) in [("scheduler", &ctl.scheduler, want_scheduler), ("refresh", &ctl.refresh, "all-bank")] {
            if got != want {
                return Err(unsupported(&format!("{what} {want}, not {got}")));
            }
        }
        let closed = match ctl.row_policy.as_str() {
            "open" => false,
            "closed" => true,
            p => return Err(unsupported(&format!("row policy open or closed, not {p}"))),
        };
        if ctl.read_queue > MAX_QUEUE {
            return Err(unsupported(&format!("a read queue of at most {MAX_QUEUE}, not {}", ctl.read_queue)));
        }
        ctl.validate().map_err(|e| e.to_string())?;
        let w = ctl.writes().map_err(|e| e.to_string())?;
        if w.queue > MAX_QUEUE {
            return Err(unsupported(&format!("a write queue of at most {MAX_QUEUE}, not {}", w.queue)));
        }
        if ctl.protect_activated {
            return Err(unsupported("protect_activated = false (see `modelled`)"));
        }
        // As `ChannelController::new`.
        let (write_high, write_low) = (w.high_count(), w.low_count());
        let small =
            |name: &str, v: u64| T::try_from(v).ok().filter(|&v| v < 1 << 20).ok_or_else(|| unsupported(&format!("{name} of {v} cycles")));
        Ok(Ceiling {
            c: C::new(&Constraints::derive(cfg.device.standard, &cfg.timing))?,
            mapping: cfg.mapping.clone(),
            line_mask: !(org.burst_bytes() - 1),
            capacity: [ctl.read_queue, w.queue],
            len: [0, 0],
            write_high,
            write_low,
            write_idle_min: w.idle_drain_min,
            write_idle_timeout: w.idle_drain_timeout,
            write_min_per_switch: w.min_per_switch,
            written: 0,
            write_mode: false,
            write_mode_switches: 0,
            closed,
            act_cycle: [0; MAX_BANKS],
            idle_open: 0,
            frontend_latency: small("frontend_latency", ctl.frontend_latency)?,
            t_refi: small("tREFI", cfg.timing.tREFI)?,
            s: State::new(),
            open_row: [NO_ROW; MAX_BANKS],
            open_banks: [0; MAX_RANKS],
            queues: Box::new([[BankQueue { len: 0, reqs: [Entry::default(); MAX_QUEUE] }; MAX_BANKS]; 2]),
            queued: 0,
            next_seq: 0,
        })
    }

    /// Bank `b`'s candidate from its queue in the active direction and its state (FR-FCFS,
    /// hits never closed under).
    #[inline(always)]
    fn update_candidate(&mut self, b: usize) {
        if FCFS {
            return self.update_candidate_fcfs(b);
        }
        let d = self.write_mode as usize;
        let q = &self.queues[d][b];
        if q.len == 0 {
            self.s.set_candidate(b, K_NONE, NO_KEY, NEVER, 0);
            return;
        }
        let row = self.open_row[b];
        let (kind, i, key, bank_t) = if row == NO_ROW {
            (K_ACT, 0, NOT_HIT | q.reqs[0].seq, self.s.bank_act[b])
        } else {
            match q.reqs[..q.len].iter().position(|r| r.row == row) {
                // RD and WR have the same bank-level constraint (tRCD after ACT).
                Some(i) => (if d == 1 { K_WR } else { K_RD }, i, q.reqs[i].seq, self.s.bank_rd[b]),
                None => (K_PRE, 0, NOT_HIT | q.reqs[0].seq, self.s.bank_pre[b]),
            }
        };
        let t = bank_t.max(q.reqs[i].arrival + self.frontend_latency);
        self.s.set_candidate(b, kind, key, t, i);
    }

    /// FCFS: bank `b`'s candidate, keyed by age alone (`fcfs.rs`): the command of its oldest
    /// request, a column command if it hits the open row, else PRE or ACT
    /// (`ChannelController::oldest_candidate`).
    #[cold]
    #[inline(never)]
    fn update_candidate_fcfs(&mut self, b: usize) {
        let d = self.write_mode as usize;
        let q = &self.queues[d][b];
        if q.len == 0 {
            self.s.set_candidate(b, K_NONE, NO_KEY, NEVER, 0);
            return;
        }
        let row = self.open_row[b];
        let fe = self.frontend_latency;
        let reqs = &q.reqs[..q.len];
        if row == NO_ROW {
            let t = self.s.bank_act[b].max(reqs[0].arrival + fe);
            self.s.set_candidate(b, K_ACT, reqs[0].seq, t, 0);
            return;
        }
        let (hit, miss) = (reqs.iter().position(|r| r.row == row), reqs.iter().position(|r| r.row != row));
        let (pre_t, rd_t) = (self.s.bank_pre[b], self.s.bank_rd[b]);
        match (hit, miss) {
            (Some(i), Some(j)) if j < i => {
                let t = pre_t.max(reqs[j].arrival + fe);
                self.s.set_candidate(b, K_PRE, reqs[j].seq, t, j);
            }
            (Some(i), _) => {
                let t = rd_t.max(reqs[i].arrival + fe);
                self.s.set_candidate(b, if d == 1 { K_WR } else { K_RD }, reqs[i].seq, t, i);
            }
            (None, _) => {
                let t = pre_t.max(reqs[0].arrival + fe);
                self.s.set_candidate(b, K_PRE, reqs[0].seq, t, 0);
            }
        }
    }

    /// A request enters its direction's queue at `now`.
    #[inline(always)]
    fn enqueue<const STATS: bool>(&mut self, now: T, addr: u64, is_write: bool, k: &mut Counters) {
        let d = self.mapping.decode(addr & self.line_mask);
        let b = (d.rank as usize * BANKS + d.bank_group as usize * BANKS_PER_GROUP + d.bank as usize) & (MAX_BANKS - 1);
        if STATS {
            k.integrate(now, self.len);
            k.pending[b] += 1;
        }
        let dir = is_write as usize;
        let q = &mut self.queues[dir][b];
        q.reqs[q.len] = Entry { seq: self.next_seq, arrival: now, row: d.row, column: d.column };
        q.len += 1;
        self.next_seq += 1;
        self.queued += 1;
        self.len[dir] += 1;
        if self.closed {
            self.idle_open &= !(1 << b);
        }
        // The youngest request changes its bank's candidate only in the active direction, as
        // its first request or as the first hit of a bank whose candidate is a PRE (under FCFS
        // not even then: an older non-hit's PRE stays first).
        if is_write == self.write_mode && (q.len == 1 || (self.s.kind.0[b] == K_PRE && d.row == self.open_row[b])) {
            self.update_candidate(b);
        }
    }

    /// `ChannelController::write_mode_should_switch`: drain writes from the high watermark to
    /// the low one, or when no read waits and enough writes do (or the oldest timed out).
    #[inline(always)]
    fn write_mode_should_switch(&self, now: T) -> bool {
        let (reads, writes) = (self.len[0], self.len[1]);
        if self.write_mode {
            reads > 0 && (writes == 0 || (writes <= self.write_low && self.written >= self.write_min_per_switch))
        } else {
            writes >= self.write_high || (reads == 0 && writes > 0 && (writes >= self.write_idle_min || self.idle_drain_due() <= now))
        }
    }

    /// `ChannelController::idle_drain_due` (`NEVER`: not applicable).
    fn idle_drain_due(&self) -> T {
        let (reads, writes) = (self.len[0], self.len[1]);
        if self.write_mode || reads > 0 || writes == 0 || writes >= self.write_idle_min {
            return NEVER;
        }
        let oldest = self.queues[1].iter().filter(|q| q.len > 0).map(|q| q.reqs[0].arrival).min().unwrap_or(NEVER);
        (oldest as u64).saturating_add(self.write_idle_timeout).min(NEVER as u64) as T
    }

    /// The first cycle after `cur` (the last cycle anything happened) at which the production
    /// tick switches directions, with nothing else changing first (`NEVER`: none). A tick
    /// checks before scheduling, so commands of that cycle already go to the new direction.
    #[inline(always)]
    fn switch_at(&self, cur: T) -> T {
        if self.len[1] == 0 && !self.write_mode {
            return NEVER; // the read-only case, kept cheap
        }
        if self.write_mode_should_switch(cur + 1) {
            cur + 1
        } else {
            self.idle_drain_due()
        }
    }

    /// Switch directions at `at`: the lanes get the other direction's candidates, none of
    /// which issues before `at` (time only moves forward).
    #[cold]
    #[inline(never)]
    fn switch_direction(&mut self, at: T) {
        raise(&mut self.s.bus, at);
        self.write_mode = !self.write_mode;
        self.written = 0;
        self.write_mode_switches += 1;
        for b in 0..BANKS * R {
            self.update_candidate(b);
        }
    }

    #[inline(always)]
    fn log<const LOG: bool>(log: &mut Vec<CommandRecord>, cycle: T, command: Command, b: usize, row: u32, column: u32) {
        if LOG {
            let addr = DramAddress {
                channel: 0,
                rank: (b / BANKS) as u32,
                bank_group: (b % BANKS / BANKS_PER_GROUP) as u32,
                bank: (b % BANKS_PER_GROUP) as u32,
                row,
                column,
            };
            log.push(CommandRecord { cycle: cycle as Cycle, command, addr });
        }
    }

    /// PREA (closing every bank) or REF at `at`. Rare (twice per tREFI): kept out of the loop.
    #[cold]
    #[inline(never)]
    fn issue_refresh(&mut self, at: T, cmd: Command, r: usize) {
        let c = self.c;
        if cmd == Command::Prea {
            self.s.prea(&c, at, r);
            self.open_row[r * BANKS..(r + 1) * BANKS].fill(NO_ROW);
            self.open_banks[r] = 0;
            for b in r * BANKS..(r + 1) * BANKS {
                self.update_candidate(b);
            }
            self.idle_open &= !(((1u64 << BANKS) - 1) << (r * BANKS)) as u32;
        } else {
            self.s.refresh(&c, at, r);
        }
    }

    /// Closed rows: the bank (lowest first) whose open row has nothing queued and can be closed
    /// first, and when (`close_idle_rows` with an idle time of 0); `NEVER`: none. Ranks waiting
    /// for refresh are left to their PREA.
    #[cold]
    #[inline(never)]
    fn idle_close(&self, refresh_pending: &[bool; MAX_RANKS]) -> (T, usize) {
        let (mut t, mut bank) = (NEVER, 0);
        let mut m = self.idle_open;
        while m != 0 {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            if refresh_pending[b / BANKS] {
                continue;
            }
            let tb = self.s.bank_pre[b].max(self.s.shared[K_PRE as usize * MAX_GROUPS + b / BANKS_PER_GROUP]).max(self.s.bus);
            if tb < t {
                (t, bank) = (tb, b);
            }
        }
        (t, bank)
    }

    /// Closed rows: recompute bank `b`'s bit of `idle_open`.
    #[inline(always)]
    fn note_idle(&mut self, b: usize) {
        let idle = self.open_row[b] != NO_ROW && self.queues[0][b].len + self.queues[1][b].len == 0;
        self.idle_open = (self.idle_open & !(1 << b)) | ((idle as u32) << b);
    }

    /// Rank `r` starts or stops waiting for refresh (its lanes gated off or on).
    #[cold]
    #[inline(never)]
    fn gate_rank(&mut self, r: usize, blocked: bool) {
        self.s.gate.0[r * BANKS..(r + 1) * BANKS].fill(if blocked { NEVER } else { 0 });
    }

    /// Run the requests of `feed` closed-loop with `outstanding` in flight from cycle 0, as
    /// `dram_sim::simulate` does. With `LOG`, every command is recorded; with `STATS`, the
    /// production controller's bookkeeping too.
    pub fn run_feed<const LOG: bool, const STATS: bool, F: Feed>(mut self, feed: &mut F, outstanding: usize) -> Result<RunResult, String> {
        if outstanding == 0 {
            return Err("outstanding must be at least 1".into());
        }
        let c = self.c;
        let mut k: Box<Counters> = Box::default();
        let mut log = Vec::new();
        let mut hist = LatencyHistogram::default();
        // Per direction, completion cycles of the served requests not yet retired
        // (`retired..served`), oldest first: a direction has one fixed data latency, so its
        // issue order is its completion order. Rings of a power-of-two size; at most
        // `outstanding` are in flight.
        let ring = outstanding.next_power_of_two();
        let mut done_ring = [vec![0 as T; ring], vec![0 as T; ring]];
        // Requests entered; per direction served (column command issued) and retired
        // (completed, as the driver saw it).
        let mut entered = 0usize;
        let (mut served, mut retired) = ([0usize; 2], [0usize; 2]);
        let mut last_done: T = 0;
        // Per rank: the next refresh due (ranks staggered by tREFI / ranks, as
        // `refresh/all_bank.rs`) and whether it waits for one (its candidates blocked).
        let mut refresh_due = [NEVER; MAX_RANKS];
        for (r, due) in refresh_due.iter_mut().enumerate().take(R) {
            *due = (self.t_refi as u64 * (r as u64 + 1) / R as u64) as T;
        }
        let mut refresh_pending = [false; MAX_RANKS];
        let mut any_pending = false;
        // The last cycle anything happened (a direction switch is checked from the next one).
        let mut cur: T;

        // The cycle the next in-flight request completes (`NEVER`: none).
        macro_rules! next_done {
            () => {{
                let r = if retired[0] < served[0] { done_ring[0][retired[0] & (ring - 1)] } else { NEVER };
                let w = if retired[1] < served[1] { done_ring[1][retired[1] & (ring - 1)] } else { NEVER };
                r.min(w)
            }};
        }
        // Let requests in at `now` while their queue has room and fewer than `outstanding` are
        // in flight (completions at or before `now` retired first, as the production tick does).
        macro_rules! inject {
            ($now:expr) => {{
                let now = $now;
                cur = now;
                while let Some((addr, is_write)) = feed.peek()? {
                    if self.len[is_write as usize] >= self.capacity[is_write as usize] {
                        break;
                    }
                    if entered - retired[0] - retired[1] >= outstanding {
                        for d in 0..2 {
                            while retired[d] < served[d] && done_ring[d][retired[d] & (ring - 1)] <= now {
                                retired[d] += 1;
                            }
                        }
                        if entered - retired[0] - retired[1] >= outstanding {
                            break;
                        }
                    }
                    self.enqueue::<STATS>(now, addr, is_write, &mut k);
                    feed.take();
                    entered += 1;
                }
            }};
        }
        // The next cycle a request can enter without a command issuing first: only when the
        // closed loop is at its limit (a completion frees a place).
        macro_rules! arrival_event {
            () => {
                match feed.peek()? {
                    Some((_, w))
                        if self.len[w as usize] < self.capacity[w as usize] && entered - retired[0] - retired[1] >= outstanding =>
                    {
                        next_done!()
                    }
                    _ => NEVER,
                }
            };
        }

        inject!(0);
        // The run ends with the last completion; nothing after it issues.
        macro_rules! end {
            () => {
                if self.queued == 0 && feed.peek()?.is_none() {
                    last_done
                } else {
                    NEVER
                }
            };
        }
        loop {
            let s = self.switch_at(cur);
            // The refresh command of a waiting rank that can issue first (the lowest rank on a
            // tie, as `try_refresh`), and the next rank to fall due.
            let (mut t_ref, mut r_ref, mut cmd_ref) = (NEVER, 0, Command::Ref);
            let (mut due, mut r_due) = (NEVER, 0);
            for r in 0..R {
                if refresh_pending[r] {
                    let (cmd, ready) =
                        if self.open_banks[r] > 0 { (Command::Prea, self.s.rank_prea[r]) } else { (Command::Ref, self.s.rank_ref[r]) };
                    let t = ready.max(self.s.bus).max(refresh_due[r]);
                    if t < t_ref {
                        (t_ref, r_ref, cmd_ref) = (t, r, cmd);
                    }
                } else if refresh_due[r] < due {
                    (due, r_due) = (refresh_due[r], r);
                }
            }
            let (at, lane) = self.s.next_command(any_pending);
            let a = arrival_event!();
            // In a cycle the production tick marks ranks due, issues a refresh command, else
            // switches directions if due and schedules; the driver then lets requests in.
            if due <= at.min(a).min(t_ref).min(s) {
                if due > end!() {
                    break;
                }
                refresh_pending[r_due] = true;
                any_pending = true;
                if R > 1 {
                    self.gate_rank(r_due, true);
                }
                continue;
            }
            if s <= at.min(a).min(t_ref) {
                self.switch_direction(s);
                cur = s;
                continue;
            }
            if t_ref <= at && t_ref <= a {
                if t_ref > end!() {
                    break;
                }
                self.issue_refresh(t_ref, cmd_ref, r_ref);
                if cmd_ref == Command::Ref {
                    refresh_pending[r_ref] = false;
                    any_pending = refresh_pending.iter().any(|&p| p);
                    refresh_due[r_ref] += self.t_refi;
                    if R > 1 {
                        self.gate_rank(r_ref, false);
                    }
                }
                if STATS {
                    k.rank_commands[r_ref][cmd_ref.index()] += 1;
                }
                Self::log::<LOG>(&mut log, t_ref, cmd_ref, r_ref * BANKS, 0, 0);
                inject!(t_ref);
                continue;
            }
            if self.closed && self.idle_open != 0 {
                // After the scheduler's command (it wins a tie), before the driver's requests.
                let (ti, bi) = self.idle_close(&refresh_pending);
                if ti < at && ti <= a {
                    if ti > end!() {
                        break;
                    }
                    self.s.pre(&c, ti, bi);
                    if STATS {
                        k.commands[bi][Command::Pre.index()] += 1;
                    }
                    self.open_row[bi] = NO_ROW;
                    self.open_banks[bi / BANKS] -= 1;
                    self.idle_open &= !(1 << bi);
                    self.update_candidate(bi);
                    Self::log::<LOG>(&mut log, ti, Command::Pre, bi, 0, 0);
                    inject!(ti);
                    continue;
                }
            }
            if a < at {
                inject!(a);
                continue;
            }
            if at > LAST_CYCLE {
                return Err(if at == NEVER {
                    format!("internal error: stalled with {} requests queued", self.queued)
                } else {
                    unsupported(&format!("runs of at most {LAST_CYCLE} cycles"))
                });
            }
            let b = lane;
            let g = b / BANKS_PER_GROUP;
            let rank = b / BANKS;
            let dir = self.write_mode as usize;
            let i = self.s.cand_index[lane];
            let req = self.queues[dir][b].reqs[i];
            let kind = self.s.kind.0[lane];
            if STATS {
                let first = match kind {
                    K_RD | K_WR => OUT_HIT,
                    K_ACT => OUT_MISS,
                    _ => OUT_CONFLICT,
                };
                let col = &mut self.queues[dir][b].reqs[i].column;
                if *col >> OUTCOME_SHIFT == 0 {
                    *col |= first << OUTCOME_SHIFT;
                }
            }
            let (column, outcome) = (req.column & COLUMN_MASK, self.queues[dir][b].reqs[i].column >> OUTCOME_SHIFT);
            match kind {
                K_RD | K_WR => {
                    let is_write = kind == K_WR;
                    if is_write {
                        self.s.wr(&c, at, b, g);
                        self.written += 1;
                    } else {
                        self.s.rd(&c, at, b, g);
                    }
                    let mut cmd = if is_write { Command::Wr } else { Command::Rd };
                    // Closed rows: the last queued hit (this direction) auto-precharges.
                    if self.closed && self.queues[dir][b].reqs[..self.queues[dir][b].len].iter().filter(|e| e.row == req.row).count() <= 1 {
                        cmd = if is_write { Command::Wra } else { Command::Rda };
                        let start = at + if is_write { c.wr_to_pre } else { c.rd_to_pre };
                        let ap = start.max(self.act_cycle[b] + c.act_to_pre) + c.pre_to_act;
                        raise(&mut self.s.bank_act[b], ap);
                        raise(&mut self.s.rank_ref[rank], ap);
                        self.open_row[b] = NO_ROW;
                        self.open_banks[rank] -= 1;
                    }
                    if STATS {
                        k.commands[b][cmd.index()] += 1;
                        k.last_use[b] = at;
                        k.hits_since_act[b] += 1;
                        k.pending[b] -= 1;
                        match outcome {
                            OUT_HIT => k.row_hits[b] += 1,
                            OUT_MISS => k.row_misses[b] += 1,
                            _ => k.row_conflicts[b] += 1,
                        }
                        k.integrate(at, self.len);
                        if is_write {
                            k.writes += 1;
                        } else {
                            k.reads += 1;
                        }
                        k.busy_data_cycles += c.burst as u64;
                    }
                    let q = &mut self.queues[dir][b];
                    // A few entries: a loop, not a call to memmove.
                    for j in i..q.len - 1 {
                        q.reqs[j] = q.reqs[j + 1];
                    }
                    q.len -= 1;
                    self.queued -= 1;
                    self.len[dir] -= 1;
                    let done = if is_write {
                        at + c.write_data_end
                    } else {
                        let done = at + c.read_data_end;
                        hist.record((done - req.arrival) as u64);
                        done
                    };
                    done_ring[dir][served[dir] & (ring - 1)] = done;
                    served[dir] += 1;
                    last_done = last_done.max(done);
                    Self::log::<LOG>(&mut log, at, cmd, b, req.row, column);
                }
                K_ACT => {
                    self.s.act(&c, at, b, g);
                    if STATS {
                        k.commands[b][Command::Act.index()] += 1;
                        k.last_use[b] = at;
                        k.hits_since_act[b] = 0;
                    }
                    self.open_row[b] = req.row;
                    self.open_banks[rank] += 1;
                    self.act_cycle[b] = at;
                    Self::log::<LOG>(&mut log, at, Command::Act, b, req.row, column);
                }
                _ => {
                    self.s.pre(&c, at, b);
                    if STATS {
                        k.commands[b][Command::Pre.index()] += 1;
                    }
                    self.open_row[b] = NO_ROW;
                    self.open_banks[rank] -= 1;
                    Self::log::<LOG>(&mut log, at, Command::Pre, b, req.row, column);
                }
            }
            if self.closed {
                self.note_idle(b);
            }
            self.update_candidate(b);
            inject!(at);
        }
        if STATS {
            k.integrate(last_done, self.len);
            k.write_mode_switches = self.write_mode_switches;
        }
        let counters = if STATS { Some(k) } else { None };
        let requests = (served[0] + served[1]) as u64;
        Ok(RunResult { requests, cycles: last_done as Cycle, read_latency: hist, commands: log, counters })
    }
}

/// Up to 32 lanes of 31-bit values (one per bank; `R` ranks use the first `16 * R`) and the
/// operations the scheduler needs, in SSE2 (x86-64's baseline) with a scalar fallback elsewhere.
mod lanes {
    use super::{BANKS, BANKS_PER_GROUP, MAX_BANKS, MAX_GROUPS};

    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    pub struct Lanes(pub [u32; MAX_BANKS]);

    #[cfg(target_arch = "x86_64")]
    mod imp {
        use super::{Lanes, MAX_BANKS, MAX_GROUPS};
        use std::arch::x86_64::*;

        #[inline(always)]
        fn get(l: &Lanes, j: usize) -> __m128i {
            debug_assert!(j < MAX_BANKS / 4);
            // SAFETY: `Lanes` is 16-byte aligned and holds eight vectors; `j < 4 * R <= 8`.
            unsafe { _mm_load_si128(l.0.as_ptr().add(4 * j) as *const __m128i) }
        }

        #[inline(always)]
        fn put(l: &mut Lanes, j: usize, v: __m128i) {
            debug_assert!(j < MAX_BANKS / 4);
            // SAFETY: as `get`.
            unsafe { _mm_store_si128(l.0.as_mut_ptr().add(4 * j) as *mut __m128i, v) }
        }

        // Values are below 2^31, so signed comparisons order them correctly.
        #[inline(always)]
        fn min(a: __m128i, b: __m128i) -> __m128i {
            // SAFETY: SSE2 is part of x86-64.
            unsafe {
                let gt = _mm_cmpgt_epi32(a, b);
                _mm_or_si128(_mm_and_si128(gt, b), _mm_andnot_si128(gt, a))
            }
        }

        #[inline(always)]
        fn max(a: __m128i, b: __m128i) -> __m128i {
            // SAFETY: SSE2 is part of x86-64.
            unsafe {
                let gt = _mm_cmpgt_epi32(a, b);
                _mm_or_si128(_mm_and_si128(gt, a), _mm_andnot_si128(gt, b))
            }
        }

        #[inline(always)]
        fn hmin(v: __m128i) -> u32 {
            // SAFETY: SSE2 is part of x86-64.
            unsafe {
                let v = min(v, _mm_shuffle_epi32(v, 0b01_00_11_10));
                let v = min(v, _mm_shuffle_epi32(v, 0b10_11_00_01));
                _mm_cvtsi128_si32(v) as u32
            }
        }

        #[inline(always)]
        pub fn min_lanes<const R: usize>(l: &Lanes) -> u32 {
            let mut m0 = min(get(l, 0), get(l, 1));
            let mut m1 = min(get(l, 2), get(l, 3));
            for j in 1..R {
                m0 = min(m0, min(get(l, 4 * j), get(l, 4 * j + 1)));
                m1 = min(m1, min(get(l, 4 * j + 2), get(l, 4 * j + 3)));
            }
            hmin(min(m0, m1))
        }

        #[inline(always)]
        pub fn max_lanes<const R: usize>(a: &Lanes, b: &Lanes) -> Lanes {
            let mut out = Lanes([0; MAX_BANKS]);
            for j in 0..4 * R {
                put(&mut out, j, max(get(a, j), get(b, j)));
            }
            out
        }

        #[inline(always)]
        pub fn smallest_key_ready_at<const R: usize>(ready: &Lanes, key: &Lanes, at: u32) -> usize {
            // SAFETY: SSE2 is part of x86-64.
            unsafe {
                let at = _mm_set1_epi32(at as i32);
                let top = _mm_set1_epi32(i32::MAX);
                // Lanes not ready at `at` read as the largest key.
                let k = |j: usize| _mm_or_si128(get(key, j), _mm_and_si128(_mm_cmpgt_epi32(get(ready, j), at), top));
                let mut ks = [_mm_setzero_si128(); MAX_BANKS / 4];
                for (j, v) in ks.iter_mut().enumerate().take(4 * R) {
                    *v = k(j);
                }
                let mut m0 = min(ks[0], ks[1]);
                let mut m1 = min(ks[2], ks[3]);
                for j in 1..R {
                    m0 = min(m0, min(ks[4 * j], ks[4 * j + 1]));
                    m1 = min(m1, min(ks[4 * j + 2], ks[4 * j + 3]));
                }
                let best = _mm_set1_epi32(hmin(min(m0, m1)) as i32);
                let hit = |v: __m128i| _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, best))) as u32;
                let mut mask = 0u32;
                for (j, &v) in ks.iter().enumerate().take(4 * R) {
                    mask |= hit(v) << (4 * j);
                }
                mask.trailing_zeros() as usize
            }
        }

        #[inline(always)]
        #[allow(clippy::needless_range_loop)] // `j` picks a register of the lanes and a group of `v`
        pub fn raise_kind<const R: usize>(ready: &mut Lanes, kind: &Lanes, k: u32, v: &[u32; MAX_GROUPS]) {
            // SAFETY: SSE2 is part of x86-64.
            unsafe {
                let kv = _mm_set1_epi32(k as i32);
                for j in 0..4 * R {
                    let x = _mm_and_si128(_mm_cmpeq_epi32(get(kind, j), kv), _mm_set1_epi32(v[j] as i32));
                    let r = get(ready, j);
                    put(ready, j, max(r, x));
                }
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    use scalar as imp;

    /// The reference (and the fallback off x86-64); tests compare the SSE2 code with it.
    #[cfg(any(test, not(target_arch = "x86_64")))]
    pub(super) mod scalar {
        use super::{Lanes, BANKS, BANKS_PER_GROUP, MAX_BANKS, MAX_GROUPS};

        pub fn min_lanes<const R: usize>(l: &Lanes) -> u32 {
            l.0[..BANKS * R].iter().copied().min().unwrap_or(u32::MAX)
        }

        pub fn max_lanes<const R: usize>(a: &Lanes, b: &Lanes) -> Lanes {
            let mut out = Lanes([0; MAX_BANKS]);
            for i in 0..BANKS * R {
                out.0[i] = a.0[i].max(b.0[i]);
            }
            out
        }

        pub fn smallest_key_ready_at<const R: usize>(ready: &Lanes, key: &Lanes, at: u32) -> usize {
            (0..BANKS * R).filter(|&b| ready.0[b] <= at).min_by_key(|&b| key.0[b]).unwrap_or(0)
        }

        pub fn raise_kind<const R: usize>(ready: &mut Lanes, kind: &Lanes, k: u32, v: &[u32; MAX_GROUPS]) {
            for b in 0..BANKS * R {
                if kind.0[b] == k {
                    ready.0[b] = ready.0[b].max(v[b / BANKS_PER_GROUP]);
                }
            }
        }
    }

    const _: () = assert!(BANKS == 16 && BANKS_PER_GROUP == 4 && MAX_BANKS == 32, "lanes 4g..4g+3 are bank group g");

    /// The smallest of the first `16 * R` lanes.
    #[inline(always)]
    pub fn min<const R: usize>(l: &Lanes) -> u32 {
        imp::min_lanes::<R>(l)
    }

    /// Lane by lane maximum of the first `16 * R` lanes (the rest 0).
    #[inline(always)]
    pub fn max<const R: usize>(a: &Lanes, b: &Lanes) -> Lanes {
        imp::max_lanes::<R>(a, b)
    }

    /// Among lanes with `ready <= at`, the one with the smallest key (keys are unique).
    #[inline(always)]
    pub fn smallest_key_ready_at<const R: usize>(ready: &Lanes, key: &Lanes, at: u32) -> usize {
        imp::smallest_key_ready_at::<R>(ready, key, at)
    }

    /// `ready = max(ready, v[group])` in lanes whose `kind` is `k`.
    #[inline(always)]
    pub fn raise_kind<const R: usize>(ready: &mut Lanes, kind: &Lanes, k: u32, v: &[u32; MAX_GROUPS]) {
        imp::raise_kind::<R>(ready, kind, k, v)
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::lanes::{self, scalar, Lanes};
    use super::{K_NONE, MAX_BANKS, MAX_GROUPS, NEVER, NO_KEY};

    /// Lanes with a few equal values and `NEVER`s, from a small deterministic generator.
    fn random_lanes(seed: &mut u64, spread: u32) -> [Lanes; 3] {
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (*seed >> 33) as u32
        };
        let (mut ready, mut key, mut kind) = ([0; MAX_BANKS], [0; MAX_BANKS], [0; MAX_BANKS]);
        for b in 0..MAX_BANKS {
            kind[b] = next() % (K_NONE + 1);
            ready[b] = if kind[b] == K_NONE { NEVER } else { next() % spread };
            key[b] = if kind[b] == K_NONE { NO_KEY } else { ((b as u32) << 20) | (next() % (1 << 20)) };
        }
        [Lanes(ready), Lanes(key), Lanes(kind)]
    }

    fn check<const R: usize>(case: u32, seed: &mut u64) {
        let [mut ready, key, kind] = random_lanes(seed, if case.is_multiple_of(2) { 8 } else { 1 << 30 });
        assert_eq!(lanes::min::<R>(&ready), scalar::min_lanes::<R>(&ready), "case {case}");
        let gate = random_lanes(seed, 3)[0];
        assert_eq!(lanes::max::<R>(&ready, &gate).0, scalar::max_lanes::<R>(&ready, &gate).0, "case {case}");
        let at = lanes::min::<R>(&ready).saturating_add(case % 5);
        if lanes::min::<R>(&ready) != NEVER {
            assert_eq!(
                lanes::smallest_key_ready_at::<R>(&ready, &key, at),
                scalar::smallest_key_ready_at::<R>(&ready, &key, at),
                "case {case}"
            );
        }
        let mut reference = ready;
        let mut v = [0; MAX_GROUPS];
        for (j, x) in v.iter_mut().enumerate() {
            *x = (case * 7 + j as u32 * 13) % 16;
        }
        lanes::raise_kind::<R>(&mut ready, &kind, case % 5, &v);
        scalar::raise_kind::<R>(&mut reference, &kind, case % 5, &v);
        assert_eq!(ready.0, reference.0, "case {case}");
    }

    #[test]
    fn sse2_lane_operations_equal_the_scalar_reference() {
        let mut seed = 1;
        for case in 0..20_000 {
            check::<1>(case, &mut seed);
            check::<2>(case, &mut seed);
        }
    }
}
