//! Workload dynamics: processes that arrive later (`arrive_ns`) and leave at their end
//! (`at_end = "exit"`, their pages freed), and the open mix's metrics, turnaround per process
//! and makespan.

use crate::common::*;
use serde_json::{json, Value};

fn run(processes: Value, os: Value) -> Value {
    sim_run(json!({"machine": "i7-860", "instructions": 200_000, "processes": processes, "os": os}))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A program arriving at 2 ms after another has finished runs as it would alone: its cycles
/// before arrival are off its core, its IPC is its alone IPC, and its turnaround starts then.
/// (Nothing populated in either run: an arriving program faults its pages in as it touches
/// them, so its alone run must too for the same frames.)
#[test]
fn a_later_arrival_runs_from_its_arrival_and_its_turnaround_counts_from_there() {
    let alone = run(json!([{"threads": ["stream"]}]), json!({"populate": false}));
    let open = run(
        json!([{"threads": ["light"], "at_end": "wait"}, {"threads": ["stream"], "arrive_ns": 2_000_000.0}]),
        json!({"populate": false}),
    );
    let p = &open["processes"][1];
    assert_eq!(p["arrive_ns"], json!(2_000_000.0));
    assert!(f(&p["finished_ns"]) > 2_000_000.0, "{p}");
    assert!((f(&p["turnaround_ns"]) - (f(&p["finished_ns"]) - 2_000_000.0)).abs() < 1e-6);
    let first = &open["processes"][0];
    assert!(f(&first["finished_ns"]) < 2_000_000.0, "the light program is done before: {first}");
    let ipc = |v: &Value, i: usize| f(&v["processes"][i]["ipc"]);
    assert!((ipc(&open, 1) / ipc(&alone, 0) - 1.0).abs() < 0.02, "alone {} vs arriving {}", ipc(&alone, 0), ipc(&open, 1));
    let turnaround_alone = f(&alone["processes"][0]["turnaround_ns"]);
    assert!((f(&p["turnaround_ns"]) / turnaround_alone - 1.0).abs() < 0.02);
    // Makespan: from the first arrival (0) to the last finish.
    assert!((f(&open["makespan_ns"]) - f(&p["finished_ns"])).abs() < 1e-6);
}

/// 48 MiB of memory: a 40 MiB program populated first, then another that arrives at 5 ms and
/// touches 24 MiB of its own. If the first waits at its end its pages stay and the newcomer
/// swaps; if it exits they are freed and the newcomer does not.
#[test]
fn a_process_that_exits_frees_its_pages_for_those_that_come_later() {
    let mix = |at_end: &str| {
        run(
            json!([
                {"threads": ["random:footprint_bytes=41943040"], "at_end": at_end},
                {"threads": ["random:footprint_bytes=25165824,reads_pki=30"], "arrive_ns": 5_000_000.0, "at_end": at_end},
            ]),
            json!({"memory_mb": 48, "overflow": "swap"}),
        )
    };
    let wait = mix("wait");
    let exit = mix("exit");
    for v in [&wait, &exit] {
        assert!(f(&v["processes"][0]["finished_ns"]) < 5_000_000.0, "the first is done before the second arrives");
    }
    let swaps = |v: &Value| u(&v["processes"][1]["swap"]["swap_outs"]);
    assert!(swaps(&wait) > 500, "its pages stay: the newcomer swaps ({})", swaps(&wait));
    assert_eq!(swaps(&exit), 0, "freed at exit");
    // The exited process's placement is reported as it was at its exit.
    assert_eq!(u(&exit["processes"][0]["pages"]), 10240);
}

#[test]
fn arrivals_need_cores_of_their_own_and_bad_times_name_their_key() {
    let err = |processes: Value, os: Value| {
        let spec = json!({"machine": "i7-860", "instructions": 10_000, "processes": processes, "os": os});
        memtint_engine::multicore::run_sim_json(&spec.to_string()).expect_err("refused").to_string()
    };
    for bad in [-1.0, 1e13] {
        let e = err(json!([{"threads": ["light"], "arrive_ns": bad}]), json!({}));
        assert!(e.contains("processes[0].arrive_ns"), "{e}");
    }
    let five = json!([{"threads": ["light", "light", "light"]}, {"threads": ["light", "light"], "arrive_ns": 1000.0}]);
    let e = err(five, json!({}));
    assert!(e.contains("processes[1].arrive_ns") && e.contains("5 threads on machine 'i7-860' with 4 cores"), "{e}");
    let pinned = json!([{"threads": ["light"], "affinity": [0]}, {"threads": ["light"], "affinity": [0], "arrive_ns": 1000.0}]);
    assert!(err(pinned, json!({})).contains("sharing one"));
    let spec = json!({"machine": "i7-860", "instructions": 10_000, "processes": [{"threads": ["light"], "arrive_ns": "soon"}]});
    assert!(memtint_engine::multicore::run_sim_json(&spec.to_string()).is_err());
}

/// A program in phases grows its footprint: 1 MiB (populated, warmed) for its first 3.1 M
/// instructions, then a walk over 16 MiB that faults the rest in; its LLC misses rise with it.
#[test]
fn a_phased_program_grows_its_footprint_and_changes_its_behaviour() {
    let run = |program: &str| sim_run(json!({"machine": "i7-860", "instructions": 400_000, "warmup": 3_000_000, "programs": [program]}));
    let phased = run("phases:random:footprint_bytes=1048576@3100000+random:footprint_bytes=16777216");
    let small = run("random:footprint_bytes=1048576");
    let pages = |v: &Value| u(&v["processes"][0]["pages"]);
    assert_eq!(pages(&small), 256);
    assert!(pages(&phased) > 2000, "the second phase faulted pages in: {}", pages(&phased));
    let mpki = |v: &Value| f(&v["cores"][0]["llc_mpki"]);
    assert!(mpki(&small) < 1.0, "1 MiB fits the LLC once warm: {}", mpki(&small));
    assert!(mpki(&phased) > 10.0, "the 16 MiB phase misses: {}", mpki(&phased));
    assert!(phased["cores"][0]["program"].as_str().unwrap().starts_with("phases:"));
}

/// configs/runs/open-mix.toml: under dynamic BPM on 64 MiB, a stream leaves and a 24 MiB
/// newcomer arrives; the stream's colours, which it no longer uses (RNP 0), are lent to the
/// newcomer, which then barely swaps.
#[test]
fn dynamic_bpm_lends_a_departed_process_colours_to_a_newcomer() {
    let v = sim_run(json!({
        "machine": "i7-860", "instructions": 300_000,
        "processes": [
            {"threads": ["stream:footprint_bytes=12582912"], "at_end": "exit"},
            {"threads": ["light:footprint_bytes=2097152"]},
            {"threads": ["light:footprint_bytes=2097152"]},
            {"threads": ["random:footprint_bytes=25165824,reads_pki=20"], "arrive_ns": 500_000.0, "instructions": 2_000_000},
        ],
        "os": {"policy": "bpm", "dynamic": "dynamic-bpm", "memory_mb": 64, "overflow": "swap", "dynamic-bpm": {"epoch_ns": 50_000}},
    }));
    let adjustments = v["dynamic"]["adjustments"].as_array().unwrap();
    assert!(!adjustments.is_empty());
    let first = &adjustments[0];
    assert_eq!(first["rnp"][0], json!(0), "the stream has left: {first}");
    assert!(f(&first["at_ns"]) > 500_000.0, "lending starts after the newcomer arrives: {first}");
    let bnp = |a: &Value, p: usize| u(&a["bnp"][p]);
    assert!(bnp(adjustments.last().unwrap(), 0) < 4096, "the departed stream lent frames");
    assert!(bnp(adjustments.last().unwrap(), 3) > 4096, "the newcomer holds more than its 16 MiB");
    let swap_ins = u(&v["processes"][3]["swap"]["swap_ins"]);
    assert!(swap_ins < 500, "lent colours instead of swapping: {swap_ins}");
    assert!(f(&v["processes"][3]["turnaround_ns"]) < 20_000_000.0);
}
