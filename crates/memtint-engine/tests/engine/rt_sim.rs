//! Real-time tasks through the simulated DRAM (rt_sim): the Pan thesis's invariants for Colored
//! Refresh and its server (`pan-camc-tintmalloc-refresh.md` §9.2(b)).

use memtint_engine::rt_sim::{run, RtRunSpec};
use serde_json::{json, Value};

/// The Table 4.4 task set (ms) with memory: random or streaming loads through each job.
fn table_4_4() -> Value {
    json!([
        {"name": "lms", "period": 20, "wcet": 4, "compute": 3.2, "loads": 4000, "pattern": "random"},
        {"name": "compress", "period": 32, "wcet": 6, "compute": 5.0, "loads": 4000, "pattern": "stream"},
        {"name": "cnt", "period": 32, "wcet": 8, "compute": 6.5, "loads": 6000, "pattern": "random"},
        {"name": "st", "period": 40, "wcet": 8, "compute": 6.5, "loads": 6000, "pattern": "stream"},
        {"name": "matmult", "period": 80, "wcet": 10, "compute": 7.5, "loads": 8000, "pattern": "random", "footprint_kb": 512},
    ])
}

fn rt(v: Value) -> Value {
    let spec: RtRunSpec = serde_json::from_value(v).unwrap();
    run(&spec).unwrap()
}

fn rt_err(v: Value) -> String {
    let spec: RtRunSpec = serde_json::from_value(v).unwrap();
    run(&spec).unwrap_err().to_string()
}

fn spec(schedule: &str, refresh: &str, density: u32) -> Value {
    json!({"machine": "ddr4-2400-8r", "schedule": schedule, "refresh": refresh, "tasks": table_4_4(),
           "overrides": {"dram": {"refresh_density_gbit": density}}})
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// (b)1: under Colored Refresh no load reaches a refreshing rank, and each task's latency and
/// run time are the no-refresh run's (the bursts share only the command bus: within 0.5 %).
/// With JEDEC's 8192 REFs per rank a burst fits its 8 ms frame up to 16 Gb; above, the thesis's
/// 8192 / ranks is what keeps it hidden.
#[test]
fn colored_refresh_hides_refresh_from_every_task() {
    for (density, refs) in [(1, 8192), (16, 8192), (64, 1024)] {
        let mut with = spec("colored", "scheme", density);
        with["refs_per_window"] = json!(refs);
        with["jedec"] = json!(refs == 8192);
        let cr = rt(with);
        let none = rt(spec("colored", "none", density));
        assert_eq!(cr["refresh_met"], 0, "{density} Gb: {}", cr["refresh_met"]);
        assert_eq!(cr["deadline_misses"], 0);
        for (a, b) in cr["tasks"].as_array().unwrap().iter().zip(none["tasks"].as_array().unwrap()) {
            let (la, lb) = (a["latency_ns"]["mean"].as_f64().unwrap(), b["latency_ns"]["mean"].as_f64().unwrap());
            assert!(close(la, lb, 0.005), "{density} Gb {}: latency {la} against {lb} without refresh", a["name"]);
            let (ea, eb) = (a["exec_mean"].as_f64().unwrap(), b["exec_mean"].as_f64().unwrap());
            assert!(close(ea, eb, 0.001), "{density} Gb {}: run time {ea} against {eb}", a["name"]);
        }
    }
    // The JEDEC count at 64 Gb: each rank's burst (16 ms) outlasts its 8 ms frame.
    assert!(rt(spec("colored", "scheme", 64))["refresh_met"].as_u64().unwrap() > 0);
}

/// (b)2 and (b)4: under auto-refresh loads meet refresh, no fewer as density grows; FGR's
/// latency is never below Colored Refresh's.
#[test]
fn auto_refresh_interference_grows_with_density_and_fgr_never_beats_colored_refresh() {
    let mut last = 0;
    for density in [1, 2, 4, 8, 16, 32, 64] {
        let auto = rt(spec("edf", "scheme", density));
        let met = auto["refresh_met"].as_u64().unwrap();
        assert!(met > 0 && met >= last, "{density} Gb: {met} loads met refresh, {last} before");
        last = met;
        if ![1, 16, 64].contains(&density) {
            continue;
        }
        let mut cr = spec("colored", "scheme", density);
        cr["refs_per_window"] = json!(1024);
        cr["jedec"] = json!(false);
        let cr = rt(cr)["latency_ns"]["mean"].as_f64().unwrap();
        for fgr in ["all-bank", "fgr2", "fgr4"] {
            let l = rt(spec("edf", fgr, density))["latency_ns"]["mean"].as_f64().unwrap();
            assert!(l >= cr, "{density} Gb {fgr}: {l} ns against colored refresh's {cr}");
        }
    }
}

/// The Colored Refresh Server: two servers, each with half the ranks, each locked while its
/// half is burst-refreshed: no load meets refresh, and no deadline is missed.
#[test]
fn the_server_keeps_loads_off_refreshing_ranks() {
    // Table 5.2 in tenths of a ms.
    let tasks = json!([
        {"name": "cnt", "period": 200, "wcet": 30, "compute": 25.0, "loads": 3000},
        {"name": "compress", "period": 100, "wcet": 12, "compute": 10.0, "loads": 1000, "pattern": "stream"},
        {"name": "lms", "period": 100, "wcet": 16, "compute": 13.0, "loads": 2000},
        {"name": "matmult", "period": 400, "wcet": 100, "compute": 85.0, "loads": 8000},
        {"name": "st", "period": 80, "wcet": 20, "compute": 17.0, "loads": 2000, "pattern": "stream"},
    ]);
    let servers = json!([
        {"tasks": ["cnt", "lms", "st"], "period": 40, "budget": 24},
        {"tasks": ["compress", "matmult"], "period": 40, "budget": 16},
    ]);
    let v = rt(json!({"machine": "ddr4-2400-8r", "schedule": "crs", "unit_us": 100.0, "tasks": tasks, "servers": servers,
                      "refs_per_window": 1024, "jedec": false, "horizon": 1280,
                      "overrides": {"dram": {"refresh_density_gbit": 8}}}));
    assert_eq!(v["refresh_met"], 0, "{}", v["refresh_met"]);
    // At its WCETs the first server's tasks ask more than its (40, 24) supply gives by t = 20 ms
    // (102 against 100.8: §8.5, the thesis's set fails its own bound narrowly).
    let first = &v["analysis"][0];
    assert_eq!(first["tasks"], "servers[0] (cnt, lms, st)", "{first}");
    assert_eq!(first["schedulable"], false, "{first}");
    assert!(first["detail"].as_str().unwrap().contains("demand 102 exceeds the least supply 100.8 at t = 200"), "{first}");
    let auto = rt(json!({"machine": "ddr4-2400-8r", "schedule": "edf", "unit_us": 100.0, "tasks": tasks, "horizon": 1280,
                         "overrides": {"dram": {"refresh_density_gbit": 8}}}));
    assert!(auto["refresh_met"].as_u64().unwrap() > 0);
    // The same tasks on the whole processor: utilisation 0.805, within EDF's bound.
    assert_eq!(auto["analysis"][0]["schedulable"], true, "{}", auto["analysis"]);
}

#[test]
fn bad_real_time_runs_are_refused_naming_the_value() {
    let mut s = spec("edf", "scheme", 8);
    s["schedule"] = json!("rms");
    assert!(rt_err(s).contains("unknown schedule 'rms'"));
    let mut s = spec("edf", "scheme", 8);
    s["refresh"] = json!("fgr8");
    assert!(rt_err(s).contains("unknown refresh 'fgr8'"));
    let s = spec("crs", "scheme", 8);
    assert!(rt_err(s).contains("two servers"));
    let mut s = spec("edf", "scheme", 8);
    s["tasks"][0]["wcet"] = json!(30);
    assert!(rt_err(s).contains("tasks[0].wcet"));
    let mut s = spec("colored", "scheme", 8);
    s["tasks"] = json!([{"name": "a", "period": 16, "wcet": 10, "compute": 1.0, "loads": 1},
                        {"name": "b", "period": 16, "wcet": 8, "compute": 1.0, "loads": 1}]);
    assert!(rt_err(s).contains("not schedulable"));
    let mut s = spec("edf", "scheme", 128);
    s["overrides"] = json!({"dram": {"refresh_density_gbit": 128}});
    assert!(rt_err(s).contains("dram.refresh_density_gbit"));
    let mut s = spec("edf", "fgr2", 8);
    s["machine"] = json!("ddr3-1600-8r");
    assert!(rt_err(s).contains("granularity"));
    // An override the run's own refresh would replace unseen.
    let mut s = spec("colored", "scheme", 8);
    s["overrides"]["controller"] = json!({"refresh": "none"});
    let e = rt_err(s);
    assert!(e.contains("overrides.controller.refresh") && e.contains("--refresh"), "{e}");
    // A task in two servers.
    let mut s = spec("crs", "scheme", 8);
    s["tasks"] = json!([{"name": "a", "period": 16, "wcet": 2, "compute": 1.0, "loads": 1},
                        {"name": "b", "period": 16, "wcet": 2, "compute": 1.0, "loads": 1}]);
    s["servers"] = json!([{"tasks": ["a", "b"], "period": 8, "budget": 3}, {"tasks": ["b"], "period": 16, "budget": 6}]);
    let e = rt_err(s.clone());
    assert!(e.contains("servers[1].tasks") && e.contains("task 'b' is in servers[0] too"), "{e}");
    s["servers"][0]["tasks"] = json!(["a", "a"]);
    s["servers"][1]["tasks"] = json!(["b"]);
    let e = rt_err(s);
    assert!(e.contains("servers[0].tasks") && e.contains("task 'a' is listed twice there"), "{e}");
    // The colour bursts' settings are named as the run's keys, not the controller's.
    let mut s = spec("colored", "scheme", 8);
    s["refs_per_window"] = json!(1024);
    let e = rt_err(s);
    assert!(e.starts_with("invalid configuration: refs_per_window:") && e.contains("jedec = false"), "{e}");
    // A sub-table the run's refresh sets (fgr2's granularity) is refused like the mode.
    let mut s = spec("edf", "fgr2", 8);
    s["overrides"]["controller"] = json!({"all-bank": {"granularity": 4}});
    let e = rt_err(s);
    assert!(e.contains("overrides.controller.all-bank.granularity"), "{e}");
}

/// A job unfinished at a deadline the horizon reaches has missed it: one task (10, 10) whose
/// jobs compute 10 units plus a 0.1-unit context switch runs its first job 0-10.1, missing at 10;
/// the second, 10.1-20.2, is unfinished at its deadline 20, the horizon.
#[test]
fn a_deadline_at_the_horizon_counts() {
    let r = rt(json!({"machine": "ddr4-2400-8r", "schedule": "edf", "refresh": "none", "unit_us": 10.0, "horizon": 20,
                      "switch_us": 1.0, "tasks": [{"name": "a", "period": 10, "wcet": 10, "compute": 10.0, "loads": 0}]}));
    assert_eq!(r["tasks"][0]["jobs"], 2, "{r}");
    assert_eq!(r["tasks"][0]["deadline_misses"], 2, "{r}");
}

/// Rate monotonic: the shorter period always runs first. A (10, 6) and B (15, 6) fill the core
/// (U = 1): EDF meets every deadline; under RM, B's first job runs 6-10 and 16-18 and misses its
/// deadline at 15, its second runs 18-20 and 26-30 and meets its deadline at 30, and A never misses.
#[test]
fn rate_monotonic_runs_the_shorter_period_first() {
    let tasks = json!([
        {"name": "A", "period": 10, "wcet": 6, "compute": 6.0, "loads": 0},
        {"name": "B", "period": 15, "wcet": 6, "compute": 6.0, "loads": 0},
    ]);
    let run = |schedule: &str| {
        rt(json!({"machine": "ddr4-2400-8r", "schedule": schedule, "unit_us": 10.0, "tasks": tasks, "horizon": 30,
                  "refresh": "none"}))
    };
    let edf = run("edf");
    assert_eq!(edf["deadline_misses"], 0);
    let rm = run("rm");
    let (a, b) = (&rm["tasks"][0], &rm["tasks"][1]);
    assert_eq!(a["deadline_misses"], 0);
    assert_eq!(b["deadline_misses"], 1, "{rm}");
    assert_eq!(b["finished"], 2);
    assert_eq!(a["jobs"], 3);
    assert_eq!(b["jobs"], 2);
    // Each job's own run time is its computation, however long it waited.
    assert!((a["exec_mean"].as_f64().unwrap() - 6.0).abs() < 1e-4, "{a}");
    assert!((b["exec_max"].as_f64().unwrap() - 6.0).abs() < 1e-4, "{b}");
    assert_eq!(rm["hyperperiods"], 1);
    assert_eq!(rm["hyperperiods_missed"], 1);
    // Response times, release to finish: A's jobs run at once (6); B's finish at 18 and 30.
    let units = |t: &Value, k: &str| t[k].as_f64().unwrap();
    assert!((units(a, "response_max") - 6.0).abs() < 1e-4, "{a}");
    assert!((units(b, "response_max") - 18.0).abs() < 1e-4, "{b}");
    assert!((units(b, "response_mean") - 16.5).abs() < 1e-4, "{b}");
}

/// A backlogged task runs its jobs in release order. Under rate monotonic, A (10, 5) takes the
/// first half of every period and leaves B (10, 8) five units per period, so B falls further
/// behind each period. Job k of B finishes when B has run 8(k + 1) units: at 18, 36, 49, 67, 80
/// and 98, six jobs in 100 units, responses 18, 26, 29, 37, 40, 48 (mean 33). In any other
/// order an older job waits for newer ones (taking a job out of the middle of the queue once
/// moved the newest into its place).
#[test]
fn a_backlogged_task_runs_its_jobs_in_release_order() {
    let r = rt(json!({"machine": "ddr4-2400-8r", "schedule": "rm", "unit_us": 10.0, "horizon": 100, "refresh": "none",
                      "tasks": [{"name": "A", "period": 10, "wcet": 5, "compute": 5.0, "loads": 0},
                                {"name": "B", "period": 10, "wcet": 8, "compute": 8.0, "loads": 0}]}));
    let (a, b) = (&r["tasks"][0], &r["tasks"][1]);
    let units = |t: &Value, k: &str| t[k].as_f64().unwrap();
    assert_eq!((a["finished"].as_u64(), a["deadline_misses"].as_u64()), (Some(10), Some(0)), "{a}");
    assert!((units(a, "response_max") - 5.0).abs() < 1e-4, "{a}");
    assert_eq!((b["jobs"].as_u64(), b["finished"].as_u64()), (Some(10), Some(6)), "{b}");
    assert!((units(b, "response_max") - 48.0).abs() < 1e-4, "{b}");
    assert!((units(b, "response_mean") - 33.0).abs() < 1e-4, "{b}");
}

/// The same pair inside one server of the Colored Refresh Server: `server_schedule = "rm"` orders
/// it as rate monotonic (B misses once), EDF meets both; a context switch's cost is charged each
/// time a job starts or resumes after another (A's three jobs one each).
#[test]
fn servers_order_their_tasks_by_edf_or_rm_and_switches_cost_time() {
    let tasks = json!([
        {"name": "A", "period": 10, "wcet": 6, "compute": 6.0, "loads": 0},
        {"name": "B", "period": 15, "wcet": 6, "compute": 6.0, "loads": 0},
    ]);
    let servers = json!([{"tasks": ["A", "B"], "period": 1, "budget": 1}, {"tasks": [], "period": 1, "budget": 1}]);
    let run = |server_schedule: &str, switch_us: f64| {
        rt(json!({"machine": "ddr4-2400-8r", "schedule": "crs", "unit_us": 10.0, "tasks": tasks, "servers": servers,
                  "horizon": 30, "refresh": "none", "server_schedule": server_schedule, "switch_us": switch_us}))
    };
    assert_eq!(run("edf", 0.0)["deadline_misses"], 0);
    let rm = run("rm", 0.0);
    assert_eq!(rm["tasks"][1]["deadline_misses"], 1, "{rm}");
    assert_eq!(rm["tasks"][0]["switches"], 3, "switches count without a cost: {rm}");
    let costly = run("rm", 1.0);
    let a = &costly["tasks"][0];
    assert_eq!(a["switches"], 3, "{a}");
    assert!((a["exec_mean"].as_f64().unwrap() - 6.1).abs() < 1e-4, "{a}");
    assert!(costly["tasks"][1]["switches"].as_u64().unwrap() >= 2);
    assert!(rt_err(json!({"machine": "ddr4-2400-8r", "tasks": tasks, "server_schedule": "fifo"})).contains("server_schedule"));
    assert!(rt_err(json!({"machine": "ddr4-2400-8r", "tasks": tasks, "switch_us": -1.0})).contains("switch_us"));
}

/// CAMC's configurations (Tables 2.3-2.6) on the Opteron's memory: Stream attackers in the
/// tasks' bank colour slow their loads most, in other banks of the same controller less, and on
/// other nodes' controllers not at all (nothing of theirs reaches node 0's).
#[test]
fn attackers_interfere_by_bank_then_by_controller() {
    let run = |c1: u32, c2: u32, attackers: Value| {
        let tasks = json!([
            {"name": "t1", "period": 150, "wcet": 90, "compute": 30.0, "loads": 2000, "colours": [c1]},
            {"name": "t2", "period": 200, "wcet": 60, "compute": 27.0, "loads": 2000, "colours": [c2]},
        ]);
        rt(json!({"machine": "opteron-6128", "schedule": "rm", "unit_us": 10.0, "tasks": tasks, "horizon": 600,
                  "attackers": attackers}))
    };
    let lat = |v: &Value| v["tasks"][0]["latency_ns"]["mean"].as_f64().unwrap();
    let att = |cs: [u32; 3]| json!(cs.iter().map(|c| json!({"colours": [c], "outstanding": 4, "write_share": 0.0})).collect::<Vec<_>>());
    let single = run(0, 1, json!([]));
    let same = run(0, 0, att([0, 0, 0]));
    let diff_bank = run(0, 1, att([2, 3, 4]));
    let diff_ctrl = run(0, 1, att([8, 16, 24]));
    assert!(lat(&same) > 1.5 * lat(&diff_bank), "same bank {} ns, different banks {} ns", lat(&same), lat(&diff_bank));
    assert!(lat(&diff_bank) > 1.02 * lat(&single), "different banks {} ns, alone {} ns", lat(&diff_bank), lat(&single));
    assert_eq!(diff_ctrl["tasks"], single["tasks"], "other controllers share nothing with node 0's");
    for v in [&same, &diff_bank, &diff_ctrl] {
        for a in v["attackers"].as_array().unwrap() {
            assert!(a["bandwidth_gbps"].as_f64().unwrap() > 1.0, "{a}");
            assert_eq!(a["writes"], 0);
        }
    }
    assert!(single["attackers"].as_array().unwrap().is_empty());
    // Posted write-backs: a third of an attacker's requests with STREAM's default share.
    let v = run(0, 1, json!([{"colours": [2]}]));
    let a = &v["attackers"][0];
    let share = a["writes"].as_f64().unwrap() / a["requests"].as_f64().unwrap();
    assert!((share - 1.0 / 3.0).abs() < 0.01, "{a}");
}

#[test]
fn bad_attackers_and_colours_are_refused_naming_the_key() {
    let base = || {
        json!({"machine": "opteron-6128", "schedule": "rm", "unit_us": 10.0, "horizon": 150,
               "tasks": [{"name": "t", "period": 150, "wcet": 90, "compute": 30.0, "loads": 10, "colours": [0]}],
               "attackers": [{"colours": [2]}]})
    };
    let mut s = base();
    s["tasks"][0]["colours"] = json!([32]);
    assert!(rt_err(s).contains("tasks[0].colours: colour 32 is beyond the machine's 32 bank colours"));
    let mut s = base();
    s["attackers"][0]["colours"] = json!([]);
    assert!(rt_err(s).contains("attackers[0].colours"));
    // A task's empty list divided by zero dealing its pages (a panic), under every schedule
    // that takes one.
    for schedule in ["rm", "edf"] {
        let mut s = base();
        s["schedule"] = json!(schedule);
        s["tasks"][0]["colours"] = json!([]);
        let e = rt_err(s);
        assert!(e.contains("tasks[0].colours: t: must name at least one bank colour"), "{schedule}: {e}");
    }
    let mut s = base();
    s["attackers"][0]["outstanding"] = json!(0);
    assert!(rt_err(s).contains("attackers[0].outstanding"));
    let mut s = base();
    s["attackers"][0]["write_share"] = json!(1.5);
    assert!(rt_err(s).contains("attackers[0].write_share"));
    let mut s = base();
    s["attackers"][0]["pattern"] = json!("zigzag");
    assert!(rt_err(s).contains("attackers[0].pattern"));
    let mut s = base();
    s["horizon"] = json!(1_000_000);
    assert!(rt_err(s).contains("attackers could issue"));
    let mut s = spec("colored", "scheme", 8);
    s["tasks"][0]["colours"] = json!([0]);
    assert!(rt_err(s).contains("tasks[0].colours"));
}

/// `opteron-6128-node` selects the rank with b7, inside the 4 KiB page: every page spans both
/// ranks of its channel. Pages over every rank (`edf`, `rm`) need no rank of their own, so they
/// are dealt by the rank bits above the page (there are none: in address order); the schedules
/// that keep a colour's pages in its ranks (Colored Refresh and its server) cannot, and say why.
#[test]
fn a_rank_bit_inside_the_page_spreads_pages_over_ranks_and_refuses_rank_colours() {
    let tasks = json!([{"name": "a", "period": 10, "wcet": 2, "compute": 1.0, "loads": 20}]);
    for schedule in ["edf", "rm"] {
        let v = rt(json!({"machine": "opteron-6128", "schedule": schedule, "horizon": 40, "unit_us": 10.0, "tasks": tasks}));
        assert_eq!(v["tasks"][0]["loads"], 80, "{schedule}: {v}");
        assert_eq!(v["tasks"][0]["ranks"], json!([[0, 1]]), "{schedule}: {v}");
    }
    let e = rt_err(json!({"machine": "opteron-6128", "schedule": "crs", "horizon": 40, "unit_us": 10.0, "tasks": tasks,
                          "servers": [{"tasks": ["a"], "period": 10, "budget": 5}, {"tasks": [], "period": 10, "budget": 5}]}));
    assert!(
        e.contains("machine: the crs schedule keeps pages in the ranks of their colour ([0]), but mapping opteron-6128-node selects rank bit 0 with b7, inside the 4 KiB page: every page spans ranks 0 and 1"),
        "{e}"
    );
}

/// Only a copy task (two instances, under colored or crs) copies its globals: a copy setting
/// for a run or task that never copies was dropped unseen, so it is refused naming its key; on
/// the copy task it costs its copies' time.
#[test]
fn copy_settings_act_on_copy_tasks_and_are_refused_where_nothing_copies() {
    let base = rt(spec("colored", "scheme", 8));
    let at = base["tasks"].as_array().unwrap().iter().position(|t| t["copies"].as_u64().unwrap() > 0).expect("a copy task");
    let other = (0..5).find(|&i| i != at).unwrap();
    let mut bigger = spec("colored", "scheme", 8);
    bigger["tasks"][at]["copy_kb"] = json!(1024);
    bigger["copy_gbps"] = json!(1.0);
    let big = rt(bigger);
    let mean = |r: &Value| r["tasks"][at]["exec_mean"].as_f64().unwrap();
    assert!(mean(&big) > mean(&base), "tasks[{at}]: {} against {}", mean(&big), mean(&base));
    let mut s = spec("colored", "scheme", 8);
    s["tasks"][other]["copy_kb"] = json!(64);
    let e = rt_err(s);
    assert!(e.contains(&format!("tasks[{other}].copy_kb: has no effect")) && e.contains("one instance under schedule colored"), "{e}");
    let mut s = spec("colored", "scheme", 8);
    s["tasks"][at]["copy_kb"] = json!(1u64 << 40);
    assert!(rt_err(s).contains(&format!("tasks[{at}].copy_kb: lms: must be at most")));
    for schedule in ["edf", "rm"] {
        let mut s = spec(schedule, "scheme", 8);
        s["tasks"][0]["copy_kb"] = json!(64);
        assert!(rt_err(s).contains("tasks[0].copy_kb: has no effect"), "{schedule}");
        let mut s = spec(schedule, "scheme", 8);
        s["copy_gbps"] = json!(5.0);
        let e = rt_err(s);
        assert!(e.contains("copy_gbps: has no effect") && e.contains(&format!("schedule {schedule}")), "{e}");
    }
}
