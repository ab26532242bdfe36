//! Run a CPU-trace spec given as JSON on the command line (a developer aid; users use `memtint sim`).
fn main() {
    let spec = std::env::args().nth(1).expect("usage: sim_run '<json spec>'");
    match memtint_engine::multicore::run_sim_json(&spec) {
        Ok(s) => {
            let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("dram");
            o.remove("colours");
            for c in o.get_mut("cores").unwrap().as_array_mut().unwrap() {
                let c = c.as_object_mut().unwrap();
                c.remove("banks");
                c.remove("core_stats");
                c.remove("read_latency_ns");
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
