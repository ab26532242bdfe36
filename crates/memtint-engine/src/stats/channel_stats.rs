//! Counters one channel controller keeps.

use crate::dram::Command;
use crate::stats::{LatencyHistogram, RowCauseCounts};
use crate::{Cycle, NEVER};

/// Per-bank counters (index: flat bank within the channel).
#[derive(Clone, Debug, Default)]
pub struct BankCounters {
    pub commands: [u64; Command::COUNT],
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    /// The misses and conflicts by who left the bank so (`RowCause`).
    pub row_causes: RowCauseCounts,
}

#[derive(Clone, Debug)]
pub struct ChannelStats {
    pub banks: Vec<BankCounters>,
    /// Per rank: PREA and REF are rank-wide.
    pub rank_commands: Vec<[u64; Command::COUNT]>,
    pub reads: u64,
    pub writes: u64,
    pub read_latency: LatencyHistogram,
    /// Integral of queue length over time (for mean occupancy).
    pub read_queue_integral: u128,
    pub write_queue_integral: u128,
    /// Cycles the data bus carried data.
    pub busy_data_cycles: u64,
    pub write_mode_switches: u64,
    /// Reads and writes whose wait overlapped their rank's refresh (blocked while it waited
    /// for or ran a REF).
    pub refresh_met: [u64; 2],
    pub last_cycle: Cycle,
    /// Per rank: cycles with at least one bank open before the current such period (active
    /// standby, for background energy), and when the current one began (`NEVER`: all closed).
    rank_active_cycles: Vec<u64>,
    rank_open_since: Vec<Cycle>,
    /// Per rank: where its last active period ended, or a pending implicit precharge (RDA/WRA)
    /// ends it: a bank auto-precharging stays open until then.
    rank_busy_until: Vec<Cycle>,
    /// Per rank: power-downs entered, cycles powered down with a bank open (active power-down)
    /// and with every bank precharged, and the current one's start and kind (`NEVER`: up).
    pub rank_power_downs: Vec<u64>,
    rank_power_down_cycles: Vec<[u64; 2]>,
    rank_down_since: Vec<(Cycle, bool)>,
}

impl ChannelStats {
    pub fn new(ranks: u32, banks_per_channel: u32) -> Self {
        ChannelStats {
            banks: vec![BankCounters::default(); banks_per_channel as usize],
            rank_commands: vec![[0; Command::COUNT]; ranks as usize],
            reads: 0,
            writes: 0,
            read_latency: LatencyHistogram::default(),
            read_queue_integral: 0,
            write_queue_integral: 0,
            busy_data_cycles: 0,
            write_mode_switches: 0,
            refresh_met: [0, 0],
            last_cycle: 0,
            rank_active_cycles: vec![0; ranks as usize],
            rank_open_since: vec![NEVER; ranks as usize],
            rank_busy_until: vec![0; ranks as usize],
            rank_power_downs: vec![0; ranks as usize],
            rank_power_down_cycles: vec![[0, 0]; ranks as usize],
            rank_down_since: vec![(NEVER, false); ranks as usize],
        }
    }

    /// The first bank of `rank` opened at `now` (the rank's open-bank count left 0).
    #[inline]
    pub fn rank_opened(&mut self, rank: usize, now: Cycle) {
        // Counted already up to the last period's end, if that lies ahead.
        self.rank_open_since[rank] = now.max(self.rank_busy_until[rank]);
    }

    /// The last open bank of `rank` closed at `now` (its precharge, or an auto-precharge's
    /// column command: its implicit precharge is `rank_auto_precharge`'s).
    #[inline]
    pub fn rank_closed(&mut self, rank: usize, now: Cycle) {
        let since = std::mem::replace(&mut self.rank_open_since[rank], NEVER);
        let end = now.max(self.rank_busy_until[rank]);
        self.rank_active_cycles[rank] += end.saturating_sub(since);
        self.rank_busy_until[rank] = end;
    }

    /// A bank of `rank` precharges by itself at `at` (RDA, WRA): open until then.
    #[inline]
    pub fn rank_auto_precharge(&mut self, rank: usize, at: Cycle) {
        self.rank_busy_until[rank] = self.rank_busy_until[rank].max(at);
    }

    /// Cycles `rank` had a bank open, up to `end`.
    pub fn rank_active_cycles(&self, rank: usize, end: Cycle) -> u64 {
        let open = self.rank_open_since[rank];
        self.rank_active_cycles[rank] + if open == NEVER { 0 } else { end.saturating_sub(open) }
    }

    /// `rank` powered down at `now`, with a bank open (`active`) or all precharged.
    pub fn rank_powered_down(&mut self, rank: usize, now: Cycle, active: bool) {
        self.rank_power_downs[rank] += 1;
        self.rank_down_since[rank] = (now, active);
    }

    /// `rank` left power-down at `now`.
    pub fn rank_powered_up(&mut self, rank: usize, now: Cycle) {
        let (since, active) = std::mem::replace(&mut self.rank_down_since[rank], (NEVER, false));
        self.rank_power_down_cycles[rank][!active as usize] += now.saturating_sub(since);
    }

    /// Cycles `rank` spent powered down up to `end`: (with a bank open, with all precharged).
    pub fn rank_power_down_cycles(&self, rank: usize, end: Cycle) -> (u64, u64) {
        let [mut active, mut precharged] = self.rank_power_down_cycles[rank];
        let (since, is_active) = self.rank_down_since[rank];
        if since != NEVER {
            let open = end.saturating_sub(since);
            if is_active {
                active += open;
            } else {
                precharged += open;
            }
        }
        (active, precharged)
    }

    /// Total count of each command on this channel.
    pub fn command_totals(&self) -> [u64; Command::COUNT] {
        let mut t = [0; Command::COUNT];
        for b in &self.banks {
            for (a, c) in t.iter_mut().zip(b.commands) {
                *a += c;
            }
        }
        for r in &self.rank_commands {
            for (a, c) in t.iter_mut().zip(r) {
                *a += c;
            }
        }
        t
    }
}
