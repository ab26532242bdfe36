//! Dynamic channel-only partitioning (BPM §2.9, the first scheme of Fig. 12): processes assigned
//! to channels by measured bandwidth as `dynamic-bpm-plus` does (`channel_balance.rs`), and the
//! processes of a channel share all its banks (no bank partitioning inside it). Where no
//! assignment brings UF within the threshold (a process above all others together, say) every
//! process gets every channel: the buddy allocator's placement over the whole memory.

use super::channel_balance::{Channel, ChannelBalanceParams, ChannelBalanceStats, ChannelBalancer};
use super::{DynamicInfo, DynamicPolicy, EpochView, Repartition};
use crate::params::ParamSchema;

/// Registered in `dynamic::DYNAMIC`.
pub const INFO: DynamicInfo = DynamicInfo {
    name: "dynamic-channel-only",
    summary: "channels rebalanced by measured bandwidth (UF), banks shared within a channel (BPM §2.9, Fig. 12)",
    works_with: &["channel-only"],
    params: ParamSchema::of::<ChannelBalanceParams>(&[]),
    build: |v| Ok(Box::new(DynamicChannelOnly { balance: ChannelBalancer::new(v.params.get("os", INFO.name, &[])?) })),
};

struct DynamicChannelOnly {
    balance: ChannelBalancer,
}

/// Each process's colours under `plan`: every colour of its channel, or every colour.
fn colours_for(plan: &[Channel], colour_channel: &[u32]) -> Vec<Vec<u32>> {
    let all = 0..colour_channel.len() as u32;
    plan.iter()
        .map(|c| match *c {
            Channel::One(ch) => all.clone().filter(|&c| colour_channel[c as usize] == ch).collect(),
            Channel::All => all.clone().collect(),
        })
        .collect()
}

impl DynamicPolicy for DynamicChannelOnly {
    fn epoch_ns(&self) -> f64 {
        self.balance.params.epoch_ns
    }

    fn channel_balance(&self) -> Option<&ChannelBalanceStats> {
        Some(&self.balance.stats)
    }

    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition> {
        let plan = self.balance.plan(v)?;
        Some(Repartition { colours: colours_for(&plan, v.colour_channels), colours_lent: 0, sets_shared: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::Channel::{All, One};
    use super::*;

    #[test]
    fn a_channel_s_processes_share_all_its_colours() {
        // Four colours, two per channel.
        let channel = [0, 0, 1, 1];
        let out = colours_for(&[One(1), One(0), One(1)], &channel);
        assert_eq!(out, vec![vec![2, 3], vec![0, 1], vec![2, 3]]);
        assert_eq!(colours_for(&[All, All], &channel), vec![vec![0, 1, 2, 3]; 2]);
    }
}
