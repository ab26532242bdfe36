//! Physical address -> DRAM coordinates: one general GF(2)-linear model (every coordinate bit is
//! the XOR of a set of physical-address bits), named layouts and preset files, validation
//! (bijection over the capacity) and the inverse map. (filled in by the mapping work)
