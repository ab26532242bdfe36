//! `numa-balancing`: Linux's automatic NUMA balancing (Gorman, "Foundation for automatic NUMA
//! balancing", LWN 2012; `should_numa_migrate_memory` in kernel/sched/fair.c). A hinting fault
//! records the faulting thread and node on the page (the kernel's `last_cpupid`). A page on
//! another node than the faulting thread's moves there (if that node has memory) when:
//! - early in the process's life (the scanner has passed over its pages at most 4 times), the
//!   fault is the page's first or the same thread's as the last (a private fault);
//! - later, the page's previous fault came from the same node (the two-stage filter that the
//!   tiering thesis describes) and the fault is private, or shared (another thread faulted last)
//!   and the process's NUMA group lets it (van Riel's NUMA groups, Linux 3.13 on): the group is
//!   formed at the process's first shared fault; from then a shared page moves from node s to d
//!   only if the group's threads fault from d's cores more than 3 times as often as from s's
//!   (`ACTIVE_NODE_FRACTION`), or if cpu(d) x mem(s) x 3 > cpu(s) x mem(d) x 4 (memory follows
//!   the group's CPU use, with 3/4 hysteresis), where cpu(n) counts the group's faults taken on
//!   node n's cores and mem(n) its faults on pages of node n, both halved at each new scan pass
//!   (`task_numa_placement`'s decay). This damps a shared page's ping-pong between nodes.
//!
//! Not modelled: task placement (moving threads to their memory) and groups across processes
//! (pages here belong to one process).

use super::{HintFault, MigrationInfo, MigrationPolicy, MigrationView, Proposal};
use crate::os::nodes::NodeLayout;
use crate::params::{ParamSchema, Params};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// `[os.numa-balancing]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NumaBalancingParams {
    /// NUMA groups weigh shared faults (Linux's; false: a shared page passing the filter moves).
    pub groups: bool,
}

impl Default for NumaBalancingParams {
    fn default() -> Self {
        NumaBalancingParams { groups: true }
    }
}

impl Params for NumaBalancingParams {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }
}

pub static INFO: MigrationInfo = MigrationInfo {
    name: "numa-balancing",
    summary: "Linux automatic NUMA balancing: a remote page moves to the faulting node (first or private faults early, then two faults in a row from it; shared pages as the NUMA group's faults say)",
    moves_pages_of: &["local"],
    params: ParamSchema::of::<NumaBalancingParams>(&[]),
    build: |v| {
        let p: NumaBalancingParams = v.params.get("os", INFO.name, &[])?;
        Ok(Box::new(NumaBalancing::new(v, p)))
    },
};

/// Linux's `ACTIVE_NODE_FRACTION`: a node with 3x the group's CPU faults takes shared pages.
const ACTIVE_NODE_FRACTION: f64 = 3.0;

/// A process's NUMA group: its faults by the node of the faulting core and of the page.
#[derive(Clone, Debug, Default)]
struct NumaGroup {
    formed: bool,
    cpu: Vec<f64>,
    mem: Vec<f64>,
    pass: u32,
}

/// The two-stage filter and NUMA groups, shared with `bw-migration`.
pub struct NumaBalancing {
    layout: NodeLayout,
    p: NumaBalancingParams,
    /// Frame -> (node, thread) of its last hinting fault.
    last: FxHashMap<u32, (u32, u32)>,
    /// Per process.
    groups: Vec<NumaGroup>,
}

impl NumaBalancing {
    pub fn new(v: &MigrationView, p: NumaBalancingParams) -> Self {
        NumaBalancing { layout: v.nodes.clone(), p, last: FxHashMap::default(), groups: Vec::new() }
    }

    /// The node the page should move to, if the filter passes.
    pub fn propose(&mut self, f: &HintFault) -> Option<u32> {
        let last = self.last.insert(f.frame, (f.thread_node, f.tid));
        let shared = matches!(last, Some((_, tid)) if tid != f.tid);
        let passes = match last {
            None => f.early,
            Some((_, tid)) if f.early && tid == f.tid => true,
            Some((node, _)) => node == f.thread_node && (!shared || self.group_allows(f)),
        };
        self.record(f, shared);
        let wanted = passes && f.thread_node != f.page_node && self.layout.has_memory(f.thread_node);
        if wanted {
            // The frame is freed by the move; whatever lands in it starts afresh.
            self.last.remove(&f.frame);
        }
        wanted.then_some(f.thread_node)
    }

    /// Whether the process's group lets a shared page move from its node to the faulting one
    /// (a group not formed yet lets it, as Linux does).
    fn group_allows(&self, f: &HintFault) -> bool {
        let Some(g) = self.groups.get(f.pid as usize).filter(|g| self.p.groups && g.formed) else { return true };
        let (s, d) = (f.page_node as usize, f.thread_node as usize);
        g.cpu[d] > g.cpu[s] * ACTIVE_NODE_FRACTION || g.cpu[d] * g.mem[s] * 3.0 > g.cpu[s] * g.mem[d] * 4.0
    }

    /// The fault in its process's group statistics, after the decision (as `task_numa_fault`).
    fn record(&mut self, f: &HintFault, shared: bool) {
        if !self.p.groups {
            return;
        }
        let pid = f.pid as usize;
        if self.groups.len() <= pid {
            self.groups.resize(pid + 1, NumaGroup::default());
        }
        let nodes = self.layout.count() as usize;
        let g = &mut self.groups[pid];
        if g.cpu.len() != nodes {
            (g.cpu, g.mem) = (vec![0.0; nodes], vec![0.0; nodes]);
        }
        if f.pass > g.pass {
            let k = 0.5f64.powi((f.pass - g.pass).min(64) as i32);
            g.cpu.iter_mut().chain(g.mem.iter_mut()).for_each(|x| *x *= k);
            g.pass = f.pass;
        }
        g.cpu[f.thread_node as usize] += 1.0;
        g.mem[f.page_node as usize] += 1.0;
        g.formed |= shared;
    }
}

impl MigrationPolicy for NumaBalancing {
    fn on_hint_fault(&mut self, f: &HintFault) -> Proposal {
        match self.propose(f) {
            Some(n) => Proposal::MoveTo(n),
            None => Proposal::Stay,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::os::nodes::NodeInfo;

    pub(crate) fn two_nodes() -> NodeLayout {
        NodeLayout {
            nodes: vec![
                NodeInfo { cores: 0..4, frames: 0..1000, bandwidth_gbps: 20.0 },
                NodeInfo { cores: 4..8, frames: 1000..2000, bandwidth_gbps: 10.0 },
            ],
            latency_ns: vec![vec![0.0, 50.0], vec![50.0, 0.0]],
        }
    }

    /// A later-life fault by thread `thread_node` (one thread per node), nothing else known.
    pub(crate) fn fault(frame: u32, page_node: u32, thread_node: u32) -> HintFault {
        HintFault {
            pid: 0,
            tid: thread_node,
            frame,
            page_node,
            thread_node,
            early: false,
            pass: 9,
            latency_ns: None,
            now_ns: 0.0,
            free: vec![],
            capacity: vec![],
        }
    }

    #[test]
    fn a_page_moves_after_two_consecutive_faults_from_the_same_remote_node() {
        let layout = two_nodes();
        let params = Default::default();
        let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, Default::default());
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::Stay, "first fault only records node 1");
        assert_eq!(p.on_hint_fault(&fault(5, 0, 1)), Proposal::MoveTo(1));
        // Alternating nodes never pass the filter; local faults never move a page.
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 1)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay);
        assert_eq!(p.on_hint_fault(&fault(7, 0, 0)), Proposal::Stay, "twice from its own node: stays");
    }

    #[test]
    fn early_in_a_process_life_first_and_private_faults_move_at_once() {
        let layout = two_nodes();
        let params = Default::default();
        let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, Default::default());
        let early = |frame, tid, thread_node| HintFault {
            pid: 0,
            tid,
            frame,
            page_node: 0,
            thread_node,
            early: true,
            pass: 1,
            latency_ns: None,
            now_ns: 0.0,
            free: vec![],
            capacity: vec![],
        };
        assert_eq!(p.on_hint_fault(&early(5, 4, 1)), Proposal::MoveTo(1), "a first fault");
        assert_eq!(p.on_hint_fault(&early(6, 0, 0)), Proposal::Stay, "a first fault from its own node");
        assert_eq!(p.on_hint_fault(&early(6, 4, 1)), Proposal::Stay, "shared (another thread faulted last) and from another node");
        assert_eq!(p.on_hint_fault(&early(6, 4, 1)), Proposal::MoveTo(1), "private now");
    }

    /// Sixteen threads, eight per node, share 100 pages; each scan pass every page takes one
    /// hinting fault from one of them at random. Without groups a page moves whenever two faults
    /// in a row come from the other node (about a quarter of the passes); with them the group's
    /// CPU faults are even, so a shared page moves only while its node holds more than 4/3 of the
    /// group's memory faults, and what still moves is mostly private faults (the same thread
    /// twice in a row, 1 in 16), which Linux always lets through.
    #[test]
    fn numa_groups_damp_a_shared_pages_ping_pong() {
        let moves = |groups: bool| {
            let layout = two_nodes();
            let params = Default::default();
            let mut p = NumaBalancing::new(&MigrationView { nodes: &layout, params: &params, seed: 1 }, NumaBalancingParams { groups });
            let mut node_of: Vec<u32> = vec![0; 100];
            let (mut moved, mut late) = (0, 0);
            let mut x = 12345u64;
            for pass in 5..45u32 {
                for (page, node) in node_of.iter_mut().enumerate() {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let tid = (x >> 60) as u32;
                    let f = HintFault { tid, pass, ..fault(page as u32, *node, tid / 8) };
                    if let Proposal::MoveTo(to) = p.on_hint_fault(&f) {
                        *node = to;
                        moved += 1;
                        late += (pass >= 25) as u32;
                    }
                }
            }
            (moved, late, node_of.iter().filter(|&&n| n == 1).count())
        };
        let (without, without_late, _) = moves(false);
        let (with, with_late, on_1) = moves(true);
        assert!(without > 500, "{without} moves without groups");
        assert!(with * 3 < without, "{with} moves with groups, {without} without");
        // Measured: 634 and 179 moves, 322 and 62 in the second half.
        assert!(with_late * 4 < without_late, "second half: {with_late} against {without_late}");
        assert!((20..=80).contains(&on_1), "the pages split between the nodes: {on_1} on node 1");
    }
}
