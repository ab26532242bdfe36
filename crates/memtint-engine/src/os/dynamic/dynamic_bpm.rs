//! Dynamic BPM (BPM §2.8): bank colours follow memory demand. Every epoch each process's RNP
//! (pages it needs: here the pages it has touched, resident or swapped) is set against its BNP
//! (frames its colours hold); NICE = BNP − RNP. While every NICE is ≥ 0 nothing changes (the
//! common case: adjustments are rare). Otherwise each borrower, the most short first, takes
//! whole colours from the set with the largest NICE that can give one and stay at NICE ≥ 0
//! (the colour holding fewest of the lender's pages, the cheapest to re-colour); a lender keeps
//! at least one colour. A borrower no lender can satisfy (colours too coarse) shares instead:
//! its set merges with the set of largest NICE, repeatedly, until every set's NICE is ≥ 0 or all
//! share one set, giving up isolation rather than swapping. With ΣRNP over the capacity of all
//! the sets nothing is lent: no redistribution satisfies everyone, so all share one set.
//!
//! The paper's epoch is 10 s of runs lasting minutes; simulated runs last milliseconds, so the
//! default epoch is 1 ms, a few per run, as the paper's few per run (a parameter).

use super::{DynamicInfo, DynamicPolicy, EpochView, Repartition};
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// Registered in `dynamic::DYNAMIC`.
pub const INFO: DynamicInfo = DynamicInfo {
    name: "dynamic-bpm",
    summary: "BPM's bank colours lent and shared by memory demand each epoch (BPM §2.8)",
    works_with: &["bpm"],
    params: ParamSchema::of::<DynamicBpmParams>(&[]),
    build: |v| Ok(Box::new(DynamicBpm { params: v.params.get("os", INFO.name, &[])? })),
};

/// `[os.dynamic-bpm]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicBpmParams {
    /// Time between adjustments, ns of simulated time.
    pub epoch_ns: f64,
}

impl Default for DynamicBpmParams {
    fn default() -> Self {
        DynamicBpmParams { epoch_ns: 1_000_000.0 }
    }
}

impl Params for DynamicBpmParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.epoch_ns.is_finite() && self.epoch_ns >= 1000.0) {
            return Err(("epoch_ns", format!("must be at least 1000 ns, got {}", self.epoch_ns)));
        }
        Ok(())
    }
}

struct DynamicBpm {
    params: DynamicBpmParams,
}

impl DynamicPolicy for DynamicBpm {
    fn epoch_ns(&self) -> f64 {
        self.params.epoch_ns
    }

    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition> {
        let rnp: Vec<u64> = v.monitors.processes.iter().map(|p| p.touched_pages).collect();
        rebalance(v.colours, v.colour_frames, &rnp, v.pages_in_colour)
    }
}

/// A set of colours and the processes sharing it.
#[derive(Clone, Debug)]
struct Group {
    members: Vec<usize>,
    colours: Vec<u32>,
}

/// The dynamic-BPM decision for processes owning `colours` (identical lists: a shared set),
/// colours holding `frames` each, needing `rnp` pages, with `pages[p][c]` resident pages of
/// process p in colour c. `None` when every set's NICE is ≥ 0 (or nothing can change).
pub fn rebalance(colours: &[Vec<u32>], frames: &[u64], rnp: &[u64], pages: &[Vec<u64>]) -> Option<Repartition> {
    let mut groups: Vec<Group> = Vec::new();
    for (p, set) in colours.iter().enumerate() {
        let mut set = set.clone();
        set.sort_unstable();
        match groups.iter_mut().find(|g| g.colours == set) {
            Some(g) => g.members.push(p),
            None => groups.push(Group { members: vec![p], colours: set }),
        }
    }
    let bnp = |g: &Group| g.colours.iter().map(|&c| frames.get(c as usize).copied().unwrap_or(0) as i64).sum::<i64>();
    let need = |g: &Group| g.members.iter().map(|&m| rnp.get(m).copied().unwrap_or(0) as i64).sum::<i64>();
    let nice = |g: &Group| bnp(g) - need(g);
    if groups.iter().all(|g| nice(g) >= 0) {
        return None;
    }
    let (mut lent, mut shared) = (0, 0);
    // Lending whole colours, the most short borrower first; over capacity (ΣRNP above ΣBNP) some
    // set stays short whatever is lent, so every set ends shared and nothing is lent (§2.8).
    let over = groups.iter().map(need).sum::<i64>() > groups.iter().map(bnp).sum::<i64>();
    let mut unsatisfied: Vec<usize> = if over { (0..groups.len()).collect() } else { Vec::new() };
    let short = |groups: &[Group], unsatisfied: &[usize]| {
        (0..groups.len()).filter(|b| !unsatisfied.contains(b) && nice(&groups[*b]) < 0).min_by_key(|&b| (nice(&groups[b]), b))
    };
    while let Some(b) = short(&groups, &unsatisfied) {
        let mut lenders: Vec<usize> = (0..groups.len()).filter(|&l| l != b && groups[l].colours.len() >= 2).collect();
        lenders.sort_by_key(|&l| (std::cmp::Reverse(nice(&groups[l])), l));
        let gift = lenders.into_iter().find_map(|l| {
            let spare = nice(&groups[l]);
            let cost =
                |c: u32| groups[l].members.iter().map(|&m| pages.get(m).and_then(|p| p.get(c as usize)).copied().unwrap_or(0)).sum::<u64>();
            groups[l]
                .colours
                .iter()
                .copied()
                .filter(|&c| spare - frames.get(c as usize).copied().unwrap_or(0) as i64 >= 0)
                .min_by_key(|&c| (cost(c), std::cmp::Reverse(c)))
                .map(|c| (l, c))
        });
        match gift {
            Some((l, c)) => {
                groups[l].colours.retain(|&x| x != c);
                groups[b].colours.push(c);
                groups[b].colours.sort_unstable();
                lent += 1;
            }
            None => unsatisfied.push(b),
        }
    }
    // Sharing: a set still short merges with the set of largest NICE.
    while groups.len() > 1 {
        let Some(b) = (0..groups.len()).filter(|&b| nice(&groups[b]) < 0).min_by_key(|&b| (nice(&groups[b]), b)) else { break };
        let l = (0..groups.len()).filter(|&l| l != b).max_by_key(|&l| (nice(&groups[l]), std::cmp::Reverse(l))).expect("two groups");
        let other = groups.remove(l);
        let b = if l < b { b - 1 } else { b };
        groups[b].members.extend(other.members);
        groups[b].colours.extend(other.colours);
        groups[b].colours.sort_unstable();
        shared += 1;
    }
    if lent == 0 && shared == 0 {
        return None;
    }
    let mut out = vec![Vec::new(); colours.len()];
    for g in &groups {
        for &m in &g.members {
            out[m] = g.colours.clone();
        }
    }
    Some(Repartition { colours: out, colours_lent: lent, sets_shared: shared })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four processes, two colours of 100 frames each.
    fn even() -> (Vec<Vec<u32>>, Vec<u64>) {
        ((0..4).map(|p| vec![2 * p, 2 * p + 1]).collect(), vec![100; 8])
    }

    fn nice(colours: &[Vec<u32>], frames: &[u64], rnp: &[u64]) -> Vec<i64> {
        colours.iter().zip(rnp).map(|(s, &r)| s.iter().map(|&c| frames[c as usize] as i64).sum::<i64>() - r as i64).collect()
    }

    #[test]
    fn nothing_changes_while_every_nice_is_at_least_zero() {
        let (colours, frames) = even();
        assert_eq!(rebalance(&colours, &frames, &[200, 0, 150, 199], &[]), None);
    }

    #[test]
    fn a_borrower_takes_whole_colours_from_the_largest_nice_and_no_lender_goes_below_zero() {
        let (colours, frames) = even();
        let rnp = [350, 50, 100, 150];
        // Process 1 holds most of its pages in colour 2: colour 3 is the cheaper to give.
        let mut pages = vec![vec![0; 8]; 4];
        pages[1][2] = 40;
        pages[1][3] = 10;
        let r = rebalance(&colours, &frames, &rnp, &pages).expect("process 0 is short");
        // Process 1 (NICE 150) gives colour 3 and stays at 50; then process 2 (NICE 100, the
        // largest that can still give a whole colour) gives one and stays at 0.
        assert_eq!(r.colours[0], vec![0, 1, 3, 5]);
        assert_eq!(r.colours[1], vec![2]);
        assert_eq!(r.colours[2], vec![4]);
        assert_eq!(r.colours[3], vec![6, 7]);
        assert_eq!((r.colours_lent, r.sets_shared), (2, 0));
        let after = nice(&r.colours, &frames, &rnp);
        assert_eq!(after, vec![50, 50, 0, 50]);
        assert!(after.iter().all(|&n| n >= 0));
    }

    #[test]
    fn a_lender_never_gives_what_would_take_it_below_zero() {
        let (colours, frames) = even();
        // Process 0 is short by 10; every other NICE is below one colour's 100 frames.
        let rnp = [210, 101, 150, 199];
        let r = rebalance(&colours, &frames, &rnp, &[]).expect("process 0 is short");
        assert_eq!(r.colours_lent, 0, "no lender could give a whole colour");
        // Process 1 (NICE 99) is one frame short of giving a colour: it shares instead.
        assert_eq!(r.sets_shared, 1);
        assert_eq!(r.colours[0], vec![0, 1, 2, 3]);
        assert_eq!(r.colours[1], r.colours[0]);
        assert_eq!((r.colours[2].clone(), r.colours[3].clone()), (vec![4, 5], vec![6, 7]), "the others keep their own");
    }

    #[test]
    fn over_capacity_banks_are_shared_not_swapped() {
        let (colours, frames) = even();
        // ΣRNP = 950 over 800 frames: no redistribution satisfies everyone.
        let rnp = [500, 150, 150, 150];
        let r = rebalance(&colours, &frames, &rnp, &[]).expect("process 0 is short");
        assert_eq!(r.colours_lent, 0);
        assert_eq!(r.sets_shared, 3, "merged until one set is left");
        for set in &r.colours {
            assert_eq!(set, &(0..8).collect::<Vec<u32>>(), "every process shares every bank");
        }
        // Over capacity (ΣRNP 850 of 800) with a lender to spare: process 1 could give a colour
        // to process 0, but some set stays short whatever is lent and all end shared, so
        // nothing is lent.
        let r = rebalance(&colours, &frames, &[550, 0, 150, 150], &[]).unwrap();
        assert_eq!((r.colours_lent, r.sets_shared), (0, 3));
        assert!(r.colours.iter().all(|s| s == &(0..8).collect::<Vec<u32>>()));
        // Moderate pressure: one merge suffices and the rest stay isolated.
        let rnp = [250, 120, 150, 150];
        let r = rebalance(&colours, &frames, &rnp, &[]).unwrap();
        assert_eq!((r.colours_lent, r.sets_shared), (0, 1));
        assert_eq!(r.colours[0], vec![0, 1, 2, 3]);
        assert_eq!(r.colours[1], r.colours[0]);
        assert_eq!(r.colours[2], vec![4, 5]);
    }

    #[test]
    fn shared_sets_count_as_one_and_a_single_set_cannot_change() {
        let all: Vec<Vec<u32>> = vec![(0..4).collect(); 2];
        assert_eq!(rebalance(&all, &[100; 4], &[300, 300], &[]), None, "one set over capacity: nothing left to do");
        // Two processes share colours 0-1 (NICE 200 − 150 − 10 = 40); process 2 is short by 50.
        let colours = vec![vec![0, 1], vec![0, 1], vec![2, 3]];
        let r = rebalance(&colours, &[100, 100, 100, 10], &[150, 10, 160], &[]).unwrap();
        assert_eq!(r.colours[0], r.colours[1], "a shared set stays shared");
        assert_eq!((r.colours_lent, r.sets_shared), (0, 1));
    }
}
