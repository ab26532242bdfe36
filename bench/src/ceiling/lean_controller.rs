//! A lean, monomorphic DRAM controller written for exactly one configuration: the DRAM bench's
//! random workload (one DDR4 channel, one rank of 4 bank groups x 4 banks, FR-FCFS, open rows,
//! all-bank refresh, the preset's read queue and front-end latency, a closed loop of N requests
//! in flight). It exists to measure the "speed of light" of that workload (bench/README.md,
//! stop 13), not to be used for anything else.
//!
//! **Reads only**: the random workload has no writes, so there is no write queue, no write
//! drain and no WR timing; `Ceiling::new` refuses any other configuration and `run` any write.
//!
//! It must produce the production controller's command stream record for record
//! (`controller/channel_controller.rs` + `candidates.rs` + `timing_state.rs`, driven by
//! `dram_sim::simulate`); the binary and its test compare the two and run the independent
//! checker over this one. The semantics it reproduces, cycle by cycle:
//! - at each cycle, first a refresh that has fallen due (all-bank, `refresh/all_bank.rs`) blocks
//!   the rank: PREA when a bank is open, then REF, each as soon as it is legal; nothing else
//!   issues meanwhile;
//! - otherwise the ready candidate with the smallest FR-FCFS key issues (`hit_first_key`: row
//!   hits first, then by arrival order). A bank has one candidate: its oldest hit's RD if its
//!   open row has hits, else PRE (open row, no hits) or ACT (closed) for its oldest request;
//!   a candidate is ready once every constraint of `Constraints::derive` allows it and its
//!   request has left the front end (`ready_at = arrival + frontend_latency`);
//! - after the commands of a cycle, the driver lets requests in while the queue has room and
//!   fewer than N are in flight; a request completes at RD + CL + tBL (its latency goes to a
//!   histogram, as the production `read_latency`).
//!
//! How it stays lean: plain fixed arrays for 16 banks (per-bank queues as small arrays, one
//! cached candidate per bank with its bank-level ready time and key), one dense table of the
//! group- and rank-level ready times per (command kind, bank group) kept by raising entries as
//! commands issue, and time jumps straight to the next cycle something can issue (a scan of
//! 16 banks), so there are no ticks, no virtual calls, no statistics beyond the histogram.

use memtint_engine::config::MemoryConfig;
use memtint_engine::dram::constraints::Constraints;
use memtint_engine::dram::{Command, CommandRecord, DramAddress};
use memtint_engine::mapping::AddressMapping;
use memtint_engine::stats::LatencyHistogram;
use memtint_engine::trace::DramRequest;
use memtint_engine::{Cycle, NEVER};

pub const BANKS: usize = 16;
const GROUPS: usize = 4;
const BANKS_PER_GROUP: usize = 4;
/// Capacity of one bank's queue: the whole read queue may target one bank.
pub const MAX_QUEUE: usize = 64;

// Candidate kinds, which are also the rows of `Timing::shared` (`kind * GROUPS + group`).
const K_RD: usize = 0;
const K_ACT: usize = 1;
const K_PRE: usize = 2;
/// No candidate: its row of `shared` is `NEVER`.
const K_NONE: usize = 3;

const NO_ROW: u32 = u32::MAX;
/// `hit_first_key`'s non-hit bit (`scheduler/mod.rs`).
const NOT_HIT: u64 = 1 << 62;

/// Why a configuration or workload is outside what this controller models.
pub fn unsupported(what: &str) -> String {
    format!("the ceiling controller models only the DRAM bench's random workload configuration: {what}")
}

/// One queued read.
#[derive(Clone, Copy, Default)]
struct Entry {
    seq: u64,
    arrival: Cycle,
    row: u32,
    column: u32,
}

#[derive(Clone, Copy)]
struct BankQueue {
    len: usize,
    reqs: [Entry; MAX_QUEUE],
}

/// Earliest-issue tables, raised as commands issue (the constraints of `ChannelTiming`, for
/// the commands a read-only open-row run uses: ACT, PRE, RD, PREA, REF).
struct Timing {
    bank_act: [Cycle; BANKS],
    bank_rd: [Cycle; BANKS],
    bank_pre: [Cycle; BANKS],
    /// Per (kind, group): the bank-group, rank and tFAW parts of a command's ready time.
    shared: [Cycle; 4 * GROUPS],
    rank_prea: Cycle,
    rank_ref: Cycle,
    /// ACT + tFAW of the rank's last four ACTs, as a ring.
    faw: [Cycle; 4],
    faw_pos: usize,
    /// One command per cycle.
    bus: Cycle,
}

#[inline(always)]
fn raise(slot: &mut Cycle, t: Cycle) {
    if *slot < t {
        *slot = t;
    }
}

impl Timing {
    fn new() -> Self {
        let mut shared = [0; 4 * GROUPS];
        shared[K_NONE * GROUPS..].fill(NEVER);
        Timing {
            bank_act: [0; BANKS],
            bank_rd: [0; BANKS],
            bank_pre: [0; BANKS],
            shared,
            rank_prea: 0,
            rank_ref: 0,
            faw: [0; 4],
            faw_pos: 0,
            bus: 0,
        }
    }

    #[inline(always)]
    fn raise_kind(&mut self, kind: usize, t: Cycle) {
        for s in &mut self.shared[kind * GROUPS..(kind + 1) * GROUPS] {
            raise(s, t);
        }
    }

    #[inline(always)]
    fn act(&mut self, c: &Constraints, now: Cycle, b: usize, g: usize) {
        raise(&mut self.bank_act[b], now + c.act_to_act);
        raise(&mut self.bank_rd[b], now + c.act_to_col);
        raise(&mut self.bank_pre[b], now + c.act_to_pre);
        raise(&mut self.rank_prea, now + c.act_to_pre);
        raise(&mut self.shared[K_ACT * GROUPS + g], now + c.act_to_act_l);
        self.faw[self.faw_pos] = now + c.faw;
        self.faw_pos = (self.faw_pos + 1) & 3;
        // tRRD_S and the window's new oldest ACT bind every group of the rank.
        let t = (now + c.act_to_act_s).max(self.faw[self.faw_pos]);
        self.raise_kind(K_ACT, t);
        self.bus = now + 1;
    }

    #[inline(always)]
    fn pre(&mut self, c: &Constraints, now: Cycle, b: usize) {
        raise(&mut self.bank_act[b], now + c.pre_to_act);
        raise(&mut self.rank_ref, now + c.pre_to_act);
        self.bus = now + 1;
    }

    #[inline(always)]
    fn rd(&mut self, c: &Constraints, now: Cycle, b: usize, g: usize) {
        raise(&mut self.bank_pre[b], now + c.rd_to_pre);
        raise(&mut self.rank_prea, now + c.rd_to_pre);
        raise(&mut self.shared[K_RD * GROUPS + g], now + c.rd_to_rd_l);
        self.raise_kind(K_RD, now + c.rd_to_rd_s);
        self.bus = now + 1;
    }

    fn prea(&mut self, c: &Constraints, now: Cycle) {
        self.raise_kind(K_ACT, now + c.pre_to_act);
        raise(&mut self.rank_ref, now + c.pre_to_act);
        self.bus = now + 1;
    }

    fn refresh(&mut self, c: &Constraints, now: Cycle) {
        let t = now + c.refresh;
        self.raise_kind(K_ACT, t);
        self.raise_kind(K_PRE, t);
        raise(&mut self.rank_ref, t);
        raise(&mut self.rank_prea, t);
        self.bus = now + 1;
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
}

pub struct Ceiling {
    c: Constraints,
    mapping: AddressMapping,
    line_mask: u64,
    read_queue: usize,
    frontend_latency: u64,
    t_refi: u64,
    t: Timing,
    // Per bank: the cached candidate (kind, key, bank-level ready time, queue index).
    cand_kind: [usize; BANKS],
    cand_key: [u64; BANKS],
    cand_t: [Cycle; BANKS],
    cand_index: [usize; BANKS],
    open_row: [u32; BANKS],
    open_banks: u32,
    queues: Box<[BankQueue; BANKS]>,
    queued: usize,
    next_seq: u64,
}

impl Ceiling {
    /// Refuses (with the reason) any configuration other than the one it is written for.
    pub fn new(cfg: &MemoryConfig) -> Result<Self, String> {
        let (org, ctl) = (&cfg.org, &cfg.controller);
        if org.channels != 1 || org.ranks != 1 {
            return Err(unsupported(&format!("1 channel x 1 rank, not {} x {}", org.channels, org.ranks)));
        }
        if org.bank_groups as usize != GROUPS || org.banks_per_group as usize != BANKS_PER_GROUP {
            return Err(unsupported(&format!(
                "{GROUPS} bank groups x {BANKS_PER_GROUP} banks, not {} x {}",
                org.bank_groups, org.banks_per_group
            )));
        }
        for (what, got, want) in [
            ("scheduler", &ctl.scheduler, "fr-fcfs"),
            ("row policy", &ctl.row_policy, "open"),
            ("refresh", &ctl.refresh, "all-bank"),
        ] {
            if got != want {
                return Err(unsupported(&format!("{what} {want}, not {got}")));
            }
        }
        if ctl.read_queue > MAX_QUEUE {
            return Err(unsupported(&format!("a read queue of at most {MAX_QUEUE}, not {}", ctl.read_queue)));
        }
        Ok(Ceiling {
            c: Constraints::derive(&cfg.timing),
            mapping: cfg.mapping.clone(),
            line_mask: !(org.burst_bytes() - 1),
            read_queue: ctl.read_queue,
            frontend_latency: ctl.frontend_latency,
            t_refi: cfg.timing.tREFI,
            t: Timing::new(),
            cand_kind: [K_NONE; BANKS],
            cand_key: [u64::MAX; BANKS],
            cand_t: [NEVER; BANKS],
            cand_index: [0; BANKS],
            open_row: [NO_ROW; BANKS],
            open_banks: 0,
            queues: Box::new([BankQueue { len: 0, reqs: [Entry::default(); MAX_QUEUE] }; BANKS]),
            queued: 0,
            next_seq: 0,
        })
    }

    /// Bank `b`'s candidate from its queue and state (FR-FCFS, hits never closed under).
    #[inline(always)]
    fn update_candidate(&mut self, b: usize) {
        let q = &self.queues[b];
        if q.len == 0 {
            self.cand_kind[b] = K_NONE;
            self.cand_t[b] = NEVER;
            self.cand_key[b] = u64::MAX;
            return;
        }
        let row = self.open_row[b];
        let (kind, i, key, bank_t) = if row == NO_ROW {
            (K_ACT, 0, NOT_HIT | q.reqs[0].seq, self.t.bank_act[b])
        } else {
            match q.reqs[..q.len].iter().position(|r| r.row == row) {
                Some(i) => (K_RD, i, q.reqs[i].seq, self.t.bank_rd[b]),
                None => (K_PRE, 0, NOT_HIT | q.reqs[0].seq, self.t.bank_pre[b]),
            }
        };
        self.cand_kind[b] = kind;
        self.cand_index[b] = i;
        self.cand_key[b] = key;
        self.cand_t[b] = bank_t.max(q.reqs[i].arrival + self.frontend_latency);
    }

    /// A request enters the read queue at `now`.
    #[inline(always)]
    fn enqueue(&mut self, now: Cycle, addr: u64) {
        let d = self.mapping.decode(addr & self.line_mask);
        let b = d.bank_group as usize * BANKS_PER_GROUP + d.bank as usize;
        let q = &mut self.queues[b];
        q.reqs[q.len] = Entry { seq: self.next_seq, arrival: now, row: d.row, column: d.column };
        q.len += 1;
        self.next_seq += 1;
        self.queued += 1;
        // The youngest request changes its bank's candidate only as its first request, or as
        // the first hit of a bank whose candidate is a PRE.
        if q.len == 1 || (self.cand_kind[b] == K_PRE && d.row == self.open_row[b]) {
            self.update_candidate(b);
        }
    }

    /// The earliest cycle a candidate can issue and, among the candidates ready then, the bank
    /// with the smallest key (`NEVER`: no candidate).
    #[inline(always)]
    fn scan(&self) -> (Cycle, usize) {
        let mut ready = [0; BANKS];
        let mut first = NEVER;
        for b in 0..BANKS {
            let r = self.cand_t[b].max(self.t.shared[self.cand_kind[b] * GROUPS + b / BANKS_PER_GROUP]);
            ready[b] = r;
            first = first.min(r);
        }
        if first == NEVER {
            return (NEVER, 0);
        }
        let at = first.max(self.t.bus);
        let (mut best, mut best_key) = (0, u64::MAX);
        for b in 0..BANKS {
            let k = if ready[b] <= at { self.cand_key[b] } else { u64::MAX };
            if k < best_key {
                best_key = k;
                best = b;
            }
        }
        (at, best)
    }

    #[inline(always)]
    fn log<const LOG: bool>(log: &mut Vec<CommandRecord>, cycle: Cycle, command: Command, b: usize, row: u32, column: u32) {
        if LOG {
            let addr = DramAddress {
                channel: 0,
                rank: 0,
                bank_group: (b / BANKS_PER_GROUP) as u32,
                bank: (b % BANKS_PER_GROUP) as u32,
                row,
                column,
            };
            log.push(CommandRecord { cycle, command, addr });
        }
    }

    /// Run `requests` (reads) closed-loop with `outstanding` in flight from cycle 0, as
    /// `dram_sim::simulate` does. With `LOG`, every command is recorded.
    pub fn run<const LOG: bool>(mut self, requests: &[DramRequest], outstanding: usize) -> Result<RunResult, String> {
        if outstanding == 0 {
            return Err("outstanding must be at least 1".into());
        }
        if let Some(i) = requests.iter().position(|r| r.is_write) {
            return Err(unsupported(&format!("reads only, but request {i} is a write")));
        }
        let c = self.c.clone();
        let mut log = Vec::new();
        let mut hist = LatencyHistogram::default();
        // Completion cycles of the served requests not yet retired (`retired..served`), oldest
        // first: one fixed read latency, so issue order is completion order. A ring of a
        // power-of-two size; at most `outstanding` are in flight.
        let ring = outstanding.next_power_of_two();
        let mut done_ring = vec![0 as Cycle; ring];
        // Requests entered, served (RD issued) and retired (completed, as the driver saw it).
        let (mut entered, mut served, mut retired) = (0usize, 0usize, 0usize);
        let mut last_done: Cycle = 0;
        let mut next = 0usize; // next request to enter
        let n = requests.len();
        let mut refresh_due = self.t_refi;
        let mut refresh_pending = false;

        // Let requests in at `now` while the queue has room and fewer than `outstanding` are
        // in flight (completions at or before `now` retired first, as the production tick does).
        macro_rules! inject {
            ($now:expr) => {{
                let now = $now;
                while next < n && self.queued < self.read_queue {
                    if entered - retired >= outstanding {
                        while retired < served && done_ring[retired & (ring - 1)] <= now {
                            retired += 1;
                        }
                        if entered - retired >= outstanding {
                            break;
                        }
                    }
                    self.enqueue(now, requests[next].addr);
                    next += 1;
                    entered += 1;
                }
            }};
        }
        // The next cycle a request can enter without a command issuing first: only when the
        // closed loop is at its limit (a completion frees a place).
        macro_rules! arrival_event {
            () => {
                if next < n && self.queued < self.read_queue && entered - retired >= outstanding && retired < served {
                    done_ring[retired & (ring - 1)]
                } else {
                    NEVER
                }
            };
        }

        inject!(0);
        loop {
            // The run ends with the last completion; nothing after it issues.
            let end = if next == n && self.queued == 0 { last_done } else { NEVER };
            if refresh_pending {
                let (cmd, ready) = if self.open_banks > 0 {
                    (Command::Prea, self.t.rank_prea)
                } else {
                    (Command::Ref, self.t.rank_ref)
                };
                let at = ready.max(self.t.bus).max(refresh_due);
                let a = arrival_event!();
                if a < at {
                    inject!(a);
                    continue;
                }
                if at > end {
                    break;
                }
                if cmd == Command::Prea {
                    self.t.prea(&c, at);
                    self.open_row = [NO_ROW; BANKS];
                    self.open_banks = 0;
                    for b in 0..BANKS {
                        self.update_candidate(b);
                    }
                } else {
                    self.t.refresh(&c, at);
                    refresh_pending = false;
                    refresh_due += self.t_refi;
                }
                Self::log::<LOG>(&mut log, at, cmd, 0, 0, 0);
                inject!(at);
                continue;
            }
            let (at, b) = self.scan();
            let a = arrival_event!();
            if refresh_due <= at.min(a) {
                if refresh_due > end {
                    break;
                }
                refresh_pending = true;
                continue;
            }
            if a < at {
                inject!(a);
                continue;
            }
            if at == NEVER {
                return Err(format!("internal error: stalled with {} requests queued", self.queued));
            }
            let g = b / BANKS_PER_GROUP;
            let i = self.cand_index[b];
            let req = self.queues[b].reqs[i];
            match self.cand_kind[b] {
                K_RD => {
                    self.t.rd(&c, at, b, g);
                    let q = &mut self.queues[b];
                    q.reqs.copy_within(i + 1..q.len, i);
                    q.len -= 1;
                    self.queued -= 1;
                    let done = at + c.read_data_end;
                    hist.record(done - req.arrival);
                    done_ring[served & (ring - 1)] = done;
                    served += 1;
                    last_done = done;
                    Self::log::<LOG>(&mut log, at, Command::Rd, b, req.row, req.column);
                }
                K_ACT => {
                    self.t.act(&c, at, b, g);
                    self.open_row[b] = req.row;
                    self.open_banks += 1;
                    Self::log::<LOG>(&mut log, at, Command::Act, b, req.row, req.column);
                }
                _ => {
                    self.t.pre(&c, at, b);
                    self.open_row[b] = NO_ROW;
                    self.open_banks -= 1;
                    Self::log::<LOG>(&mut log, at, Command::Pre, b, req.row, req.column);
                }
            }
            self.update_candidate(b);
            inject!(at);
        }
        Ok(RunResult { requests: hist.count(), cycles: last_done, read_latency: hist, commands: log })
    }
}
