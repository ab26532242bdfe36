//! Reads in DRAM, by request id. Ids are handed out sequentially (writes take ids too) and
//! reads complete roughly in order, so a ring indexed by `id - base` replaces a hash map: an
//! insert is a push at the back, a removal clears a slot and trims cleared slots at the front.

use std::collections::VecDeque;

pub struct InflightReads<T> {
    /// Slot k holds request `base + k`; `None` for writes and for reads already completed.
    slots: VecDeque<Option<T>>,
    base: u64,
}

impl<T> Default for InflightReads<T> {
    fn default() -> Self {
        InflightReads { slots: VecDeque::new(), base: 0 }
    }
}

impl<T> InflightReads<T> {
    /// Records read `id`; ids must be inserted in increasing order.
    pub fn insert(&mut self, id: u64, value: T) {
        if self.slots.is_empty() {
            self.base = id;
        }
        debug_assert!(id >= self.base + self.slots.len() as u64, "read ids must increase: {id}");
        let gap = id - self.base - self.slots.len() as u64;
        self.slots.extend((0..gap).map(|_| None));
        self.slots.push_back(Some(value));
    }

    /// Takes read `id` out (`None` if it is not in flight).
    pub fn remove(&mut self, id: u64) -> Option<T> {
        let k = id.checked_sub(self.base)?;
        let value = self.slots.get_mut(usize::try_from(k).ok()?)?.take();
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        value
    }

    /// Read `id`, if in flight.
    #[cfg(test)]
    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let k = id.checked_sub(self.base)?;
        self.slots.get_mut(usize::try_from(k).ok()?)?.as_mut()
    }

    #[cfg(test)]
    fn len_slots(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_removal_with_gaps() {
        let mut r = InflightReads::default();
        r.insert(3, 'a');
        r.insert(5, 'b');
        r.insert(6, 'c');
        assert_eq!(r.remove(4), None);
        assert_eq!(r.get_mut(4), None);
        *r.get_mut(5).unwrap() = 'B';
        assert_eq!(r.remove(5), Some('B'));
        assert_eq!(r.remove(5), None);
        assert_eq!(r.remove(3), Some('a'));
        // 3, 4 and 5 are gone: only 6 is left.
        assert_eq!(r.len_slots(), 1);
        assert_eq!(r.remove(2), None);
        assert_eq!(r.get_mut(2), None);
        assert_eq!(r.get_mut(7), None);
        assert_eq!(r.remove(6), Some('c'));
        assert_eq!(r.len_slots(), 0);
        r.insert(100, 'd');
        assert_eq!(r.remove(100), Some('d'));
    }
}
