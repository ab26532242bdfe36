//! Bank-level parallelism (BLP) of one source's DRAM reads: the mean number of banks holding at
//! least one of its reads, averaged over the DRAM cycles in which it has any read in a
//! controller queue or in service (the definition of PAR-BS §2.2 and TCM §3.1, measured rather
//! than estimated). Writes are not counted: they leave the core's critical path.
//!
//! Events must come in non-decreasing DRAM time (the driver's order); the time-weighted sums
//! are exact, not sampled.

use crate::Cycle;
use serde::Serialize;

/// The running integrals; copied into a core's statistics when it reaches its target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BankParallelismCounters {
    /// DRAM cycles with at least one read of this source in memory.
    pub busy_cycles: u64,
    /// Sum over those cycles of the number of banks holding one of its reads.
    pub bank_cycles: u64,
}

impl BankParallelismCounters {
    pub fn since(&self, earlier: &Self) -> Self {
        BankParallelismCounters { busy_cycles: self.busy_cycles - earlier.busy_cycles, bank_cycles: self.bank_cycles - earlier.bank_cycles }
    }

    pub fn add(&mut self, o: &Self) {
        self.busy_cycles += o.busy_cycles;
        self.bank_cycles += o.bank_cycles;
    }

    /// Mean banks busy with this source's reads while any is (0.0 when it had none).
    pub fn bank_level_parallelism(&self) -> f64 {
        if self.busy_cycles == 0 {
            0.0
        } else {
            self.bank_cycles as f64 / self.busy_cycles as f64
        }
    }
}

/// Reads in memory per bank for one source, and the integrals so far.
#[derive(Clone, Debug, Default)]
pub struct BankParallelism {
    /// Indexed by global bank id (grown on first use).
    reads_in_bank: Vec<u32>,
    /// Banks with at least one read.
    busy_banks: u64,
    last: Cycle,
    counters: BankParallelismCounters,
}

impl BankParallelism {
    fn advance(&mut self, now: Cycle) {
        self.counters = self.counters_at(now);
        self.last = now.max(self.last);
    }

    /// A read of this source entered `bank`'s controller queue at DRAM cycle `now`.
    pub fn enter(&mut self, bank: u32, now: Cycle) {
        self.advance(now);
        let b = bank as usize;
        if b >= self.reads_in_bank.len() {
            self.reads_in_bank.resize(b + 1, 0);
        }
        self.busy_banks += (self.reads_in_bank[b] == 0) as u64;
        self.reads_in_bank[b] += 1;
    }

    /// A read of this source to `bank` finished at DRAM cycle `now`.
    pub fn leave(&mut self, bank: u32, now: Cycle) {
        self.advance(now);
        match self.reads_in_bank.get_mut(bank as usize) {
            Some(n) if *n > 0 => {
                *n -= 1;
                self.busy_banks -= (*n == 0) as u64;
            }
            _ => debug_assert!(false, "read left bank {bank} it never entered"),
        }
    }

    /// The integrals up to DRAM cycle `now`.
    pub fn counters_at(&self, now: Cycle) -> BankParallelismCounters {
        let mut c = self.counters;
        let now = now.max(self.last);
        if self.busy_banks > 0 {
            c.busy_cycles += now - self.last;
            c.bank_cycles += self.busy_banks * (now - self.last);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_overlapping_reads_in_different_banks_give_the_time_weighted_mean() {
        // Bank 0 busy [0, 10), bank 1 busy [5, 20): 5 cycles x1 + 5 x2 + 10 x1 over 20 busy cycles.
        let mut b = BankParallelism::default();
        b.enter(0, 0);
        b.enter(1, 5);
        b.leave(0, 10);
        b.leave(1, 20);
        let c = b.counters_at(20);
        assert_eq!(c, BankParallelismCounters { busy_cycles: 20, bank_cycles: 25 });
        assert!((c.bank_level_parallelism() - 1.25).abs() < 1e-12);
    }

    #[test]
    fn reads_to_one_bank_count_that_bank_once_and_idle_gaps_do_not_count() {
        let mut b = BankParallelism::default();
        b.enter(3, 100);
        b.enter(3, 101);
        b.leave(3, 110);
        b.leave(3, 120);
        // Idle [120, 200).
        b.enter(7, 200);
        b.leave(7, 210);
        let c = b.counters_at(1_000);
        assert_eq!(c, BankParallelismCounters { busy_cycles: 30, bank_cycles: 30 });
        assert_eq!(c.bank_level_parallelism(), 1.0);
        assert_eq!(BankParallelism::default().counters_at(50).bank_level_parallelism(), 0.0);
    }

    #[test]
    fn counters_at_includes_the_open_interval_without_changing_state() {
        let mut b = BankParallelism::default();
        b.enter(0, 0);
        b.enter(1, 0);
        assert_eq!(b.counters_at(10), BankParallelismCounters { busy_cycles: 10, bank_cycles: 20 });
        b.leave(0, 10);
        assert_eq!(b.counters_at(15), BankParallelismCounters { busy_cycles: 15, bank_cycles: 25 });
    }
}
