//! The training run of a profile-guided build (`make pgo`), for the Rust benchmarks' copy of the
//! engine: runs bench/pgo/training.json's workloads in a binary built with `-Cprofile-generate`,
//! so LLVM learns which branches and calls are hot. (The Python extension links its own copy of
//! the engine, with other symbol names; bench/pgo/train_extension.py trains that one.)

use memtint_engine::dram_sim::run_json;
use memtint_engine::multicore::run_sim_json;
use serde_json::Value;

const TRAINING: &str = include_str!("../pgo/training.json");

fn main() {
    let started = std::time::Instant::now();
    let specs = training_specs(&serde_json::from_str(TRAINING).expect("bench/pgo/training.json is JSON"));
    for (kind, spec) in &specs {
        let run = if kind == "dram" { run_json } else { run_sim_json };
        if let Err(e) = run(&spec.to_string()) {
            eprintln!("error: training run {spec} failed: {e}");
            std::process::exit(1);
        }
    }
    println!("memtint-pgo-train: {} runs in {:.1} s", specs.len(), started.elapsed().as_secs_f64());
}

/// ("dram" | "sim", run spec) for every run the training file describes (the same expansion as
/// train_extension.py's).
fn training_specs(t: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for setup in t["dram"].as_array().expect("dram: a list") {
        for kind in t["dram_workloads"].as_array().expect("dram_workloads: a list") {
            let mut spec = setup.clone();
            spec["outstanding"] = t["dram_outstanding"].clone();
            spec["workload"] = serde_json::json!({"generate": {"kind": kind, "requests": t["dram_requests"], "seed": t["seed"]}});
            out.push(("dram".to_string(), spec));
        }
    }
    for sim in t["sim"].as_array().expect("sim: a list") {
        let mut spec = sim.clone();
        spec["seed"] = t["seed"].clone();
        out.push(("sim".to_string(), spec));
    }
    out
}
