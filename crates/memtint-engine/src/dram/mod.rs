//! DRAM devices: standards, organisation, JEDEC timing, commands and coordinates.

pub mod address;
pub mod command;
pub mod constraints;
pub mod device;
pub mod energy;
pub mod organisation;
pub mod refresh_timing;
pub mod standard;
pub mod timing;
pub mod timing_rules;

pub use address::DramAddress;
pub use command::{Command, CommandRecord};
pub use device::DeviceSpec;
pub use organisation::Organisation;
pub use standard::Standard;
pub use timing::TimingParams;
