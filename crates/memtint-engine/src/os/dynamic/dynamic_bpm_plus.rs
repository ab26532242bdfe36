//! Dynamic BPM+ (BPM §2.9): channels assigned by measured bandwidth (`channel_balance.rs`:
//! UF above the threshold moves the smallest footprint that balances; where no assignment
//! brings UF within it, as with one process above all others, every process gets its banks in
//! every channel, BPM without channel partitioning), then dynamic BPM within each channel: its
//! colours lent and shared by NICE as `dynamic-bpm` does.
//!
//! A process moving to a channel takes colours one at a time from that channel's member with
//! the most; the colours it leaves go to the members of its old channel with the fewest; so a
//! process that stays keeps most of its colours, and few pages are copied.

use super::channel_balance::{channels_of, Channel, ChannelBalanceParams, ChannelBalanceStats, ChannelBalancer};
use super::dynamic_bpm::rebalance;
use super::{DynamicInfo, DynamicPolicy, EpochView, Repartition};
use crate::params::ParamSchema;

/// Registered in `dynamic::DYNAMIC`.
pub const INFO: DynamicInfo = DynamicInfo {
    name: "dynamic-bpm-plus",
    summary: "BPM+'s channels rebalanced by measured bandwidth (UF), then dynamic BPM in each channel (BPM §2.9)",
    works_with: &["bpm-plus"],
    params: ParamSchema::of::<ChannelBalanceParams>(&[]),
    build: |v| Ok(Box::new(DynamicBpmPlus { balance: ChannelBalancer::new(v.params.get("os", INFO.name, &[])?) })),
};

struct DynamicBpmPlus {
    balance: ChannelBalancer,
}

/// Colour sets for `plan` from `colours`: a process staying in its channel keeps its colours
/// there; a process moving in takes colours one at a time from the member with the most (each
/// keeping one); colours left free go to the members with the fewest. Under `All` everywhere
/// the bank positions are split evenly over the processes in every channel.
fn colours_for(plan: &[Channel], colours: &[Vec<u32>], colour_channel: &[u32], channels: u32) -> Vec<Vec<u32>> {
    let n = plan.len();
    let per_channel: Vec<Vec<u32>> =
        (0..channels).map(|ch| (0..colour_channel.len() as u32).filter(|&c| colour_channel[c as usize] == ch).collect()).collect();
    if plan.iter().all(|c| *c == Channel::All) {
        let banks = per_channel.iter().map(Vec::len).min().unwrap_or(0);
        if n > banks {
            return vec![(0..colour_channel.len() as u32).collect(); n];
        }
        return (0..n)
            .map(|p| {
                let (lo, hi) = (p * banks / n, (p + 1) * banks / n);
                let mut set: Vec<u32> = per_channel.iter().flat_map(|cs| cs[lo..hi].iter().copied()).collect();
                set.sort_unstable();
                set
            })
            .collect();
    }
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (ch, all) in per_channel.iter().enumerate() {
        let members: Vec<usize> = (0..n).filter(|&p| plan[p] == Channel::One(ch as u32)).collect();
        if members.is_empty() {
            continue;
        }
        // Stayers keep what they had in this channel; colours nobody keeps are free.
        for &p in &members {
            out[p] = colours[p].iter().copied().filter(|&c| colour_channel[c as usize] == ch as u32).collect();
        }
        let mut free: Vec<u32> = all.iter().copied().filter(|c| !members.iter().any(|&p| out[p].contains(c))).collect();
        // Newcomers (nothing here yet) first get free colours, then take from the richest.
        let target = (all.len() / members.len()).max(1);
        let newcomers: Vec<usize> = members.iter().copied().filter(|&p| out[p].is_empty()).collect();
        for p in newcomers {
            while out[p].len() < target {
                if let Some(c) = free.pop() {
                    out[p].push(c);
                    continue;
                }
                let Some(&rich) =
                    members.iter().filter(|&&q| q != p && out[q].len() > 1).max_by_key(|&&q| (out[q].len(), std::cmp::Reverse(q)))
                else {
                    break;
                };
                if out[rich].len() <= out[p].len() + 1 {
                    break;
                }
                let c = out[rich].pop().expect("more than one");
                out[p].push(c);
            }
        }
        // What is left free goes to the poorest.
        while let Some(c) = free.pop() {
            let poor = *members.iter().min_by_key(|&&q| (out[q].len(), q)).expect("members");
            out[poor].push(c);
        }
        for &p in &members {
            out[p].sort_unstable();
        }
    }
    out
}

impl DynamicPolicy for DynamicBpmPlus {
    fn epoch_ns(&self) -> f64 {
        self.balance.params.epoch_ns
    }

    fn channel_balance(&self) -> Option<&ChannelBalanceStats> {
        Some(&self.balance.stats)
    }

    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition> {
        let channels = ChannelBalancer::channels(v);
        let plan = self.balance.plan(v);
        let colours = match &plan {
            Some(plan) => colours_for(plan, v.colours, v.colour_channels, channels),
            None => v.colours.to_vec(),
        };
        let footprint: Vec<u64> = v.monitors.processes.iter().map(|p| p.touched_pages).collect();
        // Then dynamic BPM among the processes of each channel (or of all, when spread).
        let placed = channels_of(&colours, v.colour_channels);
        let mut groups: Vec<Channel> = Vec::new();
        for c in &placed {
            if !groups.contains(c) {
                groups.push(*c);
            }
        }
        let mut out = colours.clone();
        let (mut lent, mut shared) = (0, 0);
        for g in groups {
            let members: Vec<usize> = (0..placed.len()).filter(|&p| placed[p] == g).collect();
            let sets: Vec<Vec<u32>> = members.iter().map(|&p| colours[p].clone()).collect();
            let rnp: Vec<u64> = members.iter().map(|&p| footprint[p]).collect();
            let pages: Vec<Vec<u64>> = members.iter().map(|&p| v.pages_in_colour.get(p).cloned().unwrap_or_default()).collect();
            if let Some(r) = rebalance(&sets, v.colour_frames, &rnp, &pages) {
                for (i, &p) in members.iter().enumerate() {
                    out[p] = r.colours[i].clone();
                }
                lent += r.colours_lent;
                shared += r.sets_shared;
            }
        }
        (plan.is_some() || lent + shared > 0).then_some(Repartition { colours: out, colours_lent: lent, sets_shared: shared })
    }
}

#[cfg(test)]
mod tests {
    use super::Channel::{All, One};
    use super::*;

    #[test]
    fn a_process_moving_in_takes_colours_from_the_richest_and_stayers_keep_theirs() {
        // 8 colours: 0-3 in channel 0, 4-7 in channel 1; processes 0, 1 in channel 0, 2 in 1.
        let channel = [0, 0, 0, 0, 1, 1, 1, 1];
        let colours = vec![vec![0, 1], vec![2, 3], vec![4, 5, 6, 7]];
        let out = colours_for(&[One(0), One(1), One(1)], &colours, &channel, 2);
        assert_eq!(out[0], vec![0, 1, 2, 3], "the colours process 1 left go to the one who stayed");
        assert_eq!(out[1].len(), 2);
        assert_eq!(out[2].len(), 2);
        assert!(out[2].iter().all(|c| colours[2].contains(c)), "the stayer keeps colours it had");
        let spread = colours_for(&[All, All, All], &colours, &channel, 2);
        assert_eq!(spread, vec![vec![0, 4], vec![1, 5], vec![2, 3, 6, 7]], "each its bank positions in every channel");
        let crowded = colours_for(&[All; 5], &[vec![0], vec![1], vec![2], vec![3], vec![4, 5, 6, 7]], &channel, 2);
        assert!(crowded.iter().all(|s| s == &(0..8).collect::<Vec<u32>>()), "more processes than banks: all share");
    }
}
