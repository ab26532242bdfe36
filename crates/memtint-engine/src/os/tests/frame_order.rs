//! The baseline's aged frame order and the page table.

use crate::os::buddy::BuddyAllocator;
use crate::os::colour::ColourSpace;
use crate::os::frame_order::FrameOrder;
use crate::os::page_table::PageTable;
use std::collections::HashSet;

#[test]
fn frame_order_hands_out_every_frame_once_before_running_dry() {
    let mut alloc = BuddyAllocator::new(1 << 12, &ColourSpace::uncoloured(), 12).unwrap();
    let mut order = FrameOrder::new(3);
    let frames: Vec<u32> = std::iter::from_fn(|| order.next_frame(&mut alloc)).collect();
    assert_eq!(frames.len(), 1 << 12);
    assert_eq!(frames.iter().collect::<HashSet<_>>().len(), 1 << 12);
    // Runs of contiguous frames, but not one long sequential run.
    let contiguous = frames.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(contiguous > 1000 && contiguous < 4000, "{contiguous} contiguous steps");
}

#[test]
fn page_table_maps_each_page_once_and_misses_unknown_pages() {
    let mut pt = PageTable::new();
    assert_eq!(pt.lookup(5), None);
    pt.insert(5, 42);
    pt.insert(9, 7);
    assert_eq!((pt.lookup(5), pt.lookup(5), pt.lookup(9), pt.lookup(6)), (Some(42), Some(42), Some(7), None));
    assert_eq!(pt.len(), 2);
}
