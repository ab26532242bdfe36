//! DRAM energy from datasheet currents, the IDD-based model of Micron's power calculators and
//! DRAMPower (Chandrasekar et al.): each command costs the charge it draws above the standby
//! current it would otherwise draw, and every cycle costs its standby current, active while a
//! bank of the rank is open and precharged otherwise. DDR4's VPP rail (the wordline pump) is
//! counted the same way with its IPP currents. All per device, times the devices of a rank.
//!
//! Per rank, with VDD·IDDx·t read as energy over t:
//! - ACT + its PRE: `(IDD0·tRC − IDD3N·tRAS − IDD2N·(tRC − tRAS))` — the IDD0 loop's charge less
//!   the background it includes;
//! - RD: `(IDD4R − IDD3N)·tBURST`, WR: `(IDD4W − IDD3N)·tBURST` (tBURST = BL/2 cycles);
//! - REF: `(IDD5B − IDD3N)·tRFC`;
//! - REFPB (LPDDR4): `(IDD5PB − IDD2N)·tREFI / banks` — IDD5PB is the average current with a
//!   REFPB every tREFI / banks and the device otherwise in precharged standby, so one REFPB
//!   draws that interval's charge above IDD2N (DRAMPower's LPDDR4 model, with the refreshing
//!   bank counted in precharged rather than active standby: both give the same total when no
//!   other bank is open, and this one does not count a bank open twice when others are);
//! - background: `IDD3N·t_active + IDD2N·t_precharged`, but `IDD3P` and `IDD2P` (fast-exit
//!   power-down) for the cycles a rank spent powered down with a bank open or all precharged
//!   (`controller.power_down_after`), as DRAMPower counts PDEA/PDEP to PDXA/PDXP.
//!
//! Not modelled (said in the statistics): self-refresh (the controllers never enter it), I/O
//! and termination power (board-dependent; DRAMPower leaves them out of its core model too).

use crate::dram::{Organisation, TimingParams};
use crate::params::FloatBound;
use serde::{Deserialize, Serialize};

/// A supply rail's voltage (`vdd`, and `vpp` when given).
const SUPPLY_V: FloatBound = FloatBound { min: 0.3, max: 3.6, unit: "V", why: "DRAM rails run from 0.5 V, LPDDR5X's, to 3.3 V, SDRAM's" };

/// A device's current on one rail.
const CURRENT_MA: FloatBound =
    FloatBound { min: 0.0, max: 10_000.0, unit: "mA", why: "a device draws at most a few hundred (DDR5's IDD4R: 530 mA)" };

/// Currents (mA) and voltages (V) of one device, from its datasheet (`source` cites it).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    pub vdd: f64,
    pub idd0: f64,
    pub idd2n: f64,
    pub idd3n: f64,
    pub idd4r: f64,
    pub idd4w: f64,
    pub idd5b: f64,
    /// DDR4's wordline supply; 0 (absent) on DDR3.
    #[serde(default)]
    pub vpp: f64,
    #[serde(default)]
    pub ipp0: f64,
    #[serde(default)]
    pub ipp2n: f64,
    #[serde(default)]
    pub ipp3n: f64,
    #[serde(default)]
    pub ipp4r: f64,
    #[serde(default)]
    pub ipp4w: f64,
    #[serde(default)]
    pub ipp5b: f64,
    /// Average current under per-bank refresh (JEDEC LPDDR4 IDD5PB), both rails; 0 (absent) on
    /// devices without REFPB.
    #[serde(default)]
    pub idd5pb: f64,
    #[serde(default)]
    pub ipp5pb: f64,
    /// Precharge and active power-down currents, fast exit (JEDEC IDD2P1 and IDD3P; DDR4's
    /// IDD2P and IDD3P), and their VPP rail's; 0 (absent): a run whose ranks power down
    /// reports its energy unavailable.
    #[serde(default)]
    pub idd2p: f64,
    #[serde(default)]
    pub idd3p: f64,
    #[serde(default)]
    pub ipp2p: f64,
    #[serde(default)]
    pub ipp3p: f64,
    /// Where the figures come from.
    pub source: String,
}

impl PowerSpec {
    /// The key and reason of the first value that cannot be a current or voltage; a device
    /// with REFPB (`per_bank`) needs its IDD5PB.
    pub fn validate(&self, per_bank: bool) -> Result<(), (&'static str, String)> {
        let values = [
            ("vdd", self.vdd),
            ("idd0", self.idd0),
            ("idd2n", self.idd2n),
            ("idd3n", self.idd3n),
            ("idd4r", self.idd4r),
            ("idd4w", self.idd4w),
            ("idd5b", self.idd5b),
            ("vpp", self.vpp),
            ("idd5pb", self.idd5pb),
            ("ipp5pb", self.ipp5pb),
            ("idd2p", self.idd2p),
            ("idd3p", self.idd3p),
            ("ipp2p", self.ipp2p),
            ("ipp3p", self.ipp3p),
        ];
        // The wordline supply's (DDR4's VPP) currents.
        let ipp = [
            ("ipp0", self.ipp0),
            ("ipp2n", self.ipp2n),
            ("ipp3n", self.ipp3n),
            ("ipp4r", self.ipp4r),
            ("ipp4w", self.ipp4w),
            ("ipp5b", self.ipp5b),
        ];
        if let Some((k, v)) = values.iter().chain(&ipp).find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return Err((k, format!("must be a number >= 0, got {v}")));
        }
        if self.vdd == 0.0 {
            return Err(("vdd", "must be above 0 V".into()));
        }
        // Finite but unphysical figures overflowed the energy to 150 digits, or to infinity
        // (printed as 0 and null).
        for (k, v) in [("vdd", self.vdd), ("vpp", self.vpp)].into_iter().filter(|&(_, v)| v > 0.0) {
            if let Some(reason) = SUPPLY_V.refuse(v) {
                return Err((k, reason));
            }
        }
        if let Some((k, reason)) =
            values.iter().chain(&ipp).filter(|(k, _)| !k.starts_with('v')).find_map(|&(k, v)| CURRENT_MA.refuse(v).map(|r| (k, r)))
        {
            return Err((k, reason));
        }
        // Each command's current must exceed the standby it is measured over.
        for (k, v, base) in [("idd0", self.idd0, self.idd3n), ("idd4r", self.idd4r, self.idd3n), ("idd4w", self.idd4w, self.idd3n)] {
            if v < base {
                return Err((k, format!("must be at least idd3n ({base} mA), got {v}")));
            }
        }
        if self.idd3n < self.idd2n {
            return Err(("idd3n", format!("must be at least idd2n ({} mA), got {}", self.idd2n, self.idd3n)));
        }
        if self.idd5b < self.idd3n {
            return Err(("idd5b", format!("must be at least idd3n ({} mA), got {}", self.idd3n, self.idd5b)));
        }
        // The wordline supply draws current in every state, and its figures obey the same order
        // as VDD's; a missing one reads as 0, so with vpp set each must be given.
        if self.vpp > 0.0 {
            if let Some((k, _)) = ipp.iter().find(|(_, v)| *v == 0.0) {
                return Err((k, "must be given, above 0 mA: vpp is set and its rail draws current in every state".into()));
            }
            for (k, v, base, of) in [
                ("ipp0", self.ipp0, self.ipp3n, "ipp3n"),
                ("ipp4r", self.ipp4r, self.ipp3n, "ipp3n"),
                ("ipp4w", self.ipp4w, self.ipp3n, "ipp3n"),
                ("ipp5b", self.ipp5b, self.ipp3n, "ipp3n"),
                ("ipp3n", self.ipp3n, self.ipp2n, "ipp2n"),
            ] {
                if v < base {
                    return Err((k, format!("must be at least {of} ({base} mA), got {v}")));
                }
            }
        } else if let Some((k, _)) = ipp.iter().chain(&[("ipp5pb", self.ipp5pb)]).find(|(_, v)| *v > 0.0) {
            return Err((k, "is the vpp rail's current; vpp is 0 (not given)".into()));
        }
        // Power-down draws less than the standby it replaces.
        for (k, v, base, of) in [
            ("idd2p", self.idd2p, self.idd2n, "idd2n"),
            ("idd3p", self.idd3p, self.idd3n, "idd3n"),
            ("ipp2p", self.ipp2p, self.ipp2n, "ipp2n"),
            ("ipp3p", self.ipp3p, self.ipp3n, "ipp3n"),
        ] {
            if v > base {
                return Err((k, format!("must be at most {of} ({base} mA), the standby current it lowers, got {v}")));
            }
        }
        if (self.idd2p > 0.0) != (self.idd3p > 0.0) {
            return Err(("idd2p", "give both idd2p and idd3p (precharge and active power-down), or neither".into()));
        }
        if self.vpp > 0.0 && self.idd2p > 0.0 && (self.ipp2p == 0.0 || self.ipp3p == 0.0) {
            return Err(("ipp2p", "must be given with ipp3p, above 0 mA: vpp is set and idd2p is given".into()));
        }
        if self.vpp == 0.0 && (self.ipp2p > 0.0 || self.ipp3p > 0.0) {
            return Err(("ipp2p", "is the vpp rail's current; vpp is 0 (not given)".into()));
        }
        match (per_bank, self.idd5pb > 0.0 || self.ipp5pb > 0.0) {
            (true, _) if self.idd5pb < self.idd2n => {
                return Err((
                    "idd5pb",
                    format!("must be at least idd2n ({} mA): the device refreshes per bank, got {}", self.idd2n, self.idd5pb),
                ))
            }
            (false, true) => return Err(("idd5pb", "is per-bank refresh current; this device has no REFPB".into())),
            _ => {}
        }
        Ok(())
    }
}

/// What one rank did: command counts and cycles (`ChannelStats`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RankActivity {
    pub activates: u64,
    pub reads: u64,
    pub writes: u64,
    pub refreshes: u64,
    /// REFPBs to its banks.
    pub bank_refreshes: u64,
    /// Cycles with a bank open, and all cycles.
    pub active_cycles: u64,
    pub cycles: u64,
    /// Cycles powered down with a bank open (within `active_cycles`) and with all precharged.
    pub power_down_active_cycles: u64,
    pub power_down_precharged_cycles: u64,
}

/// One rank's energy by component, in nanojoules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RankEnergy {
    pub act_pre_nj: f64,
    pub read_nj: f64,
    pub write_nj: f64,
    pub refresh_nj: f64,
    pub background_active_nj: f64,
    pub background_precharged_nj: f64,
    /// Standby while powered down (IDD3P, IDD2P).
    pub power_down_nj: f64,
    pub total_nj: f64,
}

impl RankEnergy {
    pub fn add(&mut self, o: &RankEnergy) {
        self.act_pre_nj += o.act_pre_nj;
        self.read_nj += o.read_nj;
        self.write_nj += o.write_nj;
        self.refresh_nj += o.refresh_nj;
        self.background_active_nj += o.background_active_nj;
        self.background_precharged_nj += o.background_precharged_nj;
        self.power_down_nj += o.power_down_nj;
        self.total_nj += o.total_nj;
    }
}

/// Energy per command of one rank (all its devices), in nanojoules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandEnergy {
    pub act_pre: f64,
    pub read: f64,
    pub write: f64,
    pub refresh: f64,
    /// One REFPB (0 on devices without one).
    pub bank_refresh: f64,
    /// Per cycle of active and of precharged standby.
    pub active_cycle: f64,
    pub precharged_cycle: f64,
    /// Per cycle powered down with a bank open and with all precharged (0: no figures).
    pub active_power_down_cycle: f64,
    pub precharged_power_down_cycle: f64,
    /// The device file gives power-down currents.
    pub has_power_down: bool,
}

impl CommandEnergy {
    pub fn new(p: &PowerSpec, t: &TimingParams, org: &Organisation) -> Self {
        let devices = (org.bus_width_bits / org.device_width).max(1) as f64;
        // mA · V · ns = pJ; / 1000 for nJ.
        let k = t.tCK_ns * devices / 1000.0;
        let (rc, ras, burst, rfc) = (t.tRC as f64, t.tRAS as f64, t.tBL as f64, t.tRFC as f64);
        let both = |idd: f64, ipp: f64| p.vdd * idd + p.vpp * ipp;
        CommandEnergy {
            act_pre: k * (both(p.idd0, p.ipp0) * rc - both(p.idd3n, p.ipp3n) * ras - both(p.idd2n, p.ipp2n) * (rc - ras)),
            read: k * (both(p.idd4r, p.ipp4r) - both(p.idd3n, p.ipp3n)) * burst,
            write: k * (both(p.idd4w, p.ipp4w) - both(p.idd3n, p.ipp3n)) * burst,
            refresh: k * (both(p.idd5b, p.ipp5b) - both(p.idd3n, p.ipp3n)) * rfc,
            bank_refresh: k * (both(p.idd5pb, p.ipp5pb) - both(p.idd2n, p.ipp2n)).max(0.0) * (t.tREFI as f64 / org.banks_per_rank() as f64),
            active_cycle: k * both(p.idd3n, p.ipp3n),
            precharged_cycle: k * both(p.idd2n, p.ipp2n),
            active_power_down_cycle: k * both(p.idd3p, p.ipp3p),
            precharged_power_down_cycle: k * both(p.idd2p, p.ipp2p),
            has_power_down: p.idd2p > 0.0 && p.idd3p > 0.0,
        }
    }

    pub fn rank(&self, a: &RankActivity) -> RankEnergy {
        let mut e = RankEnergy {
            act_pre_nj: self.act_pre * a.activates as f64,
            read_nj: self.read * a.reads as f64,
            write_nj: self.write * a.writes as f64,
            refresh_nj: self.refresh * a.refreshes as f64 + self.bank_refresh * a.bank_refreshes as f64,
            background_active_nj: self.active_cycle * a.active_cycles.saturating_sub(a.power_down_active_cycles) as f64,
            background_precharged_nj: self.precharged_cycle
                * a.cycles.saturating_sub(a.active_cycles).saturating_sub(a.power_down_precharged_cycles) as f64,
            power_down_nj: self.active_power_down_cycle * a.power_down_active_cycles as f64
                + self.precharged_power_down_cycle * a.power_down_precharged_cycles as f64,
            total_nj: 0.0,
        };
        e.total_nj =
            e.act_pre_nj + e.read_nj + e.write_nj + e.refresh_nj + e.background_active_nj + e.background_precharged_nj + e.power_down_nj;
        e
    }
}
