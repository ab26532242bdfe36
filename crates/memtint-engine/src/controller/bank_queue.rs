//! The requests one bank has waiting in one direction (reads or writes), oldest first, with the
//! number that hit the bank's open row kept up to date. Scheduling looks at banks, not at the
//! whole queue: every request of a bank in one class (hit, or not) needs the same command with the
//! same timing, so only the oldest of each class can be the best choice (for age-ordered keys).

use super::Request;

#[derive(Clone, Debug, Default)]
pub struct BankQueue {
    /// Oldest first.
    pub reqs: Vec<Request>,
    /// Requests whose row is the bank's open row.
    pub hits: u32,
}

impl BankQueue {
    /// Recount hits after the bank opened `row` (or closed: `None`).
    pub fn recount(&mut self, open_row: Option<u32>) {
        self.hits = match open_row {
            Some(row) => self.reqs.iter().filter(|r| r.row == row).count() as u32,
            None => 0,
        };
    }

    /// Position of the oldest request at or after `from` that hits `row`.
    #[inline]
    pub fn oldest_hit(&self, row: u32, from: usize) -> Option<usize> {
        self.reqs[from..].iter().position(|r| r.row == row).map(|i| from + i)
    }

    /// Position of the oldest request at or after `from` that does not hit `row`.
    #[inline]
    pub fn oldest_miss(&self, row: u32, from: usize) -> Option<usize> {
        self.reqs[from..].iter().position(|r| r.row != row).map(|i| from + i)
    }
}
