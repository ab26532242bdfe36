//! Which channel-controller implementation runs (`controller.implementation`). Both implement
//! `Controller` and issue the same commands with the same statistics
//! (`tests/engine/lanes_equal_general.rs`); the lane controller is faster and runs the age-ordered
//! schedulers, the general one runs everything.

use super::lane_controller;
use crate::controller::ControllerConfig;
use crate::dram::{Organisation, Standard, TimingParams};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implementation {
    /// `ChannelController`: every scheduler; the reference.
    General,
    /// `LaneController`: FCFS, FR-FCFS, FR-FCFS-Cap, up to 64 banks per channel.
    Lanes,
}

pub const NAMES: &[&str] = &["auto", "general", "lanes"];

impl Implementation {
    /// Check that `name` is a known choice (configuration validation).
    pub fn check_name(name: &str) -> Result<()> {
        if NAMES.contains(&name) {
            Ok(())
        } else {
            Err(Error::config(
                "controller.implementation",
                format!("unknown implementation \"{name}\"; expected one of {}", NAMES.join(", ")),
            ))
        }
    }

    /// The implementation `cfg.implementation` selects for this machine: "auto" is the lane
    /// controller whenever it supports the configuration, else the general one; "lanes" on a
    /// configuration it does not support is an error saying what it does not support.
    pub fn resolve(standard: Standard, org: &Organisation, timing: &TimingParams, cfg: &ControllerConfig) -> Result<Implementation> {
        Self::check_name(&cfg.implementation)?;
        let why = lane_controller::unsupported(standard, org, timing, cfg);
        match (cfg.implementation.as_str(), why) {
            ("general", _) => Ok(Implementation::General),
            (_, None) => Ok(Implementation::Lanes),
            ("auto", Some(_)) => Ok(Implementation::General),
            (_, Some(why)) => {
                Err(Error::config("controller.implementation", format!("\"lanes\" does not support {why}; use \"auto\" or \"general\"")))
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Implementation::General => "general",
            Implementation::Lanes => "lanes",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MachineConfig, MemoryConfig};

    fn resolve(overrides: serde_json::Value) -> Result<Implementation> {
        let m = MachineConfig::load("ddr4-2400").unwrap().with_overrides(&serde_json::json!({ "controller": overrides }))?;
        let mem = MemoryConfig::resolve(&m)?;
        Implementation::resolve(mem.device.standard, &mem.org, &mem.timing, &mem.controller)
    }

    #[test]
    fn auto_runs_lanes_for_age_ordered_schedulers_and_general_for_the_others() {
        assert_eq!(resolve(serde_json::json!({})).unwrap(), Implementation::Lanes);
        for s in ["fcfs", "fr-fcfs", "fr-fcfs-cap"] {
            assert_eq!(resolve(serde_json::json!({"scheduler": s})).unwrap(), Implementation::Lanes, "{s}");
        }
        for s in ["par-bs", "atlas", "tcm", "bliss", "imps", "ccps"] {
            assert_eq!(resolve(serde_json::json!({"scheduler": s})).unwrap(), Implementation::General, "{s}");
            assert_eq!(resolve(serde_json::json!({"scheduler": s, "implementation": "general"})).unwrap(), Implementation::General);
        }
        assert_eq!(resolve(serde_json::json!({"implementation": "general"})).unwrap(), Implementation::General);
    }

    #[test]
    fn lanes_on_an_unsupported_configuration_is_an_error_naming_what() {
        let err = resolve(serde_json::json!({"scheduler": "atlas", "implementation": "lanes"})).unwrap_err().to_string();
        assert!(err.contains("controller.implementation") && err.contains("atlas") && err.contains("general"), "{err}");
        // The bound on latencies keeps every delay within the lane tables' offsets.
        let longest = crate::params::LATENCY_CYCLES.max;
        assert_eq!(resolve(serde_json::json!({"frontend_latency": longest, "implementation": "lanes"})).unwrap(), Implementation::Lanes);
    }

    #[test]
    fn more_banks_or_ranks_than_the_lane_tables_hold_run_the_general_controller_or_are_an_error() {
        let load = |ranks: u32, implementation: &str| {
            let m = MachineConfig::load("ddr3-1333").unwrap().with_overrides(&serde_json::json!({
                "dram": {"ranks": ranks}, "controller": {"implementation": implementation}
            }))?;
            let mem = MemoryConfig::resolve(&m)?;
            Implementation::resolve(mem.device.standard, &mem.org, &mem.timing, &mem.controller)
        };
        assert_eq!(load(8, "auto").unwrap(), Implementation::Lanes);
        assert_eq!(load(16, "auto").unwrap(), Implementation::General);
        let err = load(16, "lanes").unwrap_err().to_string();
        // 16 ranks x 8 banks: 128 banks, above the 64 the tables hold (and so above 8 ranks).
        assert!(err.contains("128 banks per channel") && err.contains("at most 64"), "{err}");
    }

    #[test]
    fn unknown_names_are_config_errors() {
        let err = resolve(serde_json::json!({"implementation": "simd"})).unwrap_err().to_string();
        assert!(err.contains("controller.implementation") && err.contains("simd") && err.contains("lanes"), "{err}");
    }
}
