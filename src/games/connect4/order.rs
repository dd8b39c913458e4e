//! Move ordering for the exact solver: a tiny insertion sort over at most one move per column.
//!
//! Moves are scored by the threats they create (empty cells where the mover would then complete
//! four), the strongest single predictor of a cutoff in Connect-4 (Pons). A move is known by its
//! slot in the centre-first column order ([`super::position::ColumnOrder`]); each entry is one
//! `u32`, the score above the slot's rank, so that on equal scores the more central column pops
//! first and the sorter costs next to nothing to set up at every node.

use super::position::MAX_WIDTH;

/// Bits below the score in a key: room for `MAX_WIDTH` slots.
const SLOT_BITS: u32 = 4;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;

/// The highest score [`MoveSorter::add`] takes.
pub const MAX_SCORE: u32 = u32::MAX >> SLOT_BITS;

/// Up to one move per column, popped best first.
pub struct MoveSorter {
    /// `score << SLOT_BITS | (SLOT_MASK - slot)`, ascending; the best is at `len - 1`.
    keys: [u32; MAX_WIDTH],
    len: usize,
}

impl MoveSorter {
    #[inline]
    pub fn new() -> Self {
        MoveSorter {
            keys: [0; MAX_WIDTH],
            len: 0,
        }
    }

    /// Adds the move of slot `slot` (at most once each) with `score` (at most [`MAX_SCORE`]);
    /// among equal scores, the lower slot pops first.
    #[inline]
    pub fn add(&mut self, slot: usize, score: u32) {
        debug_assert!(slot < MAX_WIDTH && score <= MAX_SCORE);
        let key = (score << SLOT_BITS) | (SLOT_MASK - slot as u32);
        let mut at = self.len;
        while at > 0 && self.keys[at - 1] > key {
            self.keys[at] = self.keys[at - 1];
            at -= 1;
        }
        self.keys[at] = key;
        self.len += 1;
    }

    /// Removes and returns the slot of the best remaining move.
    #[inline]
    pub fn pop(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some((SLOT_MASK - (self.keys[self.len] & SLOT_MASK)) as usize)
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
    fn pops_best_first_and_the_lower_slot_on_ties() {
        let mut sorter = MoveSorter::new();
        sorter.add(6, 2);
        sorter.add(5, 5);
        sorter.add(4, 2);
        sorter.add(3, 0);
        sorter.add(0, MAX_SCORE);
        assert_eq!(sorter.pop(), Some(0));
        assert_eq!(sorter.pop(), Some(5));
        assert_eq!(sorter.pop(), Some(4));
        assert_eq!(sorter.pop(), Some(6));
        assert_eq!(sorter.pop(), Some(3));
        assert_eq!(sorter.pop(), None);
    }
}
