//! HVR online (`os.dynamic = "hvr-online"` over the placement policy `hvr`, os/dynamic/hvr.rs): each
//! epoch the running programs' classes pick the partition and the coalescing (R1-R6); as a
//! thrasher arrives and leaves, the quotas split and merge again.

use crate::common::*;
use serde_json::{json, Value};

const LLCH: &str = "random:footprint_bytes=67108864";
const LLCM: &str = "random:footprint_bytes=3145728";

fn run(processes: Value, instructions: u64) -> Value {
    sim_run(json!({
        "machine": "i7-860", "instructions": instructions, "processes": processes,
        "os": {"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"epoch_ns": 600_000.0}},
    }))
}

/// Colours of each process after adjustment `a`, as sets.
fn sets(a: &Value) -> Vec<Vec<u32>> {
    a["colours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.as_str()
                .unwrap()
                .split(',')
                .map(str::trim)
                .flat_map(|r| match r.split_once('-') {
                    Some((lo, hi)) => (lo.parse::<u32>().unwrap()..=hi.parse().unwrap()).collect::<Vec<_>>(),
                    None => vec![r.parse().unwrap()],
                })
                .collect()
        })
        .collect()
}

/// R1 with R5/R6: a thrasher, a cache-hungry and a middle program, and a light one: A-VP's four
/// quotas, the thrasher in one, the hungry and the middle sharing two, the light one in one.
#[test]
fn a_thrasher_beside_others_gets_a_vp_with_the_papers_coalescing() {
    let v = run(json!([{"threads": ["stream"]}, {"threads": [LLCH]}, {"threads": [LLCM]}, {"threads": ["light"]}]), 3_000_000);
    let adjustments = v["dynamic"]["adjustments"].as_array().unwrap();
    assert!(!adjustments.is_empty(), "{}", v["dynamic"]);
    let s = sets(adjustments.last().unwrap());
    // 128 colours of (2, 3, 2); A-VP's sub-colour is the two O-bits: 32 colours each.
    assert_eq!(s.iter().map(Vec::len).collect::<Vec<_>>(), vec![32, 64, 64, 32], "{s:?}");
    assert_eq!(s[1], s[2], "R5: LLCH and LLCM share");
    assert!(s[0].iter().all(|c| !s[1].contains(c) && !s[3].contains(c)), "the thrasher is isolated");
    assert_eq!(u(&v["dynamic"]["pages_recoloured"]), 0, "quotas apply to new pages; resident ones stay");
    assert_eq!(v["config"]["os"]["hot_pages"]["enabled"], true, "HVR online samples accessed bits whatever the key says");
}

/// An open mix: three programs without a thrasher (R2: Bank-Only, the four bank quotas split
/// among them as the static policy splits them); a stream
/// arrives at 1.5 ms (R1: A-VP, LLCH and LLCM merged into one quota) and leaves at its end
/// (Bank-Only again, the merged quota split).
#[test]
fn quotas_split_when_a_thrasher_arrives_and_merge_back_when_it_leaves() {
    let v = run(
        json!([
            {"threads": [LLCH]}, {"threads": [LLCM]}, {"threads": ["light"]},
            {"threads": ["stream"], "arrive_ns": 1_500_000.0, "at_end": "exit", "instructions": 4_000_000},
        ]),
        12_000_000,
    );
    let arrived = 1_500_000.0;
    let left = v["processes"][3]["finished_ns"].as_f64().unwrap();
    let adjustments = v["dynamic"]["adjustments"].as_array().unwrap();
    let at = |a: &Value| a["at_ns"].as_f64().unwrap();
    let before: Vec<&Value> = adjustments.iter().filter(|a| at(a) < arrived).collect();
    let during: Vec<&Value> = adjustments.iter().filter(|a| at(a) > arrived && at(a) < left).collect();
    let after: Vec<&Value> = adjustments.iter().filter(|a| at(a) > left).collect();
    assert!(!before.is_empty() && !during.is_empty() && !after.is_empty(), "{adjustments:?} (stream left at {left})");
    let disjoint = |a: &[u32], b: &[u32]| a.iter().all(|c| !b.contains(c));
    let bank_only = |s: &[Vec<u32>]| {
        disjoint(&s[0], &s[1]) && disjoint(&s[1], &s[2]) && disjoint(&s[0], &s[2]) && s[..3].iter().map(Vec::len).sum::<usize>() == 128
    };
    assert!(bank_only(&sets(before.last().unwrap())), "R2 before: {:?}", sets(before.last().unwrap()));
    let s = sets(during.last().unwrap());
    assert!(s[0] == s[1] && s[3].len() == 32 && !s[0].contains(&s[3][0]), "R1 while the stream runs: {s:?}");
    assert!(bank_only(&sets(after.last().unwrap())), "R2 after: {:?}", sets(after.last().unwrap()));
}

#[test]
fn hvr_runs_over_the_hvr_space_only() {
    let spec = json!({"machine": "i7-860", "instructions": 1000, "programs": ["light"], "os": {"policy": "a-vp", "dynamic": "hvr-online"}});
    let e = memtint_engine::multicore::run_sim_json(&spec.to_string()).expect_err("refused").to_string();
    assert!(e.contains("os.dynamic") && e.contains("hvr"), "{e}");
    let spec = json!({"machine": "i7-860", "instructions": 1000, "programs": ["light"],
                      "os": {"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"rules": "no-such-rules.toml"}}});
    let e = memtint_engine::multicore::run_sim_json(&spec.to_string()).expect_err("refused").to_string();
    assert!(e.contains("os.hvr-online.rules") && e.contains("no-such-rules.toml"), "{e}");
}

/// Mined rules decide instead of the paper's: a file that always picks cache-only runs with
/// cache-only's partition; one picking a policy outside HVR's space is refused naming it.
#[test]
fn hvr_online_decides_by_a_rules_file() {
    let dir = std::env::temp_dir().join(format!("memtint-hvr-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let always = file("always.toml", "default = \"cache-only\"\n[[partition]]\nwhen = { programs = \">=1\" }\npolicy = \"cache-only\"\n");
    let run = |rules: &str| {
        let spec = json!({"machine": "i7-860", "instructions": 3_000_000, "programs": ["stream", "light"],
                          "os": {"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"rules": rules, "epoch_ns": 600_000.0}}});
        memtint_engine::multicore::run_sim_json(&spec.to_string())
    };
    let out: serde_json::Value = serde_json::from_str(&run(&always).unwrap()).unwrap();
    let adjustments = out["dynamic"]["adjustments"].as_array().expect("adjustments");
    assert!(!adjustments.is_empty(), "the rules never decided");
    // Cache-only's three C-bits, no coalescing: two programs, half of the 128 colours each, apart
    // (the paper's rules would give the thrasher an eighth, A-VP's).
    let s = sets(adjustments.last().unwrap());
    assert!(s[0].len() == 64 && s[1].len() == 64 && s[0].iter().all(|c| !s[1].contains(c)), "{s:?}");
    let outside = file("outside.toml", "default = \"buddy\"\n[[partition]]\nwhen = {}\npolicy = \"a-vp\"\n");
    let e = run(&outside).unwrap_err().to_string();
    assert!(e.contains("os.hvr-online.rules") && e.contains("\"buddy\""), "{e}");
    // A mistake inside the file names the file and line, once.
    let bad = file("bad.toml", "default = \"a-vp\"\n[[partition]]\nwhen = { LLCQ = 1 }\npolicy = \"a-vp\"\n");
    let e = run(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.toml:3: partition[0].when.LLCQ") && e.matches("invalid configuration").count() <= 1, "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The paper's lazy migration (`recolour = true` with `[os.recolour] mode = "lazy"`): resident
/// pages in a colour their program lost are copied as they are touched, each a fault and a copy
/// on the touching thread; the run is not stalled for the whole mix's pages at once.
#[test]
fn lazy_recolouring_moves_resident_pages_as_they_are_touched() {
    let v = sim_run(json!({
        "machine": "i7-860", "instructions": 3_000_000, "at_end": "wait",
        "processes": [{"threads": ["stream"]}, {"threads": [LLCH]}, {"threads": [LLCM]}, {"threads": ["light"]}],
        "os": {"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"epoch_ns": 600_000.0, "recolour": true},
               "recolour": {"mode": "lazy"}},
    }));
    let d = &v["dynamic"];
    let marked: u64 = d["adjustments"].as_array().unwrap().iter().map(|a| u(&a["pages_recoloured"])).sum();
    let (copied, pending, blocked) = (u(&d["pages_recoloured"]), u(&d["recolour_pending"]), u(&d["recolour_blocked"]));
    assert!(copied > 0 && copied + pending + blocked <= marked, "{d}");
    let ghz = v["config"]["cpu"]["frequency_ghz"].as_f64().unwrap();
    let (fault, migrate) = ((1000.0 * ghz).round() as u64, (3000.0 * ghz).round() as u64);
    let stalled: u64 = (0..4).map(|p| u(&v["processes"][p]["page_migration"]["recolour_cycles"])).sum();
    assert!(stalled >= copied * (fault + migrate), "{stalled} cycles for {copied} copies");
}

/// `[os.recolour]` paces copies of resident pages; hvr-online without `recolour = true` makes
/// none, so the table is said to have no effect rather than dropped unseen.
#[test]
fn a_recolour_table_without_recolouring_is_warned_about() {
    let spec = |recolour: bool| {
        json!({
            "machine": "i7-860", "instructions": 20_000,
            "processes": [{"threads": ["stream"]}, {"threads": ["light"]}],
            "os": {"policy": "hvr", "dynamic": "hvr-online", "hvr-online": {"recolour": recolour},
                   "recolour": {"mode": "lazy"}},
        })
    };
    let said = |v: &Value| v["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("[os.recolour]"));
    let off = sim_run(spec(false));
    assert!(said(&off), "{}", off["warnings"]);
    assert!(off["warnings"].to_string().contains("[os.hvr-online] recolour = true"), "{}", off["warnings"]);
    let on = sim_run(spec(true));
    assert!(!said(&on), "{}", on["warnings"]);
}
