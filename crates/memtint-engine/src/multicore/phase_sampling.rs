//! Phase-based sampling (`sampling = { mode = "phases" }`): SimPoint's method (Sherwood et al.,
//! "Automatically characterizing large scale program behavior", ASPLOS 2002; the choice of k by
//! the Bayesian information criterion as SimPoint 3.0 does) with SMARTS's statistics, for one
//! program per run.
//!
//! A pre-pass reads the program's trace over the run (after the warm-up) in intervals of
//! `period` instructions and gives each interval a signature. A CPU trace has no basic blocks, so
//! the signature is the memory behaviour SimPoint's basic-block vectors stand in for: the
//! interval's loads spread over `FOOTPRINT_BUCKETS` buckets by a hash of their 4 KiB page (a
//! random projection of its page-access vector, normalised to sum 1), its loads, write-backs
//! and misses of an LLC-sized direct-mapped filter per instruction (each scaled by its largest
//! value over the intervals). Seeded
//! k-means (k-means++ starts) clusters the signatures for every k up to `clusters`; the smallest
//! k whose BIC reaches 90 % of the range of BICs seen is kept (SimPoint's rule). The clusters are
//! the phases.
//!
//! SimPoint simulates one representative interval per phase and gives no error. Here each phase
//! is a stratum of a stratified random sample (Cochran, Sampling Techniques, ch. 5): a phase
//! holding a share W_h of the intervals gets n_h = max(2, round(min_units x W_h)) units (no
//! more than its intervals), each in a distinct interval drawn at random (seeded by the OS seed),
//! at a random point of it, after `warming` detailed instructions, with functional warming of
//! the caches and page tables in between as periodic sampling does. The CPI estimate is
//! sum_h W_h CPI_h (CPI_h its units' cycles over their instructions), and its variance
//! sum_h W_h^2 s_h^2 / n_h (s_h from the units' linearised residuals; a phase with one unit
//! borrows the largest s_h of the others), so every phase, however rare, is measured, and the
//! interval is the stratified one. A rare phase of expensive loads, which a periodic sample can
//! step over, is its own stratum.
//!
//! One program per run: the phases of co-scheduled programs do not line up, and periodic
//! sampling keeps their relative progress (`sampling.rs`); a multicore run asking for phases is
//! refused by key.

use super::multicore_sim::{next_wrapping, Progress, RunEnd, Sim, ThreadDef};
use super::sampling::{advance, segment, skip_records, take_record_rest, warm_in_turns, LoopClock, Phase, SampledRun, SamplingSpec, Unit};
use crate::cpu::ClockRatio;
use crate::dram_sim::report::EnergyMeter;
use crate::error::Result;
use crate::workload::CpuTraceSource;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

/// Buckets of the footprint signature (SimPoint projects basic-block vectors to 15 dimensions).
pub const FOOTPRINT_BUCKETS: usize = 16;

/// Default most phases tried (SimPoint's usual maxK is 10 to 30).
pub const DEFAULT_CLUSTERS: u64 = 10;

/// The share of the range of BIC scores the chosen k reaches (SimPoint's 0.9).
const BIC_SHARE: f64 = 0.9;

/// Lloyd iterations at most, per k.
const KMEANS_ITERATIONS: usize = 100;

/// Dimensions of a signature: the footprint buckets; loads, write-backs and misses of the
/// miss filter per instruction.
const DIMS: usize = FOOTPRINT_BUCKETS + 3;

/// Lines of the miss filter: a direct-mapped table of 8 MiB of 64-byte lines, an LLC's size,
/// whose misses per instruction stand for the interval's memory intensity (the trace alone
/// cannot say which loads the caches catch).
const FILTER_LINES: usize = 1 << 17;

/// One interval's signature.
pub type Signature = [f64; DIMS];

/// The phases of one program over a run and the units chosen in them.
#[derive(Clone, Debug, PartialEq)]
pub struct PhasePlan {
    /// Instructions per interval (`period`).
    pub interval: u64,
    /// Each interval's phase.
    pub labels: Vec<u32>,
    /// Phases kept (k).
    pub phases: usize,
    /// Each phase's share of the intervals (W_h).
    pub weights: Vec<f64>,
    /// BIC of each k tried (1, 2, ...).
    pub bic: Vec<f64>,
    /// Units, by position: (instruction where the unit's detailed warm-up starts, its phase).
    pub units: Vec<(u64, u32)>,
}

/// Interval signatures of `trace` over `instructions` after `warmup` (read whole records, as
/// the warm-up and the fast-forwards do).
pub fn signatures(trace: &mut dyn CpuTraceSource, warmup: u64, instructions: u64, interval: u64) -> Result<Vec<Signature>> {
    skip_records(trace, warmup)?;
    let n = (instructions / interval) as usize;
    let mut raw = Vec::with_capacity(n);
    let mut filter = vec![u64::MAX; FILTER_LINES];
    let mut done = 0u64;
    for i in 0..n as u64 {
        let end = (i + 1) * interval;
        let mut s = [0f64; DIMS];
        let (mut loads, mut writebacks, mut misses, start) = (0u64, 0u64, 0u64, done);
        while done < end {
            let r = next_wrapping(trace)?;
            s[bucket(r.read)] += 1.0;
            loads += 1;
            writebacks += r.writeback.is_some() as u64;
            let line = r.read >> 6;
            let slot = &mut filter[(line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FILTER_LINES.trailing_zeros())) as usize];
            misses += (*slot != line) as u64;
            *slot = line;
            done += r.instructions();
        }
        let length = (done - start).max(1) as f64;
        if loads > 0 {
            s[..FOOTPRINT_BUCKETS].iter_mut().for_each(|v| *v /= loads as f64);
        }
        s[FOOTPRINT_BUCKETS] = loads as f64 / length;
        s[FOOTPRINT_BUCKETS + 1] = writebacks as f64 / length;
        s[FOOTPRINT_BUCKETS + 2] = misses as f64 / length;
        raw.push(s);
    }
    for d in FOOTPRINT_BUCKETS..DIMS {
        let most = raw.iter().map(|s| s[d]).fold(0.0, f64::max);
        if most > 0.0 {
            raw.iter_mut().for_each(|s| s[d] /= most);
        }
    }
    Ok(raw)
}

fn bucket(vaddr: u64) -> usize {
    ((vaddr >> 12).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FOOTPRINT_BUCKETS.trailing_zeros())) as usize
}

fn distance2(a: &[f64; DIMS], b: &[f64; DIMS]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Seeded k-means (k-means++ starts, Lloyd's iterations): each point's cluster and the sum of
/// squared distances to the centres.
pub fn kmeans(points: &[[f64; DIMS]], k: usize, rng: &mut ChaCha8Rng) -> (Vec<u32>, f64) {
    let mut centres: Vec<[f64; DIMS]> = vec![points[rng.gen_range(0..points.len())]];
    while centres.len() < k {
        let d: Vec<f64> = points.iter().map(|p| centres.iter().map(|c| distance2(p, c)).fold(f64::INFINITY, f64::min)).collect();
        let total: f64 = d.iter().sum();
        if total <= 0.0 {
            break; // fewer distinct points than k
        }
        let mut x = rng.gen::<f64>() * total;
        let pick = d.iter().position(|&v| {
            x -= v;
            x < 0.0
        });
        centres.push(points[pick.unwrap_or(points.len() - 1)]);
    }
    let mut labels = vec![0u32; points.len()];
    for iteration in 0..KMEANS_ITERATIONS {
        let mut changed = false;
        for (p, label) in points.iter().zip(labels.iter_mut()) {
            let best = (0..centres.len())
                .min_by(|&a, &b| distance2(p, &centres[a]).total_cmp(&distance2(p, &centres[b])))
                .expect("a centre") as u32;
            changed |= best != *label;
            *label = best;
        }
        if !changed && iteration > 0 {
            break;
        }
        let mut sums = vec![[0f64; DIMS]; centres.len()];
        let mut counts = vec![0usize; centres.len()];
        for (p, &l) in points.iter().zip(&labels) {
            counts[l as usize] += 1;
            sums[l as usize].iter_mut().zip(p).for_each(|(s, v)| *s += v);
        }
        for (c, (s, &n)) in centres.iter_mut().zip(sums.iter().zip(&counts)) {
            if n > 0 {
                c.iter_mut().zip(s).for_each(|(c, s)| *c = s / n as f64);
            }
        }
    }
    // Clusters left empty are dropped, the labels renumbered in order of first appearance.
    let mut order: Vec<Option<u32>> = vec![None; centres.len()];
    let mut next = 0;
    for l in labels.iter_mut() {
        let slot = &mut order[*l as usize];
        *l = *slot.get_or_insert_with(|| {
            next += 1;
            next - 1
        });
    }
    let mut fresh = vec![[0f64; DIMS]; next as usize];
    let mut counts = vec![0usize; next as usize];
    for (p, &l) in points.iter().zip(&labels) {
        counts[l as usize] += 1;
        fresh[l as usize].iter_mut().zip(p).for_each(|(s, v)| *s += v);
    }
    fresh.iter_mut().zip(&counts).for_each(|(c, &n)| c.iter_mut().for_each(|v| *v /= n as f64));
    let sse = points.iter().zip(&labels).map(|(p, &l)| distance2(p, &fresh[l as usize])).sum();
    (labels, sse)
}

/// The BIC of a clustering under identical spherical Gaussians (Pelleg and Moore's X-means,
/// as SimPoint scores k): the log-likelihood less (parameters / 2) log R.
pub fn bic(labels: &[u32], sse: f64) -> f64 {
    let r = labels.len() as f64;
    let k = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(1);
    let m = DIMS as f64;
    let variance = if r > k as f64 { (sse / (m * (r - k as f64))).max(1e-12) } else { 1e-12 };
    let mut counts = vec![0f64; k];
    labels.iter().for_each(|&l| counts[l as usize] += 1.0);
    let likelihood = counts.iter().filter(|&&n| n > 0.0).map(|&n| n * (n / r).ln()).sum::<f64>()
        - r * m / 2.0 * (2.0 * std::f64::consts::PI * variance).ln()
        - sse / (2.0 * variance);
    let parameters = (k - 1) as f64 + k as f64 * m + 1.0;
    likelihood - parameters / 2.0 * r.ln()
}

/// Phases of the signatures and the units drawn in them (see the module's documentation).
/// `interval` is the run's `period`, the signatures' interval.
pub fn plan(signatures: &[[f64; DIMS]], spec: &SamplingSpec, interval: u64, seed: u64) -> PhasePlan {
    let most = (spec.clusters.unwrap_or(DEFAULT_CLUSTERS) as usize).min(signatures.len()).max(1);
    let mut tried = Vec::new();
    for k in 1..=most {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (k as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let (labels, sse) = kmeans(signatures, k, &mut rng);
        tried.push((bic(&labels, sse), labels));
    }
    let scores: Vec<f64> = tried.iter().map(|t| t.0).collect();
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    let chosen = scores.iter().position(|&s| s >= lo + BIC_SHARE * (hi - lo)).unwrap_or(0);
    let labels = tried.swap_remove(chosen).1;
    let phases = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); phases];
    labels.iter().enumerate().for_each(|(i, &l)| members[l as usize].push(i));
    let total = labels.len() as f64;
    let weights: Vec<f64> = members.iter().map(|m| m.len() as f64 / total).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let room = interval - spec.unit - spec.warming;
    let mut units = Vec::new();
    for (h, m) in members.iter_mut().enumerate() {
        let n = ((spec.min_units as f64 * weights[h]).round() as usize).max(2).min(m.len());
        m.shuffle(&mut rng);
        for &i in &m[..n] {
            let offset = if room > 0 { rng.gen_range(0..=room) } else { 0 };
            units.push((i as u64 * interval + offset, h as u32));
        }
    }
    units.sort_unstable();
    PhasePlan { interval, labels, phases, weights, bic: scores, units }
}

/// Run one program's planned units: functional warming (and skipping, with `functional`) up to
/// each, its detailed warm-up, the unit.
pub(super) fn run(
    sim: &mut Sim,
    threads: &mut [ThreadDef],
    spec: &SamplingSpec,
    plan: &PhasePlan,
    instructions: u64,
    clock: ClockRatio,
    watchdog_cycles: u64,
    meter: &EnergyMeter,
) -> Result<(RunEnd, SampledRun)> {
    debug_assert_eq!(threads.len(), 1, "SamplingSpec::check_run refuses phases for several programs");
    let mut rec = SampledRun::new(spec, plan.interval, instructions, 1);
    sim.hier.set_warm_prefetching(spec.warm_prefetchers);
    rec.strata = vec![plan.weights.clone()];
    // A phase's units are distinct intervals: more than the run has cannot be measured.
    if spec.min_units as usize > plan.labels.len() {
        let floor = spec.unit + spec.warming;
        let remedy = if plan.interval > floor {
            format!("lower sampling.period, to as little as unit + warming = {floor}, for more intervals")
        } else {
            "run more instructions, or shorten sampling.unit or sampling.warming".to_string()
        };
        rec.warnings.push(format!(
            "sampling: sampling.min_units = {} asks for more units than the run has intervals ({} of sampling.period = {} in instructions = {instructions}): {} measured; {remedy}",
            spec.min_units,
            plan.labels.len(),
            plan.interval,
            plan.units.len()
        ));
    }
    rec.phases = Some(json!({
        "interval": plan.interval,
        "intervals": plan.labels.len(),
        "phases": plan.phases,
        "weights": plan.weights,
        "bic": plan.bic,
        "labels": plan.labels,
        "footprint_buckets": FOOTPRINT_BUCKETS,
    }));
    let per_phase: Vec<u64> = (0..plan.phases).map(|h| plan.units.iter().filter(|u| u.1 == h as u32).count().max(1) as u64).collect();
    let mut forwarded = 0u64;
    // The rest of the record a segment or a gap ended inside (`sampling::advance`).
    let mut rest = [None];
    let mut now = LoopClock::default();
    let mut progress = Progress::new(1, watchdog_cycles);
    for &(at, phase) in &plan.units {
        let ahead = at.saturating_sub(forwarded + sim.cores[0].retired());
        let warm = spec.functional.map_or(ahead, |f| f.min(ahead));
        advance(&mut rest[0], threads[0].trace.as_mut(), ahead - warm, |_| Ok(()))?;
        rec.skipped[0] += ahead - warm;
        forwarded += ahead - warm;
        warm_in_turns(&mut sim.hier, threads, &mut rest, &[warm])?;
        rec.warmed[0] += warm;
        forwarded += warm;
        if let Some(r) = rest[0].take() {
            sim.cores[0].put_record_rest(r);
        }
        let position = forwarded + sim.cores[0].retired();
        // Past the unit's point (the last unit's drain ran on into this interval): those
        // instructions ran in detail just before, so they count as its detailed warm-up.
        let warm_up = super::sampling::detailed_warm_up(spec.warming, position, at);
        let size = spec.unit.min(instructions.saturating_sub(position + warm_up)).max(1);
        // The instructions the unit stands for: its phase's share of the run over its units.
        let weight = (plan.weights[phase as usize] * instructions as f64 / per_phase[phase as usize] as f64).round().max(1.0) as u64;
        let before = sim.cores[0].retired();
        if rec.segments > 0 {
            sim.cores[0].resume_at(now.core);
        }
        let mut start = None;
        let mut state = if warm_up > 0 {
            let core = &mut sim.cores[0];
            core.set_target(core.retired() + warm_up);
            Phase::Warming
        } else {
            start = Some((position, sim.cores[0].stats(), sim.hier.core_stats_at(0, now.core)));
            let core = &mut sim.cores[0];
            core.set_target(core.retired() + size);
            Phase::Measuring
        };
        let this_segment = rec.segments;
        let (cycles0, energy0) = (now.core, meter.total_nj(&sim.mem, now.dram));
        let units = &mut rec.units[0];
        segment(sim, threads, clock, &mut now, &mut progress, |sim, c, at| {
            let core = &mut sim.cores[c];
            let snap = *core.target_stats().expect("reached");
            let memory = sim.hier.core_stats_at(c as u32, at);
            match state {
                Phase::Warming => {
                    start = Some((forwarded + snap.retired, snap, memory));
                    core.set_target(snap.retired + size);
                    state = Phase::Measuring;
                    false
                }
                Phase::Measuring => {
                    let (position, core0, mem0) = start.take().expect("started");
                    units.push(Unit {
                        position,
                        segment: this_segment,
                        weight,
                        stratum: phase,
                        core: snap.since(&core0),
                        memory: memory.since(&mem0),
                    });
                    core.clear_target();
                    state = Phase::Done;
                    true
                }
                Phase::Done => true,
            }
        })?;
        rec.detailed[0] += sim.cores[0].retired() - before;
        rest[0] = take_record_rest(sim, 0)?;
        rec.segment_cycles.push(now.core - cycles0);
        if let (Some(e0), Some(e1)) = (energy0, meter.total_nj(&sim.mem, now.dram)) {
            rec.segment_energy_nj.push(e1 - e0);
        }
        rec.segments += 1;
    }
    rec.finish(sim, now.dram);
    Ok((RunEnd { now_dram: now.dram, now_core: now.core, requests: now.requests }, rec))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(v: f64) -> [f64; DIMS] {
        let mut p = [0.0; DIMS];
        p[FOOTPRINT_BUCKETS] = v;
        p
    }

    #[test]
    fn kmeans_separates_two_clear_groups_and_bic_prefers_two() {
        let points: Vec<[f64; DIMS]> = (0..40).map(|i| point(if i % 5 == 0 { 1.0 } else { 0.0 } + (i % 3) as f64 * 0.001)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (labels, sse) = kmeans(&points, 2, &mut rng);
        for (i, &l) in labels.iter().enumerate() {
            assert_eq!(l == labels[0], i % 5 == 0, "point {i}");
        }
        assert!(sse < 1e-3);
        let one = kmeans(&points, 1, &mut ChaCha8Rng::seed_from_u64(1));
        assert!(bic(&labels, sse) > bic(&one.0, one.1));
    }

    #[test]
    fn every_phase_gets_two_units_in_distinct_intervals_and_weights_sum_to_one() {
        // 100 intervals, 5 of them in a rare phase.
        let points: Vec<[f64; DIMS]> = (0..100).map(|i| point(if i % 20 == 7 { 1.0 } else { 0.1 })).collect();
        let spec = SamplingSpec { mode: "phases".into(), period: Some(100_000), min_units: 30, ..SamplingSpec::default() };
        let p = plan(&points, &spec, 100_000, 3);
        assert_eq!(p.phases, 2);
        assert!((p.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let rare = p.labels[7];
        assert!((p.weights[rare as usize] - 0.05).abs() < 1e-12);
        let in_rare: Vec<u64> = p.units.iter().filter(|u| u.1 == rare).map(|u| u.0 / 100_000).collect();
        assert_eq!(in_rare.len(), 2, "a 5 % phase of 30 units rounds to 2");
        assert!(in_rare.iter().all(|&i| i % 20 == 7));
        let mut intervals: Vec<u64> = p.units.iter().map(|u| u.0 / 100_000).collect();
        intervals.dedup();
        assert_eq!(intervals.len(), p.units.len(), "one unit per interval");
        assert!(p.units.iter().all(|u| u.0 % 100_000 <= 100_000 - spec.unit - spec.warming));
        assert_eq!(plan(&points, &spec, 100_000, 3), p, "seeded");
    }
}
