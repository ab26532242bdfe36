use super::*;
use crate::workload::CpuRecord;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct VecTrace {
    recs: Vec<CpuRecord>,
    pos: usize,
}

impl VecTrace {
    fn new(recs: Vec<CpuRecord>) -> Self {
        VecTrace { recs, pos: 0 }
    }
}

impl CpuTraceSource for VecTrace {
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        let r = self.recs.get(self.pos).copied();
        self.pos += r.is_some() as usize;
        Ok(r)
    }
    fn rewind(&mut self) -> Result<()> {
        self.pos = 0;
        Ok(())
    }
    fn name(&self) -> &str {
        "vec"
    }
}

fn rec(bubbles: u32, read: u64) -> CpuRecord {
    CpuRecord { bubbles, read, writeback: None }
}

fn cfg(width: u32, rob: u32, mshrs: u32) -> CoreConfig {
    CoreConfig { issue_width: width, rob_size: rob, mshrs, ..CoreConfig::default() }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    Load { at: Cycle, addr: u64, token: u64 },
    Writeback { at: Cycle, addr: u64 },
}

/// Answers by a rule of the request (and nothing else), so two runs that make the same
/// requests get the same answers.
struct RuleMem<F: FnMut(&Req) -> LoadOutcome> {
    rule: F,
    log: Vec<Req>,
    refuse_writebacks_until: Cycle,
    retry_after: u64,
}

impl<F: FnMut(&Req) -> LoadOutcome> RuleMem<F> {
    fn new(rule: F) -> Self {
        RuleMem { rule, log: Vec::new(), refuse_writebacks_until: 0, retry_after: 1 }
    }
}

impl<F: FnMut(&Req) -> LoadOutcome> CoreMemory for RuleMem<F> {
    fn load(&mut self, _core: u32, addr: u64, token: u64, now: Cycle) -> Result<LoadOutcome> {
        let r = Req::Load { at: now, addr, token };
        self.log.push(r);
        Ok((self.rule)(&r))
    }
    fn writeback(&mut self, _core: u32, addr: u64, now: Cycle) -> Result<bool> {
        self.log.push(Req::Writeback { at: now, addr });
        Ok(now >= self.refuse_writebacks_until)
    }
    fn retry_at(&self, _core: u32, now: Cycle) -> Cycle {
        now + self.retry_after
    }
}

fn instant(_: &Req) -> LoadOutcome {
    LoadOutcome::Done { latency: 0 }
}

/// Ticks only at `next_event()`; returns the number of ticks.
fn run_skipping(core: &mut OooCore, trace: &mut dyn CpuTraceSource, mem: &mut dyn CoreMemory, end: Cycle) -> u64 {
    let mut ticks = 0;
    loop {
        let now = core.next_event();
        if now > end {
            break;
        }
        core.tick(now, trace, mem).unwrap();
        ticks += 1;
    }
    core.tick(end, trace, mem).unwrap();
    ticks
}

#[test]
fn ipc_equals_issue_width_on_bubbles_with_instant_loads() {
    let mut core = OooCore::new(0, &cfg(4, 128, 16), 1 << 40).unwrap();
    let mut trace = VecTrace::new(vec![rec(999, 0x40), rec(3, 0x80), rec(0, 0xc0)]);
    let mut mem = RuleMem::new(instant);
    let end = 100_000;
    let ticks = run_skipping(&mut core, &mut trace, &mut mem, end);
    let s = core.stats();
    // Cycle 0 fills the window; every later cycle retires 4.
    assert_eq!(s.retired, 4 * end);
    assert_eq!(s.cycles, end + 1);
    assert!((s.ipc() - 4.0).abs() < 1e-3);
    assert_eq!(s.stall_window_full + s.stall_mshr + s.stall_refused, 0);
    // Event skipping: at most one tick per load, not one per cycle.
    assert!(ticks <= s.loads);
    assert!(ticks < end / 50);
}

/// Width 2, window 4. Cycle 0: load A (misses) and 1 bubble; cycle 1: 2 bubbles, window full;
/// cycles 2..=19 stall; A's data at 20; cycles 20..=22 retire 2 and insert 2 bubbles each;
/// cycle 23 retires 2, inserts the last bubble and issues load B.
#[test]
fn a_missing_load_stalls_a_full_window_exactly_as_computed_by_hand() {
    for exact in [false, true] {
        let mut core = OooCore::new(0, &cfg(2, 4, 16), 1 << 40).unwrap();
        core.exact = exact;
        let mut trace = VecTrace::new(vec![rec(0, 0xA00), rec(10, 0xB00)]);
        let mut mem =
            RuleMem::new(
                |r: &Req| if matches!(r, Req::Load { addr: 0xA00, .. }) { LoadOutcome::Pending } else { LoadOutcome::Done { latency: 0 } },
            );
        core.tick(0, &mut trace, &mut mem).unwrap();
        if !exact {
            assert_eq!(core.next_event(), NEVER, "full window behind a missing load waits for complete");
        }
        core.tick(19, &mut trace, &mut mem).unwrap();
        assert_eq!(core.stats().retired, 0);
        core.complete(0, 20);
        if !exact {
            assert_eq!(core.next_event(), 23);
        }
        core.tick(23, &mut trace, &mut mem).unwrap();
        assert_eq!(mem.log, vec![Req::Load { at: 0, addr: 0xA00, token: 0 }, Req::Load { at: 23, addr: 0xB00, token: 11 }]);
        let s = core.stats();
        assert_eq!((s.cycles, s.retired, s.stall_window_full), (24, 8, 18));
        assert_eq!((s.loads, s.load_misses, s.load_hits), (2, 1, 1));
        assert_eq!((s.records, s.trace_wraps), (3, 1));
        assert_eq!(s.load_latency_sum, 20);
        assert_eq!(core.outstanding_loads(), 0);
    }
}

#[test]
fn retire_target_snapshot_is_frozen_and_the_core_keeps_running() {
    let mut core = OooCore::new(0, &cfg(4, 128, 16), 1000).unwrap();
    let mut trace = VecTrace::new(vec![rec(99, 0x40)]);
    let mut mem = RuleMem::new(instant);
    run_skipping(&mut core, &mut trace, &mut mem, 249);
    assert!(!core.reached_target());
    // 4 instructions retire per cycle from cycle 1: the 1000th retires in cycle 250.
    assert_eq!(core.next_event(), 250);
    run_skipping(&mut core, &mut trace, &mut mem, 5000);
    let snap = *core.target_stats().unwrap();
    assert_eq!((snap.retired, snap.cycles), (1000, 251));
    assert_eq!(snap.loads, 10); // one every 25 cycles, at cycles 24, 49, ..., 249
    assert_eq!(core.stats().retired, 4 * 5000);
    assert_eq!(core.target_stats().unwrap(), &snap);
}

#[test]
fn a_short_trace_wraps_around() {
    let mut core = OooCore::new(0, &cfg(4, 128, 16), 1 << 40).unwrap();
    let mut trace = VecTrace::new(vec![rec(5, 0x40), rec(2, 0x80)]);
    let mut mem = RuleMem::new(instant);
    run_skipping(&mut core, &mut trace, &mut mem, 1000);
    let addrs: Vec<u64> = mem.log.iter().map(|r| if let Req::Load { addr, .. } = r { *addr } else { 0 }).collect();
    assert!(addrs.len() > 100);
    assert!(addrs.chunks(2).all(|c| c[0] == 0x40 && c.get(1).is_none_or(|&a| a == 0x80)));
    let s = core.stats();
    assert_eq!(s.trace_wraps, (s.records - 1) / 2);
}

#[test]
fn a_trace_with_no_records_is_an_error() {
    let mut core = OooCore::new(0, &CoreConfig::default(), 100).unwrap();
    let mut mem = RuleMem::new(instant);
    let err = core.tick(0, &mut VecTrace::new(vec![]), &mut mem).unwrap_err();
    assert!(err.to_string().contains("no records"), "{err}");
}

#[test]
fn bad_core_settings_are_errors() {
    assert!(OooCore::new(0, &CoreConfig::default(), 0).is_err());
    assert!(OooCore::new(0, &cfg(0, 128, 16), 10).is_err());
}

#[test]
fn refused_requests_are_retried_until_accepted() {
    // Loads are refused before cycle 5 and retried every cycle; the writeback is refused before
    // cycle 9, retried at 6 (the next cycle), then 3 cycles later.
    let mut core = OooCore::new(0, &cfg(4, 128, 16), 1 << 40).unwrap();
    let mut trace = VecTrace::new(vec![CpuRecord { bubbles: 0, read: 0x40, writeback: Some(0x1000) }, rec(1000, 0x80)]);
    let mut mem = RuleMem::new(|r: &Req| match r {
        Req::Load { at, .. } if *at < 5 => LoadOutcome::Refused,
        _ => LoadOutcome::Done { latency: 0 },
    });
    mem.refuse_writebacks_until = 9;
    run_skipping(&mut core, &mut trace, &mut mem, 5);
    mem.retry_after = 3;
    run_skipping(&mut core, &mut trace, &mut mem, 20);
    let at: Vec<(char, Cycle)> = mem
        .log
        .iter()
        .map(|r| match *r {
            Req::Load { at, .. } => ('L', at),
            Req::Writeback { at, .. } => ('W', at),
        })
        .collect();
    assert_eq!(at, vec![('L', 0), ('L', 1), ('L', 2), ('L', 3), ('L', 4), ('L', 5), ('W', 5), ('W', 6), ('W', 9)]);
    let s = core.stats();
    assert_eq!((s.refused_loads, s.refused_writebacks, s.writebacks), (5, 2, 1));
    // Cycles 0..=4 inserted nothing, nor did cycles 6..=8 while the writeback waited.
    assert_eq!(s.stall_refused, 5 + 3);
}

#[test]
fn the_core_mshr_limit_holds_back_the_next_load() {
    let mut core = OooCore::new(0, &cfg(4, 128, 2), 1 << 40).unwrap();
    let mut trace = VecTrace::new(vec![rec(0, 0x40), rec(0, 0x80), rec(0, 0xc0)]);
    let mut mem = RuleMem::new(|_: &Req| LoadOutcome::Pending);
    run_skipping(&mut core, &mut trace, &mut mem, 50);
    assert_eq!(mem.log.len(), 2);
    assert_eq!(core.next_event(), NEVER);
    assert_eq!(core.stats().stall_mshr, 50); // cycles 1..=50
                                             // The MSHR frees at cycle 60, not when the driver tells the (lazy) core about it.
    core.complete(0, 60);
    assert_eq!(core.next_event(), 60);
    assert_eq!(core.stats().stall_mshr, 59);
    core.tick(60, &mut trace, &mut mem).unwrap();
    assert_eq!(mem.log[2], Req::Load { at: 60, addr: 0xc0, token: 2 });
}

// ---- Event skipping equals cycle-by-cycle execution ----

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[derive(Clone, Copy, Debug)]
struct MemRules {
    seed: u64,
    refuse_pct: u64,
    pending_pct: u64,
    max_latency: u64,
    max_delay: u64,
    wb_refuse_pct: u64,
    max_retry: u64,
}

/// Random but reproducible memory: every answer is a hash of the request and its cycle.
struct RandomMem {
    rules: MemRules,
    log: Vec<Req>,
    due: BinaryHeap<Reverse<(Cycle, u64)>>,
    driver_now: Cycle,
}

impl RandomMem {
    fn h(&self, a: u64, b: u64) -> u64 {
        mix(self.rules.seed ^ mix(a) ^ b.rotate_left(29))
    }
}

impl CoreMemory for RandomMem {
    fn load(&mut self, _core: u32, addr: u64, token: u64, now: Cycle) -> Result<LoadOutcome> {
        assert_eq!(now, self.driver_now, "memory called at a cycle the driver did not tick");
        self.log.push(Req::Load { at: now, addr, token });
        let (r, q) = (self.h(addr, now), &self.rules);
        Ok(if r % 100 < q.refuse_pct {
            LoadOutcome::Refused
        } else if (r >> 8) % 100 < q.pending_pct {
            self.due.push(Reverse((now + 1 + (r >> 16) % q.max_delay, token)));
            LoadOutcome::Pending
        } else {
            LoadOutcome::Done { latency: (r >> 16) % (q.max_latency + 1) }
        })
    }
    fn writeback(&mut self, _core: u32, addr: u64, now: Cycle) -> Result<bool> {
        assert_eq!(now, self.driver_now);
        self.log.push(Req::Writeback { at: now, addr });
        Ok(self.h(addr ^ 1, now) % 100 >= self.rules.wb_refuse_pct)
    }
    fn retry_at(&self, _core: u32, now: Cycle) -> Cycle {
        now + 1 + self.h(now, 7) % (self.rules.max_retry + 1)
    }
}

/// Runs to `end` ticking every cycle (`exact`, all cycles through `full_step`) or only at
/// events, delivering each completion at its cycle. With an odd seed the skipping driver also
/// ticks at every completion, before the core's event (which must change nothing).
/// `barrier = (every, wait)`: every `every` retired instructions the core drains, halts and is
/// released `wait` cycles after its window emptied, as the multicore driver's barriers do.
fn run_random(
    recs: &[CpuRecord],
    config: &CoreConfig,
    target: u64,
    rules: MemRules,
    end: Cycle,
    exact: bool,
    barrier: Option<(u64, u64)>,
) -> (CoreStats, Option<CoreStats>, Vec<Req>, u64) {
    let mut core = OooCore::new(0, config, target).unwrap();
    core.exact = exact;
    let (every, wait) = barrier.unwrap_or((0, 0));
    let mut next_pause = if every > 0 && core.pause_at(every) { every } else { NEVER };
    let (mut draining, mut release_at) = (false, NEVER);
    let mut trace = VecTrace::new(recs.to_vec());
    let mut mem = RandomMem { rules, log: Vec::new(), due: BinaryHeap::new(), driver_now: 0 };
    let mut now = 0;
    let mut ticks = 0;
    let early_ticks = rules.seed & 1 == 1;
    loop {
        mem.driver_now = now;
        let mut delivered = false;
        while let Some(&Reverse((at, token))) = mem.due.peek() {
            if at > now {
                break;
            }
            mem.due.pop();
            core.complete(token, at);
            delivered = true;
        }
        if release_at <= now {
            core.release(release_at);
            release_at = NEVER;
            next_pause = next_pause.saturating_add(every);
            if next_pause >= target || !core.pause_at(next_pause) {
                next_pause = NEVER;
            }
        }
        let event = core.next_event() <= now;
        if exact || event || (early_ticks && delivered) {
            core.tick(now, &mut trace, &mut mem).unwrap();
            ticks += 1;
        }
        // Barrier steps only at the core's events, where both drivers tick.
        if event {
            if core.take_pause() {
                draining = true;
                core.start_drain(now);
            }
            if draining && core.is_drained() {
                draining = false;
                core.halt();
                release_at = core.cycle() + wait;
            }
        }
        if now >= end {
            break;
        }
        let next = if exact {
            now + 1
        } else {
            let due = mem.due.peek().map_or(NEVER, |r| r.0 .0);
            core.next_event().min(due).min(end).min(release_at)
        };
        assert!(next > now);
        now = next;
    }
    core.tick(end, &mut trace, &mut mem).unwrap();
    (core.stats(), core.target_stats().copied(), mem.log, ticks)
}

fn record() -> impl Strategy<Value = CpuRecord> {
    (prop_oneof![0u32..6, 0u32..40, 0u32..400], 0u64..64, proptest::option::weighted(0.3, 0u64..64))
        .prop_map(|(bubbles, r, wb)| CpuRecord { bubbles, read: r * 64, writeback: wb.map(|w| 0x10_0000 + w * 64) })
}

fn mem_rules() -> impl Strategy<Value = MemRules> {
    // Retries up to thousands of cycles: a thread in the kernel (a page fault) empties its window.
    (any::<u64>(), 0u64..30, 0u64..90, 0u64..60, 1u64..300, 0u64..40, prop_oneof![0u64..6, 0u64..3000]).prop_map(
        |(seed, refuse_pct, pending_pct, max_latency, max_delay, wb_refuse_pct, max_retry)| MemRules {
            seed,
            refuse_pct,
            pending_pct,
            max_latency,
            max_delay,
            wb_refuse_pct,
            max_retry,
        },
    )
}

/// The same run cycle by cycle and skipping to events: the same requests at the same cycles and
/// the same statistics.
fn skipping_equals_exact(
    recs: &[CpuRecord],
    c: &CoreConfig,
    target: u64,
    rules: MemRules,
    end: Cycle,
    barrier: Option<(u64, u64)>,
) -> Result<(), TestCaseError> {
    let (s1, t1, log1, _) = run_random(recs, c, target, rules, end, true, barrier);
    let (s2, t2, log2, _) = run_random(recs, c, target, rules, end, false, barrier);
    prop_assert_eq!(log1, log2, "same requests at the same cycles");
    prop_assert_eq!(s1, s2);
    prop_assert_eq!(t1, t2);
    Ok(())
}

proptest! {
    #[test]
    fn event_skipping_equals_cycle_by_cycle_execution(
        recs in proptest::collection::vec(record(), 1..20),
        width in 1u32..7,
        rob in 1u32..48,
        mshrs in 1u32..8,
        target in 1u64..4000,
        rules in mem_rules(),
        end in 1u64..3000,
    ) {
        skipping_equals_exact(&recs, &cfg(width, rob, mshrs), target, rules, end, None)?;
    }
}

proptest! {
    /// Barriers (`pause_at`, drain, `halt`, `release`) leave the look-ahead exact.
    #[test]
    fn barriers_agree_between_event_skipping_and_cycle_by_cycle(
        recs in proptest::collection::vec(record(), 1..20),
        width in 1u32..7,
        rob in 1u32..48,
        mshrs in 1u32..8,
        target in 1u64..4000,
        rules in mem_rules(),
        end in 1u64..3000,
        every in 1u64..600,
        wait in 0u64..80,
    ) {
        skipping_equals_exact(&recs, &cfg(width, rob, mshrs), target, rules, end, Some((every, wait)))?;
    }
}

/// A pause stops the core's progress at the barrier: nothing is inserted while it waits, and
/// the statistics count the wait off the core.
#[test]
fn a_core_at_a_barrier_inserts_nothing_until_released() {
    let recs = vec![rec(3, 0x40), rec(5, 0x80)];
    let c = cfg(4, 32, 4);
    let rules = MemRules { seed: 2, refuse_pct: 0, pending_pct: 50, max_latency: 20, max_delay: 100, wb_refuse_pct: 0, max_retry: 0 };
    let (free, _, _, _) = run_random(&recs, &c, 100_000, rules, 2000, false, None);
    let (held, _, _, _) = run_random(&recs, &c, 100_000, rules, 2000, false, Some((200, 500)));
    // Each barrier costs a drain and 500 cycles off the core: fewer retired by the same cycle.
    assert!(held.retired + 400 < free.retired, "{} retired with barriers, {} without", held.retired, free.retired);
    assert!(held.cycles < 2000 - 500, "waits are off the core: {} cycles on it", held.cycles);
    assert!(held.drain_cycles > 0);
}

#[test]
fn event_skipping_ticks_far_fewer_times_on_memory_bound_runs() {
    let recs: Vec<_> = (0..50).map(|i| rec(200 + i, i as u64 * 64)).collect();
    let rules = MemRules { seed: 1, refuse_pct: 0, pending_pct: 100, max_latency: 0, max_delay: 300, wb_refuse_pct: 0, max_retry: 0 };
    let c = cfg(4, 128, 16);
    let (s1, _, _, ticks_exact) = run_random(&recs, &c, 1000, rules, 100_000, true, None);
    let (s2, _, _, ticks_fast) = run_random(&recs, &c, 1000, rules, 100_000, false, None);
    assert_eq!(s1, s2);
    assert_eq!(ticks_exact, 100_001);
    assert!(ticks_fast < s2.loads * 2 + 2, "{ticks_fast} ticks for {} loads", s2.loads);
}

/// A synthetic trace generated on the fly.
struct Synthetic {
    i: u64,
    n: u64,
}

impl CpuTraceSource for Synthetic {
    fn next_record(&mut self) -> Result<Option<CpuRecord>> {
        if self.i == self.n {
            return Ok(None);
        }
        self.i += 1;
        let r = mix(self.i);
        Ok(Some(CpuRecord {
            bubbles: (r % 20) as u32,
            read: (r >> 8) & !63,
            writeback: if r.is_multiple_of(4) { Some((r >> 20) & !63) } else { None },
        }))
    }
    fn rewind(&mut self) -> Result<()> {
        self.i = 0;
        Ok(())
    }
    fn name(&self) -> &str {
        "synthetic"
    }
}

/// `cargo test --release -p memtint-engine million_record -- --ignored --nocapture`
#[test]
#[ignore]
fn million_record_trace_with_instant_loads_runs_in_well_under_a_second() {
    struct FixedLatency(u64);
    impl CoreMemory for FixedLatency {
        fn load(&mut self, _: u32, _: u64, _: u64, _: Cycle) -> Result<LoadOutcome> {
            Ok(LoadOutcome::Done { latency: self.0 })
        }
        fn writeback(&mut self, _: u32, _: u64, _: Cycle) -> Result<bool> {
            Ok(true)
        }
    }
    let n = 1_000_000;
    // Instant loads (the bar), then every load an LLC hit of 31 cycles (for reference).
    for latency in [0, 31] {
        let mut core = OooCore::new(0, &CoreConfig::default(), 1 << 40).unwrap();
        let mut trace = Synthetic { i: 0, n };
        let mut mem = FixedLatency(latency);
        let start = std::time::Instant::now();
        while core.stats().records <= n {
            let now = core.next_event();
            core.tick(now, &mut trace, &mut mem).unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let s = core.stats();
        println!(
            "load latency {latency}: {} records, {} instructions, {} cycles (IPC {:.2}) in {:.3} s: \
             {:.1} M instructions/s, {:.1} M records/s",
            s.records,
            s.retired,
            s.cycles,
            s.ipc(),
            secs,
            s.retired as f64 / secs / 1e6,
            s.records as f64 / secs / 1e6
        );
        if latency == 0 {
            assert!(secs < 1.0);
        }
    }
}
