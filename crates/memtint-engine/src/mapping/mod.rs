//! TEMPORARY stand-in until the mapping module lands: plain bit-selection layouts only.
mod address_mapping;
pub use address_mapping::{AddressMapping, Field};
