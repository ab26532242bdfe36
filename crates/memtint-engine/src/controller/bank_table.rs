//! A per-bank (or per-lane) table of the lane controller (`lane_controller.rs`) as a fixed
//! array of a power-of-two size, indexed through a mask: an index needs no bounds check and
//! no `Vec` pointer is loaded, where the per-bank `Vec`s cost a compare and branch per access.
//! Banks past the channel's stay at their initial value.

use std::ops::{Index, IndexMut};

/// `N` entries, `N` a power of two; index `i` reads entry `i & (N - 1)`, so callers keep
/// indices below `N` (the lane controller checks its organisation's size once, `unsupported`).
#[derive(Clone, Debug)]
pub struct BankTable<T, const N: usize>(pub [T; N]);

impl<T, const N: usize> BankTable<T, N> {
    const MASK: usize = {
        assert!(N.is_power_of_two());
        N - 1
    };

    pub fn from_fn(f: impl FnMut(usize) -> T) -> Self {
        BankTable(std::array::from_fn(f))
    }
}

impl<T, const N: usize> Index<usize> for BankTable<T, N> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < N);
        &self.0[i & Self::MASK]
    }
}

impl<T, const N: usize> IndexMut<usize> for BankTable<T, N> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < N);
        &mut self.0[i & Self::MASK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_independent_and_indices_wrap_only_past_the_size() {
        let mut t: BankTable<u32, 8> = BankTable::from_fn(|i| i as u32 * 10);
        t[3] += 1;
        assert_eq!((t[0], t[3], t[7]), (0, 31, 70));
        assert_eq!(t.0, [0, 10, 20, 31, 40, 50, 60, 70]);
    }
}
