//! Colours from the mapping: bit classes, spaces, errors and exact reach (HVR §8.2 T1).

use super::{mapping, I7_LLC};
use crate::os::colour::{colour_list_text, ColourBits, ColourSpace};

fn i7_bits() -> ColourBits {
    ColourBits::new(&mapping("i7-860"), I7_LLC, 12, &[]).unwrap()
}

fn labels(space: &ColourSpace) -> Vec<String> {
    space.functions().iter().map(|f| f.label()).collect()
}

#[test]
fn i7_860_bits_split_into_bank_only_cache_only_and_overlap() {
    let bits = i7_bits();
    assert_eq!(bits.b_bits(), [21, 22]);
    assert_eq!(bits.c_bits(), [12, 16, 17, 18]);
    assert_eq!(bits.o_bits(), [13, 14, 15]);
    assert_eq!(bits.llc_bits(), [12, 13, 14, 15, 16, 17, 18]);
    let excluded = ColourBits::new(&mapping("i7-860"), I7_LLC, 12, &[13]).unwrap();
    assert_eq!(excluded.o_bits(), [14, 15]);
    assert_eq!(excluded.llc_bits(), [12, 14, 15, 16, 17, 18]);
}

#[test]
fn describe_names_every_class_and_the_uncontrollable_channel_bit() {
    let text = i7_bits().describe();
    for line in [
        "bank colour bits (rank, bank group, bank): b13, b14, b15, b21, b22",
        "channel colour bits: none",
        "O-bits (bank and cache): b13, b14, b15",
        "not page-controllable: channel bit 0 (b6): below the 4 KiB page offset",
    ] {
        assert!(text.contains(line), "missing '{line}' in\n{text}");
    }
}

#[test]
fn bpm_bank_colour_reaches_exactly_the_two_banks_it_names() {
    let bits = i7_bits();
    let space = bits.bank_space().unwrap();
    assert_eq!(labels(&space), ["b13", "b14", "b15", "b21", "b22"]);
    assert_eq!(space.count(), 32);
    for c in 0..32 {
        let reach = bits.reach(&space, &[c]).unwrap();
        // Global bank id = channel * 32 + rank * 8 + bank; colour = rank * 8 + bank.
        assert_eq!(reach.banks, [c, c + 32], "colour {c}");
        assert_eq!(reach.channels, [0, 1], "colour {c}");
        assert_eq!(reach.llc_sets.len(), 1024, "colour {c}");
        assert_eq!(bits.frames_of_colour(&space, c), (1 << 21) / 32);
    }
    let eight = bits.reach(&space, &(16..24).collect::<Vec<_>>()).unwrap();
    assert_eq!(eight.banks.len(), 16);
}

/// (policy, (i, j, k), Table-1 bits, LLC sets one colour reaches, banks one colour reaches)
type Table1Row = (&'static str, (u32, u32, u32), &'static [u32], usize, usize);

#[test]
fn hvr_table_1_colour_reaches_the_paper_s_sets_and_banks() {
    let bits = i7_bits();
    // HVR §8.2 T1.
    let table: [Table1Row; 6] = [
        ("cache-only", (0, 3, 0), &[16, 17, 18], 1024, 64),
        ("bank-only-4", (2, 0, 0), &[21, 22], 8192, 16),
        ("bank-only-8", (2, 0, 1), &[15, 21, 22], 4096, 8),
        ("a-vp", (0, 0, 2), &[14, 15], 2048, 16),
        ("b-vp", (1, 0, 2), &[14, 15, 22], 2048, 8),
        ("c-vp", (0, 1, 2), &[14, 15, 16], 1024, 16),
    ];
    for (name, (i, j, k), want_bits, sets, banks) in table {
        let chosen = bits.vertical_bits(i, j, k).unwrap();
        assert_eq!(chosen, want_bits, "{name}");
        let space = bits.single_bit_space(name, &chosen).unwrap();
        for c in 0..space.count() {
            let reach = bits.reach(&space, &[c]).unwrap();
            assert_eq!((reach.llc_sets.len(), reach.banks.len()), (sets, banks), "{name} colour {c}");
        }
        let all: Vec<u32> = (0..space.count()).collect();
        let reach = bits.reach(&space, &all).unwrap();
        assert_eq!((reach.llc_sets.len(), reach.banks.len()), (8192, 64), "{name}: all colours");
    }
}

#[test]
fn vertical_bits_beyond_a_class_are_an_error_naming_the_class() {
    let err = i7_bits().vertical_bits(3, 0, 0).unwrap_err().to_string();
    assert_eq!(err, "invalid configuration: os.vertical.bits: (i, j, k) = (3, 0, 0) asks for 3 B-bits but mapping i7-860 has 2 (b21, b22)");
}

#[test]
fn a_named_vertical_policy_without_its_bits_is_an_error_naming_the_policy() {
    use crate::os::placement::policy_bits;
    // The user set os.policy, not os.vertical.bits: the error says which policy needs what.
    let err = policy_bits("bank-only", (3, 0, 0), &i7_bits()).unwrap_err().to_string();
    assert_eq!(
        err,
        "invalid configuration: os.policy: 'bank-only' is HVR's (i, j, k) = (3, 0, 0), which asks for 3 B-bits but mapping i7-860 has 2 (b21, b22); choose a policy this machine's mapping has the bits for"
    );
    let err = policy_bits("vertical", (3, 0, 0), &i7_bits()).unwrap_err().to_string();
    assert!(err.starts_with("invalid configuration: os.vertical.bits: "), "{err}");
}

#[test]
fn channel_colours_below_the_page_offset_are_a_clear_error() {
    let err = i7_bits().channel_space().unwrap_err().to_string();
    assert!(
        err.ends_with(
            "mapping i7-860 selects the channel with b6, below the 4 KiB page offset; use a mapping whose \
             channel bit is above it, e.g. i7-860-bpm-plus"
        ),
        "{err}"
    );
}

#[test]
fn bpm_plus_colour_reaches_one_bank_on_one_channel() {
    let bits = ColourBits::new(&mapping("i7-860-bpm-plus"), I7_LLC, 12, &[]).unwrap();
    assert!(bits.not_controllable().is_empty());
    let space = bits.channel_bank_space().unwrap();
    assert_eq!(labels(&space), ["b13", "b14", "b15", "b21", "b22", "b32"]);
    for c in 0..64 {
        let reach = bits.reach(&space, &[c]).unwrap();
        assert_eq!(reach.banks, [c], "colour {c}");
        assert_eq!(reach.channels, [c >> 5], "colour {c}");
    }
}

#[test]
fn xor_bank_colours_are_the_xor_functions() {
    let org = crate::mapping::AddressMapping::from_toml(
        crate::presets::mapping_text("xor-bank").unwrap(),
        "xor-bank",
        &crate::os::tests::small_org(1, 2),
    )
    .unwrap();
    let bits = ColourBits::new(&org, 6..17, 12, &[]).unwrap();
    let space = bits.bank_space().unwrap();
    assert_eq!(labels(&space), ["b13^b17", "b14^b18", "b15^b19", "b16^b20"]);
    for c in 0..space.count() {
        assert_eq!(bits.reach(&space, &[c]).unwrap().banks, [c]);
    }
}

#[test]
fn a_colour_that_does_not_exist_is_named_with_the_space_size() {
    let bits = i7_bits();
    let err = bits.reach(&bits.bank_space().unwrap(), &[40]).unwrap_err().to_string();
    assert_eq!(err, "invalid configuration: os.colours: colour 40 does not exist: the bank colour space has 32 colours (0-31)");
}

#[test]
fn colour_lists_collapse_runs() {
    assert_eq!(colour_list_text(&[19, 16, 17, 18, 21, 23, 22]), "16-19, 21-23");
    assert_eq!(colour_list_text(&[3]), "3");
}
