//! The stones alone, as the board's per-line bit masks, with a cell's pattern levels read on
//! demand: what the VCF solver walks instead of the full [`Board`].
//!
//! A VCF line is all fours and forced blocks, and what it asks of a position is narrow: where
//! the attacker can make a four or a five, where the defender can make a five, and the levels
//! that rank the fours. Placing a stone on the full board refreshes the codes, counts and
//! threat sets of every empty cell within `H` of it, for both sides (about 3 k instructions);
//! here it sets one bit in each of four lines, and the solver reads the few levels it needs
//! through the same [`PatternFn`](super::patterns::PatternFn), so every level it sees is the
//! one the board would hold.

use std::sync::Arc;

use super::board::{Board, Geometry, OFFSET, segments};
use super::patterns::FIVE;

/// Set bits of every mask of up to [`SMALL_SEGMENT`] bits, by mask.
static SMALL_COUNTS: [u8; 1 << SMALL_SEGMENT] = {
    let mut table = [0; 1 << SMALL_SEGMENT];
    let mut mask = 0;
    while mask < table.len() {
        table[mask] = mask.count_ones() as u8;
        mask += 1;
    }
    table
};

/// The widest segment (`2H + 1` cells) of a tabulated rule set ([`super::patterns`]).
const SMALL_SEGMENT: u32 = 11;

/// The stones in a segment mask: `count_ones` is a dozen instructions on the baseline x86-64
/// target (no `popcnt`), so a tabulated rule set's segments are counted by a table.
#[inline]
fn stones_in(segment: u64) -> u32 {
    match SMALL_COUNTS.get(segment as usize) {
        Some(&count) => u32::from(count),
        None => segment.count_ones(),
    }
}

/// A copy of a board's line masks that stones are put on and taken off in place.
pub struct LineStones {
    geo: Arc<Geometry>,
    lines: Vec<[u128; 2]>,
    pub stones: u32,
}

impl LineStones {
    pub fn new(board: &Board) -> Self {
        LineStones {
            geo: Arc::clone(&board.geo),
            lines: board.lines().to_vec(),
            stones: board.stones,
        }
    }

    /// Takes `board`'s stones (its line masks: a copy of a few KiB, no allocation when the
    /// geometry is the same).
    pub fn load(&mut self, board: &Board) {
        if !Arc::ptr_eq(&self.geo, &board.geo) {
            self.geo = Arc::clone(&board.geo);
        }
        self.lines.clear();
        self.lines.extend_from_slice(board.lines());
        self.stones = board.stones;
    }

    pub fn geo(&self) -> &Geometry {
        &self.geo
    }

    #[inline]
    pub fn put(&mut self, cell: usize, side: usize) {
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            self.lines[line as usize][side] |= 1u128 << (pos as u32 + OFFSET);
        }
        self.stones += 1;
    }

    #[inline]
    pub fn take(&mut self, cell: usize, side: usize) {
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            self.lines[line as usize][side] &= !(1u128 << (pos as u32 + OFFSET));
        }
        self.stones -= 1;
    }

    /// The level a stone of `side` on empty `cell` makes in direction `dir`.
    #[inline]
    pub fn level(&self, cell: usize, dir: usize, side: usize) -> u8 {
        let [x, o, off] = segments(&self.geo, &self.lines, cell, dir);
        let (own, other) = if side == 0 { (x, o) } else { (o, x) };
        self.geo.patterns.level(own, other | off)
    }

    /// The four levels of empty `cell` for `side`, by direction.
    #[inline]
    pub fn levels(&self, cell: usize, side: usize) -> [u8; 4] {
        [0, 1, 2, 3].map(|d| self.level(cell, d, side))
    }

    /// Calls `f(other, dir)` for each empty cell within `H` of `cell` on its four lines whose
    /// segment in that direction holds at least `min_own` stones of `side`: a cheap necessary
    /// condition (a five needs `k - 1` there, a four `k - 2`) checked before `f` reads the
    /// level itself.
    #[inline]
    pub fn for_each_near(
        &self,
        cell: usize,
        side: usize,
        min_own: u32,
        mut f: impl FnMut(usize, usize),
    ) {
        let h = self.geo.patterns.h;
        let window = (1u64 << (2 * h + 1)) - 1;
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            let line = line as usize;
            let cells = &self.geo.line_cells[line];
            let [x, o] = self.lines[line];
            let own = if side == 0 { x } else { o };
            let lo = u32::from(pos).saturating_sub(h);
            let hi = (u32::from(pos) + h).min(cells.len() as u32 - 1);
            // The empty cells of lo..=hi but `cell` itself, as bits from lo: the segments are
            // read only where a stone could go.
            let span = (1u64 << (hi - lo + 1)) - 1;
            let mut empty =
                !((x | o) >> (lo + OFFSET)) as u64 & span & !(1 << (u32::from(pos) - lo));
            while empty != 0 {
                let p = lo + empty.trailing_zeros();
                empty &= empty - 1;
                // The centre is empty, so the window's own bits are its neighbours'.
                if stones_in(((own >> (p + OFFSET - h)) as u64) & window) >= min_own {
                    f(usize::from(cells[p as usize]), d);
                }
            }
        }
    }

    /// Whether `a` and `b` lie on one line within `H` of each other.
    #[inline]
    pub fn related(&self, a: usize, b: usize) -> bool {
        let h = self.geo.patterns.h as i32;
        (0..4).any(|d| {
            let (la, pa) = self.geo.line_of[a][d];
            let (lb, pb) = self.geo.line_of[b][d];
            la == lb && (pa as i32 - pb as i32).abs() <= h
        })
    }

    /// The empty cells on `stone`'s four lines where a stone of `side` makes five: how many,
    /// with the two smallest in `out` (in cell order, as the board's threat sets list them).
    /// Every five cell a stone creates lies on one of its lines, so where `side` had none before
    /// the stone these are all of them.
    #[inline]
    pub fn fives_through(&self, stone: usize, side: usize, out: &mut [usize; 2]) -> usize {
        let k = self.geo.rules.win_length;
        let mut n = 0;
        self.for_each_near(stone, side, k - 1, |cell, dir| {
            if self.level(cell, dir, side) == FIVE {
                if n == 0 {
                    out[0] = cell;
                } else if cell < out[0] {
                    out[1] = out[0];
                    out[0] = cell;
                } else if n == 1 || cell < out[1] {
                    out[1] = cell;
                }
                n += 1;
            }
        });
        n
    }
}
