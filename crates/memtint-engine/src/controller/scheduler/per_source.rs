//! A table with one entry per request source (hardware thread, core or trace), grown on first
//! use: schedulers do not know how many sources a machine has.

#[derive(Clone, Debug, Default)]
pub struct PerSource<T> {
    entries: Vec<T>,
}

impl<T: Default + Clone> PerSource<T> {
    pub fn new() -> Self {
        PerSource { entries: Vec::new() }
    }

    /// The entry of `source`, if it was ever touched (no copy: keys read it per request).
    #[inline]
    pub fn get(&self, source: u32) -> Option<&T> {
        self.entries.get(source as usize)
    }

    /// The entry of `source`, created (with every lower source) if needed.
    #[inline]
    pub fn get_mut(&mut self, source: u32) -> &mut T {
        let i = source as usize;
        if i >= self.entries.len() {
            self.entries.resize(i + 1, T::default());
        }
        &mut self.entries[i]
    }

    /// Sources touched so far (`0..len`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.entries.iter().enumerate().map(|(i, t)| (i as u32, t))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> {
        self.entries.iter_mut().enumerate().map(|(i, t)| (i as u32, t))
    }
}
