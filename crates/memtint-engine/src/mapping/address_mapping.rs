//! The general GF(2)-linear address mapping: construction, validation, decode and encode.
//!
//! Internally the coordinate bits of all fields are packed into one word (the "packed
//! coordinate"), column lowest, then channel, rank, bank group, bank and row. Decoding is a
//! linear map from the address to that word, evaluated as an XOR of a few
//! `addr.rotate_right(r) & mask` terms: every (address bit -> packed bit) pair with the same
//! distance `r` shares one term, so a plain bit-selection map with contiguous runs costs one term
//! per distinct run offset, and each extra XOR input adds at most one term per distinct distance.
//! Encoding uses the inverse matrix, computed once by Gauss-Jordan elimination over GF(2).

use super::field::Field;
use crate::dram::{DramAddress, Organisation};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

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

        // The same single address bit selected by two coordinate bits.
        let mut single_user: BTreeMap<u32, (Field, usize)> = BTreeMap::new();
        let mut twice = None;
        for field in Field::ALL {
            for (i, term) in bits[field.index()].iter().enumerate() {
                if let [b] = term[..] {
                    match single_user.get(&b) {
                        Some(&(f0, i0)) => {
                            twice = twice.or(Some(format!(
                                "address bit {b} is used by both {} bit {i0} and {} bit {i}",
                                f0.name(),
                                field.name()
                            )))
                        }
                        None => {
                            single_user.insert(b, (field, i));
                        }
                    }
                }
            }
        }

        // Every mapped address bit must feed some coordinate bit (a bit listed twice leaves one
        // out: both are said).
        let used = coords.iter().fold(0u64, |m, c| m | c.2);
        if let Some(b) = (offset_bits..capacity_bits).find(|&b| used >> b & 1 == 0) {
            let also = twice.as_ref().map_or(String::new(), |t| format!(", and {t}"));
            return Err(Error::config(
                "fields",
                format!("physical address bit {b} is used by no field{also}, so two addresses map to the same location"),
            ));
        }
        if let Some(t) = twice {
            return Err(Error::config("fields", format!("{t}, so two addresses map to the same location")));
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
                let others: Vec<String> = (0..coords.len()).filter(|&j| j != k && c >> j & 1 == 1).map(&coord_str).collect();
                let relation = if others.len() == 1 {
                    format!("is the same function as {}", others[0])
                } else {
                    format!("is the XOR of {}", join_and(&others))
                };
                return Err(Error::config(
                    "fields",
                    format!("{} {relation}, so the map is not invertible (two addresses map to the same location)", coord_str(k)),
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
                let rhs =
                    if terms.is_empty() { "(none)".to_string() } else { terms.iter().map(|t| term_str(t)).collect::<Vec<_>>().join(", ") };
                format!("{} = {rhs}", f.name())
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::AddressMapping;
    use crate::dram::Organisation;

    pub fn ddr3(channels: u32, ranks: u32) -> Organisation {
        Organisation {
            channels,
            ranks,
            bank_groups: 1,
            banks_per_group: 8,
            rows: 16384,
            columns: 1024,
            bus_width_bits: 64,
            device_width: 8,
            burst_length: 8,
            density_gbit: 1,
        }
    }

    pub fn ddr4(channels: u32, ranks: u32) -> Organisation {
        Organisation {
            channels,
            ranks,
            bank_groups: 4,
            banks_per_group: 4,
            rows: 65536,
            columns: 1024,
            bus_width_bits: 64,
            device_width: 8,
            burst_length: 8,
            density_gbit: 8,
        }
    }

    /// DDR3 and DDR4-like organisations every layout must work on.
    pub fn organisations() -> Vec<(&'static str, Organisation)> {
        vec![
            ("ddr3 2ch 4r (8 GB)", ddr3(2, 4)),
            ("ddr3 1ch 2r (2 GB)", ddr3(1, 2)),
            ("ddr3 2ch 2r (4 GB)", ddr3(2, 2)),
            ("ddr4 1ch 1r (8 GB)", ddr4(1, 1)),
            ("ddr4 2ch 2r (32 GB)", ddr4(2, 2)),
        ]
    }

    pub const I7_860: &str = include_str!("../../../../configs/mappings/i7-860.toml");
    pub const I7_860_BPM_PLUS: &str = include_str!("../../../../configs/mappings/i7-860-bpm-plus.toml");
    pub const XOR_BANK: &str = include_str!("../../../../configs/mappings/xor-bank.toml");
    pub const OPTERON_6128_NODE: &str = include_str!("../../../../configs/mappings/opteron-6128-node.toml");

    /// The four preset files, each loaded against the organisation it was written for.
    pub fn presets() -> Vec<AddressMapping> {
        [
            ("i7-860.toml", I7_860, ddr3(2, 4)),
            ("i7-860-bpm-plus.toml", I7_860_BPM_PLUS, ddr3(2, 4)),
            ("xor-bank.toml", XOR_BANK, ddr3(1, 2)),
            ("opteron-6128-node.toml", OPTERON_6128_NODE, ddr3(2, 2)),
        ]
        .into_iter()
        .map(|(origin, text, org)| AddressMapping::from_toml(text, origin, &org).unwrap())
        .collect()
    }

    /// Every example layout on every organisation, plus every preset file.
    pub fn all_mappings() -> Vec<(String, AddressMapping, Organisation)> {
        let mut all = Vec::new();
        for (org_name, org) in organisations() {
            for layout in super::super::EXAMPLE_LAYOUTS {
                let m = AddressMapping::from_layout(layout, &org).unwrap();
                all.push((format!("{layout} on {org_name}"), m, org.clone()));
            }
        }
        let orgs = [ddr3(2, 4), ddr3(2, 4), ddr3(1, 2), ddr3(2, 2)];
        for (m, org) in presets().into_iter().zip(orgs) {
            all.push((format!("preset {}", m.name()), m, org));
        }
        all
    }

    /// A small deterministic generator (64-bit LCG, high bits out).
    pub struct Lcg(pub u64);
    impl Lcg {
        pub fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            self.0 ^ (self.0 >> 29)
        }
        pub fn below(&mut self, n: u32) -> u32 {
            ((self.next() >> 32) % n as u64) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    fn random_coords(rng: &mut Lcg, org: &Organisation) -> DramAddress {
        DramAddress {
            channel: rng.below(org.channels),
            rank: rng.below(org.ranks),
            bank_group: rng.below(org.bank_groups),
            bank: rng.below(org.banks_per_group),
            row: rng.below(org.rows),
            column: rng.below(org.columns),
        }
    }

    /// Reference decode: parity of each coordinate bit's address bits, straight from field_bits.
    fn naive_decode(m: &AddressMapping, addr: u64) -> DramAddress {
        let get = |f: Field| {
            m.field_bits(f)
                .iter()
                .enumerate()
                .map(|(i, term)| (term.iter().map(|&b| (addr >> b) as u32 & 1).fold(0, |x, y| x ^ y)) << i)
                .sum::<u32>()
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

    fn fields_of(m: &AddressMapping) -> Vec<(Field, Vec<Vec<u32>>)> {
        Field::ALL.iter().map(|&f| (f, m.field_bits(f))).collect()
    }

    fn set(fields: &mut [(Field, Vec<Vec<u32>>)], field: Field, bits: Vec<Vec<u32>>) {
        fields.iter_mut().find(|(f, _)| *f == field).unwrap().1 = bits;
    }

    fn singles(bits: impl IntoIterator<Item = u32>) -> Vec<Vec<u32>> {
        bits.into_iter().map(|b| vec![b]).collect()
    }

    fn config_error(r: Result<AddressMapping>) -> (String, String) {
        match r {
            Err(Error::Config { field, reason }) => (field, reason),
            Err(e) => panic!("expected a configuration error, got {e}"),
            Ok(m) => panic!("expected an error, got mapping\n{}", m.describe()),
        }
    }

    #[test]
    fn decode_inverts_encode_for_every_preset() {
        let mut rng = Lcg(1);
        for (what, m, org) in all_mappings() {
            for _ in 0..2000 {
                let d = random_coords(&mut rng, &org);
                let a = m.encode(&d);
                assert_eq!(a & ((1 << m.offset_bits()) - 1), 0, "{what}: offset bits of {a:#x}");
                assert!(a < 1u64 << m.capacity_bits(), "{what}: {a:#x} beyond capacity");
                assert_eq!(m.decode(a), d, "{what}: address {a:#x}");
            }
        }
    }

    #[test]
    fn encode_inverts_decode_on_random_addresses() {
        let mut rng = Lcg(2);
        for (what, m, _) in all_mappings() {
            let mask = ((1u64 << m.capacity_bits()) - 1) & !((1u64 << m.offset_bits()) - 1);
            for _ in 0..2000 {
                let a = rng.next() & mask;
                assert_eq!(m.encode(&m.decode(a)), a, "{what}: address {a:#x}");
            }
        }
    }

    #[test]
    fn decode_agrees_with_a_naive_parity_reference() {
        let mut rng = Lcg(3);
        for (what, m, _) in all_mappings() {
            for _ in 0..2000 {
                let a = rng.next();
                assert_eq!(m.decode(a), naive_decode(&m, a), "{what}: address {a:#x}");
            }
        }
    }

    #[test]
    fn decode_ignores_offset_bits_and_bits_above_capacity() {
        let mut rng = Lcg(4);
        for (what, m, _) in all_mappings() {
            let mask = ((1u64 << m.capacity_bits()) - 1) & !((1u64 << m.offset_bits()) - 1);
            for _ in 0..200 {
                let a = rng.next();
                assert_eq!(m.decode(a), m.decode(a & mask), "{what}: address {a:#x}");
            }
        }
    }

    #[test]
    fn capacity_and_offset_bits_follow_the_organisation() {
        let m = AddressMapping::from_layout("RoBaRaCoCh", &ddr3(2, 4)).unwrap();
        assert_eq!((m.capacity_bits(), m.offset_bits()), (33, 3));
        let m = AddressMapping::from_layout("RoBaRaCoCh", &ddr4(2, 2)).unwrap();
        assert_eq!((m.capacity_bits(), m.offset_bits()), (35, 3));
        assert_eq!(m.field_width(Field::BankGroup), 2);
        assert_eq!(AddressMapping::from_layout("RoBaRaCoCh", &ddr3(1, 1)).unwrap().field_width(Field::BankGroup), 0);
    }

    #[test]
    fn describe_lists_one_line_per_field() {
        let m = &presets()[2]; // xor-bank
        let text = m.describe();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(text.contains("channel = (none)"), "{text}");
        assert!(text.contains("bank = b13^b17, b14^b18, b15^b19"), "{text}");
        assert!(text.contains("rank = b16^b20"), "{text}");
        let i7 = presets()[0].describe();
        assert!(i7.contains("bank = b13, b14, b15"), "{i7}");
        assert!(i7.contains("channel = b6"), "{i7}");
    }

    #[test]
    fn field_width_mismatch_names_the_field_and_the_needed_bits() {
        let org = ddr3(2, 4);
        let mut fields = fields_of(&presets()[0]);
        set(&mut fields, Field::Bank, singles([13, 14]));
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!(field, "bank");
        assert_eq!(reason, "has 2 bits but the organisation has 8 banks per group (needs 3)");

        let mut fields = fields_of(&presets()[0]);
        fields.retain(|(f, _)| *f != Field::Rank);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!(field, "rank");
        assert_eq!(reason, "has 0 bits (missing) but the organisation has 4 ranks (needs 2)");

        // A DDR3 mapping on a DDR4 organisation: bank groups are missing.
        let mut fields = fields_of(&presets()[0]);
        fields.retain(|(f, _)| *f != Field::BankGroup);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &ddr4(2, 4), &fields));
        assert_eq!(field, "bank_group");
        assert_eq!(reason, "has 0 bits (missing) but the organisation has 4 bank groups (needs 2)");
    }

    #[test]
    fn address_bit_outside_the_mapped_range_names_field_coordinate_bit_and_address_bit() {
        let org = ddr3(2, 4);
        let mut fields = fields_of(&presets()[0]);
        set(&mut fields, Field::Row, singles([17, 18, 19, 20, 23, 24, 25, 26, 27, 28, 29, 30, 31, 33]));
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!(field, "row");
        assert!(reason.starts_with("bit 13 uses address bit 33, outside the mapped range 3..=32"), "{reason}");

        let mut fields = fields_of(&presets()[0]);
        set(&mut fields, Field::Channel, vec![vec![6, 2]]);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!(field, "channel");
        assert!(reason.starts_with("bit 0 uses address bit 2, outside"), "{reason}");
        assert!(reason.contains("byte within the 8-byte bus word"), "{reason}");
    }

    #[test]
    fn address_bit_used_by_no_field_is_named() {
        let mut fields = fields_of(&presets()[0]);
        // Row bit 0 takes b16 (also column bit 9): b17 is left out.
        set(&mut fields, Field::Row, singles([16, 18, 19, 20, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]));
        let (field, reason) = config_error(AddressMapping::from_fields("t", &ddr3(2, 4), &fields));
        assert_eq!(field, "fields");
        assert_eq!(
            reason,
            "physical address bit 17 is used by no field, and address bit 16 is used by both row bit 0 and column bit 9, \
             so two addresses map to the same location"
        );
    }

    #[test]
    fn same_single_bit_used_twice_names_both_coordinate_bits() {
        let mut fields = fields_of(&presets()[0]);
        // Column bit 9 takes b13 (bank bit 0); b16 still appears, in an XOR.
        set(&mut fields, Field::Column, singles([3, 4, 5, 7, 8, 9, 10, 11, 12, 13]));
        let mut row = singles([17, 18, 19, 20, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]);
        row[0] = vec![16, 17];
        set(&mut fields, Field::Row, row);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &ddr3(2, 4), &fields));
        assert_eq!(field, "fields");
        assert_eq!(reason, "address bit 13 is used by both bank bit 0 and column bit 9, so two addresses map to the same location");
    }

    #[test]
    fn xor_dependency_names_the_combination() {
        let org = ddr3(1, 2);
        let mut row = singles(17..=30);
        row[0] = vec![16, 17];
        let fields = vec![
            (Field::Rank, singles([15])),
            (Field::Bank, vec![vec![13], vec![14], vec![15, 19]]),
            (Field::Column, singles(3..=12)),
            (Field::Row, row),
        ];
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!(field, "fields");
        assert_eq!(
            reason,
            "bank bit 2 (b15^b19) is the XOR of rank bit 0 (b15) and row bit 2 (b19), so the map is not \
             invertible (two addresses map to the same location)"
        );
    }

    #[test]
    fn identical_xor_functions_are_named() {
        let org = ddr3(1, 2);
        let fields = vec![
            (Field::Rank, vec![vec![13, 17]]),
            (Field::Bank, vec![vec![13, 17], vec![14, 18], vec![15, 19]]),
            (Field::Column, singles(3..=12)),
            (Field::Row, [vec![16, 17]].into_iter().chain(singles(18..=30)).collect()),
        ];
        let (_, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert!(reason.starts_with("bank bit 0 (b13^b17) is the same function as rank bit 0 (b13^b17)"), "{reason}");
    }

    #[test]
    fn malformed_coordinate_bits_are_rejected() {
        let org = ddr3(2, 4);
        let mut fields = fields_of(&presets()[0]);
        set(&mut fields, Field::Bank, vec![vec![13], vec![14, 14], vec![15]]);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!((field.as_str(), reason.as_str()), ("bank", "bit 1 lists address bit 14 twice (an XOR of a bit with itself is 0)"));

        let mut fields = fields_of(&presets()[0]);
        set(&mut fields, Field::Bank, vec![vec![13], vec![], vec![15]]);
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!((field.as_str(), reason.as_str()), ("bank", "bit 1 lists no address bits"));

        let mut fields = fields_of(&presets()[0]);
        fields.push((Field::Channel, singles([6])));
        let (field, reason) = config_error(AddressMapping::from_fields("t", &org, &fields));
        assert_eq!((field.as_str(), reason.as_str()), ("channel", "is given twice"));
    }

    #[test]
    fn field_names_round_trip() {
        for f in Field::ALL {
            assert_eq!(Field::from_name(f.name()), Some(f));
        }
        assert_eq!(Field::from_name("banks"), None);
    }

    /// Run with `cargo test -p memtint-engine mapping -- --ignored --nocapture` (test profile).
    #[test]
    #[ignore]
    fn decode_cost_is_measured() {
        use std::hint::black_box;
        use std::time::Instant;
        let n = 20_000_000u64;
        let t = Instant::now();
        let mut a = 0x1234_5678u64;
        let mut acc = 0u64;
        for _ in 0..n {
            a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            acc = acc.wrapping_add(black_box(a) >> 7);
        }
        let base = t.elapsed().as_nanos() as f64 / n as f64;
        println!("{:>20}: {base:.2} ns per iteration ({acc})", "loop alone");
        for m in presets() {
            let mut acc = 0u32;
            let t = Instant::now();
            let mut a = 0x1234_5678u64;
            for _ in 0..n {
                a = a.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let d = black_box(&m).decode(black_box(a));
                acc = acc.wrapping_add(d.bank ^ d.row ^ d.column ^ d.rank ^ d.channel ^ d.bank_group);
            }
            let ns = t.elapsed().as_nanos() as f64 / n as f64;
            println!("{:>20}: {ns:.2} ns per iteration, {:.2} ns per decode, {} terms ({acc})", m.name(), ns - base, m.decode_terms.len());
        }
    }
}
