//! The out-of-order core's parameters. Defaults are Ramulator's trace-driven core: 4-wide,
//! a 128-entry instruction window, 3.2 GHz; plus 16 outstanding misses per core.

use crate::error::Result;
use crate::params::{BUFFER_ENTRIES, CORE_GHZ};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoreConfig {
    /// Instructions inserted into, and retired from, the window per cycle.
    pub issue_width: u32,
    /// Instruction window (reorder buffer) entries.
    pub rob_size: u32,
    /// Loads that may wait for memory at once (L1 MSHRs).
    pub mshrs: u32,
    pub frequency_ghz: f64,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig { issue_width: 4, rob_size: 128, mshrs: 16, frequency_ghz: 3.2 }
    }
}

impl CoreConfig {
    pub fn validate(&self) -> Result<()> {
        BUFFER_ENTRIES.check("core.issue_width", self.issue_width as u64)?;
        BUFFER_ENTRIES.check("core.rob_size", self.rob_size as u64)?;
        BUFFER_ENTRIES.check("core.mshrs", self.mshrs as u64)?;
        CORE_GHZ.check("core.frequency_ghz", self.frequency_ghz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_ramulators_core() {
        let c: CoreConfig = toml::from_str("").unwrap();
        assert_eq!(c, CoreConfig::default());
        assert_eq!((c.issue_width, c.rob_size, c.mshrs), (4, 128, 16));
        c.validate().unwrap();
    }

    #[test]
    fn bad_values_and_unknown_keys_are_errors() {
        let bad = |c: CoreConfig| c.validate().unwrap_err().to_string();
        assert!(bad(CoreConfig { issue_width: 0, ..Default::default() }).contains("core.issue_width"));
        assert!(bad(CoreConfig { rob_size: 0, ..Default::default() }).contains("core.rob_size"));
        assert!(bad(CoreConfig { mshrs: 0, ..Default::default() }).contains("core.mshrs"));
        assert!(bad(CoreConfig { frequency_ghz: 0.0, ..Default::default() }).contains("core.frequency_ghz"));
        // Above 0 but no clock: cycles over it were infinite and the makespan null.
        let e = bad(CoreConfig { frequency_ghz: 5e-324, ..Default::default() });
        assert!(e.contains("core.frequency_ghz: must be between 0.1 and 100 GHz"), "{e}");
        assert!(toml::from_str::<CoreConfig>("rob = 64").unwrap_err().to_string().contains("rob"));
    }
}
