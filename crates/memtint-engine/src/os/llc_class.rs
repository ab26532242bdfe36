//! HVR's online classes (multipolicy-hvr.md §3.2-3.3): CCF (fits the core caches), LLCT
//! (thrashes the LLC), LLCH (cache-hungry) and LLCM (needs a middle share of the LLC), from the
//! accessed-bit features of `hot_pages.rs` and the LLC accesses per kilo-instruction.
//!
//! The paper's Fig. 6 is lost; its reconstruction (§3.3) orders the tests CCF, sjeng's few
//! heavily used pages, LLCT, LLCH, LLCM. Here, in order, the first that holds decides:
//! 1. CCF: fewer than `ccf_apki` LLC accesses per kilo-instruction. Page-granular accessed bits
//!    cannot tell a program touching one line of a page now and then from a streamer touching
//!    all 64 of them (both leave one bit), so the intensity comes from the LLC's access count,
//!    the one counter this departs to.
//! 2. CCF: NHP under `ccf_pages` (the paper's 100 of an 8 MB LLC's 2048 pages, scaled to this
//!    LLC): hmmer's at most 19.
//! 3. LLCT: at least `llct_passing` of JOB2's page-samples fall on pages touched in one short
//!    run of consecutive samples only (a stream passing over them, no reuse), and the pages used
//!    change by under `stable_used` between the last two windows (the paper's DIFF: libquantum
//!    alone changes by under 4 %; a stream's rate moves with its co-runners and partition, by
//!    17 % when HVR online moved one into A-VP's quota (tests/engine/hvr_online.rs), so the default is
//!    20 %). Tested before the next, which would otherwise take a stream for sjeng.
//! 4. CCF: under `hot_freq` (the paper's `hot_freq_threshold`, 10 %) of the pages used are
//!    touched in more than one sample: many hot pages, few used heavily (sjeng).
//! 5. LLCH: NHP above `llch_pages` (the paper's 1000 of 2048, scaled): mcf's 1143-15813.
//! 6. LLCM otherwise: bzip2's hot pages between the CCF and LLCH levels.
//!
//! "Used heavily" is the paper's WPD buckets' business; with JOB2's samples scaled to 2 µs the
//! counters of a simulated window are small (the VL bucket holds nearly every page of a
//! program that is not LLCM), so the test counts pages touched in two samples or more. WPD is
//! reported. Features average the last three windows (the paper's AVG).

use super::hot_pages::WindowFeatures;
use serde::{Deserialize, Serialize};

/// An HVR class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LlcClass {
    #[serde(rename = "CCF")]
    Ccf,
    #[serde(rename = "LLCT")]
    Llct,
    #[serde(rename = "LLCM")]
    Llcm,
    #[serde(rename = "LLCH")]
    Llch,
}

impl LlcClass {
    pub fn name(self) -> &'static str {
        match self {
            LlcClass::Ccf => "CCF",
            LlcClass::Llct => "LLCT",
            LlcClass::Llcm => "LLCM",
            LlcClass::Llch => "LLCH",
        }
    }
}

/// The classifier's thresholds (module doc; defaults the paper's, scaled).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    pub ccf_apki: f64,
    /// Hot pages for an LLC of 2048 pages (8 MB of 4 KiB pages); scaled to the LLC.
    pub ccf_pages: f64,
    pub llch_pages: f64,
    pub llct_passing: f64,
    pub stable_used: f64,
    pub hot_freq: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { ccf_apki: 1.0, ccf_pages: 100.0, llch_pages: 1000.0, llct_passing: 0.7, stable_used: 0.2, hot_freq: 0.1 }
    }
}

/// The paper's LLC, in pages (NPC = 8 MB / 4 KB).
const PAPER_NPC: f64 = 2048.0;

/// What the classifier read, and what it decided.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Classified {
    pub class: LlcClass,
    /// Which test decided, in one sentence.
    pub reason: String,
    /// Windows averaged (at most 3).
    pub windows: usize,
    pub nhp: f64,
    /// NHP / NPC: the share of the LLC the hot pages would fill.
    pub nhp_per_npc: f64,
    pub used: f64,
    /// DIFF: the change in pages used between the last two windows, of the larger; `None` from
    /// one window (not measured; the LLCT test then takes the use as steady).
    pub used_diff: Option<f64>,
    pub wpd: f64,
    pub passing_share: f64,
    /// Pages used in two samples or more, of all used.
    pub reused_share: f64,
    pub llc_apki: f64,
}

/// Classifies from a process's windows (`None` without a complete one), its LLC accesses per
/// kilo-instruction, and the LLC's capacity in pages (NPC).
pub fn classify(windows: &[WindowFeatures], llc_apki: f64, npc: f64, t: &Thresholds) -> Option<Classified> {
    let last = &windows[windows.len().saturating_sub(3)..];
    if last.is_empty() {
        return None;
    }
    let n = last.len() as f64;
    let avg = |f: fn(&WindowFeatures) -> f64| last.iter().map(f).sum::<f64>() / n;
    let nhp = avg(|w| w.nhp as f64);
    let used = avg(|w| w.used as f64);
    let wpd = avg(|w| w.wpd);
    let touches: u64 = last.iter().map(|w| w.touches).sum();
    let passing_share = if touches == 0 { 0.0 } else { last.iter().map(|w| w.passing_touches).sum::<u64>() as f64 / touches as f64 };
    let used_diff = match last {
        [.., a, b] => Some((b.used as f64 - a.used as f64).abs() / a.used.max(b.used).max(1) as f64),
        _ => None,
    };
    let used_sum: u64 = last.iter().map(|w| w.used).sum();
    let reused_share = if used_sum == 0 { 0.0 } else { last.iter().map(|w| w.reused).sum::<u64>() as f64 / used_sum as f64 };
    let scale = npc / PAPER_NPC;
    let (ccf_pages, llch_pages) = (t.ccf_pages * scale, t.llch_pages * scale);
    let (class, reason) = if llc_apki < t.ccf_apki {
        (LlcClass::Ccf, format!("{llc_apki:.2} LLC accesses per kilo-instruction (under {}): it fits the core caches", t.ccf_apki))
    } else if nhp < ccf_pages {
        (LlcClass::Ccf, format!("{nhp:.0} hot pages (under {ccf_pages:.0}): its hot data fits the core caches"))
    } else if passing_share >= t.llct_passing && used_diff.unwrap_or(0.0) < t.stable_used {
        (
            LlcClass::Llct,
            format!(
                "{:.0} % of its page touches pass over pages not reused, {}: it streams through the LLC",
                100.0 * passing_share,
                // DIFF compares two windows: with one it was not measured, so no steadiness is claimed.
                if last.len() < 2 {
                    format!("{used:.0} pages in its one window")
                } else {
                    format!("at a steady {used:.0} pages per window")
                }
            ),
        )
    } else if reused_share < t.hot_freq {
        (
            LlcClass::Ccf,
            format!(
                "{nhp:.0} hot pages but {:.0} % of its pages used more than once (under {:.0} %): little LLC demand",
                100.0 * reused_share,
                100.0 * t.hot_freq
            ),
        )
    } else if nhp > llch_pages {
        (
            LlcClass::Llch,
            format!("{nhp:.0} hot pages ({:.0} % of the LLC's {npc:.0}), reused: it wants more LLC than it has", 100.0 * nhp / npc),
        )
    } else {
        (LlcClass::Llcm, format!("{nhp:.0} hot pages ({:.0} % of the LLC), reused: it needs a middle share of the LLC", 100.0 * nhp / npc))
    };
    Some(Classified {
        class,
        reason,
        windows: last.len(),
        nhp,
        nhp_per_npc: nhp / npc,
        used,
        used_diff,
        wpd,
        passing_share,
        reused_share,
        llc_apki,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(nhp: u64, used: u64, reused: u64, touches: u64, passing: u64) -> WindowFeatures {
        WindowFeatures { nhp, used, buckets: [0; 5], touches, passing_touches: passing, reused, wpd: 0.1, ..Default::default() }
    }

    fn class(ws: &[WindowFeatures], apki: f64) -> LlcClass {
        classify(ws, apki, 2048.0, &Thresholds::default()).unwrap().class
    }

    #[test]
    fn each_test_decides_in_order() {
        assert_eq!(classify(&[], 10.0, 2048.0, &Thresholds::default()), None);
        // Rare LLC accesses: CCF whatever the pages say.
        assert_eq!(class(&[w(5000, 9000, 9000, 9000, 0)], 0.5), LlcClass::Ccf);
        assert_eq!(class(&[w(99, 500, 500, 500, 0)], 10.0), LlcClass::Ccf);
        let stream = w(300, 9000, 500, 9000, 7000);
        assert_eq!(class(&[stream; 3], 10.0), LlcClass::Llct);
        // Unsteady page counts are not LLCT: few pages reused, so CCF.
        assert_eq!(class(&[stream, w(300, 7100, 500, 9000, 7000)], 10.0), LlcClass::Ccf);
        assert_eq!(class(&[stream, w(300, 7300, 500, 9000, 7000)], 10.0), LlcClass::Llct);
        assert_eq!(class(&[w(300, 9000, 500, 9000, 6000)], 10.0), LlcClass::Ccf);
        assert_eq!(class(&[w(300, 9000, 900, 9000, 6000)], 10.0), LlcClass::Llcm);
        assert_eq!(class(&[w(1001, 9000, 900, 9000, 6000)], 10.0), LlcClass::Llch);
        assert_eq!(class(&[w(1000, 9000, 900, 9000, 6000)], 10.0), LlcClass::Llcm);
    }

    #[test]
    fn thresholds_scale_with_the_llc_and_average_the_last_three_windows() {
        // 600 hot pages: LLCM beside an 8 MB LLC, LLCH beside a 2 MB one.
        let ws = [w(600, 700, 700, 9000, 100)];
        assert_eq!(class(&ws, 10.0), LlcClass::Llcm);
        assert_eq!(classify(&ws, 10.0, 512.0, &Thresholds::default()).unwrap().class, LlcClass::Llch);
        // The first window is left out of the average.
        let c = classify(&[w(9000, 700, 700, 9000, 100), ws[0], ws[0], w(300, 700, 700, 9000, 100)], 10.0, 2048.0, &Thresholds::default())
            .unwrap();
        assert_eq!((c.windows, c.nhp), (3, 500.0));
        assert!(c.reason.contains("500 hot pages"), "{}", c.reason);
    }
}
