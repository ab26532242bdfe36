//! All-bank refresh per rank: one REF every tREFI per rank, ranks staggered by tREFI / ranks so
//! their tRFC blackouts do not coincide. The schedule is fixed, so a late REF does not drift
//! the average rate.

use super::{RefreshInfo, RefreshManager};
use crate::params::ParamSchema;
use crate::Cycle;

/// Registered in `refresh::REFRESH_MANAGERS`.
pub const INFO: RefreshInfo = RefreshInfo {
    name: "all-bank",
    summary: "one all-bank REF per rank every tREFI, ranks staggered",
    params: ParamSchema::NONE,
    build: |_, ranks, t_refi| Ok(Box::new(AllBank::new(ranks, t_refi))),
};

pub struct AllBank {
    t_refi: u64,
    due: Vec<Cycle>,
}

impl AllBank {
    pub fn new(ranks: u32, t_refi: u64) -> Self {
        let r = ranks as u64;
        AllBank { t_refi, due: (0..r).map(|i| t_refi * (i + 1) / r).collect() }
    }
}

impl RefreshManager for AllBank {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn due(&self, rank: u32) -> Cycle {
        self.due[rank as usize]
    }
    fn next_due(&self) -> Cycle {
        self.due.iter().copied().min().unwrap_or(crate::NEVER)
    }
    fn refreshed(&mut self, rank: u32, _now: Cycle) {
        self.due[rank as usize] += self.t_refi;
    }
    fn period(&self) -> Option<u64> {
        Some(self.t_refi)
    }
    fn refreshed_many(&mut self, rank: u32, n: u64) {
        self.due[rank as usize] += n * self.t_refi;
    }
}
