//! Physical address -> DRAM coordinates: one general GF(2)-linear model (every coordinate bit is
//! the XOR of a set of physical-address bits), named layouts and preset files, validation
//! (bijection over the capacity) and the inverse map.
//!
//! # The model
//! An [`AddressMapping`] covers physical address bits `[0, capacity_bits)`, where
//! `capacity_bits = log2(org.capacity_bytes())`. The lowest `offset_bits = log2(org.bus_bytes())`
//! bits (the byte within the bus word, 3 for a 64-bit bus) are not mapped to any field. Every
//! coordinate bit of every field (channel, rank, bank group, bank, row, column) is the XOR of a
//! non-empty set of address bits in `[offset_bits, capacity_bits)`; field widths are the log2 of
//! the organisation's sizes (`bank_group` has width 0 on DDR3, `column` counts device columns,
//! burst bits included). Construction checks that the whole map over
//! `[offset_bits, capacity_bits)` is a bijection and explains any failure by field and bit.
//! Address bits at or above `capacity_bits` are ignored by `decode`.
//!
//! A plain bit-selection map is the special case where every coordinate bit is a single
//! address bit.
//!
//! # Named layouts
//! [`AddressMapping::from_layout`] takes a string of two-letter codes, **most significant
//! first**: `Ro` (row), `Ba` (bank), `Bg` (bank group), `Ra` (rank), `Co` (column), `Ch`
//! (channel). Each code appears once; all but `Bg` are required. Bits are assigned from the
//! bottom up:
//! 1. bits `[0, offset_bits)`: byte within the bus word (not mapped);
//! 2. the next `log2(burst_length)` bits: the low column bits (the burst), always here;
//! 3. then the codes from the last (least significant) to the first, each taking as many bits as
//!    its field is wide; `Co` takes the remaining (upper) column bits.
//!
//! If `Bg` is absent, the bank-group bits sit just below the bank bits inside `Ba`, so
//! consecutive values of the combined bank index alternate bank groups. Layouts are plain bit
//! selection (no XOR). Example, DDR3 with 2 channels, 4 ranks, 8 banks, 16384 rows, 1024
//! columns, BL8, 64-bit bus (33 bits): `RoBaRaCoCh` gives byte b0-2, column b3-5 (burst),
//! channel b6, column b7-13, rank b14-15, bank b16-18, row b19-32.
//!
//! # Mapping files
//! `configs/mappings/*.toml`, loaded with [`AddressMapping::from_toml`]; the format is described
//! in [`spec`]. Presets: `i7-860`, `i7-860-bpm-plus`, `xor-bank`, `opteron-6128-node`.

#[cfg(test)]
pub(crate) use address_mapping::test_support;
pub use address_mapping::AddressMapping;
pub use field::Field;
pub use layout::{EXAMPLE_LAYOUTS, LAYOUT_CODES};
pub use spec::MappingSpec;

mod address_mapping;
mod field;
mod layout;
pub mod spec;
