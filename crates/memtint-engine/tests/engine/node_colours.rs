//! Colours within nodes (docs/numa.md "Colours within nodes"): CAMC and TintMalloc on the Pan
//! thesis's Opteron 6128, checked page by page against the physical address bits, the isolation
//! invariants of pan-camc-tintmalloc-refresh.md §9.2 (b)3: diff_bank gives no two tasks a bank,
//! diff_controller no two a controller, TintMalloc no two threads an LLC colour, and every page a
//! coloured task touches has one of its colours.

use memtint_engine::config::{MachineConfig, MemoryConfig};
use memtint_engine::multicore::sim_spec::run_sim;
use memtint_engine::os::placement::ThreadPlace;
use memtint_engine::os::{OsConfig, OsModel};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

fn opteron() -> MemoryConfig {
    MemoryConfig::resolve(&MachineConfig::load("opteron-6128").unwrap()).unwrap()
}

/// The OS model of `threads` (process, core) under `os` on the Opteron, with its LLC's set bits.
fn os_model(os: Value, threads: &[(u32, u32)]) -> Result<OsModel, String> {
    let cfg = opteron();
    let os: OsConfig = serde_json::from_value(os).unwrap();
    let places: Vec<ThreadPlace> = threads.iter().map(|&(process, core)| ThreadPlace { process, core }).collect();
    let processes = threads.iter().map(|t| t.0 + 1).max().unwrap();
    // 8 MiB, 16 ways, 64 B lines: sets indexed by b6-b18.
    OsModel::with_nodes(&os, &cfg.mapping, 6..19, processes, cfg.machine.cpu.cores, cfg.node_layout(), &places).map_err(|e| e.to_string())
}

/// Where a page went on the Opteron (4 GiB per node; bank b15, b16, b18; LLC colour b12-b18).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Page {
    node: u64,
    bank: u64,
    llc: u64,
}

fn page(phys: u64) -> Page {
    let bit = |b: u32| phys >> b & 1;
    Page { node: phys >> 32, bank: bit(15) | bit(16) << 1 | bit(18) << 2, llc: phys >> 12 & 0x7f }
}

/// `n` first touches by each thread (thread t of process p on core c touches its own pages).
fn touch(os: &mut OsModel, threads: &[(u32, u32)], n: u64) -> Vec<Vec<Page>> {
    threads
        .iter()
        .enumerate()
        .map(|(t, &(p, core))| {
            let base = (t as u64 + 1) << 32;
            (0..n).map(|i| page(os.translate_thread(p, t as u32, core, base + i * 4096 + 64).unwrap())).collect()
        })
        .collect()
}

fn set<T: Ord + Copy>(v: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    v.into_iter().collect()
}

/// One task on core 0 of each node, the thesis's diff_controller layout (cores 0, 4, 8, 12).
const ONE_PER_NODE: [(u32, u32); 4] = [(0, 0), (1, 4), (2, 8), (3, 12)];
/// Four tasks on node 0's cores.
const FOUR_ON_NODE_0: [(u32, u32); 4] = [(0, 0), (1, 1), (2, 2), (3, 3)];

#[test]
fn camc_gives_each_task_a_private_bank_on_its_own_node() {
    let mut os = os_model(json!({"policy": "camc"}), &ONE_PER_NODE).unwrap();
    let pages = touch(&mut os, &ONE_PER_NODE, 2000);
    for (t, ps) in pages.iter().enumerate() {
        // Every page on the task's own node, in its one colour (the thesis's default).
        // "spread": each node's first task another bank index, so other LLC sets (b15, b16, b18).
        assert_eq!(set(ps.iter().map(|p| (p.node, p.bank))), set([(t as u64, t as u64)]), "task {t}");
        assert_eq!(os.process_placement(t as u32).colours, vec![9 * t as u32], "colours are node-major");
    }
    // "lowest": the thesis's "banks 0, 32, 64, 96", bank 0 of each node (2 ch x 2 ranks x 8 banks).
    let mut os = os_model(json!({"policy": "camc", "camc": {"choose": "lowest"}}), &ONE_PER_NODE).unwrap();
    let pages = touch(&mut os, &ONE_PER_NODE, 500);
    assert!(pages.iter().enumerate().all(|(t, ps)| ps.iter().all(|p| p.node == t as u64 && p.bank == 0)));
    let banks: Vec<u32> = (0..4).map(|t| os.process_placement(t).banks_used[0]).collect();
    assert_eq!(banks, vec![0, 32, 64, 96]);
    // Four tasks on one node: private banks of that node (diff_bank under the default).
    let mut os = os_model(json!({"policy": "camc"}), &FOUR_ON_NODE_0).unwrap();
    let pages = touch(&mut os, &FOUR_ON_NODE_0, 2000);
    let per_task: Vec<BTreeSet<Page>> = pages.iter().map(|ps| set(ps.iter().map(|p| Page { llc: 0, ..*p }))).collect();
    for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
        assert!(per_task[a].is_disjoint(&per_task[b]), "tasks {a} and {b} share a bank");
    }
    assert!(pages.iter().flatten().all(|p| p.node == 0));
}

#[test]
fn camc_fixed_colours_give_the_thesis_same_bank_diff_bank_and_diff_controller() {
    let banks_of = |os: Value, threads: &[(u32, u32)]| {
        let mut os = os_model(os, threads).unwrap();
        touch(&mut os, threads, 1000).iter().map(|ps| set(ps.iter().map(|p| (p.node, p.bank)))).collect::<Vec<_>>()
    };
    let same = banks_of(json!({"policy": "camc", "colours": [[0]], "groups": [0, 0, 0, 0]}), &FOUR_ON_NODE_0);
    assert!(same.iter().all(|s| *s == set([(0, 0)])), "{same:?}");
    let diff_bank = banks_of(json!({"policy": "camc", "colours": [[0], [1], [2], [3]]}), &FOUR_ON_NODE_0);
    assert_eq!(diff_bank, (0..4).map(|b| set([(0, b)])).collect::<Vec<_>>());
    // diff_controller: each task's bank on another node, wherever its core is.
    let diff_controller = banks_of(json!({"policy": "camc", "colours": [[0], [8], [16], [24]]}), &FOUR_ON_NODE_0);
    assert_eq!(diff_controller, (0..4).map(|n| set([(n, 0)])).collect::<Vec<_>>());
}

#[test]
fn camc_gives_a_task_another_colour_when_its_colours_fill() {
    // 4 GiB of node 0 in 8 colours: 131072 frames per colour. Fill colour 0, then more.
    let mut os = os_model(json!({"policy": "camc"}), &[(0, 0)]).unwrap();
    let pages = &touch(&mut os, &[(0, 0)], 131072 + 100)[0];
    assert!(pages[..131072].iter().all(|p| p.node == 0 && p.bank == 0));
    assert!(pages[131072..].iter().all(|p| p.node == 0 && p.bank == 1), "the next colour of its own node");
    let placement = os.process_placement(0);
    assert_eq!((placement.colours, placement.colour_overflow_pages), (vec![0, 1], 0));
    // Fixed colours do not grow: the overflow is borrowed and counted, or with strict an error.
    let mut os = os_model(json!({"policy": "camc", "colours": [[3]]}), &[(0, 0)]).unwrap();
    touch(&mut os, &[(0, 0)], 131072 + 10);
    assert_eq!(os.process_placement(0).colour_overflow_pages, 10);
    let mut os = os_model(json!({"policy": "camc", "colours": [[3]], "strict": true}), &[(0, 0)]).unwrap();
    let base = 1u64 << 32;
    for i in 0..131072 {
        os.translate_thread(0, 0, 0, base + i * 4096).unwrap();
    }
    let e = os.translate_thread(0, 0, 0, base + 131072 * 4096).unwrap_err().to_string();
    assert!(e.contains("os.colours") && e.contains("process 0") && e.contains("no free frame"), "{e}");
}

#[test]
fn tintmalloc_gives_16_threads_their_node_private_banks_and_private_llc_colours() {
    let threads: Vec<(u32, u32)> = (0..16).map(|t| (t, t)).collect();
    let mut os = os_model(json!({"policy": "tintmalloc"}), &threads).unwrap();
    let pages = touch(&mut os, &threads, 1500);
    let mut llc_owner: HashMap<u64, usize> = HashMap::new();
    let mut bank_owner: HashMap<(u64, u64), usize> = HashMap::new();
    for (t, ps) in pages.iter().enumerate() {
        assert!(ps.iter().all(|p| p.node == t as u64 / 4), "thread {t} off its node");
        for p in ps {
            assert_eq!(*llc_owner.entry(p.llc).or_insert(t), t, "LLC colour {} shared", p.llc);
            assert_eq!(*bank_owner.entry((p.node, p.bank)).or_insert(t), t, "bank {p:?} shared");
        }
        // 8 banks over a node's 4 threads, 128 LLC colours over 16 threads.
        assert_eq!(set(ps.iter().map(|p| p.bank)).len(), 2, "thread {t}");
        assert_eq!(set(ps.iter().map(|p| p.llc)).len(), 8, "thread {t}");
        assert_eq!(os.process_placement(t as u32).colour_overflow_pages, 0);
    }
    // MEM only (LLC shared) and MEM+LLC(part) (4 threads per LLC group).
    let mut os = os_model(json!({"policy": "tintmalloc", "tintmalloc": {"llc_sharers": 0}}), &threads).unwrap();
    let pages = touch(&mut os, &threads, 1500);
    assert!(pages.iter().all(|ps| set(ps.iter().map(|p| p.llc)).len() == 32), "two banks' worth of LLC colours each");
    let mut os = os_model(json!({"policy": "tintmalloc", "tintmalloc": {"llc_sharers": 4, "bank_sharers": 0}}), &threads).unwrap();
    let pages = touch(&mut os, &threads, 1500);
    let group: Vec<BTreeSet<u64>> = pages.iter().map(|ps| set(ps.iter().map(|p| p.llc))).collect();
    assert_eq!(group[0], group[3]);
    assert!(group[0].is_disjoint(&group[4]));
}

/// Node-unaware colouring (BPM on a NUMA machine, the thesis's baseline): bank colours split
/// over the machine's threads, each thread's pages on every node in turn.
#[test]
fn tintmalloc_with_interleaved_nodes_colours_banks_but_spreads_pages_over_all_nodes() {
    let threads: Vec<(u32, u32)> = (0..16).map(|t| (t, t)).collect();
    let os = json!({"policy": "tintmalloc", "tintmalloc": {"nodes": "interleave", "bank_sharers": 2}});
    let mut m = os_model(os, &threads).unwrap();
    let pages = touch(&mut m, &threads, 400);
    let mut bank_users: HashMap<u64, BTreeSet<usize>> = HashMap::new();
    for (t, ps) in pages.iter().enumerate() {
        // Every node in turn: 100 pages on each of the 4.
        for n in 0..4 {
            assert_eq!(ps.iter().filter(|p| p.node == n).count(), 100, "thread {t} node {n}");
        }
        // One bank index of 8 (16 threads in 8 pairs), the same on every node.
        let banks = set(ps.iter().map(|p| p.bank));
        assert_eq!(banks.len(), 1, "thread {t}: {banks:?}");
        bank_users.entry(*banks.first().unwrap()).or_default().insert(t);
        assert_eq!(m.process_placement(t as u32).colour_overflow_pages, 0);
    }
    assert_eq!(bank_users.len(), 8);
    assert!(bank_users.values().all(|u| u.len() == 2), "{bank_users:?}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"nodes": "interleave"}}), &threads);
    assert!(e.contains("os.tintmalloc.bank_sharers") && e.contains("the machine") && e.contains("16 threads"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"nodes": "interleave", "threads": [{"node": 1}]}}), &[(0, 0)]);
    assert!(e.contains("os.tintmalloc.threads[0].node") && e.contains("interleave"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"nodes": "remote"}}), &[(0, 0)]);
    assert!(e.contains("nodes") && e.contains("interleave"), "{e}");
}

#[test]
fn tintmalloc_takes_each_threads_colours_from_the_workload_description() {
    let threads = [(0, 0), (0, 1)];
    let os = json!({"policy": "tintmalloc", "tintmalloc": {"threads": [
        {"node": 2, "banks": [5], "llc": [72, 73, 5]},
        {"banks": [1, 2]},
    ]}});
    let mut m = os_model(os, &threads).unwrap();
    let pages = touch(&mut m, &threads, 500);
    // Bank 5 is b15 and b18 set, b16 clear: of the LLC colours (b12-b18) given, 72 and 73 agree, 5 does not.
    assert_eq!(set(pages[0].iter().map(|p| (p.node, p.bank, p.llc))), set([(2, 5, 72), (2, 5, 73)]));
    assert!(pages[1].iter().all(|p| p.node == 0 && (p.bank == 1 || p.bank == 2)));
}

fn model_error(os: Value, threads: &[(u32, u32)]) -> String {
    match os_model(os, threads) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn bad_node_colours_are_errors_naming_the_key() {
    let e = model_error(json!({"policy": "camc", "colours": [[32]]}), &[(0, 0)]);
    assert!(e.contains("os.colours[0][0]") && e.contains("colours 0-31"), "{e}");
    let e = model_error(json!({"policy": "camc", "colours": [[1], [1]]}), &[(0, 0), (1, 1)]);
    assert!(e.contains("os.colours[1][0]") && e.contains("also in set 0"), "{e}");
    let e = model_error(json!({"policy": "camc", "camc": {"colours_per_task": 9}}), &ONE_PER_NODE);
    assert!(e.contains("os.camc.colours_per_task") && e.contains("process 3"), "{e}");
    let e = model_error(json!({"policy": "camc", "camc": {"choose": "highest"}}), &[(0, 0)]);
    assert!(e.contains("os.camc.choose") && e.contains("spread or lowest"), "{e}");
    let e = model_error(json!({"policy": "camc", "camc": {"colours_per_task": 0}}), &[(0, 0)]);
    assert!(e.contains("colours_per_task") && e.contains("between 1"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"threads": [{}]}}), &[(0, 0), (0, 1)]);
    assert!(e.contains("os.tintmalloc.threads") && e.contains("1 threads") && e.contains("has 2"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"threads": [{"node": 4}]}}), &[(0, 0)]);
    assert!(e.contains("os.tintmalloc.threads[0].node") && e.contains("node 4 does not exist"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"threads": [{"banks": [0, 8]}]}}), &[(0, 0)]);
    assert!(e.contains("os.tintmalloc.threads[0].banks[1]") && e.contains("8 bank colours"), "{e}");
    let e = model_error(json!({"policy": "tintmalloc", "tintmalloc": {"threads": [{"banks": [0], "llc": [127]}]}}), &[(0, 0)]);
    assert!(e.contains("thread 0") && e.contains("share no page frame"), "{e}");
    let nine: Vec<(u32, u32)> = (0..9).map(|t| (t, t % 4)).collect();
    let e = model_error(json!({"policy": "tintmalloc"}), &nine);
    assert!(e.contains("os.tintmalloc.bank_sharers") && e.contains("node 0 has 9 threads"), "{e}");
}

fn sim(spec: Value) -> Result<Value, String> {
    run_sim(&serde_json::from_value(spec).unwrap()).map_err(|e| e.to_string())
}

#[test]
fn node_colours_run_end_to_end_and_refuse_nodes_with_other_mappings() {
    let procs: Vec<Value> =
        (0..4).map(|p| json!({"threads": [{"program": "random:footprint_bytes=2097152", "affinity": [4 * p]}]})).collect();
    let r = sim(json!({"machine": "opteron-6128", "programs": [], "processes": procs, "instructions": 5000, "check": true,
        "os": {"policy": "camc"}}))
    .unwrap();
    for p in 0..4 {
        let pages: Vec<u64> = r["processes"][p]["pages_per_node"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(pages.iter().enumerate().filter(|(_, &c)| c > 0).map(|(n, _)| n).collect::<Vec<_>>(), vec![p], "{pages:?}");
        assert_eq!(r["cores"][p]["banks"], json!([33 * p, 33 * p + 8, 33 * p + 16, 33 * p + 24]));
    }
    let mut spec = json!({"machine": "tiering-2to1", "programs": ["light"], "instructions": 1000, "os": {"policy": "camc"}});
    spec["overrides"] = json!({"nodes": [{"cores": 4}, {"cores": 4, "dram": {"device": "ddr4-2400", "density_gbit": 8, "channels": 1, "ranks": 1, "mapping": "RoBaRaCoCh"}}]});
    let e = sim(spec).unwrap_err();
    assert!(e.contains("os.policy") && e.contains("node 1's mapping") && e.contains("camc"), "{e}");
}
