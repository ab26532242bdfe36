//! Per-bank refresh (LPDDR4's REFPB, Ramulator's and DRAMSim3's per-bank policies): each bank
//! gets one REFPB every tREFI, the banks of a rank in turn tREFI / banks apart (JEDEC's
//! tREFIpb), the ranks' turns interleaved, so one bank at a time is unavailable for tRFCpb while
//! the others serve requests. A bank waiting for its REFPB is closed (PRE) and refreshed; the
//! rest of its rank is not held. The schedule is fixed, so a late REFPB does not drift the
//! rate.
//!
//! - `postpone` n (at most 8, as JEDEC's all-bank limit): a REFPB falling due while its bank
//!   has requests queued waits while the bank is busy, at most until n tREFI after it fell
//!   due less half a tREFI, as `all-bank`'s postponement does for a rank.
//!
//! Runs on devices with REFPB only (LPDDR4), on the general controller.

use super::{RefreshContext, RefreshDevice, RefreshInfo, RefreshManager, RefreshObligation, RefreshTargets};
use crate::controller::ControllerConfig;
use crate::error::{Error, Result};
use crate::params::{ParamSchema, Params};
use crate::Cycle;
use serde::{Deserialize, Serialize};

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "per-bank",
    summary: "one REFPB per bank every tREFI, a rank's banks in turn tREFI / banks apart (LPDDR4)",
    params: ParamSchema::of::<PerBankParams>(&[]),
    timing,
    build: |cfg, ctx| Ok(Box::new(PerBank::with(ctx, &cfg.params::<PerBankParams>(INFO.name, &[])?))),
};

/// `[controller.per-bank]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PerBankParams {
    /// REFPBs a busy bank may owe before refresh takes it (0: each issues when due).
    pub postpone: u32,
}

impl Params for PerBankParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        let max = super::all_bank::MAX_POSTPONED;
        if self.postpone > max {
            return Err(("postpone", format!("must be at most {max} (JEDEC's limit on postponed refreshes), got {}", self.postpone)));
        }
        Ok(())
    }
}

/// The device's tREFI and tRFC; refused on a device without REFPB.
fn timing(cfg: &ControllerConfig, d: &RefreshDevice) -> Result<(u64, u64)> {
    cfg.params::<PerBankParams>(INFO.name, &[])?;
    if !d.standard.has_per_bank_refresh() {
        return Err(Error::config(
            "controller.refresh",
            format!(
                "\"per-bank\" issues REFPB, which {} devices lack (LPDDR4 devices have it); use {}",
                d.standard.name(),
                if d.standard.has_same_bank_refresh() { "\"same-bank\" or \"all-bank\"" } else { "\"all-bank\"" }
            ),
        ));
    }
    Ok((d.t_refi, d.t_rfc))
}

/// Also `same-bank`'s, whose targets are bank indices.
pub struct PerBank {
    targets: RefreshTargets,
    t_refi: u64,
    due: Vec<Cycle>,
    postpone: u32,
}

impl PerBank {
    pub fn with(ctx: &RefreshContext, p: &PerBankParams) -> Self {
        PerBank::of(ctx, p.postpone, RefreshTargets::Banks, ctx.banks_per_rank)
    }

    /// `banks` targets per rank, each refreshed once per tREFI, a rank's in turn.
    pub fn of(ctx: &RefreshContext, postpone: u32, targets: RefreshTargets, banks: u32) -> Self {
        let (ranks, banks) = (ctx.ranks as u64, banks as u64);
        let slots = ranks * banks;
        // Target b of rank r takes turn b * ranks + r of the channel's slots per tREFI.
        let due = (0..slots).map(|t| ctx.t_refi * ((t % banks) * ranks + t / banks + 1) / slots).collect();
        PerBank { targets, t_refi: ctx.t_refi, due, postpone }
    }
}

impl RefreshManager for PerBank {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn targets(&self) -> RefreshTargets {
        self.targets
    }
    fn due(&self, bank: u32) -> Cycle {
        self.due[bank as usize]
    }
    fn next_due(&self) -> Cycle {
        self.due.iter().copied().min().unwrap_or(crate::NEVER)
    }
    fn refreshed(&mut self, bank: u32, _now: Cycle) {
        self.due[bank as usize] += self.t_refi;
    }
    fn period(&self) -> Option<u64> {
        Some(self.t_refi)
    }
    fn refreshed_many(&mut self, bank: u32, n: u64) {
        self.due[bank as usize] += n * self.t_refi;
    }
    fn postpones(&self) -> bool {
        self.postpone > 0
    }
    fn may_postpone(&self, bank: u32, now: Cycle) -> bool {
        super::may_still_wait(now, self.due[bank as usize], self.postpone, self.t_refi)
    }
    fn obligation(&self) -> RefreshObligation {
        RefreshObligation::PerBank
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bank_falls_due_once_per_trefi_and_a_ranks_banks_in_turn() {
        let ctx = RefreshContext { ranks: 2, banks_per_rank: 8, banks_per_group: 8, t_refi: 6400, t_rfc: 0, t_ck_ns: 1.0 };
        let mut m = PerBank::with(&ctx, &PerBankParams::default());
        let mut order = Vec::new();
        for _ in 0..32 {
            let t = m.next_due();
            let bank = (0..16).find(|&b| m.due(b) == t).unwrap();
            order.push((t, bank));
            m.refreshed(bank, t);
        }
        // 16 slots of 400 cycles; rank 0's banks 800 apart, rank 1's between them.
        assert_eq!(&order[..4], &[(400, 0), (800, 8), (1200, 1), (1600, 9)]);
        for b in 0..16 {
            let times: Vec<u64> = order.iter().filter(|o| o.1 == b).map(|o| o.0).collect();
            assert_eq!(times.len(), 2, "bank {b}");
            assert_eq!(times[1] - times[0], 6400, "bank {b}");
        }
    }
}
