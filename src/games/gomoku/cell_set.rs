//! A set of board cells as a fixed bit array: the board keeps one per side and threat level
//! (the cells where a stone would make a five, a four, an open three) so that the threat
//! searches visit those few cells instead of scanning the whole board at every node.
//!
//! Fixed size (every board up to 25 x 25 fits) so that a board never allocates for it and a
//! copy is a plain memcpy; iteration is in increasing cell order, the order of the scans it
//! replaces, so answers do not change with it.

use super::MAX_SIDE;

const WORDS: usize = (MAX_SIDE * MAX_SIDE).div_ceil(64);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellSet {
    words: [u64; WORDS],
}

impl CellSet {
    pub const EMPTY: CellSet = CellSet { words: [0; WORDS] };

    #[inline]
    pub fn set(&mut self, cell: usize, member: bool) {
        let bit = 1u64 << (cell % 64);
        let word = &mut self.words[cell / 64];
        if member {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    #[inline]
    pub fn contains(&self, cell: usize) -> bool {
        self.words[cell / 64] & (1u64 << (cell % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The cells in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    i * 64 + bit
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_in_increasing_order_once_each() {
        let mut s = CellSet::default();
        for cell in [624, 0, 63, 64, 300, 63] {
            s.set(cell, true);
        }
        s.set(300, false);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63, 64, 624]);
        assert_eq!(s.len(), 4);
        assert!(s.contains(64) && !s.contains(300));
    }

    #[test]
    fn an_emptied_set_is_empty() {
        let mut s = CellSet::default();
        assert!(s.is_empty());
        s.set(77, true);
        s.set(77, false);
        assert!(s.is_empty());
    }
}
