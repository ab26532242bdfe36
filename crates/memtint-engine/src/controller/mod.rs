//! One memory controller per channel: request queues, scheduler, row policy, refresh.
