//! How a memory system is organised: channels, ranks, bank groups, banks, rows, columns.

use crate::error::{Error, Result};
use serde::Serialize;

/// Sizes of every level. `columns` counts device columns (one bus-width word each), so one
/// burst covers `burst_length` columns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Organisation {
    pub channels: u32,
    pub ranks: u32,
    pub bank_groups: u32,
    pub banks_per_group: u32,
    pub rows: u32,
    pub columns: u32,
    /// Data-bus width of a channel in bits (64 for a DIMM).
    pub bus_width_bits: u32,
    /// Device width (x8 -> 8); devices per rank = bus_width_bits / device_width.
    pub device_width: u32,
    /// Burst length in transfers.
    pub burst_length: u32,
    /// Device density in gigabits.
    pub density_gbit: u32,
}

impl Organisation {
    pub fn banks_per_rank(&self) -> u32 {
        self.bank_groups * self.banks_per_group
    }
    pub fn banks_per_channel(&self) -> u32 {
        self.ranks * self.banks_per_rank()
    }
    pub fn total_banks(&self) -> u32 {
        self.channels * self.banks_per_channel()
    }
    /// Bytes moved by one column command (one burst): the cache-line size of the channel.
    pub fn burst_bytes(&self) -> u64 {
        (self.bus_width_bits / 8 * self.burst_length) as u64
    }
    /// Bytes of one bus-width word.
    pub fn bus_bytes(&self) -> u64 {
        (self.bus_width_bits / 8) as u64
    }
    /// Bytes of one row across the rank (the rank's row-buffer size).
    pub fn row_bytes(&self) -> u64 {
        self.columns as u64 * self.bus_bytes()
    }
    pub fn rank_bytes(&self) -> u64 {
        self.banks_per_rank() as u64 * self.rows as u64 * self.row_bytes()
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.channels as u64 * self.ranks as u64 * self.rank_bytes()
    }
    /// Flat bank index within a rank.
    #[inline]
    pub fn flat_bank(&self, bank_group: u32, bank: u32) -> u32 {
        bank_group * self.banks_per_group + bank
    }

    /// Every level must be a power of two (address bits select them) and non-zero.
    pub fn validate(&self) -> Result<()> {
        let levels = [
            ("channels", self.channels),
            ("ranks", self.ranks),
            ("bank_groups", self.bank_groups),
            ("banks_per_group", self.banks_per_group),
            ("rows", self.rows),
            ("columns", self.columns),
            ("burst_length", self.burst_length),
            ("bus_width_bits", self.bus_width_bits),
        ];
        for (field, v) in levels {
            if v == 0 || !v.is_power_of_two() {
                return Err(Error::config(field, format!("must be a non-zero power of two, got {v}")));
            }
        }
        // Within the general controller's candidate sets, 64-bit masks over a group's banks.
        if self.banks_per_group > 32 {
            return Err(Error::config(
                "banks_per_group",
                format!("must be at most 32 (devices have 2 to 8), got {}", self.banks_per_group),
            ));
        }
        let banks = [self.channels, self.ranks, self.bank_groups, self.banks_per_group].iter().map(|&n| n as u64).product::<u64>();
        crate::params::BANKS.check("channels x ranks x banks per rank", banks)?;
        if !self.bus_width_bits.is_multiple_of(8) {
            return Err(Error::config("bus_width_bits", "must be a multiple of 8"));
        }
        if self.columns < self.burst_length {
            return Err(Error::config("columns", "fewer columns than one burst"));
        }
        Ok(())
    }
}
