//! `colored`: Colored Refresh (Pan thesis ch. 4). The cyclic executive's frames
//! (`realtime::cyclic`) give each task the rank colours it never runs while they refresh; its
//! pages are only in its colour, and the colours are burst-refreshed a colour frame each
//! (`controller/refresh/burst.rs`). A job never runs in a frame that refreshes its colour; a task
//! with no such colour runs two instances in two colours (a copy task). The frame table is
//! executed as EDF restricted by colour, which is the table itself when jobs take their planned
//! time and still meets deadlines when refresh or copies lengthen them.

use super::{colour_bursts, Clock, Plan, RtSchedule, RtScheduleInfo};
use crate::error::Error;
use crate::realtime::cyclic::{choose_frame, place_jobs};
use crate::realtime::schedulability::Verdict;
use crate::realtime::task::Task;
use crate::Cycle;

pub(super) static INFO: RtScheduleInfo = RtScheduleInfo {
    name: "colored",
    summary: "Colored Refresh: rank colours per frame, each burst-refreshed in its own frame",
    build: |input| {
        let (tasks, ranks) = (input.tasks, input.ranks);
        // One colour refreshes in every frame: its tasks would never run.
        if ranks < 2 {
            return Err(Error::config(
                "machine",
                format!("colored gives tasks the rank colours not refreshing; this machine has {ranks} rank (at least 2 needed)"),
            ));
        }
        let frame = choose_frame(tasks, input.retention, ranks as u64)?;
        let s = place_jobs(tasks, frame, input.retention)?;
        let c = s.colours as usize;
        if c < 2 {
            return Err(Error::config(
                "tasks",
                format!(
                    "colored's colour frame ({}) is the whole retention window ({}): one colour, refreshing in every frame",
                    frame.colour_frame, input.retention
                ),
            ));
        }
        let per = ranks as usize / c;
        let groups: Vec<Vec<u32>> = (0..c).map(|g| (g * per..(g + 1) * per).map(|r| r as u32).collect()).collect();
        let mut used = vec![false; c];
        let pick = |used: &mut Vec<bool>, from: &mut dyn Iterator<Item = usize>| {
            let all: Vec<usize> = from.collect();
            let p = all.iter().copied().find(|&k| !used[k]).or(all.first().copied());
            if let Some(k) = p {
                used[k] = true;
            }
            p
        };
        let mut colour_of = Vec::with_capacity(tasks.len());
        for i in 0..tasks.len() {
            let avail = s.available_colours(i);
            if avail.is_empty() {
                // A copy task: two instances in two colours, preferring unused ones.
                let a = pick(&mut used, &mut (0..c).rev()).expect("a colour");
                let b = pick(&mut used, &mut (0..c).rev().filter(|&k| k != a)).unwrap_or(a);
                colour_of.push(vec![a, b]);
            } else {
                colour_of.push(vec![pick(&mut used, &mut avail.iter().map(|&k| k as usize)).expect("available")]);
            }
        }
        let plan = Plan {
            colours: c,
            colour_frame: frame.colour_frame,
            scheme_refresh: colour_bursts(input.spec, &groups),
            groups,
            colour_of,
            server_of: vec![0; tasks.len()],
            tasks_choose_colours: false,
        };
        Ok(Box::new(Colored { plan, frame: 0 }))
    },
};

struct Colored {
    plan: Plan,
    /// The colour frame, DRAM cycles.
    frame: Cycle,
}

impl RtSchedule for Colored {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn start(&mut self, clock: &Clock) {
        self.frame = clock.cycles(self.plan.colour_frame as f64);
    }
    fn eligible(&self, now: Cycle, colours: &[usize], instance: usize, _server: usize) -> Option<usize> {
        let refreshing = ((now / self.frame) as usize) % self.plan.colours;
        // The instance in use if its colour is free, else another.
        if colours[instance] != refreshing {
            Some(instance)
        } else {
            colours.iter().position(|&c| c != refreshing)
        }
    }
    fn priority(&self, _server: usize, deadline: Cycle, _period: Cycle) -> (usize, Cycle) {
        (0, deadline)
    }
    fn analysis(&self, _tasks: &[Task]) -> Vec<(String, Verdict)> {
        // The plan exists only if every job fits in frames clear of its colour's refresh.
        let copies = self.plan.colour_of.iter().filter(|c| c.len() > 1).count();
        let detail = if copies == 0 {
            "every job placed by its deadline in frames clear of its colour's refresh".to_string()
        } else {
            format!("every job placed by its deadline in frames clear of its colour's refresh; {copies} copy tasks' copies not counted")
        };
        vec![("every task".into(), Verdict { test: "cyclic frame table".into(), schedulable: Some(true), detail })]
    }
    fn next_boundary(&self, now: Cycle) -> Cycle {
        (now / self.frame + 1) * self.frame
    }
}
