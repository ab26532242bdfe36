//! HVR's (i, j, k) family (HVR §2.2-2.3): colours on i B-bits (bank only), j C-bits (cache only)
//! and k O-bits (bank and cache). The named policies are HVR Table 1's; on the i7-860 the bit
//! choice of `ColourBits::vertical_bits` gives exactly the paper's bits (cache-only b16-18,
//! bank-only b21-22, bank-only-8 b15+b21-22, a-vp b14-15, b-vp b14-15+b22, c-vp b14-16), and
//! `vertical` takes any (i, j, k) from the configuration.

use super::ColourSets;
use super::{PlacementPolicy, PolicyInfo};
use crate::error::Error;
use crate::error::Result;
use crate::os::colour::ColourBits;
use crate::os::OsConfig;
use crate::params::{ParamSchema, Params, Renamed};
use serde::{Deserialize, Serialize};

/// HVR Table 1: name and (i, j, k).
pub const NAMED_VERTICAL: &[(&str, (u32, u32, u32))] = &[
    ("cache-only", (0, 3, 0)),
    ("bank-only", (2, 0, 0)),
    ("bank-only-8", (2, 0, 1)),
    ("a-vp", (0, 0, 2)),
    ("b-vp", (1, 0, 2)),
    ("c-vp", (0, 1, 2)),
];

/// The placement policy `hvr`: HVR's (2, 3, 2) space, every bit the named policies use, so that
/// each of their partitions is a colour set of it (`os.dynamic = "hvr-online"` moves between them).
pub const HVR_SPACE: (u32, u32, u32) = (2, 3, 2);

/// The bits of policy `name`, HVR's (i, j, k) on `bits`. A named policy's (i, j, k) is its own,
/// not a key the user set, so a mapping without the bits is an error naming the policy.
pub fn policy_bits(name: &str, (i, j, k): (u32, u32, u32), bits: &ColourBits) -> Result<Vec<u32>> {
    bits.vertical_bits(i, j, k).map_err(|e| match e {
        Error::Config { field, reason } if name != "vertical" && field == "os.vertical.bits" => Error::config(
            "os.policy",
            format!(
                "'{name}' is HVR's {}; choose a policy this machine's mapping has the bits for",
                reason.replacen(" asks for", ", which asks for", 1)
            ),
        ),
        other => other,
    })
}

/// The policy `name` colouring on HVR's (i, j, k) bits.
pub fn vertical(name: &'static str, ijk: (u32, u32, u32), cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<ColourSets> {
    let chosen = policy_bits(name, ijk, bits)?;
    let space = bits.single_bit_space(name, &chosen)?;
    ColourSets::new(name, space, cfg, bits, processes)
}

/// `[os.vertical]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VerticalParams {
    /// (i, j, k): i B-bits (bank only), j C-bits (cache only), k O-bits (both). No default.
    pub bits: Option<(u32, u32, u32)>,
}

impl Params for VerticalParams {}

/// The flat key this parameter had (`os.vertical = [i, j, k]`).
const RENAMED: Renamed = &[("vertical", "bits")];

/// Registered in `placement::POLICIES`: any (i, j, k) from `[os.vertical] bits`.
pub const VERTICAL: PolicyInfo =
    PolicyInfo::new("vertical", "HVR's (i, j, k) colouring from [os.vertical] bits", |cfg, bits, processes, _| {
        let ijk = cfg.params::<VerticalParams>("vertical", RENAMED)?.bits.ok_or_else(|| {
            Error::config("os.vertical.bits", "policy 'vertical' needs [os.vertical] bits = [i, j, k] (B-, C- and O-bits)")
        })?;
        Ok(Box::new(vertical("vertical", ijk, cfg, bits, processes)?))
    })
    .params(ParamSchema::of::<VerticalParams>(RENAMED))
    .reads_keys(super::colour_sets::KEYS)
    .mechanism("LLC + bank colouring");

/// The named (i, j, k) policy `name` of `NAMED_VERTICAL`.
fn named(name: &'static str, cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<Box<dyn PlacementPolicy>> {
    let &(_, ijk) = NAMED_VERTICAL.iter().find(|(n, _)| *n == name).expect("registered names are in NAMED_VERTICAL");
    Ok(Box::new(vertical(name, ijk, cfg, bits, processes)?))
}

macro_rules! named_info {
    ($id:ident, $name:literal, $summary:literal, $mechanism:literal) => {
        /// Registered in `placement::POLICIES`.
        pub const $id: PolicyInfo = PolicyInfo::new($name, $summary, |cfg, bits, processes, _| named($name, cfg, bits, processes))
            .reads_keys(super::colour_sets::KEYS)
            .mechanism($mechanism);
    };
}
named_info!(CACHE_ONLY, "cache-only", "HVR (0, 3, 0): LLC colours only", "LLC colouring");
named_info!(BANK_ONLY, "bank-only", "HVR (2, 0, 0): bank colours only", "bank partitioning");
named_info!(BANK_ONLY_8, "bank-only-8", "HVR (2, 0, 1): eight bank colours", "bank partitioning");
named_info!(A_VP, "a-vp", "HVR (0, 0, 2): bank-and-cache bits", "LLC + bank colouring");
named_info!(B_VP, "b-vp", "HVR (1, 0, 2)", "LLC + bank colouring");
named_info!(C_VP, "c-vp", "HVR (0, 1, 2)", "LLC + bank colouring");

/// Registered in `placement::POLICIES`.
pub const HVR: PolicyInfo =
    PolicyInfo::new("hvr", "HVR (2, 3, 2): every HVR bit, for os.dynamic = \"hvr-online\"", |cfg, bits, processes, _| {
        Ok(Box::new(vertical("hvr", HVR_SPACE, cfg, bits, processes)?))
    })
    .reads_keys(super::colour_sets::KEYS)
    .mechanism("LLC + bank colouring");
