//! The engine's modules must not import each other in circles (issue 23: layers you can see).
//! This reads every `crate::<module>` path in `src/` and finds the imports that close a cycle
//! between top-level modules. Today's are listed in `KNOWN_CYCLE_EDGES`, a ratchet: a new one
//! fails the test, and so does a listed one that is gone (take it off the list).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Imports that close a cycle today (`from -> to`), to be removed as the layers are untangled.
/// One knot today: `config` <-> `presets` <-> the component registries (`controller`, `os`)
/// through `catalogue_json` and the flat `ControllerConfig`/`OsConfig`; `stats` reaching up into
/// the drivers (`dram_report`); `dram_sim` <-> `closed_loop` (`Books`, `FrontEnd`).
const KNOWN_CYCLE_EDGES: &[(&str, &str)] = &[
    ("closed_loop", "controller"),
    ("closed_loop", "dram_sim"),
    ("closed_loop", "memory_system"),
    ("config", "controller"),
    ("config", "presets"),
    ("controller", "config"),
    ("controller", "stats"),
    ("dram_sim", "closed_loop"),
    ("dram_sim", "config"),
    ("dram_sim", "controller"),
    ("dram_sim", "memory_system"),
    ("dram_sim", "stats"),
    ("memory_system", "config"),
    ("memory_system", "controller"),
    ("os", "config"),
    ("os", "presets"),
    ("presets", "config"),
    ("presets", "controller"),
    ("presets", "os"),
    ("stats", "config"),
    ("stats", "controller"),
    ("stats", "dram_sim"),
    ("stats", "memory_system"),
];

fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            collect(&p, files);
        } else if p.extension().is_some_and(|e| e == "rs") {
            files.push(p);
        }
    }
}

/// `crate::name` occurrences outside comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let tail = &rest[i + 7..];
            let name: String = tail.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = &tail[..];
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| top_module(&src, f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = top_module(&src, f);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for to in imports(&text) {
            if to != from && modules.contains(&to) {
                g.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m.clone()) {
            stack.extend(g.get(&m).into_iter().flatten().cloned());
        }
    }
    false
}

#[test]
fn no_new_import_cycles_between_engine_modules() {
    let g = graph();
    let mut cycle_edges = BTreeSet::new();
    for (from, tos) in &g {
        for to in tos {
            if reaches(&g, to, from) {
                cycle_edges.insert((from.clone(), to.clone()));
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN_CYCLE_EDGES.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    let new: Vec<_> = cycle_edges.difference(&known).collect();
    let gone: Vec<_> = known.difference(&cycle_edges).collect();
    assert!(new.is_empty(), "imports that close a cycle between engine modules (a lower layer importing a higher one): {new:?}");
    assert!(gone.is_empty(), "these cycles are gone; take them off KNOWN_CYCLE_EDGES: {gone:?}");
}

#[test]
fn the_import_reader_sees_paths_and_skips_comments() {
    let found = imports("use crate::dram::Command; // crate::presets\nlet x = crate::mapping::f(crate::os::g());\n");
    assert_eq!(found.into_iter().collect::<Vec<_>>(), ["dram", "mapping", "os"]);
}
