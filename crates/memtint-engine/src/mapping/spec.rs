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

use super::address_mapping::{AddressMapping, Field};
use crate::dram::Organisation;
use crate::error::{Error, Result};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::PathBuf;

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
    pub channel: Option<Vec<Term>>,
    pub rank: Option<Vec<Term>>,
    pub bank_group: Option<Vec<Term>>,
    pub bank: Option<Vec<Term>>,
    pub row: Option<Vec<Term>>,
    pub column: Option<Vec<Term>>,
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
            let field = if Field::from_name(&field).is_some() {
                format!("{origin}: fields.{field}")
            } else {
                format!("{origin}: {field}")
            };
            Error::Config { field, reason }
        }
        other => other,
    }
}

impl MappingSpec {
    /// Parse a mapping file; syntax errors and unknown keys name the file and line.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() as u64 + 1).unwrap_or(0);
            Error::Parse { path: PathBuf::from(origin), line, reason: e.message().to_string() }
        })
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
                            format!(
                                "mapping '{}' was written for {key} = {want} but the organisation has {key} = {have}",
                                self.name
                            ),
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
                .filter_map(|(field, terms)| {
                    terms.as_ref().map(|t| (field, t.iter().map(|t| t.0.clone()).collect()))
                })
                .collect();
                AddressMapping::from_fields(&self.name, org, &fields)
            }
            (Some(_), Some(_)) => Err(Error::config("mapping", "gives both `layout` and `[fields]`; give exactly one")),
            (None, None) => Err(Error::config(
                "mapping",
                "gives neither `layout = \"RoBaRaCoCh\"` nor a `[fields]` table; give exactly one",
            )),
        }
        .map_err(|e| in_file(origin, e))
    }
}
