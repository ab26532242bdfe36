//! Page migration between nodes (docs/numa.md, "Migration"; bw-aware-tiering.md §6.3 tests 9-10).

use crate::common::{sim_err as err, sim_run as run, u};
use serde_json::{json, Value};

/// A scan every 100 µs of 25.6 MiB: the whole 16 MiB footprint is marked each time, so a 2 M
/// instruction run sees tens of scans (the default, Linux's rate, would see a handful of pages).
fn fast_scan() -> Value {
    json!({"period_ns": 100000.0, "scan_mb": 25.6})
}

/// One 4-thread process on the tiering machine, two threads on each node, sharing one 16 MiB
/// footprint (the thesis's threads spread over both sockets).
fn tiering(policy: &str, migration: &str, extra: Value) -> Value {
    let threads: Vec<Value> = [0, 1, 4, 5].iter().map(|c| json!({"program": "stream:footprint_bytes=16777216", "affinity": [c]})).collect();
    let mut os = json!({"policy": policy, "migration": migration, "numa_scan": fast_scan()});
    if let (Some(o), Some(e)) = (os.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    run(json!({"machine": "tiering-2to1", "processes": [{"threads": threads}], "instructions": 1_000_000, "seed": 1, "os": os}))
}

/// §6.3 test 10: with automatic NUMA balancing on (Linux's default), only Local (through it)
/// and BW-LM migrate; the other policies' memory is not MPOL_F_MOF, so nothing is even scanned.
#[test]
fn only_local_and_bw_lm_migrate_pages() {
    let local = tiering("local", "numa-balancing", json!({}));
    let m = &local["page_migration"];
    assert!(u(&m["pages_moved"]) > 0 && u(&m["hint_faults"]) >= u(&m["pages_moved"]), "{m}");
    assert_eq!(u(&m["copy_bytes"]), 2 * 4096 * u(&m["pages_moved"]));
    let moves = &m["moves"];
    assert_eq!(u(&moves[0][1]) + u(&moves[1][0]), u(&m["pages_moved"]));
    let bw_lm = tiering("bw-local", "bw-migration", json!({}));
    assert!(u(&bw_lm["page_migration"]["pages_moved"]) > 0, "{}", bw_lm["page_migration"]);
    for policy in ["interleave", "dram-only", "bw-interleave", "bw-random", "bw-local"] {
        let r = tiering(policy, "numa-balancing", json!({}));
        assert!(r.get("page_migration").is_none(), "{policy} migrates nothing");
        let w = r["warnings"].to_string();
        assert!(w.contains("migrates nothing") && w.contains(policy), "{policy}: {w}");
    }
}

/// Hinting faults and migrations cost the faulting thread system time (1 µs and 3 µs more by
/// default, at 2.6 GHz), and the copy goes through both memories: a read of each of the page's
/// 64 lines at its old frame.
#[test]
fn migrations_cost_system_time_and_copy_traffic() {
    let r = tiering("local", "numa-balancing", json!({}));
    let (fault, migrate) = (2600, 7800);
    for c in r["cores"].as_array().unwrap() {
        let pm = &c["page_migration"];
        let own = u(&pm["hint_faults"]) * fault + u(&pm["pages_moved"]) * migrate;
        // At least: but for the rest of a fault and move the thread reached its target inside.
        assert!(u(&pm["system_cycles"]) + fault + migrate >= own, "its own faults and moves at least: {pm}");
        // And no more than the cycles it took: overlapping holds are one wait.
        assert!(u(&pm["system_cycles"]) <= u(&c["cycles"]), "{pm}");
        let copies = &c["row_outcomes_by_kind"]["migration_read"];
        let reads = u(&copies["hits"]) + u(&copies["misses"]) + u(&copies["conflicts"]);
        let moved = u(&pm["pages_moved"]);
        // Reads of the last pages moved may still be in flight when the thread's counts stop.
        assert!(reads <= 64 * moved && reads + 64 * 8 >= 64 * moved, "{reads} copy reads for {moved} pages");
    }
    // Each thread's time: user, idle on memory and system add up to its cycles; the system
    // part is its kernel stalls.
    for c in r["cores"].as_array().unwrap() {
        let t = &c["time_breakdown"];
        assert_eq!(u(&t["user_cycles"]) + u(&t["memory_cycles"]) + u(&t["system_cycles"]), u(&c["cycles"]), "{t}");
        assert_eq!(u(&t["system_cycles"]), u(&c["page_migration"]["system_cycles"]).min(u(&c["cycles"])));
    }
    let plain = tiering("local", "none", json!({}));
    for c in plain["cores"].as_array().unwrap() {
        let t = &c["time_breakdown"];
        assert_eq!(u(&t["system_cycles"]), 0);
        assert!(u(&t["memory_cycles"]) > u(&c["cycles"]) / 4, "streams wait on memory: {t}");
    }
    assert!(plain.get("page_migration").is_none() && plain["cores"][0].get("page_migration").is_none());
    assert!(plain["cores"][0]["row_outcomes_by_kind"].get("migration_read").is_none(), "no new keys without migration");
}

/// §6.3 test 9 in a run: the gate holds the net flow between DRAM and NVM within M, refusing
/// the rest.
#[test]
fn the_bw_migration_gate_bounds_net_flow_in_a_run() {
    let r = tiering("bw-local", "bw-migration", json!({"bw-migration": {"max_net_pages": 5}}));
    let m = &r["page_migration"];
    let net = u(&m["moves"][1][0]) as i64 - u(&m["moves"][0][1]) as i64;
    assert!(net.abs() <= 5, "{m}");
    assert!(u(&m["refused"]) > 0, "one-sided pressure meets the gate: {m}");
    assert_eq!(r["config"]["params"]["os"]["bw-migration"]["max_net_pages"], 5);
}

#[test]
fn runs_with_migration_are_deterministic() {
    let a = tiering("local", "numa-balancing", json!({}));
    let b = tiering("local", "numa-balancing", json!({}));
    assert_eq!(a["page_migration"], b["page_migration"]);
    assert_eq!(a["core_cycles"], b["core_cycles"]);
}

#[test]
fn bad_migration_settings_are_errors_naming_the_key() {
    let base = |os: Value| json!({"machine": "tiering-2to1", "programs": ["stream"], "instructions": 1000, "os": os});
    let e = err(base(json!({"policy": "local", "migration": "autonuma"})));
    assert!(e.contains("os.migration") && e.contains("numa-balancing") && e.contains("bw-migration"), "{e}");
    for (key, value) in [("period_ns", json!(0.0)), ("scan_mb", json!(-1.0)), ("fault_ns", json!(-5.0)), ("shootdown_ns", json!(1e15))] {
        let e = err(base(json!({"policy": "local", "migration": "numa-balancing", "numa_scan": {key: value}})));
        assert!(e.contains(&format!("os.numa_scan.{key}")), "{key}: {e}");
    }
    let e = err(base(json!({"policy": "local", "migration": "bw-migration", "bw-migration": {"max_net_page": 3}})));
    assert!(e.contains("max_net_page"), "{e}");
    for (key, value) in [("enough_free_pct", json!(-1.0)), ("adjust_period_ns", json!(0.0))] {
        let e = err(base(json!({"policy": "local", "migration": "memory-tiering", "memory-tiering": {key: value}})));
        assert!(e.contains(&format!("os.memory-tiering.{key}")), "{key}: {e}");
    }
    let e = err(base(json!({"policy": "local", "migration": "numa-balancing", "numa-balancing": {"group": true}})));
    assert!(e.contains("group"), "{e}");
    // The Opteron's four nodes have one bandwidth: one cluster, nothing for the gate to keep.
    let e = err(
        json!({"machine": "opteron-6128", "programs": ["stream"], "instructions": 1000, "os": {"policy": "local", "migration": "bw-migration"}}),
    );
    assert!(e.contains("two memory clusters"), "{e}");
    // One memory: nothing to migrate, said plainly.
    let r = run(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "os": {"migration": "numa-balancing"}}));
    assert!(r["warnings"].to_string().contains("one memory node"), "{}", r["warnings"]);
}

/// Four threads of one process on the DRAM node of the tiering machine running `program`,
/// `instructions` each, with `os` (merged over local placement).
fn four_threads(program: &str, instructions: u64, os: Value) -> Value {
    let threads: Vec<Value> = (0..4).map(|c| json!({"program": format!("{program},seed={}", c + 1), "affinity": [c]})).collect();
    let mut o = json!({"policy": "local"});
    if let (Some(o), Some(e)) = (o.as_object_mut(), os.as_object()) {
        o.extend(e.clone());
    }
    run(json!({"machine": "tiering-2to1", "processes": [{"threads": threads}], "instructions": instructions, "seed": 1, "os": o}))
}

/// Share of all DRAM reads that node 0 (the fast tier, the threads' node) served.
fn fast_share(r: &Value) -> f64 {
    let reads: Vec<f64> = r["nodes"].as_array().unwrap().iter().map(|n| u(&n["reads"]) as f64).collect();
    reads[0] / reads.iter().sum::<f64>()
}

/// A 64 MiB GUPS-like footprint whose hot 16 MiB lie at its end, on a fast tier limited to 24
/// MiB: first touch fills the fast tier with cold data and leaves the hot set on the slow one.
const HOTSET: &str = "hotset:hot_bytes=16777216";

/// Linux's tiering mode: the scan marks only slow-tier pages, hot ones (faulting soon after
/// the scan) are promoted, kswapd demotes cold ones when the fast tier runs low; more reads are
/// served by the fast tier than under first touch alone.
#[test]
fn memory_tiering_promotes_hot_pages_and_kswapd_demotes_cold_ones() {
    let costs = json!({"period_ns": 100000.0, "scan_mb": 4.0, "fault_ns": 0.0, "migrate_ns": 0.0, "shootdown_ns": 0.0});
    let os = json!({"node_memory_mb": [24], "migration": "memory-tiering", "numa_scan": costs, "memory-tiering": {"hot_threshold_ns": 100000.0}});
    let r = four_threads(HOTSET, 3_000_000, os);
    let plain = four_threads(HOTSET, 3_000_000, json!({"node_memory_mb": [24]}));
    let m = &r["page_migration"];
    let (promoted, demoted) = (u(&m["moves"][1][0]), u(&m["moves"][0][1]));
    assert!(promoted > 0 && demoted > 0, "{m}");
    assert_eq!(u(&m["daemon_moves"]), demoted, "every demotion is kswapd's: {m}");
    assert_eq!(u(&m["pages_moved"]), promoted + demoted, "every fault-driven move is a promotion: {m}");
    assert!(u(&m["hint_faults"]) >= promoted);
    assert_eq!(u(&plain["nodes"][0]["pages"]), 24 * 256, "the limit holds under first touch");
    assert!(u(&r["nodes"][0]["pages"]) <= 24 * 256, "and under migration");
    let (tiered, first_touch) = (fast_share(&r), fast_share(&plain));
    assert!(tiered > first_touch + 0.1, "fast-tier share of reads: {tiered} tiered, {first_touch} first touch");
}

/// Colloid-style balancing: on an uncongested fast tier that holds only cold pages it promotes
/// the sampled hot pages (swapping, as the fast tier is full) without a hinting fault; on a fast
/// tier congested by streams it demotes pages until the tiers' latencies meet.
#[test]
fn colloid_promotes_to_an_idle_fast_tier_and_sheds_load_from_a_congested_one() {
    let os = json!({"node_memory_mb": [24], "migration": "colloid"});
    let r = four_threads(HOTSET, 5_000_000, os);
    let plain = four_threads(HOTSET, 5_000_000, json!({"node_memory_mb": [24]}));
    let m = &r["page_migration"];
    assert_eq!(u(&m["hint_faults"]), 0, "access bits and samples cost no fault: {m}");
    assert!(u(&m["moves"][1][0]) > 0 && u(&m["moves"][1][0]) == u(&m["moves"][0][1]), "swaps into a full fast tier: {m}");
    assert!(fast_share(&r) > fast_share(&plain) + 0.1, "{} vs {}", fast_share(&r), fast_share(&plain));

    let streams = four_threads("stream:footprint_bytes=67108864", 3_000_000, json!({"migration": "colloid"}));
    let m = &streams["page_migration"];
    assert!(u(&m["moves"][0][1]) > 0 && u(&m["moves"][1][0]) == 0, "demotions only: {m}");
    assert!(fast_share(&streams) < 1.0);
}

/// DAMON's schemes: regions sampled hot on the slow node are promoted, regions idle for long
/// demoted while the fast tier is low on free memory; sampling costs no fault.
#[test]
fn damon_schemes_promote_hot_regions_and_demote_idle_ones() {
    let os = json!({"node_memory_mb": [24], "migration": "damon"});
    let r = four_threads(HOTSET, 5_000_000, os);
    let plain = four_threads(HOTSET, 5_000_000, json!({"node_memory_mb": [24]}));
    let m = &r["page_migration"];
    assert_eq!(u(&m["hint_faults"]), 0, "{m}");
    assert_eq!(u(&m["scans"]), 0, "no NUMA scan: {m}");
    assert!(u(&m["moves"][1][0]) > 0 && u(&m["moves"][0][1]) > 0, "{m}");
    assert_eq!(u(&m["daemon_moves"]), u(&m["pages_moved"]));
    assert!(fast_share(&r) > fast_share(&plain) + 0.1, "{} vs {}", fast_share(&r), fast_share(&plain));
}

#[test]
fn tiering_runs_are_deterministic() {
    let os = json!({"node_memory_mb": [24], "migration": "colloid"});
    let (a, b) = (four_threads(HOTSET, 500_000, os.clone()), four_threads(HOTSET, 500_000, os));
    assert_eq!(a["page_migration"], b["page_migration"]);
    assert_eq!(a["core_cycles"], b["core_cycles"]);
}

#[test]
fn node_memory_limits_are_checked() {
    let base = |os: Value| json!({"machine": "tiering-2to1", "programs": ["stream"], "instructions": 1000, "os": os});
    for (limit, words) in [
        (json!([1, 1, 1]), "3 values for a machine of 2 nodes"),
        (json!([-1]), "os.node_memory_mb[0]"),
        (json!([0, 1e9]), "more than node 1"),
        (json!([0.001]), "less than one page"),
    ] {
        let e = err(base(json!({"policy": "local", "node_memory_mb": limit})));
        assert!(e.contains(words), "{limit}: {e}");
    }
    // Filled to its limits, the machine's error names the limit that filled it.
    let e = err(json!({"machine": "tiering-2to1", "programs": ["random:footprint_bytes=8388608,reads_pki=50"],
                       "instructions": 300_000, "os": {"policy": "local", "node_memory_mb": [1, 1]}}));
    assert!(e.contains("os.node_memory_mb: out of physical memory") && e.contains("it limits node 0, 1"), "{e}");
    let e = err(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "os": {"node_memory_mb": [8]}}));
    assert!(e.contains("os.node_memory_mb") && e.contains("node policies"), "{e}");
    let e = err(
        json!({"machine": "opteron-6128", "programs": ["stream"], "instructions": 1000, "os": {"policy": "camc", "node_memory_mb": [8]}}),
    );
    assert!(e.contains("os.node_memory_mb") && e.contains("colour"), "{e}");
    for (key, value) in [("hot_threshold_ns", json!(0.0)), ("free_pct", json!(60.0))] {
        let e = err(base(json!({"policy": "local", "migration": "memory-tiering", "memory-tiering": {key: value}})));
        assert!(e.contains(key), "{key}: {e}");
    }
    let e = err(base(json!({"policy": "local", "migration": "colloid", "colloid": {"delta": 1.5}})));
    assert!(e.contains("delta"), "{e}");
    let e = err(base(json!({"policy": "local", "migration": "damon", "damon": {"max_regions": 5}})));
    assert!(e.contains("max_regions"), "{e}");
}

/// A migration that moved nothing is said with the cause its counters show; the run's length
/// was blamed whatever the cause, and under DAMON named a period it does not read.
#[test]
fn a_migration_that_moved_nothing_says_why() {
    let said = |r: &Value| -> String {
        r["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).find(|w| w.contains("moved no page")).unwrap_or("").to_string()
    };
    // The gate refused every move (M = 0).
    let r = tiering("bw-local", "bw-migration", json!({"bw-migration": {"max_net_pages": 0}}));
    let w = said(&r);
    assert!(u(&r["page_migration"]["refused"]) > 0 && w.contains("its gate refused every move it chose"), "{w}");
    // Shorter than its period: the period named is the one it runs on.
    let r = tiering("local", "numa-balancing", json!({"numa_scan": {"period_ns": 1e9}}));
    assert!(said(&r).contains("shorter than the interval it acts on (os.numa_scan.period_ns = 1000000000 ns)"), "{}", said(&r));
    // DAMON acts every aggr_samples samples (20 of 5 µs by default): a run shorter than that,
    // however many samples it took, is too short, and the keys named are DAMON's.
    let os = json!({"node_memory_mb": [24], "migration": "damon", "numa_scan": {"period_ns": 1e5}});
    let r = four_threads(HOTSET, 30_000, os);
    assert_eq!(r["page_migration"]["period_ns"], json!(100_000.0));
    let w = said(&r);
    assert!(w.contains("shorter than the interval it acts on (os.damon.sample_ns x os.damon.aggr_samples = 100000 ns)"), "{w}");
}

/// `[os.numa_scan]` keys DAMON and Colloid do not read were accepted and changed nothing.
#[test]
fn numa_scan_keys_a_migration_does_not_read_are_warned_of() {
    let scan = json!({"period_ns": 50000.0, "scan_mb": 64.0, "fault_ns": 10.0});
    let warned = |migration: &str| -> String {
        let r = four_threads(HOTSET, 200_000, json!({"node_memory_mb": [24], "migration": migration, "numa_scan": scan}));
        r["warnings"].to_string()
    };
    let damon = warned("damon");
    for key in ["period_ns", "scan_mb", "fault_ns"] {
        assert!(damon.contains(&format!("os.numa_scan.{key} is set but os.migration = \\\"damon\\\" does not read it")), "{key}: {damon}");
    }
    let colloid = warned("colloid");
    assert!(!colloid.contains("os.numa_scan.period_ns") && colloid.contains("os.numa_scan.scan_mb is set"), "{colloid}");
    assert!(!warned("memory-tiering").contains("does not read it"));
}
