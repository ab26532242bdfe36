//! The DRAM coordinates an address mapping selects by address bits.

use crate::dram::Organisation;

/// A DRAM coordinate selected by address bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Channel,
    Rank,
    BankGroup,
    Bank,
    Row,
    Column,
}

impl Field {
    /// Every field, in the order used by `describe` and in error messages.
    pub const ALL: [Field; 6] = [Field::Channel, Field::Rank, Field::BankGroup, Field::Bank, Field::Row, Field::Column];

    /// The name used in mapping files and messages ("channel", "bank_group", ...).
    pub fn name(self) -> &'static str {
        match self {
            Field::Channel => "channel",
            Field::Rank => "rank",
            Field::BankGroup => "bank_group",
            Field::Bank => "bank",
            Field::Row => "row",
            Field::Column => "column",
        }
    }

    /// The field with this `name()`.
    pub fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Number of coordinate bits of this field in `org` (log2 of the level's size).
    pub fn width(self, org: &Organisation) -> u32 {
        self.count(org).trailing_zeros()
    }

    fn count(self, org: &Organisation) -> u32 {
        match self {
            Field::Channel => org.channels,
            Field::Rank => org.ranks,
            Field::BankGroup => org.bank_groups,
            Field::Bank => org.banks_per_group,
            Field::Row => org.rows,
            Field::Column => org.columns,
        }
    }

    /// "8 banks per group", "1 bank group", ... for width messages.
    pub(crate) fn count_phrase(self, org: &Organisation) -> String {
        let n = self.count(org);
        let plural = if n == 1 { "" } else { "s" };
        match self {
            Field::Channel => format!("{n} channel{plural}"),
            Field::Rank => format!("{n} rank{plural}"),
            Field::BankGroup => format!("{n} bank group{plural}"),
            Field::Bank => format!("{n} bank{plural} per group"),
            Field::Row => format!("{n} row{plural}"),
            Field::Column => format!("{n} column{plural}"),
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}
