//! The model's identity: a hash of the engine's sources and the built-in presets, so cached
//! results (alone runs, sweep rows) from an engine that simulates differently are never reused.

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("rs" | "toml")) {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [root.join("src"), root.join("../../configs")];
    let mut all = Vec::new();
    for d in &dirs {
        println!("cargo:rerun-if-changed={}", d.display());
        files(d, &mut all);
    }
    all.sort();
    // FNV-1a over each file's path (relative) and contents.
    let mut h: u64 = 0xcbf29ce484222325;
    for p in &all {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned();
        for b in rel.bytes().chain(fs::read(p).unwrap_or_default()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    println!("cargo:rustc-env=MEMTINT_MODEL_ID={h:016x}");
}
