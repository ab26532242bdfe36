//! The vector instruction set the DRAM engine's closed loop (`dram_sim/routing.rs`) runs on, chosen
//! when a run starts. The lane controller keeps its timing state as blocks of eight `i32` lanes
//! (`controller/lanes.rs`): the x86-64 baseline (SSE2) has no 32-bit minimum or maximum (each is
//! a compare and three logic operations) and needs two registers per block; x86-64-v2 (SSE4.1)
//! has both; x86-64-v3 (AVX2) holds a block in one register. The loop is compiled once per
//! level and the best level the CPU has runs, so one portable binary gets the wider
//! instructions wherever they exist (gcc's function multiversioning, done at the one entry
//! point). The levels run the same integer operations, so results are identical
//! (`tests/engine/vector_isa.rs`); only the speed differs.

use crate::error::{Error, Result};

/// Each level's CPU features, written once. `v3_features!(m! { ... })` calls `m!` with the
/// feature names, a `;` and the rest: `detected!` checks them at run time (`is_supported`),
/// `with_features!` compiles items for them (`#[target_feature]`, the per-level entries).
macro_rules! v2_features {
    ($m:ident ! { $($rest:tt)* }) => { $m! { "sse4.2", "popcnt"; $($rest)* } };
}
macro_rules! v3_features {
    ($m:ident ! { $($rest:tt)* }) => { $m! { "sse4.2", "popcnt", "avx2", "bmi1", "bmi2", "lzcnt", "fma"; $($rest)* } };
}
macro_rules! with_features {
    ($($f:tt),*;) => {};
    ($($f:tt),*; $i:item $($rest:item)*) => {
        $(#[target_feature(enable = $f)])* $i
        with_features! { $($f),*; $($rest)* }
    };
}
#[cfg(target_arch = "x86_64")]
macro_rules! detected {
    ($($f:tt),*;) => { true $(&& std::arch::is_x86_feature_detected!($f))* };
}
pub(crate) use {v2_features, v3_features, with_features};

/// A level of the x86-64 instruction set (the psABI's microarchitecture levels). Off x86-64
/// only `Baseline` exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VectorIsa {
    /// What the build targets (x86-64: SSE2).
    #[default]
    Baseline,
    /// x86-64-v2: SSE4.2 and POPCNT.
    V2,
    /// x86-64-v3: AVX2, BMI1/2, LZCNT, FMA.
    V3,
}

impl VectorIsa {
    pub const ALL: [VectorIsa; 3] = [VectorIsa::Baseline, VectorIsa::V2, VectorIsa::V3];

    pub fn name(self) -> &'static str {
        match self {
            VectorIsa::Baseline => "baseline",
            VectorIsa::V2 => "x86-64-v2",
            VectorIsa::V3 => "x86-64-v3",
        }
    }

    /// The level named `name` ("best": the best this CPU runs), or an error listing the names.
    pub fn from_name(name: &str) -> Result<Self> {
        if name == "best" {
            return Ok(Self::best());
        }
        Self::ALL.into_iter().find(|i| i.name() == name).ok_or_else(|| {
            let names: Vec<_> = Self::ALL.iter().map(|i| i.name()).collect();
            Error::config("vector_isa", format!("unknown level \"{name}\" (valid: best, {})", names.join(", ")))
        })
    }

    /// Whether this CPU runs code of this level.
    pub fn is_supported(self) -> bool {
        match self {
            VectorIsa::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            VectorIsa::V2 => v2_features!(detected! {}),
            #[cfg(target_arch = "x86_64")]
            VectorIsa::V3 => v3_features!(detected! {}),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The levels this CPU runs, lowest first.
    pub fn supported() -> Vec<Self> {
        Self::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The highest level this CPU runs.
    pub fn best() -> Self {
        *Self::supported().last().expect("the baseline always runs")
    }

    /// `self`, or a config error if this CPU cannot run it (never an illegal instruction).
    pub fn checked(self) -> Result<Self> {
        self.checked_among(&Self::supported())
    }

    /// `self` if it is among the levels a CPU runs (`supported`), else a config error naming them.
    fn checked_among(self, supported: &[Self]) -> Result<Self> {
        if supported.contains(&self) {
            Ok(self)
        } else {
            let names: Vec<_> = supported.iter().map(|i| i.name()).collect();
            Err(Error::config("vector_isa", format!("this CPU does not run {} (it runs: {})", self.name(), names.join(", "))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_the_valid_ones() {
        for i in VectorIsa::ALL {
            assert_eq!(VectorIsa::from_name(i.name()).unwrap(), i);
        }
        assert_eq!(VectorIsa::from_name("best").unwrap(), VectorIsa::best());
        let e = VectorIsa::from_name("avx9").unwrap_err().to_string();
        assert!(e.contains("avx9") && e.contains("x86-64-v3") && e.contains("best"), "{e}");
    }

    #[test]
    fn the_baseline_always_runs_and_best_is_the_highest_supported() {
        let s = VectorIsa::supported();
        assert_eq!(s[0], VectorIsa::Baseline);
        assert_eq!(VectorIsa::best(), *s.last().unwrap());
        // Levels nest: a CPU that runs one runs every lower one.
        assert_eq!(s, VectorIsa::ALL[..s.len()].to_vec());
        for i in &s {
            assert_eq!(i.checked().unwrap(), *i);
        }
    }

    #[test]
    fn a_level_the_cpu_lacks_is_an_error_naming_what_it_runs() {
        let old_cpu = [VectorIsa::Baseline, VectorIsa::V2];
        assert_eq!(VectorIsa::V2.checked_among(&old_cpu).unwrap(), VectorIsa::V2);
        let e = VectorIsa::V3.checked_among(&old_cpu).unwrap_err().to_string();
        assert!(e.contains("does not run x86-64-v3") && e.contains("baseline, x86-64-v2"), "{e}");
    }
}
