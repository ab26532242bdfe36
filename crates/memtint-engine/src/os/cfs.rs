//! Per-core thread scheduling after Linux's CFS (ccps.md §2.5, §7.1 item 2): one run queue per
//! core ordered by weighted virtual run time, a time slice from the scheduling latency and the
//! minimum granularity, a context-switch cost (the outgoing thread's window drains, then the core
//! loses `switch_cycles`), periodic cross-core load balancing with a migration cost, and CPU
//! affinity. This file holds the decisions only; the driver (`multicore/multicore_sim.rs`) drains,
//! parks and resumes the threads' cores.
//!
//! Times are core cycles. Linux's defaults (6 ms latency, 0.75 ms granularity, scaled by
//! 1 + log2 CPUs) are tens of millions of cycles, longer than a simulated window, so the defaults
//! here are scaled down as ccps.md §7.1 recommends; every value is configurable (`[os.sched]`).

use crate::error::{Error, Result};
use crate::params::{LATENCY_CYCLES, PERIOD_CYCLES};
use crate::{Cycle, NEVER};
use serde::{Deserialize, Serialize};

/// `[os.sched]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedConfig {
    /// Period in which every runnable thread of a core runs once (Linux `sched_latency_ns`).
    pub latency_cycles: u64,
    /// Shortest slice (Linux `sched_min_granularity_ns`); the period stretches beyond
    /// `latency / min_granularity` threads.
    pub min_granularity_cycles: u64,
    /// Cycles a core loses per context switch, after the outgoing thread's window drained.
    pub switch_cycles: u64,
    /// Extra cycles when the incoming thread belongs to another process (TLB flush, ccps.md §7.1).
    pub address_space_switch_cycles: u64,
    /// Periodic cross-core load balancing; `None`: on, except under a policy that binds threads
    /// (`PolicyInfo::binds_threads`: ccps, off as ccps.md §2.5).
    pub load_balance: Option<bool>,
    pub balance_period_cycles: u64,
    /// Extra cycles charged to a migrated thread when it next runs (besides its cold private L2).
    pub migration_cycles: u64,
    /// Initial thread-to-core binding: "least-loaded" (Linux fork balancing) or "ccps"
    /// (ccps.md Algorithm 1); `None`: the policy's own rule (`PolicyInfo::binds_threads`), else
    /// "least-loaded".
    pub binding: Option<String>,
    /// At a switch, prefer a queued thread of the outgoing thread's process whose vruntime is
    /// within one minimum granularity of the least (ccps.md §2.5's optional tie-break, [rec]).
    pub prefer_same_process: bool,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            latency_cycles: 3_000_000,
            min_granularity_cycles: 375_000,
            switch_cycles: 3_000,
            address_space_switch_cycles: 2_000,
            load_balance: None,
            balance_period_cycles: 4_000_000,
            migration_cycles: 10_000,
            binding: None,
            prefer_same_process: false,
        }
    }
}

pub const BINDINGS: &[&str] = &["least-loaded", "ccps"];

impl SchedConfig {
    pub fn validate(&self) -> Result<()> {
        PERIOD_CYCLES.check("os.sched.latency_cycles", self.latency_cycles)?;
        PERIOD_CYCLES.check("os.sched.balance_period_cycles", self.balance_period_cycles)?;
        for (key, v) in [
            ("os.sched.switch_cycles", self.switch_cycles),
            ("os.sched.address_space_switch_cycles", self.address_space_switch_cycles),
            ("os.sched.migration_cycles", self.migration_cycles),
        ] {
            LATENCY_CYCLES.from(0).check(key, v)?;
        }
        if self.min_granularity_cycles == 0 || self.min_granularity_cycles > self.latency_cycles {
            return Err(Error::config(
                "os.sched.min_granularity_cycles",
                format!("must be between 1 and latency_cycles ({}), got {}", self.latency_cycles, self.min_granularity_cycles),
            ));
        }
        if let Some(b) = &self.binding {
            if !BINDINGS.contains(&b.as_str()) {
                return Err(Error::unknown("binding", b, BINDINGS.iter().copied()));
            }
        }
        Ok(())
    }

    /// Load balancing under a placement policy that binds threads by `policy_binding`
    /// (`PolicyInfo::binds_threads`): off for such a policy unless set.
    pub fn load_balance_for(&self, policy_binding: Option<&str>) -> bool {
        self.load_balance.unwrap_or(policy_binding.is_none())
    }

    /// The binding rule: as set, else the placement policy's (`policy_binding`), else least-loaded.
    pub fn binding_for<'a>(&'a self, policy_binding: Option<&'a str>) -> &'a str {
        self.binding.as_deref().or(policy_binding).unwrap_or("least-loaded")
    }
}

/// Linux `sched_prio_to_weight`: nice -20..19.
const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024,
    820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];
const NICE_0_WEIGHT: u64 = 1024;

pub fn nice_weight(nice: i32) -> Result<u64> {
    if !(-20..=19).contains(&nice) {
        return Err(Error::config("nice", format!("must be between -20 and 19, got {nice}")));
    }
    Ok(PRIO_TO_WEIGHT[(nice + 20) as usize])
}

/// What the scheduler knows of a thread.
#[derive(Clone, Debug)]
pub struct SchedThread {
    pub process: u32,
    pub nice: i32,
    /// Cores it may run on, sorted, not empty.
    pub affinity: Vec<u32>,
}

/// Per-thread scheduling statistics.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThreadSchedStats {
    /// Times the thread was switched onto a core after another thread (the first dispatch at
    /// cycle 0 is not counted).
    pub context_switches: u64,
    pub migrations: u64,
    /// Core it was bound to at creation, and where it ended.
    pub first_core: u32,
    pub last_core: u32,
    /// Weighted virtual run time at the end (core cycles × 1024 / weight).
    pub vruntime: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuState {
    Idle,
    /// `tid` runs; it has run since `since`; its slice ends at `slice_end`.
    Running {
        tid: u32,
        since: Cycle,
        slice_end: Cycle,
    },
    /// `tid` drains its window; `next` runs after the switch.
    Draining {
        tid: u32,
        next: u32,
    },
    /// The core switches to `next`, which runs from `until`.
    Switching {
        next: u32,
        until: Cycle,
    },
}

pub struct Cfs {
    cfg: SchedConfig,
    threads: Vec<SchedThread>,
    weight: Vec<u64>,
    vruntime: Vec<u64>,
    /// Core each thread is queued on or runs on.
    core_of: Vec<u32>,
    /// Runnable threads waiting on each core (not the one running or draining).
    queues: Vec<Vec<u32>>,
    state: Vec<CpuState>,
    /// Process of the thread that last ran on each core.
    last_process: Vec<Option<u32>>,
    migrated: Vec<bool>,
    stats: Vec<ThreadSchedStats>,
    next_balance: Cycle,
    pub switches: u64,
    pub same_process_switches: u64,
}

impl Cfs {
    /// `bound[t]`: the core thread `t` starts on (see `binding.rs`).
    pub fn new(cfg: &SchedConfig, balance: bool, threads: Vec<SchedThread>, cores: u32, bound: &[u32]) -> Result<Self> {
        cfg.validate()?;
        let n = threads.len();
        let weight = threads.iter().map(|t| nice_weight(t.nice)).collect::<Result<Vec<_>>>()?;
        let mut queues = vec![Vec::new(); cores as usize];
        for (t, &c) in bound.iter().enumerate() {
            queues[c as usize].push(t as u32);
        }
        let stats = bound.iter().map(|&c| ThreadSchedStats { first_core: c, last_core: c, ..Default::default() }).collect();
        Ok(Cfs {
            cfg: cfg.clone(),
            threads,
            weight,
            vruntime: vec![0; n],
            core_of: bound.to_vec(),
            queues,
            state: vec![CpuState::Idle; cores as usize],
            last_process: vec![None; cores as usize],
            migrated: vec![false; n],
            stats,
            next_balance: if balance { cfg.balance_period_cycles } else { NEVER },
            switches: 0,
            same_process_switches: 0,
        })
    }

    pub fn cores(&self) -> u32 {
        self.state.len() as u32
    }

    pub fn state(&self, core: u32) -> CpuState {
        self.state[core as usize]
    }

    pub fn queue(&self, core: u32) -> &[u32] {
        &self.queues[core as usize]
    }

    pub fn core_of(&self, tid: u32) -> u32 {
        self.core_of[tid as usize]
    }

    pub fn stats(&self) -> Vec<ThreadSchedStats> {
        let mut s = self.stats.clone();
        for (t, st) in s.iter_mut().enumerate() {
            st.vruntime = self.vruntime[t];
            st.last_core = self.core_of[t];
        }
        s
    }

    /// The thread on `core` (running or draining).
    pub fn on_core(&self, core: u32) -> Option<u32> {
        match self.state[core as usize] {
            CpuState::Running { tid, .. } | CpuState::Draining { tid, .. } => Some(tid),
            _ => None,
        }
    }

    /// Threads on a core, queued or not.
    fn load(&self, core: u32) -> usize {
        self.queues[core as usize].len() + usize::from(!matches!(self.state[core as usize], CpuState::Idle))
    }

    /// CFS's slice for `tid` among the threads of `core`: its weight's share of the period.
    fn slice(&self, core: u32, tid: u32) -> Cycle {
        let nr = self.load(core).max(1) as u64;
        let per = self.cfg.latency_cycles / self.cfg.min_granularity_cycles;
        let period = if nr > per { nr * self.cfg.min_granularity_cycles } else { self.cfg.latency_cycles };
        let total: u64 = self.queues[core as usize].iter().map(|&t| self.weight[t as usize]).sum::<u64>()
            + self.on_core(core).map_or(0, |t| self.weight[t as usize]);
        let w = self.weight[tid as usize];
        let total = total.max(w);
        (period as u128 * w as u128 / total as u128).max(1) as u64
    }

    /// Removes and returns the queued thread of `core` with the least virtual run time
    /// (lowest id on ties).
    fn pop_leftmost(&mut self, core: u32) -> Option<u32> {
        let q = &mut self.queues[core as usize];
        let vr = &self.vruntime;
        let i = (0..q.len()).min_by_key(|&i| (vr[q[i] as usize], q[i]))?;
        Some(q.swap_remove(i))
    }

    /// Cycle 0: every core with threads runs its first one, without a switch cost.
    pub fn start(&mut self) -> Vec<(u32, u32)> {
        let mut started = Vec::new();
        for c in 0..self.cores() {
            if let Some(t) = self.pop_leftmost(c) {
                self.state[c as usize] = CpuState::Running { tid: t, since: 0, slice_end: 0 };
                let end = self.slice(c, t);
                self.state[c as usize] = CpuState::Running { tid: t, since: 0, slice_end: end };
                self.last_process[c as usize] = Some(self.threads[t as usize].process);
                started.push((c, t));
            }
        }
        started
    }

    /// Next cycle at which the scheduler acts on `core` by itself (the end of a drain is the
    /// thread's core event, not the scheduler's).
    pub fn next_event(&self, core: u32) -> Cycle {
        match self.state[core as usize] {
            CpuState::Running { slice_end, .. } if !self.queues[core as usize].is_empty() => slice_end,
            CpuState::Switching { until, .. } => until,
            _ => NEVER,
        }
    }

    pub fn next_balance(&self) -> Cycle {
        self.next_balance
    }

    fn account(&mut self, tid: u32, ran: Cycle) {
        self.vruntime[tid as usize] += (ran as u128 * NICE_0_WEIGHT as u128 / self.weight[tid as usize] as u128) as u64;
    }

    /// The running thread's slice on `core` ended at `now`: returns the thread to drain, if
    /// another thread now has less virtual run time; otherwise a new slice starts.
    pub fn slice_end(&mut self, core: u32, now: Cycle) -> Option<u32> {
        let CpuState::Running { tid, since, slice_end } = self.state[core as usize] else { return None };
        if now < slice_end || self.queues[core as usize].is_empty() {
            return None;
        }
        self.account(tid, now.saturating_sub(since));
        let vr = &self.vruntime;
        let q = &self.queues[core as usize];
        let best = q.iter().copied().min_by_key(|&t| (vr[t as usize], t)).expect("queue not empty");
        if (vr[best as usize], best) < (vr[tid as usize], tid) {
            let next = match self.same_process_within_granularity(core, tid, vr[best as usize]) {
                Some(t) => {
                    self.queues[core as usize].retain(|&x| x != t);
                    t
                }
                None => self.pop_leftmost(core).expect("queue not empty"),
            };
            self.state[core as usize] = CpuState::Draining { tid, next };
            Some(tid)
        } else {
            let end = now + self.slice(core, tid);
            self.state[core as usize] = CpuState::Running { tid, since: now, slice_end: end };
            None
        }
    }

    /// With `prefer_same_process`: the queued thread of `tid`'s process with the least vruntime,
    /// if that is within one minimum granularity (in vruntime) of `least`.
    fn same_process_within_granularity(&self, core: u32, tid: u32, least: u64) -> Option<u32> {
        if !self.cfg.prefer_same_process {
            return None;
        }
        let p = self.threads[tid as usize].process;
        let vr = &self.vruntime;
        self.queues[core as usize]
            .iter()
            .copied()
            .filter(|&t| self.threads[t as usize].process == p && vr[t as usize] <= least + self.cfg.min_granularity_cycles)
            .min_by_key(|&t| (vr[t as usize], t))
    }

    /// The draining thread's window is empty at `now`: it goes back to the queue and the
    /// switch to the chosen thread begins.
    pub fn drained(&mut self, core: u32, now: Cycle) {
        let CpuState::Draining { tid, next } = self.state[core as usize] else { return };
        self.queues[core as usize].push(tid);
        let same = Some(self.threads[next as usize].process) == self.last_process[core as usize];
        self.begin_switch(core, next, now, same);
        self.last_process[core as usize] = Some(self.threads[tid as usize].process);
    }

    fn begin_switch(&mut self, core: u32, next: u32, now: Cycle, same_process: bool) {
        let mut cost = self.cfg.switch_cycles;
        if !same_process {
            cost += self.cfg.address_space_switch_cycles;
        }
        if std::mem::take(&mut self.migrated[next as usize]) {
            cost += self.cfg.migration_cycles;
        }
        self.switches += 1;
        self.same_process_switches += u64::from(same_process);
        self.stats[next as usize].context_switches += 1;
        self.state[core as usize] = CpuState::Switching { next, until: now + cost.max(1) };
    }

    /// The switch on `core` is over at `now`: returns the thread to resume.
    pub fn switch_done(&mut self, core: u32, now: Cycle) -> Option<u32> {
        let CpuState::Switching { next, until } = self.state[core as usize] else { return None };
        if now < until {
            return None;
        }
        self.state[core as usize] = CpuState::Running { tid: next, since: until, slice_end: until };
        let end = until + self.slice(core, next);
        self.state[core as usize] = CpuState::Running { tid: next, since: until, slice_end: end };
        self.last_process[core as usize] = Some(self.threads[next as usize].process);
        Some(next)
    }

    fn min_vruntime(&self, core: u32) -> Option<u64> {
        self.queues[core as usize].iter().copied().chain(self.on_core(core)).map(|t| self.vruntime[t as usize]).min()
    }

    /// Periodic load balancing at `now`: while the busiest core has at least two threads more
    /// than the idlest, move a queued thread allowed on the idlest (the one with the largest
    /// virtual run time: it would run last where it is). Returns the migrations (tid, from, to).
    pub fn balance(&mut self, now: Cycle) -> Vec<(u32, u32, u32)> {
        if now < self.next_balance {
            return Vec::new();
        }
        self.next_balance = now + self.cfg.balance_period_cycles;
        let mut moves = Vec::new();
        let cores = self.cores();
        for _ in 0..self.threads.len() {
            let by_load: Vec<u32> = (0..cores).collect();
            let busiest = *by_load.iter().max_by_key(|&&c| (self.load(c), std::cmp::Reverse(c))).unwrap();
            let idlest = *by_load.iter().min_by_key(|&&c| (self.load(c), c)).unwrap();
            if self.load(busiest) < self.load(idlest) + 2 {
                break;
            }
            let vr = &self.vruntime;
            let th = &self.threads;
            let pick = self.queues[busiest as usize]
                .iter()
                .copied()
                .filter(|&t| th[t as usize].affinity.contains(&idlest))
                .max_by_key(|&t| (vr[t as usize], std::cmp::Reverse(t)));
            let Some(t) = pick else { break };
            let from_min = self.min_vruntime(busiest).unwrap_or(0);
            self.queues[busiest as usize].retain(|&x| x != t);
            let to_min = self.min_vruntime(idlest).unwrap_or(from_min);
            self.vruntime[t as usize] = self.vruntime[t as usize] - from_min.min(self.vruntime[t as usize]) + to_min;
            self.core_of[t as usize] = idlest;
            self.migrated[t as usize] = true;
            self.stats[t as usize].migrations += 1;
            match self.state[idlest as usize] {
                CpuState::Idle => {
                    let same = Some(self.threads[t as usize].process) == self.last_process[idlest as usize];
                    self.begin_switch(idlest, t, now, same);
                }
                CpuState::Running { tid, since, slice_end } => {
                    self.queues[idlest as usize].push(t);
                    // A lone thread's slice was open-ended: end it now so the newcomer gets its turn.
                    self.state[idlest as usize] =
                        CpuState::Running { tid, since, slice_end: slice_end.max(now).min(now + self.slice(idlest, tid)) };
                }
                _ => self.queues[idlest as usize].push(t),
            }
            moves.push((t, busiest, idlest));
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads(nices: &[i32]) -> Vec<SchedThread> {
        nices.iter().enumerate().map(|(i, &n)| SchedThread { process: i as u32, nice: n, affinity: vec![0] }).collect()
    }

    /// Core 0's scheduler event at `now`, with a window that drains at once.
    fn step_core_zero(s: &mut Cfs, now: Cycle) {
        match s.state(0) {
            CpuState::Running { .. } if s.slice_end(0, now).is_some() => {
                s.drained(0, now);
            }
            CpuState::Switching { .. } => {
                s.switch_done(0, now);
            }
            _ => {}
        }
    }

    /// Drive one core by the scheduler alone (threads drain at once): run time per thread.
    fn run_one_core(nices: &[i32], until: Cycle, cfg: &SchedConfig) -> (Vec<Cycle>, u64) {
        let n = nices.len();
        let mut s = Cfs::new(cfg, false, threads(nices), 1, &vec![0; n]).unwrap();
        s.start();
        let mut ran = vec![0; n];
        let mut now = 0;
        while now < until {
            let next = s.next_event(0).min(until);
            if let Some(t) = s.on_core(0) {
                ran[t as usize] += next - now;
            }
            now = next;
            step_core_zero(&mut s, now);
        }
        (ran, s.switches)
    }

    #[test]
    fn equal_threads_share_a_core_equally_switching_once_per_slice() {
        let cfg = SchedConfig { switch_cycles: 0, address_space_switch_cycles: 0, ..SchedConfig::default() };
        let (ran, switches) = run_one_core(&[0, 0, 0], 30_000_000, &cfg);
        for r in &ran {
            assert!((*r as f64 - 10_000_000.0).abs() < 1_100_000.0, "{ran:?}");
        }
        // Slices of latency / 3 = 1 M cycles.
        assert!((29..=31).contains(&switches), "{switches}");
    }

    #[test]
    fn cpu_time_follows_the_nice_weights() {
        let cfg = SchedConfig { switch_cycles: 0, address_space_switch_cycles: 0, ..SchedConfig::default() };
        let (ran, _) = run_one_core(&[0, 5], 40_000_000, &cfg);
        let ratio = ran[0] as f64 / ran[1] as f64;
        let expected = 1024.0 / 335.0;
        assert!((ratio / expected - 1.0).abs() < 0.1, "ratio {ratio}, weights {expected}");
    }

    #[test]
    fn the_period_stretches_beyond_latency_over_granularity_threads() {
        let cfg = SchedConfig::default();
        let s = Cfs::new(&cfg, false, threads(&[0; 16]), 1, &[0; 16]).unwrap();
        // 16 > 3 M / 375 k = 8: period = 16 x 375 k, slice = 375 k.
        assert_eq!(s.slice(0, 0), 375_000);
        let s = Cfs::new(&cfg, false, threads(&[0; 4]), 1, &[0; 4]).unwrap();
        assert_eq!(s.slice(0, 0), 750_000);
    }

    #[test]
    fn a_switch_costs_more_across_address_spaces_and_after_a_migration() {
        let cfg = SchedConfig::default();
        let mut ts = threads(&[0, 0]);
        ts[1].process = 0;
        let mut s = Cfs::new(&cfg, false, ts, 1, &[0, 0]).unwrap();
        s.start();
        let end = s.next_event(0);
        assert!(s.slice_end(0, end).is_some());
        s.drained(0, end);
        assert_eq!(s.state(0), CpuState::Switching { next: 1, until: end + cfg.switch_cycles });
        assert_eq!(s.same_process_switches, 1);
        let mut s = Cfs::new(&cfg, false, threads(&[0, 0]), 1, &[0, 0]).unwrap();
        s.start();
        let end = s.next_event(0);
        s.slice_end(0, end);
        s.drained(0, end);
        assert_eq!(s.state(0), CpuState::Switching { next: 1, until: end + cfg.switch_cycles + cfg.address_space_switch_cycles });
    }

    #[test]
    fn same_process_preference_groups_a_processes_threads() {
        // Two processes of two threads on one core, interleaved in the queue.
        let run = |prefer: bool| {
            let cfg = SchedConfig { prefer_same_process: prefer, ..SchedConfig::default() };
            let ts: Vec<SchedThread> = [0, 1, 0, 1].iter().map(|&p| SchedThread { process: p, nice: 0, affinity: vec![0] }).collect();
            let mut s = Cfs::new(&cfg, false, ts, 1, &[0; 4]).unwrap();
            s.start();
            let mut now = 0;
            while now < 50_000_000 {
                now = s.next_event(0);
                step_core_zero(&mut s, now);
            }
            s.same_process_switches as f64 / s.switches as f64
        };
        let (plain, grouped) = (run(false), run(true));
        assert!(grouped > plain + 0.2, "same-process switch ratio {plain} plain, {grouped} with the preference");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let bad = |c: SchedConfig| c.validate().unwrap_err().to_string();
        assert!(bad(SchedConfig { latency_cycles: 0, ..Default::default() }).contains("latency_cycles"));
        assert!(bad(SchedConfig { min_granularity_cycles: 10_000_000, ..Default::default() }).contains("min_granularity"));
        assert!(bad(SchedConfig { binding: Some("x".into()), ..Default::default() }).contains("binding"));
        assert!(nice_weight(20).is_err());
        assert_eq!(nice_weight(0).unwrap(), 1024);
    }
}
