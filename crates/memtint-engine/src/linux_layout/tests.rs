//! The colour layouts and policy partitions the Linux commands use (issue 5): the same colours
//! and sets as the simulator's OS model.

use super::{colour_layout_json, policy_partition_json};
use crate::os::parity_table::eval_parity as eval;
use crate::os::{OsConfig, OsModel};
use serde_json::Value;

fn layout(request: &str) -> Value {
    serde_json::from_str(&colour_layout_json(request).unwrap()).unwrap()
}

fn partition(request: &str) -> Value {
    serde_json::from_str(&policy_partition_json(request).unwrap()).unwrap()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

#[test]
fn i7_860_bank_space_is_bpm_bits_13_14_15_21_22() {
    let l = layout(r#"{"machine": "i7-860", "space": "bank"}"#);
    let masks = u64s(&l["space"]["masks"]);
    let mut bits: Vec<u32> = masks.iter().map(|m| m.trailing_zeros()).collect();
    bits.sort_unstable();
    assert_eq!(bits, [13, 14, 15, 21, 22]);
    assert!(masks.iter().all(|m| m.count_ones() == 1));
    assert_eq!(l["space"]["colours"], 32);
    assert_eq!(l["page_bytes"], 4096);
    assert_eq!(l["space"]["masks_hex"][0].as_str().unwrap(), format!("{:#x}", masks[0]));
}

#[test]
fn i7_860_channel_bit_6_lies_inside_the_page_and_is_reported() {
    let l = layout(r#"{"machine": "i7-860"}"#);
    assert_eq!(u64s(&l["in_page"]["channel_bits_below_page"]), [6]);
    assert_eq!(u64s(&l["in_page"]["channel_offsets"]), [0, 1]);
    // One page covers two banks, one per channel: the bank id's channel bit is its highest.
    assert_eq!(u64s(&l["in_page"]["bank_offsets"]), [0, 32]);
    assert_eq!(u64s(&l["functions"]["bank"]).len(), 6);
    assert!(!l["bits"]["not_page_controllable"].as_array().unwrap().is_empty());
}

#[test]
fn bpm_plus_mapping_has_page_controllable_channels() {
    let l = layout(r#"{"machine": "i7-860-bpm-plus", "space": "channel-bank"}"#);
    assert_eq!(l["space"]["colours"], 64);
    assert_eq!(u64s(&l["in_page"]["channel_offsets"]), [0]);
    assert_eq!(u64s(&l["in_page"]["bank_offsets"]), [0]);
}

#[test]
fn vertical_spaces_use_hvr_table_1_bits() {
    let l = layout(r#"{"machine": "i7-860", "space": "cache-only"}"#);
    assert_eq!(u64s(&l["space"]["masks"]), [1 << 16, 1 << 17, 1 << 18]);
    let v = layout(r#"{"machine": "i7-860", "space": "vertical", "vertical": [0, 0, 2]}"#);
    assert_eq!(v["space"]["masks"], layout(r#"{"machine": "i7-860", "space": "a-vp"}"#)["space"]["masks"]);
}

#[test]
fn bad_layout_requests_are_errors_naming_the_problem() {
    let e = colour_layout_json(r#"{"machine": "i7-860", "space": "banks"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown colour space 'banks'") && e.contains("channel-bank"), "{e}");
    let e = colour_layout_json(r#"{"machine": "i7-860", "space": "channel"}"#).unwrap_err().to_string();
    assert!(e.contains("b6") && e.contains("i7-860-bpm-plus"), "{e}");
    let e = colour_layout_json(r#"{"machine": "no-such-machine"}"#).unwrap_err().to_string();
    assert!(e.contains("no-such-machine"), "{e}");
    let e = colour_layout_json(r#"{"machine": "i7-860", "space": "vertical"}"#).unwrap_err().to_string();
    assert!(e.contains("(i, j, k)"), "{e}");
    let e = colour_layout_json(r#"{"machin": "i7-860"}"#).unwrap_err().to_string();
    assert!(e.contains("colour layout request: unknown field `machin`"), "{e}");
    let e = colour_layout_json(r#"{"machine": "i7-860", "exclude_bits": [1e400]}"#).unwrap_err().to_string();
    assert!(e.contains("exclude_bits[0]: not valid JSON"), "{e}");
    let e = colour_layout_json("").unwrap_err().to_string();
    assert!(e.contains("colour layout request: not valid JSON"), "{e}");
}

#[test]
fn bpm_partition_is_the_os_models_and_never_shares_a_bank() {
    let p = partition(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "bpm"}}"#);
    assert_eq!(p["policy"], "bpm");
    assert_eq!(p["partitioned"], true);
    let m = crate::os::tests::mapping("i7-860");
    let os = OsModel::new(&OsConfig { policy: "bpm".into(), ..OsConfig::default() }, &m, crate::os::tests::I7_LLC, 2).unwrap();
    let report = os.colour_report().unwrap();
    let procs = p["processes"].as_array().unwrap();
    for (pid, proc_) in procs.iter().enumerate() {
        let colours: Vec<u32> = u64s(&proc_["colours"]).into_iter().map(|c| c as u32).collect();
        assert_eq!(colours, report.processes[pid].colours);
        assert_eq!(colours.len(), 16);
    }
    let banks0 = u64s(&procs[0]["banks"]);
    let banks1 = u64s(&procs[1]["banks"]);
    assert_eq!(banks0.len(), 32);
    assert!(banks0.iter().all(|b| !banks1.contains(b)));
}

#[test]
fn a_vp_and_bpm_plus_partitions_come_from_their_policies() {
    let p = partition(r#"{"machine": "i7-860", "processes": 4, "os": {"policy": "a-vp"}}"#);
    assert_eq!(p["layout"]["space"]["colours"], 4);
    assert_eq!(p["processes"].as_array().unwrap().len(), 4);
    let p = partition(r#"{"machine": "i7-860-bpm-plus", "processes": 2, "os": {"policy": "bpm-plus"}}"#);
    assert_eq!(p["processes"][0]["channels"].as_array().unwrap().len(), 1);
    assert_ne!(p["processes"][0]["channels"], p["processes"][1]["channels"]);
}

#[test]
fn unpartitioned_policies_say_so_and_bad_partitions_are_errors() {
    let p = partition(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "buddy"}}"#);
    assert_eq!(p["partitioned"], false);
    let e = policy_partition_json(r#"{"machine": "i7-860", "processes": 0, "os": {"policy": "bpm"}}"#).unwrap_err();
    assert!(e.to_string().contains("at least one process"), "{e}");
    let e = policy_partition_json(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "bmp"}}"#).unwrap_err();
    assert!(e.to_string().contains("unknown placement policy 'bmp'"), "{e}");
    let e = policy_partition_json(r#"{"machine": "i7-860", "processes": 40, "os": {"policy": "bpm"}}"#).unwrap_err();
    assert!(e.to_string().contains("40"), "{e}");
}

#[test]
fn layout_functions_agree_with_the_mappings_decode_for_every_byte_of_a_page() {
    use rand::{Rng, SeedableRng};
    let org = crate::os::tests::i7_860_org();
    let banks_per_rank = org.bank_groups * org.banks_per_group;
    for machine in ["i7-860", "i7-860-bpm-plus"] {
        let l = layout(&format!(r#"{{"machine": "{machine}"}}"#));
        let m = crate::os::tests::mapping(machine);
        let f = &l["functions"];
        let (bank, channel, rank) = (u64s(&f["bank"]), u64s(&f["channel"]), u64s(&f["rank"]));
        let offsets = |k: &str| -> Vec<u32> { u64s(&l["in_page"][k]).into_iter().map(|x| x as u32).collect() };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..2000 {
            let addr = rng.gen::<u64>() & ((1 << m.capacity_bits()) - 1);
            let page = addr & !4095;
            let d = m.decode(addr);
            let global = ((d.channel * org.ranks + d.rank) * org.bank_groups + d.bank_group) * org.banks_per_group + d.bank;
            assert!(offsets("bank_offsets").contains(&(eval(&bank, page) ^ global)), "{machine} {addr:#x}");
            assert!(offsets("channel_offsets").contains(&(eval(&channel, page) ^ d.channel)), "{machine} {addr:#x}");
            assert!(offsets("rank_offsets").contains(&(eval(&rank, page) ^ d.rank)), "{machine} {addr:#x}");
            assert!(global < org.channels * org.ranks * banks_per_rank);
        }
    }
}

/// A partition carries the warnings a run of the same [os] table would: an excluded bit no colour
/// of the policy uses changed nothing in silence.
#[test]
fn a_partition_says_which_os_settings_change_nothing() {
    let warned = |os: &str| -> Vec<String> {
        let p = partition(&format!(r#"{{"machine": "i7-860", "processes": 2, "os": {os}}}"#));
        p["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    let excluded =
        |w: &Vec<String>| w.iter().any(|w| w.starts_with("os.exclude_bits is set but") && w.contains("colours by none of the bits"));
    // bpm colours by bank bits (b13-b15, b21, b22): excluding an LLC bit leaves its sets as they were.
    assert!(excluded(&warned(r#"{"policy": "bpm", "exclude_bits": [16]}"#)));
    assert!(excluded(&warned(r#"{"policy": "buddy", "exclude_bits": [16]}"#)));
    // The general vertical policy takes its C-bits from the LLC bits left: b16 out moves them.
    let vertical = r#"{"policy": "vertical", "vertical": {"bits": [1, 2, 1]}, "exclude_bits": [16]}"#;
    assert!(!excluded(&warned(vertical)), "{:?}", warned(vertical));
    assert!(warned(r#"{"policy": "bpm"}"#).is_empty());
    // A flat key the policy does not read, as `memtint sim` says it.
    let split = warned(r#"{"policy": "buddy", "colour_split": "strided"}"#);
    assert!(split.iter().any(|w| w.starts_with("os.colour_split is set but os.policy = \"buddy\"")), "{split:?}");
}

#[test]
fn a_partition_names_the_os_keys_that_shape_it() {
    let keys = |json: &str| -> Vec<String> {
        partition(json)["shaped_by"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_string()).collect()
    };
    // A colour-set policy: its sets' keys, not frame_order or strict (they act as frames are handed out).
    assert_eq!(
        keys(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "bpm"}}"#),
        ["exclude_bits", "colours", "groups", "colour_split"]
    );
    // Its own table, and profiles where it reads them.
    let vertical = keys(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "vertical", "vertical": {"bits": [1, 2, 1]}}}"#);
    assert!(vertical.contains(&"vertical".to_string()) && vertical.contains(&"colours".to_string()), "{vertical:?}");
    let balanced = keys(
        r#"{"machine": "i7-860-bpm-plus", "processes": 2, "os": {"policy": "bpm-plus-balanced", "profiles": [{"mpki": 20, "rbh": 0.5, "bandwidth": 2}, {"mpki": 1, "rbh": 0.5, "bandwidth": 0.1}]}}"#,
    );
    assert!(balanced.contains(&"profiles".to_string()), "{balanced:?}");
    assert_eq!(keys(r#"{"machine": "i7-860", "processes": 2, "os": {"policy": "buddy"}}"#), ["exclude_bits"]);
}
