//! The DRAM standards memtint models and what differs between them.

use crate::dram::timing_rules::{Rule, DDR5_RULES, DDR_RULES, LPDDR4_RULES};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Standard {
    /// DDR2: DDR3's command set and rule table with DDR2's values (JESD79-2F); used with BL8,
    /// so reads and writes to a rank are spaced by BL/2 (the device file's tCCD).
    #[serde(rename = "DDR2")]
    Ddr2,
    #[serde(rename = "DDR3")]
    Ddr3,
    #[serde(rename = "DDR4")]
    Ddr4,
    /// LPDDR4 (JESD209-4): DDR3's rules plus per-bank refresh (REFPB), BL16 on a 16-bit
    /// channel, eight banks and no bank groups.
    #[serde(rename = "LPDDR4")]
    Lpddr4,
    /// DDR5 (JESD79-5): DDR4's rules plus same-bank refresh (REFSB), BL16 on a 32-bit
    /// subchannel, bank groups.
    #[serde(rename = "DDR5")]
    Ddr5,
}

impl Standard {
    /// Burst length in transfers: BL8, LPDDR4's BL16.
    pub fn burst_length(self) -> u32 {
        match self {
            Standard::Lpddr4 | Standard::Ddr5 => 16,
            _ => 8,
        }
    }
    /// Whether the device takes per-bank refresh (REFPB).
    pub fn has_per_bank_refresh(self) -> bool {
        matches!(self, Standard::Lpddr4)
    }
    /// Whether the device takes same-bank refresh (REFSB).
    pub fn has_same_bank_refresh(self) -> bool {
        matches!(self, Standard::Ddr5)
    }
    /// Whether a write to a bank group waits longer after an earlier write to it than a read
    /// after a read (DDR5's tCCD_L_WR).
    pub fn has_write_to_write_same_group(self) -> bool {
        matches!(self, Standard::Ddr5)
    }
    /// Whether a rank's precharges (PRE, PREA) keep a distance of their own (DDR5's tPPD).
    pub fn has_precharge_to_precharge(self) -> bool {
        matches!(self, Standard::Ddr5)
    }
    pub fn has_bank_groups(self) -> bool {
        matches!(self, Standard::Ddr4 | Standard::Ddr5)
    }
    /// The standard's timing rules (`timing_rules.rs`).
    pub fn timing_rules(self) -> &'static [Rule] {
        match self {
            Standard::Ddr2 | Standard::Ddr3 | Standard::Ddr4 => DDR_RULES,
            Standard::Lpddr4 => LPDDR4_RULES,
            Standard::Ddr5 => DDR5_RULES,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Standard::Ddr2 => "DDR2",
            Standard::Ddr3 => "DDR3",
            Standard::Ddr4 => "DDR4",
            Standard::Lpddr4 => "LPDDR4",
            Standard::Ddr5 => "DDR5",
        }
    }
}
