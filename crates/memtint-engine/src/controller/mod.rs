//! One memory controller per channel (`ChannelController`): read and write queues with write
//! draining, per-bank state, the timing state that enforces the derived constraints, and three
//! pluggable policies, each a trait with one small file per implementation and one registry:
//! `Scheduler` (which ready command issues), `RowPolicy` (when rows close), `RefreshManager`
//! (when ranks refresh). Two implementations: `ChannelController` (every scheduler, the
//! reference) and `LaneController` (the age-ordered schedulers, faster), chosen by
//! `controller.implementation` (`implementation.rs`); they issue the same commands, and the
//! drivers use either through the `Controller` trait (`interface.rs`).

pub mod bank_queue;
pub mod bank_state;
pub mod bank_table;
pub mod candidates;
pub mod channel_controller;
pub mod channel_timing;
pub mod config;
pub mod implementation;
pub mod interface;
pub mod lane_controller;
pub mod lane_timing;
pub mod lanes;
pub mod power_down;
pub mod refresh;
pub mod request;
pub mod row_owners;
pub mod row_policy;
pub mod scheduler;
pub mod shape;
pub mod write_drain;

pub use bank_queue::BankQueue;
pub use bank_state::BankState;
pub use channel_controller::ChannelController;
pub use channel_timing::ChannelTiming;
pub use config::{ControllerConfig, RefreshHold, WriteHandling, WriteSettings};
pub use implementation::Implementation;
pub use interface::Controller;
pub(crate) use lane_controller::Shaped;
pub use lane_controller::{LaneController, LaneSettings};
pub use request::{Completion, Origin, Request, RowOutcome};
pub use row_owners::RowOwners;
