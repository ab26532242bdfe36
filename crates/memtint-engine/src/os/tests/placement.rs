//! Placement policies through the OsModel facade: isolation, reach, scatter, overflow,
//! determinism and configuration errors.

use super::{mapping, I7_LLC};
use crate::os::{OsConfig, OsModel};
use std::collections::BTreeSet;

fn cfg(policy: &str) -> OsConfig {
    OsConfig { policy: policy.to_string(), ..OsConfig::default() }
}

fn model(cfg: &OsConfig, mapping_name: &str, processes: u32) -> OsModel {
    OsModel::new(cfg, &mapping(mapping_name), I7_LLC, processes).unwrap()
}

fn error(cfg: &OsConfig, mapping_name: &str, processes: u32) -> String {
    match OsModel::new(cfg, &mapping(mapping_name), I7_LLC, processes) {
        Ok(_) => panic!("expected an error for {cfg:?}"),
        Err(e) => e.to_string(),
    }
}

/// Touch `pages` distinct pages of `pid`, spread over a large virtual range.
fn touch(os: &mut OsModel, pid: u32, pages: u64) -> Vec<u64> {
    (0..pages).map(|p| os.translate(pid, (p * 7919 + 13) << 12 | 0x40).unwrap() & !0xFFF).collect()
}

/// Global bank ids every cache line of the frames decodes to, straight from the mapping.
fn decoded_banks(m: &crate::mapping::AddressMapping, frames: &[u64]) -> BTreeSet<u32> {
    let mut banks = BTreeSet::new();
    for &f in frames {
        for line in 0..64 {
            let d = m.decode(f | line << 6);
            banks.insert((d.channel * 4 + d.rank) * 8 + d.bank);
        }
    }
    banks
}

#[test]
fn bpm_never_shares_a_bank() {
    let m = mapping("i7-860");
    let mut os = OsModel::new(&OsConfig { strict: true, ..cfg("bpm") }, &m, I7_LLC, 4).unwrap();
    let mut seen: Vec<BTreeSet<u32>> = Vec::new();
    for pid in 0..4 {
        let frames = touch(&mut os, pid, 3000);
        let banks = decoded_banks(&m, &frames);
        assert_eq!(banks.len(), 16, "process {pid}: 8 colours x 2 channels");
        assert_eq!(os.process_placement(pid).banks_used, banks.iter().copied().collect::<Vec<_>>());
        for (other, theirs) in seen.iter().enumerate() {
            assert!(banks.is_disjoint(theirs), "processes {other} and {pid} share a bank");
        }
        seen.push(banks);
    }
}

#[test]
fn bpm_splits_32_bank_colours_evenly_over_4_processes() {
    let os = model(&cfg("bpm"), "i7-860", 4);
    let report = os.colour_report().unwrap();
    assert_eq!(report.colours, 32);
    for p in &report.processes {
        let first = p.pid * 8;
        assert_eq!(p.colours, (first..first + 8).collect::<Vec<_>>());
        assert_eq!(p.frames, 8 * 65536);
        // Colour = rank * 8 + bank: process p owns rank p on both channels.
        let banks: Vec<u32> = (first..first + 8).chain(first + 32..first + 40).collect();
        assert_eq!(p.banks, banks);
        assert_eq!((p.channels.clone(), p.llc_sets), (vec![0, 1], 8192));
    }
}

#[test]
fn bpm_plus_processes_reach_disjoint_channels_and_banks() {
    let two = model(&cfg("bpm-plus"), "i7-860-bpm-plus", 2).colour_report().unwrap();
    assert_eq!(two.colours, 64);
    assert_eq!((two.processes[0].channels.clone(), two.processes[1].channels.clone()), (vec![0], vec![1]));

    let mut os = model(&cfg("bpm-plus"), "i7-860-bpm-plus", 4);
    let mut seen: Vec<BTreeSet<u32>> = Vec::new();
    for pid in 0..4 {
        touch(&mut os, pid, 2000);
        let placed = os.process_placement(pid);
        assert_eq!(placed.channels_used, [pid / 2], "process {pid}");
        assert_eq!(placed.banks_used.len(), 16, "process {pid}");
        let banks: BTreeSet<u32> = placed.banks_used.into_iter().collect();
        assert!(seen.iter().all(|s| s.is_disjoint(&banks)), "process {pid} shares a bank");
        seen.push(banks);
    }
}

fn balanced(bandwidth: &[Option<f64>]) -> OsConfig {
    let profiles = bandwidth.iter().map(|&b| crate::os::AppProfile { mpki: 10.0, rbh: 0.5, bandwidth: b }).collect();
    OsConfig { profiles: Some(profiles), ..cfg("bpm-plus-balanced") }
}

#[test]
fn bpm_plus_balanced_pairs_each_heavy_program_with_a_light_one() {
    // In bpm-plus's order the two heavy programs would share channel 0 (UF 3).
    let mut os = model(&balanced(&[Some(4.0), Some(4.0), Some(1.0), Some(1.0)]), "i7-860-bpm-plus", 4);
    let channels: Vec<Vec<u32>> = (0..4)
        .map(|pid| {
            touch(&mut os, pid, 2000);
            os.process_placement(pid).channels_used
        })
        .collect();
    assert_eq!(channels, [vec![0], vec![1], vec![0], vec![1]]);
    // Each keeps BPM+'s 16 banks, none shared.
    let report = os.colour_report().unwrap();
    let mut seen = BTreeSet::new();
    for p in &report.processes {
        assert_eq!(p.colours.len(), 16, "process {}", p.pid);
        assert!(p.colours.iter().all(|&c| seen.insert(c)), "process {} shares a colour", p.pid);
    }
    // A balanced mix keeps bpm-plus's colours exactly.
    let even = model(&cfg("bpm-plus"), "i7-860-bpm-plus", 4).colour_report().unwrap();
    let kept = model(&balanced(&[Some(3.0), Some(1.0), Some(2.0), Some(2.0)]), "i7-860-bpm-plus", 4).colour_report().unwrap();
    let sets = |r: &crate::os::ColourReport| r.processes.iter().map(|p| p.colours.clone()).collect::<Vec<_>>();
    assert_eq!(sets(&kept), sets(&even));
}

#[test]
fn bpm_plus_balanced_on_four_channels_pairs_each_heavy_program_with_a_light_one() {
    // Two channel bits (CCPS's RoRaBaChCo, 4 channels x 2 ranks): one heavy and one light
    // program per channel is the only assignment with UF 0.
    let m = crate::config::resolve_mapping("RoRaBaChCo", &super::small_org(4, 2)).unwrap();
    let cfg = balanced(&[Some(4.0), Some(4.0), Some(4.0), Some(4.0), Some(1.0), Some(1.0), Some(1.0), Some(1.0)]);
    let report = OsModel::new(&cfg, &m, I7_LLC, 8).unwrap().colour_report().unwrap();
    let channel = |pid: usize| match report.processes[pid].channels[..] {
        [ch] => ch,
        ref many => panic!("process {pid} reaches channels {many:?}"),
    };
    let heavy: BTreeSet<u32> = (0..4).map(channel).collect();
    let light: BTreeSet<u32> = (4..8).map(channel).collect();
    assert_eq!((heavy.len(), light.len()), (4, 4), "{report:?}");
    let mut seen = BTreeSet::new();
    for p in &report.processes {
        assert_eq!(p.colours.len() as u32, report.colours / 8, "process {}", p.pid);
        assert!(p.colours.iter().all(|&c| seen.insert(c)), "process {} shares a colour", p.pid);
    }
}

#[test]
fn bpm_plus_balanced_errors_name_the_key() {
    let cases: [(OsConfig, u32, &str); 5] = [
        (cfg("bpm-plus-balanced"), 4, "os.profiles: policy bpm-plus-balanced needs each process's alone bandwidth"),
        (
            balanced(&[Some(1.0), None, Some(1.0), Some(1.0)]),
            4,
            "os.profiles[1].bandwidth: policy bpm-plus-balanced balances channels by it",
        ),
        (balanced(&[Some(1.0), Some(f64::NAN), Some(1.0), Some(1.0)]), 4, "os.profiles[1].bandwidth: must be a finite number >= 0"),
        (balanced(&[Some(1.0); 3]), 3, "3 is not a multiple of 2; use bpm-plus or channel-only"),
        (OsConfig { groups: Some(vec![0, 0, 1, 1]), ..balanced(&[Some(1.0); 4]) }, 4, "os.groups: policy bpm-plus-balanced chooses"),
    ];
    for (c, processes, want) in cases {
        let err = error(&c, "i7-860-bpm-plus", processes);
        assert!(err.contains(want), "{c:?}: {err}");
    }
}

#[test]
fn bpm_plus_on_the_default_i7_860_is_a_clear_error() {
    assert_eq!(
        error(&cfg("bpm-plus"), "i7-860", 4),
        "invalid configuration: os.policy: mapping i7-860 selects the channel with b6, below the 4 KiB page \
         offset; use a mapping whose channel bit is above it, e.g. i7-860-bpm-plus"
    );
}

#[test]
fn hvr_table_1_policies_touch_the_paper_s_sets_and_banks() {
    // (policy, colours = processes, LLC sets and banks one colour reaches: HVR §8.2 T1)
    for (policy, processes, sets, banks) in [
        ("cache-only", 8, 1024, 64),
        ("bank-only", 4, 8192, 16),
        ("bank-only-8", 8, 4096, 8),
        ("a-vp", 4, 2048, 16),
        ("b-vp", 8, 2048, 8),
        ("c-vp", 8, 1024, 16),
    ] {
        let mut os = model(&cfg(policy), "i7-860", processes);
        let frames = touch(&mut os, 0, 4096);
        let touched: BTreeSet<u64> = frames.iter().flat_map(|&f| (0..64u64).map(move |l| ((f | l << 6) >> 6) & 8191)).collect();
        let placed = os.process_placement(0);
        assert_eq!((touched.len(), placed.banks_used.len()), (sets, banks), "{policy}");
        let report = os.colour_report().unwrap();
        assert_eq!((report.processes[0].llc_sets, report.processes[0].banks.len()), (sets, banks), "{policy}");
    }
}

#[test]
fn generic_vertical_takes_i_j_k_from_the_configuration() {
    let os = model(&cfg("vertical").with_param("vertical", "bits", vec![1, 0, 2]), "i7-860", 8);
    assert_eq!(os.colour_report().unwrap().space, "vertical: 8 colours from b14, b15, b22 (colour bit 0 first)");
    assert!(error(&cfg("vertical"), "i7-860", 8).contains("os.vertical.bits: policy 'vertical' needs [os.vertical] bits = [i, j, k]"));
    // The deprecated flat key still works, with a warning naming the new spelling.
    let old: OsConfig = toml::from_str("policy = \"vertical\"\nvertical = [1, 0, 2]").unwrap();
    assert_eq!(model(&old, "i7-860", 8).colour_report().unwrap().space, os.colour_report().unwrap().space);
    assert_eq!(
        crate::os::placement::warnings(&old).unwrap(),
        ["os.vertical is deprecated and will be removed: write it as [os.vertical] bits"]
    );
}

#[test]
fn buddy_baseline_scatters_one_process_over_all_banks() {
    let mut os = model(&cfg("buddy"), "i7-860", 4);
    touch(&mut os, 0, 1000);
    let placed = os.process_placement(0);
    assert_eq!(placed.pages, 1000);
    assert!(placed.banks_used.len() >= 60, "only {} banks", placed.banks_used.len());
}

#[test]
fn random_interleave_reaches_every_bank() {
    let mut os = model(&cfg("random-interleave"), "i7-860", 2);
    touch(&mut os, 1, 1000);
    assert_eq!(os.process_placement(1).banks_used.len(), 64);
    let plus = model(&cfg("random-interleave"), "i7-860-bpm-plus", 2);
    assert_eq!(plus.colour_report().unwrap().colours, 64);
}

#[test]
fn full_colours_borrow_from_the_least_used_and_count_it() {
    let mut os = model(&cfg("bpm"), "i7-860", 4);
    touch(&mut os, 2, 8 * 65536 + 100);
    let placed = os.process_placement(2);
    assert_eq!((placed.pages, placed.colour_overflow_pages), (8 * 65536 + 100, 100));
    assert_eq!(placed.banks_used.len(), 64, "borrowed frames land on the other processes' banks");
    assert_eq!(os.process_placement(0).colour_overflow_pages, 0);
}

#[test]
fn full_colours_under_strict_name_the_process_and_its_colours() {
    let mut os = model(&OsConfig { strict: true, ..cfg("bpm") }, "i7-860", 4);
    touch(&mut os, 2, 8 * 65536);
    let err = os.translate(2, 1 << 40).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "process 2 (colours 16-23): no free frame left in its 8 colours (524288 frames); set os.strict = \
             false to borrow from other colours"
        ),
        "{err}"
    );
}

#[test]
fn coalesced_processes_share_one_colour_set() {
    let groups = OsConfig { groups: Some(vec![0, 0, 1, 1]), ..cfg("a-vp") };
    let report = model(&groups, "i7-860", 4).colour_report().unwrap();
    let colours: Vec<Vec<u32>> = report.processes.iter().map(|p| p.colours.clone()).collect();
    assert_eq!(colours, [vec![0, 1], vec![0, 1], vec![2, 3], vec![2, 3]]);

    let explicit = OsConfig { colours: Some(vec![vec![3], vec![0, 1, 2]]), groups: Some(vec![1, 0, 1]), ..cfg("a-vp") };
    let report = model(&explicit, "i7-860", 3).colour_report().unwrap();
    assert_eq!(report.processes[1].colours, [3]);
    assert_eq!(report.processes[2].banks.len(), 48, "3 of the 4 a-vp colours");
}

#[test]
fn same_seed_places_the_same_frames() {
    for policy in ["buddy", "random-interleave", "bpm"] {
        let run = |seed| {
            let mut os = model(&OsConfig { seed: Some(seed), ..cfg(policy) }, "i7-860", 2);
            (0..2).flat_map(|pid| touch(&mut os, pid, 500)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7), "{policy}");
        if policy != "bpm" {
            assert_ne!(run(7), run(8), "{policy}");
        }
    }
}

#[test]
fn translation_keeps_the_offset_and_reuses_the_frame() {
    let mut os = model(&cfg("bpm"), "i7-860", 1);
    let a = os.translate(0, 0x1234_5678).unwrap();
    assert_eq!(a & 0xFFF, 0x678);
    assert_eq!(os.translate(0, 0x1234_5000).unwrap(), a & !0xFFF);
    assert_eq!(os.process_placement(0).pages, 1);
    assert!(os.translate(1, 0).unwrap_err().to_string().contains("process 1 does not exist (1 processes)"));
}

#[test]
fn invalid_configurations_are_explained() {
    let unknown = error(&cfg("bpm-pluss"), "i7-860", 4);
    assert!(
        unknown.contains("os.policy: unknown placement policy 'bpm-pluss'; valid placement policies: buddy, bpm, bpm-plus"),
        "{unknown}"
    );
    let cases: [(OsConfig, u32, &str); 9] = [
        (
            OsConfig { colours: Some(vec![vec![40], vec![1]]), ..cfg("bpm") },
            2,
            "colour 40 does not exist: the bank colour space has 32 colours (0-31)",
        ),
        (OsConfig { colours: Some(vec![vec![], vec![1]]), ..cfg("bpm") }, 2, "os.colours: colour set 0 is empty"),
        (OsConfig { colours: Some(vec![vec![1, 2], vec![2]]), ..cfg("bpm") }, 2, "colour 2 is in colour sets 0 and 1"),
        (OsConfig { colours: Some(vec![vec![1]]), ..cfg("bpm") }, 2, "gives 1 colour sets for 2 processes"),
        (
            OsConfig { colours: Some(vec![vec![1], vec![2]]), groups: Some(vec![0, 5]), ..cfg("bpm") },
            2,
            "os.groups: process 1 uses colour set 5, but there are 2 sets (0-1)",
        ),
        (OsConfig { groups: Some(vec![0, 2]), ..cfg("bpm") }, 2, "os.groups: colour set 1 is used by no process"),
        (cfg("bpm"), 40, "policy bpm gives each of 40 processes its own colours but has only 32"),
        (cfg("a-vp"), 8, "policy a-vp gives each of 8 processes its own colours but has only 4"),
        (OsConfig { page_bytes: 2 << 20, ..cfg("bpm") }, 4, "os.page_bytes: 2097152 is not supported"),
    ];
    for (c, processes, want) in cases {
        let err = error(&c, "i7-860", processes);
        assert!(err.contains(want), "{c:?}: {err}");
    }
}

#[test]
fn os_config_reads_from_toml_with_defaults_and_rejects_unknown_fields() {
    let c: OsConfig = toml::from_str("policy = \"b-vp\"\ngroups = [0, 0]\n[ccps]\ndelta = 3").unwrap();
    assert_eq!((c.policy.as_str(), c.page_bytes, c.strict, c.groups.clone()), ("b-vp", 4096, false, Some(vec![0, 0])));
    assert_eq!(crate::os::placement::ccps_params(&c).unwrap().delta, 3);
    let refused = |text: &str| crate::os::placement::warnings(&toml::from_str::<OsConfig>(text).unwrap()).unwrap_err().to_string();
    assert!(refused("polcy = \"bpm\"").contains("os.polcy: unknown key; os keys: "));
    assert!(refused("[mcp]\nmpki = 3").contains("os.mcp: unknown field `mpki`"));
    assert!(refused("[ccps]\nbanks_per_core = 0").contains("os.ccps.banks_per_core: must be at least 1"));
    assert!(refused("[bpm]\nx = 1").contains("os.bpm: no component with parameters is named 'bpm'; tables: vertical, ccps, mcp"));
}

/// A misspelt declaration would warn of a key every run leaves at its default, never.
#[test]
fn every_key_a_policy_declares_it_reads_is_an_os_key() {
    let fields = crate::params::field_names::<OsConfig>();
    for p in crate::os::placement::POLICIES.all() {
        for key in p.reads_keys {
            assert!(fields.iter().any(|f| f == key), "{}: os.{key} is not an [os] key", p.name);
        }
    }
}
