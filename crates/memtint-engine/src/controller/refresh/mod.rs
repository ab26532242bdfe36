//! Refresh managers.
pub const NAMES: &[&str] = &["all-bank", "none"];
