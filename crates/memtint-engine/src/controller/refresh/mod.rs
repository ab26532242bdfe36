//! Refresh managers decide when each rank must be refreshed. One file each, declaring its
//! `INFO`; registered by one line in `REFRESH_MANAGERS`.

mod all_bank;
mod no_refresh;

pub use all_bank::AllBank;
pub use no_refresh::NoRefresh;

use crate::controller::ControllerConfig;
use crate::error::Result;
use crate::params::ParamSchema;
use crate::registry::{Component, Registry};
use crate::Cycle;

pub trait RefreshManager: Send {
    fn name(&self) -> &'static str;
    /// The cycle at which `rank`'s next refresh falls due (`NEVER` if none).
    fn due(&self, rank: u32) -> Cycle;
    /// The earliest due cycle over all ranks.
    fn next_due(&self) -> Cycle;
    /// A REF was issued to `rank` at `now`.
    fn refreshed(&mut self, rank: u32, now: Cycle);
    /// `Some(period)` when each REF moves its rank's due cycle on by `period`, whenever it was
    /// issued: an idle controller may then take many at once (`skip_idle`). `None` (the
    /// default): it steps through each.
    fn period(&self) -> Option<u64> {
        None
    }
    /// `n` REFs issued to `rank`, each at its due cycle (only called when `period` is `Some`).
    fn refreshed_many(&mut self, rank: u32, n: u64) {
        for _ in 0..n {
            let due = self.due(rank);
            self.refreshed(rank, due);
        }
    }
}

/// Idle time skipped at once: a controller with nothing queued or in flight, every bank closed
/// and no REF pending would, ticked until `until`, only issue each rank's REFs at their due
/// cycles (on time: the rank is ready for the first, `ref_ready(rank) <= due`, and tRFC fits a
/// period for the others). All but the last of each rank change nothing the last does not
/// overwrite (their timing is dominated by it), so `refresh` is advanced past them here and
/// the ticks issue the last. Returns the REFs skipped per rank, for the statistics.
pub(crate) fn skip_idle(
    refresh: &mut dyn RefreshManager,
    ranks: u32,
    t_rfc: u64,
    ref_ready: impl Fn(u32) -> Cycle,
    until: Cycle,
) -> Vec<u64> {
    let mut skipped = vec![0; ranks as usize];
    let Some(period) = refresh.period().filter(|&p| p >= t_rfc && p > 0) else { return skipped };
    for r in 0..ranks {
        let due = refresh.due(r);
        if due >= until || ref_ready(r) > due {
            continue;
        }
        // REFs due before `until`: due, due + period, ...; the last stays for the ticks.
        let n = (until - 1 - due) / period;
        if n > 0 {
            refresh.refreshed_many(r, n);
            skipped[r as usize] = n;
        }
    }
    skipped
}

/// What a refresh manager is and how to make one, declared in its own file (`pub const INFO`).
pub struct RefreshInfo {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its parameters (`[controller.<name>]`), declared in its file.
    pub params: ParamSchema,
    /// A manager for `ranks` ranks refreshed every `tREFI` cycles.
    pub build: fn(&ControllerConfig, u32, u64) -> Result<Box<dyn RefreshManager>>,
}

impl Component for RefreshInfo {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// The refresh managers: the built-in ones, one line each (`REFRESH_MANAGERS.register` adds more).
pub static REFRESH_MANAGERS: Registry<RefreshInfo> = Registry::new("refresh manager", &[&all_bank::INFO, &no_refresh::INFO]);

pub fn names() -> Vec<&'static str> {
    REFRESH_MANAGERS.names()
}

pub fn build(name: &str, cfg: &ControllerConfig, ranks: u32, t_refi: u64) -> Result<Box<dyn RefreshManager>> {
    (REFRESH_MANAGERS.get(name)?.build)(cfg, ranks, t_refi)
}
