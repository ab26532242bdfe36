//! Components' own parameters. A scheduler, row policy, refresh manager or placement policy
//! declares its parameters as a struct in its own file (serde defaults, unknown keys refused) and
//! reads them from its table in the configuration: `[controller.tcm]`, `[os.mcp]`. The section
//! holds the tables by component name (`ParamTables`), so adding a component never adds a field
//! to `ControllerConfig` or `OsConfig`.
//!
//! Parameters that were once flat keys of the section (`controller.tcm_quantum`) are declared by
//! their component as renamed (`ParamSchema::renamed`): they still work, with a deprecation
//! warning, and setting both spellings is an error.

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A component's parameter struct. Derive `Deserialize` with `#[serde(deny_unknown_fields,
/// default)]` so a table may set any subset and a misspelt key is an error.
pub trait Params: Serialize + DeserializeOwned + Default {
    /// Checks serde cannot make: `Err((key, reason))`.
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }

    /// Warnings a run with these values carries in its statistics (a deprecated meaning, say).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A setting's range, with why its ends hold (the message shows it). Sizes and times a run
/// allocates or adds from are checked against one before anything is built from them, so a
/// mistyped value is an error naming its key, not an allocation failure, an overflow or a run
/// that never ends. A real quantity's (`FloatBound`) refuses NaN too, and its positive minimum
/// keeps out 5e-324, whose reciprocal or product overflows far from the key. docs/stats.md lists
/// them.
#[derive(Clone, Copy, Debug)]
pub struct Bound<T = u64> {
    pub min: T,
    pub max: T,
    pub unit: &'static str,
    pub why: &'static str,
}

/// A real quantity's range: a clock, a time, a bandwidth, a power figure.
pub type FloatBound = Bound<f64>;

/// Read and write queue entries per channel.
pub const QUEUE_ENTRIES: Bound = Bound { min: 1, max: 65_536, unit: "entries", why: "real controllers hold 32-128" };

/// A core's or a cache's buffer entries: instruction window, issue width, MSHRs and their waiters.
pub const BUFFER_ENTRIES: Bound = Bound { min: 1, max: 65_536, unit: "entries", why: "real cores and caches hold at most a few hundred" };

/// A machine's DRAM banks, all channels and ranks (the controllers and the checker keep state
/// per bank).
pub const BANKS: Bound = Bound { min: 1, max: 65_536, unit: "banks", why: "a 16-channel machine of 8-rank DDR5 DIMMs has 4096" };

/// A machine's cores.
pub const CORES: Bound = Bound { min: 1, max: 1024, unit: "cores", why: "the largest machines have a few hundred" };

/// A latency or delay in cycles: a controller's front end, a cache hit, a context switch, a DRAM
/// timing. Latencies are recorded in a histogram with one bucket per cycle, so this bounds it too.
pub const LATENCY_CYCLES: Bound =
    Bound { min: 1, max: 100_000, unit: "cycles", why: "100 us at 1 GHz: a hundred times the slowest DRAM access or context switch" };

/// A period in cycles: a scheduler quantum or epoch, a timeout, a balancing interval.
pub const PERIOD_CYCLES: Bound = Bound {
    min: 1,
    max: 1_000_000_000_000,
    unit: "cycles",
    why: "over five minutes at 3.2 GHz; the papers' periods are 10^4 to 10^7 cycles",
};

/// A core's clock.
pub const CORE_GHZ: FloatBound = FloatBound { min: 0.1, max: 100.0, unit: "GHz", why: "real cores run at 1 to 6 GHz" };

/// A DRAM clock period (`tCK_ns`).
pub const CLOCK_NS: FloatBound =
    FloatBound { min: 0.1, max: 100.0, unit: "ns", why: "DDR clocks run between 100 MHz and a few GHz; DDR5-8800's is 0.227 ns" };

/// A bandwidth in GB/s: a node's, a link's, a copy's.
pub const BANDWIDTH_GBPS: FloatBound =
    FloatBound { min: 0.001, max: 100_000.0, unit: "GB/s", why: "a slow link gives a few GB/s, an HBM stack about a thousand" };

/// A bandwidth in MB/s (MiB/s) a migration daemon is limited to.
pub const BANDWIDTH_MBPS: FloatBound =
    FloatBound { min: 1.0, max: 100_000_000.0, unit: "MB/s", why: "more than any memory moves; Linux's default is 65536" };

/// A DRAM retention window (burst refresh, real-time runs).
pub const RETENTION_MS: FloatBound =
    FloatBound { min: 0.001, max: 1000.0, unit: "ms", why: "JEDEC's window is 64 ms, or 32 hot; short ones keep tests quick" };

/// A delay or window in ns that a run converts to cycles.
pub const TIME_NS: FloatBound = FloatBound { min: 1.0, max: 1e12, unit: "ns", why: "a core cycle is under 1 ns; 10^12 ns is 16 minutes" };

impl<T: Copy + PartialOrd + std::fmt::Display> Bound<T> {
    /// The same range from `min`.
    pub const fn from(self, min: T) -> Bound<T> {
        Bound { min, max: self.max, unit: self.unit, why: self.why }
    }

    /// Why `value` is refused, or `None` within the range (NaN is outside every range).
    pub fn refuse(&self, value: T) -> Option<String> {
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        (!(value >= self.min && value <= self.max))
            .then(|| format!("must be between {} and {}{unit} ({}), got {value}", self.min, self.max, self.why))
    }

    /// `value` of `key` within the range, or a configuration error naming `key`.
    pub fn check(&self, key: impl Into<String>, value: T) -> Result<()> {
        self.refuse(value).map_or(Ok(()), |reason| Err(Error::config(key, reason)))
    }

    /// `check` for `Params::check`: the first of `values` (key, value) out of range.
    pub fn check_params(&self, values: &[(&'static str, T)]) -> std::result::Result<(), (&'static str, String)> {
        values.iter().find_map(|&(key, v)| self.refuse(v).map(|reason| (key, reason))).map_or(Ok(()), Err)
    }
}

/// The first of `values` (key, value) that is 0, as a `Params::check` error.
pub fn at_least_one(values: &[(&'static str, u64)]) -> std::result::Result<(), (&'static str, String)> {
    match values.iter().find(|(_, v)| *v == 0) {
        Some(&(key, _)) => Err((key, "must be at least 1".into())),
        None => Ok(()),
    }
}

/// Components without parameters.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {}

/// (old flat key of the section, parameter of the component's table).
pub type Renamed = &'static [(&'static str, &'static str)];

/// Every parameter's value, and the values' warnings.
type Resolved = (Map<String, Value>, Vec<String>);

/// What a component declares of its parameters, type-erased for the registries.
#[derive(Clone, Copy)]
pub struct ParamSchema {
    /// The parameters and their defaults, as a table.
    pub defaults: fn() -> Map<String, Value>,
    /// Parses and checks a table; returns every parameter's value and the values' warnings.
    /// `path` names the table in messages.
    resolve: fn(&Map<String, Value>, &str) -> Result<Resolved>,
    pub renamed: Renamed,
}

impl ParamSchema {
    pub const NONE: ParamSchema = ParamSchema::of::<NoParams>(&[]);

    pub const fn of<P: Params>(renamed: Renamed) -> Self {
        ParamSchema { defaults: defaults_of::<P>, resolve: resolve_of::<P>, renamed }
    }

    pub fn is_empty(&self) -> bool {
        (self.defaults)().is_empty()
    }
}

fn defaults_of<P: Params>() -> Map<String, Value> {
    match serde_json::to_value(P::default()) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn resolve_of<P: Params>(table: &Map<String, Value>, path: &str) -> Result<Resolved> {
    let p: P = parse(table, path)?;
    let values = match serde_json::to_value(&p) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    Ok((values, p.warnings()))
}

fn parse<P: Params>(table: &Map<String, Value>, path: &str) -> Result<P> {
    let p: P = crate::error::from_value(Value::Object(table.clone()), path)?;
    p.check().map_err(|(key, reason)| Error::config(format!("{path}.{key}"), reason))?;
    Ok(p)
}

/// A configuration section's keys that are not its own fields: the components' tables by
/// component name, and renamed flat keys. Serialized flat into the section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ParamTables(BTreeMap<String, Value>);

impl ParamTables {
    /// The names of the tables given (`[os.cat]` gives "cat").
    pub fn table_names(&self) -> Vec<&str> {
        self.0.iter().filter(|(_, v)| v.is_object()).map(|(k, _)| k.as_str()).collect()
    }

    /// Component `name`'s table, with its renamed flat keys folded in.
    fn table(&self, section: &str, name: &str, renamed: Renamed) -> Result<Map<String, Value>> {
        let mut table = match self.0.get(name) {
            Some(Value::Object(t)) => t.clone(),
            _ => Map::new(),
        };
        for &(old, param) in renamed {
            let Some(v) = self.0.get(old).filter(|v| !v.is_object()) else { continue };
            if table.contains_key(param) {
                return Err(Error::config(
                    format!("{section}.{old}"),
                    format!("is the deprecated spelling of {section}.{name}.{param}, which is set too; remove {section}.{old}"),
                ));
            }
            table.insert(param.to_string(), v.clone());
        }
        Ok(table)
    }

    /// Component `name`'s parameters: its table over the defaults, checked.
    pub fn get<P: Params>(&self, section: &str, name: &str, renamed: Renamed) -> Result<P> {
        parse(&self.table(section, name, renamed)?, &format!("{section}.{name}"))
    }

    /// Every parameter of component `name` as the run uses it (table over defaults).
    pub fn resolved(&self, section: &str, name: &str, schema: &ParamSchema) -> Result<Map<String, Value>> {
        Ok((schema.resolve)(&self.table(section, name, schema.renamed)?, &format!("{section}.{name}"))?.0)
    }

    /// Sets one parameter of component `name`'s table.
    pub fn set(&mut self, name: &str, param: &str, value: impl Into<Value>) {
        let entry = self.0.entry(name.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        if let Value::Object(t) = entry {
            t.insert(param.to_string(), value.into());
        }
    }

    /// Checks every table and flat key against the section's components (`(name, schema)` of
    /// each registered one): each table must name a component with parameters and parse, each
    /// flat key must be a renamed parameter. `fields` are the section's own keys, for the
    /// message about an unknown key. Returns the warnings of the components in `in_use` and
    /// the deprecation warnings.
    pub fn check(&self, section: &str, components: &[(&str, ParamSchema)], in_use: &[&str], fields: &[String]) -> Result<Vec<String>> {
        let mut warnings = Vec::new();
        for (key, value) in &self.0 {
            if value.is_object() {
                if !components.iter().any(|(n, s)| n == key && !s.is_empty()) {
                    let with: Vec<&str> = components.iter().filter(|(_, s)| !s.is_empty()).map(|(n, _)| *n).collect();
                    return Err(Error::config(
                        format!("{section}.{key}"),
                        format!("no component with parameters is named '{key}'; tables: {}", with.join(", ")),
                    ));
                }
                continue;
            }
            let owners: Vec<(&str, &str)> =
                components.iter().flat_map(|(n, s)| s.renamed.iter().filter(|(old, _)| old == key).map(move |(_, p)| (*n, *p))).collect();
            if owners.is_empty() {
                return Err(Error::config(
                    format!("{section}.{key}"),
                    format!("unknown key; {section} keys: {}, and a table per component", fields.join(", ")),
                ));
            }
            let new: Vec<String> = owners.iter().map(|(n, p)| format!("[{section}.{n}] {p}")).collect();
            warnings.push(format!("{section}.{key} is deprecated and will be removed: write it as {}", new.join(" and ")));
        }
        for (name, schema) in components {
            let (_, w) = (schema.resolve)(&self.table(section, name, schema.renamed)?, &format!("{section}.{name}"))?;
            if in_use.contains(name) {
                warnings.extend(w);
            }
        }
        Ok(warnings)
    }
}

/// The keys a section's struct serializes (its own fields), for messages.
pub fn field_names<T: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, default)]
    struct Knobs {
        period: u64,
        share: f64,
    }

    impl Default for Knobs {
        fn default() -> Self {
            Knobs { period: 10, share: 0.5 }
        }
    }

    impl Params for Knobs {
        fn check(&self) -> std::result::Result<(), (&'static str, String)> {
            if self.period == 0 {
                return Err(("period", "must be at least 1".into()));
            }
            Ok(())
        }
    }

    const SCHEMA: ParamSchema = ParamSchema::of::<Knobs>(&[("knobs_period", "period")]);

    fn tables(v: Value) -> ParamTables {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_table_sets_some_parameters_over_the_defaults() {
        let t = tables(serde_json::json!({"knobs": {"share": 0.25}}));
        assert_eq!(t.get::<Knobs>("controller", "knobs", SCHEMA.renamed).unwrap(), Knobs { period: 10, share: 0.25 });
        assert_eq!(t.check("controller", &[("knobs", SCHEMA)], &["knobs"], &[]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn a_renamed_flat_key_still_works_with_a_warning() {
        let t = tables(serde_json::json!({"knobs_period": 7}));
        assert_eq!(t.get::<Knobs>("controller", "knobs", SCHEMA.renamed).unwrap().period, 7);
        let w = t.check("controller", &[("knobs", SCHEMA)], &[], &[]).unwrap();
        assert_eq!(w, ["controller.knobs_period is deprecated and will be removed: write it as [controller.knobs] period"]);
        let both = tables(serde_json::json!({"knobs_period": 7, "knobs": {"period": 8}}));
        let e = both.get::<Knobs>("controller", "knobs", SCHEMA.renamed).unwrap_err().to_string();
        assert!(e.contains("controller.knobs_period: is the deprecated spelling of controller.knobs.period"), "{e}");
    }

    #[test]
    fn mistakes_name_the_key() {
        let check =
            |v| tables(v).check("os", &[("knobs", SCHEMA), ("plain", ParamSchema::NONE)], &[], &["policy".into()]).unwrap_err().to_string();
        assert!(check(serde_json::json!({"knobs": {"perod": 1}})).contains("os.knobs: unknown field `perod`"));
        assert!(check(serde_json::json!({"knobs": {"period": 0}})).contains("os.knobs.period: must be at least 1"));
        assert!(check(serde_json::json!({"knobz": {}})).contains("os.knobz: no component with parameters is named 'knobz'; tables: knobs"));
        assert!(check(serde_json::json!({"plain": {}})).contains("no component with parameters is named 'plain'"));
        assert!(check(serde_json::json!({"polcy": "x"})).contains("os.polcy: unknown key; os keys: policy"));
    }

    #[test]
    fn a_bound_without_a_unit_reads_as_a_sentence() {
        let count = Bound { min: 1, max: 8, unit: "", why: "few" };
        assert_eq!(count.refuse(9).unwrap(), "must be between 1 and 8 (few), got 9");
        assert_eq!(QUEUE_ENTRIES.refuse(0).unwrap(), "must be between 1 and 65536 entries (real controllers hold 32-128), got 0");
    }

    #[test]
    fn defaults_are_listed() {
        assert_eq!(Value::Object((SCHEMA.defaults)()), serde_json::json!({"period": 10, "share": 0.5}));
        assert!(ParamSchema::NONE.is_empty());
    }
}
