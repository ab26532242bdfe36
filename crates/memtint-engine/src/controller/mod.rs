//! One memory controller per channel: request queues, scheduler, row policy, refresh.

pub mod refresh;
pub mod row_policy;
pub mod scheduler;
