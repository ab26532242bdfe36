//! Run a DRAM spec given as JSON on the command line (a developer aid; users use `memtint dram`).
fn main() {
    let spec = std::env::args().nth(1).expect("usage: dram_run '<json spec>'");
    match memtint_engine::dram_sim::run_json(&spec) {
        Ok(s) => {
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            let mut v2 = v.clone();
            v2.as_object_mut().unwrap().remove("channels");
            println!("{}", serde_json::to_string_pretty(&v2).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
