//! The lane controller's timing state: what `ChannelTiming` (`timing_state.rs`) enforces, kept
//! as the lanes' parts. Per bank the bank-level earliest ACT, column command and PRE; per
//! (kind, bank group) the shared part (bank group, rank and tFAW) of RD, ACT, PRE and WR; per
//! rank PREA and REF; the command bus. Issuing a command raises these tables and, in place,
//! every other bank's lane it constrains (`Lanes::raise_kind`), with the same derived
//! `Constraints` and the same rules as `ChannelTiming::issue`; the issuing bank's lanes are
//! rebuilt by the controller. Tables are full 64-bit cycles; lanes are offsets from `base`.

use super::lanes::{Lanes, K_ACT, K_PRE, K_RD, K_WR};
use crate::dram::constraints::Constraints;
use crate::dram::Command;
use crate::Cycle;

#[inline(always)]
fn raise(slot: &mut Cycle, t: Cycle) {
    if *slot < t {
        *slot = t;
    }
}

pub struct LaneTiming {
    pub c: Constraints,
    pub bank_act: Vec<Cycle>,
    /// RD and WR: only ACT constrains them at bank level, alike (tRCD).
    pub bank_col: Vec<Cycle>,
    pub bank_pre: Vec<Cycle>,
    /// `kind * groups + group` for kinds RD, ACT, PRE, WR (`lanes::K_*`).
    shared: Shared,
    pub rank_prea: Vec<Cycle>,
    pub rank_ref: Vec<Cycle>,
    /// Per rank, ACT + tFAW of its last four ACTs, as a ring.
    faw: Vec<[Cycle; 4]>,
    faw_pos: Vec<usize>,
    /// One command per cycle.
    pub bus: Cycle,
    ranks: usize,
}

/// Per (kind, bank group): the shared part of a command's ready time.
struct Shared {
    v: Vec<Cycle>,
    groups: usize,
    groups_per_rank: usize,
}

impl Shared {
    /// Raise kind `k`'s entries (group `g` to `same_group`, rank `r`'s other groups to
    /// `same_rank`, other ranks' to `other_rank`) and, with `lanes`, its lanes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn raise_kind(&mut self, lanes: Option<&mut Lanes>, base: Cycle, k: i32, g: usize, r: usize, same_group: Cycle, same_rank: Cycle, other_rank: Option<Cycle>) {
        let row = k as usize * self.groups;
        let first = r * self.groups_per_rank;
        let entries = &mut self.v[row..row + self.groups];
        let (before, rest) = entries.split_at_mut(first);
        let (own, after) = rest.split_at_mut(self.groups_per_rank);
        if let Some(o) = other_rank {
            for e in before.iter_mut().chain(after) {
                raise(e, o);
            }
        }
        for e in own.iter_mut() {
            raise(e, same_rank);
        }
        // Callers pass `same_group >= same_rank`.
        raise(&mut own[g - first], same_group);
        if let Some(lanes) = lanes {
            let off = |t: Cycle| (t - base) as i32;
            lanes.raise_kind(k, g as i32, r as i32, off(same_group), off(same_rank), other_rank.map_or(0, off));
        }
    }
}

impl LaneTiming {
    pub fn new(c: Constraints, ranks: u32, groups_per_rank: u32, banks: usize) -> Self {
        let (ranks, gpr) = (ranks as usize, groups_per_rank as usize);
        LaneTiming {
            c,
            bank_act: vec![0; banks],
            bank_col: vec![0; banks],
            bank_pre: vec![0; banks],
            shared: Shared { v: vec![0; 4 * ranks * gpr], groups: ranks * gpr, groups_per_rank: gpr },
            rank_prea: vec![0; ranks],
            rank_ref: vec![0; ranks],
            faw: vec![[0; 4]; ranks],
            faw_pos: vec![0; ranks],
            bus: 0,
            ranks,
        }
    }

    /// The shared part of kind `k`'s ready time in channel bank group `g`.
    #[inline(always)]
    pub fn shared(&self, k: i32, g: usize) -> Cycle {
        self.shared.v[k as usize * self.shared.groups + g]
    }

    /// Record `cmd` issued at `now` to bank `b` (group `g`, rank `r`); `act_cycle` is the bank's
    /// latest ACT (auto-precharge). Raises the lanes of the active direction (`col_kind`: its
    /// column kind) except bank `b`'s, which the caller rebuilds.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(&mut self, lanes: &mut Lanes, base: Cycle, col_kind: i32, cmd: Command, now: Cycle, r: usize, g: usize, b: usize, act_cycle: Cycle) {
        let c = &self.c;
        self.bus = now + 1;
        match cmd {
            Command::Act => {
                raise(&mut self.bank_act[b], now + c.act_to_act);
                raise(&mut self.bank_col[b], now + c.act_to_col);
                raise(&mut self.bank_pre[b], now + c.act_to_pre);
                raise(&mut self.rank_prea[r], now + c.act_to_pre);
                let pos = self.faw_pos[r];
                self.faw[r][pos] = now + c.faw;
                let pos = (pos + 1) % 4;
                self.faw_pos[r] = pos;
                // tRRD_S and the window's new oldest ACT bind the rank's groups, tRRD_L this one.
                let s = (now + c.act_to_act_s).max(self.faw[r][pos]);
                let l = s.max(now + c.act_to_act_l);
                self.shared.raise_kind(Some(lanes), base, K_ACT, g, r, l, s, None);
            }
            Command::Pre => {
                raise(&mut self.bank_act[b], now + c.pre_to_act);
                raise(&mut self.rank_ref[r], now + c.pre_to_act);
            }
            Command::Prea => {
                let t = now + c.pre_to_act;
                raise(&mut self.rank_ref[r], t);
                self.shared.raise_kind(Some(lanes), base, K_ACT, g, r, t, t, None);
            }
            Command::Rd | Command::Rda => {
                raise(&mut self.bank_pre[b], now + c.rd_to_pre);
                raise(&mut self.rank_prea[r], now + c.rd_to_pre);
                let (l, s, o) = (now + c.rd_to_rd_l.max(c.rd_to_rd_s), now + c.rd_to_rd_s, now + c.rd_to_rd_rank);
                let other = (self.ranks > 1).then_some(o);
                let lanes_rd = (col_kind == K_RD).then_some(&mut *lanes);
                self.shared.raise_kind(lanes_rd, base, K_RD, g, r, l, s, other);
                let (t, o) = (now + c.rd_to_wr, now + c.rd_to_wr_rank);
                let lanes_wr = (col_kind == K_WR).then_some(&mut *lanes);
                self.shared.raise_kind(lanes_wr, base, K_WR, g, r, t, t, (self.ranks > 1).then_some(o));
                if cmd == Command::Rda {
                    let ap = c.auto_precharge_ready(act_cycle, now, false);
                    raise(&mut self.bank_act[b], ap);
                    raise(&mut self.rank_ref[r], ap);
                }
            }
            Command::Wr | Command::Wra => {
                raise(&mut self.bank_pre[b], now + c.wr_to_pre);
                raise(&mut self.rank_prea[r], now + c.wr_to_pre);
                let (l, s, o) = (now + c.wr_to_wr_l.max(c.wr_to_wr_s), now + c.wr_to_wr_s, now + c.wr_to_wr_rank);
                let other = (self.ranks > 1).then_some(o);
                let lanes_wr = (col_kind == K_WR).then_some(&mut *lanes);
                self.shared.raise_kind(lanes_wr, base, K_WR, g, r, l, s, other);
                let (l, s, o) = (now + c.wr_to_rd_s.max(c.wr_to_rd_l), now + c.wr_to_rd_s, now + c.wr_to_rd_rank);
                let other = (self.ranks > 1).then_some(o);
                let lanes_rd = (col_kind == K_RD).then_some(&mut *lanes);
                self.shared.raise_kind(lanes_rd, base, K_RD, g, r, l, s, other);
                if cmd == Command::Wra {
                    let ap = c.auto_precharge_ready(act_cycle, now, true);
                    raise(&mut self.bank_act[b], ap);
                    raise(&mut self.rank_ref[r], ap);
                }
            }
            Command::Ref => {
                let t = now + c.refresh;
                raise(&mut self.rank_ref[r], t);
                raise(&mut self.rank_prea[r], t);
                self.shared.raise_kind(Some(&mut *lanes), base, K_ACT, g, r, t, t, None);
                self.shared.raise_kind(Some(&mut *lanes), base, K_PRE, g, r, t, t, None);
            }
        }
    }
}
