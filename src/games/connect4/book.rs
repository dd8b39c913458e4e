//! The opening book: the exact value of every 12-disc position of the standard 7 x 6 board,
//! read from BitBully's published database (`book/book_12ply_distances.dat`, MIT, see
//! `book/LICENSE`), so that the openings no search budget can solve are answered exactly.
//!
//! The file is a sorted array of 5-byte records: a 32-bit big-endian signed key, then a signed
//! byte value. The key is a Huffman code of the board read column by column from the left, each
//! column from the bottom: `10` for a first-player disc, `11` for a second-player disc, `0` to
//! close the column (a full column is closed too), and one `0` at the end; 12 discs make exactly
//! 24 + 7 + 1 = 32 bits. Only one of a position and its mirror image is stored, and positions
//! where the first player (always to move after 12 plies) wins at once are left out. The value
//! is from the first player's side: `0` a draw, `100 - p` a win and `-(100 - p)` a loss `p`
//! plies from now with best play.
//!
//! The array is searched in place (binary search over the bytes embedded in the binary): no
//! parsing at start-up and no copy in memory. (An index of 65 536 slices by the keys' top bits
//! measured no faster on the empty board: about 200 ms either way.) The solver asks the book at every 12-disc node it
//! reaches, so a search from fewer discs ends at the book's horizon instead of the game's.

use super::position::{Geometry, Position};
use super::solver::score_from_distance;

/// Discs on the board of every position in the book.
pub const BOOK_PLIES: u32 = 12;

const RECORD_BYTES: usize = 5;

/// BitBully's 12-ply book with distances (bitbully-databases 0.0.2), unchanged.
static BOOK_12_PLY: &[u8] = include_bytes!("book/book_12ply_distances.dat");

/// A sorted book of exact values; see the module note for the format.
#[derive(Debug)]
pub struct OpeningBook {
    records: &'static [u8],
}

/// The book shipped with kibitz.
pub static STANDARD_BOOK: OpeningBook = OpeningBook {
    records: BOOK_12_PLY,
};

impl OpeningBook {
    /// Number of positions stored.
    pub fn len(&self) -> usize {
        self.records.len() / RECORD_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// The exact value of `pos` in the solver's units (Pons' score for the side to move), if
    /// the book holds it: standard board, [`BOOK_PLIES`] discs, no immediate win.
    pub fn value(&self, g: &Geometry, pos: &Position) -> Option<i32> {
        if pos.moves != BOOK_PLIES || g.width != 7 || g.height != 6 {
            return None;
        }
        let raw = self
            .find(huffman_key(g, pos, false))
            .or_else(|| self.find(huffman_key(g, pos, true)))?;
        Some(solver_score(raw, g))
    }

    /// The `index`-th stored position and its value in the solver's units (for checking the
    /// book against the solver).
    pub fn entry(&self, index: usize) -> Option<(Position, i32)> {
        if index >= self.len() {
            return None;
        }
        let g = Geometry::standard();
        let (key, raw) = self.record(index);
        Some((decode_key(&g, key)?, solver_score(raw, &g)))
    }
}

/// A book value (first player's side, `±(100 - plies)`) in the solver's units.
fn solver_score(raw: i8, g: &Geometry) -> i32 {
    if raw == 0 {
        return 0;
    }
    let plies = 100 - (raw as i32).abs();
    score_from_distance(raw > 0, plies as u32, BOOK_PLIES, g.cells())
}

/// The book key of `pos` (a 12-disc position of the standard board), or of its mirror image.
fn huffman_key(g: &Geometry, pos: &Position, mirrored: bool) -> i32 {
    // After an even number of plies the side to move is the first player.
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
    (code << 1) as u32 as i32
}

/// The position a book key stands for; `None` if the key is not a well-formed 12-disc board.
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
    (mask.count_ones() == BOOK_PLIES).then_some(Position {
        current: first,
        mask,
        moves: BOOK_PLIES,
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

    #[test]
    fn keys_decode_to_the_positions_they_encode() {
        let g = Geometry::standard();
        let pos = position("243335424257");
        assert_eq!(decode_key(&g, huffman_key(&g, &pos, false)), Some(pos));
    }

    #[test]
    fn the_book_is_sorted_by_key() {
        let book = &STANDARD_BOOK;
        assert_eq!(book.records.len() % RECORD_BYTES, 0);
        assert!((1..book.len()).all(|i| book.record(i - 1).0 < book.record(i).0));
    }

    #[test]
    fn every_stored_key_is_found() {
        let book = &STANDARD_BOOK;
        assert!((0..book.len()).all(|i| {
            let (key, value) = book.record(i);
            book.find(key) == Some(value)
        }));
    }

    #[test]
    fn every_stored_key_is_a_twelve_disc_board() {
        let book = &STANDARD_BOOK;
        let step = book.len() / 1000;
        assert!(
            (0..book.len())
                .step_by(step)
                .all(|i| book.entry(i).is_some())
        );
    }

    /// `243335424257 12` is a line of Pons' Test_L1_R1: the side to move wins, score 12.
    #[test]
    fn a_position_and_its_mirror_have_the_value_pons_gives() {
        let g = Geometry::standard();
        let (pos, mirror) = (position("243335424257"), position("645553464631"));
        assert_eq!(STANDARD_BOOK.value(&g, &pos), Some(12));
        assert_eq!(STANDARD_BOOK.value(&g, &mirror), Some(12));
    }

    #[test]
    fn only_twelve_disc_positions_of_the_standard_board_are_answered() {
        let g = Geometry::standard();
        assert_eq!(STANDARD_BOOK.value(&g, &position("24333542425")), None);
        let wide = Geometry::new(8, 6).expect("8 x 6 fits");
        assert_eq!(STANDARD_BOOK.value(&wide, &position("243335424257")), None);
    }
}
