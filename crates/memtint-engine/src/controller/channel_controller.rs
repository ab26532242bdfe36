//! The memory controller of one channel.
//!
//! Each `tick(now)` retires finished transfers, issues at most one command (refresh first,
//! then the scheduler's choice among ready commands of the active queue, then row-policy
//! closes), and computes `next_event()`: the earliest cycle at which a tick could do anything.
//! Callers may skip every cycle before it (event skipping); ticking on those cycles instead is
//! a no-op, which is what makes event skipping equal to a cycle-by-cycle run.

use super::refresh::{self, RefreshManager};
use super::row_policy::{self, RowPolicy};
use super::scheduler::{self, Candidate, Scheduler};
use super::{BankState, ChannelTiming, Completion, Request, RowOutcome};
use crate::config::ControllerConfig;
use crate::dram::constraints::Constraints;
use crate::dram::{Command, CommandRecord, DramAddress, Organisation, TimingParams};
use crate::error::Result;
use crate::stats::ChannelStats;
use crate::{Cycle, NEVER};

pub struct ChannelController {
    channel: u32,
    org: Organisation,
    c: Constraints,
    read_q: Vec<Request>,
    write_q: Vec<Request>,
    read_capacity: usize,
    write_capacity: usize,
    write_high: usize,
    write_low: usize,
    write_mode: bool,
    frontend_latency: u64,
    banks: Vec<BankState>,
    open_banks: Vec<u32>,
    timing: ChannelTiming,
    scheduler: Box<dyn Scheduler>,
    row_policy: Box<dyn RowPolicy>,
    refresh: Box<dyn RefreshManager>,
    refresh_pending: Vec<bool>,
    refreshes_pending: u32,
    /// Transfers whose last beat is still in the future.
    in_flight: Vec<Completion>,
    next_completion: Cycle,
    next_event: Cycle,
    last_update: Cycle,
    stats: ChannelStats,
    /// Issued commands, kept only when a checker will read them.
    log: Option<Vec<CommandRecord>>,
    // Scratch space reused on every tick.
    cands: Vec<Candidate>,
    hit_count: Vec<u32>,
    hit_epoch: Vec<u32>,
    epoch: u32,
}

impl ChannelController {
    pub fn new(channel: u32, org: &Organisation, timing: &TimingParams, cfg: &ControllerConfig) -> Result<Self> {
        cfg.validate()?;
        let banks = org.banks_per_channel() as usize;
        let write_high = ((cfg.write_queue as f64 * cfg.write_high_watermark).ceil() as usize).clamp(1, cfg.write_queue);
        let write_low = ((cfg.write_queue as f64 * cfg.write_low_watermark).floor() as usize).min(write_high - 1);
        Ok(ChannelController {
            channel,
            org: org.clone(),
            c: Constraints::derive(timing),
            read_q: Vec::with_capacity(cfg.read_queue),
            write_q: Vec::with_capacity(cfg.write_queue),
            read_capacity: cfg.read_queue,
            write_capacity: cfg.write_queue,
            write_high,
            write_low,
            write_mode: false,
            frontend_latency: cfg.frontend_latency,
            banks: vec![BankState::default(); banks],
            open_banks: vec![0; org.ranks as usize],
            timing: ChannelTiming::new(Constraints::derive(timing), org.ranks, org.bank_groups, org.banks_per_rank()),
            scheduler: scheduler::build(&cfg.scheduler, cfg)?,
            row_policy: row_policy::build(&cfg.row_policy, cfg)?,
            refresh: refresh::build(&cfg.refresh, org.ranks, timing.tREFI)?,
            refresh_pending: vec![false; org.ranks as usize],
            refreshes_pending: 0,
            in_flight: Vec::new(),
            next_completion: NEVER,
            // Tick at cycle 0 so even a channel that never gets a request schedules refresh.
            next_event: 0,
            last_update: 0,
            stats: ChannelStats::new(org.ranks, org.banks_per_channel()),
            log: None,
            cands: Vec::with_capacity(cfg.read_queue.max(cfg.write_queue)),
            hit_count: vec![0; banks],
            hit_epoch: vec![0; banks],
            epoch: 0,
        })
    }

    /// Keep a log of issued commands (for the timing checker).
    pub fn record_commands(&mut self, on: bool) {
        self.log = if on { Some(Vec::new()) } else { None };
    }

    /// Take the commands issued since the last call.
    pub fn drain_log(&mut self) -> Vec<CommandRecord> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Move commands issued since the last call into `out` (reuses both buffers).
    pub fn drain_log_into(&mut self, out: &mut Vec<CommandRecord>) {
        if let Some(log) = self.log.as_mut() {
            out.append(log);
        }
    }

    pub fn stats(&self) -> &ChannelStats {
        &self.stats
    }

    pub fn scheduler_name(&self) -> &'static str {
        self.scheduler.name()
    }

    pub fn can_accept(&self, is_write: bool) -> bool {
        if is_write {
            self.write_q.len() < self.write_capacity
        } else {
            self.read_q.len() < self.read_capacity
        }
    }

    pub fn is_idle(&self) -> bool {
        self.read_q.is_empty() && self.write_q.is_empty() && self.in_flight.is_empty()
    }

    pub fn queued(&self) -> usize {
        self.read_q.len() + self.write_q.len()
    }

    /// The earliest cycle at which `tick` could change anything.
    pub fn next_event(&self) -> Cycle {
        self.next_event
    }

    /// Queue a request arriving at `now`. The caller checks `can_accept` first.
    pub fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, source: u32) {
        debug_assert!(self.can_accept(is_write));
        self.integrate_queues(now);
        let org = &self.org;
        let group = dram.rank * org.bank_groups + dram.bank_group;
        let flat_bank = dram.rank * org.banks_per_rank() + org.flat_bank(dram.bank_group, dram.bank);
        let req = Request {
            id,
            addr,
            is_write,
            source,
            rank: dram.rank,
            group,
            flat_bank,
            row: dram.row,
            column: dram.column,
            arrival: now,
            ready_at: now + self.frontend_latency,
            outcome: None,
        };
        self.banks[flat_bank as usize].pending += 1;
        // A new request can change the write-mode decision from the next cycle on.
        self.next_event = self.next_event.min(now + 1);
        if is_write {
            self.write_q.push(req);
        } else {
            self.read_q.push(req);
        }
    }

    fn integrate_queues(&mut self, now: Cycle) {
        let dt = now.saturating_sub(self.last_update) as u128;
        if dt > 0 {
            self.stats.read_queue_integral += dt * self.read_q.len() as u128;
            self.stats.write_queue_integral += dt * self.write_q.len() as u128;
            self.last_update = now;
        }
    }

    /// Advance to `now`: retire finished transfers into `done`, then issue at most one command.
    pub fn tick(&mut self, now: Cycle, done: &mut Vec<Completion>) {
        self.integrate_queues(now);
        if self.next_completion <= now {
            self.retire(now, done);
        }
        let mut next = self.next_completion;

        // Refresh falls due: block the rank, close its banks, refresh it.
        if self.refresh.next_due() <= now {
            for r in 0..self.org.ranks {
                if !self.refresh_pending[r as usize] && self.refresh.due(r) <= now {
                    self.refresh_pending[r as usize] = true;
                    self.refreshes_pending += 1;
                }
            }
        }
        let mut issued = false;
        if self.refreshes_pending > 0 {
            let (did, t) = self.try_refresh(now);
            issued = did;
            next = next.min(t);
        }

        self.update_write_mode();

        if !issued {
            let (did, t) = self.schedule(now);
            issued = did;
            next = next.min(t);
        }
        if !issued && self.row_policy.idle_close_after().is_some() {
            let (did, t) = self.close_idle_rows(now);
            issued = did;
            next = next.min(t);
        }
        if issued {
            next = now + 1;
        }
        // The next refresh to fall due on a rank that is not already waiting for one.
        if self.refreshes_pending == 0 {
            next = next.min(self.refresh.next_due());
        } else {
            for r in 0..self.org.ranks {
                if !self.refresh_pending[r as usize] {
                    next = next.min(self.refresh.due(r));
                }
            }
        }
        self.next_event = next;
    }

    fn retire(&mut self, now: Cycle, done: &mut Vec<Completion>) {
        let before = done.len();
        let mut next = NEVER;
        let stats = &mut self.stats;
        self.in_flight.retain(|c| {
            if c.done <= now {
                if !c.is_write {
                    stats.read_latency.record(c.done - c.arrival);
                }
                done.push(*c);
                false
            } else {
                next = next.min(c.done);
                true
            }
        });
        // Deterministic order: by completion cycle, then request id.
        done[before..].sort_unstable_by_key(|c| (c.done, c.id));
        self.next_completion = next;
    }

    fn update_write_mode(&mut self) {
        let before = self.write_mode;
        if self.write_mode {
            if self.write_q.len() <= self.write_low && !self.read_q.is_empty() {
                self.write_mode = false;
            }
        } else if self.write_q.len() >= self.write_high || (self.read_q.is_empty() && !self.write_q.is_empty()) {
            self.write_mode = true;
        }
        if before != self.write_mode {
            self.stats.write_mode_switches += 1;
        }
    }

    /// Refresh the lowest pending rank: PREA if any of its banks is open, else REF.
    fn try_refresh(&mut self, now: Cycle) -> (bool, Cycle) {
        let mut next = NEVER;
        for r in 0..self.org.ranks {
            if !self.refresh_pending[r as usize] {
                continue;
            }
            let any_bank = r * self.org.banks_per_rank();
            let cmd = if self.open_banks[r as usize] > 0 { Command::Prea } else { Command::Ref };
            let t = self.timing.ready(cmd, r, r * self.org.bank_groups, any_bank);
            if t <= now {
                self.issue_rank_command(now, cmd, r);
                if cmd == Command::Ref {
                    self.refresh_pending[r as usize] = false;
                    self.refreshes_pending -= 1;
                    self.refresh.refreshed(r, now);
                }
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }

    fn issue_rank_command(&mut self, now: Cycle, cmd: Command, rank: u32) {
        let first = (rank * self.org.banks_per_rank()) as usize;
        let last = first + self.org.banks_per_rank() as usize;
        self.timing.issue(cmd, now, rank, rank * self.org.bank_groups, first as u32, 0);
        if cmd == Command::Prea {
            for b in &mut self.banks[first..last] {
                b.open_row = None;
            }
            self.open_banks[rank as usize] = 0;
        }
        self.stats.rank_commands[rank as usize][cmd.index()] += 1;
        // Rank-wide: logged against the rank's first bank (bank group 0, bank 0).
        self.log_command(now, cmd, first as u32, 0, 0);
    }

    /// Scan the active queue, let the scheduler pick among ready commands, issue it.
    fn schedule(&mut self, now: Cycle) -> (bool, Cycle) {
        let writes = self.write_mode;
        let queue = if writes { &self.write_q } else { &self.read_q };
        if queue.is_empty() {
            return (false, NEVER);
        }
        // Pass 1: queued hits per bank (for hit protection and auto-precharge decisions).
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.hit_epoch.fill(0);
            self.epoch = 1;
        }
        for req in queue.iter() {
            let b = req.flat_bank as usize;
            if self.banks[b].open_row == Some(req.row) {
                if self.hit_epoch[b] != self.epoch {
                    self.hit_epoch[b] = self.epoch;
                    self.hit_count[b] = 0;
                }
                self.hit_count[b] += 1;
            }
        }
        // Pass 2: each request's next command and when it can issue.
        self.cands.clear();
        let mut next = NEVER;
        for (i, req) in queue.iter().enumerate() {
            if self.refreshes_pending > 0 && self.refresh_pending[req.rank as usize] {
                continue;
            }
            let b = req.flat_bank as usize;
            let bank = &self.banks[b];
            let (cmd, is_hit) = match bank.open_row {
                Some(row) if row == req.row => {
                    let cmd = if req.is_write { Command::Wr } else { Command::Rd };
                    (cmd, self.scheduler.hit_counts_as_hit(bank.hits_since_act))
                }
                Some(_) => {
                    let hits_queued = self.hit_epoch[b] == self.epoch && self.hit_count[b] > 0;
                    if hits_queued && !self.scheduler.may_close_row_with_hits(bank.hits_since_act) {
                        continue; // the hits' own events wake us
                    }
                    (Command::Pre, false)
                }
                None => (Command::Act, false),
            };
            let t = self.timing.ready(cmd, req.rank, req.group, req.flat_bank).max(req.ready_at);
            if t <= now {
                self.cands.push(Candidate {
                    index: i,
                    command: cmd,
                    is_hit,
                    flat_bank: req.flat_bank,
                    arrival: req.arrival,
                    source: req.source,
                });
            } else if t < next {
                next = t;
            }
        }
        if self.cands.is_empty() {
            return (false, next);
        }
        let pick = self.scheduler.select(now, &self.cands);
        let cand = self.cands[pick];
        self.scheduler.on_issue(now, &cand);
        self.issue_for_request(now, cand.index, cand.command);
        (true, now + 1)
    }

    fn issue_for_request(&mut self, now: Cycle, index: usize, mut cmd: Command) {
        let writes = self.write_mode;
        let queue = if writes { &mut self.write_q } else { &mut self.read_q };
        let req = &mut queue[index];
        let b = req.flat_bank as usize;
        if cmd.is_column() {
            let more_hits = self.hit_epoch[b] == self.epoch && self.hit_count[b] > 1;
            if self.row_policy.auto_precharge(more_hits) {
                cmd = if cmd == Command::Rd { Command::Rda } else { Command::Wra };
            }
        }
        let outcome = match cmd {
            Command::Act => RowOutcome::Miss,
            Command::Pre => RowOutcome::Conflict,
            _ => RowOutcome::Hit,
        };
        let outcome = *req.outcome.get_or_insert(outcome);
        let (rank, group, row, column) = (req.rank, req.group, req.row, req.column);
        let bank = &mut self.banks[b];
        self.timing.issue(cmd, now, rank, group, b as u32, bank.act_cycle);
        self.stats.banks[b].commands[cmd.index()] += 1;
        match cmd {
            Command::Act => {
                bank.open_row = Some(row);
                bank.act_cycle = now;
                bank.last_use = now;
                bank.hits_since_act = 0;
                self.open_banks[rank as usize] += 1;
            }
            Command::Pre => {
                bank.open_row = None;
                self.open_banks[rank as usize] -= 1;
            }
            _ => {
                bank.last_use = now;
                bank.hits_since_act += 1;
                bank.pending -= 1;
                if cmd.auto_precharges() {
                    bank.open_row = None;
                    self.open_banks[rank as usize] -= 1;
                }
                let counters = &mut self.stats.banks[b];
                match outcome {
                    RowOutcome::Hit => counters.row_hits += 1,
                    RowOutcome::Miss => counters.row_misses += 1,
                    RowOutcome::Conflict => counters.row_conflicts += 1,
                }
                let req = queue.remove(index);
                let end = if req.is_write { self.c.write_data_end } else { self.c.read_data_end };
                let done = now + end;
                if req.is_write {
                    self.stats.writes += 1;
                } else {
                    self.stats.reads += 1;
                }
                self.stats.busy_data_cycles += self.c.burst;
                self.in_flight.push(Completion {
                    id: req.id,
                    source: req.source,
                    is_write: req.is_write,
                    arrival: req.arrival,
                    done,
                });
                self.next_completion = self.next_completion.min(done);
            }
        }
        self.log_command(now, cmd, b as u32, row, column);
    }

    fn log_command(&mut self, now: Cycle, command: Command, flat_bank: u32, row: u32, column: u32) {
        if let Some(log) = self.log.as_mut() {
            let per_rank = self.org.banks_per_rank();
            let within = flat_bank % per_rank;
            let addr = DramAddress {
                channel: self.channel,
                rank: flat_bank / per_rank,
                bank_group: within / self.org.banks_per_group,
                bank: within % self.org.banks_per_group,
                row,
                column,
            };
            log.push(CommandRecord { cycle: now, command, addr });
        }
    }

    /// Row policy: close rows that nobody has wanted for the policy's idle time.
    fn close_idle_rows(&mut self, now: Cycle) -> (bool, Cycle) {
        let idle = self.row_policy.idle_close_after().unwrap_or(NEVER);
        let mut next = NEVER;
        let per_rank = self.org.banks_per_rank();
        for b in 0..self.banks.len() {
            let bank = &self.banks[b];
            if bank.open_row.is_none() || bank.pending > 0 {
                continue;
            }
            let rank = b as u32 / per_rank;
            if self.refresh_pending[rank as usize] {
                continue;
            }
            let group = rank * self.org.bank_groups + (b as u32 % per_rank) / self.org.banks_per_group;
            let t = self.timing.ready(Command::Pre, rank, group, b as u32).max(bank.last_use.saturating_add(idle));
            if t <= now {
                let act = bank.act_cycle;
                self.timing.issue(Command::Pre, now, rank, group, b as u32, act);
                self.banks[b].open_row = None;
                self.open_banks[rank as usize] -= 1;
                self.stats.banks[b].commands[Command::Pre.index()] += 1;
                self.log_command(now, Command::Pre, b as u32, 0, 0);
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }

    /// Close the books at `now` (queue-occupancy integrals).
    pub fn finish(&mut self, now: Cycle) {
        self.integrate_queues(now);
        self.stats.last_cycle = now;
    }
}
