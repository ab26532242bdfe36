//! Processes with several threads under the per-core CFS, CCPS binding and regions, and MCP
//! (issue 6, tests 2 and 4; ccps.md test cases A1-A2).

use memtint_engine::multicore::{run_sim, SimSpec};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn spec(v: Value) -> SimSpec {
    serde_json::from_value(v).expect("spec parses")
}

fn run(v: Value) -> Value {
    run_sim(&spec(v)).expect("the run succeeds")
}

fn err(v: Value) -> String {
    run_sim(&spec(v)).expect_err("the run must fail").to_string()
}

/// The error of a spec given as JSON text, as the Python extension gives it.
fn json_err(v: Value) -> String {
    memtint_engine::multicore::run_sim_json(&v.to_string()).expect_err("the spec must be refused").to_string()
}

/// Small time slices so that short runs see many switches.
fn fast_sched() -> Value {
    json!({"latency_cycles": 100000, "min_granularity_cycles": 12500, "balance_period_cycles": 50000})
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn one_thread_per_core_processes_equal_the_program_list() {
    let programs = ["stream", "light", "random", "copy"];
    let a = run(json!({"machine": "i7-860", "programs": programs, "instructions": 100000}));
    let procs: Vec<Value> = programs.iter().enumerate().map(|(i, p)| json!({"threads": [{"program": p, "affinity": [i]}]})).collect();
    let b = run(json!({"machine": "i7-860", "processes": procs, "instructions": 100000}));
    for i in 0..4 {
        for key in ["instructions", "cycles", "dram_reads", "row_hits", "llc_misses", "pages"] {
            assert_eq!(a["cores"][i][key], b["cores"][i][key], "core {i} {key}");
        }
        assert_eq!(u(&b["cores"][i]["context_switches"]), 0);
    }
    assert_eq!(a["dram_cycles"], b["dram_cycles"]);
    assert_eq!(u(&b["scheduling"]["context_switches"]), 0);
}

#[test]
fn eight_threads_on_four_cores_get_their_fair_share_and_switch_once_per_slice() {
    let threads: Vec<&str> = vec!["light", "stream", "light", "random", "light", "copy", "light", "stream"];
    let procs: Vec<Value> = threads.iter().map(|t| json!({"threads": [t]})).collect();
    let s = run(json!({
        "machine": "i7-860", "processes": procs, "instructions": 400000,
        "os": {"sched": fast_sched()},
    }));
    let wall = u(&s["core_cycles"]) as f64;
    let fair = wall * 4.0 / 8.0;
    // Two threads per core: each slice is latency / 2.
    let slice = 50000.0;
    let mut total_switches = 0;
    for i in 0..8 {
        let c = &s["cores"][i];
        let run_cycles = u(&c["run_cycles"]) as f64;
        assert!(run_cycles > 0.5 * fair && run_cycles < 2.0 * fair, "thread {i}: {run_cycles} cycles on a core, fair share {fair}");
        let switches = u(&c["context_switches"]) as f64;
        let expected = run_cycles / slice;
        assert!(
            switches >= 0.5 * expected - 1.0 && switches <= 1.5 * expected + 1.0,
            "thread {i}: {switches} switches in {run_cycles} cycles, ~{expected} expected"
        );
        total_switches += u(&c["context_switches"]);
        assert_eq!(u(&c["instructions"]), 400000);
        assert!(u(&c["core_stats"]["drain_cycles"]) > 0, "thread {i}: a switched-out window drains");
    }
    assert_eq!(u(&s["scheduling"]["context_switches"]), total_switches);
    assert_eq!(s["processes"].as_array().unwrap().len(), 8);
}

#[test]
fn affinity_is_respected_even_with_load_balancing() {
    let procs = json!([
        {"threads": ["stream", "light", "light"], "affinity": [1, 2]},
        {"threads": [{"program": "random", "affinity": [3]}, "light"]},
    ]);
    let s = run(json!({
        "machine": "i7-860", "processes": procs, "instructions": 150000,
        "os": {"sched": {"load_balance": true, "latency_cycles": 100000, "min_granularity_cycles": 12500, "balance_period_cycles": 20000}},
    }));
    for i in 0..3 {
        for k in ["first_core", "last_core"] {
            let c = u(&s["cores"][i][k]);
            assert!(c == 1 || c == 2, "thread {i} {k} = {c}, affinity [1, 2]");
        }
    }
    assert_eq!(u(&s["cores"][3]["first_core"]), 3);
    assert_eq!(u(&s["cores"][3]["last_core"]), 3);
}

fn crowded(load_balance: bool) -> Value {
    // CCPS binding puts the first five threads of one process on core 0 (Δ = 5), the sixth on core 1.
    run(json!({
        "machine": "i7-860",
        "processes": [{"threads": ["light", "light", "light", "light", "light", "light"]}],
        "instructions": 150000,
        "os": {"sched": {"binding": "ccps", "load_balance": load_balance,
                          "latency_cycles": 100000, "min_granularity_cycles": 12500, "balance_period_cycles": 50000}},
    }))
}

#[test]
fn load_balancing_moves_threads_only_when_on_and_imbalanced() {
    let off = crowded(false);
    let on = crowded(true);
    let first: Vec<u64> = (0..6).map(|i| u(&off["cores"][i]["first_core"])).collect();
    assert_eq!(first, vec![0, 0, 0, 0, 0, 1]);
    assert_eq!(u(&off["scheduling"]["migrations"]), 0);
    for i in 0..6 {
        assert_eq!(off["cores"][i]["first_core"], off["cores"][i]["last_core"]);
    }
    assert!(u(&on["scheduling"]["migrations"]) >= 2, "5-1-0-0 is imbalanced: {}", on["scheduling"]);
    let cores: BTreeSet<u64> = (0..6).map(|i| u(&on["cores"][i]["last_core"])).collect();
    assert!(cores.len() >= 3, "balanced threads spread over the cores: {cores:?}");
    // Balanced from the start (least-loaded binding): nothing moves.
    let even = run(json!({
        "machine": "i7-860",
        "processes": [{"threads": ["light", "light", "light", "light", "light", "light", "light", "light"]}],
        "instructions": 100000,
        "os": {"sched": {"load_balance": true, "latency_cycles": 100000, "min_granularity_cycles": 12500, "balance_period_cycles": 20000}},
    }));
    assert_eq!(u(&even["scheduling"]["migrations"]), 0);
}

fn strip_wall(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        for k in ["wall_seconds", "requests_per_second", "instructions_per_second"] {
            o.remove(k);
        }
        if let Some(d) = o.get_mut("dram").and_then(|d| d.as_object_mut()) {
            for k in ["wall_seconds", "requests_per_second", "simulated_seconds_per_wall_second"] {
                d.remove(k);
            }
        }
    }
}

#[test]
fn time_shared_runs_are_deterministic() {
    let v = json!({
        "machine": "i7-860",
        "processes": [{"threads": ["stream", "light", "random"]}, {"threads": ["copy", "light", "light"]}],
        "instructions": 100000,
        "os": {"sched": fast_sched()},
    });
    let mut a = run(v.clone());
    let mut b = run(v);
    strip_wall(&mut a);
    strip_wall(&mut b);
    assert_eq!(a["cores"], b["cores"]);
    assert_eq!(a["scheduling"], b["scheduling"]);
    assert_eq!(a["dram_cycles"], b["dram_cycles"]);
}

#[test]
fn thread_errors_are_clear() {
    let m = |procs: Value| json!({"machine": "i7-860", "processes": procs, "instructions": 1000});
    // Affinities and programs are named where the run file gives them, so its line can be found.
    let e = err(m(json!([{"threads": ["light"]}, {"threads": ["light", {"program": "light", "affinity": [7]}]}])));
    assert!(e.contains("processes[1].threads[1].affinity: names core 7, but the machine has cores 0-3"), "{e}");
    let e = err(m(json!([{"threads": ["light"], "affinity": [0]}, {"threads": ["light"], "affinity": [1, 4]}])));
    assert!(e.contains("processes[1].affinity: names core 4, but"), "{e}");
    let e = err(m(json!([{"threads": ["light"], "affinity": []}])));
    assert!(e.contains("processes[0].affinity: is empty"), "{e}");
    let e = err(m(json!([{"threads": ["light"]}, {"threads": ["light", "phases:stream@0+light"]}])));
    assert!(e.contains("processes[1].threads[1]: phases: part 1"), "{e}");
    let e = err(json!({"machine": "i7-860", "programs": ["light", "stream:reads_pki=-1"], "instructions": 1000}));
    assert!(e.contains("programs[1]: workload.stream.reads_pki: must be"), "{e}");
    // A phase's own program error says its kind once.
    let e = err(json!({"machine": "i7-860", "programs": ["phases:stream:reads_pki=-1@100+light"], "instructions": 1000}));
    assert!(e.contains("programs[0]: phases: part 1 ('stream:reads_pki=-1@100'): workload.stream.reads_pki: must be"), "{e}");
    assert_eq!(e.matches("invalid configuration").count(), 1, "{e}");
    let e = err(m(json!([{"threads": []}])));
    assert!(e.contains("at least one thread"), "{e}");
    let e = err(m(json!([])));
    assert!(e.contains("at least one process"), "{e}");
    let e = err(m(json!([{"name": "x", "threads": ["light"]}, {"threads": ["light"]}, {"name": "x", "threads": ["light"]}])));
    assert!(e.contains("processes[2].name") && e.contains("\"x\" is also process 0's name"), "{e}");
    let e = err(m(json!([{"threads": ["light"]}, {"name": "", "threads": ["light"]}])));
    assert!(e.contains("processes[1].name: is empty"), "{e}");
    let e = err(m(json!([{"threads": ["light"], "nice": 25}])));
    assert!(e.contains("processes[0].nice: must be between -20 and 19, got 25"), "{e}");
    let e = json_err(m(json!([{"threads": ["light", {"program": "light", "afinity": [0]}]}])));
    assert!(e.contains("processes[0].threads[1]: unknown field `afinity`"), "{e}");
    let e = json_err(m(json!([{"threads": [{"program": "light", "affinity": [-1]}]}])));
    assert!(
        e.contains("processes[0].threads[0].affinity[0]: invalid value: integer `-1`, expected a whole number from 0 to 4294967295"),
        "{e}"
    );
    let e = json_err(m(json!([{"threads": [3]}])));
    assert!(e.contains("processes[0].threads[0]") && e.contains("a program (profile name or trace path) or a table"), "{e}");
    let e = err(json!({"machine": "i7-860", "programs": ["light"], "processes": [{"threads": ["light"]}], "instructions": 1000}));
    assert!(e.contains("not both"), "{e}");
    // More processes than colours: bank-only has 4 colours on the i7-860.
    let procs: Vec<Value> = (0..6).map(|_| json!({"threads": ["light"]})).collect();
    let e = err(json!({"machine": "i7-860", "processes": procs, "instructions": 1000, "os": {"policy": "bank-only", "strict": true}}));
    assert!(e.contains("only 4"), "{e}");
    let e = err(json!({
        "machine": "i7-860", "processes": [{"threads": ["light"]}], "instructions": 1000,
        "os": {"sched": {"binding": "fastest"}}}));
    assert!(e.contains("binding"), "{e}");
}

// ---- CCPS: regions (A2) and binding in a run (A1) ----

fn ccps_run(machine: &str, programs: Value) -> Value {
    run(json!({
        "machine": machine, "programs": programs, "instructions": 50000,
        "os": {"policy": "ccps"},
    }))
}

fn banks(v: &Value) -> BTreeSet<u64> {
    v["banks"].as_array().unwrap().iter().map(u).collect()
}

#[test]
fn ccps_pages_stay_in_their_cores_channel_and_bank_group() {
    let programs: Vec<&str> = vec!["stream", "light", "random", "copy", "light", "stream", "light", "random"];
    for (machine, banks_per_channel) in [("ccps-8c-64b", 16), ("ccps-8c-256b", 64)] {
        let s = ccps_run(machine, json!(programs));
        assert_eq!(u(&s["spilled_pages"]), 0);
        for c in 0..8 {
            let core = &s["cores"][c];
            assert_eq!(core["channels"], json!([c % 4]), "{machine} core {c}");
            assert!(u(&core["pages"]) > 0);
            // 16 banks per core (ccps.md §2.2).
            assert!(banks(core).len() <= 16, "{machine} core {c}: {} banks", banks(core).len());
        }
        // Cores 0 and 4 share channel 0: the same 16 banks with 64 banks, disjoint with 256.
        let (b0, b4) = (banks(&s["cores"][0]), banks(&s["cores"][4]));
        if banks_per_channel == 16 {
            assert!(!b0.is_disjoint(&b4), "{machine}: cores 0 and 4 share their banks");
        } else {
            assert!(b0.is_disjoint(&b4), "{machine}: cores 0 and 4 have disjoint bank groups: {b0:?} {b4:?}");
        }
    }
}

#[test]
fn ccps_binds_siblings_together_and_their_pages_follow_the_core() {
    // One 7-thread process on 4 cores: threads 0-4 on core 0, 5-6 on core 1 (Δ = 5).
    let s = run(json!({
        "machine": "ccps-4c-64b",
        "processes": [{"threads": ["light", "light", "light", "light", "light", "random", "random"]}],
        "instructions": 50000,
        "os": {"policy": "ccps", "sched": fast_sched()},
    }));
    let first: Vec<u64> = (0..7).map(|i| u(&s["cores"][i]["first_core"])).collect();
    assert_eq!(first, vec![0, 0, 0, 0, 0, 1, 1]);
    assert_eq!(s["scheduling"]["load_balance"], json!(false));
    assert_eq!(u(&s["scheduling"]["migrations"]), 0);
    // The process's pages lie in channels 0 and 1 only.
    let ch: BTreeSet<u64> = s["cores"][0]["channels"].as_array().unwrap().iter().map(u).collect();
    assert!(ch.is_subset(&BTreeSet::from([0, 1])), "{ch:?}");
    // Context switches between threads of one address space only.
    assert!(u(&s["scheduling"]["context_switches"]) > 0);
    assert_eq!(s["scheduling"]["same_process_switches"], s["scheduling"]["context_switches"]);
}

#[test]
fn ccps_needs_page_controllable_channels() {
    let e = err(json!({"machine": "i7-860", "programs": ["light"], "instructions": 1000, "os": {"policy": "ccps"}}));
    assert!(e.contains("ccps") && e.contains("channel"), "{e}");
}

// ---- MCP ----

#[test]
fn mcp_separates_intensive_and_light_applications_by_channel() {
    let profiles = json!([
        {"mpki": 30.0, "rbh": 0.9}, {"mpki": 0.2, "rbh": 0.5},
        {"mpki": 0.3, "rbh": 0.5}, {"mpki": 25.0, "rbh": 0.2},
    ]);
    let s = run(json!({
        "machine": "ccps-4c-64b", "programs": ["stream", "light", "light", "random"], "instructions": 50000,
        "os": {"policy": "mcp", "profiles": profiles},
    }));
    let ch = |i: usize| -> BTreeSet<u64> { s["cores"][i]["channels"].as_array().unwrap().iter().map(u).collect() };
    let light: BTreeSet<u64> = ch(1).union(&ch(2)).copied().collect();
    for heavy in [0, 3] {
        assert!(ch(heavy).is_disjoint(&light), "heavy {heavy} on {:?}, light on {light:?}", ch(heavy));
    }
    // High RBH and low RBH heavy applications are in different groups, too.
    assert!(ch(0).is_disjoint(&ch(3)));
    // IMPS interleaves the very light applications over every channel.
    let s = run(json!({
        "machine": "ccps-4c-64b", "programs": ["stream", "light", "light", "random"], "instructions": 50000,
        "os": {"policy": "imps", "profiles": [
            {"mpki": 30.0, "rbh": 0.9}, {"mpki": 0.2, "rbh": 0.5}, {"mpki": 0.3, "rbh": 0.5}, {"mpki": 25.0, "rbh": 0.2}]},
    }));
    assert_eq!(s["cores"][1]["channels"].as_array().unwrap().len(), 4);
    assert_eq!(s["cores"][0]["channels"].as_array().unwrap().len(), 1);
}

#[test]
fn mcp_without_profiles_says_where_they_come_from() {
    let e = err(json!({"machine": "ccps-4c-64b", "programs": ["light", "stream"], "instructions": 1000, "os": {"policy": "mcp"}}));
    assert!(e.contains("os.profiles") && e.contains("compare"), "{e}");
    let e = err(json!({"machine": "ccps-4c-64b", "programs": ["light", "stream"], "instructions": 1000,
        "os": {"policy": "mcp", "profiles": [{"mpki": 1.0, "rbh": 0.5}]}}));
    assert!(e.contains("1 profiles for 2 processes"), "{e}");
}

/// One SPMD program's threads wait at its end (`at_end = "wait"`): a thread that reached its
/// target issues nothing more, so the threads still running get the memory to themselves, and
/// the program's run time is its last thread's.
#[test]
fn threads_that_wait_at_the_end_stop_loading_memory_and_the_program_ends_with_its_last_thread() {
    let heavy = "stream:reads_pki=300,writes_pki=0";
    let light = "stream:reads_pki=30,writes_pki=0";
    let threads = json!([{"program": heavy, "affinity": [0]}, {"program": heavy, "affinity": [1]}, {"program": light, "affinity": [2]}, {"program": light, "affinity": [3]}]);
    let run_at_end = |at_end: &str| {
        run(
            json!({"machine": "i7-860", "processes": [{"threads": threads, "at_end": at_end}], "instructions": 100000, "at_end": "continue"}),
        )
    };
    let (cont, wait) = (run_at_end("continue"), run_at_end("wait"));
    let finish = |r: &Value, i: usize| u(&r["cores"][i]["finished_at"]);
    // The light threads finish first; until the first thread finishes nothing differs.
    for i in [2, 3] {
        assert!(finish(&wait, i) < finish(&wait, 0), "light thread {i} finishes first");
    }
    let first = (0..4).min_by_key(|&i| finish(&cont, i)).unwrap();
    assert_eq!(finish(&wait, first), finish(&cont, first), "the first to finish, thread {first}");
    // Afterwards the waiting threads load nothing: the others finish sooner.
    for i in [0, 1] {
        assert!(finish(&wait, i) < finish(&cont, i), "heavy thread {i}: {} waiting vs {} continuing", finish(&wait, i), finish(&cont, i));
    }
    let reads = |r: &Value| u(&r["dram"]["reads"]);
    assert!(reads(&wait) < reads(&cont), "{} reads waiting vs {} continuing", reads(&wait), reads(&cont));
    let p = &wait["processes"][0];
    let last = (0..4).map(|i| finish(&wait, i)).max().unwrap();
    let first = (0..4).map(|i| finish(&wait, i)).min().unwrap();
    assert_eq!((u(&p["run_time_cycles"]), u(&p["thread_spread_cycles"])), (last, last - first));
    // The run's default applies to processes that do not set their own.
    let by_run = run(json!({"machine": "i7-860", "processes": [{"threads": threads}], "instructions": 100000, "at_end": "wait"}));
    assert_eq!(finish(&by_run, 0), finish(&wait, 0));
    let e = json_err(json!({"machine": "i7-860", "programs": ["stream"], "instructions": 1000, "at_end": "stop"}));
    assert!(e.contains("at_end") && e.contains("wait"), "{e}");
}

/// Programs of different lengths in one run (the tiering thesis's pairs, §6.3 test 8): a
/// process's or a thread's own `instructions` is its target; the others keep the run's.
#[test]
fn each_process_or_thread_may_have_its_own_instruction_target() {
    let p = |instructions: Option<u64>, core: u32| {
        let mut v = json!({"threads": [{"program": "stream", "affinity": [core]}], "at_end": "wait"});
        if let Some(n) = instructions {
            v["instructions"] = json!(n);
        }
        v
    };
    let mut own_thread = p(None, 2);
    own_thread["threads"][0]["instructions"] = json!(15000);
    let r = run(json!({"machine": "i7-860", "processes": [p(None, 0), p(Some(40000), 1), own_thread], "instructions": 20000}));
    let done = |i: usize| u(&r["cores"][i]["instructions"]);
    assert_eq!((done(0), done(1), done(2)), (20000, 40000, 15000));
    let finish = |i: usize| u(&r["cores"][i]["finished_at"]);
    assert!(finish(1) > finish(0) && finish(0) > finish(2), "{} {} {}", finish(0), finish(1), finish(2));
    assert_eq!(u(&r["processes"][1]["run_time_cycles"]), finish(1));
    let e = err(json!({"machine": "i7-860", "processes": [p(None, 0), p(Some(0), 1)], "instructions": 1000}));
    assert!(e.contains("processes[1].instructions") && e.contains("at least 1"), "{e}");
    let mut zero = p(None, 0);
    zero["threads"][0]["instructions"] = json!(0);
    let e = err(json!({"machine": "i7-860", "processes": [zero], "instructions": 1000}));
    assert!(e.contains("processes[0].threads[0].instructions"), "{e}");
}

/// Barriers inside an SPMD program's run (`barrier_every`): its threads wait for each other
/// every so many instructions, so a light thread idles at every barrier instead of finishing
/// early, and the threads finish together.
#[test]
fn barriers_inside_the_run_hold_each_thread_until_all_of_its_process_get_there() {
    let heavy = "stream:reads_pki=300,writes_pki=0";
    let light = "stream:reads_pki=30,writes_pki=0";
    let threads = json!([{"program": heavy, "affinity": [0]}, {"program": heavy, "affinity": [1]}, {"program": light, "affinity": [2]}, {"program": light, "affinity": [3]}]);
    let with = |every: Option<u64>| {
        let mut p = json!({"threads": threads, "at_end": "wait"});
        if let Some(n) = every {
            p["barrier_every"] = json!(n);
        }
        run(json!({"machine": "i7-860", "processes": [p], "instructions": 100000}))
    };
    let (free, synced) = (with(None), with(Some(10000)));
    let c = |r: &Value, i: usize, k: &str| u(&r["cores"][i][k]);
    let p = &synced["processes"][0];
    assert!(free["cores"][0].get("barriers").is_none(), "runs without barriers report none");
    for i in 0..4 {
        // Barriers at 10k, 20k, ..., 90k: the target is the end, not a barrier.
        assert_eq!(c(&synced, i, "barriers"), 9, "thread {i}");
        assert_eq!(c(&synced, i, "instructions"), 100000);
        // Waiting is off the core: wall time = cycles on the core + cycles waiting.
        let on_core = u(&synced["cores"][i]["core_stats"]["cycles"]);
        let wall = c(&synced, i, "finished_at") + 1;
        assert_eq!(on_core + c(&synced, i, "barrier_wait_cycles"), wall, "thread {i}");
    }
    // The light threads wait at every barrier for the heavy ones, far longer than the heavy wait.
    let wait = |i: usize| c(&synced, i, "barrier_wait_cycles");
    assert!(wait(2).min(wait(3)) > 4 * wait(0).max(wait(1)), "waits {:?}", (0..4).map(wait).collect::<Vec<_>>());
    // Without barriers the light threads finish long before the heavy ones; with them, the
    // threads of the program finish within one interval's imbalance of each other.
    let spread = |r: &Value| u(&r["processes"][0]["thread_spread_cycles"]);
    assert!(spread(&synced) * 5 < spread(&free), "spread {} with barriers, {} without", spread(&synced), spread(&free));
    assert_eq!(u(&p["barrier_wait_cycles"]), (0..4).map(wait).sum::<u64>());
    let end = u(&p["run_time_cycles"]);
    let at_end: u64 = (0..4).map(|i| end - c(&synced, i, "finished_at")).sum();
    assert_eq!(u(&p["barrier_idle_cycles"]), u(&p["barrier_wait_cycles"]) + at_end);
    // Deterministic; the run's default applies to processes without their own.
    let by_run = run(
        json!({"machine": "i7-860", "processes": [{"threads": threads, "at_end": "wait"}], "instructions": 100000, "barrier_every": 10000}),
    );
    for i in 0..4 {
        assert_eq!(c(&by_run, i, "finished_at"), c(&synced, i, "finished_at"));
        assert_eq!(c(&by_run, i, "barrier_wait_cycles"), wait(i));
    }
}

/// A thread past its target takes no further part: its process's other threads pass their
/// later barriers without it (no deadlock with threads of different lengths).
#[test]
fn a_thread_at_its_target_leaves_its_process_barriers() {
    let t = |n: u64, core: u32| json!({"program": "stream:reads_pki=100", "affinity": [core], "instructions": n});
    let r =
        run(json!({"machine": "i7-860", "processes": [{"threads": [t(20000, 0), t(50000, 1)], "barrier_every": 10000, "at_end": "wait"}],
                        "instructions": 1000}));
    assert_eq!((u(&r["cores"][0]["barriers"]), u(&r["cores"][1]["barriers"])), (1, 4));
    assert_eq!(u(&r["cores"][1]["instructions"]), 50000);
}

/// The run's `barrier_every` makes the run one SPMD job: its single-threaded processes (threads
/// with private data) wait for each other; a process's own synchronises only its threads.
#[test]
fn the_runs_barriers_span_its_processes_and_a_processs_own_only_its_threads() {
    let heavy = "stream:reads_pki=300,writes_pki=0";
    let light = "stream:reads_pki=30,writes_pki=0";
    let job =
        run(json!({"machine": "i7-860", "programs": [heavy, light], "instructions": 50000, "barrier_every": 10000, "at_end": "wait"}));
    assert_eq!((u(&job["cores"][0]["barriers"]), u(&job["cores"][1]["barriers"])), (4, 4));
    assert!(u(&job["cores"][1]["barrier_wait_cycles"]) > u(&job["cores"][0]["barrier_wait_cycles"]));
    let own = |p: &str, core: u32| json!({"threads": [{"program": p, "affinity": [core]}, {"program": light, "affinity": [core + 1]}], "barrier_every": 10000});
    let two = run(json!({"machine": "i7-860", "processes": [own(heavy, 0), own(light, 2)], "instructions": 50000, "at_end": "wait"}));
    // Process 0's light thread waits for its heavy one; process 1's two light threads wait for
    // nobody but each other.
    let waited = |i: usize| u(&two["cores"][i]["barrier_wait_cycles"]);
    assert!(waited(1) > 2 * waited(2).max(waited(3)), "{:?}", (0..4).map(waited).collect::<Vec<_>>());
}

#[test]
fn barrier_errors_are_clear() {
    let threads = json!(["stream", "stream"]);
    let e = err(json!({"machine": "i7-860", "processes": [{"threads": threads, "barrier_every": 0}], "instructions": 1000}));
    assert!(e.contains("processes[0].barrier_every") && e.contains("at least 1"), "{e}");
    let e = err(json!({"machine": "i7-860", "processes": [{"threads": threads}], "barrier_every": 0, "instructions": 1000}));
    assert!(e.contains("barrier_every") && e.contains("at least 1"), "{e}");
    let five = json!(["stream", "stream", "stream", "stream", "stream"]);
    let e = err(json!({"machine": "i7-860", "processes": [{"threads": five, "barrier_every": 100}], "instructions": 1000}));
    assert!(e.contains("barrier_every") && e.contains("a core per thread") && e.contains("5 threads"), "{e}");
}

/// A thread waiting at its program's end holds its core, so one queued behind it on that core
/// would never run: five single-thread processes on four cores, one waiting, used to simulate
/// refresh for ever. Such a run is refused, by thread count and by affinity alike; with a core
/// per thread the same processes run.
#[test]
fn a_thread_waiting_at_its_end_needs_a_core_of_its_own() {
    let light = |at_end: &str, affinity: u32| json!({"threads": ["light"], "at_end": at_end, "affinity": [affinity]});
    for at_end in ["wait", "exit"] {
        let five: Vec<_> = (0..5).map(|i| json!({"threads": ["light"], "at_end": if i == 0 { at_end } else { "continue" }})).collect();
        let e = err(json!({"machine": "i7-860", "processes": five, "instructions": 1000}));
        assert!(e.contains("at_end") && e.contains(&format!("at_end = \"{at_end}\"")) && e.contains("5 threads"), "{e}");
        let pinned = json!([light(at_end, 1), light("continue", 1)]);
        let e = err(json!({"machine": "i7-860", "processes": pinned, "instructions": 1000}));
        assert!(e.contains("at_end") && e.contains("sharing one by their affinity"), "{e}");
        let apart = json!([light(at_end, 1), light("continue", 2)]);
        let r = run(json!({"machine": "i7-860", "processes": apart, "instructions": 1000}));
        assert_eq!(r["cores"].as_array().map(Vec::len), Some(2), "{r}");
    }
    // Barriers follow the same rule when affinities share a core (refused before the run, not
    // at the first switch).
    let pinned = json!([{"threads": ["light"], "affinity": [0]}, {"threads": ["light"], "affinity": [0]}]);
    let e = err(json!({"machine": "i7-860", "processes": pinned, "barrier_every": 100, "instructions": 1000}));
    assert!(e.contains("barrier_every") && e.contains("sharing one by their affinity"), "{e}");
}
