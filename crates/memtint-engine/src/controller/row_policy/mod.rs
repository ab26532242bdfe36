//! Row policies.
pub const NAMES: &[&str] = &["open", "closed", "timeout"];
