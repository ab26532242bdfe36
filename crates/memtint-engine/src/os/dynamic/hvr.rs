//! HVR online (multipolicy-hvr.md §3.5-3.6): every epoch each running process's class comes
//! from its accessed-bit features (`os/llc_class.rs`, sampled by `os/hot_pages.rs`, which this
//! policy turns on), and the paper's decision tree picks the partition and the coalescing for
//! the processes running now. As programs arrive and leave the classes present change, and
//! quotas are split and merged: an LLCT arriving splits a shared LLC into A-VP's partitions with
//! the thrashers in one small quota; once it leaves, the mix returns to Bank-Only.
//!
//! Every partition HVR's rules choose is a colour set of the placement policy `hvr`, HVR's
//! vertical (2, 3, 2) space (2 B-, 3 C- and 2 O-bits: every bit the named policies use): a named
//! policy's partition fixes its own bits (A-VP's two O-bits, Bank-Only's two B-bits, ...) and
//! leaves the others free, so the space never changes. A change applies to pages placed from
//! then on (an arriving program's, a growing footprint); resident pages stay where they are
//! unless `recolour = true` moves them, as `[os.recolour] mode` says. The paper moves them
//! lazily (§4.3, after Lin et al.): `mode = "lazy"` copies a page when it is next touched. The
//! OS's default, every page at the epoch, moves a whole mix's pages at once, which in runs of
//! milliseconds stalls the programs past the watchdog; so `recolour` is off by default.
//!
//! The decision is a rules file's (`hvr_rules.rs`; `rules = "paper"`, the default, is
//! `configs/rules/hvr-paper.toml`, the file `memtint advise` reads; `memtint mine-rules` writes
//! others): any LLCT with others → A-VP (up to 4 running programs) or C-VP (more), LLCT programs
//! in one quota of R6's share, an eighth of the colours, at least one (so one of A-VP's 4, a
//! quarter; one of C-VP's 8), LLCH and LLCM in one (R5), CCF in one (R6);
//! LLCH and no LLCT → Bank-Only, each program its banks; LLCM only → A-VP (4) / B-VP (more)
//! with R5/R6; otherwise Bank-Only. A process not running (not arrived, or gone) or not yet
//! classified (no complete sampling window) keeps a share with the first group.
//!
//! Decisions read each program's class in force: its first class at once, a different one only
//! once it has been measured `stable_epochs` epochs in a row (default 3, the paper's AVG over
//! three intervals); an epoch its process spent mostly in the kernel (its own page moves) is
//! not a measurement, and a process then keeps its class rather than counting as gone. The paper's classes are stable, so its policy changes "only when a program
//! starts or ends" (§4.3); one-epoch classes at this time scale are not (a program near a
//! threshold alternates), and following each would re-partition, and with `recolour` move
//! pages, every epoch.

use super::hvr_rules::HvrRules;
use super::{DynamicInfo, DynamicPolicy, EpochView, Repartition};
use crate::error::{Error, Result};
use crate::os::colour::ColourBits;
use crate::os::llc_class::LlcClass;
use crate::os::placement::{policy_bits, HVR_SPACE, NAMED_VERTICAL};
use crate::params::{ParamSchema, Params};
use serde::{Deserialize, Serialize};

/// Registered in `dynamic::DYNAMIC`.
pub const INFO: DynamicInfo = DynamicInfo {
    name: "hvr-online",
    summary: "HVR's online classes and rules R1-R6: the partition and coalescing for the programs running now",
    works_with: &["hvr"],
    params: ParamSchema::of::<HvrParams>(&[]),
    build: |v| {
        let params: HvrParams = v.params.get("os", INFO.name, &[])?;
        let layout = VerticalLayout::of(v.colour_bits)?;
        // A mistake inside the file names its file and line; others are the setting's.
        let rules = HvrRules::load(&params.rules).map_err(|e| match e {
            Error::Parse { .. } => e,
            Error::Config { field, reason } => Error::config(format!("os.hvr-online.rules: {field}"), reason),
            e => Error::config("os.hvr-online.rules", e.to_string()),
        })?;
        // Every policy the rules can pick must be a colour set of the `hvr` space.
        if let Some(p) = rules.online_policies().into_iter().find(|p| !layout.policies.iter().any(|(n, _)| n == p)) {
            let known: Vec<&str> = layout.policies.iter().map(|(n, _)| *n).collect();
            return Err(Error::config(
                "os.hvr-online.rules",
                format!("{}: policy \"{p}\" is not one HVR online can move between; it picks from {}", params.rules, known.join(", ")),
            ));
        }
        Ok(Box::new(Hvr { params, layout, rules, held: Vec::new(), seen: Vec::new() }))
    },
};

/// `[os.hvr-online]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HvrParams {
    /// Time between decisions, ns (default 1 ms: the paper's 3 s windows, several per decision).
    pub epoch_ns: f64,
    /// The rules deciding each epoch: "paper" (`configs/rules/hvr-paper.toml`) or a rules file's
    /// path (`memtint mine-rules` writes them).
    pub rules: String,
    /// Copy resident pages into their process's new colours at each change (default false:
    /// the quotas apply to pages placed from then on, as an allocator's colour lists do).
    pub recolour: bool,
    /// Epochs in a row a program must be measured in a new class before decisions use it.
    pub stable_epochs: u32,
}

impl Default for HvrParams {
    fn default() -> Self {
        HvrParams { epoch_ns: 1_000_000.0, rules: "paper".into(), recolour: false, stable_epochs: 3 }
    }
}

impl Params for HvrParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if !(self.epoch_ns.is_finite() && self.epoch_ns >= 1000.0) {
            return Err(("epoch_ns", format!("must be at least 1000 ns, got {}", self.epoch_ns)));
        }
        if self.stable_epochs == 0 {
            return Err(("stable_epochs", "must be at least 1 (1: every epoch's class is used)".into()));
        }
        Ok(())
    }
}

/// Where each named HVR policy's bits sit in the (2, 3, 2) colour: positions of its colour bits.
#[derive(Clone, Debug, PartialEq)]
pub struct VerticalLayout {
    /// Colours of the space.
    pub colours: u32,
    /// (policy, positions of its bits within a colour number, low first).
    pub policies: Vec<(&'static str, Vec<u32>)>,
}

impl VerticalLayout {
    /// The placement policy `hvr`'s (2, 3, 2) colours on `bits`: where each named policy's sit.
    pub fn of(bits: &ColourBits) -> Result<Self> {
        let space = policy_bits("hvr", HVR_SPACE, bits)?;
        let mut policies = Vec::new();
        for &(name, ijk) in NAMED_VERTICAL {
            let own = policy_bits(name, ijk, bits)?;
            let positions: Option<Vec<u32>> = own.iter().map(|b| space.iter().position(|s| s == b).map(|p| p as u32)).collect();
            if let Some(positions) = positions {
                policies.push((name, positions));
            }
        }
        Ok(VerticalLayout { colours: 1 << space.len(), policies })
    }

    fn positions(&self, policy: &str) -> &[u32] {
        self.policies.iter().find(|(p, _)| *p == policy).map_or(&[], |(_, b)| b.as_slice())
    }

    /// The sub-colour of `policy` colour `c` of the space falls in.
    fn sub(&self, policy: &str, c: u32) -> u32 {
        self.positions(policy).iter().enumerate().fold(0, |v, (n, &pos)| v | ((c >> pos) & 1) << n)
    }
}

struct Hvr {
    params: HvrParams,
    layout: VerticalLayout,
    rules: HvrRules,
    /// Per process: the class decisions use (`None`: not running or not classified).
    held: Vec<Option<LlcClass>>,
    /// Per process: a class other than the one held, and the epochs in a row it was measured.
    seen: Vec<Option<(LlcClass, u32)>>,
}

impl Hvr {
    /// Each process's class in force after this epoch's measurements `now`; a process not
    /// `measured` (in the kernel most of the epoch) keeps its class and its count.
    fn hold(&mut self, now: &[Option<LlcClass>], measured: &[bool]) {
        self.held.resize(now.len(), None);
        self.seen.resize(now.len(), None);
        for (p, &class) in now.iter().enumerate() {
            if !measured.get(p).copied().unwrap_or(true) {
                continue;
            }
            match (class, self.held[p]) {
                (None, _) => (self.held[p], self.seen[p]) = (None, None),
                (Some(c), None) => (self.held[p], self.seen[p]) = (Some(c), None),
                (Some(c), Some(h)) if c == h => self.seen[p] = None,
                (Some(c), Some(_)) => {
                    let n = match self.seen[p] {
                        Some((s, n)) if s == c => n + 1,
                        _ => 1,
                    };
                    self.seen[p] = Some((c, n));
                    if n >= self.params.stable_epochs {
                        (self.held[p], self.seen[p]) = (Some(c), None);
                    }
                }
            }
        }
    }
}

/// Sub-colour sets out of `values` for `groups`: a group with a share takes that share (at
/// least one, and never so much that a later group is left none), the others split the rest
/// evenly; more groups than values share round-robin (whole sets, never a part of one).
fn sub_sets(groups: &[(Vec<usize>, Option<f64>)], values: u32) -> Vec<Vec<u32>> {
    let g = groups.len() as u32;
    if g > values {
        return (0..g).map(|i| vec![i % values]).collect();
    }
    // A share of 0.9 of 4 values rounds to all 4: the groups after it would get a value of its
    // set, two sets in part the same, which no placement can honour.
    let mut reserved = 0;
    let fixed: Vec<Option<u32>> = groups
        .iter()
        .enumerate()
        .map(|(i, (_, s))| {
            s.map(|s| {
                let room = values - reserved - (g - 1 - i as u32);
                let size = ((s * values as f64).round() as u32).clamp(1, room);
                reserved += size;
                size
            })
        })
        .collect();
    let free = fixed.iter().filter(|f| f.is_none()).count() as u32;
    let taken: u32 = fixed.iter().flatten().sum();
    let left = values.saturating_sub(taken).max(free);
    let mut sizes: Vec<u32> = fixed.iter().map(|f| f.unwrap_or(0)).collect();
    let mut k = 0;
    for (i, f) in fixed.iter().enumerate() {
        if f.is_none() {
            sizes[i] = left / free + u32::from(k < left % free);
            k += 1;
        }
    }
    if free == 0 {
        sizes[0] += values.saturating_sub(taken);
    }
    let mut next = 0;
    sizes
        .iter()
        .map(|&s| {
            let set: Vec<u32> = (next..(next + s).min(values)).collect();
            next += s;
            if set.is_empty() {
                vec![values - 1]
            } else {
                set
            }
        })
        .collect()
}

impl DynamicPolicy for Hvr {
    fn epoch_ns(&self) -> f64 {
        self.params.epoch_ns
    }

    fn needs_classes(&self) -> bool {
        true
    }

    fn recolours(&self) -> bool {
        self.params.recolour
    }

    fn on_epoch(&mut self, v: &EpochView) -> Option<Repartition> {
        let now: Vec<Option<LlcClass>> = (0..v.colours.len()).map(|p| v.classes.get(p).copied().flatten()).collect();
        // A process whose threads spent most of the epoch in the kernel (faults, copies, swap)
        // touched few pages for reasons of its own moves, not of its access pattern: no
        // measurement, as dynamic BPM+'s bandwidth window has none of it.
        let measured: Vec<bool> = (0..now.len())
            .map(|p| v.monitors.processes.get(p).is_none_or(|m| m.kernel_ns / m.threads.max(1) as f64 <= 0.5 * v.monitors.epoch_ns))
            .collect();
        self.hold(&now, &measured);
        let running: Vec<usize> = (0..v.colours.len()).filter(|&p| self.held[p].is_some()).collect();
        if running.is_empty() {
            return None;
        }
        let classes: Vec<LlcClass> = running.iter().map(|&p| self.held[p].expect("filtered")).collect();
        let (policy, groups) = self.rules.decide(&classes);
        let policy = policy.as_str();
        let values = 1u32 << self.layout.positions(policy).len();
        let sets = sub_sets(&groups, values);
        let mut sub_of_process: Vec<Option<&Vec<u32>>> = vec![None; v.colours.len()];
        for ((members, _), set) in groups.iter().zip(&sets) {
            for &i in members {
                sub_of_process[running[i]] = Some(set);
            }
        }
        let colours_for =
            |subs: &Vec<u32>| (0..self.layout.colours).filter(|&c| subs.contains(&self.layout.sub(policy, c))).collect::<Vec<u32>>();
        let first = colours_for(&sets[0]);
        let colours: Vec<Vec<u32>> = sub_of_process.iter().map(|s| s.map_or_else(|| first.clone(), colours_for)).collect();
        if colours.as_slice() == v.colours {
            return None;
        }
        let sets_shared = groups.iter().filter(|(m, _)| m.len() > 1).count() as u64;
        Some(Repartition { colours, colours_lent: 0, sets_shared })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LlcClass::*;

    #[test]
    fn quotas_give_the_thrashers_an_eighth_and_split_the_rest() {
        // C-VP's 8 sub-colours: the five LLCT of workload 22' in one, the others in seven.
        let groups = vec![(vec![0, 1, 2, 3, 4], Some(0.125)), (vec![5, 6, 7], None)];
        assert_eq!(sub_sets(&groups, 8), vec![vec![0], vec![1, 2, 3, 4, 5, 6, 7]]);
        // A-VP's 4: the thrasher takes one (an eighth rounds up to one), two groups share three.
        let groups = vec![(vec![0], Some(0.125)), (vec![1, 2], None), (vec![3], None)];
        assert_eq!(sub_sets(&groups, 4), vec![vec![0], vec![1, 2], vec![3]]);
        // A share that would take every value leaves one to each later group: no set is in
        // part another's (it used to give [0, 1, 2, 3] and [3]).
        for share in [0.9, 1.0] {
            let groups = vec![(vec![0], Some(share)), (vec![1], None)];
            assert_eq!(sub_sets(&groups, 4), vec![vec![0, 1, 2], vec![3]]);
            let groups = vec![(vec![0], Some(share)), (vec![1], Some(share)), (vec![2], None)];
            assert_eq!(sub_sets(&groups, 4), vec![vec![0, 1], vec![2], vec![3]]);
        }
        // Bank-Only's 4 values for 5 programs: round-robin.
        let each: Vec<_> = (0..5).map(|i| (vec![i], None)).collect();
        assert_eq!(sub_sets(&each, 4), vec![vec![0], vec![1], vec![2], vec![3], vec![0]]);
    }

    #[test]
    fn a_class_counts_once_it_is_measured_stable_epochs_in_a_row() {
        let mut h = Hvr {
            params: HvrParams::default(),
            layout: VerticalLayout { colours: 4, policies: vec![] },
            rules: HvrRules::load("paper").unwrap(),
            held: Vec::new(),
            seen: Vec::new(),
        };
        // The first class at once; an alternating one never; three in a row, then.
        let steps = [Some(Llcm), Some(Ccf), Some(Llcm), Some(Ccf), Some(Ccf), Some(Ccf), Some(Llcm), None, Some(Llct)];
        let held: Vec<Option<LlcClass>> = steps
            .iter()
            .map(|&c| {
                h.hold(&[c], &[true]);
                h.held[0]
            })
            .collect();
        let want = [Some(Llcm), Some(Llcm), Some(Llcm), Some(Llcm), Some(Llcm), Some(Ccf), Some(Ccf), None, Some(Llct)];
        assert_eq!(held, want);
        // Epochs in the kernel are not measurements: neither a class nor an absence, nor a break
        // in a run of new ones.
        h.hold(&[Some(Ccf)], &[true]);
        for c in [Some(Ccf), None, Some(Llcm), Some(Ccf)] {
            h.hold(&[c], &[false]);
            assert_eq!(h.held[0], Some(Llct));
        }
        h.hold(&[Some(Ccf)], &[true]);
        assert_eq!(h.held[0], Some(Llct));
        h.hold(&[Some(Ccf)], &[true]);
        assert_eq!(h.held[0], Some(Ccf), "three measured epochs in a row, four unmeasured between them");
    }

    #[test]
    fn a_named_policys_sub_colour_reads_its_bits() {
        // (2, 3, 2) on bits b14 b15 b16 b17 b18 b21 b22 (colour bits 0-6): A-VP is b14-15, bits 0-1.
        let layout = VerticalLayout { colours: 128, policies: vec![("a-vp", vec![0, 1]), ("bank-only", vec![5, 6])] };
        assert_eq!(layout.sub("a-vp", 0b110_0110), 0b10);
        assert_eq!(layout.sub("bank-only", 0b110_0110), 0b11);
        assert_eq!((0..128).filter(|&c| layout.sub("bank-only", c) == 2).count(), 32);
    }
}
