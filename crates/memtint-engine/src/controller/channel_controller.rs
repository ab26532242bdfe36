//! The memory controller of one channel.
//!
//! Each `tick(now)` retires finished transfers, issues at most one command (refresh first,
//! then the scheduler's choice among ready commands of the active queue, then row-policy
//! closes), and computes `next_event()`: the earliest cycle at which a tick could do anything.
//! Callers may skip every cycle before it (event skipping); ticking on those cycles instead is
//! a no-op, which is what makes event skipping equal to a cycle-by-cycle run.

use super::candidates::{Cached, CandidateSet};
use super::power_down::PowerDown;
use super::refresh::{self, RefreshState};
use super::row_policy::{self, RowPolicy};
use super::scheduler::{self, Candidate, Scheduler};
use super::write_drain::WriteDrain;
use super::{BankQueue, BankState, ChannelTiming, Completion, Controller, Implementation, Origin, Request, RowOutcome, RowOwners};
use crate::controller::ControllerConfig;
use crate::dram::constraints::Constraints;
use crate::dram::timing_rules::TimingTable;
use crate::dram::{Command, CommandRecord, DramAddress, Organisation, Standard, TimingParams};
use crate::error::Result;
use crate::stats::ChannelStats;
use crate::{Cycle, NEVER};
use std::collections::{BTreeMap, VecDeque};

pub struct ChannelController {
    channel: u32,
    org: Organisation,
    c: Constraints,
    /// Per direction (0 reads, 1 writes), per bank: the waiting requests.
    queues: [Vec<BankQueue>; 2],
    /// Per direction: requests waiting.
    len: [usize; 2],
    /// `protect_activated`: rows opened for a request stay open until it is served.
    protect: bool,
    /// Per direction: requests waiting and not activated (their ACT has not issued): the
    /// lengths for watermarks, idle drain and admission.
    waiting: [usize; 2],
    /// Banks whose activated request (at most one each: the bank cannot close) is searched
    /// (`oldest_ready_activated`), with their rank and channel bank group: with
    /// `search_activated` all; else those of the direction not served, listed at each switch
    /// (no ACT issues for it), as the served direction's go first in the scan's order.
    searched: Vec<(u32, u32, u32)>,
    /// No searched activated request can issue before this cycle (a lower bound: set by each
    /// search, and at each switch or, with `search_activated`, lowered by each ACT), so most
    /// passes skip the search.
    activated_due: Cycle,
    /// Every activated request is searched rather than keyed first: for ranked schedulers,
    /// whose keys change at scheduling passes (PAR-BS forms a batch at the first pass after its
    /// last marked request), so their passes stay where the search puts them; and for others
    /// without an `AgeOrder`, whose keys may use all 64 bits (`NOT_ACTIVATED`).
    search_activated: bool,
    capacity: [usize; 2],
    /// When to switch between draining reads and writes (shared with the lane controller).
    drain: WriteDrain,
    write_mode: bool,
    /// Writes issued since the controller turned to writes (`WriteDrain::should_switch`).
    written: usize,
    frontend_latency: u64,
    next_seq: u64,
    banks: Vec<BankState>,
    /// Per bank: whose request opened its row and closed it (row-buffer causes).
    owners: RowOwners,
    open_banks: Vec<u32>,
    timing: ChannelTiming,
    scheduler: Box<dyn Scheduler>,
    row_policy: Box<dyn RowPolicy>,
    /// `row_policy.idle_close_after()`, read every tick.
    idle_close_after: Option<u64>,
    refresh: RefreshState,
    /// Rank power-down (`controller.power_down_after`; off by default).
    pd: PowerDown,
    /// Per direction: transfers whose last beat is still in the future, in issue order, which
    /// is also completion order (a direction's data latency is fixed).
    in_flight: [VecDeque<Completion>; 2],
    next_completion: Cycle,
    /// The earliest cycle a tick could do anything besides retiring transfers.
    next_work: Cycle,
    last_update: Cycle,
    stats: ChannelStats,
    /// Issued commands, kept only when a checker will read them.
    log: Option<Vec<CommandRecord>>,
    /// Per direction: the banks' candidates, valid until a bank's queue or state changes.
    cands: [CandidateSet; 2],
    /// Per direction: banks whose cached candidates must be rebuilt. Only the active
    /// direction's are rebuilt before a scan; the other's wait for the switch of queues.
    stale: [Vec<u32>; 2],
    /// No queued request can issue before this cycle (a lower bound; scans are skipped until).
    sched_next: Cycle,
    /// No idle row can be closed before this cycle (row policies that close idle rows).
    idle_next: Cycle,
    /// `scheduler.ranks_requests()`: candidates are each bank's best request by key (see
    /// `scheduler` module header), and keys change over time.
    ranked: bool,
    /// Ranked schedulers: the next cycle keys may change by time alone (a quantum boundary, a
    /// request reaching the age threshold); every cached candidate is rebuilt then.
    priority_change_at: Cycle,
}

const READS: usize = 0;
const WRITES: usize = 1;
/// Set in the keys of candidates that are not activated: an `AgeOrder` key is below it, and
/// an activated candidate's key (its arrival order) goes first.
const NOT_ACTIVATED: u64 = 1 << 63;

impl ChannelController {
    pub fn new(channel: u32, standard: Standard, org: &Organisation, timing: &TimingParams, cfg: &ControllerConfig) -> Result<Self> {
        cfg.validate()?;
        let writes = cfg.writes()?;
        let banks = org.banks_per_channel() as usize;
        let row_policy = row_policy::build(&cfg.row_policy, cfg)?;
        let refresh = refresh::state(cfg, org, timing)?;
        let pd = PowerDown::new(cfg.power_down_after, timing, org.ranks, standard.name())?;
        let table = TimingTable::build(standard.timing_rules(), timing);
        let c = Constraints::from_table(&table, timing);
        let scheduler = scheduler::build(&cfg.scheduler, cfg, &c)?;
        let ranked = scheduler.ranks_requests();
        Ok(ChannelController {
            channel,
            org: org.clone(),
            c: c.clone(),
            queues: [vec![BankQueue::default(); banks], vec![BankQueue::default(); banks]],
            len: [0, 0],
            protect: cfg.protect_activated,
            waiting: [0, 0],
            searched: Vec::with_capacity(banks),
            activated_due: NEVER,
            search_activated: ranked || scheduler.age_order().is_none(),
            capacity: [cfg.read_queue, writes.queue],
            drain: WriteDrain::new(&writes),
            write_mode: false,
            written: 0,
            frontend_latency: cfg.frontend_latency,
            next_seq: 0,
            banks: vec![BankState::default(); banks],
            owners: RowOwners::new(banks),
            open_banks: vec![0; org.ranks as usize],
            timing: ChannelTiming::new(table, c, org.ranks, org.bank_groups, org.banks_per_rank()),
            scheduler,
            ranked,
            idle_close_after: row_policy.idle_close_after(),
            row_policy,
            refresh,
            pd,
            in_flight: [VecDeque::new(), VecDeque::new()],
            next_completion: NEVER,
            // Tick at cycle 0 so even a channel that never gets a request schedules refresh.
            next_work: 0,
            last_update: 0,
            stats: ChannelStats::new(org.ranks, org.banks_per_channel()),
            log: None,
            cands: [
                CandidateSet::new(org.ranks, org.bank_groups, org.banks_per_group, false),
                CandidateSet::new(org.ranks, org.bank_groups, org.banks_per_group, true),
            ],
            stale: [Vec::with_capacity(2 * banks), Vec::with_capacity(2 * banks)],
            sched_next: 0,
            idle_next: 0,
            priority_change_at: NEVER,
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

    pub fn scheduler_name(&self) -> &'static str {
        self.scheduler.name()
    }

    pub fn can_accept(&self, is_write: bool) -> bool {
        let d = is_write as usize;
        self.waiting(d) < self.capacity[d]
    }

    /// Requests of direction `d` not yet activated: what watermarks, idle drain and admission count.
    #[inline(always)]
    fn waiting(&self, d: usize) -> usize {
        self.waiting[d]
    }

    /// Queue a request arriving at `now`. The caller checks `can_accept` first.
    pub fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) {
        debug_assert!(self.can_accept(is_write));
        self.integrate_queues(now);
        let org = &self.org;
        let group = dram.rank * org.bank_groups + dram.bank_group;
        let flat_bank = dram.rank * org.banks_per_rank() + org.flat_bank(dram.bank_group, dram.bank);
        let req = Request {
            id,
            seq: self.next_seq,
            addr,
            is_write,
            source: origin.source,
            process: origin.process,
            rank: dram.rank,
            group,
            flat_bank,
            row: dram.row,
            column: dram.column,
            arrival: now,
            ready_at: now + self.frontend_latency,
            outcome: None,
            cause: Default::default(),
        };
        self.next_seq += 1;
        if self.ranked {
            self.ranked_arrival(now, &req);
        }
        let b = flat_bank as usize;
        if self.pd.enabled() {
            self.wake_rank(dram.rank as usize, now);
        }
        let bank = &mut self.banks[b];
        bank.pending += 1;
        let d = is_write as usize;
        let q = &mut self.queues[d][b];
        let is_hit = bank.open_row == Some(req.row);
        // The youngest request can change its bank's candidate only as its first request, first
        // hit, or first non-hit (the candidate is chosen among the oldest of each); otherwise
        // it stays as cached.
        let changes_candidate = self.ranked || if is_hit { q.hits == 0 } else { q.reqs.len() as u32 == q.hits };
        if is_hit {
            q.hits += 1;
        }
        q.reqs.push(req);
        self.len[d] += 1;
        self.waiting[d] += 1;
        self.idle_next = self.idle_next.min(now + 1);
        // The new request can switch the queues, or change its bank's candidate (only).
        if self.write_mode_should_switch(now) {
            self.sched_next = self.sched_next.min(now + 1);
        }
        if changes_candidate {
            self.invalidate(d, b);
            if d == self.write_mode as usize {
                let t = self.bank_earliest(d, b).max(now + 1);
                self.sched_next = self.sched_next.min(t);
            }
        }
        let wake = if self.idle_close_after.is_some() { self.idle_next } else { NEVER };
        let wake = wake.min(self.idle_drain_due()); // a wanted power-down exit: wake_rank
        self.next_work = self.next_work.min(self.sched_next.min(wake).max(now + 1));
    }

    fn integrate_queues(&mut self, now: Cycle) {
        let dt = now.saturating_sub(self.last_update) as u128;
        if dt > 0 {
            self.stats.read_queue_integral += dt * self.len[READS] as u128;
            self.stats.write_queue_integral += dt * self.len[WRITES] as u128;
            self.last_update = now;
        }
    }

    /// Advance to `now`: retire finished transfers into `done`, then issue at most one command.
    pub fn tick(&mut self, now: Cycle, done: &mut Vec<Completion>) {
        self.tick_with(now, |c| done.push(c))
    }

    /// `tick`, passing each completion to `completed` as it retires.
    /// (Queue-occupancy integrals advance only where an occupancy changes: it is constant between.)
    fn tick_with(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        if self.next_completion <= now {
            self.retire(now, completed);
        }
        let mut next = NEVER;

        // Refresh falls due: block the rank, close its banks, refresh it.
        if self.refresh.next_due <= now {
            let (banks, layout) = (&self.banks, self.refresh.layout());
            let busy = |t: usize| layout.banks(t).any(|b| banks[b].pending > 0);
            self.refresh.mark_due(now, busy, |_| {});
            if self.pd.enabled() {
                self.wake_for_refresh(now);
            }
        }
        if self.pd.enabled() {
            self.power_down_exits(now);
        }
        let mut issued = false;
        if self.refresh.count > 0 {
            let (did, t) = self.try_refresh(now);
            issued = did;
            next = next.min(t);
        }

        if self.write_mode_should_switch(now) {
            self.write_mode = !self.write_mode;
            self.written = 0;
            self.stats.write_mode_switches += 1;
            self.sched_next = now;
            if !self.search_activated {
                self.list_left_activated(now);
            }
        }

        if !issued && now >= self.sched_next {
            let (did, t) = self.schedule(now);
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
        // A read issued this tick may have left only writes, fewer than the idle minimum.
        next = next.min(self.idle_drain_due().max(now + 1));
        // The next refresh to fall due on a rank that is not already waiting for one.
        next = next.min(self.refresh.next_event(now));
        if self.pd.enabled() {
            next = next.min(self.power_down_entries(now)).min(self.pd.next_exit().max(now + 1));
        }
        debug_assert!(next > now);
        self.next_work = next;
    }

    /// A request or refresh waits for `rank`: if it is powered down, its exit is wanted, and
    /// it takes no command before the exit's earliest cycle plus tXP (raised again at the exit).
    fn wake_rank(&mut self, rank: usize, now: Cycle) {
        if let Some(t) = self.pd.want_exit(rank, now) {
            self.hold_rank(rank, t + self.pd.t_xp);
            self.next_work = self.next_work.min(t.max(now + 1));
        }
    }

    /// Ranks with a refresh pending wake.
    #[cold]
    fn wake_for_refresh(&mut self, now: Cycle) {
        let ranks: Vec<usize> = self.refresh_pending_ranks().collect();
        for r in ranks {
            self.wake_rank(r, now);
        }
    }

    /// The rank of each pending refresh target (a rank, or one of its banks), in target order.
    fn refresh_pending_ranks(&self) -> impl Iterator<Item = usize> + '_ {
        let (layout, per_rank, per_bank) = (self.refresh.layout(), self.org.banks_per_rank() as usize, self.refresh.per_bank());
        (0..self.refresh.pending.len()).filter(|&t| self.refresh.pending[t]).map(move |t| {
            if per_bank {
                layout.banks(t).next().expect("a target covers a bank") / per_rank
            } else {
                t
            }
        })
    }

    /// No command to `rank` before `until`: its banks' cached candidates are stale.
    fn hold_rank(&mut self, rank: usize, until: Cycle) {
        self.timing.hold_rank(rank as u32, until);
        let per_rank = self.org.banks_per_rank() as usize;
        for b in rank * per_rank..(rank + 1) * per_rank {
            self.invalidate(READS, b);
            self.invalidate(WRITES, b);
        }
        self.sched_next = self.sched_next.min(until);
    }

    /// Wanted exits whose tCKE has passed.
    fn power_down_exits(&mut self, now: Cycle) {
        let due: Vec<usize> = self.pd.exits_due(now).collect();
        for r in due {
            let cmd = self.pd.exit(r, now);
            self.stats.rank_powered_up(r, now);
            self.hold_rank(r, now + self.pd.t_xp);
            self.push_power_log(now, cmd, r);
        }
    }

    /// Ranks idle long enough power down; returns the next cycle one may.
    fn power_down_entries(&mut self, now: Cycle) -> Cycle {
        let per_rank = self.org.banks_per_rank() as usize;
        let mut next = NEVER;
        for r in 0..self.org.ranks as usize {
            let at = self.pd.entry_at(r);
            let banks = r * per_rank..(r + 1) * per_rank;
            // Queued requests or a refresh wake it anyway; a row the row policy will close
            // waits for that PRE (no command reaches a rank powered down).
            if at == NEVER
                || self.banks[banks.clone()].iter().any(|b| b.pending > 0)
                || self.refresh_waits_on(r)
                || (self.open_banks[r] > 0 && self.idle_close_after.is_some())
            {
                continue;
            }
            if at > now {
                next = next.min(at);
                continue;
            }
            let cmd = self.pd.enter(r, now, self.open_banks[r] > 0);
            self.stats.rank_powered_down(r, now, self.open_banks[r] > 0);
            self.push_power_log(now, cmd, r);
        }
        next
    }

    /// A refresh of `rank` (or of one of its banks) is pending.
    fn refresh_waits_on(&self, rank: usize) -> bool {
        if self.refresh.count == 0 {
            return false;
        }
        if !self.refresh.per_bank() {
            return self.refresh.pending[rank];
        }
        self.refresh_pending_ranks().any(|r| r == rank)
    }

    fn push_power_log(&mut self, now: Cycle, cmd: Command, rank: usize) {
        let first = rank as u32 * self.org.banks_per_rank();
        self.push_log(now, cmd, first, 0, 0);
    }

    fn retire(&mut self, now: Cycle, mut completed: impl FnMut(Completion)) {
        // Deterministic order: by completion cycle, then request id (merging the directions).
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

    /// `WriteDrain::should_switch` (watermarks, idle drain).
    #[inline]
    fn write_mode_should_switch(&self, now: Cycle) -> bool {
        self.drain.should_switch(self.write_mode, self.waiting(READS), self.waiting(WRITES), self.written, now, || self.idle_drain_due())
    }

    /// `WriteDrain::idle_drain_due` over the write queues (each bank queue is oldest first),
    /// activated writes left out.
    fn idle_drain_due(&self) -> Cycle {
        let oldest = || {
            let first = |(b, q): (usize, &BankQueue)| {
                let activated = match self.banks[b].activated {
                    Some((WRITES, seq)) => seq,
                    _ => u64::MAX,
                };
                q.reqs.iter().find(|r| r.seq != activated).map(|r| r.arrival)
            };
            self.queues[WRITES].iter().enumerate().filter_map(first).min()
        };
        self.drain.idle_drain_due(self.write_mode, self.waiting(READS), self.waiting(WRITES), oldest)
    }

    /// Rank `r` has a bank held open for an activated request (PREA must wait).
    fn rank_holds_activated(&self, r: u32) -> bool {
        let bpr = self.org.banks_per_rank() as usize;
        (r as usize * bpr..(r as usize + 1) * bpr).any(|b| self.holds_activated(b))
    }

    /// After a switch (without `search_activated`): list the activated requests of the
    /// direction left behind, and search them at once.
    #[cold]
    #[inline(never)]
    fn list_left_activated(&mut self, now: Cycle) {
        let left = !self.write_mode as usize;
        let (bpr, bpg) = (self.org.banks_per_rank(), self.org.banks_per_group);
        self.searched.clear();
        for (b, bank) in self.banks.iter().enumerate() {
            if bank.activated.is_some_and(|(d, _)| d == left) {
                let b = b as u32;
                self.searched.push((b, b / bpr, b / bpg));
            }
        }
        self.activated_due = if self.searched.is_empty() { NEVER } else { now };
    }

    /// The oldest searched activated request (`searched`) whose column command can issue at
    /// `now` (its arrival order, bank and direction), and the earliest cycle any other one's
    /// can, after `now` (one command issues per cycle). Refresh does not hold them back: their
    /// banks must be served before PREA can close them.
    fn oldest_ready_activated(&self, now: Cycle) -> (Option<(u64, usize, usize)>, Cycle) {
        let mut best: Option<(u64, usize, usize)> = None;
        let mut next = NEVER;
        for &(b, rank, group) in &self.searched {
            let (d, seq) = self.banks[b as usize].activated.expect("listed banks hold an activated request");
            let cmd = if d == WRITES { Command::Wr } else { Command::Rd };
            // The bank's part first: after a recent ACT it alone says "not yet".
            let t_bank = self.timing.bank_ready(cmd, b);
            let t = if t_bank > now { t_bank } else { self.timing.ready(cmd, rank, group, b) };
            if t > now {
                next = next.min(t);
            } else if best.is_none_or(|(s, _, _)| seq < s) {
                // The one it replaces stays ready.
                if best.is_some() {
                    next = now + 1;
                }
                best = Some((seq, b as usize, d));
            } else {
                next = now + 1;
            }
        }
        (best, next)
    }

    /// Bank `b`'s row is held for an activated request: no PRE may close it.
    #[inline(always)]
    fn holds_activated(&self, b: usize) -> bool {
        self.banks[b].activated.is_some()
    }

    /// Refresh the lowest pending rank: PREA if any of its banks is open, else REF.
    fn try_refresh(&mut self, now: Cycle) -> (bool, Cycle) {
        if self.refresh.per_bank() {
            return self.try_refresh_bank(now);
        }
        let mut next = NEVER;
        for r in 0..self.org.ranks {
            if !self.refresh.pending[r as usize] {
                continue;
            }
            let any_bank = r * self.org.banks_per_rank();
            let cmd = if self.open_banks[r as usize] > 0 { Command::Prea } else { Command::Ref };
            let t = self.timing.ready(cmd, r, r * self.org.bank_groups, any_bank);
            if cmd == Command::Prea && self.protect && self.rank_holds_activated(r) {
                // Its activated requests go first; look again once one may have issued.
                next = next.min(t.max(now + 1));
                continue;
            }
            if t <= now {
                self.issue_rank_command(now, cmd, r);
                if cmd == Command::Ref {
                    // The rank's banks were left out of scans while it waited.
                    self.sched_next = self.sched_next.min(now + 1);
                    self.idle_next = self.idle_next.min(now + 1);
                    self.refresh.refreshed(r as usize, now);
                }
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }

    /// Refresh the lowest pending bank or bank index: PRE to an open bank of it, else its
    /// REFPB or REFSB (addressed to its first bank).
    #[cold]
    fn try_refresh_bank(&mut self, now: Cycle) -> (bool, Cycle) {
        let mut next = NEVER;
        let per_rank = self.org.banks_per_rank();
        let (layout, refresh_cmd) = (self.refresh.layout(), self.refresh.command());
        for target in 0..self.refresh.pending.len() {
            if !self.refresh.pending[target] {
                continue;
            }
            let open = layout.banks(target).find(|&b| self.banks[b].open_row.is_some());
            let (cmd, b) = match open {
                Some(b) => (Command::Pre, b),
                None => (refresh_cmd, layout.banks(target).next().expect("a target covers a bank")),
            };
            let rank = b as u32 / per_rank;
            let group = rank * self.org.bank_groups + (b as u32 % per_rank) / self.org.banks_per_group;
            let t = self.timing.ready(cmd, rank, group, b as u32);
            if open.is_some() && self.protect && self.holds_activated(b) {
                // Its activated request goes first; look again once it may have issued.
                next = next.min(t.max(now + 1));
                continue;
            }
            if t > now {
                next = next.min(t);
                continue;
            }
            self.timing.issue(cmd, now, rank, group, b as u32, self.banks[b].act_cycle);
            if open.is_some() {
                self.owners.closed_by_controller(b);
                self.close_bank(b);
                self.open_banks[rank as usize] -= 1;
                if self.open_banks[rank as usize] == 0 {
                    self.stats.rank_closed(rank as usize, now);
                }
            } else {
                // The banks' ready times rose (their refresh cycle): their cached candidates are stale.
                for o in layout.banks(target) {
                    self.invalidate(READS, o);
                    self.invalidate(WRITES, o);
                }
                self.sched_next = self.sched_next.min(now + 1);
                self.idle_next = self.idle_next.min(now + 1);
                self.refresh.refreshed(target, now);
            }
            self.stats.banks[b].commands[cmd.index()] += 1;
            self.log_command(now, cmd, b as u32, 0, 0);
            return (true, now + 1);
        }
        (false, next)
    }

    fn issue_rank_command(&mut self, now: Cycle, cmd: Command, rank: u32) {
        let first = (rank * self.org.banks_per_rank()) as usize;
        let last = first + self.org.banks_per_rank() as usize;
        self.timing.issue(cmd, now, rank, rank * self.org.bank_groups, first as u32, 0);
        if cmd == Command::Prea {
            for b in first..last {
                if self.banks[b].open_row.is_some() {
                    self.owners.closed_by_controller(b);
                }
                self.close_bank(b);
            }
            if self.open_banks[rank as usize] > 0 {
                self.stats.rank_closed(rank as usize, now);
            }
            self.open_banks[rank as usize] = 0;
        }
        self.stats.rank_commands[rank as usize][cmd.index()] += 1;
        // Rank-wide: logged against the rank's first bank (bank group 0, bank 0).
        self.log_command(now, cmd, first as u32, 0, 0);
    }

    /// Mark a bank closed: no request hits it any more.
    #[inline]
    fn close_bank(&mut self, b: usize) {
        self.invalidate(READS, b);
        self.invalidate(WRITES, b);
        self.banks[b].open_row = None;
        self.queues[READS][b].hits = 0;
        self.queues[WRITES][b].hits = 0;
    }

    /// Bank `b`'s candidate in direction `d` (`None`: it offers nothing): a ranked scheduler's
    /// best request's command (`ranked_bank_candidate`), else `oldest_candidate`'s.
    #[cold]
    fn bank_candidate(&self, d: usize, b: usize) -> Option<Cached> {
        if self.ranked {
            return self.ranked_bank_candidate(d, b);
        }
        self.oldest_candidate(d, b, 0, 0)
    }

    /// Non-ranked schedulers: bank `b`'s candidate in direction `d`, the oldest hit's column
    /// command if its row is open with hits queued (or an older non-hit's PRE, see below), else
    /// PRE or ACT for the oldest request, unless hit protection keeps the row open. The
    /// searches for the oldest hit and the oldest non-hit start at `hit_from` and `miss_from`
    /// (callers that know the requests before them cannot match skip them).
    #[inline(always)]
    fn oldest_candidate(&self, d: usize, b: usize, hit_from: usize, miss_from: usize) -> Option<Cached> {
        let q = &self.queues[d][b];
        if q.reqs.is_empty() {
            return None;
        }
        let bank = &self.banks[b];
        let cand = |cmd: Command, is_hit: bool, i: usize| {
            let req = &q.reqs[i];
            let key = self.scheduler.key(&Self::candidate(req, cmd, is_hit));
            debug_assert!(self.search_activated || key < NOT_ACTIVATED, "an AgeOrder key is below bit 63");
            let key = if self.search_activated { key } else { key | NOT_ACTIVATED };
            let t_bank = self.timing.bank_ready(cmd, b as u32).max(req.ready_at);
            Some(Cached { t_bank, key, index: i as u32, cmd, is_hit, activated: false })
        };
        match bank.open_row {
            Some(row) if q.hits > 0 => {
                let col = if d == WRITES { Command::Wr } else { Command::Rd };
                let i = q.oldest_hit(row, hit_from).expect("hit count says a hit is queued");
                // An order that may close the row under its hits (FCFS; FR-FCFS-Cap past its cap)
                // serves the bank's oldest request: the PRE of an older non-hit, or else the hit.
                // Offering both would let a ready younger hit go while the PRE waits (tRTP after
                // every read), so hits would pass the older request without end.
                if (q.reqs.len() as u32) > q.hits && self.scheduler.may_close_row_with_hits(bank.hits_since_act) && !self.holds_activated(b)
                {
                    let j = q.oldest_miss(row, miss_from).expect("a non-hit is queued");
                    if j < i {
                        return cand(Command::Pre, false, j);
                    }
                }
                match bank.activated {
                    // The bank's ACT served its oldest request, which is its oldest hit. Keyed by
                    // arrival, first in the scan's order.
                    Some((da, seq)) if da == d && !self.search_activated => {
                        debug_assert_eq!(q.reqs[i].seq, seq, "the activated request is bank {b}'s oldest hit");
                        let t_bank = self.timing.bank_ready(col, b as u32).max(q.reqs[i].ready_at);
                        Some(Cached { t_bank, key: seq, index: i as u32, cmd: col, is_hit: true, activated: true })
                    }
                    _ => cand(col, self.scheduler.hit_counts_as_hit(bank.hits_since_act), i),
                }
            }
            Some(_) if self.holds_activated(b) => None,
            Some(_) => cand(Command::Pre, false, 0),
            None => cand(Command::Act, false, 0),
        }
    }

    /// Non-ranked schedulers: bank `b`'s candidate in direction `d` after `issued` went to its
    /// request `index`, without searching from the queue's start: after ACT the activated
    /// request (the oldest) hits; after a column command the requests before `index` miss and
    /// the next hit, if any, is at or after it. Debug builds check the result against
    /// `bank_candidate`.
    #[inline(always)]
    fn step_bank(&mut self, d: usize, b: usize, issued: Command, index: usize) {
        let (hit_from, miss_from) = match issued {
            Command::Act => {
                debug_assert_eq!(index, 0, "an ACT is for its bank's oldest request");
                (0, 1)
            }
            c if c.is_column() => (index, 0),
            _ => (0, 0),
        };
        let cand = self.oldest_candidate(d, b, hit_from, miss_from);
        debug_assert_eq!(cand, self.bank_candidate(d, b), "stepped candidate of bank {b} after {issued:?}");
        self.cands[d].set_bank(b, cand);
    }

    /// Ranked schedulers: bank `b`'s one candidate in direction `d`, its queued request with the
    /// smallest key (column command if it hits, else PRE or ACT). A best request still in the
    /// front end (`ready_at` ahead) holds its bank for those cycles (`frontend_latency`, 1).
    fn ranked_bank_candidate(&self, d: usize, b: usize) -> Option<Cached> {
        let bank = &self.banks[b];
        let col = if d == WRITES { Command::Wr } else { Command::Rd };
        let mut best: Option<Cached> = None;
        for (i, req) in self.queues[d][b].reqs.iter().enumerate() {
            let is_hit = bank.open_row == Some(req.row);
            let cmd = match bank.open_row {
                _ if is_hit => col,
                Some(_) => Command::Pre,
                None => Command::Act,
            };
            if cmd == Command::Pre && self.holds_activated(b) {
                continue;
            }
            let key = self.scheduler.key(&Self::candidate(req, cmd, is_hit));
            if best.is_none_or(|s| key < s.key) {
                let t_bank = self.timing.bank_ready(cmd, b as u32).max(req.ready_at);
                best = Some(Cached { t_bank, key, index: i as u32, cmd, is_hit, activated: false });
            }
        }
        best
    }

    /// Ranked schedulers: a request arrives (the scheduler counts it; it ages at `now + T`).
    #[cold]
    #[inline(never)]
    fn ranked_arrival(&mut self, now: Cycle, req: &Request) {
        self.scheduler.on_arrival(now, req);
        if let Some(t) = self.scheduler.age_threshold() {
            self.priority_change_at = self.priority_change_at.min(now.saturating_add(t));
            self.sched_next = self.sched_next.min(self.priority_change_at.max(now + 1));
        }
    }

    /// Ranked schedulers: let the scheduler catch up to `now`; if keys changed (or a time-driven
    /// change fell due) rebuild every cached candidate, and find the next time-driven change.
    #[cold]
    #[inline(never)]
    fn refresh_priorities(&mut self, now: Cycle) {
        let changed = self.scheduler.advance(now, &self.queues) || now >= self.priority_change_at;
        if changed {
            for d in [READS, WRITES] {
                for b in 0..self.banks.len() {
                    self.invalidate(d, b);
                }
            }
        }
        let mut next = self.scheduler.next_change();
        if let Some(age) = self.scheduler.age_threshold() {
            // Per bank the oldest request not yet aged is the next to age (queues are oldest first).
            for q in self.queues.iter().flatten() {
                if let Some(r) = q.reqs.iter().find(|r| r.arrival.saturating_add(age) > now) {
                    next = next.min(r.arrival + age);
                }
            }
        }
        self.priority_change_at = next;
    }

    /// A scan's lower bound on the next issue, lowered to the next time-driven key change.
    #[inline]
    fn bound_by_priority_change(&self, now: Cycle, t: Cycle) -> Cycle {
        if self.ranked {
            t.min(self.priority_change_at.max(now + 1))
        } else {
            t
        }
    }

    #[inline]
    fn candidate(req: &Request, command: Command, is_hit: bool) -> Candidate {
        Candidate {
            command,
            is_hit,
            flat_bank: req.flat_bank,
            arrival: req.arrival,
            seq: req.seq,
            source: req.source,
            process: req.process,
        }
    }

    #[inline]
    fn invalidate(&mut self, d: usize, b: usize) {
        if self.cands[d].invalidate(b) {
            self.stale[d].push(b as u32);
        }
    }

    #[inline]
    fn refresh_cache(&mut self, d: usize, b: usize) {
        if !self.cands[d].is_valid(b) {
            self.cands[d].set_bank(b, self.bank_candidate(d, b));
        }
    }

    fn rebuild_stale(&mut self, d: usize) {
        while let Some(b) = self.stale[d].pop() {
            self.refresh_cache(d, b as usize);
        }
    }

    /// Earliest cycle bank `b`'s candidate in direction `d` can issue (`NEVER`: none).
    fn bank_earliest(&mut self, d: usize, b: usize) -> Cycle {
        self.refresh_cache(d, b);
        self.cands[d].bank_earliest(&self.timing, b, &self.refresh.blocked_banks)
    }

    /// Evaluate the active direction class by class, issue the ready candidate with the
    /// smallest key, and return (issued, a lower bound on the next cycle anything can issue).
    /// Activated requests go first: the active direction's are first in the scan's order, the
    /// other direction's (left from before a switch) are searched, and the older ready one wins
    /// (with `search_activated`, the searched one, of either direction, goes first).
    #[inline(always)]
    fn schedule(&mut self, now: Cycle) -> (bool, Cycle) {
        // A command of two bus cycles (DDR5's ACT, RD, WR) holds the bus past the next cycle; the
        // scan takes the bus as free.
        let bus = self.timing.cmd_bus();
        if bus > now {
            return (false, bus);
        }
        let d = self.write_mode as usize;
        let mut searched = None;
        if self.activated_due <= now {
            let (ready, t) = self.oldest_ready_activated(now);
            self.activated_due = t;
            if let Some((_, b, da)) = ready {
                if self.search_activated || self.len[d] == 0 {
                    return self.issue_activated(now, d, b, da);
                }
                searched = ready;
            }
        }
        if self.len[d] == 0 {
            return (false, self.activated_due);
        }
        if self.ranked {
            self.refresh_priorities(now);
        }
        self.rebuild_stale(d);
        let blocked = self.refresh.count > 0;
        let scan = self.cands[d].scan(now, &self.timing, &self.refresh.blocked_banks, blocked);
        if let Some((seq, b, da)) = searched {
            let best = scan.best.and_then(|b| self.cands[d].get(b));
            if best.is_none_or(|c| !(c.activated && c.key < seq)) {
                return self.issue_activated(now, d, b, da);
            }
            // An older one of the served direction goes first; this one stays ready.
            self.activated_due = now + 1;
        }
        let Some(b) = scan.best else {
            return (false, self.bound_by_priority_change(now, scan.next.min(self.activated_due)));
        };
        let cand = self.cands[d].get(b).expect("the scan chose a bank with a candidate");
        let issued = self.issue_for_request(now, d, b, cand.index as usize, cand.cmd);
        // The issuing bank's candidate, at once (`issue_for_request` leaves it invalid but not
        // listed as stale).
        if self.ranked {
            self.refresh_cache(d, b);
        } else {
            self.step_bank(d, b, issued, cand.index as usize);
        }
        if self.ranked {
            // Serving a request can change keys (a batch ends, a source is blacklisted).
            self.refresh_priorities(now);
            self.rebuild_stale(d);
        }
        self.after_issue(now, d)
    }

    /// Issue the column command of bank `b`'s searched activated request (direction `da`) while
    /// the controller serves direction `d`.
    #[inline(never)]
    fn issue_activated(&mut self, now: Cycle, d: usize, b: usize, da: usize) -> (bool, Cycle) {
        let (_, seq) = self.banks[b].activated.expect("an activated bank");
        let index = self.queues[da][b].reqs.iter().position(|r| r.seq == seq).expect("an activated request is queued");
        let cmd = if da == WRITES { Command::Wr } else { Command::Rd };
        if self.ranked {
            self.refresh_priorities(now);
        }
        let issued = self.issue_for_request(now, da, b, index, cmd);
        if da != d {
            // Its direction's candidates wait for the switch; the served direction's were
            // listed stale and are rebuilt now (the bank's row may close for them now).
            self.stale[da].push(b as u32);
            self.refresh_cache(d, b);
        } else if self.ranked {
            self.refresh_cache(d, b);
        } else {
            self.step_bank(d, b, issued, index);
        }
        if self.ranked {
            self.refresh_priorities(now);
        }
        // `after_issue` reads every bank's candidates: those gone stale since the last scan too.
        self.rebuild_stale(d);
        self.after_issue(now, d)
    }

    /// After an issue while serving direction `d`: (true, the next cycle anything can issue).
    #[inline(always)]
    fn after_issue(&mut self, now: Cycle, d: usize) -> (bool, Cycle) {
        if self.write_mode_should_switch(now) {
            return (true, now + 1);
        }
        // The next issue, exactly (only the issuing bank changed). A slot freed in a full queue
        // needs no early tick: a blocked front end enters in this same cycle (the driver
        // injects after ticking) and `enqueue` brings the next event forward.
        let blocked = self.refresh.count > 0;
        let t = self.cands[d].next_issue(&self.timing, &self.refresh.blocked_banks, blocked).min(self.activated_due);
        debug_assert!(t > now, "the command bus is busy for the rest of this cycle");
        (true, self.bound_by_priority_change(now, t))
    }

    /// Issue `cmd` for request `index` of bank `b`'s queue in direction `d`. Leaves the bank's
    /// candidates in direction `d` invalid without listing them as stale: the caller rebuilds
    /// them next.
    /// Returns the command issued (RD / WR may become RDA / WRA).
    #[inline(always)]
    fn issue_for_request(&mut self, now: Cycle, d: usize, b: usize, index: usize, mut cmd: Command) -> Command {
        self.cands[d].invalidate(b);
        self.invalidate(1 - d, b);
        let q = &mut self.queues[d][b];
        if cmd.is_column() {
            let more_hits = q.hits > 1;
            // Auto-precharge would close a row held for another request.
            let held = || self.banks[b].activated.is_some_and(|(_, seq)| seq != q.reqs[index].seq);
            // An RDA before a write's recovery is over would cut it short: an RD leaves the row
            // for an explicit PRE (the read itself is not delayed).
            let recovering = cmd == Command::Rd && now < self.timing.rda_ready(b as u32);
            if self.row_policy.auto_precharge(more_hits) && !held() && !recovering {
                cmd = if cmd == Command::Rd { Command::Rda } else { Command::Wra };
            }
        }
        let req = &mut q.reqs[index];
        let outcome = match cmd {
            Command::Act => RowOutcome::Miss,
            Command::Pre => RowOutcome::Conflict,
            _ => RowOutcome::Hit,
        };
        // The first command issued for a request decides its outcome, and who left the bank so.
        if req.outcome.is_none() {
            req.outcome = Some(outcome);
            req.cause = self.owners.cause(b, outcome, req.process);
        }
        let (outcome, cause) = (req.outcome.unwrap_or(outcome), req.cause);
        let (rank, group, row, column, seq, process) = (req.rank, req.group, req.row, req.column, req.seq, req.process);
        let bank = &mut self.banks[b];
        self.timing.issue(cmd, now, rank, group, b as u32, bank.act_cycle);
        self.stats.banks[b].commands[cmd.index()] += 1;
        match cmd {
            Command::Act => {
                self.owners.activated(b, process);
                bank.open_row = Some(row);
                bank.act_cycle = now;
                bank.last_use = now;
                bank.hits_since_act = 0;
                self.open_banks[rank as usize] += 1;
                if self.open_banks[rank as usize] == 1 {
                    self.stats.rank_opened(rank as usize, now);
                }
                self.queues[READS][b].recount(Some(row));
                self.queues[WRITES][b].recount(Some(row));
                if self.protect {
                    bank.activated = Some((d, seq));
                    self.waiting[d] -= 1;
                    if self.search_activated {
                        self.searched.push((b as u32, rank, group));
                        self.activated_due = self.activated_due.min(now + self.c.act_to_col);
                    }
                }
            }
            Command::Pre => {
                self.owners.precharged_for(b, process);
                self.close_bank(b);
                self.open_banks[rank as usize] -= 1;
                if self.open_banks[rank as usize] == 0 {
                    self.stats.rank_closed(rank as usize, now);
                }
            }
            _ => {
                bank.last_use = now;
                bank.hits_since_act += 1;
                bank.pending -= 1;
                if bank.activated == Some((d, seq)) {
                    bank.activated = None;
                    if self.search_activated || d != self.write_mode as usize {
                        let i = self.searched.iter().position(|&(a, _, _)| a as usize == b).expect("listed");
                        self.searched.swap_remove(i);
                    }
                } else {
                    self.waiting[d] -= 1;
                }
                let counters = &mut self.stats.banks[b];
                match outcome {
                    RowOutcome::Hit => counters.row_hits += 1,
                    RowOutcome::Miss => counters.row_misses += 1,
                    RowOutcome::Conflict => counters.row_conflicts += 1,
                }
                counters.row_causes.record(cause);
                self.integrate_queues(now);
                let q = &mut self.queues[d][b];
                let req = q.reqs.remove(index);
                q.hits -= 1;
                self.len[d] -= 1;
                if self.ranked {
                    self.scheduler.on_served(now, &req, outcome);
                }
                if cmd.auto_precharges() {
                    let at = self.c.implicit_precharge(self.banks[b].act_cycle, now, cmd.is_write());
                    self.stats.rank_auto_precharge(rank as usize, at);
                    self.owners.closed_by_controller(b);
                    self.close_bank(b);
                    self.open_banks[rank as usize] -= 1;
                    if self.open_banks[rank as usize] == 0 {
                        self.stats.rank_closed(rank as usize, now);
                    }
                }
                let end = if req.is_write { self.c.write_data_end } else { self.c.read_data_end };
                let done = now + end;
                if req.is_write {
                    self.stats.writes += 1;
                    self.written += 1;
                } else {
                    self.stats.reads += 1;
                }
                self.stats.busy_data_cycles += self.c.burst;
                let met_refresh = self.refresh.met(b, req.arrival, now);
                self.stats.refresh_met[req.is_write as usize] += met_refresh as u64;
                self.in_flight[req.is_write as usize].push_back(Completion {
                    id: req.id,
                    source: req.source,
                    process: req.process,
                    is_write: req.is_write,
                    arrival: req.arrival,
                    done,
                    outcome,
                    cause,
                    met_refresh,
                });
                self.next_completion = self.next_completion.min(done);
            }
        }
        self.log_command(now, cmd, b as u32, row, column);
        cmd
    }

    #[inline]
    fn log_command(&mut self, now: Cycle, command: Command, flat_bank: u32, row: u32, column: u32) {
        if self.pd.enabled() {
            self.pd.note((flat_bank / self.org.banks_per_rank()) as usize, command, now);
        }
        if self.log.is_some() {
            self.push_log(now, command, flat_bank, row, column);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_log(&mut self, now: Cycle, command: Command, flat_bank: u32, row: u32, column: u32) {
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
        let idle = self.idle_close_after.unwrap_or(NEVER);
        let mut next = NEVER;
        let per_rank = self.org.banks_per_rank();
        for b in 0..self.banks.len() {
            let bank = &self.banks[b];
            if bank.open_row.is_none() || bank.pending > 0 {
                continue;
            }
            let rank = b as u32 / per_rank;
            if self.refresh.bank_blocked(b) {
                continue;
            }
            let group = rank * self.org.bank_groups + (b as u32 % per_rank) / self.org.banks_per_group;
            let t = self.timing.ready(Command::Pre, rank, group, b as u32).max(bank.last_use.saturating_add(idle));
            if t <= now {
                let act = bank.act_cycle;
                self.timing.issue(Command::Pre, now, rank, group, b as u32, act);
                self.owners.closed_by_controller(b);
                self.close_bank(b);
                self.open_banks[rank as usize] -= 1;
                if self.open_banks[rank as usize] == 0 {
                    self.stats.rank_closed(rank as usize, now);
                }
                self.stats.banks[b].commands[Command::Pre.index()] += 1;
                self.log_command(now, Command::Pre, b as u32, 0, 0);
                return (true, now + 1);
            }
            next = next.min(t);
        }
        (false, next)
    }
}

impl Controller for ChannelController {
    fn implementation(&self) -> Implementation {
        Implementation::General
    }

    fn can_accept(&self, is_write: bool) -> bool {
        ChannelController::can_accept(self, is_write)
    }

    fn enqueue(&mut self, now: Cycle, id: u64, addr: u64, dram: &DramAddress, is_write: bool, origin: Origin) {
        ChannelController::enqueue(self, now, id, addr, dram, is_write, origin)
    }

    fn tick(&mut self, now: Cycle, completed: impl FnMut(Completion)) {
        self.tick_with(now, completed)
    }

    fn next_event(&self) -> Cycle {
        self.next_work.min(self.next_completion)
    }

    fn skip_idle(&mut self, now: Cycle, until: Cycle) {
        // Only refresh left to do: no scan, row close or REF waits (each set NEVER by the tick
        // after its last command), nothing queued, every bank closed.
        let quiet = self.sched_next == NEVER && (self.idle_close_after.is_none() || self.idle_next == NEVER);
        // With power-down, each refresh wakes its rank: ticked one by one.
        if !quiet
            || self.log.is_some()
            || self.pd.enabled()
            || self.refresh.count > 0
            || !self.is_idle()
            || self.open_banks.iter().any(|&n| n > 0)
        {
            return;
        }
        let (groups, per_rank, per_group) = (self.org.bank_groups, self.org.banks_per_rank(), self.org.banks_per_group);
        let (per_bank, targets, t_rfc) = (self.refresh.per_bank(), self.refresh.pending.len() as u32, self.refresh.t_rfc());
        let (layout, cmd) = (self.refresh.layout(), self.refresh.command());
        let first_bank = |t: u32| layout.banks(t as usize).next().expect("a target covers a bank") as u32;
        let timing = &self.timing;
        let ready = |t: u32| {
            if per_bank {
                let b = first_bank(t);
                let r = b / per_rank;
                timing.ready(cmd, r, r * groups + b % per_rank / per_group, b)
            } else {
                timing.ready(Command::Ref, t, t * groups, t * per_rank)
            }
        };
        let skipped = refresh::skip_idle(self.refresh.manager.as_mut(), targets, t_rfc, ready, until);
        for (t, n) in skipped.into_iter().enumerate() {
            if per_bank {
                self.stats.banks[first_bank(t as u32) as usize].commands[cmd.index()] += n;
            } else {
                self.stats.rank_commands[t][Command::Ref.index()] += n;
            }
        }
        self.refresh.next_due = self.refresh.manager.next_due();
        self.next_work = self.refresh.next_due.max(now + 1);
    }

    fn next_work(&self) -> Cycle {
        self.next_work
    }

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
        ChannelController::record_commands(self, on)
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
        ChannelController::scheduler_name(self)
    }

    fn scheduler_counters(&self) -> BTreeMap<u32, BTreeMap<&'static str, u64>> {
        self.scheduler.source_counters()
    }
}
