//! The operating system's page allocation: page colours derived from the address mapping, a
//! colour-indexed buddy allocator, per-process page tables and the placement policies of BPM/BPM+
//! (bank and channel partitioning) and HVR (cache, bank and vertical partitioning, random
//! interleaving). `OsModel` is the facade the multicore simulator calls on every access;
//! `crate::linux_layout` gives the same colours to the Linux commands (`memtint run`, `inspect`).

pub mod binding;
pub mod buddy;
pub mod cfs;
pub mod colour;
pub mod config;
pub mod dynamic;
pub mod frame_order;
pub mod hot_pages;
pub mod llc_class;
pub mod migration;
pub mod monitor;
pub mod nodes;
pub mod os_model;
pub mod page_table;
pub mod parity_table;
pub mod placement;
pub mod recolour;
pub mod resctrl;
pub mod swap;

pub use binding::bind_threads;
pub use buddy::{BuddyAllocator, Frame, MAX_ORDER};
pub use cfs::{Cfs, CpuState, SchedConfig, SchedThread, ThreadSchedStats};
pub use colour::{ColourBits, ColourFunction, ColourReach, ColourSpace};
pub use config::{AppProfile, FrameOrderKind, OsConfig};
pub use frame_order::FrameOrder;
pub use nodes::{NodeInfo, NodeLayout};
pub use os_model::{ColourReport, OsModel, ProcessColours, ProcessPlacement};
pub use page_table::PageTable;
pub use placement::{Placement, PlacementPolicy};

#[cfg(test)]
pub(crate) mod tests;
