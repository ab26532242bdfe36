//! A FIFO whose live elements are always one contiguous slice: the core's in-window loads.
//!
//! The core's look-ahead scans its loads from the front on nearly every simulated cycle;
//! a `VecDeque`'s iterators and indexing handle the ring's wrap on every access, which cost
//! more than the scans themselves. Popping here only advances a start index, and the popped
//! prefix is dropped once it is at least as long as the live part (amortised O(1) per element).

pub struct SliceQueue<T> {
    items: Vec<T>,
    head: usize,
}

impl<T> SliceQueue<T> {
    pub fn with_capacity(n: usize) -> Self {
        SliceQueue { items: Vec::with_capacity(2 * n), head: 0 }
    }

    /// The live elements, front first.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.items[self.head..]
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items[self.head..]
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(self.head + i)
    }

    pub fn push_back(&mut self, x: T) {
        if self.head > 0 && self.head >= self.items.len() - self.head {
            self.items.drain(..self.head);
            self.head = 0;
        }
        self.items.push(x);
    }

    /// Drops the front element, if any.
    #[inline]
    pub fn pop_front(&mut self) {
        if self.head < self.items.len() {
            self.head += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn behaves_like_a_vecdeque_under_mixed_pushes_and_pops() {
        let mut q = SliceQueue::with_capacity(4);
        let mut model = VecDeque::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Pops a little more often than pushes once long, so the queue drains and refills.
            if x % 7 < 3 + (model.len() > 40) as u64 * 2 {
                q.pop_front();
                model.pop_front();
            } else {
                q.push_back(n);
                model.push_back(n);
                // The popped prefix does not accumulate.
                assert!(q.items.len() <= 2 * model.len(), "{} stored for {} live", q.items.len(), model.len());
            }
            assert!(q.as_slice().iter().eq(model.iter()));
            assert_eq!(q.get(3), model.get(3));
        }
    }
}
