//! The catalogue `memtint presets` lists: every preset (machines, devices, mappings, layouts,
//! mixes) and every registered component with what it declares about itself, as JSON for the
//! CLI and the Python side.

use crate::presets::{device, DEVICES, LAYOUTS, MACHINES, MAPPINGS, MIXES};

/// Every preset and registered component, as JSON for `memtint presets`.
pub fn catalogue_json() -> String {
    use crate::config::{MachineConfig, MemoryConfig};
    let machines: Vec<serde_json::Value> = MACHINES
        .iter()
        .map(|(name, text)| {
            let m = MachineConfig::from_toml(text, name).expect("built-in machine preset parses");
            let capacity = MemoryConfig::resolve(&m)
                .map(|r| if r.topology.is_some() { r.memory_bytes() } else { r.org.capacity_bytes() })
                .unwrap_or(0);
            serde_json::json!({
                "name": name,
                "description": m.description,
                "device": m.dram.device,
                "density_gbit": m.dram.density_gbit,
                "channels": m.dram.channels,
                "ranks": m.dram.ranks,
                "cores": m.cpu.cores,
                "mapping": m.dram.mapping,
                "capacity_bytes": capacity,
                "variants": m.variants,
                "nodes": m.nodes.len().max(1),
            })
        })
        .collect();
    let devices: Vec<serde_json::Value> = DEVICES
        .iter()
        .map(|(name, _)| {
            let d = device(name).expect("built-in device preset parses");
            serde_json::json!({
                "name": name,
                "standard": d.standard.name(),
                "speed_bin": d.speed_bin,
                "data_rate_mts": d.data_rate_mts,
                "densities_gbit": d.densities(),
            })
        })
        .collect();
    let mappings: Vec<serde_json::Value> = MAPPINGS
        .iter()
        .map(|(name, text)| {
            let description = toml::from_str::<toml::Table>(text)
                .ok()
                .and_then(|t| t.get("description").and_then(|d| d.as_str()).map(str::to_string))
                .unwrap_or_default();
            serde_json::json!({ "name": name, "description": description })
        })
        .collect();
    let mixes: Vec<serde_json::Value> = MIXES
        .iter()
        .map(|(name, text)| {
            let t = toml::from_str::<toml::Table>(text).expect("built-in mix parses");
            serde_json::json!({ "name": name, "description": t.get("description"), "programs": t.get("programs") })
        })
        .collect();
    let generators = crate::trace::GeneratorKind::ALL.map(|k| k.name());
    let trace_formats = crate::trace::DramTraceFormat::ALL.map(|f| f.name());
    serde_json::json!({
        "machines": machines,
        "devices": devices,
        "mappings": mappings,
        "layouts": LAYOUTS,
        "schedulers": crate::controller::scheduler::names(),
        "scheduler_info": crate::controller::scheduler::SCHEDULERS
            .all()
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "summary": s.summary, "fast_path": s.fast_path, "params": (s.params.defaults)()}))
            .collect::<Vec<_>>(),
        "row_policies": crate::controller::row_policy::names(),
        "row_policy_info": crate::controller::row_policy::ROW_POLICIES
            .all()
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "summary": p.summary, "params": (p.params.defaults)()}))
            .collect::<Vec<_>>(),
        "refresh": crate::controller::refresh::names(),
        "refresh_info": crate::controller::refresh::REFRESH_MANAGERS
            .all()
            .iter()
            .map(|m| serde_json::json!({"name": m.name, "summary": m.summary, "params": (m.params.defaults)()}))
            .collect::<Vec<_>>(),
        "rt_schedule_info": crate::rt_sim::schedule_info(),
        "generators": generators,
        "trace_formats": trace_formats,
        "mixes": mixes,
        "placement_policies": crate::os::placement::names(),
        "placement_policy_info": crate::os::placement::POLICIES
            .all()
            .iter()
            .map(|p| {
                serde_json::json!({"name": p.name, "summary": p.summary, "needs_profiles": p.needs_profiles,
                                   "binds_threads": p.binds_threads, "needs": p.needs, "machine_variant": p.machine_variant,
                                   "places_nodes": p.places_nodes, "colours_nodes": p.colours_nodes,
                                   "mechanism": p.mechanism, "params": (p.params.defaults)()})
            })
            .collect::<Vec<_>>(),
        "migration_policy_info": crate::os::migration::MIGRATIONS
            .all()
            .iter()
            .map(|m| serde_json::json!({"name": m.name, "summary": m.summary, "moves_pages_of": m.moves_pages_of, "params": (m.params.defaults)()}))
            .collect::<Vec<_>>(),
        "dynamic_policy_info": crate::os::dynamic::DYNAMIC
            .all()
            .iter()
            .map(|d| serde_json::json!({"name": d.name, "summary": d.summary, "adapts": d.works_with, "params": (d.params.defaults)()}))
            .collect::<Vec<_>>(),
        "resctrl_info": crate::os::resctrl::RESCTRL
            .all()
            .iter()
            .map(|r| serde_json::json!({"name": r.name, "summary": r.summary, "params": (r.params.defaults)()}))
            .collect::<Vec<_>>(),
        "profiles": crate::workload::Profile::NAMES,
        "prefetchers": crate::cache::prefetcher::NAMES,
    })
    .to_string()
}
