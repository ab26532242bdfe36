//! The fused closed loop compiled for each instruction-set level this CPU runs
//! (`vector_isa.rs`: baseline, x86-64-v2, x86-64-v3) issues the same commands and gives the same
//! statistics: random configurations with lane controllers (one and two channels, every shape),
//! the bench's eight configurations, and the checker clean at every level. An unknown level is
//! a config error (a level the CPU lacks too: `vector_isa.rs`'s unit tests).

mod common;

use common::random_run::{self, Case};
use common::*;
use memtint_engine::controller::Implementation;
use memtint_engine::dram::CommandRecord;
use memtint_engine::dram_sim::{run as run_spec, DramRunSpec, DramSimOptions};
use memtint_engine::trace::GeneratorKind;
use memtint_engine::vector_isa::VectorIsa;
use proptest::prelude::*;
use serde_json::json;

const MAPPINGS: &[Option<&str>] = &[None, Some("RoBaRaCoCh"), Some("ChRaBaRoCo")];
const SCHEDULERS: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];

/// One checked run of `c` on the fused loop at `isa`: its commands and statistics.
fn at_level(c: &Case, isa: VectorIsa) -> (Vec<CommandRecord>, serde_json::Value) {
    let cfg = c.config(Some("lanes"));
    let opts = DramSimOptions { sources: c.sources, keep_commands: true, isa: Some(isa), ..DramSimOptions::new(c.outstanding) };
    let (mem, totals) = run(&cfg, &c.workload(), opts);
    assert_eq!(mem.channels()[0].implementation(), Implementation::Lanes);
    assert_eq!(totals.vector_isa, isa, "the run reports the level it ran on");
    let stats = stats_without_wall_clock(&cfg, &mem, &totals, opts);
    (totals.commands, stats)
}

fn cases() -> u32 {
    if std::env::var_os("CI").is_some() {
        64
    } else {
        24
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_level_issues_the_baseline_commands(c in random_run::case(SCHEDULERS, MAPPINGS, 200..2000)) {
        let (commands, stats) = at_level(&c, VectorIsa::Baseline);
        for isa in VectorIsa::supported().into_iter().skip(1) {
            let (other_commands, other_stats) = at_level(&c, isa);
            prop_assert!(other_commands == commands, "{}: the command streams differ", isa.name());
            prop_assert_eq!(&other_stats, &stats, "{}", isa.name());
        }
    }
}

#[test]
fn the_bench_configurations_are_the_same_at_every_level() {
    // One and two channels (the one-channel and the multi-channel loop), four workloads.
    for machine in ["ddr4-2400", "ddr4-2400-2ch2r"] {
        let cfg = machine_cfg(machine);
        for kind in [GeneratorKind::Stream, GeneratorKind::Random, GeneratorKind::Mix, GeneratorKind::Conflict] {
            let w = generated(kind, 20_000, 42);
            let mut first = None;
            for isa in VectorIsa::supported() {
                let opts = DramSimOptions { keep_commands: true, isa: Some(isa), ..DramSimOptions::new(64) };
                let (mem, totals) = run(&cfg, &w, opts);
                let got = (totals.commands.clone(), stats_without_wall_clock(&cfg, &mem, &totals, opts));
                match &first {
                    None => first = Some(got),
                    Some(f) => assert!(f == &got, "{machine} {kind:?}: {} differs from the baseline", isa.name()),
                }
            }
        }
    }
}

fn machine_cfg(name: &str) -> memtint_engine::config::MemoryConfig {
    machine(name, json!({}))
}

fn spec(isa: &str) -> DramRunSpec {
    serde_json::from_value(json!({
        "machine": "ddr4-2400",
        "workload": {"generate": {"kind": "random", "requests": 2000, "seed": 1}},
        "vector_isa": isa,
    }))
    .unwrap()
}

#[test]
fn a_run_spec_names_its_level_and_the_statistics_say_which_ran() {
    for isa in VectorIsa::supported() {
        let stats = run_spec(&spec(isa.name())).unwrap();
        assert_eq!(stats["vector_isa"], json!(isa.name()));
    }
    let stats = run_spec(&spec("best")).unwrap();
    assert_eq!(stats["vector_isa"], json!(VectorIsa::best().name()));
}

#[test]
fn an_unknown_level_is_a_config_error_that_lists_the_valid_ones() {
    let e = run_spec(&spec("avx9")).unwrap_err().to_string();
    assert!(e.contains("vector_isa") && e.contains("avx9") && e.contains("x86-64-v3"), "{e}");
}
