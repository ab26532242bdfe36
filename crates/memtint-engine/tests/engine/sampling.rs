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
fn the_segments_measure_dram_energy_and_the_intervals_hold_the_detailed_energy_and_row_buffer_miss_rate() {
    let n = 6_000_000;
    let detailed = sim(&mix(n, None));
    let r = sim(&mix(n, Some(json!({"unit": 20_000, "warming": 20_000, "period": 120_000}))));
    let s = &r["sampling"];
    let f = |v: &Value| v.as_f64().unwrap();
    let list = |k: &str| s[k].as_array().unwrap().iter().map(f).collect::<Vec<f64>>();
    let (energy, cycles) = (list("segment_dram_energy_nj"), list("segment_cycles"));
    assert_eq!(energy.len() as u64, s["segments"].as_u64().unwrap());
    assert_eq!(cycles.len(), energy.len());
    // The segments are the whole of what the memory system ran: their energy is the run's
    // simulated energy, their cycles its simulated cycles.
    let total = f(&r["dram"]["energy"]["total_nj"]);
    assert!((energy.iter().sum::<f64>() / total - 1.0).abs() < 1e-9, "{} against {total}", energy.iter().sum::<f64>());
    assert_eq!(cycles.iter().sum::<f64>(), f(&s["simulated_cycles"]));
    let estimated = f(&s["estimated_dram_energy_nj"]);
    assert!((f(&s["estimate_factor"]) * total / estimated - 1.0).abs() < 1e-9);
    // Within `slack` half-widths of an interval that says something (under `widest` of its centre).
    let inside = |x: f64, ci: &Value, slack: f64, widest: f64| {
        let (lo, hi) = (f(&ci[0]), f(&ci[1]));
        let (mid, half) = ((lo + hi) / 2.0, (hi - lo) / 2.0);
        assert!(half > 0.0 && half / mid < widest, "[{lo}, {hi}]");
        (x - mid).abs() <= slack * half
    };
    let within = |x: f64, ci: &Value, slack: f64| inside(x, ci, slack, 0.05);
    assert!(within(f(&r["dram"]["energy"]["average_power_mw"]), &s["dram_power_mw_ci95"], 1.0));
    assert!(within(estimated, &s["estimated_dram_energy_nj_ci95"], 1.0));
    // The detailed run's energy within the 99.9 % interval (1.68 times the 95 % one's half-width).
    let whole = f(&detailed["dram"]["energy"]["total_nj"]);
    assert!(within(whole, &s["estimated_dram_energy_nj_ci95"], 1.68), "detailed {whole}, sampled {}", s["estimated_dram_energy_nj_ci95"]);
    // The mix's row-buffer miss rate: its interval around the estimate, the detailed rate within
    // the 99.9 % one.
    let rate = f(&detailed["row_buffer_miss_rate"]);
    // The mix's rate: its interval is conservative (docs/sampling.md), so it may be wider.
    assert!(inside(f(&r["row_buffer_miss_rate"]), &s["row_buffer_miss_rate_ci95"], 1.0, 0.25));
    assert!(inside(rate, &s["row_buffer_miss_rate_ci95"], 1.68, 0.25), "detailed {rate}, sampled {}", s["row_buffer_miss_rate_ci95"]);
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
    // A fast and a slow program: the fast one is fast-forwarded further between segments, in
    // proportion to its IPC, as it runs further in the same time in a detailed run.
    let spec = json!({
        "machine": "i7-860", "programs": ["light", "random:reads_pki=40"], "instructions": 6_000_000, "seed": 3,
        "sampling": {"unit": 30_000, "warming": 30_000, "period": 200_000},
    });
    let r = sim(&spec);
    let list =
        |c: usize, key: &str| r["cores"][c]["sampling"][key].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect::<Vec<_>>();
    let ipc = ipcs(&r);
    assert!(ipc[0] > 2.0 * ipc[1], "{ipc:?}");
    // Units of both cores that ran in the same segment: between two such segments the fast
    // core advanced IPC_fast / IPC_slow times as far.
    let (fast, slow) = ((list(0, "unit_positions"), list(0, "unit_segments")), (list(1, "unit_positions"), list(1, "unit_segments")));
    let common: Vec<(u64, u64)> =
        fast.1.iter().zip(&fast.0).filter_map(|(s, &p)| slow.1.iter().position(|t| t == s).map(|i| (p, slow.0[i]))).collect();
    assert!(common.len() >= 5, "{} segments with units of both", common.len());
    let (first, last) = (common[1], common[common.len() - 1]);
    let ratio = (last.0 - first.0) as f64 / (last.1 - first.1) as f64;
    let expect = ipc[0] / ipc[1];
    assert!((ratio / expect - 1.0).abs() < 0.25, "progress ratio {ratio}, IPC ratio {expect}");
}

#[test]
fn a_faster_program_gets_min_units_evenly_weighted() {
    // Light is several times faster than the random program: at 100 units of the slowest it
    // would cover its instructions in about 100/k periods; `min_units` shortens the periods
    // while it measures, and each core measures only where its own spacing is due, so its
    // units stand for about equal stretches of its instructions.
    let spec = |min_units: u64| {
        json!({
            "machine": "i7-860", "programs": ["light", "random:reads_pki=40"], "instructions": 8_000_000, "seed": 3,
            "sampling": {"unit": 20_000, "warming": 20_000, "period": 80_000, "min_units": min_units},
        })
    };
    for least in [30u64, 60] {
        let r = sim(&spec(least));
        let units = |c: usize| r["cores"][c]["sampling"]["units"].as_u64().unwrap();
        // At most a unit per period, and a period no shorter than unit + warming for the slowest.
        let ipc = ipcs(&r);
        let room = (8_000_000.0 / (40_000.0 * ipc[0] / ipc[1])) as u64;
        assert!(units(0) + 2 >= least.min(room), "min_units {least}: the fast core measured {} units ({ipc:?})", units(0));
        // Without it: one unit per `period x k` of its instructions.
        let spaced = 100.0 * ipc[1] / ipc[0];
        assert!(spaced < 25.0 && units(0) as f64 > 1.3 * spaced, "{} units, {spaced:.1} at period x k", units(0));
        assert!(units(1) >= 99, "the slowest measured {} units", units(1));
        for c in 0..2 {
            let w: Vec<u64> = r["cores"][c]["sampling"]["unit_weights"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            // The first unit's period is `period` for every core; the last is cut at the run's end.
            let inner = &w[1..w.len() - 1];
            let (lo, hi) = (*inner.iter().min().unwrap(), *inner.iter().max().unwrap());
            assert!(hi as f64 <= 1.6 * lo as f64, "min_units {least}, core {c}: weights {lo}..{hi}");
            let segments: Vec<u64> =
                r["cores"][c]["sampling"]["unit_segments"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            assert!(segments.windows(2).all(|p| p[0] < p[1]), "core {c}: segments {segments:?}");
            assert!(*segments.last().unwrap() < r["sampling"]["segments"].as_u64().unwrap());
        }
    }
    let e = err(&spec(0));
    assert!(e.contains("sampling.min_units: must be at least 1"), "{e}");
}

#[test]
fn a_run_of_exactly_two_periods_measures_two_units() {
    // Period = unit + warming: no room in a period, so the first segment's drain runs past the
    // second period's point; those instructions count as its detailed warm-up, and the second
    // unit still fits (it did not, and the run reported one unit and a zero-width interval).
    for seed in [1u64, 2, 3] {
        let r = sim(&json!({
            "machine": "i7-860", "programs": ["stream"], "instructions": 100_000, "seed": seed,
            "sampling": {"unit": 20_000, "warming": 30_000},
        }));
        let s = &r["cores"][0]["sampling"];
        assert_eq!(s["units"], 2, "seed {seed}: {s}");
        let ci: Vec<f64> = s["ipc_ci95"].as_array().unwrap().iter().map(|v| v.as_f64().expect("a bounded interval")).collect();
        assert!(ci[0] < ci[1], "seed {seed}: {ci:?}");
    }
}

#[test]
fn a_faster_program_short_of_min_units_is_told_why() {
    // Light runs several times faster than the random program; each segment is at least
    // unit + warming of the slowest, so in 2 M instructions light cannot have 30 units.
    let r = sim(&json!({
        "machine": "i7-860", "programs": ["light", "random:reads_pki=40"], "instructions": 2_000_000, "seed": 3,
        "sampling": {"unit": 20_000, "warming": 20_000, "period": 80_000, "min_units": 30},
    }));
    let units = r["cores"][0]["sampling"]["units"].as_u64().unwrap();
    assert!(units < 25, "light measured {units} units");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains(&format!("core 0 measured {units} unit(s), fewer than sampling.min_units = 30"))
            && warnings.contains("run more instructions, or shorten sampling.unit or sampling.warming"),
        "{warnings}"
    );
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

#[test]
fn units_start_at_their_own_instruction_inside_long_records() {
    // 4 M instructions of compute in records of about 200 000 instructions each, then 1 M of
    // random loads. A unit that fell inside a long record once began where the record began,
    // and ran instead the bubbles left over from the last segment: the units measured a core
    // running at its full width (IPC 3.67-4.00 against 2.76; two seeds of three with
    // intervals of ±0.1 %).
    let program = "phases:random:reads_pki=0.005,writes_pki=0@4000000+random:reads_pki=40@1000000";
    let spec = |seed: u64, sampling: Option<Value>| {
        let mut s = json!({"machine": "i7-860", "programs": [program], "instructions": 10_000_000, "warmup": 2_000_000, "seed": seed});
        if let Some(x) = sampling {
            s["sampling"] = x;
        }
        s
    };
    for seed in [7, 8, 9] {
        let detailed = ipcs(&sim(&spec(seed, None)))[0];
        let r = sim(&spec(seed, Some(json!({"unit": 20_000, "warming": 20_000, "period": 200_000}))));
        let sampled = ipcs(&r)[0];
        let ci = &r["cores"][0]["sampling"]["ipc_ci95"];
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(lo <= detailed && detailed <= hi, "seed {seed}: detailed {detailed} outside [{lo}, {hi}]");
        assert!((sampled / detailed - 1.0).abs() < 0.1, "seed {seed}: sampled {sampled} detailed {detailed}");
        // Every instruction is accounted for exactly: detailed, warmed or skipped.
        let core = &r["cores"][0]["sampling"];
        let covered =
            ["detailed_instructions", "warmed_instructions", "skipped_instructions"].iter().map(|k| core[k].as_u64().unwrap()).sum::<u64>();
        assert!(covered >= 10_000_000 - 200_000, "seed {seed}: covered {covered}");
    }
}

/// One program that streams 80 % of the time, with a burst of random loads every 2 M instructions.
fn bursty(instructions: u64, sampling: Option<Value>) -> Value {
    let mut s = mix(instructions, sampling);
    s["programs"] = json!(["phases:stream@1600000+random@400000"]);
    s
}

/// pagerank of the captured suite alone (its phases: docs/sampling.md), after the sweeps' warm-up.
fn pagerank(instructions: u64, sampling: Option<Value>) -> Value {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/traces/pagerank.t1.mtt.gz");
    let mut s = json!({"machine": "i7-860", "programs": [trace], "instructions": instructions, "warmup": 20_000_000, "seed": 7});
    if let Some(x) = sampling {
        s["sampling"] = x;
    }
    s
}

#[test]
fn phase_sampling_draws_units_in_every_phase_and_its_interval_holds_the_detailed_ipc() {
    let n = 30_000_000;
    let detailed = ipcs(&sim(&pagerank(n, None)))[0];
    let spec = pagerank(n, Some(json!({"mode": "phases"})));
    let r = sim(&spec);
    let phases = &r["sampling"]["phases"];
    let kept = phases["phases"].as_u64().unwrap() as usize;
    assert!(kept >= 2, "the bursts are a phase of their own: {phases}");
    let labels: Vec<u64> = phases["labels"].as_array().unwrap().iter().map(|l| l.as_u64().unwrap()).collect();
    assert_eq!(labels.len(), 100, "instructions / 100 per interval by default");
    let core = &r["cores"][0]["sampling"];
    let strata: Vec<u64> = core["unit_strata"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    for h in 0..kept as u64 {
        let members = labels.iter().filter(|&&l| l == h).count();
        let units = strata.iter().filter(|&&s| s == h).count();
        assert!(units >= 2.min(members), "phase {h} of {members} intervals has {units} units");
    }
    let weights: f64 = core["strata_weights"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).sum();
    assert!((weights - 1.0).abs() < 1e-9);
    // 30 units by default, rounded per phase.
    assert!((28..=40).contains(&strata.len()), "{} units", strata.len());
    let s = ipcs(&r)[0];
    let (lo, hi) = (core["ipc_ci95"][0].as_f64().unwrap(), core["ipc_ci95"][1].as_f64().unwrap());
    assert!(lo < s && s < hi, "[{lo}, {hi}] holds {s}");
    assert!((s - detailed).abs() <= 1.68 * (hi - lo) / 2.0, "phases {s} detailed {detailed}, 95 % interval [{lo}, {hi}]");
    assert!((s / detailed - 1.0).abs() < 0.02, "phases {s} detailed {detailed}");
    // The run's other figures are stratified too, with intervals (`stratified_estimates`): the
    // row-buffer miss rate is the core's, and the detailed run's lies within the 99.9 % interval
    // (1.68 times the 95 % one's half-width), as do its DRAM energy and requests' counterparts.
    let whole = sim(&pagerank(n, None));
    let f = |v: &Value| v.as_f64().unwrap();
    let within = |x: f64, ci: &Value, what: &str| {
        let (lo, hi) = (f(&ci[0]), f(&ci[1]));
        assert!(hi > lo && (x - (lo + hi) / 2.0).abs() <= 1.68 * (hi - lo) / 2.0, "{what}: detailed {x}, 95 % interval [{lo}, {hi}]");
    };
    let run = &r["sampling"];
    assert_eq!(r["row_buffer_miss_rate"], r["cores"][0]["row_buffer_miss_rate"]);
    assert_eq!(run["row_buffer_miss_rate_ci95"], core["row_buffer_miss_rate_ci95"]);
    within(f(&whole["row_buffer_miss_rate"]), &run["row_buffer_miss_rate_ci95"], "row-buffer miss rate");
    within(f(&whole["dram"]["energy"]["total_nj"]), &run["estimated_dram_energy_nj_ci95"], "energy");
    let energy: f64 = run["segment_dram_energy_nj"].as_array().unwrap().iter().map(f).sum();
    assert!((energy / f(&r["dram"]["energy"]["total_nj"]) - 1.0).abs() < 1e-9);
    let requests = f(&run["estimated_dram_requests"]) / f(&whole["dram_requests"]);
    assert!((requests - 1.0).abs() < 0.05, "requests estimated at {requests} of the detailed run's");
    // Seeded: the same run twice is the same; another seed draws other units.
    assert_eq!(sim(&spec)["cores"][0]["sampling"]["unit_positions"], core["unit_positions"]);
    let mut other = spec.clone();
    other["seed"] = json!(8);
    assert_ne!(sim(&other)["cores"][0]["sampling"]["unit_positions"], core["unit_positions"]);
}

#[test]
fn phase_sampling_refuses_several_programs_and_clusters_belong_to_phases() {
    let e = err(&mix(2_000_000, Some(json!({"mode": "phases"}))));
    assert!(e.contains("sampling.mode: \"phases\" samples one program per run and this run has 4"), "{e}");
    let e = err(&bursty(2_000_000, Some(json!({"clusters": 4}))));
    assert!(e.contains("sampling.clusters: 4: clusters apply to mode = \"phases\" only"), "{e}");
    let e = err(&bursty(2_000_000, Some(json!({"mode": "phases", "clusters": 0}))));
    assert!(e.contains("sampling.clusters: must be at least 1"), "{e}");
    let e = err(&bursty(2_000_000, Some(json!({"mode": "phasess"}))));
    assert!(e.contains("sampling.mode: unknown mode 'phasess'; choose \"periodic\" or \"phases\""), "{e}");
    // clusters = 1: one stratum, a simple random sample of intervals.
    let r = sim(&bursty(2_000_000, Some(json!({"mode": "phases", "clusters": 1, "unit": 5_000, "warming": 5_000}))));
    assert_eq!(r["sampling"]["phases"]["phases"], json!(1));
    assert_eq!(r["sampling"]["clusters"], json!(1));
}

#[test]
fn a_phase_sampled_target_error_takes_more_units_or_says_it_cannot_be_met() {
    let r = sim(&bursty(8_000_000, Some(json!({"mode": "phases", "unit": 10_000, "warming": 20_000, "target_error": 0.03}))));
    let s = &r["sampling"];
    if s["passes"] == json!(2) {
        assert!(r["cores"][0]["sampling"]["units"].as_u64().unwrap() > 30);
    } else {
        assert!(s["worst_ipc_relative_error"].as_f64().unwrap() <= 0.03, "{s}");
    }
    // 1 % in 100 intervals cannot be had when the bursts need more units than intervals.
    let r = sim(&bursty(8_000_000, Some(json!({"mode": "phases", "unit": 10_000, "warming": 20_000, "target_error": 0.0005}))));
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("sampling.target_error = 0.0005 cannot be met") || warnings.contains("not met after a second pass"),
        "{warnings}"
    );
}

#[test]
fn functional_warming_trains_the_prefetchers_as_the_detailed_gaps_would() {
    // A stream with bursts of random loads: without the prefetchers warmed in the gaps, the
    // units begin with none of the lines the stream prefetcher brings ahead, and the sampled
    // LLC MPKI comes out a fifth low (8.8 against 11.3) and the IPC 6 % high.
    let n = 8_000_000;
    let detailed = sim(&bursty(n, None));
    let cold = sim(&bursty(n, Some(json!({"unit": 10_000, "warming": 20_000}))));
    assert!(cold["cores"][0]["llc_mpki"].as_f64().unwrap() < 0.85 * detailed["cores"][0]["llc_mpki"].as_f64().unwrap());
    assert_eq!(cold["sampling"]["warm_prefetchers"], json!(false));
    let r = sim(&bursty(n, Some(json!({"unit": 10_000, "warming": 20_000, "warm_prefetchers": true}))));
    let (d, s) = (&detailed["cores"][0], &r["cores"][0]);
    let ratio = |k: &str| s[k].as_f64().unwrap() / d[k].as_f64().unwrap();
    assert!((ratio("ipc") - 1.0).abs() < 0.03, "IPC sampled {} detailed {}", s["ipc"], d["ipc"]);
    assert!((ratio("llc_mpki") - 1.0).abs() < 0.05, "LLC MPKI sampled {} detailed {}", s["llc_mpki"], d["llc_mpki"]);
}

/// A 4-program mix under `policy`, sampled at 50 periods.
fn policy_mix(policy: &str, schedule: Option<&Value>) -> Value {
    let mut sampling = json!({"unit": 20_000, "warming": 20_000, "period": 100_000});
    if let Some(s) = schedule {
        sampling["schedule"] = s.clone();
    }
    let mut spec = mix(5_000_000, Some(sampling));
    spec["os"] = json!({"policy": policy});
    spec
}

fn unit_list(r: &Value, c: usize, key: &str) -> Vec<Value> {
    r["cores"][c]["sampling"][key].as_array().unwrap().clone()
}

#[test]
fn a_replayed_schedule_reproduces_its_run_and_matches_another_policys_units() {
    let buddy = sim(&policy_mix("buddy", None));
    let schedule = &buddy["sampling"]["schedule"];
    let segments = buddy["sampling"]["segments"].as_u64().unwrap() as usize;
    assert_eq!(schedule["at"][0].as_array().unwrap().len(), segments);
    // Replaying a run's own schedule is that run, counter for counter.
    let again = sim(&policy_mix("buddy", Some(schedule)));
    assert_eq!(again["sampling"]["replayed"], true);
    for c in 0..4 {
        for key in ["unit_positions", "unit_cycles", "unit_weights", "unit_segments"] {
            assert_eq!(unit_list(&again, c, key), unit_list(&buddy, c, key), "core {c} {key}");
        }
    }
    assert_eq!(ipcs(&again), ipcs(&buddy));
    // Another policy paces itself by its own IPCs, so a faster core's units fall elsewhere;
    // given buddy's schedule, every core's units start where buddy's did and weigh alike.
    let own = sim(&policy_mix("bank-only", None));
    let matched = sim(&policy_mix("bank-only", Some(schedule)));
    assert!((0..4).any(|c| unit_list(&own, c, "unit_positions") != unit_list(&buddy, c, "unit_positions")));
    // Its units start where buddy's did, or a little later where its core had already run
    // further in detail (a core that did not measure in a segment runs on, at its own pace).
    let positions = |r: &Value, c: usize| unit_list(r, c, "unit_positions").iter().map(|v| v.as_u64().unwrap()).collect::<Vec<_>>();
    let (mut same, mut own_same, mut units) = (0, 0, 0);
    for c in 0..4 {
        let (m, b, o) = (positions(&matched, c), positions(&buddy, c), positions(&own, c));
        assert_eq!(unit_list(&matched, c, "unit_weights"), unit_list(&buddy, c, "unit_weights"), "core {c}");
        assert_eq!(unit_list(&matched, c, "unit_segments"), unit_list(&buddy, c, "unit_segments"), "core {c}");
        assert!(m.iter().zip(&b).all(|(x, y)| x >= y && x - y < 100_000), "core {c}: {m:?} against {b:?}");
        same += m.iter().zip(&b).filter(|(x, y)| x == y).count();
        own_same += o.iter().zip(&b).filter(|(x, y)| x == y).count();
        units += b.len();
    }
    assert!(same * 4 >= units * 3 && own_same * 4 < units, "{same} and {own_same} of {units} units at buddy's positions");
    // The matched run is its own policy's: its cycles differ from buddy's.
    assert_ne!(unit_list(&matched, 0, "unit_cycles"), unit_list(&buddy, 0, "unit_cycles"));
    assert_eq!(matched["dram"]["violations"].as_u64().unwrap_or(0), 0);
}

#[test]
fn a_matched_run_whose_faster_core_runs_out_of_units_combines_the_mix_as_in_detail() {
    // Under bpm stream runs ahead of where buddy's schedule put its units, so its last few fall
    // past its end and go unmeasured. Its units still cover its whole run, but their replayed
    // weights summed to a fraction of it, which weighed its low miss rate down in the mix: 52.4 %
    // against 47.6 % in detail (cores within 0.01 each).
    let spec = |policy: &str, sampling: Option<Value>| {
        json!({
            "machine": "i7-860", "programs": ["stream", "random", "light", "light:reads_pki=2"], "instructions": 4_000_000,
            "warmup": 2_000_000, "seed": 7, "os": {"policy": policy}, "sampling": sampling,
        })
    };
    let buddy = sim(&spec("buddy", Some(json!({}))));
    let matched = sim(&spec("bpm", Some(json!({"schedule": buddy["sampling"]["schedule"]}))));
    let detailed = sim(&spec("bpm", None));
    let units = |r: &Value, c: usize| r["cores"][c]["sampling"]["units"].as_u64().unwrap();
    assert!((0..4).any(|c| units(&matched, c) < units(&buddy, c)), "no core ran out of buddy's units");
    let rate = |r: &Value| r["row_buffer_miss_rate"].as_f64().unwrap();
    let (m, d) = (rate(&matched), rate(&detailed));
    assert!((m - d).abs() < 0.01, "matched {m:.4} detailed {d:.4}");
    // The mix's rate is the cores' own, each core weighed by its requests per instruction over
    // its whole run, as a detailed run's cores each count their `instructions`.
    let (mut misses, mut requests) = (0.0, 0.0);
    for c in matched["cores"].as_array().unwrap() {
        let n = |k: &str| c[k].as_f64().unwrap();
        let per_instruction = (n("row_hits") + n("row_misses") + n("row_conflicts")) / n("instructions");
        misses += per_instruction * n("row_buffer_miss_rate");
        requests += per_instruction;
    }
    assert!((m - misses / requests).abs() < 1e-9, "mix {m} against its cores' {}", misses / requests);
}

#[test]
fn a_schedule_that_does_not_fit_the_run_is_refused_naming_what_is_wrong() {
    let buddy = sim(&policy_mix("buddy", None));
    let good = buddy["sampling"]["schedule"].clone();
    let refused = |edit: &dyn Fn(&mut Value)| {
        let mut s = good.clone();
        edit(&mut s);
        err(&policy_mix("bpm", Some(&s)))
    };
    let e = refused(&|s| {
        s["at"].as_array_mut().unwrap().pop();
    });
    assert!(e.contains("sampling.schedule: at has 3 row(s) and the run has 4 program(s)"), "{e}");
    let e = refused(&|s| {
        s["unit"][2].as_array_mut().unwrap().pop();
    });
    assert!(e.contains("sampling.schedule: unit[2] has"), "{e}");
    let e = refused(&|s| {
        s["unit"][0][0] = json!(5);
    });
    assert!(e.contains("sampling.schedule: unit[0][0] = 5 is shorter than sampling.unit = 20000"), "{e}");
    let e = refused(&|s| {
        s["cycles"] = json!([]);
    });
    assert!(e.contains("sampling") && e.contains("cycles"), "{e}");
    // A run of another length: its units stand for that length (replayed, they measured only part of
    // this run, without a word).
    for (times, over) in [(1u64, 2u64), (2, 1)] {
        let mut spec = policy_mix("bpm", Some(&good));
        let instructions = spec["instructions"].as_u64().unwrap();
        spec["instructions"] = json!(instructions * times / over);
        let e = err(&spec);
        assert!(e.contains("sampling.schedule: comes from a run of") && e.contains("a run of the same length"), "{e}");
    }
    let mut spec = policy_mix("bpm", Some(&good));
    spec["sampling"]["mode"] = json!("phases");
    spec["programs"] = json!(["stream"]);
    let e = err(&spec);
    assert!(e.contains("sampling.schedule"), "{e}");
}

/// More units than the run has intervals were asked of the phases in silence: 40 measured, and
/// `config.sampling.min_units` echoed 100000.
#[test]
fn phases_say_when_min_units_exceeds_the_run_s_intervals() {
    let mut s = bursty(2_000_000, Some(json!({"mode": "phases", "min_units": 100_000})));
    s["warmup"] = json!(0);
    let r = sim(&s);
    let w = r["warnings"].to_string();
    assert!(w.contains("sampling.min_units = 100000 asks for more units than the run has intervals (40 of sampling.period = 50000"), "{w}");
    // The period is already unit + warming: lowering it is not the way out.
    assert!(w.contains("40 measured; run more instructions, or shorten sampling.unit or sampling.warming"), "{w}");
    let r = sim(&bursty(2_000_000, Some(json!({"mode": "phases"}))));
    assert!(!r["warnings"].to_string().contains("asks for more units"), "{}", r["warnings"]);
}

/// A sampled run's times were its detailed segments' (a fraction of the run: 2.5x short with
/// 40 % detailed): each is now the estimate, its instructions at its estimated CPI.
#[test]
fn sampled_run_times_are_estimates_of_the_whole_run() {
    let spec = |sampling: Option<Value>| {
        let mut s = mix(2_000_000, sampling);
        s["programs"] = json!(["stream", "light"]);
        s["warmup"] = json!(0);
        s
    };
    let detailed = sim(&spec(None));
    let sampled = sim(&spec(Some(json!({"unit": 10_000, "warming": 10_000, "period": 100_000}))));
    let f = |v: &Value| v.as_f64().unwrap();
    let simulated = f(&sampled["sampling"]["simulated_cycles"]);
    for (d, s) in detailed["processes"].as_array().unwrap().iter().zip(sampled["processes"].as_array().unwrap()) {
        let (want, got) = (f(&d["run_time_cycles"]), f(&s["run_time_cycles"]));
        assert!((got / want - 1.0).abs() < 0.05, "run time {got} against detailed {want}");
        let ci = &s["run_time_cycles_ci95"];
        assert!(f(&ci[0]) <= got && got <= f(&ci[1]), "{ci}");
        assert!((f(&s["turnaround_ns"]) / f(&d["turnaround_ns"]) - 1.0).abs() < 0.05);
    }
    assert!(simulated < 0.6 * f(&detailed["processes"][0]["run_time_cycles"]), "the segments are a fraction of the run");
    let makespan = (f(&sampled["makespan_ns"]), f(&detailed["makespan_ns"]));
    assert!((makespan.0 / makespan.1 - 1.0).abs() < 0.05, "{makespan:?}");
    for c in sampled["cores"].as_array().unwrap() {
        assert!(f(&c["finished_at"]) > simulated, "{}", c["finished_at"]);
    }
    // Too few units for an interval: its bounds are unknown (null), not 0.
    let few = sim(&spec(Some(json!({"unit": 1_000, "warming": 0, "period": 1_000_000}))));
    assert_eq!(few["processes"][0]["run_time_cycles_ci95"], json!([null, null]), "{}", few["processes"][0]);
}

/// The default period on a short run is raised to unit + warming, and nothing is skipped: the run
/// is detailed, labelled sampled, and now says so.
#[test]
fn a_sampled_run_that_skips_almost_nothing_says_so() {
    let mut s = bursty(1_000_000, Some(json!({})));
    s["warmup"] = json!(0);
    let r = sim(&s);
    assert!(r["sampling"]["detailed_fraction"].as_f64().unwrap() > 0.9, "{}", r["sampling"]["detailed_fraction"]);
    assert!(r["warnings"].to_string().contains("of the run's instructions ran in detail"), "{}", r["warnings"]);
    let r = sim(&bursty(2_000_000, Some(json!({"unit": 10_000, "warming": 10_000, "period": 100_000}))));
    assert!(!r["warnings"].to_string().contains("ran in detail"), "{}", r["warnings"]);
}

#[test]
fn a_program_that_loads_nothing_has_an_exact_interval_and_no_warning() {
    // Its units all measure the pipeline's CPI, and so does every instruction of its run (its
    // loads are counted over the run, not sampled): an exact estimate, not an unbounded one.
    let spec = |programs: Value, sampling: Option<Value>| {
        let mut s = mix(2_000_000, sampling);
        s["programs"] = programs;
        s["warmup"] = json!(0);
        s
    };
    let sampling = json!({"unit": 10_000, "warming": 10_000, "period": 40_000});
    let idle = "light:reads_pki=0.00001,writes_pki=0";
    let d = sim(&spec(json!([idle]), None));
    let detailed = ipcs(&d)[0];
    let r = sim(&spec(json!([idle]), Some(sampling.clone())));
    // No DRAM request, sampled or not: a miss rate of 0, as each core's, not 100 %.
    for run in [&d, &r] {
        assert_eq!(run["dram_requests"].as_u64(), Some(0));
        assert_eq!(run["row_buffer_miss_rate"].as_f64(), Some(0.0));
    }
    let core = &r["cores"][0]["sampling"];
    assert_eq!(core["run_loads"].as_f64(), Some(0.0));
    let cpi = core["unit_cpi"].as_array().unwrap();
    assert!(cpi.len() >= 2 && cpi.iter().all(|x| x == &cpi[0]), "{core}");
    assert_eq!(core["cpi_stddev"].as_f64(), Some(0.0));
    let ipc = ipcs(&r)[0];
    assert_eq!(core["ipc_ci95"], json!([ipc, ipc]), "{core}");
    // The detailed run differs only by its pipeline's one fill at the start (a few cycles).
    assert!((ipc / detailed - 1.0).abs() < 1e-5, "sampled {ipc} detailed {detailed}");
    assert!(!r["warnings"].to_string().contains("all measured"), "{}", r["warnings"]);
    // Beside another program both keep a bounded interval.
    let r = sim(&spec(json!(["stream", idle]), Some(sampling)));
    for c in 0..2 {
        let core = &r["cores"][c]["sampling"];
        assert!(core["ipc_ci95"][1].as_f64().is_some(), "core {c}: {core}");
    }
}
