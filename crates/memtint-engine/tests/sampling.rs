//! Sampled simulation (`multicore/sampling.rs`): estimates against detailed runs of the same
//! length, every DRAM command still checked, determinism, the target error's second pass, and
//! every refused setting named by its key.

use memtint_engine::multicore::run_sim_json;
use serde_json::{json, Value};

fn sim(spec: &Value) -> Value {
    serde_json::from_str(&run_sim_json(&spec.to_string()).expect("runs")).unwrap()
}

fn err(spec: &Value) -> String {
    run_sim_json(&spec.to_string()).expect_err("refused").to_string()
}

fn mix(instructions: u64, sampling: Option<Value>) -> Value {
    let mut s = json!({
        "machine": "i7-860",
        "programs": ["random:reads_pki=25", "stream", "light", "random:reads_pki=12"],
        "instructions": instructions,
        "warmup": 2_000_000,
        "seed": 7,
    });
    if let Some(x) = sampling {
        s["sampling"] = x;
    }
    s
}

fn ipcs(r: &Value) -> Vec<f64> {
    r["cores"].as_array().unwrap().iter().map(|c| c["ipc"].as_f64().unwrap()).collect()
}

#[test]
fn the_sampled_ipc_interval_holds_the_detailed_ipc() {
    let n = 8_000_000;
    let detailed = ipcs(&sim(&mix(n, None)));
    let r = sim(&mix(n, Some(json!({"unit": 20_000, "warming": 20_000, "period": 160_000}))));
    let sampled = ipcs(&r);
    for (c, (d, s)) in detailed.iter().zip(&sampled).enumerate() {
        let core = &r["cores"][c]["sampling"];
        // 50 periods at the slowest program's IPC: a faster one takes fewer units, longer ones.
        let units = core["units"].as_u64().unwrap();
        assert!(units >= if c == 0 { 49 } else { 4 }, "core {c}: {units} units");
        let (lo, hi) = (core["ipc_ci95"][0].as_f64().unwrap(), core["ipc_ci95"][1].as_f64().unwrap());
        assert!(lo <= *s && *s <= hi, "core {c}: estimate {s} outside [{lo}, {hi}]");
        // Within the 99.9 % interval (1.68 times the 95 % one's half-width), and the interval
        // says something (under 15 %; the light program, measured least, varies most).
        let half = (hi - lo) / 2.0;
        assert!((s - d).abs() <= 1.68 * half, "core {c}: sampled {s} detailed {d}, 95 % interval [{lo}, {hi}]");
        assert!(half / s < 0.15, "core {c}: [{lo}, {hi}]");
        // The counters are the units': instructions are units x unit size.
        // A unit measures at least `unit` instructions, a faster core's to the segment's end.
        assert!(r["cores"][c]["instructions"].as_u64().unwrap() >= units * 20_000);
        let covered = core["detailed_instructions"].as_u64().unwrap()
            + core["warmed_instructions"].as_u64().unwrap()
            + core["skipped_instructions"].as_u64().unwrap();
        assert!(covered >= n - 160_000 * 10, "core {c} covered {covered}");
    }
    assert!(r["sampling"]["detailed_fraction"].as_f64().unwrap() < 0.5);
}

#[test]
fn without_fast_forward_the_segments_add_up_to_the_detailed_run() {
    // One program, units back to back: only the drains between segments differ from the
    // detailed run.
    let n = 3_000_000;
    let alone = |s: Option<Value>| {
        let mut spec = mix(n, s);
        spec["programs"] = json!(["random:reads_pki=25"]);
        spec
    };
    let detailed = ipcs(&sim(&alone(None)));
    let r = sim(&alone(Some(json!({"unit": 100_000, "warming": 0, "period": 100_000}))));
    for (d, s) in detailed.iter().zip(ipcs(&r)) {
        assert!((s / d - 1.0).abs() < 0.01, "sampled {s} detailed {d}");
    }
    assert_eq!(r["sampling"]["detailed_fraction"].as_f64().unwrap(), 1.0);
}

#[test]
fn sampled_runs_are_deterministic_and_every_command_is_checked() {
    let mut spec = mix(3_000_000, Some(json!({"unit": 30_000, "warming": 30_000, "period": 150_000, "functional": 40_000})));
    spec["check"] = json!(true);
    let a = sim(&spec);
    let b = sim(&spec);
    assert_eq!(ipcs(&a), ipcs(&b));
    assert_eq!(a["cores"][0]["sampling"]["unit_cpi"], b["cores"][0]["sampling"]["unit_cpi"]);
    assert!(a["dram"]["commands_checked"].as_u64().unwrap() > 1000);
    assert_eq!(a["dram"]["violations"].as_u64().unwrap(), 0);
    // Part of each gap skipped unwarmed.
    assert!(a["cores"][0]["sampling"]["skipped_instructions"].as_u64().unwrap() > 0);
}

#[test]
fn programs_keep_their_relative_progress() {
    // A fast and a slow program: the fast one is fast-forwarded further between units, in
    // proportion to its IPC, as it runs further in the same time in a detailed run.
    let spec = json!({
        "machine": "i7-860", "programs": ["light", "random:reads_pki=40"], "instructions": 6_000_000, "seed": 3,
        "sampling": {"unit": 30_000, "warming": 30_000, "period": 200_000},
    });
    let r = sim(&spec);
    let pos =
        |c: usize| r["cores"][c]["sampling"]["unit_positions"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect::<Vec<_>>();
    let (fast, slow) = (pos(0), pos(1));
    let ipc = ipcs(&r);
    assert!(ipc[0] > 2.0 * ipc[1], "{ipc:?}");
    // Core 0 covers the run in fewer units; at equal unit index it is further ahead.
    assert!(fast.len() < slow.len(), "{} vs {}", fast.len(), slow.len());
    let k = fast.len() - 1;
    let ratio = (fast[k] - fast[1]) as f64 / (slow[k] - slow[1]) as f64;
    let expect = ipc[0] / ipc[1];
    assert!((ratio / expect - 1.0).abs() < 0.25, "progress ratio {ratio}, IPC ratio {expect}");
}

#[test]
fn a_target_error_takes_a_second_pass_or_says_it_cannot_be_met() {
    let base = json!({"unit": 20_000, "warming": 20_000, "period": 1_000_000});
    let mut s = base.clone();
    s["target_error"] = json!(0.03);
    let mut spec = mix(6_000_000, Some(s));
    spec["programs"] = json!(["random:reads_pki=25", "random:reads_pki=12"]);
    let r = sim(&spec);
    // null: infinite (a core with one unit).
    let worst = r["sampling"]["worst_ipc_relative_error"].as_f64().unwrap_or(f64::INFINITY);
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("sampling.target_error"));
    assert!(worst <= 0.03 || warned, "worst {worst}");
    let passes = r["sampling"]["passes"].as_u64().unwrap();
    // The first pass's 6 units of 20 000 instructions cannot reach 3 %: a second pass ran.
    assert_eq!(passes, 2, "worst {worst}");
    assert!(r["sampling"]["period"].as_u64().unwrap() < 1_000_000);
    let mut s = base;
    s["target_error"] = json!(0.000_01);
    let r = sim(&mix(2_000_000, Some(s)));
    let w: Vec<&str> = r["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert!(w.iter().any(|w| w.contains("sampling.target_error = 0.00001 cannot be met in instructions = 2000000")), "{w:?}");
    assert_eq!(r["sampling"]["passes"].as_u64().unwrap(), 1);
}

#[test]
fn bad_sampling_settings_name_their_key_and_value() {
    let e = err(&mix(1_000_000, Some(json!({"unit": 2_000_000}))));
    assert!(e.contains("sampling.unit: 2000000 instructions is longer than the run (instructions = 1000000)"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"unit": 50_000, "warming": 10_000, "period": 40_000}))));
    assert!(e.contains("sampling.period: 40000 instructions is shorter than a unit and its detailed warm-up"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"unit": 50_000, "warming": 10_000, "period": 600_000}))));
    assert!(e.contains("sampling.period: 600000 instructions leaves 1 unit(s)"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"unit": 10_000, "warming": 10_000, "period": 100_000, "functional": 90_000}))));
    assert!(e.contains("sampling.functional: 90000 instructions is longer than the gap between units"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"target_error": 1.5}))));
    assert!(e.contains("sampling.target_error: must be above 0 and below 1"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"mode": "phases"}))));
    assert!(e.contains("sampling.mode: \"phases\""), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"unit": 0}))));
    assert!(e.contains("sampling.unit: must be at least 1"), "{e}");
    let e = err(&mix(1_000_000, Some(json!({"units": 3}))));
    assert!(e.contains("sampling") && e.contains("units"), "{e}");
    // What sampling would get wrong is refused, naming the setting.
    let mut spec = mix(4_000_000, Some(json!({"unit": 50_000, "warming": 50_000})));
    spec["os"] = json!({"policy": "bpm", "dynamic": "dynamic-bpm"});
    assert!(err(&spec).contains("os.dynamic: the dynamic policy dynamic-bpm"), "{}", err(&spec));
    let mut spec = mix(4_000_000, Some(json!({"unit": 50_000, "warming": 50_000})));
    spec["barrier_every"] = json!(100_000);
    assert!(err(&spec).contains("barrier_every"), "{}", err(&spec));
}

#[test]
fn runs_without_sampling_report_no_sampling_section() {
    let r = sim(&mix(200_000, None));
    assert!(r.get("sampling").is_none());
    assert!(r["config"].get("sampling").is_none());
    assert!(r["cores"][0].get("sampling").is_none());
}
