//! HVR's rules as data: the rules file `memtint advise` reads (`configs/rules/hvr-paper.toml`,
//! the paper's R1-R6; `memtint mine-rules` writes others; format in python/memtint/hvr_rules.py),
//! read here too so HVR online decides by the same file. `[[partition]]` rules are tried in
//! order, the first whose counts hold picks the policy (by program count), else `default`;
//! `[[coalesce]]` rules group the programs of their classes into one colour set when the policy
//! partitions the LLC (groups with a `share` take their share first), every other program its own.

use crate::error::{Error, Result};
use crate::os::llc_class::LlcClass;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The paper's rules, shipped with memtint.
pub const PAPER: &str = include_str!("../../../../../configs/rules/hvr-paper.toml");

/// Policies whose colours partition the LLC: coalescing (sharing a cache quota) applies to them.
const CACHE_COLOURING: &[&str] = &["cache-only", "a-vp", "b-vp", "c-vp"];
const CLASSES: [LlcClass; 4] = [LlcClass::Llct, LlcClass::Llch, LlcClass::Llcm, LlcClass::Ccf];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    default: Option<String>,
    #[serde(default)]
    partition: Vec<PartitionSpec>,
    #[serde(default)]
    coalesce: Vec<CoalesceSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // support, confidence and reason are for people and `memtint advise`
struct PartitionSpec {
    name: Option<String>,
    #[serde(default)]
    when: BTreeMap<String, toml::Value>,
    policy: PolicySpec,
    support: Option<f64>,
    confidence: Option<f64>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PolicySpec {
    One(String),
    ByCount(BTreeMap<String, String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CoalesceSpec {
    name: Option<String>,
    classes: Vec<LlcClass>,
    share: Option<f64>,
    support: Option<f64>,
    confidence: Option<f64>,
    reason: Option<String>,
}

/// A count a rule tests: programs of a class, not of it, all programs, or multithreaded.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Count {
    Of(LlcClass),
    NotOf(LlcClass),
    Programs,
    Multithreaded,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Eq,
    AtLeast,
    AtMost,
}

#[derive(Clone, Debug, PartialEq)]
struct PartitionRule {
    when: Vec<(Count, Op, u32)>,
    /// (program count, policy), ascending; count 0: any.
    policy: Vec<(u32, String)>,
}

#[derive(Clone, Debug, PartialEq)]
struct CoalesceRule {
    classes: Vec<LlcClass>,
    share: Option<f64>,
}

/// A rules file, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct HvrRules {
    default: String,
    partition: Vec<PartitionRule>,
    coalesce: Vec<CoalesceRule>,
}

/// One decision: the policy and its groups (indices of the programs, each group's share of the
/// colours; `None`: an even share of what the shares leave).
pub type Decision = (String, Vec<(Vec<usize>, Option<f64>)>);

impl HvrRules {
    /// `paper` (the default) or a rules file's path.
    pub fn load(name: &str) -> Result<Self> {
        if name == "paper" {
            return Self::parse(PAPER, "configs/rules/hvr-paper.toml");
        }
        let text = std::fs::read_to_string(name).map_err(|e| Error::io(std::path::Path::new(name), e))?;
        Self::parse(&text, name)
    }

    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let f: RulesFile = crate::error::from_toml(text, origin)?;
        // A mistake names the file, the line of the rule's key and the key (as the Python reader does).
        let at = |table: &str, i: usize, key: &str, why: String| {
            let name = format!("{table}[{i}].{key}");
            match key_line(text, table, i, key.split('.').next().unwrap_or(key)) {
                Some(line) => Error::Parse { path: origin.into(), line, reason: format!("{name}: {why}") },
                None => Error::config(format!("{origin}: {name}"), why),
            }
        };
        let default = f.default.ok_or_else(|| {
            Error::config(format!("{origin}: default"), "HVR online needs a default policy: the one a class vector no rule covers gets")
        })?;
        if f.partition.is_empty() {
            return Err(Error::config(format!("{origin}: partition"), "give at least one [[partition]] rule"));
        }
        let fraction = |table: &str, i: usize, key: &str, v: Option<f64>| match v {
            Some(x) if !(0.0..=1.0).contains(&x) => Err(at(table, i, key, format!("must be a fraction between 0 and 1, got {x}"))),
            _ => Ok(()),
        };
        let mut partition = Vec::new();
        for (i, r) in f.partition.iter().enumerate() {
            let mut when = Vec::new();
            for (key, value) in &r.when {
                when.push(condition(key, value).map_err(|why| at("partition", i, &format!("when.{key}"), why))?);
            }
            let policy = match &r.policy {
                PolicySpec::One(p) => vec![(0, p.clone())],
                PolicySpec::ByCount(m) => {
                    let mut v = Vec::new();
                    for (k, p) in m {
                        let n = k
                            .parse::<u32>()
                            .ok()
                            .filter(|&n| n > 0)
                            .ok_or_else(|| at("partition", i, &format!("policy.{k}"), "keys are program counts (1 and up)".into()))?;
                        v.push((n, p.clone()));
                    }
                    v.sort();
                    v
                }
            };
            fraction("partition", i, "support", r.support)?;
            fraction("partition", i, "confidence", r.confidence)?;
            partition.push(PartitionRule { when, policy });
        }
        let mut coalesce: Vec<CoalesceRule> = Vec::new();
        for (i, r) in f.coalesce.iter().enumerate() {
            if r.classes.is_empty() {
                return Err(at("coalesce", i, "classes", "give at least one class".into()));
            }
            if let Some(c) = r.classes.iter().find(|c| coalesce.iter().any(|o| o.classes.contains(c))) {
                return Err(at("coalesce", i, "classes", format!("{} is already in a coalescing group", c.name())));
            }
            if let Some(s) = r.share.filter(|s| !(*s > 0.0 && *s <= 1.0)) {
                return Err(at("coalesce", i, "share", format!("must be above 0 and at most 1, got {s}")));
            }
            fraction("coalesce", i, "support", r.support)?;
            fraction("coalesce", i, "confidence", r.confidence)?;
            coalesce.push(CoalesceRule { classes: r.classes.clone(), share: r.share });
        }
        Ok(HvrRules { default, partition, coalesce })
    }

    /// Whether a rule can hold for one program's processes (HVR online's are single-threaded).
    fn reachable(rule: &PartitionRule) -> bool {
        !rule.when.iter().any(|&(c, op, v)| c == Count::Multithreaded && !holds(0, op, v))
    }

    /// The policies a decision of HVR online can pick (rules needing `multithreaded` never hold).
    pub fn online_policies(&self) -> Vec<&str> {
        let mut v: Vec<&str> =
            self.partition.iter().filter(|r| Self::reachable(r)).flat_map(|r| r.policy.iter().map(|(_, p)| p.as_str())).collect();
        v.push(&self.default);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The decision for single-threaded programs of `classes`.
    pub fn decide(&self, classes: &[LlcClass]) -> Decision {
        let n = classes.len() as u32;
        let count = |c: Count| match c {
            Count::Of(k) => classes.iter().filter(|&&x| x == k).count() as u32,
            Count::NotOf(k) => classes.iter().filter(|&&x| x != k).count() as u32,
            Count::Programs => n,
            Count::Multithreaded => 0,
        };
        let policy = self
            .partition
            .iter()
            .find(|r| r.when.iter().all(|&(c, op, v)| holds(count(c), op, v)))
            .map(|r| r.policy.iter().find(|(k, _)| *k >= n).or(r.policy.last()).map(|(_, p)| p.clone()).unwrap_or_default())
            .unwrap_or_else(|| self.default.clone());
        let mut groups: Vec<(Vec<usize>, Option<f64>)> = Vec::new();
        let mut grouped = vec![false; classes.len()];
        if CACHE_COLOURING.contains(&policy.as_str()) {
            for r in &self.coalesce {
                let members: Vec<usize> = (0..classes.len()).filter(|&i| r.classes.contains(&classes[i])).collect();
                if !members.is_empty() {
                    members.iter().for_each(|&i| grouped[i] = true);
                    groups.push((members, r.share));
                }
            }
            // Groups with a share take theirs first (`sub_sets` hands colours out in order).
            groups.sort_by_key(|(_, share)| share.is_none());
        }
        groups.extend((0..classes.len()).filter(|&i| !grouped[i]).map(|i| (vec![i], None)));
        (policy, groups)
    }
}

/// The line of `key` in the `index`-th `[[table]]` of a rules file (a line that starts with it
/// before the next table header), or of the header when the key is not on a line of its own.
fn key_line(text: &str, table: &str, index: usize, key: &str) -> Option<u64> {
    let header = format!("[[{table}]]");
    let mut seen = 0;
    let mut start = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            if start.is_some() {
                break; // past the table: the key is not on a line of its own
            }
            if t.split('#').next().map(str::trim) == Some(header.as_str()) {
                if seen == index {
                    start = Some(n as u64 + 1);
                }
                seen += 1;
            }
        } else if start.is_some() && t.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')) {
            return Some(n as u64 + 1);
        }
    }
    start
}

fn holds(n: u32, op: Op, v: u32) -> bool {
    match op {
        Op::Eq => n == v,
        Op::AtLeast => n >= v,
        Op::AtMost => n <= v,
    }
}

fn condition(key: &str, value: &toml::Value) -> std::result::Result<(Count, Op, u32), String> {
    let class = |s: &str| CLASSES.into_iter().find(|c| c.name() == s);
    let count = match key {
        "programs" => Count::Programs,
        "multithreaded" => Count::Multithreaded,
        k => match k.strip_prefix("not_") {
            Some(c) => class(c).map(Count::NotOf),
            None => class(k).map(Count::Of),
        }
        .ok_or_else(|| "unknown count; use a class (LLCT, LLCH, LLCM, CCF), not_<class>, programs or multithreaded".to_string())?,
    };
    match (count, value) {
        (Count::Multithreaded, toml::Value::Boolean(b)) => Ok((count, Op::Eq, u32::from(*b))),
        (Count::Multithreaded, v) => Err(format!("must be true or false, got {v}")),
        (_, toml::Value::Integer(i)) if *i >= 0 => Ok((count, Op::Eq, *i as u32)),
        (_, toml::Value::String(s)) => {
            let s = s.trim();
            let (op, rest) = if let Some(r) = s.strip_prefix(">=") {
                (Op::AtLeast, r)
            } else if let Some(r) = s.strip_prefix("<=") {
                (Op::AtMost, r)
            } else if let Some(r) = s.strip_prefix("==") {
                (Op::Eq, r)
            } else {
                (Op::Eq, s)
            };
            rest.trim().parse::<u32>().map(|v| (count, op, v)).map_err(|_| format!("must be a count (n, \">=n\" or \"<=n\"), got \"{s}\""))
        }
        (_, v) => Err(format!("must be a count (n, \">=n\" or \"<=n\"), got {v}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's tree as it was written by hand before the engine read the rules file.
    fn tree(classes: &[LlcClass], llct_share: f64) -> Decision {
        let n = classes.len();
        let has = |c: LlcClass| classes.contains(&c);
        let of = |cs: &[LlcClass]| (0..n).filter(|&i| cs.contains(&classes[i])).collect::<Vec<_>>();
        let coalesced = |llct: bool| {
            let mut groups = Vec::new();
            if llct && has(LlcClass::Llct) {
                groups.push((of(&[LlcClass::Llct]), Some(llct_share)));
            }
            for cs in [&[LlcClass::Llch, LlcClass::Llcm][..], &[LlcClass::Ccf][..]] {
                let members = of(cs);
                if !members.is_empty() {
                    groups.push((members, None));
                }
            }
            groups
        };
        let each = || (0..n).map(|i| (vec![i], None)).collect::<Vec<_>>();
        let (p, g) = if has(LlcClass::Llct) && classes.iter().any(|&c| c != LlcClass::Llct) {
            (if n <= 4 { "a-vp" } else { "c-vp" }, coalesced(true))
        } else if has(LlcClass::Llct) {
            ("bank-only", each())
        } else if has(LlcClass::Llch) {
            (if n <= 4 { "bank-only" } else { "bank-only-8" }, each())
        } else if has(LlcClass::Llcm) {
            (if n <= 4 { "a-vp" } else { "b-vp" }, coalesced(false))
        } else {
            ("bank-only", each())
        };
        (p.to_string(), g)
    }

    #[test]
    fn the_paper_file_decides_as_the_papers_tree_for_every_class_vector_up_to_eight_programs() {
        let rules = HvrRules::load("paper").unwrap();
        let mut checked = 0;
        for n in 1..=8u32 {
            for code in 0..4u32.pow(n) {
                let classes: Vec<LlcClass> = (0..n).map(|i| CLASSES[(code / 4u32.pow(i) % 4) as usize]).collect();
                assert_eq!(rules.decide(&classes), tree(&classes, 0.125), "{classes:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, (1..=8).map(|n| 4u32.pow(n)).sum::<u32>());
        assert_eq!(rules.online_policies(), ["a-vp", "b-vp", "bank-only", "bank-only-8", "c-vp"]);
    }

    #[test]
    fn a_mined_file_decides_by_its_own_rules_and_bad_files_name_the_key() {
        let text = "default = \"cache-only\"\n[[partition]]\nwhen = { LLCH = \">=2\" }\npolicy = { 4 = \"a-vp\" }\n\
                    [[coalesce]]\nclasses = [\"LLCH\"]\n";
        let rules = HvrRules::parse(text, "mined.toml").unwrap();
        let (h, c) = (LlcClass::Llch, LlcClass::Ccf);
        assert_eq!(rules.decide(&[h, h, c]), ("a-vp".to_string(), vec![(vec![0, 1], None), (vec![2], None)]));
        assert_eq!(rules.decide(&[h, c, c]).0, "cache-only");
        for (bad, key) in [
            ("[[partition]]\nwhen = {}\npolicy = \"a-vp\"\n", "mined.toml: default"),
            ("default = \"a-vp\"\n[[partition]]\nwhen = { LLCX = 1 }\npolicy = \"a-vp\"\n", "partition[0].when.LLCX"),
            ("default = \"a-vp\"\n[[partition]]\nwhen = { LLCT = \"some\" }\npolicy = \"a-vp\"\n", "partition[0].when.LLCT"),
            ("default = \"a-vp\"\n[[partition]]\npolicy = { x = \"a-vp\" }\n", "partition[0].policy.x"),
            ("default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\n[[coalesce]]\nclasses = [\"CCF\"]\nshare = 2.0\n", "coalesce[0].share"),
        ] {
            let e = HvrRules::parse(bad, "mined.toml").unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }

    /// A rule's mistake is named by file and line (the key's own, else its table's), support and
    /// confidence are fractions as `memtint advise` reads them, and nothing is said twice.
    #[test]
    fn mistakes_name_the_line_and_fractions_are_checked() {
        for (bad, want) in [
            (
                "default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\n\n[[partition]]\nwhen = { LLCQ = 1 }\npolicy = \"a-vp\"\n",
                "r.toml:6: partition[1].when.LLCQ: unknown count",
            ),
            ("default = \"a-vp\"\n[[partition]]\npolicy = { 0 = \"a-vp\" }\n", "r.toml:3: partition[0].policy.0: keys are program counts"),
            (
                "default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\nsupport = 7\n",
                "r.toml:4: partition[0].support: must be a fraction between 0 and 1, got 7",
            ),
            (
                "default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\n[[coalesce]]\nclasses = [\"CCF\"]\nconfidence = -0.5\n",
                "r.toml:6: coalesce[0].confidence: must be a fraction",
            ),
            (
                "default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\n[[coalesce]]\nclasses = [\"CCF\"]\nshare = 0\n",
                "r.toml:6: coalesce[0].share: must be above 0",
            ),
        ] {
            let e = HvrRules::parse(bad, "r.toml").unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}\nwanted {want}");
        }
        let ok = "default = \"a-vp\"\n[[partition]]\npolicy = \"a-vp\"\nsupport = 0.4\nconfidence = 1\n";
        assert!(HvrRules::parse(ok, "r.toml").is_ok());
        assert_eq!(key_line("[[partition]]\nwhen = {}\n", "partition", 0, "policy"), Some(1), "the table's header");
        assert_eq!(key_line("[[partition]]\n", "partition", 1, "policy"), None);
    }
}
