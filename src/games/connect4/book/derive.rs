//! Derives the book's shallow layer from its 12-disc layer by retrograde analysis: the exact
//! value of every position with at most [`SHALLOW_PLIES`](super::SHALLOW_PLIES) discs.
//!
//! Plain minimax, no pruning, over every position reachable in play with fewer than 12 discs
//! (about 3.3 million up to mirror images), memoised by the mirror-canonical key: a 12-disc
//! position takes its value from BitBully's layer, a move that completes four is a win in one,
//! and every other position is the best of its children with the distance one ply longer. No
//! pruning means every value is exact, not a bound. Positions where a side declined a win are
//! included: a user's game can reach them. The walk takes under a minute on one core.

use std::collections::HashMap;

use super::{BOOK_PLIES, BookLayer, RECORD_BYTES, TWELVE_PLY_BOOK, huffman_key};
use crate::games::connect4::position::{Geometry, Position};

/// A value in the files' form but from the side to move's view: `0` a draw, `100 - p` a win
/// and `-(100 - p)` a loss in `p` plies.
type MoverValue = i8;

const WIN_AT_ONCE: MoverValue = 99;

/// Why the shallow layer could not be derived.
#[derive(Debug, thiserror::Error)]
pub enum DeriveError {
    #[error("the shallow layer holds at most {BOOK_PLIES} discs less one, not {0}")]
    TooDeep(u32),
    #[error("the 12-disc layer has no value for the position with key {0:#010x}")]
    MissingPosition(u32),
}

/// The shallow layer as the book file stores it: sorted 5-byte records of every position of
/// the standard board with at most `max_discs` discs.
pub fn derive_shallow_layer(max_discs: u32) -> Result<Vec<u8>, DeriveError> {
    if max_discs >= BOOK_PLIES {
        return Err(DeriveError::TooDeep(max_discs));
    }
    let mut walk = RetrogradeWalk {
        g: Geometry::standard(),
        deep: &TWELVE_PLY_BOOK.deep,
        max_discs,
        memo: HashMap::with_capacity(1 << 22),
        records: Vec::new(),
    };
    walk.value(&Position::default())?;
    let mut records = walk.records;
    records.sort_unstable_by_key(|&(key, _)| key);
    let mut bytes = Vec::with_capacity(records.len() * RECORD_BYTES);
    for (key, value) in records {
        bytes.extend_from_slice(&key.to_be_bytes());
        bytes.push(value as u8);
    }
    Ok(bytes)
}

struct RetrogradeWalk {
    g: Geometry,
    deep: &'static BookLayer,
    max_discs: u32,
    /// Values of every position already walked, by mirror-canonical key.
    memo: HashMap<u64, MoverValue>,
    /// (file key, first player's value) of every walked position with at most `max_discs`.
    records: Vec<(i32, i8)>,
}

impl RetrogradeWalk {
    /// The exact value of `pos`, a position nobody has won yet, for the side to move.
    fn value(&mut self, pos: &Position) -> Result<MoverValue, DeriveError> {
        let g = self.g;
        if pos.moves == BOOK_PLIES {
            // BitBully's layer leaves out the positions won at once.
            if pos.winning_moves(&g) != 0 {
                return Ok(WIN_AT_ONCE);
            }
            let key = huffman_key(&g, pos, false);
            let mirror = huffman_key(&g, pos, true);
            // At 12 discs the side to move is the first player: the file's view is the mover's.
            return self
                .deep
                .find(key)
                .or_else(|| self.deep.find(mirror))
                .ok_or(DeriveError::MissingPosition(key as u32));
        }
        let canonical = pos.key().min(pos.mirrored_key(&g));
        if let Some(&value) = self.memo.get(&canonical) {
            return Ok(value);
        }
        let wins = pos.own_winning_cells(&g);
        let mut best = MoverValue::MIN;
        for col in 0..g.width {
            if !pos.can_play(&g, col) {
                continue;
            }
            let cell = pos.landing_cell(&g, col);
            let ours = if cell & wins != 0 {
                WIN_AT_ONCE
            } else {
                let mut child = *pos;
                child.play(cell);
                one_ply_earlier(self.value(&child)?)
            };
            best = best.max(ours);
        }
        self.memo.insert(canonical, best);
        if pos.moves <= self.max_discs {
            let key = huffman_key(&g, pos, false).min(huffman_key(&g, pos, true));
            let first_player = if pos.moves.is_multiple_of(2) {
                best
            } else {
                -best
            };
            self.records.push((key, first_player));
        }
        Ok(best)
    }
}

/// The value for the side to move of a move whose resulting position is worth `child` to the
/// opponent: the sign flips and the end is one ply further away.
fn one_ply_earlier(child: MoverValue) -> MoverValue {
    -child + child.signum()
}

/// Checks a derived layer against the shipped one (see `kibitz connect4-book --check`).
pub fn matches_shipped_layer(bytes: &[u8]) -> bool {
    bytes == super::BOOK_SHALLOW
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_value_is_one_ply_further_and_of_the_other_sign() {
        assert_eq!(one_ply_earlier(WIN_AT_ONCE), -98);
        assert_eq!(one_ply_earlier(-98), 97);
        assert_eq!(one_ply_earlier(0), 0);
    }

    #[test]
    fn layers_as_deep_as_the_twelve_disc_one_are_refused() {
        assert!(matches!(
            derive_shallow_layer(12),
            Err(DeriveError::TooDeep(12))
        ));
    }
}
