//! HVR's online classifier (os/hot_pages.rs, os/llc_class.rs) on the paper's reference
//! behaviours, each alone on the i7-860 (8 MB LLC, 2048 pages): the accessed-bit features a run
//! measures put each in its class (multipolicy-hvr.md §3.2-3.3, Fig. 5).

use crate::common::*;
use serde_json::{json, Value};

fn alone(program: &str) -> Value {
    let v = sim_run(json!({
        "machine": "i7-860",
        "programs": [program],
        "instructions": 10_000_000,
        "os": {"hot_pages": {"enabled": true}},
    }));
    v["processes"][0]["hot_pages"]["hvr"].clone()
}

fn class(program: &str) -> String {
    let c = alone(program);
    assert!(c["reason"].as_str().is_some_and(|r| !r.is_empty()), "{c}");
    c["class"].as_str().unwrap_or_else(|| panic!("{program}: no class in {c}")).to_string()
}

/// hmmer: a footprint far inside the core caches.
#[test]
fn a_tiny_footprint_is_ccf() {
    let c = alone("random:footprint_bytes=65536,reads_pki=30");
    assert_eq!(c["class"], "CCF", "{c}");
    assert_eq!(c["nhp"], json!(16.0), "all 16 pages hot: {c}");
}

/// libquantum: runs of sequential lines over 64 MiB; pages passed over once.
#[test]
fn a_streaming_thrasher_is_llct() {
    assert_eq!(class("stream"), "LLCT");
}

/// mcf: random lines over 64 MiB, eight times the LLC, so pages come back within a window.
#[test]
fn random_access_far_above_the_llc_is_llch() {
    let c = alone("random:footprint_bytes=67108864");
    assert_eq!(c["class"], "LLCH", "{c}");
    assert!(c["nhp_per_npc"].as_f64().unwrap() > 1.0, "{c}");
}

/// bzip2: 3 MiB, three eighths of the LLC, used over and over.
#[test]
fn a_footprint_of_a_quarter_to_a_half_of_the_llc_is_llcm() {
    let c = alone("random:footprint_bytes=3145728");
    assert_eq!(c["class"], "LLCM", "{c}");
    assert_eq!(c["nhp"], json!(768.0), "every page hot: {c}");
}

/// sjeng: over a thousand hot pages, but 95 % of the accesses go to 16 of them and the rest
/// touch pages of 256 MiB once each.
#[test]
fn many_pages_few_of_them_hot_is_ccf() {
    let c = alone("hotset:footprint_bytes=268435456,hot_bytes=65536,hot_share=0.95,writes_pki=5");
    assert_eq!(c["class"], "CCF", "{c}");
    assert!(c["nhp"].as_f64().unwrap() > 1000.0, "the hot-page count alone would say LLCH: {c}");
}

/// Rare LLC accesses over a large footprint: the accessed bits alone would call it a stream.
#[test]
fn a_light_program_is_ccf() {
    let c = alone("light");
    assert_eq!(c["class"], "CCF", "{c}");
    assert!(c["reason"].as_str().unwrap().contains("LLC accesses per kilo-instruction"), "{c}");
}

#[test]
fn sampling_is_off_by_default_and_bad_settings_name_their_key() {
    let v = sim_run(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 10_000}));
    assert!(v["processes"][0].get("hot_pages").is_none());
    for (os, key) in [
        (json!({"hot_pages": {"enabled": true, "tick_ns": 1e9}}), "os.hot_pages.window_ns"),
        (json!({"hot_pages": {"enabled": true, "ticks": 0}}), "os.hot_pages.ticks"),
        (json!({"hot_pages": {"enabled": true, "nhp_ns": -1.0}}), "os.hot_pages.nhp_ns"),
        (json!({"hot_pages": {"enable": true}}), "enable"),
        (json!({"hot_pages": {"enabled": true}, "translation": "identity"}), "os.hot_pages.enabled"),
    ] {
        let spec = json!({"machine": "i7-860", "programs": ["stream"], "instructions": 10_000, "os": os});
        let e = memtint_engine::multicore::run_sim_json(&spec.to_string()).expect_err("refused").to_string();
        assert!(e.contains(key), "{key}: {e}");
    }
}

/// A run too short for one window has features but no class.
#[test]
fn a_run_shorter_than_a_window_has_no_class() {
    let v = sim_run(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 20_000, "os": {"hot_pages": {"enabled": true}}}));
    assert_eq!(v["processes"][0]["hot_pages"]["windows"], json!([]));
    assert_eq!(v["processes"][0]["hot_pages"]["hvr"], Value::Null);
}

/// The sampler's walks are reported by default; with `charge_walks` each closed window stalls
/// the process's first thread for the share of a core its walks take at HVR's schedule (402
/// walks per 3 s) times the window, counted in `walk_cycles` and `system_cycles`.
#[test]
fn charged_walks_stall_the_sampled_process_for_their_share_of_each_window() {
    let run = |charge: bool| {
        sim_run(json!({
            "machine": "i7-860",
            "programs": ["random:footprint_bytes=16777216,reads_pki=20", "light"],
            "instructions": 2_000_000,
            "os": {"hot_pages": {"enabled": true, "window_ns": 50_000.0, "nhp_ns": 10_000.0, "ticks": 20,
                                  "tick_ns": 1_000.0, "walk_ns_per_page": 200.0, "charge_walks": charge}},
        }))
    };
    let f = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    let (reported, charged) = (run(false), run(true));
    assert!(reported["cores"][0].get("page_migration").is_none(), "nothing charged: {}", reported["cores"][0]);
    let m = &charged["cores"][0]["page_migration"];
    let walk = u(&m["walk_cycles"]);
    assert!(walk > 0 && walk <= u(&m["system_cycles"]), "{m}");
    assert_eq!(charged["processes"][0]["page_migration"]["walk_cycles"], json!(walk));
    // Each closed window charges min(1, 402 x pages x 200 ns / 3 s) of its 50 µs at the core's
    // clock; the last window reported may still be open, so the charge lies between the sums
    // over the windows without it and with it.
    let ghz = 2.8; // the i7-860's cores (configs/machines/i7-860.toml)
    let windows = charged["processes"][0]["hot_pages"]["windows"].as_array().unwrap().clone();
    let cycles = |w: &Value| (402.0 * f(&w["walked_pages"]) * 200.0 / 3e9_f64).min(1.0) * 50_000.0 * ghz;
    let all: f64 = windows.iter().map(cycles).sum();
    let closed = all - cycles(windows.last().unwrap());
    assert!(windows.len() > 5 && closed * 0.99 <= walk as f64 && walk as f64 <= all * 1.01, "{closed} <= {walk} <= {all}");
    // The stall slows the sampled program; its features are still measured.
    let ipc = |v: &Value| f(&v["cores"][0]["ipc"]);
    assert!(ipc(&charged) < ipc(&reported) * 0.98, "{} against {}", ipc(&charged), ipc(&reported));
}
