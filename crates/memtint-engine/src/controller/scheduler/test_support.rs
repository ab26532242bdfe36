//! Hand-built queues for the schedulers' unit tests: requests enqueued at chosen cycles on one
//! DDR3-1600 channel, run to completion cycle by cycle; the order in which they were served.
//! Every issued command goes through the independent timing checker.

use crate::checker::TimingChecker;
use crate::config::{ControllerConfig, MachineConfig, MemoryConfig};
use crate::controller::{ChannelController, Origin, Request};
use crate::dram::DramAddress;
use crate::Cycle;

#[derive(Clone, Copy, Debug)]
pub struct Req {
    pub id: u64,
    pub source: u32,
    pub bank: u32,
    pub row: u32,
    pub column: u32,
    pub at: Cycle,
    pub is_write: bool,
}

impl Req {
    /// A read arriving at cycle 0 (requests of one cycle queue in the order given).
    pub fn read(id: u64, source: u32, bank: u32, row: u32, column: u32) -> Req {
        Req { id, source, bank, row, column, at: 0, is_write: false }
    }

    pub fn at(self, at: Cycle) -> Req {
        Req { at, ..self }
    }
}

/// A queued read of `source` (its own process) to `flat_bank`, `row`, for calling a scheduler's
/// hooks directly.
pub fn request(source: u32, flat_bank: u32, row: u32) -> Request {
    Request {
        id: 0,
        seq: 0,
        addr: 0,
        is_write: false,
        source,
        process: source,
        rank: 0,
        group: 0,
        flat_bank,
        row,
        column: 0,
        arrival: 0,
        ready_at: 1,
        outcome: None,
        cause: Default::default(),
    }
}

fn memory(cfg: &ControllerConfig) -> MemoryConfig {
    let mut machine = MachineConfig::load("ddr3-1600").expect("preset");
    machine.controller = cfg.clone();
    machine.controller.read_queue = 64;
    machine.controller.refresh = "none".into();
    MemoryConfig::resolve(&machine).expect("resolves")
}

/// Ids of `reqs` in the order their column commands issued (reads complete in issue order).
pub fn served_order(cfg: &ControllerConfig, reqs: &[Req]) -> Vec<u64> {
    let mem = memory(cfg);
    let mut ch = ChannelController::new(0, mem.device.standard, &mem.org, &mem.timing, &mem.controller).expect("controller");
    ch.record_commands(true);
    let mut pending: Vec<Req> = reqs.to_vec();
    pending.sort_by_key(|r| r.at);
    let mut pending = pending.into_iter().peekable();
    let mut done = Vec::new();
    let mut now = 0;
    while done.len() < reqs.len() {
        while let Some(r) = pending.next_if(|r| r.at <= now) {
            let addr = DramAddress { channel: 0, rank: 0, bank_group: 0, bank: r.bank, row: r.row, column: r.column };
            assert!(ch.can_accept(r.is_write), "test queue overflows");
            ch.enqueue(now, r.id, 0, &addr, r.is_write, Origin::single(r.source));
        }
        ch.tick(now, &mut done);
        now += 1;
        assert!(now < 10_000_000, "requests never finished");
    }
    let commands = ch.drain_log();
    let violations = TimingChecker::check_stream(mem.device.standard, &mem.org, &mem.timing, &commands);
    assert!(violations.is_empty(), "timing violations: {violations:?}");
    done.iter().map(|c| c.id).collect()
}
