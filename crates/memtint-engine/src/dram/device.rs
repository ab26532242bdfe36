//! Device presets: one speed bin of one standard, with the organisations it comes in.
//! Loaded from the TOML files under `configs/devices/` (data, not code).

use crate::dram::{Organisation, Standard, TimingParams};
use crate::error::{Error, Result};
use crate::params::{Bound, CLOCK_NS, LATENCY_CYCLES};

/// Column commands a throttle window admits (`timing.column_window_commands`).
const COLUMN_COMMANDS: Bound =
    Bound { min: 1, max: 100_000, unit: "commands", why: "a window holds as many bursts as its cycles allow at most" };
use serde::Deserialize;

/// A speed bin as written in its preset file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    pub name: String,
    pub standard: Standard,
    pub speed_bin: String,
    pub data_rate_mts: u32,
    timing: RawTiming,
    organisation: Vec<DeviceOrganisation>,
}

/// One device density/width of a speed bin.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceOrganisation {
    pub density_gbit: u32,
    pub device_width: u32,
    /// DDR3: banks per device (one bank group).
    #[serde(default)]
    pub banks: Option<u32>,
    #[serde(default)]
    pub bank_groups: Option<u32>,
    #[serde(default)]
    pub banks_per_group: Option<u32>,
    pub rows: u32,
    pub columns: u32,
    #[serde(rename = "tRFC_ns")]
    pub trfc_ns: f64,
    /// Per-bank refresh cycle time (LPDDR4's tRFCpb; only devices with REFPB give it).
    #[serde(rename = "tRFCpb_ns", default)]
    pub trfcpb_ns: Option<f64>,
    /// Same-bank refresh cycle time (DDR5's tRFCsb; only devices with REFSB give it).
    #[serde(rename = "tRFCsb_ns", default)]
    pub trfcsb_ns: Option<f64>,
    /// Datasheet currents and voltages for the energy model (`dram/energy.rs`); `None`: the
    /// device's energy is not reported.
    #[serde(default)]
    pub power: Option<super::energy::PowerSpec>,
}

/// Timing table as written: DDR3 files name `tCCD`, DDR4 files `tCCD_S`/`tCCD_L`, and so on.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct RawTiming {
    tCK_ns: f64,
    CL: u64,
    CWL: u64,
    tRCD: u64,
    tRP: u64,
    tRAS: u64,
    tRC: u64,
    tBL: u64,
    tCCD: Option<u64>,
    tCCD_S: Option<u64>,
    tCCD_L: Option<u64>,
    /// DDR5: WR -> WR in one bank group.
    tCCD_L_WR: Option<u64>,
    tRRD: Option<u64>,
    tRRD_S: Option<u64>,
    tRRD_L: Option<u64>,
    tFAW: u64,
    tWTR: Option<u64>,
    tWTR_S: Option<u64>,
    tWTR_L: Option<u64>,
    tRTP: u64,
    tWR: u64,
    tRTRS: u64,
    tREFI: u64,
    /// LPDDR4: REFPB to REFPB of a rank.
    tPBR2PBR: Option<u64>,
    /// DDR5: REFSB to ACT or REFSB of other banks of a rank.
    tREFSBRD: Option<u64>,
    /// Power-down: exit to the next command (fast exit), and the least time powered down.
    tXP: Option<u64>,
    tCKE: Option<u64>,
    /// DDR5: PRE or PREA to PRE or PREA of a rank.
    tPPD: Option<u64>,
    /// A throttle, not a JEDEC rule: at most `column_window_commands` column commands per
    /// channel in any `column_window` cycles (a memory controller's bandwidth throttling, as
    /// Quartz uses to emulate a slow tier).
    column_window: Option<u64>,
    column_window_commands: Option<u64>,
}

fn pair(name: &str, both: Option<u64>, s: Option<u64>, l: Option<u64>) -> Result<(u64, u64)> {
    match (both, s, l) {
        (Some(v), None, None) => Ok((v, v)),
        (None, Some(s), Some(l)) => Ok((s, l)),
        _ => Err(Error::config(format!("timing.{name}"), format!("give either {name} or both {name}_S and {name}_L"))),
    }
}

/// Nanoseconds to whole cycles, rounding up (JEDEC minimums), tolerant of float noise.
pub fn ns_to_cycles(ns: f64, tck_ns: f64) -> u64 {
    (ns / tck_ns - 1e-6).ceil().max(0.0) as u64
}

impl RawTiming {
    /// Every value as (key, value, least value); `tRTRS` may be 0 (no idle cycle between ranks).
    fn cycles(&self) -> Vec<(&'static str, u64, u64)> {
        let mut out = vec![
            ("CL", self.CL, 1),
            ("CWL", self.CWL, 1),
            ("tRCD", self.tRCD, 1),
            ("tRP", self.tRP, 1),
            ("tRAS", self.tRAS, 1),
            ("tRC", self.tRC, 1),
            ("tBL", self.tBL, 1),
            ("tFAW", self.tFAW, 1),
            ("tRTP", self.tRTP, 1),
            ("tWR", self.tWR, 1),
            ("tRTRS", self.tRTRS, 0),
            ("tREFI", self.tREFI, 1),
        ];
        let optional = [
            ("tCCD", self.tCCD),
            ("tCCD_S", self.tCCD_S),
            ("tCCD_L", self.tCCD_L),
            ("tCCD_L_WR", self.tCCD_L_WR),
            ("tRRD", self.tRRD),
            ("tRRD_S", self.tRRD_S),
            ("tRRD_L", self.tRRD_L),
            ("tWTR", self.tWTR),
            ("tWTR_S", self.tWTR_S),
            ("tWTR_L", self.tWTR_L),
            ("tPBR2PBR", self.tPBR2PBR),
            ("tREFSBRD", self.tREFSBRD),
            ("tXP", self.tXP),
            ("tCKE", self.tCKE),
            ("tPPD", self.tPPD),
            ("column_window", self.column_window),
        ];
        out.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v, 1))));
        out
    }
}

impl DeviceSpec {
    pub fn from_toml(text: &str, origin: &str) -> Result<Self> {
        let spec: DeviceSpec = crate::error::from_toml(text, origin)?;
        spec.validate(origin)?;
        Ok(spec)
    }

    /// What a JEDEC device satisfies and the engine relies on (a timing of 0 cycles, a clock
    /// of 0 ns, refresh that takes longer than its interval would stall a run or make its
    /// figures garbage); each error names the file and the key.
    fn validate(&self, origin: &str) -> Result<()> {
        let at = |key: &str| format!("{origin}: {key}");
        let t = &self.timing;
        CLOCK_NS.check(at("timing.tCK_ns"), t.tCK_ns)?;
        // The name's rate is two transfers a clock (a mismatch mislabels every listing of it).
        let rate = 2000.0 / t.tCK_ns;
        if (self.data_rate_mts as f64 - rate).abs() > 0.01 * rate {
            return Err(Error::config(
                at("data_rate_mts"),
                format!("must be two transfers per clock of tCK_ns ({rate:.0} MT/s at {} ns), got {}", t.tCK_ns, self.data_rate_mts),
            ));
        }
        for (key, v, min) in t.cycles() {
            LATENCY_CYCLES.from(min).check(at(&format!("timing.{key}")), v)?;
        }
        if let Some(n) = t.column_window_commands {
            COLUMN_COMMANDS.check(at("timing.column_window_commands"), n)?;
        }
        let base = self.timing_base().map_err(|e| match e {
            Error::Config { field, reason } => Error::config(at(&field), reason),
            e => e,
        })?;
        // A bank group's own distances are never shorter than those across groups (JEDEC's _L >= _S).
        for (name, s, l) in [("tCCD", t.tCCD_S, t.tCCD_L), ("tRRD", t.tRRD_S, t.tRRD_L), ("tWTR", t.tWTR_S, t.tWTR_L)] {
            if let (Some(s), Some(l)) = (s, l) {
                if l < s {
                    return Err(Error::config(at(&format!("timing.{name}_L")), format!("must be at least {name}_S ({s}), got {l}")));
                }
            }
        }
        // DDR5's longer write-to-write distance in a bank group: its devices give it (a
        // missing one would run writes faster than the part), no other standard has it.
        let needed = self.standard.has_write_to_write_same_group();
        if t.tCCD_L_WR.is_some() != needed {
            let reason = if needed {
                format!("is required: {} devices space writes to one bank group by tCCD_L_WR", self.standard.name())
            } else {
                format!("is DDR5's write-to-write distance in a bank group; {} devices space writes by tCCD", self.standard.name())
            };
            return Err(Error::config(at("timing.tCCD_L_WR"), reason));
        }
        // DDR5's precharge-to-precharge distance: its devices give it, no other standard here has it.
        let needed = self.standard.has_precharge_to_precharge();
        if t.tPPD.is_some() != needed {
            let reason = if needed {
                format!("is required: {} devices space a rank's precharges by tPPD", self.standard.name())
            } else {
                format!("is DDR5's precharge-to-precharge distance; {} devices have no tPPD", self.standard.name())
            };
            return Err(Error::config(at("timing.tPPD"), reason));
        }
        if base.tCCD_L_WR < base.tCCD_L {
            return Err(Error::config(
                at("timing.tCCD_L_WR"),
                format!("must be at least tCCD_L ({}), got {}", base.tCCD_L, base.tCCD_L_WR),
            ));
        }
        // A burst holds the data bus for tBL cycles: column commands closer than that would
        // overlap their data (and report more bandwidth than the bus has).
        if let Some(s) = t.tCCD_S.or(t.tCCD) {
            if s < t.tBL {
                let key = if t.tCCD_S.is_some() { "timing.tCCD_S" } else { "timing.tCCD" };
                return Err(Error::config(
                    at(key),
                    format!("must be at least tBL ({}): bursts would overlap on the data bus, got {s}", t.tBL),
                ));
            }
        }
        // A row stays open at least until its column command, and a row cycle is its open and
        // precharge times (JEDEC defines tRC = tRAS + tRP).
        if t.tRAS < t.tRCD {
            return Err(Error::config(at("timing.tRAS"), format!("must be at least tRCD ({}), got {}", t.tRCD, t.tRAS)));
        }
        if t.tRC < t.tRAS + t.tRP {
            return Err(Error::config(at("timing.tRC"), format!("must be at least tRAS + tRP ({}), got {}", t.tRAS + t.tRP, t.tRC)));
        }
        if self.organisation.is_empty() {
            return Err(Error::config(at("organisation"), "no organisation listed"));
        }
        // Per-bank and same-bank refresh timing belong to the standards with REFPB or REFSB,
        // and they need it.
        type Given = fn(&DeviceOrganisation) -> bool;
        let kinds: [(bool, &str, &str, &str, bool, &str, Given); 2] = [
            (self.standard.has_per_bank_refresh(), "REFPB", "per-bank", "tPBR2PBR", t.tPBR2PBR.is_some(), "tRFCpb_ns", |o| {
                o.trfcpb_ns.is_some()
            }),
            (self.standard.has_same_bank_refresh(), "REFSB", "same-bank", "tREFSBRD", t.tREFSBRD.is_some(), "tRFCsb_ns", |o| {
                o.trfcsb_ns.is_some()
            }),
        ];
        for (needed, command, what, timing_key, timing_given, org_key, given) in kinds {
            let keys = std::iter::once((format!("timing.{timing_key}"), timing_given))
                .chain(self.organisation.iter().enumerate().map(|(i, o)| (format!("organisation[{i}].{org_key}"), given(o))));
            for (key, given) in keys {
                if given != needed {
                    let reason = if needed {
                        format!("is required: {} devices refresh {} ({command})", self.standard.name(), what.replace('-', " "))
                    } else {
                        format!("is {what} refresh timing; {} devices have no {command}", self.standard.name())
                    };
                    return Err(Error::config(at(&key), reason));
                }
            }
        }
        for (i, o) in self.organisation.iter().enumerate() {
            let (groups, banks) = self.banks_of(o).map_err(|reason| Error::config(at(&format!("organisation[{i}]")), reason))?;
            let banks_key = if self.standard.has_bank_groups() { "banks_per_group" } else { "banks" };
            for (name, v) in [("rows", o.rows), ("columns", o.columns), ("bank_groups", groups), (banks_key, banks)] {
                if v == 0 || !v.is_power_of_two() {
                    return Err(Error::config(
                        at(&format!("organisation[{i}].{name}")),
                        format!("must be a non-zero power of two, got {v}"),
                    ));
                }
            }
            // Within the general controller's candidate sets, 64-bit masks over a group's banks.
            if banks > 32 {
                return Err(Error::config(
                    at(&format!("organisation[{i}].{banks_key}")),
                    format!("must be at most 32 (devices have 2 to 8), got {banks}"),
                ));
            }
            // Address bits select the levels, so a device's width and its cells are powers of
            // two, and they add up to the density the machine selects it by.
            if o.device_width == 0 || !o.device_width.is_power_of_two() {
                return Err(Error::config(
                    at(&format!("organisation[{i}].device_width")),
                    format!("must be a power of two (x4, x8, x16, ...), got {}", o.device_width),
                ));
            }
            let bits = o.rows as u128 * o.columns as u128 * (groups * banks) as u128 * o.device_width as u128;
            if bits != (o.density_gbit as u128) << 30 {
                return Err(Error::config(
                    at(&format!("organisation[{i}]")),
                    format!(
                        "rows x columns x banks x device_width = {} x {} x {} x {} is {} Gbit, not its density_gbit {}",
                        o.rows,
                        o.columns,
                        groups * banks,
                        o.device_width,
                        bits as f64 / (1u64 << 30) as f64,
                        o.density_gbit
                    ),
                ));
            }
            if let Some(j) =
                self.organisation[..i].iter().position(|p| (p.density_gbit, p.device_width) == (o.density_gbit, o.device_width))
            {
                return Err(Error::config(
                    at(&format!("organisation[{i}]")),
                    format!(
                        "{}Gb x{} is listed twice (organisation[{j}] too): a machine selects one by density and width",
                        o.density_gbit, o.device_width
                    ),
                ));
            }
            let key = format!("organisation[{i}].tRFC_ns");
            if o.trfc_ns.is_nan() || o.trfc_ns <= 0.0 {
                return Err(Error::config(at(&key), format!("must be above 0 ns, got {}", o.trfc_ns)));
            }
            if let Some(p) = &o.power {
                p.validate(self.standard.has_per_bank_refresh())
                    .map_err(|(k, reason)| Error::config(at(&format!("organisation[{i}].power.{k}")), reason))?;
            }
            let t_rfc = ns_to_cycles(o.trfc_ns, t.tCK_ns);
            for (key, part) in [("tRFCpb_ns", o.trfcpb_ns), ("tRFCsb_ns", o.trfcsb_ns)] {
                // A bank's refresh is part of the rank's: JEDEC's tRFCpb and tRFCsb are under tRFC.
                if let Some(v) = part.filter(|v| v.is_nan() || *v <= 0.0 || *v > o.trfc_ns) {
                    return Err(Error::config(
                        at(&format!("organisation[{i}].{key}")),
                        format!("must be above 0 and at most tRFC_ns ({} ns), got {v}", o.trfc_ns),
                    ));
                }
                // Above 0 ns but under a cycle would refresh a bank in no time.
                if let Some(v) = part.filter(|&v| ns_to_cycles(v, t.tCK_ns) == 0) {
                    return Err(Error::config(
                        at(&format!("organisation[{i}].{key}")),
                        format!("is 0 cycles of {} ns; must be at least one cycle, got {v}", t.tCK_ns),
                    ));
                }
            }
            LATENCY_CYCLES.check(at(&key), t_rfc).map_err(|_| {
                Error::config(
                    at(&key),
                    format!("is {t_rfc} cycles of {} ns; {}", t.tCK_ns, LATENCY_CYCLES.refuse(t_rfc).unwrap_or_default()),
                )
            })?;
            // JEDEC devices refresh for under a tenth of tREFI; with no row cycle between two
            // refreshes a rank never serves a request.
            if t.tREFI <= t_rfc + t.tRC {
                return Err(Error::config(
                    at("timing.tREFI"),
                    format!(
                        "must exceed tRFC + tRC ({t_rfc} + {} cycles, organisation[{i}]) to leave a row cycle between refreshes, got {}",
                        t.tRC, t.tREFI
                    ),
                ));
            }
        }
        Ok(())
    }

    #[allow(non_snake_case)]
    fn timing_base(&self) -> Result<TimingParams> {
        let t = &self.timing;
        let (tCCD_S, tCCD_L) = pair("tCCD", t.tCCD, t.tCCD_S, t.tCCD_L)?;
        let (tRRD_S, tRRD_L) = pair("tRRD", t.tRRD, t.tRRD_S, t.tRRD_L)?;
        let (tWTR_S, tWTR_L) = pair("tWTR", t.tWTR, t.tWTR_S, t.tWTR_L)?;
        let (col_window, col_window_commands) = match (t.column_window, t.column_window_commands) {
            (None, None) => (0, 0),
            (Some(w), Some(n)) if w >= n * t.tBL => (w, n),
            (Some(w), Some(n)) => {
                return Err(Error::config(
                    "timing.column_window",
                    format!("{w} cycles cannot hold {n} column commands of tBL = {} cycles each: give at least {}", t.tBL, n * t.tBL),
                ))
            }
            _ => return Err(Error::config("timing.column_window", "give both column_window and column_window_commands, or neither")),
        };
        if t.tXP.is_some() != t.tCKE.is_some() {
            return Err(Error::config("timing.tXP", "give both tXP and tCKE (power-down exit and least residency), or neither"));
        }
        #[allow(non_snake_case)]
        Ok(TimingParams {
            tCK_ns: t.tCK_ns,
            CL: t.CL,
            CWL: t.CWL,
            tRCD: t.tRCD,
            tRP: t.tRP,
            tRAS: t.tRAS,
            tRC: t.tRC,
            tBL: t.tBL,
            tCCD_S,
            tCCD_L,
            tCCD_L_WR: t.tCCD_L_WR.unwrap_or(tCCD_L),
            tRRD_S,
            tRRD_L,
            tFAW: t.tFAW,
            tWTR_S,
            tWTR_L,
            tRTP: t.tRTP,
            tWR: t.tWR,
            tRTRS: t.tRTRS,
            tRFC: 0,
            tREFI: t.tREFI,
            tRFCpb: 0,
            tPBR2PBR: t.tPBR2PBR.unwrap_or(0),
            tRFCsb: 0,
            tREFSBRD: t.tREFSBRD.unwrap_or(0),
            tXP: t.tXP.unwrap_or(0),
            tCKE: t.tCKE.unwrap_or(0),
            tPPD: t.tPPD.unwrap_or(0),
            col_window,
            col_window_commands,
        })
    }

    /// (bank groups, banks per group) of `o` as its standard gives them.
    fn banks_of(&self, o: &DeviceOrganisation) -> std::result::Result<(u32, u32), &'static str> {
        match (self.standard.has_bank_groups(), o.banks, o.bank_groups, o.banks_per_group) {
            (false, Some(b), None, None) => Ok((1, b)),
            (true, None, Some(g), Some(b)) => Ok((g, b)),
            _ => Err("DDR2, DDR3 and LPDDR4 devices give `banks`; DDR4 and DDR5 devices give `bank_groups` and `banks_per_group`"),
        }
    }

    /// The densities and widths this speed bin comes in.
    pub fn organisations(&self) -> &[DeviceOrganisation] {
        &self.organisation
    }

    pub fn densities(&self) -> Vec<u32> {
        self.organisation.iter().map(|o| o.density_gbit).collect()
    }

    fn organisation_for(&self, density_gbit: u32, device_width: u32) -> Result<&DeviceOrganisation> {
        self.organisation.iter().find(|o| o.density_gbit == density_gbit && o.device_width == device_width).ok_or_else(|| {
            let valid: Vec<String> = self.organisation.iter().map(|o| format!("{}Gb x{}", o.density_gbit, o.device_width)).collect();
            // The key at fault: the width when the density exists in another width.
            let key = if self.densities().contains(&density_gbit) { "dram.device_width" } else { "dram.density_gbit" };
            Error::config(
                key,
                format!("{} has no {}Gb x{} device; it comes as {}", self.name, density_gbit, device_width, valid.join(", ")),
            )
        })
    }

    /// The power figures of one density and width, if the device file gives them.
    pub fn power(&self, density_gbit: u32, device_width: u32) -> Option<&super::energy::PowerSpec> {
        self.organisation_for(density_gbit, device_width).ok().and_then(|o| o.power.as_ref())
    }

    /// Timing of this speed bin for one density (tRFC depends on density).
    pub fn timing(&self, density_gbit: u32, device_width: u32) -> Result<TimingParams> {
        let o = self.organisation_for(density_gbit, device_width)?;
        let mut t = self.timing_base()?;
        t.tRFC = ns_to_cycles(o.trfc_ns, t.tCK_ns);
        t.tRFCpb = o.trfcpb_ns.map_or(0, |ns| ns_to_cycles(ns, t.tCK_ns));
        t.tRFCsb = o.trfcsb_ns.map_or(0, |ns| ns_to_cycles(ns, t.tCK_ns));
        Ok(t)
    }

    /// The organisation of a memory system built from these devices.
    pub fn organisation(
        &self,
        density_gbit: u32,
        device_width: u32,
        channels: u32,
        ranks: u32,
        bus_width_bits: u32,
    ) -> Result<Organisation> {
        let o = self.organisation_for(density_gbit, device_width)?;
        let (bank_groups, banks_per_group) =
            self.banks_of(o).map_err(|reason| Error::config(format!("{}: organisation", self.name), reason))?;
        let org = Organisation {
            channels,
            ranks,
            bank_groups,
            banks_per_group,
            rows: o.rows,
            columns: o.columns,
            bus_width_bits,
            device_width,
            burst_length: self.standard.burst_length(),
            density_gbit,
        };
        org.validate()?;
        Ok(org)
    }
}
