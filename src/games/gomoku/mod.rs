//! Gomoku (and every m,n,k-game): k in a row on a rectangular board of 5 to 25 cells a side.
//!
//! The position ([`Gomoku`]) wraps an incremental [`board::Board`] whose line patterns drive
//! everything: the evaluation (a linear function of pattern, cell-shape and level-pair
//! counts), the win test (a cell whose pattern is a five), move ordering (what a stone would
//! make and block, [`move_order`]), the threat rules that prune the moves worth searching, and
//! the horizon extension of forced answers.
//! `Gomoku::think` (`think.rs`) runs the threat searches ([`vcf`], [`vct`]) first, then on big
//! boards gomoku's own alpha-beta ([`search`]: threats inside the tree, hard pruning where the
//! position is quiet) and on small ones the exact generic engine, then checks the chosen move
//! against the opponent's threats (`defence.rs`). (The Gomocup protocol is a tool,
//! `tools::pbrain`.)
//!
//! - [`patterns`]: what a stone on a cell would make along one line (tabulated).
//! - [`board`]: stones, line masks, incremental patterns, cell shapes and hash.
//! - [`eval`]: the evaluation's weights (fitted to a strong engine's judgement).
//! - `think`: how a move is chosen, search by search.
//! - [`search`]: the main search on big boards ([`search::MainSearch`]).
//! - `defence`: the check of the chosen move against the opponent's threats.
//! - [`cell_set`]: the board's sets of threat cells.
//! - [`vcf`]: the victory-by-continuous-fours search with its own table.
//! - [`vct`]: the victory-by-continuous-threats (fours and threes) AND/OR search.
//! - [`renju`]: renju's forbidden points for black (exact, recursive).
//! - [`wincheck`]: the static win test (won and lost shapes from the counts alone).
//! - [`labels`]: what a move makes and blocks, in a teacher's words (five, open four, ...).
//! - [`move_order`]: the move order's hints, fitted to Rapfi's moves, and the shapes' strength.

pub mod board;
pub mod cell_set;
mod defence;
pub mod eval;
pub mod labels;
mod line_stones;
pub mod move_order;
pub mod patterns;
pub mod renju;
pub mod search;
mod think;
pub mod vcf;
pub mod vct;
pub mod wincheck;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::engine::search::search as exact_search;
use crate::engine::{
    Algorithm, Game, MATE_BOUND, Move, Outcome, Proof, Score, SearchLimits, SearchOptions,
    SearchReport, Side, Status, StopReason, TableStats, TranspositionTable, WIN,
};

use super::{BoardGame, Cell, Grid, PositionError, Stone};
use board::{Board, Geometry, SIDE_KEY};
use patterns::{FIVE, FOUR, OPEN_FOUR, OPEN_THREE};

/// Smallest and largest board side.
pub const MIN_SIDE: usize = 5;
pub const MAX_SIDE: usize = 25;

/// Whether a line longer than the win length wins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Overline {
    /// Free-style: five or more in a row wins.
    #[default]
    Win,
    /// Standard gomoku: exactly five wins; six or more does not.
    NoWin,
}

/// The rule options of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GomokuRules {
    /// Stones in a row that win (k of an m,n,k-game).
    pub win_length: u32,
    /// Whether a longer line wins (under renju: white's rule; black needs exactly five).
    pub overline: Overline,
    /// Renju: black may not play a forbidden point ([`renju`]) and wins only with exactly five;
    /// white wins with five or more. Needs `win_length` 5 and `overline` [`Overline::Win`].
    pub renju: bool,
}

impl Default for GomokuRules {
    fn default() -> Self {
        GomokuRules {
            win_length: 5,
            overline: Overline::Win,
            renju: false,
        }
    }
}

impl GomokuRules {
    /// Rules with a checked win length (3 to 25; [`Gomoku::from_grid`] also checks it against
    /// the board's longer side).
    pub fn new(win_length: u32, overline: Overline) -> Result<Self, PositionError> {
        if !(3..=MAX_SIDE as u32).contains(&win_length) {
            return Err(PositionError::Rules(format!(
                "win_length must be between 3 and {MAX_SIDE}; got {win_length}"
            )));
        }
        Ok(GomokuRules {
            win_length,
            overline,
            renju: false,
        })
    }

    /// The renju rule set: five in a row, black restricted (see [`renju`]).
    pub fn renju() -> Self {
        GomokuRules {
            renju: true,
            ..GomokuRules::default()
        }
    }
}

/// A gomoku position. Move code = cell index `row * cols + col`.
#[derive(Clone)]
pub struct Gomoku {
    board: Board,
    to_move: Side,
    /// Set when the last move made a winning line (the side to move has lost).
    five_made: bool,
}

impl fmt::Debug for Gomoku {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Gomoku {}x{} {:?}, {} to move",
            self.rows(),
            self.cols(),
            self.rules(),
            self.to_move.letter()
        )?;
        for row in self.board.cells.chunks(self.cols()) {
            let text: String = row.iter().map(|&c| ['.', 'X', 'O'][c as usize]).collect();
            writeln!(f, "{text}")?;
        }
        Ok(())
    }
}

impl Gomoku {
    /// The empty board of `rows` x `cols` under `rules`, X to move.
    pub fn new(rows: usize, cols: usize, rules: GomokuRules) -> Result<Self, PositionError> {
        if !(MIN_SIDE..=MAX_SIDE).contains(&rows) || !(MIN_SIDE..=MAX_SIDE).contains(&cols) {
            return Err(PositionError::Shape(format!(
                "gomoku boards have {MIN_SIDE} to {MAX_SIDE} rows and columns; got {rows} x {cols}"
            )));
        }
        GomokuRules::new(rules.win_length, rules.overline)?;
        if rules.win_length as usize > rows.max(cols) {
            return Err(PositionError::Rules(format!(
                "win_length {} is longer than the board's longer side ({})",
                rules.win_length,
                rows.max(cols)
            )));
        }
        let geo = Arc::new(Geometry::new(rows, cols, rules));
        Ok(Gomoku {
            board: Board::empty(geo),
            to_move: Side::First,
            five_made: false,
        })
    }

    pub fn rows(&self) -> usize {
        self.board.geo.rows
    }

    pub fn cols(&self) -> usize {
        self.board.geo.cols
    }

    pub fn rules(&self) -> GomokuRules {
        self.board.geo.rules
    }

    /// The move code of a cell.
    pub fn move_at(&self, row: usize, col: usize) -> Move {
        Move((row * self.cols() + col) as u16)
    }

    /// The stone on a cell.
    pub fn stone(&self, row: usize, col: usize) -> Stone {
        match self.board.cells[row * self.cols() + col] {
            1 => Stone::Player(Side::First),
            2 => Stone::Player(Side::Second),
            _ => Stone::Empty,
        }
    }

    /// Whether `mv` is a legal move now.
    pub fn is_legal(&self, mv: Move) -> bool {
        mv.index() < self.board.cells.len()
            && self.board.cells[mv.index()] == 0
            && self.status() == Status::Ongoing
    }

    /// Replaces the stones (no win check) and sets the side to move: setting up a position.
    pub fn set_up(&mut self, stones: impl IntoIterator<Item = (usize, Side)>, to_move: Side) {
        let geo = self.board.geo.clone();
        self.board = Board::empty(geo);
        self.board.set_up(stones);
        self.to_move = to_move;
        self.five_made = false;
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The hand-set strength of `mv`'s shapes for the side to move ([`move_order::strength`]):
    /// what the main search's reductions and futility read, where the order's hint is what
    /// ranks the moves.
    pub fn shape_strength(&self, mv: Move) -> i32 {
        self.order_and_strength(mv).1
    }

    /// The fitted order's hint of `mv` ([`Game::move_order_hint`]) and its hand-set strength
    /// ([`Gomoku::shape_strength`]), read together.
    pub fn order_and_strength(&self, mv: Move) -> (i32, i32) {
        let cell = mv.index();
        let me = self.to_move.index();
        move_order::order_and_strength(self.board.code(cell, me), self.board.code(cell, 1 - me))
    }

    /// The static evaluation recomputed from the stones alone (for checking the incremental one).
    pub fn evaluate_from_scratch(&self) -> Score {
        let mut fresh = self.clone();
        fresh.board.refresh_all();
        fresh.evaluate()
    }

    /// The pattern counters recomputed from scratch equal the incremental ones.
    pub fn patterns_consistent(&self) -> bool {
        let mut fresh = self.clone();
        fresh.board.refresh_all();
        fresh.board.code == self.board.code
            && fresh.board.level_count == self.board.level_count
            && fresh.board.combo_count == self.board.combo_count
            && fresh.board.pair_count == self.board.pair_count
            && fresh.board.threats == self.board.threats
    }

    /// Cells where `side` would make five (at most `cap` of them, in cell order).
    pub fn five_cells(&self, side: Side, out: &mut [usize]) -> usize {
        let s = side.index();
        if self.board.level_count[s][FIVE as usize] == 0 {
            return 0;
        }
        let mut n = 0;
        for cell in self.board.threat_cells(s, FIVE).iter() {
            if self.board.near[cell] > 0
                && (!self.black_is_restricted(side) || self.makes_exact_five(cell))
            {
                if n < out.len() {
                    out[n] = cell;
                }
                n += 1;
            }
        }
        n
    }

    fn first_five_cell(&self, side: Side) -> Option<usize> {
        let mut cell = [0usize; 1];
        (self.five_cells(side, &mut cell) > 0).then_some(cell[0])
    }

    /// Whether `side` plays under renju's restrictions (it is black and the rules are renju).
    fn black_is_restricted(&self, side: Side) -> bool {
        self.board.geo.rules.renju && side == Side::First
    }

    /// Whether `side` may play the empty `cell`: always, except black on a renju forbidden
    /// point. The threat searches ask it of every threat and every forced block.
    #[inline]
    pub(crate) fn allowed(&self, cell: usize, side: Side) -> bool {
        !self.black_is_restricted(side) || self.forbidden(cell).is_none()
    }

    /// A move the side to move may play other than `except` (the nearest candidates first):
    /// what a renju black plays when its only block is forbidden, to complete a winning line.
    pub(crate) fn any_allowed_move(&self, except: usize) -> Option<Move> {
        let mut found = None;
        self.for_each_candidate(|cell| {
            if found.is_none() && cell != except && self.allowed(cell, self.to_move) {
                found = Some(Move(cell as u16));
            }
        });
        found.or_else(|| {
            (0..self.board.cells.len())
                .find(|&c| c != except && self.board.cells[c] == 0 && self.allowed(c, self.to_move))
                .map(|c| Move(c as u16))
        })
    }

    /// Whether black on the empty `cell` makes exactly five.
    fn makes_exact_five(&self, cell: usize) -> bool {
        renju::makes_exact_five(&self.board.cells, self.rows(), self.cols(), cell)
    }

    /// Under renju, why black may not play `cell`, if it may not; `None` for every other rule
    /// set. The exact test ([`renju::forbidden`]) only runs where the cached patterns allow a
    /// forbidden shape: a four or more on some line (overlines, one-line double fours, fours
    /// across lines), or open threes or more on two lines.
    pub fn forbidden(&self, cell: usize) -> Option<renju::Forbidden> {
        if !self.board.geo.rules.renju || self.board.cells[cell] != 0 {
            return None;
        }
        let black = Side::First.index();
        let levels = self.board.levels(cell, black);
        let threes = levels.iter().filter(|&&l| l >= OPEN_THREE).count();
        if threes < 2 && levels.iter().all(|&l| l < FOUR) {
            return None;
        }
        renju::forbidden(&self.board.cells, self.rows(), self.cols(), cell)
    }

    /// Under renju, every point black may not play now, with the reason, in cell order
    /// (whoever is to move: white's moves are judged by them too).
    pub fn forbidden_points(&self) -> Vec<(Move, renju::Forbidden)> {
        (0..self.board.cells.len())
            .filter_map(|cell| self.forbidden(cell).map(|why| (Move(cell as u16), why)))
            .collect()
    }

    /// Removes from `moves` the points the side to move may not play (renju, black).
    fn drop_forbidden(&self, moves: &mut Vec<Move>, from: usize) {
        if self.black_is_restricted(self.to_move) {
            let mut i = from;
            while i < moves.len() {
                if self.forbidden(moves[i].index()).is_some() {
                    moves.swap_remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }

    /// Candidate cells: empty and within two cells of a stone (the centre on an empty board).
    fn for_each_candidate(&self, mut f: impl FnMut(usize)) {
        if self.board.stones == 0 {
            f((self.rows() / 2) * self.cols() + self.cols() / 2);
            return;
        }
        // Eight cells at a time, a byte each: a cell holds 0, 1 or 2, so `c | c >> 1` has bit 0
        // of a byte set where there is a stone; a neighbourhood count is at most 25, so adding
        // 0x7f to it carries into bit 7 exactly when it is not 0, never into the next byte.
        const LOW: u64 = 0x0101_0101_0101_0101;
        let (cells, near) = (&self.board.cells, &self.board.near);
        let words = cells.chunks_exact(8);
        let tail = cells.len() - words.remainder().len();
        for (i, (c, n)) in words.zip(near.chunks_exact(8)).enumerate() {
            let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
            let (c, n) = (word(c), word(n));
            let stone = (c | c >> 1) & LOW;
            let close = (n + 0x7f * LOW) >> 7 & LOW;
            let mut free = close & !stone;
            while free != 0 {
                f(8 * i + free.trailing_zeros() as usize / 8);
                free &= free - 1;
            }
        }
        for cell in tail..cells.len() {
            if cells[cell] == 0 && near[cell] > 0 {
                f(cell);
            }
        }
    }

    /// A static threat judgement for the side to move, beyond the pattern sum: winning and
    /// losing shapes the horizon would otherwise miss.
    fn threat_bonus(&self) -> Score {
        let me = self.to_move.index();
        let opp = 1 - me;
        let count = &self.board.level_count;
        let combos = &self.board.combo_count;
        let opp_fives = count[opp][FIVE as usize];
        if opp_fives >= 2 {
            // Likely an open four or a double four against me (the search sees the rest).
            return -10_000;
        }
        if opp_fives > 0 {
            return 0;
        }
        // The opponent can only interrupt my threats with fours of its own.
        let opp_can_four = count[opp][FOUR as usize] + count[opp][OPEN_FOUR as usize] > 0;
        if count[me][OPEN_FOUR as usize] > 0 || combos[me][board::DOUBLE_FOUR] > 0 {
            20_000
        } else if combos[me][board::FOUR_THREE] > 0 && !opp_can_four {
            12_000
        } else if combos[me][board::DOUBLE_THREE] > 0 && !opp_can_four {
            5_000
        } else {
            0
        }
    }
}

impl Gomoku {
    /// Whether `cell` makes or stops a threat: an open three or more for the mover, a four for
    /// the opponent, or a double threat of either side. Such moves are never reduced.
    fn is_tactical(&self, cell: usize) -> bool {
        let me = self.to_move.index();
        self.board.best_level(cell, me) >= OPEN_THREE
            || self.board.best_level(cell, 1 - me) >= FOUR
            || (0..2).any(|side| {
                (1..=board::DOUBLE_FOUR).contains(&(self.board.shape(cell, side) as usize))
            })
    }

    /// The threat rules: win if possible; else block a five; against an open three answer only
    /// with moves that can matter (fours of our own, or cells on the threatened line).
    fn threat_moves(&self, out: &mut Vec<Move>) {
        if self.status() != Status::Ongoing {
            return;
        }
        let me = self.to_move.index();
        let opp = 1 - me;
        if let Some(cell) = self.first_five_cell(self.to_move) {
            out.push(Move(cell as u16));
            return;
        }
        if self.board.level_count[opp][FIVE as usize] > 0 {
            // Every cell where the opponent would win must be blocked; blocking one is all we
            // can do (two of them mean the game is lost, and either block is the longest defence).
            // Under renju black's overline cells count as fives in the patterns but win nothing.
            let mut cells = [0usize; 8];
            let n = self.five_cells(self.to_move.other(), &mut cells);
            if n > 0 {
                out.extend(cells[..n.min(8)].iter().map(|&c| Move(c as u16)));
                return;
            }
        }
        if self.board.level_count[opp][OPEN_FOUR as usize] > 0 {
            // The opponent threatens an open four (it has an open three, or several). To stop
            // it we must take a cell after which it has no open four to make (each such cell
            // is one where it would make a four now, and `stops_open_fours` tells exactly
            // which of those do, all threes at once); or we make a four of our own first.
            // Nothing else can matter: after its open four only a five of ours would, and a
            // move that is not a four makes no five to play.
            self.for_each_candidate(|cell| {
                if self.board.best_level(cell, me) >= FOUR
                    || (self.board.best_level(cell, opp) >= FOUR
                        && self.board.stops_open_fours(cell, opp))
                {
                    out.push(Move(cell as u16));
                }
            });
            if !out.is_empty() {
                return;
            }
            // No cell stops it and no four of ours delays it: lost in 4 whatever we play
            // (`static_verdict`'s step 6, which ends such a node of the main search before its
            // moves are asked for). Every candidate is a move, none better than another.
        }
        self.for_each_candidate(|cell| out.push(Move(cell as u16)));
    }
}

impl Game for Gomoku {
    fn move_space(&self) -> usize {
        self.board.cells.len()
    }

    fn hash(&self) -> u64 {
        self.board.stone_hash
            ^ if self.to_move == Side::Second {
                SIDE_KEY
            } else {
                0
            }
    }

    fn side_to_move(&self) -> Side {
        self.to_move
    }

    fn plies_played(&self) -> u32 {
        self.board.stones
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.status() != Status::Ongoing {
            return;
        }
        let from = out.len();
        out.extend(
            (0..self.board.cells.len())
                .filter(|&c| self.board.cells[c] == 0)
                .map(|c| Move(c as u16)),
        );
        self.drop_forbidden(out, from);
    }

    fn make(&mut self, mv: Move) {
        let cell = mv.index();
        let side = self.to_move.index();
        self.five_made = self.board.makes_five(cell, side)
            && (!self.black_is_restricted(self.to_move) || self.makes_exact_five(cell));
        self.board.place(cell, side);
        self.to_move = self.to_move.other();
    }

    fn unmake(&mut self, mv: Move) {
        self.board.remove(mv.index());
        self.to_move = self.to_move.other();
        // Play stops at a win, so the position before any move had no win in it.
        self.five_made = false;
    }

    fn status(&self) -> Status {
        if self.five_made {
            Status::Lost
        } else if self.board.stones as usize == self.board.cells.len() {
            Status::Draw
        } else {
            Status::Ongoing
        }
    }

    /// The linear evaluation of pattern, shape and level-pair counts ([`eval`]) plus threats.
    fn evaluate(&self) -> Score {
        let me = self.to_move.index();
        let weights = eval::weights_for(self.board.stones);
        let raw = eval::linear(&self.board, me, weights) + self.threat_bonus();
        raw.clamp(-(MATE_BOUND - 1), MATE_BOUND - 1)
    }

    fn max_remaining_plies(&self) -> u32 {
        self.board.cells.len() as u32 - self.board.stones
    }

    /// The threat rules (`Gomoku::threat_moves`), without renju's forbidden points.
    fn search_moves(&self, out: &mut Vec<Move>) {
        let from = out.len();
        self.threat_moves(out);
        self.drop_forbidden(out, from);
        if out.len() == from && self.black_is_restricted(self.to_move) {
            // Renju: every move the threat rules allow is forbidden (black cannot block a four
            // on a forbidden point). The game goes on, lost: any allowed move will do.
            self.for_each_candidate(|cell| out.push(Move(cell as u16)));
            self.drop_forbidden(out, from);
            if out.len() == from {
                self.legal_moves(out);
            }
        }
    }

    fn immediate_win(&self) -> Option<Move> {
        if self.status() != Status::Ongoing {
            return None;
        }
        self.first_five_cell(self.to_move).map(|c| Move(c as u16))
    }

    /// A four of the opponent (a five threat): the answer is forced, one or two blocks. An open
    /// three must be answered too, but with many moves (every counter-four, the line's cells);
    /// extending those past the horizon lets mutual threes blow a depth-4 search up a
    /// hundredfold, so the evaluation judges them instead (`threat_bonus`).
    ///
    /// Under renju black's overline points are fives in the patterns but win nothing, so
    /// black's fives are counted exactly ([`Gomoku::five_cells`]): counted from the patterns,
    /// one overline point made every white node of a search a forced one for the rest of the
    /// game, never pruned and never judged at the horizon, and a depth-1 iteration ran 500,000
    /// nodes and 420 ms of a 175 ms turn (the gomoku journal, "Renju's overline points").
    fn must_answer_threat(&self) -> bool {
        let opp = self.to_move.other();
        !self.five_made
            && self.board.level_count[opp.index()][FIVE as usize] > 0
            && (!self.black_is_restricted(opp) || self.first_five_cell(opp).is_some())
    }

    /// The fitted order's hint ([`move_order::order`]).
    fn move_order_hint(&self, mv: Move) -> i32 {
        self.order_and_strength(mv).0
    }
}

impl BoardGame for Gomoku {
    type Rules = GomokuRules;
    const NAME: &'static str = "gomoku";
    const MAX_SIDE: usize = MAX_SIDE;
    const SPARE_CORE_HELPS: bool = true;

    fn threat_labels(&self, mv: Move) -> Option<labels::MoveLabels> {
        Gomoku::threat_labels(self, mv)
    }

    fn forbidden_cells(&self) -> Option<Vec<(Move, &'static str)>> {
        self.board.geo.rules.renju.then(|| {
            self.forbidden_points()
                .into_iter()
                .map(|(mv, why)| (mv, why.name()))
                .collect()
        })
    }

    fn from_grid(
        grid: &Grid,
        to_move: Option<Side>,
        rules: &GomokuRules,
    ) -> Result<Self, PositionError> {
        let mut position = Gomoku::new(grid.rows, grid.cols, *rules)?;
        let to_move = grid.side_to_move(to_move, true)?;
        let stones = grid.cells.iter().enumerate().filter_map(|(i, s)| match s {
            Stone::Player(side) => Some((i, *side)),
            Stone::Empty => None,
        });
        position.board.set_up(stones);
        position.to_move = to_move;
        let k = rules.win_length;
        match (position.board.has_five(0), position.board.has_five(1)) {
            (true, true) => {
                return Err(PositionError::GameOver(format!(
                    "both X and O have {k} in a row"
                )));
            }
            (true, false) => {
                return Err(PositionError::GameOver(format!("X has {k} in a row")));
            }
            (false, true) => {
                return Err(PositionError::GameOver(format!("O has {k} in a row")));
            }
            _ => {}
        }
        if position.board.stones as usize == position.board.cells.len() {
            return Err(PositionError::GameOver("the board is full: a draw".into()));
        }
        Ok(position)
    }

    fn cell_of(&self, mv: Move) -> Cell {
        Cell {
            row: mv.index() / self.cols(),
            col: mv.index() % self.cols(),
        }
    }

    /// Threat search first, then the generic engine under the remaining budget.
    ///
    /// 1. A five now: play it (proven, 1 ply).
    /// 2. A VCF (continuous fours) for the mover, then a VCT (fours and threes, capped at a
    ///    quarter of the budget): play its first move, proven, with the line's length.
    /// 3. Iterative deepening with the shared table up to 85 % of what is left (every
    ///    iteration that can start does, the rest goes to step 4): on boards above
    ///    100 cells gomoku's own [`search::MainSearch`] (threats inside the tree, hard
    ///    pruning where the position is quiet), whose decisive scores are reported as proofs
    ///    only once the exact engine confirms them; on smaller boards the exact engine.
    /// 4. A defence check: if the opponent has a VCF or a VCT (any length, 25,000 nodes a try)
    ///    after the chosen move, the first candidate not shown to lose is played instead: the
    ///    opponent's key cell, then the engine's earlier choices, then by threat order.
    ///
    /// The first move is always ready (the engine's depth-1 iteration ignores time), so even a
    /// 1 ms budget returns a legal move. `Algorithm::Minimax` and `analysis` go straight to the
    /// exact engine: analysis scores every legal move (on 15x15 that is the whole board, searched
    /// at depth 1 and deeper only as the budget allows; a restriction of the analysed moves to
    /// the candidate area would hide the scores the client asked for).
    fn think(
        &self,
        limits: &SearchLimits,
        options: SearchOptions,
        table: &TranspositionTable,
    ) -> SearchReport {
        self.choose_move(limits, options, table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(rows: &[&str]) -> Gomoku {
        let grid = Grid::parse(rows, MAX_SIDE).unwrap();
        Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap()
    }

    #[test]
    fn make_then_unmake_restores_hash_and_patterns() {
        let mut p = position(&[
            ".......", ".......", "..X....", "...O...", ".......", ".......", ".......",
        ]);
        let (hash, eval) = (p.hash(), p.evaluate());
        p.make(Move(10));
        assert_ne!(p.hash(), hash);
        assert!(p.patterns_consistent());
        p.unmake(Move(10));
        assert_eq!((p.hash(), p.evaluate()), (hash, eval));
        assert!(p.patterns_consistent());
    }

    #[test]
    fn four_in_a_row_is_an_immediate_win() {
        let p = position(&[
            "XXXX...", "OOO....", "O......", ".......", ".......", ".......", ".......",
        ]);
        assert_eq!(p.immediate_win(), Some(Move(4)));
    }
}
