//! The mapping file format (`configs/mappings/*.toml`).
//!
//! ```toml
//! name = "i7-860"
//! description = "..."
//! source = "where the bits come from"
//! [organisation]     # optional; every key optional; each given key must match the machine
//! channels = 2
//! ranks = 4
//! bank_groups = 1
//! banks_per_group = 8
//! rows = 16384
//! columns = 1024
//! # bus_width_bits = 64, burst_length = 8 are accepted too
//! [fields]           # per field, one entry per coordinate bit, LSB first
//! channel = [6]      # an integer is a single address bit ...
//! bank = [[13, 17], [14, 18], 15]   # ... a list is the XOR of those address bits
//! ```
//!
//! Instead of `[fields]`, a file may give `layout = "RoBaRaCoCh"` (a named layout). Unknown
//! keys are errors. A missing field has no bits (right for `bank_group` on DDR3).

use super::address_mapping::AddressMapping;
use super::field::Field;
use crate::dram::Organisation;
use crate::error::{Error, Result};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// One coordinate bit: the address bits XORed (a single bit is a one-element list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term(pub Vec<u32>);

impl<'de> Deserialize<'de> for Term {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct TermVisitor;
        impl<'de> Visitor<'de> for TermVisitor {
            type Value = Term;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an address bit (integer) or a list of address bits to XOR")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Term, E> {
                u32::try_from(v).map(|b| Term(vec![b])).map_err(|_| E::custom(format!("address bit {v} is negative or too large")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Term, E> {
                u32::try_from(v).map(|b| Term(vec![b])).map_err(|_| E::custom(format!("address bit {v} is too large")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Term, A::Error> {
                let mut bits = Vec::new();
                while let Some(b) = seq.next_element::<i64>()? {
                    bits.push(u32::try_from(b).map_err(|_| de::Error::custom(format!("address bit {b} is negative or too large")))?);
                }
                Ok(Term(bits))
            }
        }
        d.deserialize_any(TermVisitor)
    }
}

/// All coordinate bits of one field, LSB first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms(pub Vec<Term>);

impl<'de> Deserialize<'de> for Terms {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct TermsVisitor;
        impl<'de> Visitor<'de> for TermsVisitor {
            type Value = Terms;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list with one entry per coordinate bit, LSB first, e.g. [13, 14, 15] or [[13, 17], 14]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Terms, A::Error> {
                let mut terms = Vec::new();
                while let Some(t) = seq.next_element::<Term>()? {
                    terms.push(t);
                }
                Ok(Terms(terms))
            }
        }
        d.deserialize_seq(TermsVisitor)
    }
}

/// The organisation a mapping file was written for; every level optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OrganisationSpec {
    pub channels: Option<u32>,
    pub ranks: Option<u32>,
    pub bank_groups: Option<u32>,
    pub banks_per_group: Option<u32>,
    pub rows: Option<u32>,
    pub columns: Option<u32>,
    pub bus_width_bits: Option<u32>,
    pub burst_length: Option<u32>,
}

/// The `[fields]` table.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FieldsSpec {
    pub channel: Option<Terms>,
    pub rank: Option<Terms>,
    pub bank_group: Option<Terms>,
    pub bank: Option<Terms>,
    pub row: Option<Terms>,
    pub column: Option<Terms>,
}

/// A parsed mapping file.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MappingSpec {
    pub name: String,
    pub description: Option<String>,
    pub source: Option<String>,
    pub organisation: Option<OrganisationSpec>,
    pub layout: Option<String>,
    pub fields: Option<FieldsSpec>,
}

/// Prefix a construction error with the file (and the `fields.` table for per-field errors).
fn in_file(origin: &str, e: Error) -> Error {
    match e {
        Error::Config { field, reason } => {
            let field = if Field::from_name(&field).is_some() { format!("{origin}: fields.{field}") } else { format!("{origin}: {field}") };
            Error::Config { field, reason }
        }
        other => other,
    }
}

impl MappingSpec {
    /// Parse a mapping file; syntax errors and unknown keys name the file and line.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        crate::error::from_toml(text, origin)
    }

    /// Check the file against `org` and build the mapping.
    pub fn build(&self, origin: &str, org: &Organisation) -> Result<AddressMapping> {
        if let Some(o) = &self.organisation {
            let checks = [
                ("channels", o.channels, org.channels),
                ("ranks", o.ranks, org.ranks),
                ("bank_groups", o.bank_groups, org.bank_groups),
                ("banks_per_group", o.banks_per_group, org.banks_per_group),
                ("rows", o.rows, org.rows),
                ("columns", o.columns, org.columns),
                ("bus_width_bits", o.bus_width_bits, org.bus_width_bits),
                ("burst_length", o.burst_length, org.burst_length),
            ];
            for (key, want, have) in checks {
                if let Some(want) = want {
                    if want != have {
                        return Err(Error::config(
                            format!("{origin}: organisation.{key}"),
                            format!("mapping '{}' was written for {key} = {want} but the organisation has {key} = {have}", self.name),
                        ));
                    }
                }
            }
        }
        match (&self.layout, &self.fields) {
            (Some(layout), None) => AddressMapping::from_layout(layout, org).map(|m| m.renamed(&self.name)),
            (None, Some(f)) => {
                let fields: Vec<(Field, Vec<Vec<u32>>)> = [
                    (Field::Channel, &f.channel),
                    (Field::Rank, &f.rank),
                    (Field::BankGroup, &f.bank_group),
                    (Field::Bank, &f.bank),
                    (Field::Row, &f.row),
                    (Field::Column, &f.column),
                ]
                .into_iter()
                .filter_map(|(field, terms)| terms.as_ref().map(|t| (field, t.0.iter().map(|t| t.0.clone()).collect())))
                .collect();
                AddressMapping::from_fields(&self.name, org, &fields)
            }
            (Some(_), Some(_)) => Err(Error::config("mapping", "gives both `layout` and `[fields]`; give exactly one")),
            (None, None) => {
                Err(Error::config("mapping", "gives neither `layout = \"RoBaRaCoCh\"` nor a `[fields]` table; give exactly one"))
            }
        }
        .map_err(|e| in_file(origin, e))
    }
}

impl AddressMapping {
    /// An explicit mapping file (TOML, see this module); `origin` names the file in errors.
    pub fn from_toml(text: &str, origin: &str, org: &Organisation) -> Result<Self> {
        MappingSpec::parse(text, origin)?.build(origin, org)
    }
}

#[cfg(test)]
mod tests {
    use super::super::address_mapping::test_support::*;
    use super::*;

    fn bits(m: &AddressMapping, f: Field) -> Vec<Vec<u32>> {
        m.field_bits(f)
    }

    fn singles(bits: &[u32]) -> Vec<Vec<u32>> {
        bits.iter().map(|&b| vec![b]).collect()
    }

    fn config_error(r: Result<AddressMapping>) -> (String, String) {
        match r {
            Err(Error::Config { field, reason }) => (field, reason),
            Err(e) => panic!("expected a configuration error, got {e}"),
            Ok(m) => panic!("expected an error, got mapping\n{}", m.describe()),
        }
    }

    /// A one-channel, two-rank DDR3 mapping file with column and row given and `fields` appended to `[fields]`.
    fn small_file(fields: &str) -> String {
        format!(
            "name = \"t\"\n[organisation]\nchannels = 1\nranks = 2\n[fields]\n\
             column = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\nrow = [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]\n{fields}"
        )
    }

    #[test]
    fn i7_860_channel_is_bit_6_and_bank_colour_bits_are_13_14_15_21_22() {
        let m = AddressMapping::from_toml(I7_860, "i7-860.toml", &ddr3(2, 4)).unwrap();
        assert_eq!(m.name(), "i7-860");
        assert_eq!(m.capacity_bits(), 33);
        assert_eq!(bits(&m, Field::Channel), singles(&[6]));
        assert_eq!(bits(&m, Field::Bank), singles(&[13, 14, 15]));
        assert_eq!(bits(&m, Field::Rank), singles(&[21, 22]));
        assert_eq!(bits(&m, Field::Column), singles(&[3, 4, 5, 7, 8, 9, 10, 11, 12, 16]));
        // The 5 colour bits pick 32 (rank, bank) pairs; each colour spans both channels via b6.
        let mut colours = std::collections::BTreeSet::new();
        for colour in 0..32u64 {
            let page = (colour & 7) << 13 | (colour >> 3) << 21;
            let d0 = m.decode(page);
            let d1 = m.decode(page | 1 << 6);
            assert_eq!((d0.channel, d1.channel), (0, 1));
            assert_eq!((d0.rank, d0.bank), (d1.rank, d1.bank));
            colours.insert((d0.rank, d0.bank));
        }
        assert_eq!(colours.len(), 32);
    }

    #[test]
    fn i7_860_bpm_plus_selects_the_channel_with_bit_32() {
        let m = AddressMapping::from_toml(I7_860_BPM_PLUS, "i7-860-bpm-plus.toml", &ddr3(2, 4)).unwrap();
        assert_eq!(bits(&m, Field::Channel), singles(&[32]));
        assert_eq!(bits(&m, Field::Column), singles(&[3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
        assert_eq!(m.decode((1 << 32) - 1).channel, 0);
        assert_eq!(m.decode(1 << 32).channel, 1);
        assert_eq!(m.decode(1 << 6).channel, 0);
    }

    #[test]
    fn xor_bank_preset_maps_b13_xor_b17_to_bank_bit_0() {
        let m = AddressMapping::from_toml(XOR_BANK, "xor-bank.toml", &ddr3(1, 2)).unwrap();
        assert_eq!(m.capacity_bits(), 31);
        assert_eq!(bits(&m, Field::Bank), vec![vec![13, 17], vec![14, 18], vec![15, 19]]);
        assert_eq!(bits(&m, Field::Rank), vec![vec![16, 20]]);
        assert_eq!(m.decode(1 << 13).bank, 1);
        let d = m.decode(1 << 17);
        assert_eq!((d.bank, d.row), (1, 1));
        let d = m.decode(1 << 13 | 1 << 17);
        assert_eq!((d.bank, d.row), (0, 1));
        assert_eq!(m.decode(1 << 16 | 1 << 20).rank, 0);
        assert_eq!(m.decode(1 << 20).rank, 1);
        // Consecutive rows of one bank land in different banks of the same 8 KB row offset.
        let banks: Vec<u32> = (0..8u64).map(|row| m.decode(row << 17).bank).collect();
        assert_eq!(banks, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn opteron_6128_node_puts_channel_on_6_rank_on_7_and_bank_on_15_16_18() {
        let m = AddressMapping::from_toml(OPTERON_6128_NODE, "opteron-6128-node.toml", &ddr3(2, 2)).unwrap();
        assert_eq!(m.capacity_bits(), 32);
        assert_eq!(bits(&m, Field::Channel), singles(&[6]));
        assert_eq!(bits(&m, Field::Rank), singles(&[7]));
        assert_eq!(bits(&m, Field::Bank), singles(&[15, 16, 18]));
    }

    #[test]
    fn a_preset_loaded_against_another_organisation_names_the_mismatch() {
        let (field, reason) = config_error(AddressMapping::from_toml(I7_860, "i7-860.toml", &ddr3(2, 2)));
        assert_eq!(field, "i7-860.toml: organisation.ranks");
        assert_eq!(reason, "mapping 'i7-860' was written for ranks = 4 but the organisation has ranks = 2");
        let (field, _) = config_error(AddressMapping::from_toml(XOR_BANK, "xor-bank.toml", &ddr4(1, 2)));
        assert_eq!(field, "xor-bank.toml: organisation.bank_groups");
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key() {
        for (text, key) in [
            ("name = \"t\"\nlayout = \"RoBaRaCoCh\"\nlayuot = 3\n", "layuot"),
            (&small_file("banks = [13, 14, 15]\n") as &str, "banks"),
            ("name = \"t\"\nlayout = \"RoBaRaCoCh\"\n[organisation]\nbanks = 8\n", "banks"),
        ] {
            match AddressMapping::from_toml(text, "bad.toml", &ddr3(1, 2)) {
                Err(e @ Error::Parse { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.starts_with("bad.toml:"), "{msg}");
                    assert!(msg.contains(&format!("unknown field `{key}`")), "{msg}");
                }
                other => panic!("expected a parse error for key {key}, got {other:?}"),
            }
        }
    }

    #[test]
    fn parse_errors_give_the_line() {
        let text = small_file("bank = [13, 14, \"15\"]\n");
        match MappingSpec::parse(&text, "bad.toml") {
            Err(Error::Parse { line, reason, .. }) => {
                assert_eq!(line, 8, "{reason}");
                assert!(reason.contains("address bit"), "{reason}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn a_field_that_is_not_a_list_is_explained() {
        let text = small_file("bank = 13\n");
        let e = MappingSpec::parse(&text, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("expected a list with one entry per coordinate bit"), "{e}");
    }

    #[test]
    fn terms_may_mix_single_bits_and_xor_lists() {
        let text = small_file("bank = [[13, 17], 14, [15]]\nrank = [16]\n");
        let m = AddressMapping::from_toml(&text, "mixed.toml", &ddr3(1, 2)).unwrap();
        assert_eq!(bits(&m, Field::Bank), vec![vec![13, 17], vec![14], vec![15]]);
    }

    #[test]
    fn field_errors_in_a_file_name_the_file_and_the_field() {
        let text = small_file("bank = [13, 14]\nrank = [15]\n");
        let (field, reason) = config_error(AddressMapping::from_toml(&text, "m.toml", &ddr3(1, 2)));
        assert_eq!(field, "m.toml: fields.bank");
        assert_eq!(reason, "has 2 bits but the organisation has 8 banks per group (needs 3)");

        let text = small_file("bank = [13, 14, 15]\nrank = [15]\n");
        let (field, reason) = config_error(AddressMapping::from_toml(&text, "m.toml", &ddr3(1, 2)));
        assert_eq!(field, "m.toml: fields");
        assert!(reason.starts_with("physical address bit 16 is used by no field"), "{reason}");
    }

    #[test]
    fn a_file_may_name_a_layout_instead_of_fields() {
        let text = "name = \"plain\"\nlayout = \"RoBaRaCoCh\"\n";
        let m = AddressMapping::from_toml(text, "plain.toml", &ddr3(2, 4)).unwrap();
        assert_eq!(m.name(), "plain");
        assert_eq!(m.field_bits(Field::Channel), singles(&[6]));

        let (field, reason) = config_error(AddressMapping::from_toml("name = \"x\"\nlayout = \"RoBa\"\n", "x.toml", &ddr3(2, 4)));
        assert_eq!(field, "x.toml: layout");
        assert!(reason.contains("missing Ra, Co, Ch"), "{reason}");
    }

    #[test]
    fn a_file_must_give_exactly_one_of_layout_and_fields() {
        let both = small_file("bank = [13, 14, 15]\nrank = [16]\n").replace("name = \"t\"\n", "name = \"t\"\nlayout = \"RoBaRaCoCh\"\n");
        let (field, reason) = config_error(AddressMapping::from_toml(&both, "both.toml", &ddr3(1, 2)));
        assert_eq!(field, "both.toml: mapping");
        assert!(reason.contains("both `layout` and `[fields]`"), "{reason}");
        let (field, reason) = config_error(AddressMapping::from_toml("name = \"n\"\n", "none.toml", &ddr3(1, 2)));
        assert_eq!(field, "none.toml: mapping");
        assert!(reason.contains("neither"), "{reason}");
    }

    #[test]
    fn preset_files_keep_their_description_and_source() {
        for text in [I7_860, I7_860_BPM_PLUS, XOR_BANK, OPTERON_6128_NODE] {
            let spec = MappingSpec::parse(text, "preset").unwrap();
            assert!(spec.description.is_some() && spec.source.is_some(), "{}", spec.name);
            assert!(spec.organisation.is_some(), "{}", spec.name);
        }
    }
}
