//! Colored Refresh's cyclic executive (Pan thesis §4.2; `pan-camc-tintmalloc-refresh.md` §4):
//! the frame size, jobs placed into frames, and the rank colours each task may use because it
//! never runs while they are refreshed.
//!
//! Time is one integer unit. R is the retention window, K the ranks; colour c is refreshed (a
//! burst of its ranks, `controller/refresh/burst.rs` with `groups = "each"`) at the start of
//! colour frame c of each window. A frame f must satisfy the thesis's five rules:
//! 1. f ≤ p / 2 for every task (bursts can alternate between disjoint colours);
//! 2. f divides R;
//! 3. 2f − gcd(p, f) ≤ D for every task (the classic cyclic-executive rule);
//! 4. f is a multiple of R / K (a frame refreshes whole ranks);
//! 5. f ≥ every WCET, which job slicing waives: a job longer than a frame is split.
//!
//! When no frame meets rules 1-4, frames are fused (the thesis's Algorithm 6): jobs are placed
//! in frames of f meeting rules 1 and 3, colours rotate every f' = i·f, a multiple of R / K.
//!
//! Jobs are placed by filling frames earliest deadline first: a job enters frames that start at
//! or after its release and end by its deadline, split across frames as capacity allows. The
//! thesis uses Liu's network-flow formulation; both find a placement whenever one exists (EDF
//! is optimal for preemptive jobs with release times and deadlines, here rounded to frame
//! boundaries), but they may place jobs differently, so which colours a task may use can
//! differ from the thesis's tables where several placements exist.

use super::task::{gcd, hyperperiod, lcm, validate, Task};
use crate::error::{Error, Result};

/// A frame size and the colour frame it rotates colours with (equal unless fused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub size: u64,
    pub colour_frame: u64,
}

/// Which of rules 1-5 (their numbers) `f` breaks for `tasks`, R and K.
pub fn broken_rules(tasks: &[Task], f: u64, retention: u64, ranks: u64) -> Vec<u32> {
    let mut out = Vec::new();
    if f == 0 {
        return vec![1, 2, 3, 4, 5];
    }
    if tasks.iter().any(|t| 2 * f > t.period) {
        out.push(1);
    }
    if retention % f != 0 {
        out.push(2);
    }
    if tasks.iter().any(|t| 2 * f - gcd(t.period, f) > t.deadline) {
        out.push(3);
    }
    if retention % ranks != 0 || f % (retention / ranks) != 0 {
        out.push(4);
    }
    if tasks.iter().any(|t| t.wcet > f) {
        out.push(5);
    }
    out
}

/// Algorithm 6: the colour frame f' = i·f fused from frames of `f`, a multiple of R / K with
/// i a multiple of j = f' / (R / K); `None` if there is none up to R.
///
/// The algorithm tries i = 2, 3, ... while (i - 1)·f ≤ R. Its answer in closed form: i·f =
/// j·(R / K) with i = m·j makes m·f = R / K, so f must divide R / K; the least i is then
/// m = R / (K·f) (j = 1), or 2 (j = 2) when f is R / K itself.
pub fn fuse(f: u64, retention: u64, ranks: u64) -> Option<(u64, u64, u64)> {
    let unit = retention / ranks;
    if f == 0 || unit == 0 || unit % f != 0 {
        return None;
    }
    let (i, j) = if unit / f >= 2 { (unit / f, 1) } else { (2, 2) };
    (i <= retention / f + 1).then_some((i * f, i, j))
}

/// The divisors of `n` up to `max`, largest first: every frame the rules accept divides R
/// (rule 2, or for a fused frame the colour frame i·f that divides R), so the search need not
/// try the others (a task period of 10^9 units made it try half a billion sizes).
fn divisors_up_to(n: u64, max: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut d = 1;
    while d <= n / d {
        if n % d == 0 {
            out.push(d);
            out.push(n / d);
        }
        d += 1;
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    out.dedup();
    out.retain(|&d| d <= max);
    out
}

/// The largest frame meeting rules 1-4 (jobs longer than it are sliced); else the largest
/// frame meeting rules 1 and 3 that fuses into a colour frame (Algorithm 6). An error says
/// which rules the candidates break.
pub fn choose_frame(tasks: &[Task], retention: u64, ranks: u64) -> Result<Frame> {
    validate(tasks)?;
    if ranks == 0 || retention == 0 || retention % ranks != 0 {
        return Err(Error::config("ranks", format!("the retention window ({retention}) must split into {ranks} equal rank frames")));
    }
    let max = tasks.iter().map(|t| t.period / 2).min().unwrap_or(0);
    let candidates = divisors_up_to(retention, max);
    if let Some(&size) = candidates.iter().find(|&&f| broken_rules(tasks, f, retention, ranks).iter().all(|&r| r == 5)) {
        return Ok(Frame { size, colour_frame: size });
    }
    for &f in &candidates {
        let broken = broken_rules(tasks, f, retention, ranks);
        if broken.contains(&1) || broken.contains(&3) {
            continue;
        }
        if let Some((fused, _, _)) = fuse(f, retention, ranks) {
            if retention % fused == 0 {
                return Ok(Frame { size: f, colour_frame: fused });
            }
        }
    }
    Err(Error::config(
        "tasks",
        format!(
            "no frame size meets the cyclic-executive rules (f <= p/2, 2f - gcd(p, f) <= D) with a colour frame a multiple of \
             R/K = {}; the shortest period is {}",
            retention / ranks,
            tasks.iter().map(|t| t.period).min().unwrap_or(0)
        ),
    ))
}

/// Jobs placed into frames over `horizon`: `frames[k]` lists (task, time) run in frame k.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSchedule {
    pub frame: Frame,
    pub horizon: u64,
    pub frames: Vec<Vec<(usize, u64)>>,
    /// Colours (= colour frames per retention window).
    pub colours: u64,
}

/// L = lcm(H, R): the schedule repeats after it.
pub fn schedule_horizon(tasks: &[Task], retention: u64) -> u64 {
    lcm(hyperperiod(tasks), retention)
}

/// Most frames or jobs a frame table plans (a hyperperiod of coprime periods is astronomically long).
const MAX_PLAN: u64 = 1 << 20;

/// Fill frames of `frame` over L earliest deadline first; an error names the first job that
/// would miss its deadline.
pub fn place_jobs(tasks: &[Task], frame: Frame, retention: u64) -> Result<FrameSchedule> {
    validate(tasks)?;
    let f = frame.size;
    let horizon = schedule_horizon(tasks, retention);
    let jobs_in: u64 = tasks.iter().map(|t| horizon / t.period).fold(0, u64::saturating_add);
    if horizon / f > MAX_PLAN || jobs_in > MAX_PLAN {
        return Err(Error::config(
            "tasks",
            format!(
                "the frame table would span {} frames of {f} with {jobs_in} jobs (lcm of the hyperperiod and the window: {horizon}); at most {MAX_PLAN}",
                horizon / f
            ),
        ));
    }
    let n = (horizon / f) as usize;
    // (absolute deadline, task, release, work left)
    let mut jobs: Vec<(u64, usize, u64, u64)> = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let mut r = t.phase;
        while r < horizon {
            jobs.push((r + t.deadline, i, r, t.wcet));
            r += t.period;
        }
    }
    jobs.sort();
    let mut frames = vec![Vec::new(); n];
    for (k, slot) in frames.iter_mut().enumerate() {
        let (start, end) = (k as u64 * f, (k as u64 + 1) * f);
        let mut room = f;
        for job in jobs.iter_mut().filter(|j| j.3 > 0 && j.2 <= start) {
            if job.0 < end {
                let t = &tasks[job.1];
                return Err(Error::config(
                    "tasks",
                    format!("{} released at {} cannot finish by its deadline {} in frames of {f}: not schedulable", t.name, job.2, job.0),
                ));
            }
            let run = job.3.min(room);
            if run > 0 {
                slot.push((job.1, run));
                job.3 -= run;
                room -= run;
            }
            if room == 0 {
                break;
            }
        }
    }
    if let Some(job) = jobs.iter().find(|j| j.3 > 0) {
        let t = &tasks[job.1];
        return Err(Error::config("tasks", format!("{} released at {} does not fit before {horizon}: not schedulable", t.name, job.2)));
    }
    Ok(FrameSchedule { frame, horizon, frames, colours: retention / frame.colour_frame })
}

impl FrameSchedule {
    /// The colour refreshed during frame `k` (0-based: frame k of the thesis is k + 1).
    pub fn colour_of_frame(&self, k: usize) -> u64 {
        (k as u64 * self.frame.size / self.frame.colour_frame) % self.colours
    }

    /// The frames task `i` runs in.
    pub fn occupied(&self, i: usize) -> Vec<usize> {
        (0..self.frames.len()).filter(|&k| self.frames[k].iter().any(|&(t, _)| t == i)).collect()
    }

    /// The colours task `i` may use: never refreshed while it runs (0-based).
    pub fn available_colours(&self, i: usize) -> Vec<u64> {
        let busy: std::collections::BTreeSet<u64> = self.occupied(i).into_iter().map(|k| self.colour_of_frame(k)).collect();
        (0..self.colours).filter(|c| !busy.contains(c)).collect()
    }

    /// Tasks that run while every colour is refreshed: they need a copy task (a second
    /// instance in another colour, run in the frames that refresh the first's).
    pub fn needs_copy(&self) -> Vec<usize> {
        let tasks = self.frames.iter().flatten().map(|&(t, _)| t).max().map_or(0, |m| m + 1);
        (0..tasks).filter(|&i| self.available_colours(i).is_empty()).collect()
    }
}

/// Copying a task's globals to its other instance pays off while it costs less than the
/// refresh it hides: bytes ≤ (tRFC / tREFI) · e · bandwidth (the thesis's break-even; e in
/// seconds, bandwidth in bytes per second).
pub fn copy_break_even_bytes(t_rfc_ns: f64, t_refi_ns: f64, wcet_s: f64, bandwidth_bytes_per_s: f64) -> f64 {
    t_rfc_ns / t_refi_ns * wcet_s * bandwidth_bytes_per_s
}
