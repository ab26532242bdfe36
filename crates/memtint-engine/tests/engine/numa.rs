//! NUMA nodes and tiers (docs/numa.md): a one-node machine is today's machine, requests go to
//! their node's controllers and pay the latency matrix, the node policies place pages as Linux
//! and the tiering thesis's Algorithms 1-3 say (§6.3 tests 1 and 3), and bandwidth binds: a
//! bandwidth-bound program's run time follows max_i(bytes_i / B_i).

use memtint_engine::multicore::sim_spec::run_sim;
use serde_json::{json, Value};

fn sim(spec: Value) -> Value {
    run_sim(&serde_json::from_value(spec).unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

fn sim_error(spec: Value) -> String {
    match serde_json::from_value(spec).map_err(|e: serde_json::Error| e.to_string()).and_then(|s| run_sim(&s).map_err(|e| e.to_string())) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

/// The run time: the last thread to reach its target (core cycles).
fn makespan(r: &Value) -> f64 {
    r["cores"].as_array().unwrap().iter().map(|c| c["finished_at"].as_f64().unwrap()).fold(0.0, f64::max)
}

fn pages(r: &Value, process: usize) -> Vec<u64> {
    r["processes"][process]["pages_per_node"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

/// `n` pages of footprint for one stream thread.
fn stream(pages: u64, reads_pki: u32) -> String {
    format!("stream:reads_pki={reads_pki},writes_pki=0,footprint_bytes={}", pages * 4096)
}

fn without_wall_clock(mut r: Value) -> Value {
    for k in ["wall_seconds", "requests_per_second", "instructions_per_second"] {
        r.as_object_mut().unwrap().remove(k);
    }
    for k in ["wall_seconds", "requests_per_second", "dram_cycles_per_second"] {
        r["dram"].as_object_mut().unwrap().remove(k);
    }
    r["config"].as_object_mut().unwrap().remove("machine");
    r
}

#[test]
fn a_machine_declaring_one_node_runs_exactly_as_without_nodes() {
    let spec = |overrides: Value| json!({"machine": "ddr4-2400", "overrides": overrides, "programs": ["stream", "random"], "instructions": 20_000, "check": true});
    let plain = sim(spec(json!({})));
    let one = sim(spec(json!({"nodes": [{"cores": 4}]})));
    assert!(one.get("nodes").is_none() && plain.get("nodes").is_none());
    assert_eq!(without_wall_clock(one), without_wall_clock(plain.clone()));
    let zero = sim(spec(json!({"nodes": [{"cores": 4}], "links": {"latency_ns": [[0]]}})));
    assert_eq!(without_wall_clock(zero), without_wall_clock(plain));
    // A latency on its own node was accepted and dropped with the topology (two nodes add it).
    let e = sim_error(spec(json!({"nodes": [{"cores": 4}], "links": {"latency_ns": [[500]]}})));
    assert!(e.contains("links.latency_ns[0][0]: 500 ns on a machine of one node"), "{e}");
}

/// Pages per node of process 0, one `light` thread mapping `pages` pages under `os`.
fn placed(machine: &str, pages: u64, os: Value) -> Vec<u64> {
    let program = format!("light:footprint_bytes={}", pages * 4096);
    let r = sim(json!({"machine": machine, "programs": [program], "instructions": 1000, "os": os}));
    self::pages(&r, 0)
}

#[test]
fn interleave_and_weighted_interleave_place_exact_page_counts() {
    let p = placed("tiering-2to1", 3000, json!({"policy": "interleave"}));
    assert_eq!(p.iter().sum::<u64>() % 2, 0, "{p:?}");
    assert_eq!(p[0], p[1]);
    let p = placed("tiering-2to1", 3000, json!({"policy": "weighted-interleave", "weighted-interleave": {"weights": [2, 1]}}));
    assert_eq!(p[0], 2 * p[1], "{p:?}");
    // Linux's auto weights from 19.2 and 9.6 GB/s: 32 shares truncated, 21:10.
    let w = memtint_engine::os::placement::linux_auto_weights(&[19.2, 9.6]);
    assert_eq!(w, vec![21, 10]);
    let p = placed("tiering-2to1", 3100, json!({"policy": "weighted-interleave"}));
    let total: u64 = p.iter().sum();
    let (cycles, rest) = (total / 31, total % 31);
    assert_eq!(p, vec![21 * cycles + rest.min(21), 10 * cycles + rest.saturating_sub(21)]);
}

/// The tiering thesis's §6.3 test 1: BW-INTERLEAVE over 3000 allocations.
#[test]
fn bw_interleave_splits_3000_pages_exactly_as_the_thesis_test_1() {
    for (machine, want) in [("tiering-2to1", [2000, 1000]), ("tiering-5to1", [2500, 500]), ("tiering-10to1", [2728, 272])] {
        let layout = memtint_engine::config::MemoryConfig::resolve(&memtint_engine::config::MachineConfig::load(machine).unwrap()).unwrap();
        let mut os = os_model(&layout, "bw-interleave");
        let nodes = first_touches(&mut os, &layout, 0, 0, 3000);
        let got = [nodes.iter().filter(|&&n| n == 0).count(), nodes.iter().filter(|&&n| n == 1).count()];
        assert_eq!(got, want, "{machine}");
        // The pattern: D to DRAM then N to NVM, in allocation order.
        let (dd, nn) = match machine {
            "tiering-2to1" => (2, 1),
            "tiering-5to1" => (5, 1),
            _ => (10, 1),
        };
        let cycle: Vec<u32> = std::iter::repeat_n(0, dd).chain(std::iter::repeat_n(1, nn)).collect();
        assert!(nodes.chunks(dd + nn).filter(|c| c.len() == dd + nn).all(|c| c == cycle.as_slice()), "{machine}: {:?}", &nodes[..24]);
    }
}

fn os_model(cfg: &memtint_engine::config::MemoryConfig, policy: &str) -> memtint_engine::os::OsModel {
    let os = memtint_engine::os::OsConfig { policy: policy.into(), ..Default::default() };
    memtint_engine::os::OsModel::with_nodes(
        &os,
        &cfg.mapping,
        0..0,
        1,
        cfg.machine.cpu.cores,
        cfg.node_layout(),
        &memtint_engine::os::placement::one_thread_each(1, cfg.machine.cpu.cores),
    )
    .unwrap()
}

/// The nodes of `n` first touches by thread `tid` on `core`, in order.
fn first_touches(
    os: &mut memtint_engine::os::OsModel,
    cfg: &memtint_engine::config::MemoryConfig,
    tid: u32,
    core: u32,
    n: u64,
) -> Vec<u32> {
    let layout = cfg.node_layout();
    let base = (tid as u64 + 1) << 32;
    (0..n).map(|p| layout.node_of_frame((os.translate_thread(0, tid, core, base + p * 4096).unwrap() >> 12) as u32)).collect()
}

/// §6.3 test 3: a DRAM-side thread takes D DRAM then N NVM pages; an NVM-side one N NVM then D DRAM.
#[test]
fn bw_local_starts_each_thread_on_its_own_cluster_as_the_thesis_test_3() {
    let cfg = memtint_engine::config::MemoryConfig::resolve(&memtint_engine::config::MachineConfig::load("tiering-5to1").unwrap()).unwrap();
    let mut os = os_model(&cfg, "bw-local");
    let dram_side = first_touches(&mut os, &cfg, 0, 0, 600);
    let nvm_side = first_touches(&mut os, &cfg, 1, 4, 600);
    assert_eq!(&dram_side[..6], &[0, 0, 0, 0, 0, 1]);
    assert_eq!(&nvm_side[..6], &[1, 0, 0, 0, 0, 0]);
    for nodes in [&dram_side, &nvm_side] {
        assert_eq!(nodes.iter().filter(|&&n| n == 0).count(), 500, "both end at D:N");
    }
    let mut bwi = os_model(&cfg, "bw-interleave");
    let interleaved = first_touches(&mut bwi, &cfg, 1, 4, 600);
    let local = |ns: &[u32]| ns.iter().filter(|&&n| n == 1).count() as i64;
    assert!((local(&nvm_side) - local(&interleaved)).abs() <= 5, "local fractions equal BW-I's within max(D, N)");
}

#[test]
fn a_page_is_served_by_its_nodes_controllers_and_remote_reads_pay_the_matrix_latency() {
    // One latency-bound thread (one miss at a time) on node 0, its pages on node 0 or node 1.
    let run = |node: u32| {
        sim(json!({"machine": "tiering-2to1", "overrides": {"cpu": {"mshrs": 1}}, "check": true,
            "programs": ["random:reads_pki=100,writes_pki=0,footprint_bytes=67108864"], "instructions": 20_000,
            "os": {"policy": "dram-only", "dram-only": {"nodes": [node]}}}))
    };
    let (local, remote) = (run(0), run(1));
    for (r, node) in [(&local, 0), (&remote, 1)] {
        assert_eq!(r["dram"]["violations"], 0);
        let reads = r["cores"][0]["dram_reads"].as_u64().unwrap();
        // The node counts the whole run, the thread's statistics stop at its target.
        assert!(r["nodes"][node]["reads"].as_u64().unwrap() >= reads, "every read on node {node}'s channels");
        assert_eq!(r["nodes"][1 - node]["reads"], 0);
        let a = &r["cores"][0]["node_accesses"];
        // Counted when sent; `dram_reads` when done (at most the thread's one miss apart).
        let sent = a[if node == 0 { "local_reads" } else { "remote_reads" }].as_u64().unwrap();
        assert!(sent >= reads && sent <= reads + 1, "{sent} sent, {reads} done");
    }
    // 50 ns at 2.6 GHz per read, within 15 %.
    let reads = remote["cores"][0]["dram_reads"].as_f64().unwrap();
    let extra = (makespan(&remote) - makespan(&local)) / reads;
    assert!((extra - 130.0).abs() < 0.15 * 130.0, "remote reads cost {extra:.1} core cycles more, expected 130");
}

#[test]
fn the_timing_checker_is_clean_on_every_node() {
    for machine in ["tiering-5to1", "opteron-6128"] {
        let r = sim(json!({"machine": machine, "programs": vec!["copy"; 8], "instructions": 5000, "check": true,
            "os": {"policy": "interleave"}}));
        assert_eq!(r["dram"]["violations"], 0, "{machine}");
        assert!(r["dram"]["commands_checked"].as_u64().unwrap() > 0);
        for n in r["nodes"].as_array().unwrap().iter().filter(|n| n["memory_bytes"].as_u64().unwrap() > 0) {
            assert!(n["reads"].as_u64().unwrap() > 0, "{machine}: node {} served reads", n["node"]);
        }
    }
}

/// Eight bandwidth-bound streams, four per node, run until each retires `n` instructions.
/// Eight bandwidth-bound streams, 4 threads on each node as the thesis split its threads
/// (§6.3 test 4), all of one SPMD program: a thread that finished waits at the end.
fn streams(machine: &str, policy: &str, n: u64) -> Value {
    sim(json!({"machine": machine, "programs": vec![stream(8192, 300); 8], "instructions": n, "os": {"policy": policy}, "at_end": "wait"}))
}

#[test]
/// §6.3 test 5: a purely bandwidth-bound program's run time follows max_i(bytes_i / B_i), so
/// BW-aware placement beats local by (r+1)/2, DRAM-only by (r+1)/r, and DRAM-only beats local
/// by r/2. Measured (20 000 instructions per thread): over local 1.357 / 2.697 / 4.910 at r = 2 /
/// 5 / 10 (ideal 1.5 / 3.0 / 5.5), over DRAM-only 1.438 / 1.144 / 1.042 (1.5 / 1.2 / 1.1),
/// DRAM-only over local 0.944 / 2.357 / 4.712. At every r the gain is 10-11 % short of the ideal:
/// with 1/3, 1/6 and 1/11 of each thread's reads on the slow node, the slow node reaches 87, 84
/// and 81 % of its peak (96 % under local, where 4 threads stream only to it): each thread's 16
/// MSHRs and in-order window are held by its slow reads, so the threads cannot keep both nodes
/// full (docs/numa.md).
fn bandwidth_binds_bw_aware_placement_as_the_thesis_ideal_says() {
    let mut gains = Vec::new();
    for r in [2.0, 5.0, 10.0] {
        let machine = format!("tiering-{r}to1");
        let t = |policy: &str| makespan(&streams(&machine, policy, 20_000));
        let (local, dram_only, bw) = (t("local"), t("dram-only"), t("bw-interleave"));
        let (over_local, over_dram, dram_over_local) = (local / bw, dram_only / bw, local / dram_only);
        println!("r={r}: BW-I over local {over_local:.3}, over DRAM-only {over_dram:.3}, DRAM-only over local {dram_over_local:.3}");
        // 10 % at r = 2; the measured shortfall above at 5 and 10.
        let band = if r == 2.0 { 0.10 } else { 0.15 };
        let near =
            |got: f64, ideal: f64, what: &str| assert!((got / ideal - 1.0).abs() <= band, "r={r}: {what} {got:.3}, ideal {ideal:.3}");
        near(over_local, (r + 1.0) / 2.0, "BW-interleave over local");
        near(over_dram, (r + 1.0) / r, "BW-interleave over DRAM-only");
        near(dram_over_local, r / 2.0, "DRAM-only over local");
        gains.push((over_local, over_dram));
    }
    // The thesis's qualitative check: the gain over local grows with r, over DRAM-only it shrinks.
    assert!(gains.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 < w[0].1), "{gains:?}");
}

#[test]
/// Demand far below the slow node's bandwidth (thesis Fig. 5.8): one miss per 50 000
/// instructions, so the remote latency some policies add is under 2 % of the run.
fn a_non_intensive_program_runs_alike_under_every_policy() {
    let run = |policy: &str| {
        makespan(&sim(
            json!({"machine": "tiering-2to1", "programs": vec!["light:reads_pki=0.02,writes_pki=0"; 8], "warmup": 1_000_000, "instructions": 2_000_000, "os": {"policy": policy}}),
        ))
    };
    let base = run("local");
    for policy in ["interleave", "weighted-interleave", "dram-only", "bw-interleave", "bw-random", "bw-local"] {
        let t = run(policy);
        println!("{policy}: {t} vs local {base}");
        assert!((t / base - 1.0).abs() <= 0.02, "{policy}: {t} vs local {base}");
    }
}

fn machine_error(overrides: Value) -> String {
    use memtint_engine::config::{MachineConfig, MemoryConfig};
    match MachineConfig::load("tiering-2to1").unwrap().with_overrides(&overrides).and_then(|m| MemoryConfig::resolve(&m)) {
        Ok(_) => panic!("{overrides} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_topologies_are_errors_naming_the_key() {
    let many: Vec<_> = (0..65).map(|_| json!({"cores": 1})).collect();
    let e = machine_error(json!({"cpu": {"cores": 65}, "nodes": many}));
    assert!(e.contains("nodes") && e.contains("65 nodes") && e.contains("at most 64"), "{e}");
    // Node 0 takes the machine's [dram]: a mistake there is the machine's key, node 1's own is its.
    let e = machine_error(json!({"dram": {"mapping": "RoRaBaCCh"}}));
    assert!(e.starts_with("invalid configuration: dram.mapping: unknown mapping 'RoRaBaCCh'"), "{e}");
    // A named layout that does not parse is the mapping key's, not a key "layout" no file has.
    let e = machine_error(json!({"dram": {"mapping": "RoRaBaCoBgXx"}}));
    assert!(e.starts_with("invalid configuration: dram.mapping: 'RoRaBaCoBgXx': unknown code"), "{e}");
    let bad = json!({"device": "ddr4-2400", "density_gbit": 8, "channels": 1, "ranks": 1, "mapping": "RoRaBaCoBgXx"});
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 4, "dram": bad}]}));
    assert!(e.starts_with("invalid configuration: nodes[1].dram.mapping: 'RoRaBaCoBgXx'"), "{e}");
    let e = machine_error(json!({"links": null}));
    assert!(e.contains("links") && e.contains("2 nodes needs [links] latency_ns"), "{e}");
    let e = machine_error(json!({"links": {"latency_ns": [[0, 50]]}}));
    assert!(e.contains("links.latency_ns") && e.contains("square"), "{e}");
    let e = machine_error(json!({"links": {"latency_ns": [[0, 50], [50]]}}));
    assert!(e.contains("links.latency_ns[1]") && e.contains("square"), "{e}");
    let e = machine_error(json!({"links": {"latency_ns": [[0, -5], [50, 0]]}}));
    assert!(e.contains("links.latency_ns[0][1]") && e.contains("-5"), "{e}");
    let e = machine_error(json!({"links": {"bandwidth_gbps": [[0, 0], [19.2, 0]]}}));
    assert!(e.contains("links.bandwidth_gbps[0][1]: must be between 0.001 and 100000 GB/s"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 4, "bandwidth_gbps": 0}]}));
    assert!(e.contains("nodes[1].bandwidth_gbps"), "{e}");
    // Above 0 but no bandwidth: a line's crossing time overflowed; a latency of 1e300 ns
    // overflowed the cycle it was added to.
    let e = machine_error(json!({"links": {"bandwidth_gbps": [[0, 5e-324], [19.2, 0]]}}));
    assert!(e.contains("links.bandwidth_gbps[0][1]: must be between 0.001 and 100000 GB/s") && e.contains("got 5e-324"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 4, "bandwidth_gbps": 1e-300}]}));
    assert!(e.contains("nodes[1].bandwidth_gbps: must be between 0.001 and 100000 GB/s"), "{e}");
    let e = machine_error(json!({"links": {"latency_ns": [[0, 1e300], [50, 0]]}}));
    assert!(e.contains("links.latency_ns[0][1]: must be between 0 and 100000 ns"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 2}]}));
    assert!(e.contains("nodes") && e.contains("cpu.cores is 8"), "{e}");
    // Two nodes of one name (given, or a given one equal to another's default) would be one node to its users.
    let e = machine_error(json!({"nodes": [{"cores": 4, "name": "dram"}, {"cores": 4, "name": "dram"}]}));
    assert!(e.contains("nodes[1].name") && e.contains("\"dram\" is also node 0's name"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 4, "name": "node0"}]}));
    assert!(e.contains("nodes[1].name") && e.contains("\"node0\" is also node 0's name"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4}, {"cores": 4, "name": " "}]}));
    assert!(e.contains("nodes[1].name: is empty"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 8}, {"cores": 0, "memory": false}]}));
    assert!(e.contains("nodes[1]") && e.contains("neither cores nor memory"), "{e}");
    let e = machine_error(json!({"nodes": [{"cores": 4, "memory": false}, {"cores": 4, "memory": false}], "links": null}));
    assert!(e.contains("no node has memory"), "{e}");
    let e = machine_error(
        json!({"nodes": [{"cores": 4}, {"cores": 4, "dram": {"device": "ddr3-1333", "density_gbit": 4, "mapping": "RoBaRaCoCh"}}]}),
    );
    assert!(e.contains("nodes[1].dram.device") && e.contains("clock"), "{e}");
}

#[test]
fn policies_refuse_what_the_machine_cannot_give() {
    let base = |os: Value| json!({"machine": "tiering-2to1", "programs": ["light"], "instructions": 1000, "os": os});
    let e = sim_error(base(json!({"policy": "bpm"})));
    assert!(e.contains("os.policy") && e.contains("'bpm'") && e.contains("2 nodes") && e.contains("bw-local"), "{e}");
    let e = sim_error(base(json!({"policy": "dram-only", "dram-only": {"nodes": [2]}})));
    assert!(e.contains("os.dram-only.nodes[0]") && e.contains("node 2 does not exist"), "{e}");
    let e = sim_error(base(json!({"policy": "weighted-interleave", "weighted-interleave": {"weights": [2, 0]}})));
    assert!(e.contains("os.weighted-interleave.weights") && e.contains("weight 1 is 0"), "{e}");
    let e = sim_error(base(json!({"policy": "weighted-interleave", "weighted-interleave": {"weights": [2, 1, 1]}})));
    assert!(e.contains("os.weighted-interleave.weights") && e.contains("3 weights for 2 nodes"), "{e}");
    let e = sim_error(base(json!({"policy": "bw-interleave", "bw-interleave": {"weights": [2]}})));
    assert!(e.contains("os.bw-interleave.weights") && e.contains("1 weights for 2 memory clusters"), "{e}");
    let mut memory_less = base(json!({"policy": "dram-only", "dram-only": {"nodes": [1]}}));
    memory_less["overrides"] = json!({"nodes": [{"cores": 4}, {"cores": 4, "memory": false}], "links": {"latency_ns": [[0, 50], [50, 0]]}});
    let e = sim_error(memory_less);
    assert!(e.contains("os.dram-only.nodes[0]") && e.contains("node 1 has no memory"), "{e}");
}
