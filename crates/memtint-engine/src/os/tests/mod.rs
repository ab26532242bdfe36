//! Tests of the page-allocation model, one file per concept.

mod buddy;
mod colour;
mod frame_order;
mod placement;

use crate::dram::Organisation;
use crate::mapping::AddressMapping;

/// The i7-860 machines of the BPM/HVR papers: 2 channels x 4 ranks x 8 banks, 8 GiB.
pub fn i7_860_org() -> Organisation {
    crate::mapping::test_support::ddr3(2, 4)
}

/// A DDR3 organisation with 8 banks and 1 Gb devices.
pub fn small_org(channels: u32, ranks: u32) -> Organisation {
    Organisation { channels, ranks, ..i7_860_org() }
}

pub fn mapping(name: &str) -> AddressMapping {
    crate::config::resolve_mapping(name, &i7_860_org()).unwrap()
}

/// LLC of the i7-860: 8 MiB, 16-way, 64 B lines -> set index b6-b18.
pub const I7_LLC: std::ops::Range<u32> = 6..19;
