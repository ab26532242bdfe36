//! A channel controller's settings (`[controller]` in a machine TOML): queue sizes, write
//! handling, the scheduler, row policy and refresh manager by name, and the components' own
//! parameter tables (`crate::params`). Re-exported by `crate::config`, which assembles a whole
//! machine.

use crate::error::{Error, Result};
use crate::params::{field_names, ParamSchema, ParamTables, Params, Renamed, LATENCY_CYCLES, PERIOD_CYCLES, QUEUE_ENTRIES};
use serde::{Deserialize, Serialize};

/// The largest read or write queue a controller takes (entries per channel, `QUEUE_ENTRIES`).
pub const MAX_QUEUE: usize = QUEUE_ENTRIES.max as usize;

/// Whose rule a controller's write handling follows when its `write_*` keys are unset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteHandling {
    /// Real controllers batch writes between watermarks and turn the bus round rarely (the
    /// write-to-read turnaround costs tWTR each time). Values of gem5's `MemCtrl`
    /// (src/mem/MemCtrl.py): 64-entry write queue, drain from 85 % down to 50 %, idle drain
    /// only above the low watermark, at least 16 writes per switch. Intel's write-major mode
    /// works the same way, but its thresholds are not public.
    Batched,
    /// Ramulator 2's `GenericDRAMController`: 32 entries, 80 % / 20 %, and a write drains
    /// whenever the read queue is empty, one at a time.
    Ramulator,
}

impl WriteHandling {
    pub const NAMES: [&'static str; 2] = ["batched", "ramulator"];

    pub fn name(self) -> &'static str {
        match self {
            WriteHandling::Batched => "batched",
            WriteHandling::Ramulator => "ramulator",
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "batched" => Ok(WriteHandling::Batched),
            "ramulator" => Ok(WriteHandling::Ramulator),
            _ => Err(Error::config(
                "controller.write_handling",
                format!("unknown write handling '{name}'; choose one of: {}", Self::NAMES.join(", ")),
            )),
        }
    }

    /// The bundle's values (`idle_drain_min` is resolved by `ControllerConfig::writes`).
    fn settings(self) -> WriteSettings {
        match self {
            WriteHandling::Batched => WriteSettings {
                queue: 64,
                high_watermark: 0.85,
                low_watermark: 0.5,
                idle_drain_min: 0,
                idle_drain_timeout: 1000,
                min_per_switch: 16,
            },
            WriteHandling::Ramulator => WriteSettings {
                queue: 32,
                high_watermark: 0.8,
                low_watermark: 0.2,
                idle_drain_min: 1,
                idle_drain_timeout: 1000,
                min_per_switch: 0,
            },
        }
    }
}

/// A controller's write settings, resolved (`ControllerConfig::writes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriteSettings {
    pub queue: usize,
    pub high_watermark: f64,
    pub low_watermark: f64,
    pub idle_drain_min: usize,
    pub idle_drain_timeout: u64,
    pub min_per_switch: usize,
}

impl WriteSettings {
    /// Writes queued that start a drain: the high watermark, rounded up.
    pub fn high_count(&self) -> usize {
        ((self.queue as f64 * self.high_watermark).ceil() as usize).clamp(1, self.queue.max(1))
    }

    /// Writes queued at or below which a drain may end: the low watermark, rounded down.
    pub fn low_count(&self) -> usize {
        ((self.queue as f64 * self.low_watermark).floor() as usize).min(self.high_count() - 1)
    }
}

/// What a waiting refresh holds back: which banks serve only their activated requests (those
/// whose ACT has issued) until the REF issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshHold {
    /// The refresh's own rank or banks (DRAMSim3: its command queue skips only the refreshing
    /// rank's queues); the rest of the channel is served meanwhile.
    Target,
    /// Every bank of the channel (Ramulator 2's `GenericDRAMController`: while its priority
    /// buffer holds a refresh it schedules only requests whose ACT has issued, of any rank).
    Channel,
}

impl RefreshHold {
    pub const NAMES: [&'static str; 2] = ["target", "channel"];

    pub fn name(self) -> &'static str {
        match self {
            RefreshHold::Target => "target",
            RefreshHold::Channel => "channel",
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "target" => Ok(RefreshHold::Target),
            "channel" => Ok(RefreshHold::Channel),
            _ => Err(Error::config(
                "controller.refresh_holds",
                format!("unknown refresh hold '{name}'; choose one of: {}", Self::NAMES.join(", ")),
            )),
        }
    }
}

/// Controller settings. Defaults: 32-entry read queue, FR-FCFS, open rows, all-bank refresh, and
/// writes handled in batches as real controllers do (`write_handling`).
// Unknown keys are refused by `warnings` (serde cannot refuse them beside a flattened map).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ControllerConfig {
    pub read_queue: usize,
    /// Whose write handling the unset `write_*` keys follow (`WriteHandling`): "batched" (the
    /// default: gem5's `MemCtrl`) or "ramulator" (Ramulator 2's `GenericDRAMController`, for
    /// comparisons with it). A key set explicitly overrides its bundle value.
    pub write_handling: String,
    /// Write queue entries per channel.
    pub write_queue: Option<usize>,
    /// Start draining writes when the write queue is this full (fraction of its size).
    pub write_high_watermark: Option<f64>,
    /// Stop draining when it is down to this fraction (and reads are waiting).
    pub write_low_watermark: Option<f64>,
    /// With no read waiting, start draining once this many writes wait ("batched": more than
    /// the low watermark, as gem5; "ramulator": 1, any write). Fewer writes wait for
    /// `write_idle_drain_timeout`, so a short tail of writes still drains.
    pub write_idle_drain_min: Option<usize>,
    /// With no read waiting, drain anyway once the oldest write has waited this many cycles
    /// (only matters when `write_idle_drain_min` > 1).
    pub write_idle_drain_timeout: Option<u64>,
    /// Writes issued in one write-mode period before waiting reads may end it (gem5's
    /// `min_writes_per_switch`; 0 for Ramulator), unless the write queue empties.
    pub write_min_per_switch: Option<usize>,
    /// A request whose ACT has issued keeps its row until its column command: no PRE or PREA
    /// closes that bank, the oldest ready such request issues first in either direction, and
    /// it no longer counts in its queue's length for watermarks, idle drain and admission.
    /// True (the default) is what real controllers and Ramulator 2 do; false reopens rows a
    /// mode switch or refresh closed under a waiting request (the rule before this setting).
    pub protect_activated: bool,
    pub scheduler: String,
    pub row_policy: String,
    pub refresh: String,
    /// What a refresh waiting to issue holds back (`RefreshHold`): "target" (the default: its
    /// rank, or its banks under a per-bank manager) or "channel" (every rank, as Ramulator 2).
    pub refresh_holds: String,
    /// Cycles from a request's arrival at the controller to the first cycle it may be
    /// scheduled (the front-end/queue insertion delay). Part of the idle latency.
    pub frontend_latency: u64,
    /// Which channel-controller implementation runs: "general" (`ChannelController`, every
    /// scheduler), "lanes" (`LaneController`: fcfs, fr-fcfs, fr-fcfs-cap) or "auto" (lanes when
    /// it supports the configuration, else general). Both issue the same commands with the same
    /// statistics; only simulation speed differs.
    pub implementation: String,
    /// Rank power-down (`controller/power_down.rs`): a rank with nothing queued, no refresh due
    /// and no command for this many DRAM cycles powers down (CKE low) until a request or a
    /// refresh needs it, which then waits tXP. Unset (the default): ranks never power down, as
    /// in gem5's and Ramulator 2's defaults. Needs the device's tXP and tCKE; the general
    /// controller runs it.
    pub power_down_after: Option<u64>,
    /// Seed of randomised scheduler decisions (TCM's random shuffle).
    pub seed: u64,
    /// The components' own parameters, one table each by name (`[controller.tcm]`,
    /// `[controller.timeout]`), declared in the component's file (`crate::params`).
    #[serde(flatten)]
    pub params: ParamTables,
    /// The component tables the run set (its overrides), not its machine: one that the run's
    /// scheduler, row policy or refresh manager does not read is warned of. A machine may carry
    /// a table for every scheduler, as the CCPS presets do, so its own are not.
    #[serde(skip)]
    pub run_tables: Vec<String>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            read_queue: 32,
            write_handling: WriteHandling::Batched.name().into(),
            write_queue: None,
            write_high_watermark: None,
            write_low_watermark: None,
            write_idle_drain_min: None,
            write_idle_drain_timeout: None,
            write_min_per_switch: None,
            protect_activated: true,
            scheduler: "fr-fcfs".into(),
            row_policy: "open".into(),
            refresh: "all-bank".into(),
            refresh_holds: RefreshHold::Target.name().into(),
            frontend_latency: 1,
            implementation: "auto".into(),
            power_down_after: None,
            seed: 1,
            params: ParamTables::default(),
            run_tables: Vec::new(),
        }
    }
}

impl ControllerConfig {
    /// The write settings in force: each `write_*` key as set, else its `write_handling` value.
    pub fn writes(&self) -> Result<WriteSettings> {
        let bundle = WriteHandling::from_name(&self.write_handling)?.settings();
        let queue = self.write_queue.unwrap_or(bundle.queue);
        let mut w = WriteSettings {
            queue,
            high_watermark: self.write_high_watermark.unwrap_or(bundle.high_watermark),
            low_watermark: self.write_low_watermark.unwrap_or(bundle.low_watermark),
            idle_drain_min: 0,
            idle_drain_timeout: self.write_idle_drain_timeout.unwrap_or(bundle.idle_drain_timeout),
            // A bundle's minimum shrinks with a small queue; a value set explicitly is checked.
            min_per_switch: self.write_min_per_switch.unwrap_or(bundle.min_per_switch.min(queue)),
        };
        w.idle_drain_min = match (self.write_idle_drain_min, WriteHandling::from_name(&self.write_handling)?) {
            (Some(n), _) => n,
            (None, WriteHandling::Batched) => (w.low_count() + 1).min(queue.max(1)),
            (None, WriteHandling::Ramulator) => 1,
        };
        Ok(w)
    }

    pub fn validate(&self) -> Result<()> {
        // Components by name, checked here so a machine file's mistake is named by its key.
        let key = |key: &'static str| move |e: Error| Error::config(format!("controller.{key}"), e.to_string());
        crate::controller::scheduler::info(&self.scheduler).map_err(key("scheduler"))?;
        crate::controller::row_policy::ROW_POLICIES.get(&self.row_policy).map_err(key("row_policy"))?;
        crate::controller::refresh::REFRESH_MANAGERS.get(&self.refresh).map_err(key("refresh"))?;
        RefreshHold::from_name(&self.refresh_holds)?;
        let w = self.writes()?;
        QUEUE_ENTRIES.check("controller.read_queue", self.read_queue as u64)?;
        QUEUE_ENTRIES.check("controller.write_queue", w.queue as u64)?;
        let (hi, lo) = (w.high_watermark, w.low_watermark);
        if !(0.0..=1.0).contains(&hi) || !(0.0..=1.0).contains(&lo) || lo > hi {
            return Err(Error::config(
                "controller.write_low_watermark",
                format!("watermarks must satisfy 0 <= low <= high <= 1, got low {lo}, high {hi}"),
            ));
        }
        if w.idle_drain_min == 0 || w.idle_drain_min > w.queue {
            return Err(Error::config(
                "controller.write_idle_drain_min",
                format!("must be between 1 and write_queue ({}), got {}", w.queue, w.idle_drain_min),
            ));
        }
        PERIOD_CYCLES.check("controller.write_idle_drain_timeout", w.idle_drain_timeout)?;
        if w.min_per_switch > w.queue {
            return Err(Error::config(
                "controller.write_min_per_switch",
                format!("must be at most write_queue ({}), got {}", w.queue, w.min_per_switch),
            ));
        }
        LATENCY_CYCLES.check("controller.frontend_latency", self.frontend_latency)?;
        crate::controller::Implementation::check_name(&self.implementation)?;
        if let Some(n) = self.power_down_after {
            PERIOD_CYCLES.check("controller.power_down_after", n)?;
        }
        self.warnings()?;
        Ok(())
    }
}

impl ControllerConfig {
    /// Component `name`'s parameters (`[controller.<name>]`), checked; `renamed` are its
    /// deprecated flat keys.
    pub fn params<P: Params>(&self, name: &str, renamed: Renamed) -> Result<P> {
        self.params.get("controller", name, renamed)
    }

    /// This configuration with `[controller.<component>] <param> = value`.
    pub fn with_param(mut self, component: &str, param: &str, value: impl Into<serde_json::Value>) -> Self {
        self.params.set(component, param, value);
        self
    }

    /// What a run of `cycles` controller cycles with this configuration is warned about:
    /// `warnings`, and scheduler periods the run is too short for.
    pub fn run_warnings(&self, cycles: crate::Cycle) -> Vec<String> {
        let mut out = self.warnings().unwrap_or_default();
        out.extend(crate::controller::scheduler::run_warnings(self, cycles));
        out
    }

    /// Checks every component table and flat key, and returns the warnings a run carries:
    /// deprecated keys, and what the scheduler, row policy and refresh manager in use say of
    /// their values.
    pub fn warnings(&self) -> Result<Vec<String>> {
        use crate::controller::{refresh::REFRESH_MANAGERS, row_policy::ROW_POLICIES, scheduler::SCHEDULERS};
        let in_use = [self.scheduler.as_str(), self.row_policy.as_str(), self.refresh.as_str()];
        let mut warnings = self.params.check("controller", &components(), &in_use, &field_names::<ControllerConfig>())?;
        let owned = [
            ("scheduler", self.scheduler.as_str(), SCHEDULERS.names()),
            ("row_policy", self.row_policy.as_str(), ROW_POLICIES.names()),
            ("refresh", self.refresh.as_str(), REFRESH_MANAGERS.names()),
        ];
        for name in &self.run_tables {
            for (selector, chosen, names) in &owned {
                if names.contains(&name.as_str()) && name != chosen {
                    warnings.push(format!("[controller.{name}] is set but controller.{selector} = \"{chosen}\": nothing reads it"));
                }
            }
        }
        // With one write enough to drain an idle queue, no write ever waits for the timeout.
        if self.write_idle_drain_timeout.is_some() && self.writes().is_ok_and(|w| w.idle_drain_min == 1) {
            warnings.push(
                "controller.write_idle_drain_timeout is set but write_idle_drain_min is 1 (as write_handling = \"ramulator\" has it): \
                 an idle queue drains at its first write, so nothing waits for the timeout"
                    .to_string(),
            );
        }
        Ok(warnings)
    }

    /// The parameters of the scheduler, row policy and refresh manager in use, every value as
    /// the run uses it, by component name (those without parameters left out).
    pub fn params_in_use(&self) -> Result<serde_json::Map<String, serde_json::Value>> {
        let mut out = serde_json::Map::new();
        for (name, schema) in components() {
            if [&self.scheduler, &self.row_policy, &self.refresh].iter().any(|n| n.as_str() == name) && !schema.is_empty() {
                out.insert(name.to_string(), self.params.resolved("controller", name, &schema)?.into());
            }
        }
        Ok(out)
    }
}

/// Every registered scheduler, row policy and refresh manager with its parameter schema.
fn components() -> Vec<(&'static str, ParamSchema)> {
    use crate::controller::{refresh::REFRESH_MANAGERS, row_policy::ROW_POLICIES, scheduler::SCHEDULERS};
    let mut out: Vec<(&str, ParamSchema)> = Vec::new();
    out.extend(SCHEDULERS.all().iter().map(|c| (c.name, c.params)));
    out.extend(ROW_POLICIES.all().iter().map(|c| (c.name, c.params)));
    out.extend(REFRESH_MANAGERS.all().iter().map(|c| (c.name, c.params)));
    out
}
