//! Colour layouts for real Linux: the compact form of a machine's colour space (masks, labels and
//! the bank, channel, rank and LLC-colour functions) that libmemtint and `memtint inspect`
//! consume, and a placement policy's per-process colour sets computed by the simulator's own
//! policy code (`placement::build`), so a partition is the same in simulation and on Linux.
//! Serves issue 5 (colouring on stock Linux); the colours themselves are BPM §2.3/§2.6 and
//! HVR §2.1-2.2, as in `colour.rs`.

use crate::cache::LlcConfig;
use crate::config::{MachineSource, MemoryConfig};
use crate::error::{Error, Result};
use crate::mapping::{AddressMapping, Field};
use crate::os::colour::{colour_list_text, ColourBits, ColourSpace};
use crate::os::placement::{self, NAMED_VERTICAL};
use crate::os::OsConfig;
use serde::Deserialize;
use serde_json::{json, Value};

/// Colour spaces a layout request may name (besides the named vertical policies).
pub const SPACE_NAMES: &[&str] = &["bank", "rank", "channel", "channel-bank", "llc", "dram"];

/// `{"machine": .., "mapping": null | name, "space": "bank", "exclude_bits": [], "vertical": null}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutRequest {
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    #[serde(default = "default_space")]
    pub space: String,
    #[serde(default)]
    pub exclude_bits: Vec<u32>,
    /// (i, j, k) for space "vertical".
    #[serde(default)]
    pub vertical: Option<(u32, u32, u32)>,
}

fn default_space() -> String {
    "bank".to_string()
}

/// `{"machine": .., "mapping": null | name, "processes": N, "os": {"policy": "bpm", ...}}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionRequest {
    pub machine: MachineSource,
    #[serde(default)]
    pub mapping: Option<String>,
    pub processes: u32,
    pub os: OsConfig,
}

/// The address mapping and colour-bit analysis of a machine, for 4 KiB pages (the only page size
/// the OS model supports; libmemtint's hugepage mode needs no pagemap but the same colours).
/// The machine's memory configuration, colour bits and core count.
fn analyse(
    machine: &MachineSource,
    mapping: Option<&str>,
    exclude_bits: &[u32],
    page_bytes: u64,
) -> Result<(MemoryConfig, ColourBits, u32)> {
    let machine = machine.load_with(None, mapping, None)?;
    let cfg = MemoryConfig::resolve(&machine)?;
    if page_bytes != 4096 {
        return Err(Error::config("os.page_bytes", format!("{page_bytes} is not supported; only 4096-byte pages")));
    }
    let llc_bits = match &machine.cache.llc {
        LlcConfig::Cache(c) => c.geometry().set_index_bits(),
        LlcConfig::None => 0..0,
    };
    let bits = ColourBits::new(&cfg.mapping, llc_bits, page_bytes.trailing_zeros(), exclude_bits)?;
    Ok((cfg, bits, machine.cpu.cores))
}

/// The colour space `name` of a machine: one of `SPACE_NAMES`, a named vertical policy
/// (`a-vp`, `cache-only`, ...) or `vertical` with (i, j, k).
pub fn space_named(bits: &ColourBits, name: &str, vertical: Option<(u32, u32, u32)>) -> Result<ColourSpace> {
    match name {
        "bank" => bits.bank_space(),
        "rank" => bits.rank_space(),
        "channel" => bits.channel_space(),
        "channel-bank" | "channel+bank" => bits.channel_bank_space(),
        "llc" => bits.llc_space(),
        "dram" => bits.all_dram_space(),
        "vertical" => {
            let (i, j, k) = vertical.ok_or_else(|| Error::config("space", "space 'vertical' needs (i, j, k): B-, C- and O-bits"))?;
            bits.single_bit_space("vertical", &bits.vertical_bits(i, j, k)?)
        }
        _ => match NAMED_VERTICAL.iter().find(|(n, _)| *n == name) {
            Some(&(n, (i, j, k))) => bits.single_bit_space(n, &bits.vertical_bits(i, j, k)?),
            None => Err(Error::unknown(
                "colour space",
                name,
                SPACE_NAMES.iter().copied().chain(NAMED_VERTICAL.iter().map(|(n, _)| *n)).chain(["vertical"]),
            )),
        },
    }
}

fn masks_of(terms: Vec<Vec<u32>>) -> Vec<u64> {
    terms.iter().map(|t| t.iter().fold(0u64, |m, &b| m | 1 << b)).collect()
}

/// Values of linear functions `fs` reachable by moving inside one page: the span of the values of
/// the page-offset bits.
fn in_page_offsets(fs: &[u64], page_shift: u32) -> Vec<u32> {
    let mut span = vec![0u32];
    for b in 0..page_shift {
        let v = fs.iter().enumerate().fold(0u32, |v, (i, &m)| v | ((1u64 << b & m != 0) as u32) << i);
        if v != 0 && !span.contains(&v) {
            let more: Vec<u32> = span.iter().map(|s| s ^ v).collect();
            span.extend(more);
        }
    }
    span.sort_unstable();
    span
}

/// The compact form of `space`: what libmemtint's `MEMTINT_COLOR_MASKS` carries.
fn space_json(space: &ColourSpace) -> Value {
    let masks: Vec<u64> = space.functions().iter().map(|f| f.mask()).collect();
    json!({
        "name": space.name(),
        "masks": masks,
        "masks_hex": masks.iter().map(|m| format!("{m:#x}")).collect::<Vec<_>>(),
        "colours": space.count(),
        "labels": space.functions().iter().map(|f| f.label()).collect::<Vec<_>>(),
        "description": space.describe(),
    })
}

/// Everything `inspect` needs to histogram frames: the linear functions (mask i gives bit i) of
/// the global bank id, channel, rank and LLC colour, and what a page covers.
fn layout_json(cfg: &MemoryConfig, bits: &ColourBits, space: &ColourSpace) -> Result<Value> {
    let mapping: &AddressMapping = &cfg.mapping;
    let page_shift = bits.page_shift();
    let rank = masks_of(mapping.field_bits(Field::Rank));
    let llc_colour: Vec<u64> = bits.llc_bits().iter().map(|&b| 1u64 << b).collect();
    let below_page = |fs: &[u64]| -> Vec<u32> {
        let m = fs.iter().fold(0u64, |m, f| m | f) & ((1u64 << page_shift) - 1);
        (0..page_shift).filter(|b| m >> b & 1 == 1).collect()
    };
    let d = &cfg.machine.dram;
    Ok(json!({
        "machine": cfg.machine.name,
        "mapping": mapping.name(),
        "page_bytes": 1u64 << page_shift,
        "capacity_bits": bits.capacity_bits(),
        "organisation": {
            "channels": d.channels,
            "ranks": cfg.org.ranks,
            "banks": 1u64 << bits.bank_id_masks().len(),
        },
        "space": space_json(space),
        "bits": bits.report(),
        "functions": {
            "bank": bits.bank_id_masks(),
            "channel": bits.channel_id_masks(),
            "rank": rank,
            "llc_colour": llc_colour,
        },
        "in_page": {
            "bank_offsets": bits.in_page_bank_offsets(),
            "channel_offsets": bits.in_page_channel_offsets(),
            "rank_offsets": in_page_offsets(&rank, page_shift),
            "bank_bits_below_page": below_page(bits.bank_id_masks()),
            "channel_bits_below_page": below_page(bits.channel_id_masks()),
            "rank_bits_below_page": below_page(&rank),
        },
    }))
}

/// The layout of one colour space on a machine.
pub fn colour_layout(req: &LayoutRequest) -> Result<Value> {
    let (cfg, bits, _) = analyse(&req.machine, req.mapping.as_deref(), &req.exclude_bits, 4096)?;
    let space = space_named(&bits, &req.space, req.vertical)?;
    layout_json(&cfg, &bits, &space)
}

/// A policy's colour sets for `processes` processes, from `placement::build`, with the layout of
/// its colour space and each set's exact bank, channel and LLC-set reach.
pub fn policy_partition(req: &PartitionRequest) -> Result<Value> {
    if req.processes == 0 {
        return Err(Error::config("processes", "needs at least one process"));
    }
    let (cfg, bits, cores) = analyse(&req.machine, req.mapping.as_deref(), &req.os.exclude_bits, req.os.page_bytes)?;
    let nodes = cfg.node_layout();
    let threads = placement::one_thread_each(req.processes, cores);
    let view = placement::MachineView { mapping: &cfg.mapping, cores, nodes: &nodes, threads: &threads };
    let policy = placement::build(&req.os, &bits, req.processes, &view)?;
    // What a run file's [os] table would be warned of in `memtint sim`, said here too.
    let mut warnings = placement::warnings(&req.os)?;
    warnings.extend(placement::exclusion_warning(&req.os, &*policy, &bits, req.processes, &view));
    let space = policy.colour_space();
    let all: Vec<u32> = (0..space.count()).collect();
    let mut partitioned = false;
    let processes = (0..req.processes)
        .map(|pid| {
            let colours = policy.colours_of(pid).to_vec();
            partitioned |= colours != all;
            let reach = bits.reach(space, &colours)?;
            Ok(json!({
                "pid": pid,
                "colours": colours,
                "colours_text": colour_list_text(&colours),
                "banks": reach.banks,
                "channels": reach.channels,
                "llc_sets": reach.llc_sets.len(),
            }))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({
        "policy": policy.name(),
        "processes": processes,
        // False for policies that give every process every colour (buddy, random-interleave).
        "partitioned": partitioned,
        "shaped_by": shaping_keys(&req.os.policy)?,
        "layout": layout_json(&cfg, &bits, space)?,
        "warnings": warnings,
    }))
}

/// The `[os]` keys that decide a policy's colour sets: the bits taken out, the sets' own keys
/// the policy reads, its profiles, and its own table (`vertical.bits`); the others act over a
/// run (migration, dynamic policies, frame order), which a partition computed once does not hold.
fn shaping_keys(policy: &str) -> Result<Vec<String>> {
    let info = placement::info(policy)?;
    let mut keys = vec!["exclude_bits".to_string()];
    keys.extend(info.reads_keys.iter().filter(|k| placement::SHAPING_KEYS.contains(k)).map(|k| k.to_string()));
    if info.needs_profiles {
        keys.push("profiles".into());
    }
    if !info.params.is_empty() {
        keys.push(info.name.to_string());
    }
    Ok(keys)
}

/// `colour_layout` with JSON in and out (the Python extension's entry point).
pub fn colour_layout_json(request: &str) -> Result<String> {
    let req: LayoutRequest = crate::error::from_json(request, "colour layout request")?;
    Ok(colour_layout(&req)?.to_string())
}

/// `policy_partition` with JSON in and out.
pub fn policy_partition_json(request: &str) -> Result<String> {
    let req: PartitionRequest = crate::error::from_json(request, "policy partition request")?;
    Ok(policy_partition(&req)?.to_string())
}

#[cfg(test)]
mod tests;
