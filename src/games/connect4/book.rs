//! The opening book: the exact value of every position of the standard 7 x 6 board with 12
//! discs, and of every position with at most 8, so that the openings no search budget can
//! solve are answered exactly.
//!
//! Two layers, one format:
//! - **12 discs**: BitBully's published database (`book/book_12ply_distances.dat`, MIT, see
//!   `book/LICENSE`), unchanged. Positions where the side to move wins at once are left out.
//! - **0 to 8 discs**: `book/book_8ply_distances.dat`, derived by kibitz from the 12-disc layer
//!   by retrograde analysis ([`mod@derive`], `kibitz connect4-book`): every position reachable in
//!   play, mirror images once. Without it a search from the empty board has 12 plies to go
//!   before the 12-disc layer ends it (about 200 ms on a cold table); with it, every position
//!   of up to 8 discs is a single look-up and the rest of the book's range is at most 3 plies
//!   of search away from the 12-disc layer.
//!
//! Each file is a sorted array of 5-byte records: a 32-bit big-endian signed key, then a signed
//! byte value. The key is a Huffman code of the board read column by column from the left, each
//! column from the bottom: `10` for a first-player disc, `11` for a second-player disc, `0` to
//! close the column (a full column is closed too), and one `0` at the end, left-aligned in the
//! 32 bits (12 discs make exactly 24 + 7 + 1 = 32 bits; fewer discs leave zeros on the right,
//! and a prefix code keeps boards of different disc counts apart). The 12-disc layer stores one
//! of a position and its mirror image; the shallow layer stores the smaller key of the two.
//! The value is from the first player's side: `0` a draw, `100 - p` a win and `-(100 - p)` a
//! loss `p` plies from now with best play.
//!
//! The arrays are searched in place (binary search over the bytes embedded in the binary): no
//! parsing at start-up and no copy in memory. The solver asks the book at every node of a
//! covered disc count, so a search from fewer discs ends at the book's horizon instead of the
//! game's.

pub mod derive;

use super::position::{Geometry, Position};
use super::score::score_from_distance;

/// Discs on the board of every position in the deep layer.
pub const BOOK_PLIES: u32 = 12;
/// The shallow layer holds every position with at most this many discs.
pub const SHALLOW_PLIES: u32 = 8;

const RECORD_BYTES: usize = 5;

/// BitBully's 12-ply book with distances (bitbully-databases 0.0.2), unchanged.
static BOOK_12_PLY: &[u8] = include_bytes!("book/book_12ply_distances.dat");
/// Every position of 0 to [`SHALLOW_PLIES`] discs, derived from the 12-ply book by
/// `kibitz connect4-book` ([`derive::derive_shallow_layer`]).
static BOOK_SHALLOW: &[u8] = include_bytes!("book/book_8ply_distances.dat");

/// One sorted array of records; see the module note for the format.
#[derive(Debug)]
struct BookLayer {
    records: &'static [u8],
}

impl BookLayer {
    fn len(&self) -> usize {
        self.records.len() / RECORD_BYTES
    }

    fn record(&self, index: usize) -> (i32, i8) {
        let r = &self.records[index * RECORD_BYTES..(index + 1) * RECORD_BYTES];
        (i32::from_be_bytes([r[0], r[1], r[2], r[3]]), r[4] as i8)
    }

    fn find(&self, key: i32) -> Option<i8> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let (mid_key, value) = self.record(mid);
            match mid_key.cmp(&key) {
                std::cmp::Ordering::Equal => return Some(value),
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
            }
        }
        None
    }
}

/// A book of exact values: a deep layer of 12-disc positions and a shallow layer of every
/// position up to [`SHALLOW_PLIES`] discs.
#[derive(Debug)]
pub struct OpeningBook {
    deep: BookLayer,
    shallow: BookLayer,
}

/// The book shipped with kibitz: both layers.
pub static STANDARD_BOOK: OpeningBook = OpeningBook {
    deep: BookLayer {
        records: BOOK_12_PLY,
    },
    shallow: BookLayer {
        records: BOOK_SHALLOW,
    },
};

/// The 12-disc layer alone (BitBully's data as published): what the shallow layer is derived
/// from and checked against.
pub static TWELVE_PLY_BOOK: OpeningBook = OpeningBook {
    deep: BookLayer {
        records: BOOK_12_PLY,
    },
    shallow: BookLayer { records: &[] },
};

impl OpeningBook {
    /// Number of 12-disc positions stored.
    pub fn len(&self) -> usize {
        self.deep.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of positions stored in the shallow layer.
    pub fn shallow_len(&self) -> usize {
        self.shallow.len()
    }

    /// Whether positions with `discs` discs may be in the book: a test cheap enough for every
    /// node of the solver.
    #[inline]
    pub fn covers(&self, discs: u32) -> bool {
        discs == BOOK_PLIES || (discs <= SHALLOW_PLIES && !self.shallow.records.is_empty())
    }

    /// The exact value of `pos` in the solver's units (Pons' score for the side to move), if
    /// the book holds it: standard board, a covered disc count, and (at 12 discs) no immediate
    /// win.
    pub fn value(&self, g: &Geometry, pos: &Position) -> Option<i32> {
        if !self.covers(pos.moves) || g.width != 7 || g.height != 6 {
            return None;
        }
        let raw = self.first_player_value(g, pos)?;
        Some(solver_score(raw, pos.moves, g))
    }

    /// The stored value of `pos`, first player's side (the file's own form).
    fn first_player_value(&self, g: &Geometry, pos: &Position) -> Option<i8> {
        let (key, mirror) = (huffman_key(g, pos, false), huffman_key(g, pos, true));
        if pos.moves == BOOK_PLIES {
            self.deep.find(key).or_else(|| self.deep.find(mirror))
        } else {
            self.shallow.find(key.min(mirror))
        }
    }

    /// The `index`-th stored 12-disc position and its value in the solver's units (for checking
    /// the book against the solver).
    pub fn entry(&self, index: usize) -> Option<(Position, i32)> {
        layer_entry(&self.deep, index)
    }

    /// The `index`-th position of the shallow layer and its value in the solver's units.
    pub fn shallow_entry(&self, index: usize) -> Option<(Position, i32)> {
        layer_entry(&self.shallow, index)
    }
}

fn layer_entry(layer: &BookLayer, index: usize) -> Option<(Position, i32)> {
    if index >= layer.len() {
        return None;
    }
    let g = Geometry::standard();
    let (key, raw) = layer.record(index);
    let pos = decode_key(&g, key)?;
    Some((pos, solver_score(raw, pos.moves, &g)))
}

/// A stored value (first player's side, `±(100 - plies)`) of a position with `discs` discs, in
/// the solver's units (the side to move's).
fn solver_score(raw: i8, discs: u32, g: &Geometry) -> i32 {
    if raw == 0 {
        return 0;
    }
    // After an even number of plies the side to move is the first player.
    let mover_wins = (raw > 0) == discs.is_multiple_of(2);
    let plies = 100 - (raw as i32).abs();
    score_from_distance(mover_wins, plies as u32, discs, g.cells())
}

/// The book key of `pos` (a position of the standard board with at most 12 discs), or of its
/// mirror image.
fn huffman_key(g: &Geometry, pos: &Position, mirrored: bool) -> i32 {
    let first = if pos.moves.is_multiple_of(2) {
        pos.current
    } else {
        pos.opponent()
    };
    let mut code: u64 = 0;
    for i in 0..g.width {
        let col = if mirrored { g.width - 1 - i } else { i };
        for row in 0..g.height {
            let cell = g.bottom_of(col) << row;
            if pos.mask & cell == 0 {
                break;
            }
            code = code << 2 | 0b10 | u64::from(first & cell == 0);
        }
        // Close the column (a full one too).
        code <<= 1;
    }
    // Left-align 2 bits a disc and one a column; the shift also writes the final `0`.
    let bits = 2 * pos.moves + g.width;
    (code << (32 - bits)) as u32 as i32
}

/// The position a book key stands for; `None` if the key is not a well-formed board of at most
/// 12 discs.
fn decode_key(g: &Geometry, key: i32) -> Option<Position> {
    let code = key as u32;
    let mut bit = 31i32;
    let mut read = || {
        let b = (code >> bit) & 1;
        bit -= 1;
        (bit >= -1).then_some(b)
    };
    let (mut first, mut mask) = (0u64, 0u64);
    for col in 0..g.width {
        let mut row = 0;
        loop {
            if read()? == 0 {
                break;
            }
            if row >= g.height {
                return None;
            }
            let cell = g.bottom_of(col) << row;
            mask |= cell;
            if read()? == 0 {
                first |= cell;
            }
            row += 1;
        }
    }
    let moves = mask.count_ones();
    if moves > BOOK_PLIES {
        return None;
    }
    let current = if moves.is_multiple_of(2) {
        first
    } else {
        mask ^ first
    };
    Some(Position {
        current,
        mask,
        moves,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(moves: &str) -> Position {
        let g = Geometry::standard();
        let mut pos = Position::default();
        for ch in moves.bytes() {
            pos.play_column(&g, u32::from(ch - b'1'));
        }
        pos
    }

    fn layers() -> [&'static BookLayer; 2] {
        [&STANDARD_BOOK.deep, &STANDARD_BOOK.shallow]
    }

    #[test]
    fn keys_decode_to_the_positions_they_encode() {
        let g = Geometry::standard();
        for moves in ["243335424257", "4455", "", "1", "7777776"] {
            let pos = position(moves);
            assert_eq!(
                decode_key(&g, huffman_key(&g, &pos, false)),
                Some(pos),
                "{moves}"
            );
        }
    }

    #[test]
    fn boards_with_different_disc_counts_have_different_keys() {
        let g = Geometry::standard();
        // A prefix of a longer code, padded with zeros, must not read as the longer board.
        let (short, long) = (position("1"), position("11"));
        assert_ne!(
            huffman_key(&g, &short, false),
            huffman_key(&g, &long, false)
        );
        assert_ne!(
            huffman_key(&g, &position(""), false),
            huffman_key(&g, &short, false)
        );
    }

    #[test]
    fn every_layer_is_sorted_by_key() {
        for layer in layers() {
            assert_eq!(layer.records.len() % RECORD_BYTES, 0);
            assert!((1..layer.len()).all(|i| layer.record(i - 1).0 < layer.record(i).0));
        }
    }

    #[test]
    fn every_stored_key_is_found() {
        for layer in layers() {
            assert!((0..layer.len()).all(|i| {
                let (key, value) = layer.record(i);
                layer.find(key) == Some(value)
            }));
        }
    }

    #[test]
    fn every_stored_key_is_a_board_of_its_layers_disc_count() {
        let book = &STANDARD_BOOK;
        let step = book.len() / 1000;
        assert!((0..book.len()).step_by(step).all(|i| {
            book.entry(i)
                .is_some_and(|(pos, _)| pos.moves == BOOK_PLIES)
        }));
        assert!((0..book.shallow_len()).all(|i| {
            book.shallow_entry(i)
                .is_some_and(|(pos, _)| pos.moves <= SHALLOW_PLIES)
        }));
    }

    #[test]
    fn the_shallow_layer_stores_the_smaller_key_of_a_position_and_its_mirror() {
        let g = Geometry::standard();
        let layer = &STANDARD_BOOK.shallow;
        assert!((0..layer.len()).all(|i| {
            let (key, _) = layer.record(i);
            decode_key(&g, key).is_some_and(|pos| key <= huffman_key(&g, &pos, true))
        }));
    }

    /// `243335424257 12` is a line of Pons' Test_L1_R1: the side to move wins, score 12.
    #[test]
    fn a_position_and_its_mirror_have_the_value_pons_gives() {
        let g = Geometry::standard();
        let (pos, mirror) = (position("243335424257"), position("645553464631"));
        assert_eq!(STANDARD_BOOK.value(&g, &pos), Some(12));
        assert_eq!(STANDARD_BOOK.value(&g, &mirror), Some(12));
    }

    /// The empty board is a first-player win with the last disc (Pons' score 1); after the
    /// first disc in columns 1..7 the second player, to move, scores 2, 1, 0, -1, 0, 1, 2.
    #[test]
    fn the_shallow_layer_knows_the_solved_opening() {
        let g = Geometry::standard();
        assert_eq!(STANDARD_BOOK.value(&g, &position("")), Some(1));
        let after_first: Vec<Option<i32>> = (1..=7)
            .map(|col| STANDARD_BOOK.value(&g, &position(&col.to_string())))
            .collect();
        let expected = [2, 1, 0, -1, 0, 1, 2].map(Some);
        assert_eq!(after_first, expected);
    }

    #[test]
    fn only_covered_disc_counts_of_the_standard_board_are_answered() {
        let g = Geometry::standard();
        assert_eq!(STANDARD_BOOK.value(&g, &position("24333542425")), None);
        assert_eq!(STANDARD_BOOK.value(&g, &position("123456712")), None);
        assert!(STANDARD_BOOK.value(&g, &position("12345671")).is_some());
        assert_eq!(TWELVE_PLY_BOOK.value(&g, &position("12345671")), None);
        let wide = Geometry::new(8, 6).expect("8 x 6 fits");
        assert_eq!(STANDARD_BOOK.value(&wide, &position("243335424257")), None);
        assert_eq!(STANDARD_BOOK.value(&wide, &position("4455")), None);
    }
}
