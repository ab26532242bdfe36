//! The lane controllers' closed loop (`dram_sim/routing.rs`) compiled for each instruction-set level this CPU runs
//! (`vector_isa.rs`: baseline, x86-64-v2, x86-64-v3) gives the same statistics as the baseline,
//! which passes the checker: random configurations with lane controllers (one and two channels,
//! every shape), and the bench's eight configurations, whose command streams through the lane
//! controllers' own per-level entries are compared too. An unknown level is a config error (a
//! level the CPU lacks too: `vector_isa.rs`'s unit tests).

use crate::common::random_run::{self, Case};
use crate::common::*;
use memtint_engine::controller::Implementation;
use memtint_engine::dram_sim::{open_workload, run as run_spec, simulate, DramRunSpec, DramSimOptions};
use memtint_engine::trace::GeneratorKind;
use memtint_engine::vector_isa::VectorIsa;
use proptest::prelude::*;
use serde_json::json;

const MAPPINGS: &[Option<&str>] = &[None, Some("RoBaRaCoCh"), Some("ChRaBaRoCo")];
const SCHEDULERS: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];

/// One run of `c` on the closed loop at `isa`, not recording (recording runs take the baseline
/// entry): its statistics.
fn at_level(c: &Case, isa: VectorIsa) -> serde_json::Value {
    let cfg = c.config(Some("lanes"));
    let opts = DramSimOptions { sources: c.sources, isa: Some(isa), ..DramSimOptions::new(c.outstanding) };
    let (mut source, ts) = open_workload(&c.workload(), &cfg).unwrap();
    let (mem, totals) = simulate(&cfg, source.as_mut(), ts, opts).unwrap();
    assert_eq!(mem.channels()[0].implementation(), Implementation::Lanes);
    assert_eq!(totals.vector_isa, isa, "the run reports the level it ran on");
    stats_without_wall_clock(&cfg, &mem, &totals, opts)
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

    /// The statistics cover every command per bank, row outcomes, latencies and queue
    /// integrals; the command streams at each level are compared step by step in
    /// `lanes_equal_general.rs` (the controllers' entries) and below (recording runs).
    #[test]
    fn every_level_gives_the_baseline_statistics(c in random_run::lanes_case(SCHEDULERS, MAPPINGS, 200..2000)) {
        let stats = at_level(&c, VectorIsa::Baseline);
        // The baseline itself passes the checker with the same commands (recording runs).
        let cfg = c.config(Some("lanes"));
        let opts = DramSimOptions { sources: c.sources, ..DramSimOptions::new(c.outstanding) };
        let (mem, totals) = run(&cfg, &c.workload(), opts);
        prop_assert_eq!(&stats_without_wall_clock(&cfg, &mem, &totals, opts)["channels"], &stats["channels"]);
        for isa in VectorIsa::supported().into_iter().skip(1) {
            prop_assert_eq!(&at_level(&c, isa), &stats, "{}", isa.name());
        }
    }
}

#[test]
fn the_bench_configurations_are_the_same_at_every_level() {
    // One and two channels (the one-channel and the multi-channel loop), four workloads; the
    // statistics at each level, and the command stream of the first 20 k requests through the
    // controllers' own entries (a recording general-loop run at each level).
    for machine in ["ddr4-2400", "ddr4-2400-2ch2r"] {
        let cfg = machine_cfg(machine);
        for kind in [GeneratorKind::Stream, GeneratorKind::Random, GeneratorKind::Mix, GeneratorKind::Conflict] {
            let w = generated(kind, 20_000, 42);
            let mut first = None;
            for isa in VectorIsa::supported() {
                let opts = DramSimOptions { isa: Some(isa), ..DramSimOptions::new(64) };
                let (mut source, ts) = open_workload(&w, &cfg).unwrap();
                let (mem, totals) = simulate(&cfg, source.as_mut(), ts, opts).unwrap();
                assert_eq!(totals.vector_isa, isa);
                let got = stats_without_wall_clock(&cfg, &mem, &totals, opts);
                let opts = DramSimOptions { isa: Some(isa), keep_commands: true, cycle_by_cycle: true, ..DramSimOptions::new(64) };
                let (_, totals) = run(&cfg, &w, opts);
                let got = (got, totals.commands);
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
