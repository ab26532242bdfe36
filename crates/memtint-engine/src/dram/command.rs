//! DRAM commands and the record of one issued command (what the checker consumes).

use crate::dram::DramAddress;
use crate::Cycle;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Command {
    /// Activate (open) a row in one bank.
    Act,
    /// Precharge (close) one bank.
    Pre,
    /// Precharge all banks of a rank.
    Prea,
    /// Column read.
    Rd,
    /// Column write.
    Wr,
    /// Column read with auto-precharge.
    Rda,
    /// Column write with auto-precharge.
    Wra,
    /// All-bank refresh of a rank.
    Ref,
    /// Per-bank refresh of one bank (LPDDR4's REFpb); the bank must be precharged.
    #[serde(rename = "REFPB")]
    RefPb,
    /// Same-bank refresh (DDR5's REFsb): one bank index in every bank group of a rank,
    /// addressed by bank group 0's bank; those banks must be precharged.
    #[serde(rename = "REFSB")]
    RefSb,
    /// Power-down entry with a bank of the rank open (active power-down; DRAMPower's PDEA).
    /// The four power-down commands are CKE transitions of a whole rank, outside `ALL` and the
    /// timing table: the controller's `PowerDown` times them.
    Pdea,
    /// Power-down entry with every bank of the rank precharged (precharge power-down).
    Pdep,
    /// Exit from active power-down.
    Pdxa,
    /// Exit from precharge power-down.
    Pdxp,
}

impl Command {
    pub const ALL: [Command; 10] = [
        Command::Act,
        Command::Pre,
        Command::Prea,
        Command::Rd,
        Command::Wr,
        Command::Rda,
        Command::Wra,
        Command::Ref,
        Command::RefPb,
        Command::RefSb,
    ];
    /// The commands of `ALL`: those with timing-table entries and per-command counters.
    pub const COUNT: usize = 10;
    /// Power-down entries and exits (`is_power_down`).
    pub const POWER_DOWN: [Command; 4] = [Command::Pdea, Command::Pdep, Command::Pdxa, Command::Pdxp];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, Command::Rd | Command::Rda)
    }
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Command::Wr | Command::Wra)
    }
    #[inline]
    pub fn is_column(self) -> bool {
        self.is_read() || self.is_write()
    }
    /// REF, REFPB or REFSB.
    #[inline]
    pub fn is_refresh(self) -> bool {
        matches!(self, Command::Ref | Command::RefPb | Command::RefSb)
    }
    /// A power-down entry or exit (PDEA, PDEP, PDXA, PDXP): not in `ALL`, no table entry.
    #[inline]
    pub fn is_power_down(self) -> bool {
        matches!(self, Command::Pdea | Command::Pdep | Command::Pdxa | Command::Pdxp)
    }
    /// A power-down entry (PDEA, PDEP).
    #[inline]
    pub fn enters_power_down(self) -> bool {
        matches!(self, Command::Pdea | Command::Pdep)
    }
    /// Commands that address one bank index in every bank group of a rank (REFSB): their
    /// bank-scope rules apply to each of those banks.
    #[inline]
    pub fn addresses_bank_index(self) -> bool {
        matches!(self, Command::RefSb)
    }
    #[inline]
    pub fn auto_precharges(self) -> bool {
        matches!(self, Command::Rda | Command::Wra)
    }
    /// Commands that address a whole rank rather than one bank.
    #[inline]
    pub fn is_rank_wide(self) -> bool {
        matches!(self, Command::Prea | Command::Ref)
    }
    pub fn name(self) -> &'static str {
        match self {
            Command::Act => "ACT",
            Command::Pre => "PRE",
            Command::Prea => "PREA",
            Command::Rd => "RD",
            Command::Wr => "WR",
            Command::Rda => "RDA",
            Command::Wra => "WRA",
            Command::Ref => "REF",
            Command::RefPb => "REFPB",
            Command::RefSb => "REFSB",
            Command::Pdea => "PDEA",
            Command::Pdep => "PDEP",
            Command::Pdxa => "PDXA",
            Command::Pdxp => "PDXP",
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One command as it appeared on a channel's command bus.
/// For rank-wide commands (PREA, REF) `addr.bank_group`, `addr.bank`, `row`, `column` are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandRecord {
    pub cycle: Cycle,
    pub command: Command,
    pub addr: DramAddress,
}

impl std::fmt::Display for CommandRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = &self.addr;
        write!(f, "{} @{} (ch {} rank {} bg {} bank {}", self.command, self.cycle, a.channel, a.rank, a.bank_group, a.bank)?;
        match self.command {
            Command::Act => write!(f, " row {})", a.row),
            c if c.is_column() => write!(f, " row {} col {})", a.row, a.column),
            _ => write!(f, ")"),
        }
    }
}
