//! Same-bank refresh (DDR5's REFsb, Ramulator 2's same-bank refresh): one REFSB refreshes one
//! bank index in every bank group of a rank, so a rank's other bank indices keep serving
//! requests. DDR5 takes REFSB in its fine-granularity mode only, where a rank needs every bank
//! index refreshed once per tREFI2 = tREFI / 2: each index gets one REFSB per tREFI2, a rank's
//! indices in turn tREFI2 / banks per group apart, ranks interleaved. A bank index waiting for
//! its REFSB has its open banks closed (PRE) and is refreshed; only requests to it wait.
//!
//! - `postpone` n (at most 8): as `per-bank`'s, per bank index.
//!
//! Runs on devices with REFSB only (DDR5), on the general controller.

use super::per_bank::{PerBank, PerBankParams};
use super::{RefreshDevice, RefreshInfo, RefreshTargets};
use crate::controller::ControllerConfig;
use crate::error::{Error, Result};
use crate::params::ParamSchema;

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "same-bank",
    summary: "one REFSB per bank index every tREFI / 2, a rank's indices in turn (DDR5)",
    params: ParamSchema::of::<PerBankParams>(&[]),
    timing,
    build: |cfg, ctx| {
        let p = cfg.params::<PerBankParams>(INFO.name, &[])?;
        Ok(Box::new(PerBank::of(ctx, p.postpone, RefreshTargets::BankIndices, ctx.banks_per_group)))
    },
};

/// DDR5's fine-granularity tREFI2 (tREFI / 2) and the device's tRFC; refused on a device
/// without REFSB.
fn timing(cfg: &ControllerConfig, d: &RefreshDevice) -> Result<(u64, u64)> {
    cfg.params::<PerBankParams>(INFO.name, &[])?;
    if !d.standard.has_same_bank_refresh() {
        return Err(Error::config(
            "controller.refresh",
            format!("\"same-bank\" issues REFSB, which {} devices lack (DDR5 devices have it); use \"all-bank\"", d.standard.name()),
        ));
    }
    Ok((d.t_refi / 2, d.t_rfc))
}
