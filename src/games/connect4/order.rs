//! Move ordering for the exact solver: a tiny insertion sort over at most one move per column.
//!
//! Moves are scored by the threats they create (empty cells where the mover would then complete
//! four), the strongest single predictor of a cutoff in Connect-4 (Pons). They are added edge
//! columns first and the sort is stable with later additions popping first, so on equal scores
//! the more central column is searched first.

use super::position::MAX_WIDTH;

/// Up to one move per column, popped best first.
pub struct MoveSorter {
    /// `(cell, column, score)` sorted by ascending score; the best is at `len - 1`.
    entries: [(u64, u32, i32); MAX_WIDTH],
    len: usize,
}

impl MoveSorter {
    #[inline]
    pub fn new() -> Self {
        MoveSorter {
            entries: [(0, 0, 0); MAX_WIDTH],
            len: 0,
        }
    }

    /// Adds a move; among equal scores, the last added pops first.
    #[inline]
    pub fn add(&mut self, cell: u64, column: u32, score: i32) {
        let mut at = self.len;
        while at > 0 && self.entries[at - 1].2 > score {
            self.entries[at] = self.entries[at - 1];
            at -= 1;
        }
        self.entries[at] = (cell, column, score);
        self.len += 1;
    }

    /// Removes and returns the best remaining move as `(cell, column)`.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let (cell, column, _) = self.entries[self.len];
        Some((cell, column))
    }
}

impl Default for MoveSorter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_best_first_and_the_last_added_on_ties() {
        let mut sorter = MoveSorter::new();
        sorter.add(1, 0, 2);
        sorter.add(2, 1, 5);
        sorter.add(4, 2, 2);
        sorter.add(8, 3, 0);
        assert_eq!(sorter.pop(), Some((2, 1)));
        assert_eq!(sorter.pop(), Some((4, 2)));
        assert_eq!(sorter.pop(), Some((1, 0)));
        assert_eq!(sorter.pop(), Some((8, 3)));
        assert_eq!(sorter.pop(), None);
    }
}
