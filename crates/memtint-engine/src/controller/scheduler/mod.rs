//! Schedulers. Registry below.
pub const NAMES: &[&str] = &["fcfs", "fr-fcfs", "fr-fcfs-cap"];
