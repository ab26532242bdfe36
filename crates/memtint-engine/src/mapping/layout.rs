//! Named layouts: a string of two-letter codes, most significant first (see the module doc of
//! `mapping` for the rule), turned into plain bit-selection fields.

use super::address_mapping::Field;
use crate::dram::Organisation;
use crate::error::{Error, Result};

/// The codes a layout is made of, with the field each one places.
pub const LAYOUT_CODES: [(&str, &str); 6] = [
    ("Ro", "row"),
    ("Ba", "bank"),
    ("Bg", "bank group, optional"),
    ("Ra", "rank"),
    ("Co", "column above the burst"),
    ("Ch", "channel"),
];

/// Some common layouts (any permutation of the codes is accepted).
pub const EXAMPLE_LAYOUTS: [&str; 4] = ["RoBaRaCoCh", "RoRaBaChCo", "ChRaBaRoCo", "RoRaBgBaCoCh"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Code {
    Ro,
    Ba,
    Bg,
    Ra,
    Co,
    Ch,
}

fn layout_error(layout: &str, problem: String) -> Error {
    let codes = LAYOUT_CODES.iter().map(|(c, what)| format!("{c} ({what})")).collect::<Vec<_>>().join(", ");
    Error::config(
        "layout",
        format!(
            "'{layout}': {problem}; a layout lists each of the codes {codes} once, most significant first, \
             e.g. \"RoBaRaCoCh\""
        ),
    )
}

fn parse(layout: &str) -> Result<Vec<Code>> {
    let chars: Vec<char> = layout.chars().collect();
    let mut codes = Vec::new();
    for (i, pair) in chars.chunks(2).enumerate() {
        let s: String = pair.iter().collect();
        let code = match s.as_str() {
            "Ro" => Code::Ro,
            "Ba" => Code::Ba,
            "Bg" => Code::Bg,
            "Ra" => Code::Ra,
            "Co" => Code::Co,
            "Ch" => Code::Ch,
            _ => return Err(layout_error(layout, format!("unknown code '{s}' at position {}", 2 * i))),
        };
        if codes.contains(&code) {
            return Err(layout_error(layout, format!("code '{s}' appears twice")));
        }
        codes.push(code);
    }
    let missing: Vec<&str> = [(Code::Ro, "Ro"), (Code::Ba, "Ba"), (Code::Ra, "Ra"), (Code::Co, "Co"), (Code::Ch, "Ch")]
        .into_iter()
        .filter(|(c, _)| !codes.contains(c))
        .map(|(_, s)| s)
        .collect();
    if !missing.is_empty() {
        return Err(layout_error(layout, format!("missing {}", missing.join(", "))));
    }
    Ok(codes)
}

/// The fields of a named layout for `org`, in the form `AddressMapping::from_fields` takes.
pub fn layout_fields(layout: &str, org: &Organisation) -> Result<Vec<(Field, Vec<Vec<u32>>)>> {
    let codes = parse(layout)?;
    org.validate()?;
    let offset_bits = org.bus_bytes().trailing_zeros();
    let burst_bits = org.burst_length.trailing_zeros();
    let has_bg = codes.contains(&Code::Bg);

    let mut next = offset_bits;
    let mut take = |n: u32| -> Vec<Vec<u32>> {
        let bits = (next..next + n).map(|b| vec![b]).collect();
        next += n;
        bits
    };
    let mut column = take(burst_bits);
    let (mut channel, mut rank, mut bank_group, mut bank, mut row) = Default::default();
    for code in codes.iter().rev() {
        match code {
            Code::Ch => channel = take(Field::Channel.width(org)),
            Code::Ra => rank = take(Field::Rank.width(org)),
            Code::Bg => bank_group = take(Field::BankGroup.width(org)),
            Code::Ba => {
                if !has_bg {
                    bank_group = take(Field::BankGroup.width(org));
                }
                bank = take(Field::Bank.width(org));
            }
            Code::Co => column.extend(take(Field::Column.width(org) - burst_bits)),
            Code::Ro => row = take(Field::Row.width(org)),
        }
    }
    Ok(vec![
        (Field::Channel, channel),
        (Field::Rank, rank),
        (Field::BankGroup, bank_group),
        (Field::Bank, bank),
        (Field::Row, row),
        (Field::Column, column),
    ])
}
