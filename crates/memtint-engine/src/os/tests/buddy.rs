//! The colour-indexed buddy allocator: invariants under random operations (proptest) and the
//! 8 GiB machine.

use super::{mapping, I7_LLC};
use crate::os::buddy::{BuddyAllocator, Frame, MAX_ORDER};
use crate::os::colour::{ColourBits, ColourFunction, ColourSpace};
use proptest::prelude::*;
use std::collections::HashSet;

/// The i7-860 bank colour bits (b13-15, b21-22) on a machine of 2^frame_bits frames; with
/// frame_bits < 11 the high colour bits fall outside memory and those colours are empty.
fn small(frame_bits: u32) -> BuddyAllocator {
    let fs = [13, 14, 15, 21, 22].map(ColourFunction::single).to_vec();
    BuddyAllocator::new(1 << frame_bits, &ColourSpace::new("bank", fs).unwrap(), 12).unwrap()
}

#[test]
fn eight_gib_starts_as_maximal_blocks_and_serves_every_colour() {
    let bits = ColourBits::new(&mapping("i7-860"), I7_LLC, 12, &[]).unwrap();
    let space = bits.bank_space().unwrap();
    let mut a = BuddyAllocator::new(1 << 21, &space, 12).unwrap();
    assert_eq!(a.free_blocks().len(), (1 << 21) >> MAX_ORDER);
    for c in 0..32 {
        assert_eq!(a.free_of_colour(c), 65536);
        let f = a.alloc_colour(c).unwrap();
        assert_eq!(space.colour_of((f as u64) << 12), c);
        assert_eq!(a.free_of_colour(c), 65535);
    }
    assert_eq!(a.allocated_frames(), 32);
}

#[test]
fn a_colour_runs_out_after_its_share_of_frames() {
    let mut a = small(12); // 4096 frames, 32 colours of 128 frames
    let frames: Vec<Frame> = std::iter::from_fn(|| a.alloc_colour(5)).collect();
    assert_eq!(frames.len(), 128);
    assert_eq!(a.free_of_colour(5), 0);
    assert_eq!(a.free_frames(), 4096 - 128);
    assert!(frames.iter().all(|&f| a.colour_of(f) == 5));
    for f in frames {
        a.free(f).unwrap();
    }
    assert_eq!(a.free_blocks(), (0..4).map(|i| (i << 10, MAX_ORDER)).collect::<Vec<_>>());
}

#[test]
fn freeing_a_frame_twice_is_an_error() {
    let mut a = small(10);
    let f = a.alloc_any().unwrap();
    a.free(f).unwrap();
    assert!(a.free(f).unwrap_err().to_string().contains("is freed but is not allocated"));
    assert!(a.free(1 << 20).is_err());
}

#[derive(Clone, Debug)]
enum Op {
    Colour(u32),
    Any,
    Frame(u32),
    Free(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..32).prop_map(Op::Colour),
        1 => Just(Op::Any),
        1 => (0u32..1 << 12).prop_map(Op::Frame),
        3 => any::<usize>().prop_map(Op::Free),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn buddy_invariants_hold_under_random_operations(
        frame_bits in 8u32..13,
        ops in prop::collection::vec(op(), 1..600),
    ) {
        let mut a = small(frame_bits);
        let total = a.total_frames() as u64;
        let initial = a.free_blocks();
        let mut held: Vec<Frame> = Vec::new();
        let mut held_set: HashSet<Frame> = HashSet::new();
        for op in ops {
            let got = match op {
                Op::Colour(c) => {
                    let f = a.alloc_colour(c);
                    if let Some(f) = f { prop_assert_eq!(a.colour_of(f), c); }
                    f
                }
                Op::Any => a.alloc_any(),
                Op::Frame(f) => {
                    let f = f % a.total_frames();
                    let was_free = a.is_free(f);
                    let got = a.alloc_frame(f);
                    prop_assert_eq!(got.is_some(), was_free);
                    got
                }
                Op::Free(i) if !held.is_empty() => {
                    let f = held.swap_remove(i % held.len());
                    held_set.remove(&f);
                    a.free(f).unwrap();
                    None
                }
                Op::Free(_) => None,
            };
            if let Some(f) = got {
                prop_assert!(held_set.insert(f), "frame {} handed out twice", f);
                held.push(f);
            }
            prop_assert_eq!(a.free_frames() + held.len() as u64, total);
            prop_assert_eq!(a.allocated_frames(), held.len() as u64);
        }
        let free_by_colour: u64 = (0..32).map(|c| a.free_of_colour(c)).sum();
        prop_assert_eq!(free_by_colour, a.free_frames());
        for c in 0..32 {
            let mine = held.iter().filter(|&&f| a.colour_of(f) == c).count() as u64;
            prop_assert_eq!(a.allocated_of_colour(c), mine);
        }
        for f in held {
            a.free(f).unwrap();
        }
        prop_assert_eq!(a.free_blocks(), initial);
    }
}
