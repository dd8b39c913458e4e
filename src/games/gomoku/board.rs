//! The gomoku board: stones, per-line bit masks, incremental patterns, neighbourhood counts and
//! the Zobrist hash, all updated in place by `place`/`remove`.
//!
//! Every line of the board (rows, columns, both diagonals) is a `u128` bit mask per side, cell
//! `i` of the line at bit `i + OFFSET`, so the segment of `2H + 1` cells around any cell is one
//! shift and mask away, with off-board cells reading as blocked. Each empty cell keeps one code
//! per side: its four line patterns, three bits each, so that its shape, level pair, threat
//! classes and best level are one table lookup. Placing a stone refreshes the codes of the empty
//! cells within `H` of it along its four lines and nothing else, keeping per-side counts of each
//! pattern level, of each cell shape and of each level pair (the evaluation's features) and the
//! threat cell sets in step; removing it puts back the codes it changed, from a log, and the
//! counts and sets whole, from a copy taken when it was placed. Nothing here allocates once the
//! log and the frames have grown to the search's depth.

use std::sync::Arc;

use super::cell_set::CellSet;
use super::patterns::{
    FIVE, FOUR, LEVELS, OPEN_FOUR, OPEN_THREE, OPEN_TWO, PatternFn, THREE, tabulated_levels,
};
use super::{GomokuRules, Overline};
use crate::engine::Side;

/// Bit of a line's cell 0: leaves room for the `H <= 25` cells before it.
pub(super) const OFFSET: u32 = 32;

/// Row and column steps of the four directions: horizontal, vertical, diagonal, anti-diagonal.
pub const DIRECTIONS: [(i32, i32); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// Shape classes of a cell for one side: what one stone there would make across its four lines
/// together (a "pattern4"). Index into `combo_count`. The first three are double threats.
pub const DOUBLE_THREE: usize = 1;
pub const FOUR_THREE: usize = 2;
/// An open four or two fours at once: a win unless the opponent has fives of its own.
pub const DOUBLE_FOUR: usize = 3;
/// A four plus a developing shape (a three or an open two) on another line.
pub const FOUR_PLUS: usize = 4;
/// An open three plus a developing shape on another line.
pub const THREE_PLUS: usize = 5;
/// A closed three plus an open two on another line.
pub const THREE_TWO: usize = 6;
/// Two open twos at once.
pub const DOUBLE_TWO: usize = 7;
/// Number of shape classes (0 = nothing special).
pub const COMBO_CLASSES: usize = 8;
/// Number of level pairs: a cell's best and second-best levels (a >= b) for one side, at index
/// `a * (a + 1) / 2 + b` ([`pair_index`]); 0 is a cell that makes nothing in any direction.
pub const PAIR_CLASSES: usize = LEVELS * (LEVELS + 1) / 2;

/// The index of the level pair `(best, second)` with `best >= second`.
pub const fn pair_index(best: u8, second: u8) -> usize {
    best as usize * (best as usize + 1) / 2 + second as usize
}

/// The level pair class of four levels packed three bits each (one side, one cell).
const fn pair_of(key: usize) -> u8 {
    let (mut best, mut second) = (0u8, 0u8);
    let mut d = 0;
    while d < 4 {
        let level = ((key >> (3 * d)) & 7) as u8;
        if level > best {
            second = best;
            best = level;
        } else if level > second {
            second = level;
        }
        d += 1;
    }
    pair_index(best, second) as u8
}

/// The shape class of four levels packed three bits each (one side, one cell).
pub(super) const fn shape_of(key: usize) -> u8 {
    let (mut fours, mut open_threes, mut threes, mut open_twos) = (0, 0, 0, 0);
    let mut open_four = false;
    let mut d = 0;
    while d < 4 {
        let level = ((key >> (3 * d)) & 7) as u8;
        fours += (level >= FOUR) as u32;
        open_threes += (level == OPEN_THREE) as u32;
        threes += (level == THREE) as u32;
        open_twos += (level == OPEN_TWO) as u32;
        open_four |= level >= OPEN_FOUR;
        d += 1;
    }
    let developing = threes + open_twos;
    let class = if open_four || fours >= 2 {
        DOUBLE_FOUR
    } else if fours == 1 && open_threes >= 1 {
        FOUR_THREE
    } else if open_threes >= 2 {
        DOUBLE_THREE
    } else if fours == 1 && developing >= 1 {
        FOUR_PLUS
    } else if open_threes == 1 && developing >= 1 {
        THREE_PLUS
    } else if threes >= 1 && open_twos >= 1 {
        THREE_TWO
    } else if open_twos >= 2 {
        DOUBLE_TWO
    } else {
        0
    };
    class as u8
}

/// What one side's cell code says across the cell's four lines, looked up on every code change.
#[derive(Clone, Copy, Debug, Default)]
struct CodeClasses {
    shape: u8,
    pair: u8,
    /// Bits of the [`THREAT_LEVELS`] the code reaches.
    threat: u8,
    /// The best of the four levels.
    best: u8,
}

/// The classes of every cell code (four levels, three bits each).
static CLASSES: [CodeClasses; 1 << 12] = {
    let mut table = [CodeClasses {
        shape: 0,
        pair: 0,
        threat: 0,
        best: 0,
    }; 1 << 12];
    let mut key = 0;
    while key < table.len() {
        table[key] = CodeClasses {
            shape: shape_of(key),
            pair: pair_of(key),
            threat: threat_of(key),
            best: best_of(key),
        };
        key += 1;
    }
    table
};

/// The classes of a cell code. Codes have twelve bits: the mask only spares the index check.
#[inline(always)]
fn classes(code: u16) -> CodeClasses {
    CLASSES[usize::from(code) & 0xfff]
}

/// The best of four levels packed three bits each.
const fn best_of(key: usize) -> u8 {
    let mut best = 0u8;
    let mut d = 0;
    while d < 4 {
        let level = ((key >> (3 * d)) & 7) as u8;
        if level > best {
            best = level;
        }
        d += 1;
    }
    best
}

/// The threat levels whose cells the board keeps in a [`CellSet`] per side, weakest first:
/// a stone there makes at least this level in some direction.
pub const THREAT_LEVELS: [u8; 3] = [OPEN_THREE, FOUR, FIVE];

/// Which of [`THREAT_LEVELS`] four levels packed three bits each reach, one bit each.
const fn threat_of(key: usize) -> u8 {
    let best = best_of(key);
    let mut bits = 0u8;
    let mut t = 0;
    while t < THREAT_LEVELS.len() {
        if best >= THREAT_LEVELS[t] {
            bits |= 1 << t;
        }
        t += 1;
    }
    bits
}

/// What never changes during a game: sizes, the rules and which line each cell lies on.
#[derive(Debug)]
pub struct Geometry {
    pub rows: usize,
    pub cols: usize,
    pub rules: GomokuRules,
    pub patterns: PatternFn,
    /// For each cell and direction: (line index, position of the cell on that line).
    pub line_of: Vec<[(u16, u8); 4]>,
    /// For each line: its cells in order.
    pub line_cells: Vec<Vec<u16>>,
    /// For each line: the on-board mask.
    pub on_board: Vec<u128>,
    /// Mixed into the hash so that boards of other sizes or rules never share table entries.
    pub salt: u64,
}

impl Geometry {
    pub fn new(rows: usize, cols: usize, rules: GomokuRules) -> Self {
        let mut line_of = vec![[(0u16, 0u8); 4]; rows * cols];
        let mut line_cells: Vec<Vec<u16>> = Vec::new();
        for (d, &(dr, dc)) in DIRECTIONS.iter().enumerate() {
            for r in 0..rows as i32 {
                for c in 0..cols as i32 {
                    // A line starts at a cell whose predecessor is off the board.
                    let (pr, pc) = (r - dr, c - dc);
                    if pr >= 0 && pc >= 0 && pr < rows as i32 && pc < cols as i32 {
                        continue;
                    }
                    let id = line_cells.len() as u16;
                    let mut cells = Vec::new();
                    let (mut rr, mut cc) = (r, c);
                    while rr >= 0 && cc >= 0 && rr < rows as i32 && cc < cols as i32 {
                        let cell = rr as usize * cols + cc as usize;
                        line_of[cell][d] = (id, cells.len() as u8);
                        cells.push(cell as u16);
                        rr += dr;
                        cc += dc;
                    }
                    line_cells.push(cells);
                }
            }
        }
        let on_board = line_cells
            .iter()
            .map(|cells| ((1u128 << cells.len()) - 1) << OFFSET)
            .collect();
        let salt = splitmix(
            (rows as u64) << 48
                | (cols as u64) << 32
                | u64::from(rules.win_length) << 8
                | u64::from(rules.overline == Overline::NoWin)
                | u64::from(rules.renju) << 1,
        );
        Geometry {
            rows,
            cols,
            patterns: PatternFn::new(rules.win_length, rules.overline),
            rules,
            line_of,
            line_cells,
            on_board,
            salt,
        }
    }

    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }
}

/// SplitMix64: a good 64-bit mixer, used to derive Zobrist keys without storing a table.
#[inline]
pub const fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The segments of `2H + 1` cells around `cell` in direction `dir` of the line masks `lines`
/// (a board's, or a copy the VCF walks): (first player's stones, second player's stones,
/// off-board cells), cell `cell` at bit `H`.
#[inline]
pub(super) fn segments(geo: &Geometry, lines: &[[u128; 2]], cell: usize, dir: usize) -> [u64; 3] {
    let (line, pos) = geo.line_of[cell][dir];
    let h = geo.patterns.h;
    let shift = pos as u32 + OFFSET - h;
    let seg_mask = (1u64 << (2 * h + 1)) - 1;
    let stones = lines[line as usize];
    let off = !geo.on_board[line as usize];
    let segment = |bits: u128| ((bits >> shift) as u64) & seg_mask;
    [segment(stones[0]), segment(stones[1]), segment(off)]
}

/// Zobrist key of a stone of `side` on `cell`.
#[inline]
pub(super) fn zobrist(side: usize, cell: usize) -> u64 {
    splitmix(((cell as u64) << 1 | side as u64) ^ 0x5EED_6A3E_u64 << 20)
}

/// Hash term for "the second player is to move".
pub const SIDE_KEY: u64 = splitmix(0xC0FF_EE00);

/// The mutable board state.
#[derive(Clone)]
pub struct Board {
    pub geo: Arc<Geometry>,
    /// 0 empty, 1 first player, 2 second player.
    pub cells: Vec<u8>,
    /// Per line, per side: stone bits.
    lines: Vec<[u128; 2]>,
    /// Per cell and side: the cell's code, the pattern level a stone of that side would make in
    /// each direction, three bits each (direction `d` at bits `3d..3d + 3`); 0 for an occupied
    /// cell. Everything else the board knows of a cell (its shape, level pair and threat
    /// classes, its best level) is one lookup of the code in `CLASSES`.
    pub code: Vec<[u16; 2]>,
    /// Per cell: stones within two cells (Chebyshev distance), the candidate-move area. Padded
    /// with `NEAR_PADDING` (8) bytes past the last cell so that `bump_near` can update a row's
    /// five cells as one `u64`.
    pub near: Vec<u8>,
    /// Per side and level: how many (empty cell, direction) pairs have that pattern.
    pub level_count: [[u32; LEVELS]; 2],
    /// Per side and class: how many empty cells offer that shape.
    pub combo_count: [[u32; COMBO_CLASSES]; 2],
    /// Per side and pair class: how many empty cells have it (class 0 is not kept).
    pub pair_count: [[u32; PAIR_CLASSES]; 2],
    /// Per side and threat level (index into [`THREAT_LEVELS`]): the empty cells where a stone
    /// of that side reaches the level in some direction.
    pub threats: [[CellSet; THREAT_LEVELS.len()]; 2],
    /// Zobrist hash of the stones only (the side to move is added by the game).
    pub stone_hash: u64,
    pub stones: u32,
    /// Every cell code `place` changed, oldest first, so that `remove` restores them instead
    /// of recomputing: the search removes the last stone placed, and restoring the codes costs
    /// a fraction of refreshing the 36 cells' patterns again (callgrind, benches/gomoku.rs).
    undo: Vec<CodeChange>,
    /// Per placed stone still on the log, oldest first: what `remove` puts back at once. Only
    /// the first `live` are in use; the others are kept so that `place` copies the state
    /// straight into one (a frame built and then pushed is copied twice).
    frames: Vec<Frame>,
    live: usize,
}

/// What one `place` changed beyond the cell codes, kept whole: the stone's cell, where its code
/// changes start in the undo log, and the counts and threat sets as they were before it. Copying
/// them in and back (about 900 bytes each way) costs about a third of moving each count back
/// code by code, which `remove` did before (callgrind, benches/gomoku.rs).
#[derive(Clone)]
struct Frame {
    cell: u16,
    undo_start: u32,
    level_count: [[u32; LEVELS]; 2],
    combo_count: [[u32; COMBO_CLASSES]; 2],
    pair_count: [[u32; PAIR_CLASSES]; 2],
    threats: [[CellSet; THREAT_LEVELS.len()]; 2],
}

impl Frame {
    /// A frame to be written over.
    const BLANK: Frame = Frame {
        cell: 0,
        undo_start: 0,
        level_count: [[0; LEVELS]; 2],
        combo_count: [[0; COMBO_CLASSES]; 2],
        pair_count: [[0; PAIR_CLASSES]; 2],
        threats: [[CellSet::EMPTY; THREAT_LEVELS.len()]; 2],
    };
}

/// Bytes of `Board::near` past the last cell: a row's window read as a `u64` may start at the
/// last cell.
const NEAR_PADDING: usize = 8;

/// A cell's codes before a change. A stone changes each other cell along one line only (the
/// line through both), so one entry a cell and a stone holds it.
#[derive(Clone, Copy, Debug)]
struct CodeChange {
    /// The cell, as wide as the codes together: an entry of eight bytes is logged in one
    /// store, one of six took several.
    cell: u32,
    codes: [u16; 2],
}

/// Moves one count from class `from` to class `to` (nothing if they are equal). Wrapping: class
/// 0 (nothing) goes below zero (empty cells are not counted there to begin with) and is never
/// read; every count is exact modulo 2^32.
#[inline]
fn recount(counts: &mut [u32], from: u8, to: u8) {
    if from != to {
        counts[from as usize] = counts[from as usize].wrapping_sub(1);
        counts[to as usize] = counts[to as usize].wrapping_add(1);
    }
}

/// The level of direction `dir` in a cell code.
#[inline]
pub const fn level_in(code: u16, dir: usize) -> u8 {
    ((code >> (3 * dir)) & 7) as u8
}

impl Board {
    pub fn empty(geo: Arc<Geometry>) -> Self {
        let n = geo.cells();
        let lines = vec![[0u128; 2]; geo.line_cells.len()];
        let mut board = Board {
            cells: vec![0; n],
            lines,
            code: vec![[0; 2]; n],
            near: vec![0; n + NEAR_PADDING],
            combo_count: [[0; COMBO_CLASSES]; 2],
            pair_count: [[0; PAIR_CLASSES]; 2],
            threats: Default::default(),
            level_count: [[0; LEVELS]; 2],
            stone_hash: geo.salt,
            stones: 0,
            undo: Vec::new(),
            frames: Vec::new(),
            live: 0,
            geo,
        };
        board.refresh_all();
        board
    }

    /// Places stones without checking for wins (setting up a position), then recomputes every
    /// pattern from scratch.
    pub fn set_up(&mut self, stones: impl IntoIterator<Item = (usize, Side)>) {
        for (cell, side) in stones {
            self.put(cell, side.index());
        }
        self.refresh_all();
    }

    /// Recomputes all patterns and counters from the stones alone.
    pub fn refresh_all(&mut self) {
        self.level_count = [[0; LEVELS]; 2];
        self.combo_count = [[0; COMBO_CLASSES]; 2];
        self.pair_count = [[0; PAIR_CLASSES]; 2];
        self.threats = Default::default();
        self.code.fill([0; 2]);
        for cell in 0..self.cells.len() {
            if self.cells[cell] == 0 {
                for d in 0..4 {
                    self.refresh(cell, d);
                }
            }
        }
        // Nothing before this point can be undone: the log starts here.
        self.undo.clear();
        self.live = 0;
    }

    /// Per line, per side: the stone bits (cell `i` of the line at bit `i + OFFSET`).
    pub(super) fn lines(&self) -> &[[u128; 2]] {
        &self.lines
    }

    /// The code of `cell` for `side` (its four levels, three bits each; 0 if occupied).
    #[inline]
    pub fn code(&self, cell: usize, side: usize) -> u16 {
        self.code[cell][side]
    }

    #[inline]
    pub fn level(&self, cell: usize, side: usize, dir: usize) -> u8 {
        level_in(self.code[cell][side], dir)
    }

    /// The four levels of `cell` for `side`, by direction.
    #[inline]
    pub fn levels(&self, cell: usize, side: usize) -> [u8; 4] {
        let code = self.code[cell][side];
        [0, 1, 2, 3].map(|d| level_in(code, d))
    }

    /// The best level `side` would make on `cell` over the four directions.
    #[inline]
    pub fn best_level(&self, cell: usize, side: usize) -> u8 {
        classes(self.code[cell][side]).best
    }

    /// The shape class ([`DOUBLE_FOUR`] and the others; 0 for none or an occupied cell) of
    /// `cell` for `side`.
    #[inline]
    pub fn shape(&self, cell: usize, side: usize) -> u8 {
        classes(self.code[cell][side]).shape
    }

    /// Whether a stone of `side` on `cell` would win.
    #[inline]
    pub fn makes_five(&self, cell: usize, side: usize) -> bool {
        self.best_level(cell, side) == FIVE
    }

    /// Moves the shape, pair and threat bookkeeping of `cell` for `side` from code `old` to
    /// code `new` (the level counts are the caller's: it knows which directions changed).
    #[inline(always)]
    fn reclass(&mut self, cell: usize, side: usize, old: u16, new: u16) {
        let (was, now) = (classes(old), classes(new));
        recount(&mut self.combo_count[side], was.shape, now.shape);
        recount(&mut self.pair_count[side], was.pair, now.pair);
        if was.threat != now.threat {
            self.mark_threats(cell, side, now.threat);
        }
    }

    /// Sets the levels of empty `cell` in direction `dir` (`first` for the first player,
    /// `second` for the second), logging the old codes when they change.
    #[inline(always)]
    fn set_levels(&mut self, cell: usize, dir: usize, first: u8, second: u8) {
        let shift = 3 * dir as u32;
        let keep = !(7u16 << shift);
        let old = self.code[cell];
        let new = [
            old[0] & keep | u16::from(first) << shift,
            old[1] & keep | u16::from(second) << shift,
        ];
        if new == old {
            return;
        }
        // Written before the log grows: a push that reallocates would make the compiler check
        // the index again.
        self.code[cell] = new;
        self.undo.push(CodeChange {
            cell: cell as u32,
            codes: old,
        });
        for side in 0..2 {
            if new[side] != old[side] {
                // Levels read back from the codes: three bits, so no index check on the counts.
                let (was, now) = (level_in(old[side], dir), level_in(new[side], dir));
                recount(&mut self.level_count[side], was, now);
                self.reclass(cell, side, old[side], new[side]);
            }
        }
    }

    /// Puts `cell` in exactly the threat sets of `side` that `threat` (bits of
    /// [`THREAT_LEVELS`]) names.
    #[inline]
    fn mark_threats(&mut self, cell: usize, side: usize, threat: u8) {
        for (t, set) in self.threats[side].iter_mut().enumerate() {
            set.set(cell, threat & (1 << t) != 0);
        }
    }

    /// The empty cells where a stone of `side` makes at least `level` (one of
    /// [`THREAT_LEVELS`]) in some direction, in increasing order.
    #[inline]
    pub fn threat_cells(&self, side: usize, level: u8) -> &CellSet {
        let t = THREAT_LEVELS
            .iter()
            .position(|&l| l == level)
            .expect("a level the board keeps cells for");
        &self.threats[side][t]
    }

    /// The segments of `2H + 1` cells around `cell` in direction `dir`: (first player's stones,
    /// second player's stones, off-board cells), cell `cell` at bit `H`.
    #[inline]
    fn segments(&self, cell: usize, dir: usize) -> [u64; 3] {
        segments(&self.geo, &self.lines, cell, dir)
    }

    /// Recomputes the patterns of empty `cell` in direction `dir` for both sides.
    #[inline]
    fn refresh(&mut self, cell: usize, dir: usize) {
        let [x, o, off] = self.segments(cell, dir);
        self.refresh_cell(cell, dir, x, o, off);
    }

    /// Whether `side` can make a four on a cell within `reach` of `cell` along one of `cell`'s
    /// four lines: the stone on `cell` may take part in it (the horizon's test of whether a
    /// VCF can be new, [`super::search`]).
    pub fn four_cell_within(&self, cell: usize, side: usize, reach: usize) -> bool {
        let fours = self.threat_cells(side, FOUR);
        self.geo.line_of[cell].iter().any(|&(line, pos)| {
            let cells = &self.geo.line_cells[line as usize];
            let pos = pos as usize;
            let end = (pos + reach).min(cells.len() - 1);
            (pos.saturating_sub(reach)..=end).any(|i| fours.contains(cells[i] as usize))
        })
    }

    /// Whether a stone of `side`'s opponent on empty `cell` would leave `side` no move that
    /// makes an open four: the exact test of a defence against an open three. Only the cells
    /// within `H` of `cell` on its four lines can change, so they are re-read with the extra
    /// stone instead of placing it (no make/unmake); every other open-four chance must be one
    /// of them.
    pub fn stops_open_fours(&self, cell: usize, side: usize) -> bool {
        let total = self.level_count[side][OPEN_FOUR as usize];
        let own = self.levels(cell, side);
        let mut stopped = own.iter().filter(|&&l| l == OPEN_FOUR).count() as u32;
        // Each (cell, direction) pair below is one of the `total` open-four chances, a
        // different one each time: once all are stopped, no other is left to find.
        if stopped == total {
            return true;
        }
        let h = self.geo.patterns.h;
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            let pos = u32::from(pos);
            let cells = &self.geo.line_cells[line as usize];
            let lo = pos.saturating_sub(h);
            let hi = (pos + h).min(cells.len() as u32 - 1);
            // The empty cells of lo..=hi but `cell` itself, as bits from lo: only those are
            // read (at most 2H + 1 <= 51 bits).
            let [x, o] = self.lines[line as usize];
            let span = (1u64 << (hi - lo + 1)) - 1;
            let mut empty = !((x | o) >> (lo + OFFSET)) as u64 & span & !(1 << (pos - lo));
            while empty != 0 {
                let p = lo + empty.trailing_zeros();
                empty &= empty - 1;
                let other = cells[p as usize] as usize;
                if self.level(other, side, d) != OPEN_FOUR {
                    continue;
                }
                let [x, o, off] = self.segments(other, d);
                // `cell` seen from `other`: bit H + (pos - p) of its segment.
                let blocker = 1u64 << (h + pos - p);
                let (mine, theirs) = if side == 0 { (x, o) } else { (o, x) };
                if self.geo.patterns.level(mine, theirs | off | blocker) == OPEN_FOUR {
                    return false;
                }
                stopped += 1;
                if stopped == total {
                    return true;
                }
            }
        }
        false
    }

    /// Puts a stone without touching patterns (shared by `place` and setup).
    fn put(&mut self, cell: usize, side: usize) {
        self.cells[cell] = side as u8 + 1;
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            self.lines[line as usize][side] |= 1u128 << (pos as u32 + OFFSET);
        }
        self.stone_hash ^= zobrist(side, cell);
        self.stones += 1;
        self.bump_near(cell, true);
    }

    /// Counts the stone on `cell` in (`add`) or out of the neighbourhood counts of the cells
    /// within two of it. Each row's three to five cells move as one `u64` (plus one in each
    /// byte): no byte carries into the next, since a count is at most 25 and a count being
    /// lowered holds this stone, so it is at least 1; the bytes past the window get 0.
    fn bump_near(&mut self, cell: usize, add: bool) {
        let (rows, cols) = (self.geo.rows, self.geo.cols);
        let (r, c) = (cell / cols, cell % cols);
        let first_col = c.saturating_sub(2);
        let width = (c + 2).min(cols - 1) - first_col + 1;
        let ones = 0x0101_0101_0101_0101u64 & ((1u64 << (8 * width)) - 1);
        for row in r.saturating_sub(2)..=(r + 2).min(rows - 1) {
            let at = row * cols + first_col;
            if let Ok(window) = <&mut [u8; 8]>::try_from(&mut self.near[at..at + 8]) {
                let counts = u64::from_le_bytes(*window);
                let counts = if add {
                    counts.wrapping_add(ones)
                } else {
                    counts.wrapping_sub(ones)
                };
                *window = counts.to_le_bytes();
            }
        }
    }

    /// Refreshes the empty cells within `H` of `cell` on its four lines.
    ///
    /// The hot half of every move. The line's masks are read once per direction and shifted
    /// once to the window of the cells refreshed (`4H + 1` bits, one `u64` up to `H = 15`), so
    /// each cell's segment is one narrow shift of them; the geometry is held apart from the
    /// board (its own `Arc`) so that its line tables stay in registers while the board changes.
    fn refresh_around(&mut self, cell: usize) {
        let geo = Arc::clone(&self.geo);
        // The tabulated rule sets (reach 2 to 5) get their reach as a constant and visit the
        // empty cells only: a quarter fewer instructions a stone than reading the reach at run
        // time and testing every cell (callgrind, benches/gomoku.rs).
        match (geo.patterns.table(), geo.patterns.h) {
            (Some(table), 2) => self.refresh_tabulated::<2>(&geo, table, cell),
            (Some(table), 3) => self.refresh_tabulated::<3>(&geo, table, cell),
            (Some(table), 4) => self.refresh_tabulated::<4>(&geo, table, cell),
            (Some(table), 5) => self.refresh_tabulated::<5>(&geo, table, cell),
            _ => self.refresh_direct(&geo, cell),
        }
    }

    /// [`Board::refresh_around`] for a tabulated rule set of reach `H`. Each line's masks are
    /// shifted once to a window whose bit `i + H` is the cell `i - H` places after the stone's
    /// (cells before the line's start read as off-board: `OFFSET >= 2H`), and only the window's
    /// empty cells are visited, by their bits.
    #[inline(always)]
    fn refresh_tabulated<const H: u32>(&mut self, geo: &Geometry, table: &[u8], cell: usize) {
        const { assert!(2 * H <= OFFSET && 4 * H < 64) };
        let table = &table[..1 << (4 * H)];
        let seg_mask = (1u64 << (2 * H + 1)) - 1;
        for d in 0..4 {
            let (line, pos) = geo.line_of[cell][d];
            let (line, pos) = (line as usize, u32::from(pos));
            let cells = &geo.line_cells[line];
            let [x, o] = self.lines[line];
            let window = |bits: u128| (bits >> (pos + OFFSET - 2 * H)) as u64;
            let (x, o, off) = (window(x), window(o), window(!geo.on_board[line]));
            let mut empty = !(x | o | off) >> H & seg_mask;
            while empty != 0 {
                let i = empty.trailing_zeros();
                empty &= empty - 1;
                let segment = |bits: u64| (bits >> i) & seg_mask;
                let [first, second] =
                    tabulated_levels::<H>(table, segment(x), segment(o), segment(off));
                let other = cells[(pos + i - H) as usize] as usize;
                self.set_levels(other, d, first, second);
            }
        }
    }

    /// [`Board::refresh_around`] for any rule set.
    fn refresh_direct(&mut self, geo: &Geometry, cell: usize) {
        let patterns = geo.patterns;
        let h = patterns.h as usize;
        let seg_mask = (1u64 << (2 * h + 1)) - 1;
        let narrow = 4 * h < 64;
        for d in 0..4 {
            let (line, pos) = geo.line_of[cell][d];
            let (line, pos) = (line as usize, pos as usize);
            let cells = &geo.line_cells[line];
            let [x, o] = self.lines[line];
            let off = !geo.on_board[line];
            let (lo, hi) = (pos.saturating_sub(h), (pos + h).min(cells.len() - 1));
            // Bit 0 of the window is the segment of cell `lo`'s first bit.
            let base = lo as u32 + OFFSET - h as u32;
            if narrow {
                let window = |bits: u128| (bits >> base) as u64;
                let (x, o, off) = (window(x), window(o), window(off));
                for (i, &other) in cells[lo..=hi].iter().enumerate() {
                    let segment = |bits: u64| (bits >> i) & seg_mask;
                    self.refresh_cell(other as usize, d, segment(x), segment(o), segment(off));
                }
            } else {
                for (i, &other) in cells[lo..=hi].iter().enumerate() {
                    let segment = |bits: u128| ((bits >> (base + i as u32)) as u64) & seg_mask;
                    self.refresh_cell(other as usize, d, segment(x), segment(o), segment(off));
                }
            }
        }
    }

    /// Recomputes the levels of `cell` in direction `dir` from its segments, if it is empty.
    #[inline(always)]
    fn refresh_cell(&mut self, cell: usize, dir: usize, x: u64, o: u64, off: u64) {
        if self.cells[cell] == 0 {
            let [first, second] = self.geo.patterns.levels(x, o, off);
            self.set_levels(cell, dir, first, second);
        }
    }

    /// Places a stone of `side` on empty `cell`, updating everything incrementally.
    pub fn place(&mut self, cell: usize, side: usize) {
        if self.live == self.frames.len() {
            self.frames.push(Frame::BLANK);
        }
        let frame = &mut self.frames[self.live];
        frame.cell = cell as u16;
        frame.undo_start = self.undo.len() as u32;
        frame.level_count = self.level_count;
        frame.combo_count = self.combo_count;
        frame.pair_count = self.pair_count;
        frame.threats = self.threats;
        self.live += 1;
        let old = self.code[cell];
        if old != [0; 2] {
            self.undo.push(CodeChange {
                cell: cell as u32,
                codes: old,
            });
            self.code[cell] = [0; 2];
            for (side, &code) in old.iter().enumerate() {
                for d in 0..4 {
                    recount(&mut self.level_count[side], level_in(code, d), 0);
                }
                self.reclass(cell, side, code, 0);
            }
        }
        self.put(cell, side);
        self.refresh_around(cell);
    }

    /// Removes the stone on `cell` (the inverse of `place`).
    pub fn remove(&mut self, cell: usize) {
        let side = (self.cells[cell] - 1) as usize;
        self.cells[cell] = 0;
        for d in 0..4 {
            let (line, pos) = self.geo.line_of[cell][d];
            self.lines[line as usize][side] &= !(1u128 << (pos as u32 + OFFSET));
        }
        self.stone_hash ^= zobrist(side, cell);
        self.stones -= 1;
        self.bump_near(cell, false);
        match self.live.checked_sub(1).map(|last| &self.frames[last]) {
            Some(frame) if frame.cell as usize == cell => {
                self.level_count = frame.level_count;
                self.combo_count = frame.combo_count;
                self.pair_count = frame.pair_count;
                self.threats = frame.threats;
                let start = frame.undo_start as usize;
                self.live -= 1;
                self.undo_to(start);
            }
            // Not the last stone placed (a set-up stone, or a take-back out of order): the log
            // no longer describes the board, so recompute and start the log afresh.
            _ => {
                self.refresh_around(cell);
                self.undo.clear();
                self.live = 0;
            }
        }
    }

    /// Restores every cell code changed since the log held `start` changes, newest first (the
    /// counts and sets are the frame's to restore).
    fn undo_to(&mut self, start: usize) {
        for change in self.undo.drain(start..).rev() {
            self.code[change.cell as usize] = change.codes;
        }
    }

    /// Whether `side` has a winning line on the board (a scan: used to validate setups).
    pub fn has_five(&self, side: usize) -> bool {
        let k = self.geo.rules.win_length as usize;
        let exact = self.geo.rules.overline == Overline::NoWin;
        self.geo.line_cells.iter().any(|cells| {
            let mut run = 0;
            for (i, &cell) in cells.iter().enumerate() {
                if self.cells[cell as usize] == side as u8 + 1 {
                    run += 1;
                }
                let ends =
                    i + 1 == cells.len() || self.cells[cells[i + 1] as usize] != side as u8 + 1;
                if run > 0 && ends {
                    if run == k || (run > k && !exact) {
                        return true;
                    }
                    run = 0;
                }
            }
            false
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(size: usize) -> Board {
        Board::empty(Arc::new(Geometry::new(size, size, GomokuRules::default())))
    }

    /// Everything `refresh_all` recomputes, compared with the incremental state.
    fn matches_a_fresh_refresh(b: &Board) -> bool {
        let mut fresh = b.clone();
        fresh.refresh_all();
        fresh.code == b.code
            && fresh.level_count == b.level_count
            && fresh.combo_count == b.combo_count
            && fresh.pair_count == b.pair_count
            && fresh.threats == b.threats
    }

    #[test]
    fn removing_the_last_stone_restores_every_pattern_from_the_log() {
        let mut b = board(15);
        let before = b.clone();
        for (i, cell) in [112, 113, 127, 98, 114, 128].into_iter().enumerate() {
            b.place(cell, i % 2);
        }
        for cell in [128, 114, 98, 127, 113, 112] {
            b.remove(cell);
            assert!(matches_a_fresh_refresh(&b));
        }
        assert_eq!(b.code, before.code);
        assert_eq!(b.pair_count, before.pair_count);
    }

    #[test]
    fn removing_a_stone_out_of_order_recomputes_instead_of_undoing_the_log() {
        let mut b = board(15);
        b.place(112, 0);
        b.place(113, 1);
        b.place(114, 0);
        b.remove(113);
        assert!(matches_a_fresh_refresh(&b));
        b.place(128, 1);
        b.remove(128);
        b.remove(112);
        b.remove(114);
        assert!(matches_a_fresh_refresh(&b));
    }

    #[test]
    fn a_set_up_stone_can_be_removed() {
        let mut b = board(9);
        b.set_up([(40, Side::First), (41, Side::Second)]);
        b.place(50, 0);
        b.remove(50);
        b.remove(41);
        assert!(matches_a_fresh_refresh(&b));
    }

    #[test]
    fn a_four_cell_is_within_reach_only_on_the_stones_lines() {
        // X's open three on row 7 (cols 5-7): its four cells are (7, 3), (7, 4), (7, 8), (7, 9).
        let mut b = board(15);
        for cell in [7 * 15 + 5, 7 * 15 + 6, 7 * 15 + 7] {
            b.place(cell, 0);
        }
        b.place(0, 1);
        assert!(b.four_cell_within(7 * 15 + 5, 0, 4));
        // (11, 7) sees (7, 3) four cells away on its diagonal, and no four cell nearer.
        assert!(b.four_cell_within(11 * 15 + 7, 0, 4));
        assert!(!b.four_cell_within(11 * 15 + 7, 0, 3));
        // (12, 12): none of the four cells lies on its lines.
        assert!(!b.four_cell_within(12 * 15 + 12, 0, 4));
        // O has no four anywhere.
        assert!(!b.four_cell_within(7 * 15 + 5, 1, 4));
    }

    /// Each cell's neighbourhood count, counted from the stones.
    fn near_counted(b: &Board) -> Vec<u8> {
        let (rows, cols) = (b.geo.rows as i32, b.geo.cols as i32);
        (0..rows * cols)
            .map(|cell| {
                let (r, c) = (cell / cols, cell % cols);
                let mut n = 0;
                for rr in (r - 2).max(0)..=(r + 2).min(rows - 1) {
                    for cc in (c - 2).max(0)..=(c + 2).min(cols - 1) {
                        n += u8::from(b.cells[(rr * cols + cc) as usize] != 0);
                    }
                }
                n
            })
            .collect()
    }

    /// Board shapes and rules that take every path of `refresh_around` and `bump_near`: the
    /// tabulated patterns (k = 5, free-style and exact), the direct ones (k = 6 exact, k = 17
    /// with H = 16, past the one-`u64` window), narrow and oblong boards.
    const GEOMETRIES: [(usize, usize, u32, Overline); 5] = [
        (15, 15, 5, Overline::Win),
        (15, 15, 5, Overline::NoWin),
        (5, 9, 3, Overline::Win),
        (20, 20, 17, Overline::Win),
        (13, 7, 6, Overline::NoWin),
    ];

    proptest::proptest! {
        #[test]
        fn a_four_cell_within_reach_is_one_on_the_cells_lines_at_that_distance(
            geometry in 0..GEOMETRIES.len(),
            seeds in proptest::collection::vec(proptest::prelude::any::<u16>(), 1..60),
            probe in proptest::prelude::any::<u16>(),
            reach in 1..6usize,
        ) {
            let (rows, cols, k, overline) = GEOMETRIES[geometry];
            let rules = GomokuRules::new(k, overline).unwrap();
            let mut b = Board::empty(Arc::new(Geometry::new(rows, cols, rules)));
            for (i, seed) in seeds.into_iter().enumerate() {
                let free: Vec<usize> = (0..rows * cols).filter(|&c| b.cells[c] == 0).collect();
                if free.is_empty() {
                    break;
                }
                b.place(free[seed as usize % free.len()], i % 2);
            }
            let cell = probe as usize % (rows * cols);
            let (r, c) = ((cell / cols) as i64, (cell % cols) as i64);
            for side in 0..2 {
                let counted = b.threat_cells(side, FOUR).iter().any(|other| {
                    let (dr, dc) = ((other / cols) as i64 - r, (other % cols) as i64 - c);
                    let aligned = dr == 0 || dc == 0 || dr.abs() == dc.abs();
                    aligned && dr.abs().max(dc.abs()) as usize <= reach
                });
                proptest::prop_assert_eq!(b.four_cell_within(cell, side, reach), counted);
            }
        }

        #[test]
        fn any_sequence_of_stones_and_take_backs_keeps_every_count_exact(
            geometry in 0..GEOMETRIES.len(),
            steps in proptest::collection::vec((proptest::prelude::any::<u16>(), 0..4u8), 1..80),
        ) {
            let (rows, cols, k, overline) = GEOMETRIES[geometry];
            let rules = GomokuRules::new(k, overline).unwrap();
            let mut b = Board::empty(Arc::new(Geometry::new(rows, cols, rules)));
            let empty = b.clone();
            let mut placed = Vec::new();
            for (seed, action) in steps {
                // One step in four takes the last stone back, as the search does.
                if action == 0 && !placed.is_empty() {
                    let cell = placed.pop().unwrap();
                    b.remove(cell);
                } else {
                    let free: Vec<usize> = (0..rows * cols).filter(|&c| b.cells[c] == 0).collect();
                    if free.is_empty() {
                        continue;
                    }
                    let cell = free[seed as usize % free.len()];
                    b.place(cell, placed.len() % 2);
                    placed.push(cell);
                }
                proptest::prop_assert!(matches_a_fresh_refresh(&b));
                proptest::prop_assert_eq!(&b.near[..rows * cols], &near_counted(&b)[..]);
            }
            while let Some(cell) = placed.pop() {
                b.remove(cell);
            }
            proptest::prop_assert_eq!(&b.code, &empty.code);
            proptest::prop_assert_eq!(&b.near, &empty.near);
            proptest::prop_assert_eq!(b.level_count, empty.level_count);
        }
    }
}
