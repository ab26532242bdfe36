//! Statistics: counters and latency distributions collected by the controllers, and the JSON
//! schema documented in docs/stats.md (one schema for the CLI, the Python API and reports).

pub mod channel_stats;
pub mod latency;
pub mod row_causes;

pub use channel_stats::{BankCounters, ChannelStats};
pub use latency::LatencyHistogram;
pub use row_causes::{RowCause, RowCauseCounts, RowOutcomeCounts, RowOutcomesByKind};
