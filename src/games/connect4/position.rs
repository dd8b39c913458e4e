//! Connect-4 positions as two bitboards (after Pascal Pons' `Position`).
//!
//! Cells are numbered column by column from the bottom: cell `(row, col)` (row 0 = bottom) is
//! bit `col * (height + 1) + row`. Each column carries one spare bit above its top cell, which is
//! always empty. That spare bit is what makes the tricks below work:
//!
//! - `current` holds the stones of the side to move, `mask` every stone. Playing a move is
//!   `current ^= mask; mask |= move_bit`: the old `current ^ mask` is the opponent's stones, who
//!   becomes the side to move.
//! - `mask + bottom` adds one to every column's stack, so the carry lands exactly on the lowest
//!   empty cell of each column: the playable cells, in one addition.
//! - `current + mask` is a unique key: per column, the sum sets the bit just above the stack and
//!   keeps `current`'s pattern below it, so both boards can be read back from it.
//! - Shifting by 1, `height`, `height + 1` and `height + 2` moves a stone one step vertically,
//!   along the two diagonals and horizontally; a line crossing a column edge runs through a spare
//!   bit, which is never a stone, so no alignment ever wraps around.
//!
//! Legal sizes: width and height at least 4 and `width * (height + 1) <= 64`, so at most 12
//! columns and 15 rows. The largest shift used is `3 * (height + 2) <= 51`, below 64.

/// Board shape and the masks derived from it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub width: u32,
    pub height: u32,
    /// The bottom cell of every column.
    pub bottom: u64,
    /// Every cell of the board (no spare bits).
    pub board: u64,
    /// Cells in odd rows counted from 1 at the bottom (rows 0, 2, 4 ... 0-based): where the
    /// first player's threats are worth most (Allis' zugzwang rule).
    pub odd_rows: u64,
}

/// Smallest board side accepted.
pub const MIN_SIDE: u32 = 4;
/// Most columns a board can have (`12 * (4 + 1) <= 64`).
pub const MAX_WIDTH: usize = 12;

impl Geometry {
    /// The standard 7 x 6 board, as a constant: code that reads it through [`Shape`] gets
    /// every shift and mask as an immediate.
    pub const STANDARD: Geometry = Geometry::build(7, 6);

    /// The geometry of a `width` x `height` board, if that board fits in 64 bits.
    pub fn new(width: u32, height: u32) -> Option<Geometry> {
        if width < MIN_SIDE || height < MIN_SIDE || width * (height + 1) > 64 {
            return None;
        }
        Some(Geometry::build(width, height))
    }

    /// The masks of a board already known to fit (`const`, hence the `while` loops).
    const fn build(width: u32, height: u32) -> Geometry {
        let column_cells = (1u64 << height) - 1;
        let mut odd_in_column = 0u64;
        let mut row = 0;
        while row < height {
            odd_in_column |= 1 << row;
            row += 2;
        }
        let mut bottom = 0;
        let mut board = 0;
        let mut odd_rows = 0;
        let mut col = 0;
        while col < width {
            let shift = col * (height + 1);
            bottom |= 1 << shift;
            board |= column_cells << shift;
            odd_rows |= odd_in_column << shift;
            col += 1;
        }
        Geometry {
            width,
            height,
            bottom,
            board,
            odd_rows,
        }
    }

    /// The standard 7 x 6 board.
    pub fn standard() -> Geometry {
        Geometry::STANDARD
    }

    pub fn cells(&self) -> u32 {
        self.width * self.height
    }

    #[inline]
    pub const fn column_mask(&self, col: u32) -> u64 {
        ((1u64 << self.height) - 1) << (col * (self.height + 1))
    }

    #[inline]
    pub fn bottom_of(&self, col: u32) -> u64 {
        1u64 << (col * (self.height + 1))
    }

    #[inline]
    pub fn top_of(&self, col: u32) -> u64 {
        1u64 << (self.height - 1 + col * (self.height + 1))
    }

    /// The column a single-bit cell belongs to.
    #[inline]
    pub fn column_of(&self, bit: u64) -> u32 {
        bit.trailing_zeros() / (self.height + 1)
    }

    /// Columns from the centre outwards, alternating left then right (Pons' order): the usual
    /// best-first order, since central discs take part in the most lines.
    pub const fn centre_first_order(&self) -> [u32; MAX_WIDTH] {
        let mut order = [0; MAX_WIDTH];
        let w = self.width as i32;
        let mut i = 0;
        while i < w {
            // For w = 7: 3, 2, 4, 1, 5, 0, 6; for w = 8: 4, 3, 5, 2, 6, 1, 7, 0.
            order[i as usize] = (w / 2 + (1 - 2 * (i % 2)) * ((i + 1) / 2)) as u32;
            i += 1;
        }
        order
    }

    /// Empty cells that would complete four in a row for `stones` (whatever is below them).
    ///
    /// For each direction (shift `s`), a cell wins if three consecutive neighbours on one side,
    /// or two on one side and one on the other, are stones: `p = (x << s) & (x << 2s)` marks
    /// cells with two stones just "below" them in that direction, and so on.
    #[inline]
    pub fn winning_cells(&self, stones: u64, mask: u64) -> u64 {
        let h = self.height;
        // Vertical: only three stones below can complete a column.
        let mut r = (stones << 1) & (stones << 2) & (stones << 3);
        for shift in [h + 1, h, h + 2] {
            let p = (stones << shift) & (stones << (2 * shift));
            r |= p & (stones << (3 * shift));
            r |= p & (stones >> shift);
            let p = (stones >> shift) & (stones >> (2 * shift));
            r |= p & (stones << shift);
            r |= p & (stones >> (3 * shift));
        }
        r & (self.board ^ mask)
    }

    /// [`Geometry::winning_cells`] with the four directions in the four 64-bit lanes of one
    /// AVX2 register: each lane shifts by its own amount (`vpsllvq`/`vpsrlvq`), so the whole
    /// pattern costs about 20 instructions instead of about 70 (every scalar shift by a constant
    /// also needs a register copy). The vertical lane only counts three stones below the cell,
    /// as the scalar code does: its right shifts are by 64, which AVX2 defines as 0. Bit for
    /// bit the same result as [`Geometry::winning_cells`] (see the test).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 (`is_x86_feature_detected!("avx2")`); code compiled with AVX2
    /// enabled calls it safely.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn winning_cells_avx2(&self, stones: u64, mask: u64) -> u64 {
        use std::arch::x86_64::{
            _mm_cvtsi128_si64, _mm_or_si128, _mm_unpackhi_epi64, _mm256_and_si256,
            _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_or_si256, _mm256_set1_epi64x,
            _mm256_setr_epi64x, _mm256_sllv_epi64, _mm256_srlv_epi64,
        };
        // Lanes: vertical (shift 1), horizontal (h + 1), the two diagonals (h, h + 2).
        let h = self.height as i64;
        let (x, d1, d2) = (h + 1, h, h + 2);
        let s = _mm256_set1_epi64x(stones as i64);
        let l1 = _mm256_sllv_epi64(s, _mm256_setr_epi64x(1, x, d1, d2));
        let l2 = _mm256_sllv_epi64(s, _mm256_setr_epi64x(2, 2 * x, 2 * d1, 2 * d2));
        let l3 = _mm256_sllv_epi64(s, _mm256_setr_epi64x(3, 3 * x, 3 * d1, 3 * d2));
        let r1 = _mm256_srlv_epi64(s, _mm256_setr_epi64x(64, x, d1, d2));
        let r2 = _mm256_srlv_epi64(s, _mm256_setr_epi64x(64, 2 * x, 2 * d1, 2 * d2));
        let r3 = _mm256_srlv_epi64(s, _mm256_setr_epi64x(64, 3 * x, 3 * d1, 3 * d2));
        let below = _mm256_and_si256(l1, l2);
        let above = _mm256_and_si256(r1, r2);
        let r = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(below, l3), _mm256_and_si256(below, r1)),
            _mm256_or_si256(_mm256_and_si256(above, l1), _mm256_and_si256(above, r3)),
        );
        let folded = _mm_or_si128(_mm256_castsi256_si128(r), _mm256_extracti128_si256::<1>(r));
        let folded = _mm_or_si128(folded, _mm_unpackhi_epi64(folded, folded));
        (_mm_cvtsi128_si64(folded) as u64) & (self.board ^ mask)
    }

    /// Whether `stones` hold four in a row somewhere.
    #[inline]
    pub fn has_four(&self, stones: u64) -> bool {
        let h = self.height;
        [1, h, h + 1, h + 2].into_iter().any(|shift| {
            let pairs = stones & (stones >> shift);
            pairs & (pairs >> (2 * shift)) != 0
        })
    }
}

/// Where the solver's node loop reads the board shape from: [`Standard`], the 7 x 6 board known
/// at compile time, or a [`Geometry`] known at run time. The loop is compiled once for each, so
/// the standard board (nearly every request) runs with constant shifts and masks, and other
/// shapes keep working unchanged.
pub trait Shape: Copy {
    fn geometry(self) -> Geometry;

    /// The centre-first column order of this shape: the constant one of the standard board,
    /// else `runtime`, the solver's copy computed once.
    fn order(self, runtime: &ColumnOrder) -> ColumnOrder;
}

/// The columns from the centre outwards and their cells, slot by slot: the solver walks the
/// moves in this order, and on the standard board every mask is a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnOrder {
    /// The column of each slot ([`Geometry::centre_first_order`]).
    pub columns: [u32; MAX_WIDTH],
    /// The cells of each slot's column ([`Geometry::column_mask`]).
    pub masks: [u64; MAX_WIDTH],
    /// The slot of each cell's column, by bit index (spare bits: 0, never asked): the
    /// solver walks only the playable cells of a node, not every column.
    pub slot_of_bit: [u8; 64],
}

impl ColumnOrder {
    /// The standard 7 x 6 board's order.
    pub const STANDARD: ColumnOrder = ColumnOrder::of(&Geometry::STANDARD);

    pub const fn of(g: &Geometry) -> ColumnOrder {
        let columns = g.centre_first_order();
        let mut masks = [0; MAX_WIDTH];
        let mut slot_of_bit = [0; 64];
        let mut slot = 0;
        while slot < g.width as usize {
            masks[slot] = g.column_mask(columns[slot]);
            let mut row = 0;
            while row < g.height {
                slot_of_bit[(columns[slot] * (g.height + 1) + row) as usize] = slot as u8;
                row += 1;
            }
            slot += 1;
        }
        ColumnOrder {
            columns,
            masks,
            slot_of_bit,
        }
    }
}

/// The standard 7 x 6 board as a compile-time [`Shape`].
#[derive(Clone, Copy, Debug)]
pub struct Standard;

impl Shape for Standard {
    #[inline(always)]
    fn geometry(self) -> Geometry {
        Geometry::STANDARD
    }

    #[inline(always)]
    fn order(self, _runtime: &ColumnOrder) -> ColumnOrder {
        ColumnOrder::STANDARD
    }
}

impl Shape for Geometry {
    #[inline(always)]
    fn geometry(self) -> Geometry {
        self
    }

    #[inline(always)]
    fn order(self, runtime: &ColumnOrder) -> ColumnOrder {
        *runtime
    }
}

/// A position: the side to move's stones, all stones, and the plies played.
///
/// 20 bytes and `Copy`: the solver walks the tree by copy-make.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    /// Stones of the side to move.
    pub current: u64,
    /// Every stone on the board.
    pub mask: u64,
    /// Plies played so far: also `mask.count_ones()`.
    pub moves: u32,
}

impl Position {
    /// The unique key of the position (see the module note).
    #[inline]
    pub fn key(&self) -> u64 {
        self.current + self.mask
    }

    /// The stones of the side that just moved.
    #[inline]
    pub fn opponent(&self) -> u64 {
        self.current ^ self.mask
    }

    #[inline]
    pub fn can_play(&self, g: &Geometry, col: u32) -> bool {
        self.mask & g.top_of(col) == 0
    }

    /// The cell a disc dropped into `col` lands on.
    #[inline]
    pub fn landing_cell(&self, g: &Geometry, col: u32) -> u64 {
        (self.mask + g.bottom_of(col)) & g.column_mask(col)
    }

    /// Plays the single-bit cell `cell`, which must be playable.
    #[inline]
    pub fn play(&mut self, cell: u64) {
        self.current ^= self.mask;
        self.mask |= cell;
        self.moves += 1;
    }

    /// Undoes [`Position::play`] of `cell`.
    #[inline]
    pub fn undo(&mut self, cell: u64) {
        self.mask ^= cell;
        self.current ^= self.mask;
        self.moves -= 1;
    }

    #[inline]
    pub fn play_column(&mut self, g: &Geometry, col: u32) {
        self.play(self.landing_cell(g, col));
    }

    /// The top disc of `col`, which must not be empty.
    #[inline]
    pub fn top_disc(&self, g: &Geometry, col: u32) -> u64 {
        let stack = self.mask & g.column_mask(col);
        1u64 << (63 - stack.leading_zeros())
    }

    /// Every playable cell (one per column that is not full).
    #[inline]
    pub fn playable(&self, g: &Geometry) -> u64 {
        (self.mask + g.bottom) & g.board
    }

    /// Empty cells where the side to move would complete four.
    #[inline]
    pub fn own_winning_cells(&self, g: &Geometry) -> u64 {
        g.winning_cells(self.current, self.mask)
    }

    /// Empty cells where the side that just moved would complete four.
    #[inline]
    pub fn opponent_winning_cells(&self, g: &Geometry) -> u64 {
        g.winning_cells(self.opponent(), self.mask)
    }

    /// Playable cells that win at once for the side to move.
    #[inline]
    pub fn winning_moves(&self, g: &Geometry) -> u64 {
        self.own_winning_cells(g) & self.playable(g)
    }

    /// Moves that do not hand the opponent a win on the next ply, assuming the side to move
    /// cannot win at once: the single block if the opponent threatens once, nothing if twice,
    /// and never the cell right below an opponent's winning cell. Empty means every move loses
    /// on the next ply.
    #[inline]
    pub fn non_losing_moves(&self, g: &Geometry) -> u64 {
        self.non_losing_moves_against(g, self.opponent_winning_cells(g))
    }

    /// [`Position::non_losing_moves`] when the opponent's winning cells are known already
    /// (`opponent_wins`, equal to [`Position::opponent_winning_cells`]).
    #[inline]
    pub fn non_losing_moves_against(&self, g: &Geometry, opponent_wins: u64) -> u64 {
        let mut playable = self.playable(g);
        let forced = playable & opponent_wins;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return 0;
            }
            playable = forced;
        }
        playable & !(opponent_wins >> 1)
    }

    /// Threats the side to move would hold after playing `cell`: the move-ordering score.
    #[inline]
    pub fn threats_after(&self, g: &Geometry, cell: u64) -> u32 {
        g.winning_cells(self.current | cell, self.mask).count_ones()
    }

    /// The key of the left-right mirror image: equal positions up to symmetry have equal value.
    #[inline]
    pub fn mirrored_key(&self, g: &Geometry) -> u64 {
        let key = self.key();
        let column_bits = g.height + 1;
        let column = (1u64 << column_bits) - 1;
        let mut mirrored = 0;
        for col in 0..g.width {
            let bits = (key >> (col * column_bits)) & column;
            mirrored |= bits << ((g.width - 1 - col) * column_bits);
        }
        mirrored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_first_order_for_seven_and_eight_columns() {
        let g = Geometry::standard();
        assert_eq!(g.centre_first_order()[..7], [3, 2, 4, 1, 5, 0, 6]);
        let g8 = Geometry::new(8, 7).unwrap();
        assert_eq!(g8.centre_first_order()[..8], [4, 3, 5, 2, 6, 1, 7, 0]);
    }

    #[test]
    fn every_cell_maps_to_the_slot_of_its_column() {
        for g in [Geometry::STANDARD, Geometry::new(8, 7).unwrap()] {
            let order = ColumnOrder::of(&g);
            for slot in 0..g.width as usize {
                let mut cells = order.masks[slot];
                while cells != 0 {
                    let bit = cells.trailing_zeros();
                    cells &= cells - 1;
                    assert_eq!(order.slot_of_bit[bit as usize] as usize, slot);
                }
            }
        }
    }

    #[test]
    fn the_standard_constant_is_the_seven_by_six_geometry() {
        assert_eq!(Some(Geometry::STANDARD), Geometry::new(7, 6));
        assert_eq!(Geometry::STANDARD.board.count_ones(), 42);
        assert_eq!(Geometry::STANDARD.odd_rows.count_ones(), 21);
    }

    #[test]
    fn sizes_beyond_64_bits_are_refused() {
        assert!(Geometry::new(8, 7).is_some());
        assert!(Geometry::new(9, 7).is_none());
        assert!(Geometry::new(12, 4).is_some());
        assert!(Geometry::new(3, 6).is_none());
    }

    #[test]
    fn play_then_undo_restores_both_boards() {
        let g = Geometry::standard();
        let mut p = Position::default();
        for col in [3, 3, 2, 4] {
            p.play_column(&g, col);
        }
        let before = p;
        let cell = p.landing_cell(&g, 4);
        p.play(cell);
        assert_eq!(p.top_disc(&g, 4), cell);
        p.undo(cell);
        assert_eq!(p, before);
    }

    #[test]
    fn the_key_tells_apart_positions_with_the_same_stones_in_other_hands() {
        let g = Geometry::standard();
        let mut a = Position::default();
        let mut b = Position::default();
        for col in [0, 1] {
            a.play_column(&g, col);
        }
        for col in [1, 0] {
            b.play_column(&g, col);
        }
        assert_eq!(a.mask, b.mask);
        assert_ne!(a.key(), b.key());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_winning_cells_equal_the_scalar_ones() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Random legal games on every board shape the solver takes a vector of, checked after
        // each ply for both sides and for each playable cell added (what the solver asks).
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (width, height) in [(7, 6), (4, 4), (8, 7), (12, 4), (4, 12), (6, 9)] {
            let g = Geometry::new(width, height).unwrap();
            for _ in 0..40 {
                let mut p = Position::default();
                while p.moves < g.cells() {
                    for stones in [p.current, p.opponent()] {
                        let mut cells = p.playable(&g);
                        while cells != 0 {
                            let cell = cells & cells.wrapping_neg();
                            cells ^= cell;
                            let (s, m) = (stones | cell, p.mask | cell);
                            // SAFETY: the CPU reported AVX2 above.
                            let fast = unsafe { g.winning_cells_avx2(s, m) };
                            assert_eq!(fast, g.winning_cells(s, m), "{width}x{height} {p:?}");
                        }
                    }
                    let playable = p.playable(&g);
                    let col = loop {
                        let col = (next() % width as u64) as u32;
                        if playable & g.column_mask(col) != 0 {
                            break col;
                        }
                    };
                    p.play_column(&g, col);
                }
            }
        }
    }

    #[test]
    fn mirrored_key_is_the_key_of_the_mirrored_game() {
        let g = Geometry::standard();
        let mut a = Position::default();
        let mut b = Position::default();
        for col in [0, 1, 1, 5, 6] {
            a.play_column(&g, col);
            b.play_column(&g, 6 - col);
        }
        assert_eq!(a.mirrored_key(&g), b.key());
    }
}
