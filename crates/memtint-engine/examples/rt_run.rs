//! Run a real-time spec given as JSON on the command line (a developer aid; users use
//! `memtint rt` or `memtint.run_rt`).
fn main() {
    let spec = std::env::args().nth(1).expect("usage: rt_run '<json spec>'");
    match memtint_engine::rt_sim::run_json(&spec) {
        Ok(s) => {
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            println!("{}", serde_json::to_string_pretty(&v).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
