//! BPM: each process owns an exclusive set of bank colours (BPM §2.3-2.5); by default the bank
//! colours are split evenly (32 colours / 4 processes = 8 each, 16 banks, on the i7-860).

use super::ColourSets;
use super::PolicyInfo;
use crate::error::Result;
use crate::os::colour::ColourBits;
use crate::os::OsConfig;

pub fn bpm(cfg: &OsConfig, bits: &ColourBits, processes: u32) -> Result<ColourSets> {
    ColourSets::new("bpm", bits.bank_space()?, cfg, bits, processes)
}

/// Registered in `placement::POLICIES`.
pub const INFO: PolicyInfo =
    PolicyInfo::new("bpm", "exclusive bank colours per process (BPM)", |cfg, bits, processes, _| Ok(Box::new(bpm(cfg, bits, processes)?)))
        .reads_keys(super::colour_sets::KEYS)
        .mechanism("bank partitioning");
