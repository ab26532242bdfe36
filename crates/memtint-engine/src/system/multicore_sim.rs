//! The multi-programmed run: one trace-driven core per program, each a process of the OS
//! model, sharing the LLC and the memory system. Two clock domains advance by events: the next
//! thing to happen is either a core event (core cycles) or a memory-system event (DRAM cycles),
//! compared on one time line through the exact `ClockRatio`. At equal times the memory system
//! goes first, so data returned at a cycle is visible to the core in that cycle.
//!
//! Each core runs until it has retired its instruction target; its statistics are frozen
//! there, and it keeps running (wrapping its trace) until every core has reached its target,
//! as in Ramulator.

use super::memory_hierarchy::{CoreMemoryStats, MemoryHierarchy};
use crate::cache::LlcConfig;
use crate::config::MemoryConfig;
use crate::controller::Completion;
use crate::cpu::{ClockRatio, CoreStats, OooCore};
use crate::dram_sim::RunTotals;
use crate::error::{Error, Result};
use crate::memory_system::MemorySystem;
use crate::os::{OsConfig, OsModel, ProcessPlacement};
use crate::workload::CpuTraceSource;
use crate::{Cycle, NEVER};

/// One core's results, frozen when it reached its instruction target.
#[derive(Clone, Debug)]
pub struct CoreResult {
    pub program: String,
    pub core: CoreStats,
    pub memory: CoreMemoryStats,
    pub placement: ProcessPlacement,
}

pub struct MulticoreResult {
    pub cores: Vec<CoreResult>,
    pub memory: MemorySystem,
    pub totals: RunTotals,
    pub core_cycles: Cycle,
    pub llc: Option<crate::cache::CacheStats>,
    pub colour_report: Option<crate::os::ColourReport>,
}

/// Map each program's footprint, page by page in ascending virtual order, one program after
/// the other (`os.populate`): the state a measured window of a long-running program starts in.
fn populate(os: &mut OsModel, programs: &[Box<dyn CpuTraceSource>], page_bytes: u64) -> Result<()> {
    for (pid, p) in programs.iter().enumerate() {
        if let Some((start, end)) = p.footprint() {
            let mut page = start / page_bytes * page_bytes;
            while page < end {
                os.translate(pid as u32, page)?;
                page += page_bytes;
            }
        }
    }
    Ok(())
}

/// Simulate `programs` (one per core) until each has retired `instructions`.
pub fn simulate_multicore(
    cfg: &MemoryConfig,
    os_cfg: &OsConfig,
    mut programs: Vec<Box<dyn CpuTraceSource>>,
    instructions: u64,
) -> Result<MulticoreResult> {
    let started = std::time::Instant::now();
    let machine = &cfg.machine;
    machine.cpu.validate()?;
    machine.cache.validate()?;
    let n = programs.len() as u32;
    if n == 0 {
        return Err(Error::config("programs", "a run needs at least one program"));
    }
    if n > machine.cpu.cores {
        return Err(Error::config(
            "programs",
            format!("{n} programs but machine '{}' has {} cores (cpu.cores)", machine.name, machine.cpu.cores),
        ));
    }
    if instructions == 0 {
        return Err(Error::config("instructions", "the per-core instruction target must be at least 1"));
    }
    let llc_cfg = match &machine.cache.llc {
        LlcConfig::Cache(c) => Some(*c),
        LlcConfig::None => None,
    };
    let line_bytes = cfg.org.burst_bytes();
    if let Some(c) = &llc_cfg {
        if c.line_bytes as u64 != line_bytes {
            return Err(Error::config(
                "cache.llc.line_bytes",
                format!("must equal the DRAM burst ({line_bytes} bytes), got {}", c.line_bytes),
            ));
        }
    }
    // Without an LLC, colours cannot follow LLC sets: an empty set range.
    let llc_bits = llc_cfg.map(|c| c.geometry().set_index_bits()).unwrap_or(0..0);
    let mut os = OsModel::new(os_cfg, &cfg.mapping, llc_bits, n)?;
    if os_cfg.populate {
        populate(&mut os, &programs, os_cfg.page_bytes)?;
    }
    let clock = ClockRatio::from_ghz(machine.cpu.frequency_ghz, 1.0 / cfg.timing.tCK_ns)?;
    if let Some(l2) = &machine.cache.l2 {
        if l2.line_bytes as u64 != line_bytes {
            return Err(Error::config("cache.l2.line_bytes", format!("must equal the DRAM burst ({line_bytes} bytes), got {}", l2.line_bytes)));
        }
    }
    let mut hier = MemoryHierarchy::new(os, machine.cache.l2.as_ref(), llc_cfg.as_ref(), n, clock, line_bytes)?;
    let mut mem = MemorySystem::new(cfg)?;
    let core_cfg = machine.cpu.core_config();
    let mut cores = (0..n).map(|i| OooCore::new(i, &core_cfg, instructions)).collect::<Result<Vec<_>>>()?;
    let mut frozen: Vec<Option<CoreMemoryStats>> = vec![None; n as usize];
    // Cores still short of their target; counted rather than rescanning `frozen` every event.
    let mut running = n as usize;

    let mut done: Vec<Completion> = Vec::new();
    let mut woken = Vec::new();
    let mut now_dram: Cycle = 0;
    let mut dram_ticked = false;
    let mut now_core: Cycle = 0;
    let mut outbox_blocked = false;
    let mut requests = 0u64;
    // Only the memory-system step below changes the memory system (cores only fill the
    // outbox), so its next event is computed there once, not on every iteration.
    let mut mem_next = mem.next_event();
    loop {
        if running == 0 {
            break;
        }
        let core_next = cores.iter().map(|c| c.next_event()).min().unwrap_or(NEVER);
        let outbox_next = if outbox_blocked { NEVER } else { hier.outbox_ready() };
        let dram_next = mem_next.min(outbox_next);
        let dram_first = dram_next != NEVER && (core_next == NEVER || clock.dram_not_after_core(dram_next, core_next));
        if dram_first {
            // Memory system step at DRAM cycle `d`.
            // Never twice at one cycle: a request made after this cycle's step enters at the next.
            let d = if dram_ticked { dram_next.max(now_dram + 1) } else { dram_next };
            now_dram = d;
            dram_ticked = true;
            mem.tick(d, &mut done, false);
            for c in done.drain(..) {
                requests += 1;
                hier.complete(&c, &mut woken);
            }
            for (w, at) in woken.drain(..) {
                cores[w.core as usize].complete(w.token, at.max(now_core));
            }
            outbox_blocked = false;
            loop {
                let Some(o) = hier.outbox().front().copied() else { break };
                if o.at > d {
                    break;
                }
                if !mem.try_enqueue(d, o.id, o.addr, o.is_write, o.source) {
                    outbox_blocked = true;
                    break;
                }
                hier.outbox().pop_front();
                hier.entered_memory(&o, d);
            }
            mem_next = mem.next_event();
            if mem_next <= d {
                return Err(Error::config("engine", format!("internal error: memory system stalled at DRAM cycle {d}")));
            }
        } else if core_next != NEVER {
            now_core = core_next;
            hier.set_next_memory_event(dram_next);
            for (i, core) in cores.iter_mut().enumerate() {
                if core.next_event() <= now_core {
                    core.tick(now_core, programs[i].as_mut(), &mut hier)?;
                    if frozen[i].is_none() && core.reached_target() {
                        frozen[i] = Some(hier.core_stats_at(i as u32, clock.core_to_dram_ceil(now_core)));
                        running -= 1;
                    }
                }
            }
        } else {
            return Err(Error::config(
                "engine",
                format!("internal error: deadlock at core cycle {now_core}, DRAM cycle {now_dram}: no core or memory event pending"),
            ));
        }
    }
    mem.finish(now_dram);
    let mut results = Vec::with_capacity(n as usize);
    for (i, core) in cores.iter().enumerate() {
        results.push(CoreResult {
            program: programs[i].name().to_string(),
            core: *core.target_stats().expect("every core reached its target"),
            memory: frozen[i].take().expect("frozen at target"),
            placement: hier.os().process_placement(i as u32),
        });
    }
    let totals = RunTotals {
        requests,
        dram_cycles: now_dram,
        wall_seconds: started.elapsed().as_secs_f64(),
        ..RunTotals::default()
    };
    Ok(MulticoreResult {
        cores: results,
        llc: hier.llc().map(|l| l.stats().clone()),
        colour_report: hier.os().colour_report().ok(),
        memory: mem,
        totals,
        core_cycles: now_core,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MachineConfig;
    use crate::workload::open_cpu_workload;

    fn pages_mapped(populate: bool) -> (u64, Vec<u32>) {
        let cfg = MemoryConfig::resolve(&MachineConfig::load("i7-860").unwrap()).unwrap();
        let os = OsConfig { populate, ..OsConfig::default() };
        let programs = vec![open_cpu_workload("light:footprint_bytes=1048576", 1).unwrap()];
        let r = simulate_multicore(&cfg, &os, programs, 10_000).unwrap();
        let p = &r.cores[0].placement;
        (p.pages, p.banks_used.clone())
    }

    #[test]
    fn populate_maps_the_whole_footprint_before_the_run() {
        // 1 MiB = 256 pages, all mapped although 10 000 instructions touch a few lines only.
        let (pages, banks) = pages_mapped(true);
        assert_eq!(pages, 256);
        // Ascending faults in the baseline's runs of 8 contiguous frames cover every bank.
        assert_eq!(banks.len(), 64);
        let (pages, _) = pages_mapped(false);
        assert!(pages < 20, "without populate only touched pages are mapped: {pages}");
    }
}
