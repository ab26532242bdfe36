//! Channel balancing by measured bandwidth, shared by the dynamic policies that partition
//! channels (`dynamic-bpm-plus`, `dynamic-channel-only`; BPM §2.9). Each process's bandwidth is
//! the lines its threads read from DRAM (demand misses and prefetches) and wrote back per ns
//! (the paper's per-thread LLC-miss monitor, as it cannot measure a thread's share of a channel
//! directly, with the prefetches and write-backs beside its misses: the paper's UF is over
//! channel traffic, BUC, which carries all three, and a streaming program's reads are largely
//! its prefetcher's), over the whole window since the channels last changed, so that a decision
//! rests on more than one short epoch and a move is not undone by the next epoch's noise; a
//! channel's load (BUC) is the sum of its processes'.
//! With UF = |BUC1 − BUC2| / min(BUC1, BUC2) (for more channels, (max − min) / min) above
//! `uf_threshold` (the paper's 0.2), processes move from the busiest channel to the idlest, the
//! smallest footprint first (the cheapest to re-colour), while a move narrows the gap; if that
//! leaves UF above the threshold, channels are assigned afresh. Where no assignment found brings
//! UF within the threshold (one process above all others together, the paper's workloads
//! 1''–6'', or loads too coarse to split evenly) every process gets every channel: BPM without
//! channel partitioning, which §2.11 and §6.5 prefer above UF 0.2. Below
//! `min_channel_share` of a channel's peak on average (the paper's ≈1 GB/s per channel on
//! DDR3-1333's 10.7 GB/s, a tenth, scaled to the machine) channel partitioning makes no
//! difference and nothing moves. An assignment stands `hold_epochs` epochs before the step may
//! change it again (1, the default: the paper gives the daemon no hysteresis; more damps a
//! policy that moves programs back and forth, bpm.md §9.5).

use super::EpochView;
use crate::params::Params;
use serde::{Deserialize, Serialize};

/// `[os.dynamic-bpm-plus]` and `[os.dynamic-channel-only]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChannelBalanceParams {
    /// Time between adjustments, ns of simulated time (the paper's 10 s, scaled as `dynamic-bpm`'s).
    pub epoch_ns: f64,
    /// The unbalance factor above which channels are rebalanced (BPM §2.9: 0.2).
    pub uf_threshold: f64,
    /// Mean traffic per channel, as a share of its peak, below which channels are left alone.
    pub min_channel_share: f64,
    /// Epochs an assignment stands, measured all the while, before the step may change it
    /// again (1: at any epoch's end).
    pub hold_epochs: u32,
}

impl Default for ChannelBalanceParams {
    fn default() -> Self {
        ChannelBalanceParams { epoch_ns: 1_000_000.0, uf_threshold: 0.2, min_channel_share: 0.1, hold_epochs: 1 }
    }
}

impl Params for ChannelBalanceParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.epoch_ns.is_finite() && self.epoch_ns >= 1000.0) {
            return Err(("epoch_ns", format!("must be at least 1000 ns, got {}", self.epoch_ns)));
        }
        if !(self.uf_threshold.is_finite() && self.uf_threshold >= 0.0) {
            return Err(("uf_threshold", format!("must be a number >= 0, got {}", self.uf_threshold)));
        }
        if !(0.0..=1.0).contains(&self.min_channel_share) {
            return Err(("min_channel_share", format!("must be between 0 and 1, got {}", self.min_channel_share)));
        }
        if !(1..=1_000_000).contains(&self.hold_epochs) {
            return Err(("hold_epochs", format!("must be from 1 to 1000000 epochs, got {}", self.hold_epochs)));
        }
        Ok(())
    }
}

/// What the channel step read and decided over a run (`dynamic.channel_balance` in the
/// statistics): why channels moved or did not.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ChannelBalanceStats {
    pub uf_threshold: f64,
    /// Epochs by decision: no measure yet (a process has run less than an epoch's time in the window),
    /// too little traffic (below `min_channel_share` of a channel's peak on average), channels
    /// kept (UF within the threshold, or no assignment brings it there and every process already
    /// has every channel), held (an assignment younger than `hold_epochs` that the step would
    /// have changed), channels changed.
    pub unmeasured: u64,
    pub low_traffic: u64,
    pub kept: u64,
    pub held: u64,
    pub changed: u64,
    /// The largest UF read; and at the latest epoch measured, each channel's load (GB/s, the
    /// window's, by the channels the processes' colours lie in, a process in every channel
    /// counted evenly in each) and their UF. Infinite UF (a channel idle beside a busy one) is
    /// JSON null.
    pub uf_max: f64,
    pub loads_gbps: Vec<f64>,
    pub uf: f64,
}

/// The channel step both policies take each epoch: the bandwidth window and the assignment.
pub struct ChannelBalancer {
    pub params: ChannelBalanceParams,
    pub stats: ChannelBalanceStats,
    /// Per process: lines it moved (DRAM reads and write-backs) and ns its threads were charged
    /// in the kernel since the channels last changed (a stall is charged when it starts, whole),
    /// and that window's length, ns.
    lines: Vec<u64>,
    kernel_ns: Vec<f64>,
    window_ns: f64,
    /// Epochs since the channels last changed (or since the start).
    age: u32,
}

impl ChannelBalancer {
    pub fn new(params: ChannelBalanceParams) -> Self {
        let stats = ChannelBalanceStats { uf_threshold: params.uf_threshold, ..Default::default() };
        ChannelBalancer { params, stats, lines: Vec::new(), kernel_ns: Vec::new(), window_ns: 0.0, age: 0 }
    }

    /// The number of channels the colours lie in.
    pub fn channels(v: &EpochView) -> u32 {
        v.colour_channels.iter().copied().max().map_or(1, |c| c + 1)
    }

    /// The end of an epoch: a new assignment of processes to channels, or `None` to keep them.
    pub fn plan(&mut self, v: &EpochView) -> Option<Vec<Channel>> {
        let m = v.monitors;
        let channels = Self::channels(v);
        // Each process's bandwidth from its DRAM reads (demand and prefetch) and write-backs
        // (page copies are not its program's), over the whole window since the channels last
        // changed.
        // A process's bandwidth is over the time its threads ran: the copies of a move stall the
        // mover, which would otherwise look idle and be moved back.
        let n = m.processes.len();
        self.lines.resize(n, 0);
        self.kernel_ns.resize(n, 0.0);
        for (p, mon) in m.processes.iter().enumerate() {
            self.lines[p] += mon.dram_reads + mon.writebacks;
            self.kernel_ns[p] += mon.kernel_ns / mon.threads.max(1) as f64;
        }
        self.window_ns += m.epoch_ns;
        self.age = self.age.saturating_add(1);
        let running: Vec<f64> = self.kernel_ns.iter().map(|k| self.window_ns - k).collect();
        if running.iter().any(|&r| r < self.params.epoch_ns.min(self.window_ns)) {
            // A process has not yet run for an epoch's time in the window (the kernel, such as
            // a move's copies, took the rest): no measure of it yet.
            self.stats.unmeasured += 1;
            return None;
        }
        let bw: Vec<f64> = (0..n).map(|p| (self.lines[p] * m.line_bytes) as f64 / running[p]).collect();
        let current = channels_of(v.colours, v.colour_channels);
        self.stats.loads_gbps = loads(&current, &bw, channels);
        self.stats.uf = unbalance_factor(&self.stats.loads_gbps);
        self.stats.uf_max = self.stats.uf_max.max(self.stats.uf);
        let mean = bw.iter().sum::<f64>() / channels as f64;
        if mean < self.params.min_channel_share * m.channel_peak_gbps {
            self.stats.low_traffic += 1;
            return None;
        }
        let footprint: Vec<u64> = m.processes.iter().map(|p| p.touched_pages).collect();
        let Some(plan) = assign_channels(&current, &bw, &footprint, channels, self.params.uf_threshold) else {
            self.stats.kept += 1;
            return None;
        };
        if self.age < self.params.hold_epochs {
            self.stats.held += 1;
            return None;
        }
        self.stats.changed += 1;
        self.age = 0;
        self.lines.iter_mut().for_each(|n| *n = 0);
        self.kernel_ns.iter_mut().for_each(|k| *k = 0.0);
        self.window_ns = 0.0;
        Some(plan)
    }
}

/// UF of channel loads: |a − b| / min(a, b) for two, (max − min) / min for more; infinite when
/// the idlest carries nothing and another something, 0 when none carries anything.
pub fn unbalance_factor(loads: &[f64]) -> f64 {
    let max = loads.iter().copied().fold(0.0, f64::max);
    let min = loads.iter().copied().fold(f64::INFINITY, f64::min);
    if max <= 0.0 {
        0.0
    } else if min <= 0.0 {
        f64::INFINITY
    } else {
        (max - min) / min
    }
}

/// Where a process's colours lie: one channel, or every channel (no channel partitioning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    One(u32),
    All,
}

/// Each channel's load when processes use `assignment` with bandwidths `bw` (a process in
/// every channel spreads its traffic evenly).
fn loads(assignment: &[Channel], bw: &[f64], channels: u32) -> Vec<f64> {
    let mut out = vec![0.0; channels as usize];
    for (a, &b) in assignment.iter().zip(bw) {
        match *a {
            Channel::One(c) => out[c as usize] += b,
            Channel::All => out.iter_mut().for_each(|l| *l += b / channels as f64),
        }
    }
    out
}

/// The channel step of dynamic BPM+: a new assignment of processes to channels, or `None` to
/// keep `current`. `bw`: each process's bandwidth; `footprint`: its pages. A move goes from the
/// busiest channel to the idlest: of the processes there whose move narrows the gap, the
/// smallest footprint among those that bring UF within `uf_threshold`, else the smallest
/// footprint of all; each process moves at most once an epoch. If no such move brings UF within
/// the threshold, channels are assigned afresh (the busiest process first onto the least
/// loaded, then the same moves), which a swap of two processes may need; and if that leaves UF
/// above the threshold too, every process gets every channel: BPM §2.11 and §6.5 use channel
/// partitioning only where UF can be brought under 0.2, BPM elsewhere.
pub fn assign_channels(current: &[Channel], bw: &[f64], footprint: &[u64], channels: u32, uf_threshold: f64) -> Option<Vec<Channel>> {
    let n = current.len();
    if channels < 2 || n == 0 {
        return None;
    }
    let spread = vec![Channel::All; n];
    let balanced = |plan: &[Channel]| unbalance_factor(&loads(plan, bw, channels)) <= uf_threshold;
    let total: f64 = bw.iter().sum();
    // A hog alone on a channel, everyone else on the others, leaves UF above the threshold
    // (a shortcut: the general test below would find it too).
    let plan = if (0..n).any(|p| bw[p] > (1.0 + uf_threshold) * (total - bw[p]) / (channels - 1) as f64) {
        spread
    } else {
        let plan = balance(current, bw, footprint, channels, uf_threshold);
        if balanced(&plan) {
            plan
        } else if current == spread.as_slice() {
            spread
        } else {
            let fresh = balance(&spread, bw, footprint, channels, uf_threshold);
            if balanced(&fresh) {
                fresh
            } else {
                spread
            }
        }
    };
    (plan != current).then_some(plan)
}

/// `current` with its spread processes given a channel each (the busiest first onto the least
/// loaded), then moved from the busiest channel to the idlest while a move narrows the gap
/// (`assign_channels`).
fn balance(current: &[Channel], bw: &[f64], footprint: &[u64], channels: u32, uf_threshold: f64) -> Vec<Channel> {
    let n = current.len();
    let mut plan = current.to_vec();
    let mut load = vec![0.0; channels as usize];
    for (c, &b) in plan.iter().zip(bw) {
        if let Channel::One(c) = c {
            load[*c as usize] += b;
        }
    }
    let mut spread: Vec<usize> = (0..n).filter(|&p| plan[p] == Channel::All).collect();
    spread.sort_by(|&a, &b| bw[b].total_cmp(&bw[a]).then(a.cmp(&b)));
    for p in spread {
        let idlest = (0..channels as usize).min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))).expect("channels");
        plan[p] = Channel::One(idlest as u32);
        load[idlest] += bw[p];
    }
    let mut moved = vec![false; n];
    while unbalance_factor(&loads(&plan, bw, channels)) > uf_threshold {
        let l = loads(&plan, bw, channels);
        let busiest = (0..channels).max_by(|&a, &b| l[a as usize].total_cmp(&l[b as usize]).then(b.cmp(&a))).expect("channels");
        let idlest = (0..channels).min_by(|&a, &b| l[a as usize].total_cmp(&l[b as usize]).then(a.cmp(&b))).expect("channels");
        let gap = l[busiest as usize] - l[idlest as usize];
        let after = |p: usize| {
            let mut t = plan.clone();
            t[p] = Channel::One(idlest);
            unbalance_factor(&loads(&t, bw, channels))
        };
        // Moving p leaves a gap of |gap − 2·bw| between the two.
        let mut narrowing: Vec<usize> =
            (0..n).filter(|&p| !moved[p] && plan[p] == Channel::One(busiest) && (gap - 2.0 * bw[p]).abs() < gap).collect();
        narrowing.sort_by_key(|&p| (footprint[p], p));
        let Some(&p) = narrowing.iter().find(|&&p| after(p) <= uf_threshold).or(narrowing.first()) else { break };
        plan[p] = Channel::One(idlest);
        moved[p] = true;
    }
    plan
}

/// The channel each process's colours lie in (`All` when in several).
pub fn channels_of(colours: &[Vec<u32>], colour_channel: &[u32]) -> Vec<Channel> {
    colours
        .iter()
        .map(|set| {
            let first = set.first().map_or(0, |&c| colour_channel[c as usize]);
            if set.iter().all(|&c| colour_channel[c as usize] == first) {
                Channel::One(first)
            } else {
                Channel::All
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Channel::{All, One};
    use super::*;

    #[test]
    fn the_unbalance_factor_is_the_papers() {
        assert_eq!(unbalance_factor(&[6.0, 5.0]), 0.2);
        assert_eq!(unbalance_factor(&[5.0, 6.0]), 0.2);
        assert_eq!(unbalance_factor(&[2.0, 3.0, 4.0]), 1.0);
        assert_eq!(unbalance_factor(&[0.0, 0.0]), 0.0);
        assert_eq!(unbalance_factor(&[1.0, 0.0]), f64::INFINITY);
    }

    #[test]
    fn the_smallest_footprint_program_that_balances_moves() {
        // Channel 0 carries 2 + 2 + 2 = 6 GB/s, channel 1 2: UF 2. Moving any of the three
        // balances them (4 and 4); process 1 has the smallest footprint.
        let current = [One(0), One(0), One(0), One(1)];
        let bw = [2.0, 2.0, 2.0, 2.0];
        let plan = assign_channels(&current, &bw, &[500, 100, 900, 50], 2, 0.2).expect("rebalanced");
        assert_eq!(plan, vec![One(0), One(1), One(0), One(1)]);
        assert_eq!(assign_channels(&plan, &bw, &[500, 100, 900, 50], 2, 0.2), None, "balanced: nothing moves");
        // Loads 3 + 2 + 2 against 1: only the 3 GB/s process balances them (4 and 4), though
        // the others' footprints are smaller.
        let plan = assign_channels(&current, &[3.0, 2.0, 2.0, 1.0], &[500, 100, 90, 50], 2, 0.2).unwrap();
        assert_eq!(plan, vec![One(1), One(0), One(0), One(1)]);
    }

    #[test]
    fn channels_are_partitioned_only_where_uf_comes_within_the_threshold() {
        // 2 + 2 against 1: the best split is 2 against 3 (UF 0.5), above 0.2 (BPM §2.11, §6.5):
        // every process gets every channel.
        let plan = assign_channels(&[One(0), One(0), One(1)], &[2.0, 2.0, 1.0], &[300, 200, 100], 2, 0.2);
        assert_eq!(plan, Some(vec![All; 3]));
        assert_eq!(assign_channels(&[All; 3], &[2.0, 2.0, 1.0], &[300, 200, 100], 2, 0.2), None, "spread stays spread");
        // 4 + 4 against 3 + 3 (UF 1/3): no single move narrows the gap of 2, but a swap balances
        // them: assigned afresh, busiest first onto the least loaded, 4 + 3 on each.
        let plan = assign_channels(&[One(0), One(0), One(1), One(1)], &[4.0, 4.0, 3.0, 3.0], &[1, 1, 1, 1], 2, 0.2);
        assert_eq!(plan, Some(vec![One(0), One(1), One(0), One(1)]));
        // Four channels: a 4 beside six 1s is under the others' 6, yet alone on a channel it
        // leaves the other three 2 each at best (UF 1): no assignment balances them.
        let bw = [4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let current = [One(0), One(0), One(1), One(1), One(2), One(2), One(3)];
        assert_eq!(assign_channels(&current, &bw, &[1; 7], 4, 0.2), Some(vec![All; 7]));
        // Three 2s and three 1s on three channels balance exactly, 2 + 1 each.
        let bw = [2.0, 2.0, 2.0, 1.0, 1.0, 1.0];
        assert_eq!(assign_channels(&[All; 6], &bw, &[1; 6], 3, 0.2), Some(vec![One(0), One(1), One(2), One(0), One(1), One(2)]));
    }

    #[test]
    fn a_process_s_load_counts_its_write_backs() {
        use crate::os::monitor::{Monitors, ProcessMonitor};
        // Colours 0-1 in channel 0, 2-3 in channel 1: a copying stream (a write-back per miss)
        // alone in channel 0, a heavy and a light reader in channel 1. Each channel carries 2000
        // lines: balanced, nothing moves (by reads alone, 1000 against 2000, the light one would).
        let process = |reads, writebacks| ProcessMonitor { dram_reads: reads, writebacks, threads: 1, ..Default::default() };
        let monitors = Monitors {
            epoch_ns: 1e6,
            processes: vec![process(1000, 1000), process(1500, 0), process(500, 0)],
            channel_peak_gbps: 0.5,
            line_bytes: 64,
            ..Default::default()
        };
        let colours = vec![vec![0, 1], vec![2, 3], vec![2, 3]];
        let view = |monitors| two_channels(monitors, &colours);
        let mut balancer = ChannelBalancer::new(ChannelBalanceParams::default());
        assert_eq!(balancer.plan(&view(&monitors)), None);
        // The copy stream's write-backs stop: 1000 against 2000, the light reader moves.
        let mut reads = monitors.clone();
        reads.processes[0].writebacks = 0;
        let mut balancer = ChannelBalancer::new(ChannelBalanceParams::default());
        assert_eq!(balancer.plan(&view(&reads)), Some(vec![One(0), One(1), One(0)]));
    }

    #[test]
    fn an_assignment_younger_than_hold_epochs_stands() {
        use crate::os::monitor::{Monitors, ProcessMonitor};
        // Two readers of 1000 lines an epoch share channel 0, two of 500 channel 1: 2000 against
        // 1000 (UF 1); one of each per channel balances them. (The view's colours stay as they
        // were, so the step keeps wanting that change.)
        let process = |reads| ProcessMonitor { dram_reads: reads, threads: 1, ..Default::default() };
        let monitors = Monitors {
            epoch_ns: 1e6,
            processes: vec![process(1000), process(1000), process(500), process(500)],
            channel_peak_gbps: 0.5,
            line_bytes: 64,
            ..Default::default()
        };
        let colours = vec![vec![0, 1], vec![0, 1], vec![2, 3], vec![2, 3]];
        let view = two_channels(&monitors, &colours);
        let want = ChannelBalancer::new(ChannelBalanceParams::default()).plan(&view);
        assert!(want.is_some(), "unbalanced: the step changes the channels at once");
        let mut held = ChannelBalancer::new(ChannelBalanceParams { hold_epochs: 3, ..Default::default() });
        assert_eq!(held.plan(&view), None);
        assert_eq!(held.plan(&view), None);
        assert_eq!(held.plan(&view), want, "the third epoch's end may change them");
        let s = &held.stats;
        assert_eq!((s.held, s.changed, s.kept), (2, 1, 0));
        // A new assignment stands its own three epochs: the next two ends hold it.
        assert_eq!((held.plan(&view), held.plan(&view)), (None, None));
        assert_eq!(held.stats.held, 4);
        let e = ChannelBalanceParams { hold_epochs: 0, ..Default::default() }.check().unwrap_err();
        assert_eq!(e.0, "hold_epochs");
    }

    /// Colours 0-1 in channel 0, 2-3 in channel 1, 100 frames each.
    fn two_channels<'a>(monitors: &'a crate::os::monitor::Monitors, colours: &'a [Vec<u32>]) -> EpochView<'a> {
        EpochView { monitors, colours, colour_frames: &[100; 4], pages_in_colour: &[], colour_channels: &[0, 0, 1, 1], classes: &[] }
    }

    #[test]
    fn a_process_s_load_counts_its_prefetches() {
        use crate::os::monitor::{Monitors, ProcessMonitor};
        // Colours 0-1 in channel 0, 2-3 in channel 1. Each channel's pair misses 1000 lines on
        // demand (balanced by misses alone), but channel 0's first process streams, its
        // prefetcher reading 1000 more: 2000 against 1000 lines (UF 1). The streamer alone
        // against the three others, 1500 against 1500, balances them.
        let process =
            |misses, prefetched| ProcessMonitor { llc_misses: misses, dram_reads: misses + prefetched, threads: 1, ..Default::default() };
        let monitors = Monitors {
            epoch_ns: 1e6,
            processes: vec![process(500, 1000), process(500, 0), process(500, 0), process(500, 0)],
            channel_peak_gbps: 0.5,
            line_bytes: 64,
            ..Default::default()
        };
        let colours = vec![vec![0, 1], vec![0, 1], vec![2, 3], vec![2, 3]];
        let view = two_channels(&monitors, &colours);
        let mut balancer = ChannelBalancer::new(ChannelBalanceParams::default());
        assert_eq!(balancer.plan(&view), Some(vec![One(0), One(1), One(1), One(1)]));
    }

    #[test]
    fn one_program_above_all_others_gets_every_channel() {
        // 5 against 4: above the others' sum, but alone on a channel it leaves UF 0.25... no:
        // 5 / 4 - 1 = 0.25 > 0.2, spread; 4.7 against 4 (0.175) is balanced by putting it alone.
        let four = [One(0), One(0), One(1), One(1)];
        assert_eq!(assign_channels(&four, &[5.0, 2.0, 1.0, 1.0], &[1, 1, 1, 1], 2, 0.2), Some(vec![All; 4]));
        assert_eq!(assign_channels(&four, &[4.7, 2.0, 1.0, 1.0], &[1, 1, 1, 1], 2, 0.2), Some(vec![One(0), One(1), One(1), One(1)]));
        let current = [One(0), One(0), One(1), One(1)];
        let plan = assign_channels(&current, &[10.0, 1.0, 1.0, 1.0], &[1, 1, 1, 1], 2, 0.2).unwrap();
        assert_eq!(plan, vec![All; 4]);
        assert_eq!(assign_channels(&plan, &[10.0, 1.0, 1.0, 1.0], &[1, 1, 1, 1], 2, 0.2), None);
        // When the hog calms down, every process gets a channel again, the busiest first.
        let back = assign_channels(&plan, &[3.0, 1.0, 1.0, 1.0], &[1, 1, 1, 1], 2, 0.2).unwrap();
        assert_eq!(back, vec![One(0), One(1), One(1), One(1)]);
    }
}
