//! The lane controller's timing state: what `ChannelTiming` (`channel_timing.rs`) enforces, kept
//! as the lanes' parts. Per bank the bank-level earliest ACT, column command and PRE; per
//! (kind, bank group) the shared part (bank group, rank and tFAW) of RD, ACT, PRE and WR; per
//! rank PREA and REF; the command bus. Issuing a command raises these tables and, in place,
//! every other bank's lane it constrains (`Lanes::raise_kind`), with the same derived
//! `Constraints` and the same rules as `ChannelTiming::issue`; the issuing bank's lanes are
//! rebuilt by the controller. Tables are full 64-bit cycles; lanes are offsets from `base`.

use super::lanes::{Lanes, K_ACT, K_PRE, K_RD, K_WR};
use super::shape::{Dynamic, Shape};
use crate::dram::constraints::Constraints;
use crate::dram::Command;
use crate::Cycle;

/// Raise `slot` to `t`: a maximum, not a test (the test's branch mispredicts).
#[inline(always)]
fn raise(slot: &mut Cycle, t: Cycle) {
    *slot = (*slot).max(t);
}

/// Most ranks per channel (the tables' fixed size). With 64 banks and at least 8 banks per rank
/// no preset exceeds it; tables sized for 64 ranks measured 15 % slower.
pub const LANE_MAX_RANKS: u32 = 8;

/// Most banks (and so bank groups) per channel, ranks per channel: the tables' fixed sizes (powers
/// of two), so an index masked with `size - 1` needs no bounds check.
const MAX_BANKS: usize = 64;
const MAX_RANKS: usize = LANE_MAX_RANKS as usize;

pub struct LaneTiming {
    pub c: Constraints,
    pub bank_act: [Cycle; MAX_BANKS],
    /// RD and WR: only ACT constrains them at bank level, alike (tRCD).
    pub bank_col: [Cycle; MAX_BANKS],
    pub bank_pre: [Cycle; MAX_BANKS],
    /// Before this cycle an RD may not auto-precharge (`Constraints::wr_to_rda`).
    pub bank_rda: [Cycle; MAX_BANKS],
    /// Per kind RD, ACT, PRE, WR (`lanes::K_*`), per channel bank group: the shared part of a
    /// command's ready time (bank group, rank and tFAW).
    shared: [[Cycle; MAX_BANKS]; 4],
    pub rank_prea: [Cycle; MAX_RANKS],
    pub rank_ref: [Cycle; MAX_RANKS],
    /// Per rank, ACT + tFAW of its last four ACTs, as a ring.
    faw: [[Cycle; 4]; MAX_RANKS],
    faw_pos: [usize; MAX_RANKS],
    /// With a column-command throttle (`Constraints::col_window`): the channel's last column
    /// commands' cycles + the window, as a ring (empty without one).
    col_ring: Vec<Cycle>,
    col_pos: usize,
    /// One command per cycle.
    pub bus: Cycle,
    ranks: usize,
    groups: usize,
    groups_per_rank: usize,
}

impl LaneTiming {
    pub fn new(c: Constraints, ranks: u32, groups_per_rank: u32, banks: usize) -> Self {
        let (ranks, gpr) = (ranks as usize, groups_per_rank as usize);
        assert!(banks <= MAX_BANKS && ranks <= MAX_RANKS && ranks * gpr <= MAX_BANKS, "checked by lane_controller::unsupported");
        let col_ring = vec![0; c.col_window_commands as usize];
        LaneTiming {
            c,
            col_ring,
            col_pos: 0,
            bank_act: [0; MAX_BANKS],
            bank_col: [0; MAX_BANKS],
            bank_pre: [0; MAX_BANKS],
            bank_rda: [0; MAX_BANKS],
            shared: [[0; MAX_BANKS]; 4],
            rank_prea: [0; MAX_RANKS],
            rank_ref: [0; MAX_RANKS],
            faw: [[0; 4]; MAX_RANKS],
            faw_pos: [0; MAX_RANKS],
            bus: 0,
            ranks,
            groups: ranks * gpr,
            groups_per_rank: gpr,
        }
    }

    /// The shared part of kind `k`'s ready time in channel bank group `g`.
    #[inline(always)]
    pub fn shared(&self, k: i32, g: usize) -> Cycle {
        self.shared[k as usize & 3][g & (MAX_BANKS - 1)]
    }

    /// Raise kind `k`'s shared entries: group `g` to `same_group` (callers pass `same_group >=
    /// same_rank`), rank `r`'s other groups to `same_rank`, with `other_rank` the other ranks'
    /// (`None`: none; only read with more than one rank); with `lanes`, its lanes too.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn raise_shared<S: Shape>(
        &mut self,
        lanes: Option<&mut Lanes>,
        base: Cycle,
        k: i32,
        g: usize,
        r: usize,
        same_group: Cycle,
        same_rank: Cycle,
        other_rank: Option<Cycle>,
    ) {
        let gpr = self.groups_per_rank;
        let first = r * gpr;
        let row = &mut self.shared[k as usize & 3];
        let other_rank = other_rank.filter(|_| S::MULTI_RANK.unwrap_or(self.ranks > 1));
        if let Some(o) = other_rank {
            for j in 0..first {
                raise(&mut row[j & (MAX_BANKS - 1)], o);
            }
            for j in first + gpr..self.groups {
                raise(&mut row[j & (MAX_BANKS - 1)], o);
            }
        }
        for j in first..first + gpr {
            raise(&mut row[j & (MAX_BANKS - 1)], same_rank);
        }
        raise(&mut row[g & (MAX_BANKS - 1)], same_group);
        if let Some(lanes) = lanes {
            let off = |t: Cycle| (t - base) as i32;
            lanes.raise_kind::<S>(k, g as i32, r as i32, off(same_group), off(same_rank), other_rank.map_or(0, off));
        }
    }

    /// Record `cmd` issued at `now` to bank `b` (group `g`, rank `r`); `act_cycle` is the bank's
    /// latest ACT (auto-precharge). Raises the lanes of the active direction (`col_kind`: its
    /// column kind) except bank `b`'s, which the caller rebuilds. The scheduler's hot path
    /// calls the per-command methods below directly, with the command known.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(
        &mut self,
        lanes: &mut Lanes,
        base: Cycle,
        col_kind: i32,
        cmd: Command,
        now: Cycle,
        r: usize,
        g: usize,
        b: usize,
        act_cycle: Cycle,
    ) {
        match cmd {
            Command::Act => self.act::<Dynamic>(lanes, base, now, r, g, b),
            Command::Pre => self.pre(now, r, b),
            Command::Prea => self.prea(lanes, base, now, r, g),
            Command::Rd | Command::Rda => {
                self.rd::<Dynamic>(lanes, base, col_kind, now, r, g, b, (cmd == Command::Rda).then_some(act_cycle))
            }
            Command::Wr | Command::Wra => {
                self.wr::<Dynamic>(lanes, base, col_kind, now, r, g, b, (cmd == Command::Wra).then_some(act_cycle))
            }
            Command::Ref => self.refresh(lanes, base, now, r, g),
            Command::RefPb | Command::RefSb => {
                unreachable!("bank refreshes run on the general controller (lane_controller::unsupported)")
            }
            Command::Pdea | Command::Pdep | Command::Pdxa | Command::Pdxp => {
                unreachable!("power-down runs on the general controller (lane_controller::unsupported)")
            }
        }
    }

    #[inline(always)]
    pub fn act<S: Shape>(&mut self, lanes: &mut Lanes, base: Cycle, now: Cycle, r: usize, g: usize, b: usize) {
        let c = &self.c;
        self.bus = now + 1;
        let b = b & (MAX_BANKS - 1);
        raise(&mut self.bank_act[b], now + c.act_to_act);
        raise(&mut self.bank_col[b], now + c.act_to_col);
        raise(&mut self.bank_pre[b], now + c.act_to_pre);
        let r = r & (MAX_RANKS - 1);
        raise(&mut self.rank_prea[r], now + c.act_to_pre);
        let pos = self.faw_pos[r] & 3;
        self.faw[r][pos] = now + c.faw;
        let pos = (pos + 1) & 3;
        self.faw_pos[r] = pos;
        // tRRD_S and the window's new oldest ACT bind the rank's groups, tRRD_L this one.
        let s = (now + c.act_to_act_s).max(self.faw[r][pos]);
        let l = s.max(now + c.act_to_act_l);
        self.raise_shared::<S>(Some(lanes), base, K_ACT, g, r, l, s, None);
    }

    #[inline(always)]
    pub fn pre(&mut self, now: Cycle, r: usize, b: usize) {
        self.bus = now + 1;
        let t = now + self.c.pre_to_act;
        raise(&mut self.bank_act[b & (MAX_BANKS - 1)], t);
        raise(&mut self.rank_ref[r & (MAX_RANKS - 1)], t);
    }

    fn prea(&mut self, lanes: &mut Lanes, base: Cycle, now: Cycle, r: usize, g: usize) {
        self.bus = now + 1;
        let t = now + self.c.pre_to_act;
        raise(&mut self.rank_ref[r & (MAX_RANKS - 1)], t);
        self.raise_shared::<Dynamic>(Some(lanes), base, K_ACT, g, r, t, t, None);
    }

    fn refresh(&mut self, lanes: &mut Lanes, base: Cycle, now: Cycle, r: usize, g: usize) {
        self.bus = now + 1;
        let t = now + self.c.refresh;
        raise(&mut self.rank_ref[r & (MAX_RANKS - 1)], t);
        raise(&mut self.rank_prea[r & (MAX_RANKS - 1)], t);
        self.raise_shared::<Dynamic>(Some(&mut *lanes), base, K_ACT, g, r, t, t, None);
        self.raise_shared::<Dynamic>(Some(&mut *lanes), base, K_PRE, g, r, t, t, None);
    }

    /// A column command at `now` enters the throttle's ring; the cycle its window's new oldest
    /// command lets the next one issue (0 without a throttle).
    #[inline(always)]
    fn column_window(&mut self, now: Cycle) -> Cycle {
        let n = self.col_ring.len();
        if n == 0 {
            return 0;
        }
        self.col_ring[self.col_pos] = now + self.c.col_window;
        self.col_pos = (self.col_pos + 1) % n;
        self.col_ring[self.col_pos]
    }

    /// RD (RDA with `auto_act`: the bank's latest ACT).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn rd<S: Shape>(
        &mut self,
        lanes: &mut Lanes,
        base: Cycle,
        col_kind: i32,
        now: Cycle,
        r: usize,
        g: usize,
        b: usize,
        auto_act: Option<Cycle>,
    ) {
        let c = &self.c;
        self.bus = now + 1;
        let (b, r) = (b & (MAX_BANKS - 1), r & (MAX_RANKS - 1));
        raise(&mut self.bank_pre[b], now + c.rd_to_pre);
        raise(&mut self.rank_prea[r], now + c.rd_to_pre);
        if let Some(act) = auto_act {
            let ap = c.auto_precharge_ready(act, now, false);
            raise(&mut self.bank_act[b], ap);
            raise(&mut self.rank_ref[r], ap);
        }
        let (l, s, o) = (now + c.rd_to_rd_l.max(c.rd_to_rd_s), now + c.rd_to_rd_s, now + c.rd_to_rd_rank);
        let (t, o2) = (now + c.rd_to_wr, now + c.rd_to_wr_rank);
        let w = self.column_window(now);
        let (l, s, o, t, o2) = (l.max(w), s.max(w), o.max(w), t.max(w), o2.max(w));
        let lanes_rd = (col_kind == K_RD).then_some(&mut *lanes);
        self.raise_shared::<S>(lanes_rd, base, K_RD, g, r, l, s, Some(o));
        let lanes_wr = (col_kind == K_WR).then_some(&mut *lanes);
        self.raise_shared::<S>(lanes_wr, base, K_WR, g, r, t, t, Some(o2));
    }

    /// WR (WRA with `auto_act`: the bank's latest ACT).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn wr<S: Shape>(
        &mut self,
        lanes: &mut Lanes,
        base: Cycle,
        col_kind: i32,
        now: Cycle,
        r: usize,
        g: usize,
        b: usize,
        auto_act: Option<Cycle>,
    ) {
        let c = &self.c;
        self.bus = now + 1;
        let (b, r) = (b & (MAX_BANKS - 1), r & (MAX_RANKS - 1));
        raise(&mut self.bank_pre[b], now + c.wr_to_pre);
        raise(&mut self.bank_rda[b], now + c.wr_to_rda);
        raise(&mut self.rank_prea[r], now + c.wr_to_pre);
        if let Some(act) = auto_act {
            let ap = c.auto_precharge_ready(act, now, true);
            raise(&mut self.bank_act[b], ap);
            raise(&mut self.rank_ref[r], ap);
        }
        let (l, s, o) = (now + c.wr_to_wr_l.max(c.wr_to_wr_s), now + c.wr_to_wr_s, now + c.wr_to_wr_rank);
        let (l2, s2, o2) = (now + c.wr_to_rd_s.max(c.wr_to_rd_l), now + c.wr_to_rd_s, now + c.wr_to_rd_rank);
        let w = self.column_window(now);
        let (l, s, o, l2, s2, o2) = (l.max(w), s.max(w), o.max(w), l2.max(w), s2.max(w), o2.max(w));
        let lanes_wr = (col_kind == K_WR).then_some(&mut *lanes);
        self.raise_shared::<S>(lanes_wr, base, K_WR, g, r, l, s, Some(o));
        let lanes_rd = (col_kind == K_RD).then_some(&mut *lanes);
        self.raise_shared::<S>(lanes_rd, base, K_RD, g, r, l2, s2, Some(o2));
    }
}
