//! The general GF(2)-linear address mapping: construction, validation, decode and encode.
//!
//! Internally the coordinate bits of all fields are packed into one word (the "packed
//! coordinate"), column lowest, then channel, rank, bank group, bank and row. Decoding is a
//! linear map from the address to that word, evaluated as an XOR of a few
//! `addr.rotate_right(r) & mask` terms: every (address bit -> packed bit) pair with the same
//! distance `r` shares one term, so a plain bit-selection map with contiguous runs costs one term
//! per distinct run offset, and each extra XOR input adds at most one term per distinct distance.
//! Encoding uses the inverse matrix, computed once by Gauss-Jordan elimination over GF(2).

use crate::dram::{DramAddress, Organisation};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

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
    fn count_phrase(self, org: &Organisation) -> String {
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

    fn index(self) -> usize {
        self as usize
    }
}

/// Order of the fields inside the packed coordinate word, least significant first.
const PACK_ORDER: [Field; 6] = [Field::Column, Field::Channel, Field::Rank, Field::BankGroup, Field::Bank, Field::Row];

/// Largest supported capacity, in address bits (keeps every mask and shift inside a u64).
const MAX_CAPACITY_BITS: u32 = 63;

/// A physical-address -> DRAM-coordinate map in which every coordinate bit is the XOR (GF(2)
/// parity) of a set of physical-address bits, validated to be a bijection over the capacity.
#[derive(Clone, Debug)]
pub struct AddressMapping {
    name: String,
    capacity_bits: u32,
    offset_bits: u32,
    /// Per field (indexed by `Field::index`), per coordinate bit (LSB first), the sorted address
    /// bits XORed.
    bits: [Vec<Vec<u32>>; 6],
    /// packed = XOR over terms of `addr.rotate_right(rot) & mask`.
    decode_terms: Vec<(u32, u64)>,
    /// Per field (indexed by `Field::index`): (shift, mask) of the field in the packed word.
    extract: [(u32, u64); 6],
    /// address = XOR of `encode_cols[i]` over the set bits i of the packed word.
    encode_cols: Vec<u64>,
}

fn term_str(term: &[u32]) -> String {
    term.iter().map(|b| format!("b{b}")).collect::<Vec<_>>().join("^")
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

impl AddressMapping {
    /// A named layout such as "RoBaRaCoCh"; see the module documentation for the rule.
    pub fn from_layout(layout: &str, org: &Organisation) -> Result<Self> {
        let fields = super::layout::layout_fields(layout, org)?;
        Self::from_fields(layout, org, &fields)
    }

    /// An explicit mapping file (TOML, see `spec`); `origin` names the file in errors.
    pub fn from_toml(text: &str, origin: &str, org: &Organisation) -> Result<Self> {
        super::spec::MappingSpec::parse(text, origin)?.build(origin, org)
    }

    /// Explicit: for each field, for each coordinate bit (LSB first), the list of address bits
    /// XORed. A field not listed has no bits (right only if the organisation has one of it).
    pub fn from_fields(name: &str, org: &Organisation, fields: &[(Field, Vec<Vec<u32>>)]) -> Result<Self> {
        org.validate()?;
        let offset_bits = org.bus_bytes().trailing_zeros();
        let capacity_bits: u32 = offset_bits + Field::ALL.iter().map(|f| f.width(org)).sum::<u32>();
        if capacity_bits > MAX_CAPACITY_BITS {
            return Err(Error::config(
                "organisation",
                format!("capacity of 2^{capacity_bits} bytes exceeds the supported 2^{MAX_CAPACITY_BITS}"),
            ));
        }

        // Collect the fields, rejecting duplicates; a missing field has no bits.
        let mut given: [Option<&Vec<Vec<u32>>>; 6] = Default::default();
        for (field, terms) in fields {
            if given[field.index()].replace(terms).is_some() {
                return Err(Error::config(field.name(), "is given twice"));
            }
        }
        let mut bits: [Vec<Vec<u32>>; 6] = Default::default();
        for field in Field::ALL {
            let terms = given[field.index()].cloned().unwrap_or_default();
            let need = field.width(org);
            if terms.len() as u32 != need {
                let missing = if given[field.index()].is_none() { " (missing)" } else { "" };
                return Err(Error::config(
                    field.name(),
                    format!(
                        "has {} bit{}{missing} but the organisation has {} (needs {need})",
                        terms.len(),
                        if terms.len() == 1 { "" } else { "s" },
                        field.count_phrase(org)
                    ),
                ));
            }
            let mut sorted_terms = Vec::with_capacity(terms.len());
            for (i, term) in terms.iter().enumerate() {
                if term.is_empty() {
                    return Err(Error::config(field.name(), format!("bit {i} lists no address bits")));
                }
                for &b in term {
                    if b < offset_bits || b >= capacity_bits {
                        return Err(Error::config(
                            field.name(),
                            format!(
                                "bit {i} uses address bit {b}, outside the mapped range {offset_bits}..={} \
                                 (bits below {offset_bits} are the byte within the {}-byte bus word; \
                                 the capacity is 2^{capacity_bits} bytes)",
                                capacity_bits - 1,
                                org.bus_bytes()
                            ),
                        ));
                    }
                }
                let mut t = term.clone();
                t.sort_unstable();
                if let Some(w) = t.windows(2).find(|w| w[0] == w[1]) {
                    return Err(Error::config(
                        field.name(),
                        format!("bit {i} lists address bit {} twice (an XOR of a bit with itself is 0)", w[0]),
                    ));
                }
                sorted_terms.push(t);
            }
            bits[field.index()] = sorted_terms;
        }

        // Packed layout: field offsets and the coordinate bit behind each packed position.
        let mut extract = [(0u32, 0u64); 6];
        let mut coords: Vec<(Field, u32, u64)> = Vec::new(); // packed index -> (field, bit, address mask)
        for field in PACK_ORDER {
            let w = field.width(org);
            extract[field.index()] = (coords.len() as u32, (1u64 << w) - 1);
            for (i, term) in bits[field.index()].iter().enumerate() {
                coords.push((field, i as u32, term.iter().fold(0u64, |m, &b| m | 1 << b)));
            }
        }
        let coord_str = |k: usize| {
            let (f, i, _) = coords[k];
            format!("{} bit {i} ({})", f.name(), term_str(&bits[f.index()][i as usize]))
        };

        // Every mapped address bit must feed some coordinate bit.
        let used = coords.iter().fold(0u64, |m, c| m | c.2);
        if let Some(b) = (offset_bits..capacity_bits).find(|&b| used >> b & 1 == 0) {
            return Err(Error::config(
                "fields",
                format!("physical address bit {b} is used by no field, so two addresses map to the same location"),
            ));
        }

        // The same single address bit selected by two coordinate bits.
        let mut single_user: BTreeMap<u32, usize> = BTreeMap::new();
        for (k, c) in coords.iter().enumerate() {
            if c.2.count_ones() == 1 {
                let b = c.2.trailing_zeros();
                if let Some(&first) = single_user.get(&b) {
                    let (f0, i0, _) = coords[first];
                    return Err(Error::config(
                        "fields",
                        format!(
                            "address bit {b} is used by both {} bit {i0} and {} bit {}, so two addresses map to \
                             the same location",
                            f0.name(),
                            c.0.name(),
                            c.1
                        ),
                    ));
                }
                single_user.insert(b, k);
            }
        }

        // Gauss-Jordan elimination over GF(2). Rows are coordinate bits (address masks), each
        // carrying the set of original rows (packed indices) it is the XOR of. Single-bit rows go
        // first, so a dependency is blamed on an XOR combination rather than on a plain bit.
        let mut order: Vec<usize> = (0..coords.len()).collect();
        order.sort_by_key(|&k| (coords[k].2.count_ones(), coords[k].0.index(), coords[k].1));
        let mut basis: Vec<(u32, u64, u64)> = Vec::with_capacity(coords.len()); // (pivot, mask, combo)
        for &k in &order {
            let (mut m, mut c) = (coords[k].2, 1u64 << k);
            for &(p, bm, bc) in &basis {
                if m >> p & 1 == 1 {
                    m ^= bm;
                    c ^= bc;
                }
            }
            if m == 0 {
                let others: Vec<String> =
                    (0..coords.len()).filter(|&j| j != k && c >> j & 1 == 1).map(|j| coord_str(j)).collect();
                let relation = if others.len() == 1 {
                    format!("is the same function as {}", others[0])
                } else {
                    format!("is the XOR of {}", join_and(&others))
                };
                return Err(Error::config(
                    "fields",
                    format!(
                        "{} {relation}, so the map is not invertible (two addresses map to the same location)",
                        coord_str(k)
                    ),
                ));
            }
            let p = m.trailing_zeros();
            for row in basis.iter_mut() {
                if row.1 >> p & 1 == 1 {
                    row.1 ^= m;
                    row.2 ^= c;
                }
            }
            basis.push((p, m, c));
        }
        // Full rank on a square system: every row is now a single address bit `p`, and `c` lists
        // the packed bits whose XOR gives that address bit.
        let mut encode_cols = vec![0u64; coords.len()];
        for &(p, m, c) in &basis {
            debug_assert_eq!(m, 1u64 << p);
            for (i, col) in encode_cols.iter_mut().enumerate() {
                if c >> i & 1 == 1 {
                    *col |= 1u64 << p;
                }
            }
        }

        // Decode terms: group (address bit -> packed bit) pairs by rotation distance.
        let mut by_rot: BTreeMap<u32, u64> = BTreeMap::new();
        for (k, c) in coords.iter().enumerate() {
            let mut m = c.2;
            while m != 0 {
                let src = m.trailing_zeros();
                m &= m - 1;
                let rot = (src as i64 - k as i64).rem_euclid(64) as u32;
                *by_rot.entry(rot).or_default() |= 1u64 << k;
            }
        }

        Ok(AddressMapping {
            name: name.to_string(),
            capacity_bits,
            offset_bits,
            bits,
            decode_terms: by_rot.into_iter().collect(),
            extract,
            encode_cols,
        })
    }

    /// The same mapping under another name (a layout loaded from a file takes the file's name).
    pub(crate) fn renamed(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// log2 of the capacity in bytes: the mapped address bits are [0, capacity_bits).
    pub fn capacity_bits(&self) -> u32 {
        self.capacity_bits
    }

    /// log2 of the bus width in bytes: the low address bits that select a byte in a bus word.
    pub fn offset_bits(&self) -> u32 {
        self.offset_bits
    }

    /// Number of coordinate bits of `field`.
    pub fn field_width(&self, field: Field) -> u32 {
        self.bits[field.index()].len() as u32
    }

    /// Coordinates of a physical byte address. Bits at or above `capacity_bits` are ignored (the
    /// address is taken modulo the capacity), as are the offset bits below `offset_bits`.
    #[inline]
    pub fn decode(&self, addr: u64) -> DramAddress {
        let mut p = 0u64;
        for &(rot, mask) in &self.decode_terms {
            p ^= addr.rotate_right(rot) & mask;
        }
        let get = |f: Field| {
            let (shift, mask) = self.extract[f.index()];
            ((p >> shift) & mask) as u32
        };
        DramAddress {
            channel: get(Field::Channel),
            rank: get(Field::Rank),
            bank_group: get(Field::BankGroup),
            bank: get(Field::Bank),
            row: get(Field::Row),
            column: get(Field::Column),
        }
    }

    /// The inverse of `decode`: the lowest physical address (offset bits zero) with these
    /// coordinates. Coordinates must be within their field's range (checked in debug builds;
    /// otherwise taken modulo the field size).
    pub fn encode(&self, d: &DramAddress) -> u64 {
        let mut p = 0u64;
        for (field, v) in [
            (Field::Channel, d.channel),
            (Field::Rank, d.rank),
            (Field::BankGroup, d.bank_group),
            (Field::Bank, d.bank),
            (Field::Row, d.row),
            (Field::Column, d.column),
        ] {
            let (shift, mask) = self.extract[field.index()];
            debug_assert!(v as u64 <= mask, "{} {v} out of range for mapping {}", field.name(), self.name);
            p |= (v as u64 & mask) << shift;
        }
        let mut addr = 0u64;
        while p != 0 {
            addr ^= self.encode_cols[p.trailing_zeros() as usize];
            p &= p - 1;
        }
        addr
    }

    /// Address bits XORed into each bit of `field`, LSB first (sorted within each bit).
    pub fn field_bits(&self, field: Field) -> Vec<Vec<u32>> {
        self.bits[field.index()].clone()
    }

    /// One line per field, e.g. "bank = b13, b14, b15" or "bank = b13^b17, b14^b18, b15^b19";
    /// a field without bits reads "bank_group = (none)".
    pub fn describe(&self) -> String {
        Field::ALL
            .iter()
            .map(|&f| {
                let terms = &self.bits[f.index()];
                let rhs = if terms.is_empty() {
                    "(none)".to_string()
                } else {
                    terms.iter().map(|t| term_str(t)).collect::<Vec<_>>().join(", ")
                };
                format!("{} = {rhs}", f.name())
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
