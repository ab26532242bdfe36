//! Multi-programmed throughput and fairness metrics (BPM §5, HVR §4): weighted speedup
//! Σ IPC_shared/IPC_alone, harmonic speedup N / Σ IPC_alone/IPC_shared, maximum slowdown
//! max IPC_alone/IPC_shared.

use crate::error::{Error, Result};
use serde::Serialize;

/// One program's IPC alone (on the whole machine) and in the shared run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProgramSpeed {
    pub ipc_alone: f64,
    pub ipc_shared: f64,
}

impl ProgramSpeed {
    /// IPC_alone / IPC_shared: 1 means no interference, 2 means twice as slow.
    pub fn slowdown(&self) -> f64 {
        self.ipc_alone / self.ipc_shared
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MixMetrics {
    pub weighted_speedup: f64,
    pub harmonic_speedup: f64,
    pub maximum_slowdown: f64,
    pub slowdowns: Vec<f64>,
}

impl MixMetrics {
    pub fn of(programs: &[ProgramSpeed]) -> Result<Self> {
        if programs.is_empty() {
            return Err(Error::config("metrics", "no programs"));
        }
        for (i, p) in programs.iter().enumerate() {
            if !(p.ipc_alone.is_finite() && p.ipc_alone > 0.0 && p.ipc_shared.is_finite() && p.ipc_shared > 0.0) {
                return Err(Error::config(
                    "metrics",
                    format!("program {i}: IPCs must be positive (alone {}, shared {})", p.ipc_alone, p.ipc_shared),
                ));
            }
        }
        let slowdowns: Vec<f64> = programs.iter().map(|p| p.slowdown()).collect();
        Ok(MixMetrics {
            weighted_speedup: programs.iter().map(|p| p.ipc_shared / p.ipc_alone).sum(),
            harmonic_speedup: programs.len() as f64 / slowdowns.iter().sum::<f64>(),
            maximum_slowdown: slowdowns.iter().copied().fold(f64::MIN, f64::max),
            slowdowns,
        })
    }
}

/// `MixMetrics::of` with JSON in (`[{"ipc_alone": .., "ipc_shared": ..}, ...]`) and out.
pub fn metrics_json(programs: &str) -> Result<String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct P {
        ipc_alone: f64,
        ipc_shared: f64,
    }
    let ps: Vec<P> = crate::error::from_json(programs, "metrics")?;
    let ps: Vec<ProgramSpeed> = ps.iter().map(|p| ProgramSpeed { ipc_alone: p.ipc_alone, ipc_shared: p.ipc_shared }).collect();
    Ok(serde_json::to_string(&MixMetrics::of(&ps)?).expect("metrics serialise"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn metrics_match_hand_computed_values() {
        // Alone 2.0, 1.0, 0.5, 1.5; shared 1.0, 0.8, 0.25, 1.5.
        let p = [
            ProgramSpeed { ipc_alone: 2.0, ipc_shared: 1.0 },
            ProgramSpeed { ipc_alone: 1.0, ipc_shared: 0.8 },
            ProgramSpeed { ipc_alone: 0.5, ipc_shared: 0.25 },
            ProgramSpeed { ipc_alone: 1.5, ipc_shared: 1.5 },
        ];
        let m = MixMetrics::of(&p).unwrap();
        // WS = 0.5 + 0.8 + 0.5 + 1.0 = 2.8
        assert!(close(m.weighted_speedup, 2.8));
        // slowdowns 2, 1.25, 2, 1 -> HS = 4 / 6.25 = 0.64, MS = 2
        assert_eq!(m.slowdowns, vec![2.0, 1.25, 2.0, 1.0]);
        assert!(close(m.harmonic_speedup, 0.64));
        assert!(close(m.maximum_slowdown, 2.0));
    }

    #[test]
    fn no_interference_gives_n_1_1() {
        let p = vec![ProgramSpeed { ipc_alone: 0.7, ipc_shared: 0.7 }; 8];
        let m = MixMetrics::of(&p).unwrap();
        assert!(close(m.weighted_speedup, 8.0) && close(m.harmonic_speedup, 1.0) && close(m.maximum_slowdown, 1.0));
    }

    #[test]
    fn zero_or_missing_ipcs_are_errors() {
        assert!(MixMetrics::of(&[]).is_err());
        let e = MixMetrics::of(&[ProgramSpeed { ipc_alone: 1.0, ipc_shared: 0.0 }]).unwrap_err().to_string();
        assert!(e.contains("program 0"), "{e}");
    }
}
