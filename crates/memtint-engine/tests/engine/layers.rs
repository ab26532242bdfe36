//! The engine's layers (issue 23): every top-level module belongs to one layer, and imports go
//! only to its own layer or lower ones, never in a circle. This reads every `crate::<module>`
//! path in `src/` (test code excluded) and checks both; every module `lib.rs` declares must have a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, top first. A new module must be placed here.
const LAYERS: &[(&str, &[&str])] = &[
    // what users run: the DRAM-trace and multicore drivers, the catalogue, the Linux bridge
    ("drivers", &["catalogue", "linux_layout", "mapping_probe", "multicore", "dram_sim", "rt_sim"]),
    // the channels behind one address mapping
    ("memory system", &["memory_system"]),
    // machine configurations and the embedded presets they are resolved from
    ("configuration", &["config", "presets"]),
    // the host: programs, cores, caches, the OS model
    ("host", &["workload", "cpu", "cache", "os", "realtime", "trace"]),
    // DRAM: controllers, the checker, address mapping, statistics, devices
    ("memory", &["controller", "checker", "mapping", "stats", "dram"]),
    // shared plumbing
    ("base", &["registry", "params", "vector_isa", "error", "interrupt"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

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
        } else if p.extension().is_some_and(|e| e == "rs") && !is_test_file(&p) {
            files.push(p);
        }
    }
}

/// Test code may use any layer: files under a `tests` folder, `tests.rs`, `*_tests.rs` and
/// `test_support.rs`.
fn is_test_file(p: &Path) -> bool {
    let name = p.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "test_support.rs" || p.components().any(|c| c.as_os_str() == "tests")
}

/// `crate::name` occurrences outside comments, up to an inline `#[cfg(test)]` module; a group
/// (`crate::{a::X, b}`, over several lines too) gives each of its top-level names.
fn imports(text: &str) -> BTreeSet<String> {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.starts_with("mod ")) {
            break;
        }
        code.push_str(line.split("//").next().unwrap());
        code.push('\n');
    }
    let ident = |s: &str| -> String { s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let tail = &rest[i + 7..];
        let names = match tail.strip_prefix('{') {
            Some(group) => top_level_items(group).into_iter().map(ident).collect(),
            None => vec![ident(tail)],
        };
        out.extend(names.into_iter().filter(|n| !n.is_empty()));
        rest = tail;
    }
    out
}

/// The comma-separated items of a `{...}` group up to its closing brace, nested groups whole.
fn top_level_items(group: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (j, ch) in group.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..j]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    items
}

/// The top-level modules `lib.rs` declares.
fn declared_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    lib.lines()
        .map(|l| l.split("//").next().unwrap().trim())
        .filter_map(|l| l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod ")))
        .filter_map(|l| l.strip_suffix(';'))
        .map(str::to_string)
        .collect()
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
fn every_module_has_a_layer_and_imports_only_downwards() {
    let g = graph();
    let mut wrong = Vec::new();
    for (from, tos) in &g {
        let Some(lf) = layer_of(from) else {
            wrong.push(format!("module `{from}` is in no layer: add it to LAYERS"));
            continue;
        };
        for to in tos {
            match layer_of(to) {
                None => wrong.push(format!("module `{to}` is in no layer: add it to LAYERS")),
                Some(lt) if lt < lf => wrong.push(format!("`{from}` ({}) imports `{to}` ({}), a higher layer", LAYERS[lf].0, LAYERS[lt].0)),
                _ => {}
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_declared_module_has_a_layer_and_every_layer_lists_declared_modules() {
    // A module that imports nothing is not in the import graph; it is checked here.
    let declared = declared_modules();
    assert!(declared.len() > 10, "lib.rs read as declaring {declared:?}");
    let unplaced: Vec<_> = declared.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules in no layer (add them to LAYERS): {unplaced:?}");
    let stale: Vec<_> = LAYERS.iter().flat_map(|(_, ms)| ms.iter()).filter(|m| !declared.contains(**m)).collect();
    assert!(stale.is_empty(), "LAYERS names modules lib.rs does not declare: {stale:?}");
}

#[test]
fn no_import_cycles_between_engine_modules() {
    let g = graph();
    let mut cycle_edges = BTreeSet::new();
    for (from, tos) in &g {
        for to in tos {
            if reaches(&g, to, from) {
                cycle_edges.insert((from.clone(), to.clone()));
            }
        }
    }
    assert!(cycle_edges.is_empty(), "imports that close a cycle between engine modules: {cycle_edges:?}");
}

#[test]
fn the_import_reader_sees_paths_and_skips_comments() {
    let found = imports("use crate::dram::Command; // crate::presets\nlet x = crate::mapping::f(crate::os::g());\n");
    assert_eq!(found.into_iter().collect::<Vec<_>>(), ["dram", "mapping", "os"]);
    let grouped = imports("use crate::{\n    cache::{Llc, Way},\n    stats::Stats, // crate::presets\n    Cycle,\n};\nuse crate::{os};\n");
    assert_eq!(grouped.into_iter().collect::<Vec<_>>(), ["Cycle", "cache", "os", "stats"]);
}
