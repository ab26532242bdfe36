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
    let auto = rt(json!({"machine": "ddr4-2400-8r", "schedule": "edf", "unit_us": 100.0, "tasks": tasks, "horizon": 1280,
                         "overrides": {"dram": {"refresh_density_gbit": 8}}}));
    assert!(auto["refresh_met"].as_u64().unwrap() > 0);
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
}
