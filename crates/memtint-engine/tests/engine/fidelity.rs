//! What makes a comparison of policies trustworthy: a partitioning policy differs from the
//! baseline only in its colours (frame order), write-backs are charged to the program that
//! dirtied the line, a warm-up leaves the caches full and dirty, and BPM on the BPM+ machine
//! uses both channels.

use memtint_engine::multicore::{run_sim, SimSpec};
use serde_json::{json, Value};

fn sim(v: Value) -> Value {
    let spec: SimSpec = serde_json::from_value(v).expect("spec parses");
    run_sim(&spec).unwrap()
}

fn per_core(stats: &Value, key: &str) -> Vec<Value> {
    stats["cores"].as_array().unwrap().iter().map(|c| c[key].clone()).collect()
}

const MIX: [&str; 4] = ["stream", "random", "copy", "light"];

#[test]
fn a_policy_given_every_colour_places_pages_as_buddy_does() {
    let run = |os: Value| sim(json!({"machine": "i7-860", "programs": MIX, "instructions": 150_000, "seed": 3, "os": os}));
    let buddy = run(json!({"policy": "buddy"}));
    for policy in ["bpm", "cache-only"] {
        let colours = run(json!({"policy": policy}))["colours"]["colours"].as_u64().unwrap();
        let every = run(json!({"policy": policy, "colours": [(0..colours).collect::<Vec<_>>()], "groups": [0, 0, 0, 0]}));
        for key in ["ipc", "dram_reads", "dram_writes", "row_hits", "banks"] {
            assert_eq!(per_core(&every, key), per_core(&buddy, key), "{policy} with every colour differs from buddy in {key}");
        }
    }
}

#[test]
fn the_ascending_frame_order_is_still_available_and_differs() {
    let run = |order: &str| {
        sim(json!({"machine": "i7-860-bpm-plus", "programs": MIX, "instructions": 100_000, "os": {"policy": "bpm", "frame_order": order}}))
    };
    let (aged, ascending) = (run("aged"), run("ascending"));
    // The channel bit is b32, the top address bit: ascending frames all lie in channel 0,
    // aged ones anywhere (BPM's colours leave the channel free).
    assert!(per_core(&ascending, "channels_used").iter().all(|c| c == 1), "{:?}", per_core(&ascending, "channels_used"));
    assert!(per_core(&aged, "channels_used").iter().all(|c| c == 2), "{:?}", per_core(&aged, "channels_used"));
    for (key, value, choices) in [("frame_order", "random", "aged or ascending"), ("colour_split", "diagonal", "contiguous or strided")] {
        let spec: SimSpec = serde_json::from_value(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
                                                           "os": {"policy": "buddy", key: value}}))
        .unwrap();
        let e = run_sim(&spec).unwrap_err().to_string();
        assert!(e.contains(&format!("os.{key}")) && e.contains(choices), "{e}");
    }
}

#[test]
fn the_colour_split_decides_whether_bpm_also_splits_the_llc() {
    let run = |split: &str| {
        sim(json!({"machine": "i7-860", "programs": MIX, "instructions": 20_000, "os": {"policy": "bpm", "colour_split": split}}))
    };
    let sets =
        |s: &Value| s["colours"]["processes"].as_array().unwrap().iter().map(|p| p["llc_sets"].as_u64().unwrap()).collect::<Vec<_>>();
    let (contiguous, strided) = (run("contiguous"), run("strided"));
    let all = contiguous["colours"]["processes"][0]["llc_sets"].as_u64().unwrap();
    assert!(sets(&contiguous).iter().all(|&n| n == all), "one rank's banks reach every LLC set: {:?}", sets(&contiguous));
    assert!(sets(&strided).iter().all(|&n| n * 4 == all), "fixing b13-b14 leaves a quarter of the sets: {:?} of {all}", sets(&strided));
    assert_eq!(per_core(&contiguous, "banks_used"), per_core(&strided, "banks_used"), "both give 16 banks");
}

#[test]
fn a_write_back_is_charged_to_the_program_that_dirtied_the_line() {
    // A read-only stream beside a program that writes back: every DRAM write is the writer's,
    // though the stream's fills evict most of its dirty lines.
    let stats = sim(json!({
        "machine": "i7-860", "programs": ["stream:writes_pki=0", "copy"], "instructions": 400_000,
        "overrides": {"cache": {"llc": {"size_bytes": 262144, "ways": 16, "latency": 31, "mshrs": 64}}},
    }));
    let writes = per_core(&stats, "dram_writes");
    assert_eq!(writes[0], json!(0), "the read-only stream dirtied nothing: {writes:?}");
    assert!(writes[1].as_u64().unwrap() > 1000, "{writes:?}");
}

#[test]
fn a_warm_run_starts_with_full_caches_and_dirty_lines() {
    let run = |warmup: u64| sim(json!({"machine": "i7-860", "programs": ["copy"], "instructions": 300_000, "warmup": warmup}));
    let (cold, warm) = (run(0), run(20_000_000));
    assert_eq!(warm["config"]["warmup"], json!(20_000_000));
    // Cold, the 8 MiB LLC absorbs most dirty lines of the short run; warm, victims are dirty.
    let writes = |s: &Value| per_core(s, "dram_writes")[0].as_u64().unwrap();
    assert!(writes(&warm) > 1000 && writes(&warm) > 5 * writes(&cold), "warm {} cold {}", writes(&warm), writes(&cold));
    assert_eq!(per_core(&warm, "instructions")[0], json!(300_000), "the warm-up is not counted");
    assert_eq!(run(20_000_000)["cores"], warm["cores"], "deterministic");
}

#[test]
fn identity_translation_uses_the_trace_addresses_as_physical_ones() {
    let run = |translation: &str| {
        sim(json!({"machine": "ddr4-2400", "programs": ["stream"], "instructions": 200_000,
                   "overrides": {"cache": {"llc": "none"}}, "os": {"translation": translation}}))
    };
    let (paged, identity) = (run("paged"), run("identity"));
    assert!(per_core(&paged, "pages")[0].as_u64().unwrap() > 0);
    assert_eq!(per_core(&identity, "pages")[0], json!(0), "no page is placed");
    assert_eq!(per_core(&identity, "dram_reads"), per_core(&paged, "dram_reads"), "the same requests, elsewhere");
    assert_ne!(per_core(&identity, "row_hits"), per_core(&paged, "row_hits"));
    let spec: SimSpec = serde_json::from_value(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
                                                       "os": {"policy": "bpm", "translation": "identity"}}))
    .unwrap();
    let e = run_sim(&spec).unwrap_err().to_string();
    assert!(e.contains("os.translation") && e.contains("buddy"), "{e}");
}

/// `cpu.cores = 0` used to say "1 programs but machine has 0 cores".
#[test]
fn zero_cores_is_an_error_naming_cpu_cores() {
    let spec: SimSpec = serde_json::from_value(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
                                                       "overrides": {"cpu": {"cores": 0}}}))
    .unwrap();
    let e = run_sim(&spec).unwrap_err().to_string();
    assert!(e.contains("cpu.cores") && e.contains("between 1 and 1024") && !e.contains("1 programs"), "{e}");
}

/// A 1 TiB LLC used to be reported as "llc_set_bits: 6..36 is not a usable range".
#[test]
fn an_llc_larger_than_memory_names_its_size_key() {
    let spec: SimSpec = serde_json::from_value(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000,
        "overrides": {"cache": {"llc": {"size_bytes": 1u64 << 40, "ways": 16, "latency": 31, "mshrs": 64}}}}))
    .unwrap();
    let e = run_sim(&spec).unwrap_err().to_string();
    assert!(e.contains("cache.llc.size_bytes") && e.contains("33-bit"), "{e}");
}
