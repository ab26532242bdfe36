//! DRAM coordinates of one access.

/// Where a physical address lives in the memory system. `bank` is the bank within its bank group
/// (DDR3 has one bank group per rank, so there it is the bank within the rank).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DramAddress {
    pub channel: u32,
    pub rank: u32,
    pub bank_group: u32,
    pub bank: u32,
    pub row: u32,
    pub column: u32,
}
