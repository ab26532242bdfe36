//! Why a request missed the row buffer: who left its bank the way it found it. A conflict's
//! open row was opened (ACT) for some process's request; a miss's bank was closed by a PRE for
//! some process's request, or by the controller itself (refresh, the row policy) or never
//! opened. "Self" is the request's own process, "other" another one: the inter-program
//! interference that bank partitioning removes (BPM, Liu et al., PACT 2012, §2). docs/stats.md,
//! "Row-buffer causes", defines each count.

use serde::Serialize;

/// How a request found its bank, with who left it so (decided with its row outcome, at the
/// first command issued for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowCause {
    /// A row hit: nothing was in its way.
    #[default]
    Hit,
    /// A conflict with a row opened for a request of the same process.
    ConflictBySelf,
    /// A conflict with a row opened for another process's request.
    ConflictByOther,
    /// A miss: the bank's last precharge was for a request of the same process.
    MissAfterSelf,
    /// A miss: the bank's last precharge was for another process's request.
    MissAfterOther,
    /// A miss: the bank was closed by refresh (PREA), by the row policy (an idle timeout, an
    /// auto-precharge) or never opened.
    MissAfterRefreshOrPolicy,
}

/// Row misses and conflicts counted by cause (`RowCause`); hits are not counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowCauseCounts {
    pub row_conflicts_by_self: u64,
    pub row_conflicts_by_other: u64,
    pub row_misses_after_self: u64,
    pub row_misses_after_other: u64,
    pub row_misses_after_refresh_or_policy: u64,
}

impl RowCauseCounts {
    #[inline]
    pub fn record(&mut self, cause: RowCause) {
        match cause {
            RowCause::Hit => {}
            RowCause::ConflictBySelf => self.row_conflicts_by_self += 1,
            RowCause::ConflictByOther => self.row_conflicts_by_other += 1,
            RowCause::MissAfterSelf => self.row_misses_after_self += 1,
            RowCause::MissAfterOther => self.row_misses_after_other += 1,
            RowCause::MissAfterRefreshOrPolicy => self.row_misses_after_refresh_or_policy += 1,
        }
    }

    pub fn add(&mut self, o: &RowCauseCounts) {
        self.row_conflicts_by_self += o.row_conflicts_by_self;
        self.row_conflicts_by_other += o.row_conflicts_by_other;
        self.row_misses_after_self += o.row_misses_after_self;
        self.row_misses_after_other += o.row_misses_after_other;
        self.row_misses_after_refresh_or_policy += o.row_misses_after_refresh_or_policy;
    }

    /// The counts since `earlier`, a snapshot of the same counters.
    pub fn since(&self, earlier: &RowCauseCounts) -> RowCauseCounts {
        RowCauseCounts {
            row_conflicts_by_self: self.row_conflicts_by_self - earlier.row_conflicts_by_self,
            row_conflicts_by_other: self.row_conflicts_by_other - earlier.row_conflicts_by_other,
            row_misses_after_self: self.row_misses_after_self - earlier.row_misses_after_self,
            row_misses_after_other: self.row_misses_after_other - earlier.row_misses_after_other,
            row_misses_after_refresh_or_policy: self.row_misses_after_refresh_or_policy - earlier.row_misses_after_refresh_or_policy,
        }
    }

    pub fn conflicts(&self) -> u64 {
        self.row_conflicts_by_self + self.row_conflicts_by_other
    }

    pub fn misses(&self) -> u64 {
        self.row_misses_after_self + self.row_misses_after_other + self.row_misses_after_refresh_or_policy
    }

    /// Misses and conflicts another process caused.
    pub fn by_other(&self) -> u64 {
        self.row_conflicts_by_other + self.row_misses_after_other
    }
}

/// Hits, misses and conflicts of one kind of request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowOutcomeCounts {
    pub hits: u64,
    pub misses: u64,
    pub conflicts: u64,
}

impl RowOutcomeCounts {
    pub fn is_zero(&self) -> bool {
        self.hits + self.misses + self.conflicts == 0
    }

    pub fn add(&mut self, o: &RowOutcomeCounts) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.conflicts += o.conflicts;
    }

    pub fn since(&self, earlier: &RowOutcomeCounts) -> RowOutcomeCounts {
        RowOutcomeCounts {
            hits: self.hits - earlier.hits,
            misses: self.misses - earlier.misses,
            conflicts: self.conflicts - earlier.conflicts,
        }
    }
}

/// Row outcomes by the kind of request (CPU-trace runs: the LLC knows which reads its
/// prefetcher made).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowOutcomesByKind {
    /// Reads whose LLC miss a demand load opened (every read without a prefetcher).
    pub demand_read: RowOutcomeCounts,
    /// Reads the LLC prefetcher made (their MSHR opened by a prefetch, even if a demand joined it later).
    pub prefetch_read: RowOutcomeCounts,
    /// Dirty LLC victims written back (and a migrated page's copy written to its new frame).
    pub write_back: RowOutcomeCounts,
    /// A migrated page's lines read from its old frame (only when pages migrate).
    #[serde(skip_serializing_if = "RowOutcomeCounts::is_zero")]
    pub migration_read: RowOutcomeCounts,
}

impl RowOutcomesByKind {
    pub fn add(&mut self, o: &RowOutcomesByKind) {
        self.demand_read.add(&o.demand_read);
        self.prefetch_read.add(&o.prefetch_read);
        self.write_back.add(&o.write_back);
        self.migration_read.add(&o.migration_read);
    }

    pub fn since(&self, earlier: &RowOutcomesByKind) -> RowOutcomesByKind {
        RowOutcomesByKind {
            demand_read: self.demand_read.since(&earlier.demand_read),
            prefetch_read: self.prefetch_read.since(&earlier.prefetch_read),
            write_back: self.write_back.since(&earlier.write_back),
            migration_read: self.migration_read.since(&earlier.migration_read),
        }
    }
}
