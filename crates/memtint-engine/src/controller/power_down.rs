//! Rank power-down (`controller.power_down_after`): a rank with nothing queued for it, no
//! refresh due and no command for `after` cycles drops CKE: precharge power-down when every
//! bank is closed, active power-down when a row is open (DRAMPower's PDEP/PDEA, gem5's
//! `PWR_PRE_PDN`/`PWR_ACT_PDN`). A request or a refresh for it wakes it: the exit (PDXP/PDXA)
//! comes at least tCKE after the entry, and the rank takes no command for tXP after the exit
//! (fast exit, DLL on). Real controllers do this on an idle timer (Intel's CKE power-down);
//! off by default, as in gem5 and Ramulator 2, so that runs without it are unchanged.
//!
//! A rank enters no earlier than JEDEC's entry distances after its last commands: 1 cycle
//! after ACT or PRE (tACTPDEN, tPRPDEN), RL + BL/2 + 1 after a read (tRDPDEN), WL + BL/2 +
//! tWR after a write (tWRPDEN, one more with auto-precharge), and after a refresh its whole
//! refresh cycle (JEDEC allows entry 1 cycle after REF; waiting keeps a refresh's current out
//! of the power-down figures).

use crate::dram::{Command, TimingParams};
use crate::error::{Error, Result};
use crate::{Cycle, NEVER};

pub struct PowerDown {
    /// Idle cycles before entry (`NEVER`: power-down off).
    after: Cycle,
    pub t_xp: u64,
    pub t_cke: u64,
    distance: [u64; Command::COUNT],
    /// Per rank: no entry before this cycle (its last commands' distances and the idle time).
    entry_at: Vec<Cycle>,
    /// Per rank: powered down since (`NEVER`: up), with a bank open.
    down: Vec<(Cycle, bool)>,
    /// Per rank: a request or refresh waits for its exit.
    wake: Vec<bool>,
}

impl PowerDown {
    /// `controller.power_down_after` needs the device's exit and residency times.
    pub fn check(after: Option<u64>, t: &TimingParams, device: &str) -> Result<()> {
        if after.is_some() && (t.tXP == 0 || t.tCKE == 0) {
            return Err(Error::config(
                "controller.power_down_after",
                format!("device {device} gives no tXP and tCKE (its [timing] table), so its ranks cannot power down"),
            ));
        }
        Ok(())
    }

    pub fn new(after: Option<u64>, t: &TimingParams, ranks: u32, device: &str) -> Result<Self> {
        Self::check(after, t, device)?;
        let mut distance = [1; Command::COUNT];
        let read = t.CL + t.tBL + 1;
        let write = t.CWL + t.tBL + t.tWR;
        for (c, d) in [
            (Command::Rd, read),
            (Command::Rda, read),
            (Command::Wr, write),
            (Command::Wra, write + 1),
            (Command::Ref, t.tRFC),
            (Command::RefPb, t.tRFCpb),
            (Command::RefSb, t.tRFCsb),
        ] {
            distance[c.index()] = d.max(1);
        }
        Ok(PowerDown {
            after: after.unwrap_or(NEVER),
            t_xp: t.tXP,
            t_cke: t.tCKE,
            distance,
            entry_at: vec![after.unwrap_or(NEVER); ranks as usize],
            down: vec![(NEVER, false); ranks as usize],
            wake: vec![false; ranks as usize],
        })
    }

    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.after != NEVER
    }

    /// `cmd` issued to `rank` at `now`.
    #[inline]
    pub fn note(&mut self, rank: usize, cmd: Command, now: Cycle) {
        let at = now + self.after.max(self.distance[cmd.index()]);
        self.entry_at[rank] = self.entry_at[rank].max(at);
    }

    pub fn is_down(&self, rank: usize) -> bool {
        self.down[rank].0 != NEVER
    }

    /// The earliest cycle `rank` may enter, if it is up.
    pub fn entry_at(&self, rank: usize) -> Cycle {
        if self.is_down(rank) {
            NEVER
        } else {
            self.entry_at[rank]
        }
    }

    /// `rank` powers down at `now` (with a bank open: `active`); the command to log.
    pub fn enter(&mut self, rank: usize, now: Cycle, active: bool) -> Command {
        debug_assert!(!self.is_down(rank) && now >= self.entry_at[rank]);
        self.down[rank] = (now, active);
        if active {
            Command::Pdea
        } else {
            Command::Pdep
        }
    }

    /// Something waits for `rank`: the earliest cycle its exit may come (tCKE after entry), if
    /// it is down.
    pub fn want_exit(&mut self, rank: usize, now: Cycle) -> Option<Cycle> {
        let (since, _) = self.down[rank];
        if since == NEVER {
            return None;
        }
        self.wake[rank] = true;
        Some(now.max(since + self.t_cke))
    }

    /// The earliest cycle a wanted exit may come (`NEVER`: none wanted).
    pub fn next_exit(&self) -> Cycle {
        (0..self.down.len()).filter(|&r| self.wake[r]).map(|r| self.down[r].0 + self.t_cke).min().unwrap_or(NEVER)
    }

    /// The ranks whose wanted exit may come at `now`.
    pub fn exits_due(&self, now: Cycle) -> impl Iterator<Item = usize> + '_ {
        (0..self.down.len()).filter(move |&r| self.wake[r] && self.down[r].0 + self.t_cke <= now)
    }

    /// `rank` leaves power-down at `now`; the command to log. It takes commands from `now + tXP`
    /// and may not enter again before `after` more idle cycles.
    pub fn exit(&mut self, rank: usize, now: Cycle) -> Command {
        let (since, active) = std::mem::replace(&mut self.down[rank], (NEVER, false));
        debug_assert!(since != NEVER && now >= since + self.t_cke);
        self.wake[rank] = false;
        self.entry_at[rank] = now + self.t_xp + self.after;
        if active {
            Command::Pdxa
        } else {
            Command::Pdxp
        }
    }
}
