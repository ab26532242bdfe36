//! The statistics of a DRAM-level run, in the JSON schema of docs/stats.md.

use super::books::{DramSimOptions, RunTotals};
use crate::config::MemoryConfig;
use crate::controller::Controller;
use crate::dram::energy::{CommandEnergy, RankActivity, RankEnergy};
use crate::dram::Command;
use crate::dram::Organisation;
use crate::memory_system::MemorySystem;
use crate::stats::{ChannelStats, LatencyHistogram, RowCauseCounts};
use serde_json::{json, Map, Value};

/// Version of the schema below; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// What the energy figures include and leave out (`dram/energy.rs`).
const ENERGY_MODEL: &str = "IDD-based per command and standby state (Micron, DRAMPower), power-down when the \
                            controller enters it; self-refresh and I/O termination not modelled";

fn commands_json(counts: &[u64; Command::COUNT]) -> Value {
    let mut m = Map::new();
    for c in Command::ALL {
        m.insert(c.name().to_string(), json!(counts[c.index()]));
    }
    Value::Object(m)
}

fn rate(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// What rank `rank` of a channel with these statistics did up to DRAM cycle `at`: the energy
/// model's input (`dram/energy.rs`).
fn rank_activity(s: &ChannelStats, rank: usize, org: &Organisation, t_rfc: u64, at: u64) -> RankActivity {
    let first = rank * org.banks_per_rank() as usize;
    let sum = |c: &[Command]| -> u64 {
        s.banks[first..first + org.banks_per_rank() as usize].iter().map(|b| c.iter().map(|c| b.commands[c.index()]).sum::<u64>()).sum()
    };
    let refreshes = s.rank_commands[rank][Command::Ref.index()];
    let (power_down_active_cycles, power_down_precharged_cycles) = s.rank_power_down_cycles(rank, at);
    RankActivity {
        activates: sum(&[Command::Act]),
        reads: sum(&[Command::Rd, Command::Rda]),
        writes: sum(&[Command::Wr, Command::Wra]),
        refreshes,
        bank_refreshes: sum(&[Command::RefPb]),
        // A refreshing rank draws active standby for tRFC (as DRAMPower counts it).
        active_cycles: (s.rank_active_cycles(rank, at) + refreshes * t_rfc).min(at),
        cycles: at,
        power_down_active_cycles,
        power_down_precharged_cycles,
    }
}

/// The memory system's DRAM energy so far, read at any cycle of a run: what a sampled run
/// measures per detailed segment (`multicore/sampling.rs`). The same model as the report's.
pub struct EnergyMeter {
    /// Per channel: its energy per command, its organisation and tRFC; None when any channel's
    /// device has no power figures (then the run has no energy).
    channels: Option<Vec<(CommandEnergy, Organisation, u64)>>,
}

impl EnergyMeter {
    pub fn new(cfg: &MemoryConfig, mem: &MemorySystem) -> EnergyMeter {
        let nodes = mem.channel_nodes();
        let channels = (0..mem.channels().len())
            .map(|ch| {
                let node_cfg = cfg.topology.as_ref().and_then(|t| t.memories[nodes[ch] as usize].as_ref()).unwrap_or(cfg);
                let org = &node_cfg.org;
                let e = node_cfg.device.power(org.density_gbit, org.device_width).map(|p| CommandEnergy::new(p, &node_cfg.timing, org))?;
                Some((e, org.clone(), node_cfg.timing.tRFC))
            })
            .collect();
        EnergyMeter { channels }
    }

    /// Total DRAM energy up to DRAM cycle `at`, nanojoules; None without power figures.
    pub fn total_nj(&self, mem: &MemorySystem, at: u64) -> Option<f64> {
        let channels = self.channels.as_ref()?;
        let mut total = 0.0;
        for (ctrl, (e, org, t_rfc)) in mem.channels().iter().zip(channels) {
            for r in 0..org.ranks as usize {
                total += e.rank(&rank_activity(ctrl.stats(), r, org, *t_rfc, at)).total_nj;
            }
        }
        Some(total)
    }
}

pub fn report(cfg: &MemoryConfig, mem: &MemorySystem, totals: &RunTotals, opts: DramSimOptions) -> Value {
    let org = &cfg.org;
    let ws = cfg.controller.writes().expect("validated when the run was built");
    let t = &cfg.timing;
    let cycles = totals.dram_cycles.max(1);
    let simulated_ns = totals.dram_cycles as f64 * t.tCK_ns;
    let line = org.burst_bytes() as f64;

    let mut latency = LatencyHistogram::default();
    let (mut reads, mut writes, mut hits, mut misses, mut conflicts) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut met = [0u64; 2];
    let mut causes = RowCauseCounts::default();
    let mut commands = [0u64; Command::COUNT];
    let (mut rq_integral, mut wq_integral) = (0u128, 0u128);
    let mut channels = Vec::new();
    let channel_nodes = mem.channel_nodes();
    let mut energy = Some(RankEnergy::default());
    let mut missing_power = Vec::new();
    let mut missing_power_down = Vec::new();
    for (ch, ctrl) in mem.channels().iter().enumerate() {
        // On a multi-node machine each channel has its node's organisation and device.
        let node_cfg = cfg.topology.as_ref().and_then(|t| t.memories[channel_nodes[ch] as usize].as_ref()).unwrap_or(cfg);
        let org = &node_cfg.org;
        let per_command = node_cfg.device.power(org.density_gbit, org.device_width).map(|p| CommandEnergy::new(p, &node_cfg.timing, org));
        let label = format!("{} {}Gb x{}", node_cfg.device.name, org.density_gbit, org.device_width);
        if per_command.is_none() && !missing_power.contains(&label) {
            missing_power.push(label.clone());
        }
        let mut channel_energy = RankEnergy::default();
        let s = ctrl.stats();
        latency.merge(&s.read_latency);
        reads += s.reads;
        writes += s.writes;
        met[0] += s.refresh_met[0];
        met[1] += s.refresh_met[1];
        rq_integral += s.read_queue_integral;
        wq_integral += s.write_queue_integral;
        let totals_ch = s.command_totals();
        for (a, b) in commands.iter_mut().zip(totals_ch) {
            *a += b;
        }
        let mut ranks = Vec::new();
        for r in 0..org.ranks {
            // The rank's commands: its rank-wide ones (PREA, REF) and its banks'.
            let mut rank_commands = s.rank_commands[r as usize];
            let mut banks = Vec::new();
            for g in 0..org.bank_groups {
                for b in 0..org.banks_per_group {
                    let flat = (r * org.banks_per_rank() + org.flat_bank(g, b)) as usize;
                    let bc = &s.banks[flat];
                    hits += bc.row_hits;
                    misses += bc.row_misses;
                    conflicts += bc.row_conflicts;
                    causes.add(&bc.row_causes);
                    for (a, c) in rank_commands.iter_mut().zip(bc.commands) {
                        *a += c;
                    }
                    let mut bank = json!({
                        "bank_group": g, "bank": b,
                        "commands": commands_json(&bc.commands),
                        "row_hits": bc.row_hits, "row_misses": bc.row_misses, "row_conflicts": bc.row_conflicts,
                    });
                    add_row_causes(&mut bank, &bc.row_causes);
                    banks.push(bank);
                }
            }
            let rc = &s.rank_commands[r as usize];
            let mut rank = json!({
                "rank": r,
                "commands": commands_json(&rank_commands),
                "refreshes": rc[Command::Ref.index()],
                "banks": banks,
            });
            if let Some(e) = &per_command {
                let activity = rank_activity(s, r as usize, org, node_cfg.timing.tRFC, totals.dram_cycles);
                if activity.power_down_active_cycles + activity.power_down_precharged_cycles > 0
                    && !e.has_power_down
                    && !missing_power_down.contains(&label)
                {
                    missing_power_down.push(label.clone());
                }
                let re = e.rank(&activity);
                channel_energy.add(&re);
                rank["energy"] = json!(re);
                rank["active_standby_cycles"] = json!(activity.active_cycles);
            }
            if node_cfg.controller.power_down_after.is_some() {
                let (active, precharged) = s.rank_power_down_cycles(r as usize, totals.dram_cycles);
                rank["power_downs"] = json!(s.rank_power_downs[r as usize]);
                rank["power_down_cycles"] = json!({"active": active, "precharged": precharged});
            }
            ranks.push(rank);
        }
        match (&mut energy, per_command.is_some()) {
            (Some(total), true) => total.add(&channel_energy),
            _ => energy = None,
        }
        let ch_gbps = |n: u64| if simulated_ns > 0.0 { n as f64 * line / simulated_ns } else { 0.0 };
        channels.push(json!({
            "channel": ch,
            "reads": s.reads,
            "writes": s.writes,
            "commands": commands_json(&totals_ch),
            "bandwidth_gbps": {"read": ch_gbps(s.reads), "write": ch_gbps(s.writes), "total": ch_gbps(s.reads + s.writes)},
            "data_bus_utilisation": rate(s.busy_data_cycles, cycles),
            "write_mode_switches": s.write_mode_switches,
            "refresh_interference": refresh_interference(s.refresh_met, s.reads + s.writes),
            "scheduler_sources": scheduler_sources(*ctrl),
            "queue_occupancy": {
                "read_mean": s.read_queue_integral as f64 / cycles as f64,
                "write_mean": s.write_queue_integral as f64 / cycles as f64,
            },
            "ranks": ranks,
        }));
        if per_command.is_some() {
            channels.last_mut().expect("pushed")["energy"] = json!(channel_energy);
        }
        if cfg.topology.is_some() {
            channels.last_mut().expect("pushed")["node"] = json!(channel_nodes[ch]);
        }
    }
    let accesses = hits + misses + conflicts;
    let summary = latency.summary();
    let gbps = |bytes: f64| if simulated_ns > 0.0 { bytes / simulated_ns } else { 0.0 };
    // A multi-node machine's peak is its nodes' together (each node's counts its own device's
    // burst interval and throttle window, as the OS model's monitors do).
    let peak = match &cfg.topology {
        Some(topology) => topology.layout.nodes.iter().map(|n| n.bandwidth_gbps).sum(),
        None => cfg.peak_gbps(),
    };
    let mut out = json!({
        "schema_version": SCHEMA_VERSION,
        "config": {
            "machine": cfg.machine.name,
            "device": cfg.device.name,
            "speed_bin": cfg.device.speed_bin,
            "standard": cfg.device.standard.name(),
            "density_gbit": org.density_gbit,
            "channels": org.channels,
            "ranks": org.ranks,
            "bank_groups": org.bank_groups,
            "banks_per_group": org.banks_per_group,
            "capacity_bytes": org.capacity_bytes(),
            "mapping": cfg.mapping.name(),
            "scheduler": cfg.controller.scheduler,
            "row_policy": cfg.controller.row_policy,
            "refresh": cfg.controller.refresh,
            "refresh_density_gbit": cfg.machine.dram.refresh_density_gbit.unwrap_or(org.density_gbit),
            "tREFI_ns": t.tREFI as f64 * t.tCK_ns,
            "tRFC_ns": t.tRFC as f64 * t.tCK_ns,
            "tRFCpb_ns": if t.tRFCpb > 0 { json!(t.tRFCpb as f64 * t.tCK_ns) } else { Value::Null },
            "tRFCsb_ns": if t.tRFCsb > 0 { json!(t.tRFCsb as f64 * t.tCK_ns) } else { Value::Null },
            "read_queue": cfg.controller.read_queue,
            "write_handling": cfg.controller.write_handling,
            "write_queue": ws.queue,
            "write_high_watermark": ws.high_watermark,
            "write_low_watermark": ws.low_watermark,
            "write_idle_drain_min": ws.idle_drain_min,
            "write_idle_drain_timeout": ws.idle_drain_timeout,
            "write_min_per_switch": ws.min_per_switch,
            "protect_activated": cfg.controller.protect_activated,
            "params": cfg.controller.params_in_use().unwrap_or_default(),
            "frontend_latency": cfg.controller.frontend_latency,
            "implementation": mem.implementation().name(),
            "power_down_after": cfg.controller.power_down_after,
            "sources": opts.sources,
            "device_width": org.device_width,
            "bus_width_bits": org.bus_width_bits,
            "outstanding": if totals.timestamped { Value::Null } else { json!(opts.outstanding) },
            "timestamped": totals.timestamped,
            "event_skipping": !opts.cycle_by_cycle,
            "tCK_ns": t.tCK_ns,
        },
        "requests": totals.requests,
        "reads": reads,
        "writes": writes,
        "row_hits": hits,
        "row_misses": misses,
        "row_conflicts": conflicts,
        "row_hit_rate": rate(hits, accesses),
        "read_latency": summary,
        "read_latency_ns": summary.scaled(t.tCK_ns),
        "dram_cycles": totals.dram_cycles,
        "simulated_ns": simulated_ns,
        "bandwidth_gbps": {
            "read": gbps(reads as f64 * line),
            "write": gbps(writes as f64 * line),
            "total": gbps((reads + writes) as f64 * line),
        },
        "peak_bandwidth_gbps": peak,
        "commands": commands_json(&commands),
        "refreshes": commands[Command::Ref.index()],
        "bank_refreshes": commands[Command::RefPb.index()] + commands[Command::RefSb.index()],
        "refresh_interference": refresh_interference(met, reads + writes),
        "queue_occupancy": {
            "read_mean": rq_integral as f64 / cycles as f64,
            "write_mean": wq_integral as f64 / cycles as f64,
        },
        "front_end_stalls": totals.front_end_stalls,
        "wall_seconds": totals.wall_seconds,
        "requests_per_second": if totals.wall_seconds > 0.0 { totals.requests as f64 / totals.wall_seconds } else { 0.0 },
        "dram_cycles_per_second": if totals.wall_seconds > 0.0 { totals.dram_cycles as f64 / totals.wall_seconds } else { 0.0 },
        "vector_isa": totals.vector_isa.name(),
        "channels": channels,
        "warnings": cfg.controller.run_warnings(totals.dram_cycles),
    });
    // Outside `json!`, whose expansion of the whole report is at the recursion limit.
    out["config"]["refresh_holds"] = json!(cfg.controller.refresh_holds);
    add_row_causes(&mut out, &causes);
    // REFSB energy is not modelled (JEDEC's IDD5C): a run that issued any says so.
    let refsb = commands[Command::RefSb.index()];
    out["energy"] = match energy {
        Some(_) if refsb > 0 => json!({"unavailable": format!(
            "{refsb} same-bank refreshes (REFSB) ran, whose energy (JEDEC's IDD5C) the model does not cover (docs/energy.md)"
        )}),
        Some(_) if !missing_power_down.is_empty() => json!({"unavailable": format!(
            "ranks powered down (controller.power_down_after), but no power-down currents (idd2p, idd3p) for {} in the device file(s) (docs/energy.md)",
            missing_power_down.join(", ")
        )}),
        Some(e) => {
            let bits = (reads + writes) as f64 * line * 8.0;
            let mut v = json!(e);
            v["per_access_nj"] = json!(if reads + writes > 0 { e.total_nj / (reads + writes) as f64 } else { 0.0 });
            v["per_bit_pj"] = json!(if bits > 0.0 { e.total_nj * 1000.0 / bits } else { 0.0 });
            v["average_power_mw"] = json!(if simulated_ns > 0.0 { e.total_nj / simulated_ns * 1000.0 } else { 0.0 });
            v["model"] = json!(ENERGY_MODEL);
            v
        }
        None => json!({"unavailable": format!(
            "no datasheet currents for {} in the device file(s) (organisation.power; docs/energy.md)",
            missing_power.join(", ")
        )}),
    };
    if opts.check {
        out["violations"] = json!(totals.violations);
        out["commands_checked"] = json!(totals.commands_checked);
        out["violation_examples"] = json!(totals.violation_examples);
    }
    out
}

/// `counts`' keys (`row_conflicts_by_self`, ...) added to the object `v`, beside its row outcomes.
pub fn add_row_causes(v: &mut Value, counts: &RowCauseCounts) {
    if let (Some(o), Value::Object(c)) = (v.as_object_mut(), json!(counts)) {
        o.extend(c);
    }
}

/// The scheduler's per-source counters on one channel, as `[{"source": n, <counter>: v, ...}]`
/// (empty for schedulers without per-source state).
fn scheduler_sources(c: &dyn Controller) -> Value {
    c.scheduler_counters()
        .into_iter()
        .map(|(source, counters)| {
            let mut o = serde_json::Map::new();
            o.insert("source".into(), json!(source));
            for (k, v) in counters {
                o.insert(k.into(), json!(v));
            }
            Value::Object(o)
        })
        .collect()
}

/// Requests whose wait overlapped their rank's refresh (`RefreshState::met`), by direction,
/// and their share of all requests served.
fn refresh_interference(met: [u64; 2], served: u64) -> Value {
    let all = met[0] + met[1];
    json!({"reads": met[0], "writes": met[1], "requests": all, "share": if served > 0 { all as f64 / served as f64 } else { 0.0 }})
}
