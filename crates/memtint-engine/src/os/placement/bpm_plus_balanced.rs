//! Static BPM+ with its channels balanced from offline profiles, as the paper ran it (BPM §2.5:
//! the authors "manually balance the bandwidth utilisation among channels" from offline
//! profiling, then assign banks statically). Each channel gets as many processes (so each keeps
//! BPM's capacity: 2 per channel x 16 banks for 4 programs on the i7-860); of those assignments,
//! the one whose channel loads, the sums of the processes' alone bandwidths
//! (`os.profiles[].bandwidth`), have the smallest unbalance factor (UF, §2.9), the first in
//! process order on a tie, so a mix already balanced keeps `bpm-plus`'s order. Inside a channel
//! its processes split its colours as `bpm-plus` does (`os.colour_split`). Every assignment is
//! tried up to [`EXHAUSTIVE_LIMIT`] of them (8 programs on 2 channels: 70); above that, the
//! heaviest process goes first to the least loaded channel with room.

use super::colour_sets::ColourSplit;
use super::ColourSets;
use super::PolicyInfo;
use super::PAGE_CHANNEL;
use crate::error::{Error, Result};
use crate::os::colour::ColourBits;
use crate::os::dynamic::unbalance_factor;
use crate::os::OsConfig;

const NAME: &str = "bpm-plus-balanced";

/// Above this many equal-count assignments, the greedy one is taken.
pub const EXHAUSTIVE_LIMIT: u64 = 100_000;

pub fn bpm_plus_balanced(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<ColourSets> {
    if cfg.colours.is_some() || cfg.groups.is_some() {
        let key = if cfg.colours.is_some() { "os.colours" } else { "os.groups" };
        return Err(Error::config(
            key,
            format!("policy {NAME} chooses each process's colours from os.profiles; give colours of your own to bpm-plus"),
        ));
    }
    let channel = bits.channel_space()?;
    let space = bits.channel_bank_space()?;
    let channels = channel.count();
    if processes == 0 || processes % channels != 0 {
        return Err(Error::config(
            "os.policy",
            format!(
                "policy {NAME} puts as many processes in each of the {channels} channels (BPM+'s equal capacity), but \
                 {processes} is not a multiple of {channels}; use bpm-plus or channel-only"
            ),
        ));
    }
    let bandwidth = bandwidths(cfg, processes)?;
    let plan = balanced_channels(&bandwidth, channels);

    // A colour's channel, from the frames it can map to (whatever functions the spaces hold).
    let mut channel_of = Vec::with_capacity(space.count() as usize);
    for c in 0..space.count() {
        let reach = bits.reach(&space, &[c])?;
        match reach.channels[..] {
            [ch] => channel_of.push(ch),
            _ => {
                return Err(Error::config(
                    "os.policy",
                    format!(
                        "policy {NAME} needs each colour in one channel, but colour {c} of {} reaches channels {:?}",
                        space.describe(),
                        reach.channels
                    ),
                ))
            }
        }
    }
    let per = (processes / channels) as usize;
    let split = ColourSplit::from_name(&cfg.colour_split)?;
    let mut colours = vec![Vec::new(); processes as usize];
    for ch in 0..channels {
        let own: Vec<u32> = (0..space.count()).filter(|&c| channel_of[c as usize] == ch).collect();
        if own.len() < per {
            return Err(Error::config(
                "os.policy",
                format!("policy {NAME} puts {per} processes in each channel, which has only {} colours ({})", own.len(), space.describe()),
            ));
        }
        let members = (0..processes as usize).filter(|&p| plan[p] == ch);
        for (k, p) in members.enumerate() {
            colours[p] = match split {
                ColourSplit::Contiguous => own[k * own.len() / per..(k + 1) * own.len() / per].to_vec(),
                ColourSplit::Strided => own.iter().copied().skip(k).step_by(per).collect(),
            };
        }
    }
    let mut explicit = cfg.clone();
    explicit.colours = Some(colours);
    ColourSets::new(NAME, space, &explicit, bits, processes)
}

/// Each process's alone bandwidth from `os.profiles`.
fn bandwidths(cfg: &OsConfig, processes: u32) -> Result<Vec<f64>> {
    let profiles = cfg.profiles.as_ref().ok_or_else(|| {
        Error::config(
            "os.profiles",
            format!(
                "policy {NAME} needs each process's alone bandwidth ([{{mpki, rbh, bandwidth}}, ...]); memtint compare \
                 fills it from alone runs, or give os.profiles"
            ),
        )
    })?;
    if profiles.len() != processes as usize {
        return Err(Error::config("os.profiles", format!("gives {} profiles for {processes} processes", profiles.len())));
    }
    profiles
        .iter()
        .enumerate()
        .map(|(i, p)| match p.bandwidth {
            Some(b) if b.is_finite() && b >= 0.0 => Ok(b),
            Some(b) => Err(Error::config(format!("os.profiles[{i}].bandwidth"), format!("must be a finite number >= 0, got {b}"))),
            None => Err(Error::config(
                format!("os.profiles[{i}].bandwidth"),
                format!("policy {NAME} balances channels by it: give each program's alone DRAM traffic (any unit, the same for all)"),
            )),
        })
        .collect()
}

/// Each process's channel: an equal number in each, the channel loads' UF smallest (the first in
/// process order on a tie; greedy above [`EXHAUSTIVE_LIMIT`] assignments).
pub fn balanced_channels(bandwidth: &[f64], channels: u32) -> Vec<u32> {
    let n = bandwidth.len();
    let per = n / channels as usize;
    let mut plan = vec![0u32; n];
    if channels < 2 || n == 0 {
        return plan;
    }
    if assignments(n as u64, channels as u64) > EXHAUSTIVE_LIMIT {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| bandwidth[b].total_cmp(&bandwidth[a]).then(a.cmp(&b)));
        let mut load = vec![0.0f64; channels as usize];
        let mut room = vec![per; channels as usize];
        for p in order {
            let c = (0..channels as usize).filter(|&c| room[c] > 0).min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)));
            let c = c.expect("n = per x channels leaves room");
            plan[p] = c as u32;
            load[c] += bandwidth[p];
            room[c] -= 1;
        }
        return plan;
    }
    let mut best = (f64::INFINITY, Vec::new());
    let mut current = vec![0u32; n];
    let mut room = vec![per; channels as usize];
    search(0, bandwidth, channels, &mut current, &mut room, &mut best);
    best.1
}

/// Depth-first over the equal-count assignments in lexicographic order, keeping the first with
/// the smallest UF.
fn search(p: usize, bandwidth: &[f64], channels: u32, current: &mut [u32], room: &mut [usize], best: &mut (f64, Vec<u32>)) {
    if p == bandwidth.len() {
        let mut load = vec![0.0; channels as usize];
        current.iter().zip(bandwidth).for_each(|(&c, &b)| load[c as usize] += b);
        let uf = unbalance_factor(&load);
        if best.1.is_empty() || uf < best.0 {
            *best = (uf, current.to_vec());
        }
        return;
    }
    for c in 0..channels as usize {
        if room[c] > 0 {
            room[c] -= 1;
            current[p] = c as u32;
            search(p + 1, bandwidth, channels, current, room, best);
            room[c] += 1;
        }
    }
}

/// The number of ways to put `n` processes in `channels` channels, `n / channels` in each
/// (the multinomial coefficient), saturating.
fn assignments(n: u64, channels: u64) -> u64 {
    let per = n / channels;
    let mut count: u64 = 1;
    let mut left = n;
    for _ in 0..channels {
        count = count.saturating_mul(binomial(left, per));
        left -= per;
    }
    count
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k.min(n - k)).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo = PolicyInfo::new(
    "bpm-plus-balanced",
    "BPM+ with its channels balanced by the programs' alone bandwidth (the paper's offline profiling)",
    |cfg, bits, processes, _| Ok(Box::new(bpm_plus_balanced(cfg, bits, processes)?)),
)
.needs_profiles()
.needs("a mapping with channel bits above the page offset (e.g. machine i7-860-bpm-plus); as many processes per channel")
.machine_variant(PAGE_CHANNEL)
.reads_keys(super::colour_sets::KEYS)
.mechanism("bank + channel partitioning");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heavy_programs_go_to_different_channels() {
        // In order, 4 + 4 against 1 + 1 (UF 3); the balanced split pairs a heavy with a light.
        assert_eq!(balanced_channels(&[4.0, 4.0, 1.0, 1.0], 2), vec![0, 1, 0, 1]);
        assert_eq!(balanced_channels(&[1.0, 4.0, 4.0, 1.0], 2), vec![0, 0, 1, 1]);
        // Already balanced: bpm-plus's order is kept.
        assert_eq!(balanced_channels(&[3.0, 1.0, 2.0, 2.0], 2), vec![0, 0, 1, 1]);
        // Ties keep the first in process order: every split of equal loads.
        assert_eq!(balanced_channels(&[1.0; 4], 2), vec![0, 0, 1, 1]);
        assert_eq!(balanced_channels(&[0.0; 4], 2), vec![0, 0, 1, 1]);
    }

    #[test]
    fn eight_programs_keep_four_per_channel() {
        let bw = [9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let plan = balanced_channels(&bw, 2);
        assert_eq!(plan.iter().filter(|&&c| c == 0).count(), 4);
        // The hog's channel gets the three lightest: 9 + 3 against 4, the best equal split.
        assert_eq!(plan, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        let bw = [5.0, 5.0, 4.0, 4.0, 1.0, 1.0, 0.5, 0.5];
        let plan = balanced_channels(&bw, 2);
        let load = |c| plan.iter().zip(&bw).filter(|(&p, _)| p == c).map(|(_, &b)| b).sum::<f64>();
        assert_eq!((load(0), load(1)), (10.5, 10.5));
        assert_eq!(assignments(8, 2), 70);
        assert_eq!(assignments(16, 4), 63_063_000);
    }

    #[test]
    fn above_the_limit_the_heaviest_goes_first_to_the_least_loaded_channel() {
        // 16 programs on 4 channels: 63 M assignments, so greedy.
        let bw: Vec<f64> = (0..16).map(|i| (16 - i) as f64).collect();
        let plan = balanced_channels(&bw, 4);
        for c in 0..4 {
            assert_eq!(plan.iter().filter(|&&p| p == c).count(), 4);
        }
        // 16, 15, 14, 13 open the four channels; 12 joins 13's, 11 joins 14's...
        assert_eq!(&plan[..8], &[0, 1, 2, 3, 3, 2, 1, 0]);
    }
}
