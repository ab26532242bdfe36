//! Counters one channel controller keeps.

use crate::dram::Command;
use crate::stats::{LatencyHistogram, RowCauseCounts};
use crate::Cycle;

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
    pub last_cycle: Cycle,
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
            last_cycle: 0,
        }
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
