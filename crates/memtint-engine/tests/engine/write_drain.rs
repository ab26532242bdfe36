//! When the controller turns to writes while no read waits: at once (`write_idle_drain_min` = 1,
//! Ramulator's rule), or only once enough writes wait (gem5: above the low watermark) or the
//! oldest has waited `write_idle_drain_timeout` cycles, so a short tail of writes still drains;
//! and how long a drain lasts (`write_min_per_switch`). Event skipping must wake for the
//! timeout: `randomized.rs` compares it with cycle-by-cycle runs.

use crate::common::*;
use memtint_engine::dram_sim::DramSimOptions;
use serde_json::json;

const TIMEOUT: u64 = 500;

/// Cycles until every request of `reqs` has completed (all enter at cycle 0).
fn end_cycle(min: usize, reqs: Vec<memtint_engine::trace::DramRequest>) -> (u64, u64) {
    let cfg =
        machine("ddr4-2400", json!({"controller": {"refresh": "none", "write_idle_drain_min": min, "write_idle_drain_timeout": TIMEOUT}}));
    let n = reqs.len();
    let (mem, totals) = run_requests(&cfg, reqs, DramSimOptions::new(n));
    assert_eq!(totals.requests, n as u64);
    (totals.dram_cycles, mem.channels()[0].stats().write_mode_switches)
}

/// Writes to distinct rows of distinct banks (`i` selects the bank through the row bits' neighbours).
fn writes(n: u64) -> Vec<memtint_engine::trace::DramRequest> {
    (0..n).map(|i| write(i << 20)).collect()
}

#[test]
fn a_lone_write_waits_for_the_timeout_when_the_minimum_is_not_reached() {
    let (at_once, _) = end_cycle(1, writes(1));
    let (waited, switches) = end_cycle(4, writes(1));
    // Immediately: the write may issue after the front-end latency (1 cycle); with the
    // minimum unmet it issues when it has waited out the timeout.
    assert_eq!(waited - at_once, TIMEOUT - 1, "at once {at_once}, waited {waited}");
    assert_eq!(switches, 1);
}

#[test]
fn enough_writes_drain_at_once() {
    let (at_once, _) = end_cycle(1, writes(4));
    let (min4, _) = end_cycle(4, writes(4));
    assert_eq!(min4, at_once, "four writes reach a minimum of four: no wait");
    let (min5, _) = end_cycle(5, writes(4));
    assert!(min5 >= at_once + TIMEOUT - 1, "four writes under a minimum of five wait for the timeout: {min5} vs {at_once}");
}

#[test]
fn waiting_reads_are_served_before_a_small_batch_of_writes() {
    // Reads and three writes arrive together: with a minimum of four the writes wait for the
    // reads to finish and then for the timeout; the reads finish as early as with no writes.
    let mut reqs = writes(3);
    reqs.extend((0..8).map(|i| read((i << 20) + (1 << 16))));
    let cfg = |min: usize| {
        machine("ddr4-2400", json!({"controller": {"refresh": "none", "write_idle_drain_min": min, "write_idle_drain_timeout": TIMEOUT}}))
    };
    let reads_only: Vec<_> = reqs.iter().filter(|r| !r.is_write).cloned().collect();
    let (mem_r, _) = run_requests(&cfg(4), reads_only, DramSimOptions::new(11));
    let (mem_w, totals) = run_requests(&cfg(4), reqs, DramSimOptions::new(11));
    let max_read = |m: &memtint_engine::memory_system::MemorySystem| m.channels()[0].stats().read_latency.max();
    assert_eq!(max_read(&mem_w), max_read(&mem_r), "reads are not delayed by writes below the minimum");
    assert!(totals.dram_cycles >= TIMEOUT, "the writes drained only after the timeout");
}

#[test]
fn an_impossible_minimum_is_a_clear_error() {
    let m = memtint_engine::config::MachineConfig::load("ddr4-2400")
        .unwrap()
        .with_overrides(&json!({"controller": {"write_handling": "ramulator", "write_idle_drain_min": 33}}))
        .unwrap();
    let err = memtint_engine::config::MemoryConfig::resolve(&m)
        .and_then(|cfg| memtint_engine::memory_system::MemorySystem::new(&cfg).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("write_idle_drain_min") && err.contains("32"), "{err}");
}

/// Cycles until a read and `extra` complete, on one bank (refresh off).
fn read_then(handling: &str, extra: Vec<memtint_engine::trace::DramRequest>) -> (u64, memtint_engine::dram::TimingParams) {
    let cfg = machine("ddr4-2400", json!({"controller": {"refresh": "none", "write_handling": handling}}));
    let mut reqs = vec![read(0)];
    reqs.extend(extra);
    let n = reqs.len();
    let (_, totals) = run_requests(&cfg, reqs, DramSimOptions::new(n));
    (totals.dram_cycles, cfg.timing.clone())
}

/// Ramulator's rule by hand: a read and a write to another row of the same bank arrive together.
/// The read goes first (ACT, RD); with the read queue then empty the write drains at once: PRE
/// once tRAS has passed since the ACT (tRAS > tRCD + tRTP on DDR4-2400), ACT tRP later, WR tRCD
/// after that, data done CWL + tBL later. The read alone is done at ACT + tRCD + CL + tBL.
#[test]
fn ramulator_rule_drains_a_lone_write_as_soon_as_reads_are_gone() {
    let (alone, t) = read_then("ramulator", vec![]);
    let (with_write, _) = read_then("ramulator", vec![write(1 << 20)]);
    assert!(t.tRAS > t.tRCD + t.tRTP);
    let read_done = t.tRCD + t.CL + t.tBL;
    let write_done = t.tRAS + t.tRP + t.tRCD + t.CWL + t.tBL;
    assert_eq!(with_write - alone, write_done - read_done, "alone {alone}, with the write {with_write}");
}

/// The batched rule by hand: the same lone write is fewer than the idle minimum (the low
/// watermark), so it waits out `write_idle_drain_timeout` (1000 cycles from its arrival at 0);
/// the bank is idle by then, so PRE, ACT, WR follow back to back.
#[test]
fn batched_rule_holds_a_lone_write_until_the_timeout() {
    let (alone, t) = read_then("batched", vec![]);
    let (with_write, _) = read_then("batched", vec![write(1 << 20)]);
    let read_done = t.tRCD + t.CL + t.tBL;
    let write_done = 1000 - 1 + t.tRP + t.tRCD + t.CWL + t.tBL;
    assert_eq!(with_write - alone, write_done - read_done, "alone {alone}, with the write {with_write}");
}

/// Write-mode periods (switches) and the slowest read when 6 writes and 8 reads arrive
/// together on a small write queue (8 entries: drain from 4 down to 2).
fn drain_with_minimum(min_per_switch: usize) -> (u64, u64) {
    let cfg = machine(
        "ddr4-2400",
        json!({"controller": {"refresh": "none", "write_queue": 8, "write_high_watermark": 0.5, "write_low_watermark": 0.25,
                              "write_min_per_switch": min_per_switch, "write_idle_drain_timeout": TIMEOUT}}),
    );
    let mut reqs = writes(6);
    reqs.extend((0..8).map(|i| read((i << 20) + (1 << 16))));
    let (mem, _) = run_requests(&cfg, reqs, DramSimOptions::new(14));
    let s = mem.channels()[0].stats();
    (s.write_mode_switches, s.read_latency.max())
}

#[test]
fn a_drain_issues_the_minimum_writes_before_waiting_reads_resume() {
    // No minimum: 4 writes (6 down to the low watermark 2), the reads, then the last 2 writes
    // after the timeout (2 is below the idle minimum, low + 1 = 3): three switches.
    let (switches, read_max_short) = drain_with_minimum(0);
    assert_eq!(switches, 3);
    // A minimum of 6: the first drain empties the queue, the reads follow: two switches, and
    // the reads wait for two more writes.
    let (switches, read_max_long) = drain_with_minimum(6);
    assert_eq!(switches, 2);
    assert!(read_max_long > read_max_short, "{read_max_long} vs {read_max_short}");
}
