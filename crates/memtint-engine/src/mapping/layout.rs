//! Named layouts: a string of two-letter codes, most significant first (see the module doc of
//! `mapping` for the rule), turned into plain bit-selection fields.

use super::address_mapping::AddressMapping;
use super::field::Field;
use crate::dram::Organisation;
use crate::error::{Error, Result};

/// The codes a layout is made of, with the field each one places.
pub const LAYOUT_CODES: [(&str, &str); 6] =
    [("Ro", "row"), ("Ba", "bank"), ("Bg", "bank group, optional"), ("Ra", "rank"), ("Co", "column above the burst"), ("Ch", "channel")];

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

impl AddressMapping {
    /// A named layout such as "RoBaRaCoCh"; see the module documentation for the rule.
    pub fn from_layout(layout: &str, org: &Organisation) -> Result<Self> {
        let fields = layout_fields(layout, org)?;
        Self::from_fields(layout, org, &fields)
    }
}

#[cfg(test)]
mod tests {
    use super::super::address_mapping::test_support::*;
    use super::super::{AddressMapping, Field};
    use crate::dram::DramAddress;
    use crate::error::Error;

    fn bits(m: &AddressMapping, f: Field) -> Vec<u32> {
        m.field_bits(f)
            .into_iter()
            .map(|t| {
                assert_eq!(t.len(), 1, "layouts are plain bit selection");
                t[0]
            })
            .collect()
    }

    fn layout_error(layout: &str) -> String {
        match AddressMapping::from_layout(layout, &ddr3(2, 4)) {
            Err(Error::Config { field, reason }) => {
                assert_eq!(field, "layout");
                assert!(reason.contains("Ro (row)") && reason.contains("Ch (channel)"), "{reason}");
                assert!(reason.contains("e.g. \"RoBaRaCoCh\""), "{reason}");
                reason
            }
            other => panic!("expected a layout error for '{layout}', got {other:?}"),
        }
    }

    #[test]
    fn ro_ba_ra_co_ch_puts_channel_just_above_the_burst() {
        let m = AddressMapping::from_layout("RoBaRaCoCh", &ddr3(2, 4)).unwrap();
        assert_eq!(m.name(), "RoBaRaCoCh");
        assert_eq!(bits(&m, Field::Column), [3, 4, 5, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(bits(&m, Field::Channel), [6]);
        assert_eq!(bits(&m, Field::Rank), [14, 15]);
        assert_eq!(bits(&m, Field::Bank), [16, 17, 18]);
        assert_eq!(bits(&m, Field::Row), (19..=32).collect::<Vec<_>>());
        assert!(bits(&m, Field::BankGroup).is_empty());
    }

    #[test]
    fn ro_ra_ba_ch_co_puts_the_whole_column_below_the_channel() {
        let m = AddressMapping::from_layout("RoRaBaChCo", &ddr3(2, 4)).unwrap();
        assert_eq!(bits(&m, Field::Column), (3..=12).collect::<Vec<_>>());
        assert_eq!(bits(&m, Field::Channel), [13]);
        assert_eq!(bits(&m, Field::Bank), [14, 15, 16]);
        assert_eq!(bits(&m, Field::Rank), [17, 18]);
        assert_eq!(bits(&m, Field::Row), (19..=32).collect::<Vec<_>>());
    }

    #[test]
    fn ch_ra_ba_ro_co_puts_channel_in_the_top_bit() {
        let m = AddressMapping::from_layout("ChRaBaRoCo", &ddr3(2, 4)).unwrap();
        assert_eq!(bits(&m, Field::Column), (3..=12).collect::<Vec<_>>());
        assert_eq!(bits(&m, Field::Row), (13..=26).collect::<Vec<_>>());
        assert_eq!(bits(&m, Field::Bank), [27, 28, 29]);
        assert_eq!(bits(&m, Field::Rank), [30, 31]);
        assert_eq!(bits(&m, Field::Channel), [32]);
        assert_eq!(m.decode(1 << 32).channel, 1);
    }

    #[test]
    fn without_bg_the_bank_group_bits_sit_just_below_the_bank_bits() {
        let m = AddressMapping::from_layout("RoBaRaCoCh", &ddr4(1, 1)).unwrap();
        assert_eq!(bits(&m, Field::Column), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(bits(&m, Field::BankGroup), [13, 14]);
        assert_eq!(bits(&m, Field::Bank), [15, 16]);
        assert_eq!(bits(&m, Field::Row), (17..=32).collect::<Vec<_>>());
        // Consecutive combined bank indices alternate bank groups.
        let groups: Vec<u32> = (0..8u64).map(|i| m.decode(i << 13).bank_group).collect();
        assert_eq!(groups, [0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn an_explicit_bg_code_places_the_bank_group_on_its_own() {
        let m = AddressMapping::from_layout("RoBgRaBaCoCh", &ddr4(2, 2)).unwrap();
        assert_eq!(bits(&m, Field::Channel), [6]);
        assert_eq!(bits(&m, Field::Column), [3, 4, 5, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(bits(&m, Field::Bank), [14, 15]);
        assert_eq!(bits(&m, Field::Rank), [16]);
        assert_eq!(bits(&m, Field::BankGroup), [17, 18]);
        assert_eq!(bits(&m, Field::Row), (19..=34).collect::<Vec<_>>());
    }

    #[test]
    fn every_permutation_of_the_codes_is_a_bijection() {
        fn permutations(items: &[&'static str]) -> Vec<String> {
            if items.is_empty() {
                return vec![String::new()];
            }
            let mut out = Vec::new();
            for i in 0..items.len() {
                let mut rest = items.to_vec();
                let first = rest.remove(i);
                out.extend(permutations(&rest).into_iter().map(|p| format!("{first}{p}")));
            }
            out
        }
        let mut layouts = permutations(&["Ro", "Ba", "Ra", "Co", "Ch"]);
        layouts.extend(permutations(&["Ro", "Ba", "Bg", "Ra", "Co", "Ch"]));
        assert_eq!(layouts.len(), 120 + 720);
        let mut rng = Lcg(7);
        for (org_name, org) in organisations() {
            for layout in &layouts {
                let m = AddressMapping::from_layout(layout, &org).unwrap_or_else(|e| panic!("{layout}: {e}"));
                // Burst always just above the offset bits.
                let column = bits(&m, Field::Column);
                assert_eq!(column[..3], [3, 4, 5], "{layout} on {org_name}");
                for _ in 0..20 {
                    let d = DramAddress {
                        channel: rng.below(org.channels),
                        rank: rng.below(org.ranks),
                        bank_group: rng.below(org.bank_groups),
                        bank: rng.below(org.banks_per_group),
                        row: rng.below(org.rows),
                        column: rng.below(org.columns),
                    };
                    assert_eq!(m.decode(m.encode(&d)), d, "{layout} on {org_name}");
                }
            }
        }
    }

    #[test]
    fn unknown_code_is_named_with_the_valid_codes() {
        let reason = layout_error("RoBkRaCoCh");
        assert!(reason.contains("unknown code 'Bk' at position 2"), "{reason}");
        let reason = layout_error("RoBaRaCoC");
        assert!(reason.contains("unknown code 'C' at position 8"), "{reason}");
        let reason = layout_error("robarácoch");
        assert!(reason.contains("unknown code 'ro' at position 0"), "{reason}");
    }

    #[test]
    fn duplicated_or_missing_codes_are_errors() {
        assert!(layout_error("RoBaRaCoChRa").contains("code 'Ra' appears twice"));
        assert!(layout_error("RoBaCo").contains("missing Ra, Ch"));
        assert!(layout_error("").contains("missing Ro, Ba, Ra, Co, Ch"));
    }
}
