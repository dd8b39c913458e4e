//! Connect-4: rules on bitboards, an exact solver, and a `think` that solves whenever it can.
//!
//! - [`position`]: the two-bitboard position and its bit tricks.
//! - [`book`]: the opening book, exact values of every position of the 7 x 6 board with 12
//!   discs or at most 8.
//! - [`order`]: the solver's move sorter (threats created, centre first).
//! - [`solver`]: the exact solver (null-window bisection, bounded table entries).
//! - [`score`]: Pons' score units, shared by the solver and the book, and plies to the end.
//! - [`eval`]: the heuristic for the generic engine when the solver runs out of budget.
//!
//! [`Connect4`] implements the engine's [`Game`] so the generic alpha-beta can play it (with a
//! heuristic at its horizon, and for plain-minimax demonstrations), and [`BoardGame::think`]
//! drives the exact solver first (on the standard board with the opening book, so that every
//! position of up to 12 discs is exact at once): it gets half the time and node budget, and the generic search
//! takes what is left if the solver could not finish, so a legal move always comes back in time.
//!
//! Moves are column indices (`Move(col)`, 0-based from the left). Boards from 4 x 4 up to any
//! width x height with `width * (height + 1) <= 64` are played (at most 12 columns, 15 rows).

pub mod book;
pub mod eval;
pub mod order;
pub mod position;
pub mod score;
pub mod solver;

use std::time::Instant;

use crate::engine::{
    Algorithm, Deadline, Game, Iteration, Line, Move, MoveScore, Outcome, Proof, RootFilter, Score,
    SearchLimits, SearchOptions, SearchReport, Side, Status, StopReason, TranspositionTable, WIN,
    search,
};

use super::{BoardGame, Cell, Grid, PositionError, Stone};
use book::STANDARD_BOOK;
use position::{Geometry, Position};
use score::distance_to_end;
use solver::{Solver, mix};

/// Nodes the proven line may always cost, however fast the solve was (see
/// [`Connect4::proven_line`]).
const PV_MIN_NODES: u64 = 50_000;
/// The same when the book answered: the line walks through the book almost free, and past its
/// 12 discs each step is a solve of its own, so a bigger allowance mostly bought the time to
/// fail one (about 50,000 nodes, 10-25 ms, on a book answer that took a microsecond).
const BOOK_PV_MIN_NODES: u64 = 5_000;

/// A Connect-4 game in progress: the board's shape and the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connect4 {
    geometry: Geometry,
    position: Position,
}

/// Share of the time and node budget the exact solver gets before the generic search takes
/// over, in percent. A solve that fails in half the budget rarely finishes in all of it (the
/// cost grows exponentially with the empty cells), while the heuristic search still needs time
/// to find a good move.
const SOLVER_SHARE_PERCENT: u32 = 50;

impl Connect4 {
    /// The empty standard board, 7 columns x 6 rows, X to move.
    pub fn new() -> Self {
        Self::empty(Geometry::standard())
    }

    /// An empty board of `width` columns and `height` rows.
    pub fn with_size(width: u32, height: u32) -> Result<Self, PositionError> {
        Geometry::new(width, height)
            .map(Self::empty)
            .ok_or_else(|| PositionError::Shape(size_limits(width, height)))
    }

    fn empty(geometry: Geometry) -> Self {
        Connect4 {
            geometry,
            position: Position::default(),
        }
    }

    /// The standard board after a move sequence in Pons' notation: 1-based column digits, the
    /// first player first (`"4453"`). Refuses a full column, a bad digit or a move after the
    /// game ended.
    pub fn from_moves(moves: &str) -> Result<Self, PositionError> {
        let mut game = Self::new();
        for (i, ch) in moves.chars().enumerate() {
            let col = ch
                .to_digit(10)
                .and_then(|d| d.checked_sub(1))
                .filter(|&c| c < game.geometry.width)
                .ok_or_else(|| {
                    PositionError::Rules(format!("move {}: '{ch}' is not a column", i + 1))
                })?;
            if game.status() != Status::Ongoing {
                return Err(PositionError::GameOver(format!(
                    "move {} comes after the game ended",
                    i + 1
                )));
            }
            if !game.position.can_play(&game.geometry, col) {
                return Err(PositionError::Rules(format!(
                    "move {}: column {ch} is full",
                    i + 1
                )));
            }
            game.make(Move(col as u16));
        }
        Ok(game)
    }

    pub fn width(&self) -> u32 {
        self.geometry.width
    }

    pub fn height(&self) -> u32 {
        self.geometry.height
    }

    /// The bitboard position (for the solver and benchmarks).
    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The exact result of this position for its side to move when the opening book holds it
    /// (the standard board, at most 8 discs or exactly 12): no search, a look-up.
    pub fn book_proof(&self) -> Option<Proof> {
        let value = STANDARD_BOOK.value(&self.geometry, &self.position)?;
        Some(self.engine_score(value).1)
    }

    /// Engine score and proof of a solver value (Pons' units) for a game `moves` plies in.
    fn engine_score(&self, value: i32) -> (Score, Proof) {
        let plies = distance_to_end(value, self.position.moves, self.geometry.cells());
        let (score, outcome) = match value.signum() {
            1 => (WIN - plies as Score, Outcome::Win),
            -1 => (-(WIN - plies as Score), Outcome::Loss),
            _ => (0, Outcome::Draw),
        };
        (
            score,
            Proof {
                outcome,
                plies_to_end: plies,
            },
        )
    }

    /// The proven line from `first`, a column reaching the exact `value` of this position:
    /// then, for each side in turn, a column keeping the value (the winner's fastest win, the
    /// loser's longest resistance, a draw's drawing move), until the game ends. Each step is a
    /// few null-window searches on a warm table, but a long drawn line is not free, so the line
    /// may cost at most as many nodes again as the solve did (at least [`PV_MIN_NODES`], or
    /// [`BOOK_PV_MIN_NODES`] after the book answered), and
    /// ends early, still proven as far as it goes, when that or another limit runs out.
    fn proven_line(&self, solver: &mut Solver<'_>, value: i32, first: u32) -> Vec<Move> {
        let g = self.geometry;
        let allowance = if solver.book_hits > 0 {
            BOOK_PV_MIN_NODES
        } else {
            PV_MIN_NODES
        };
        solver.allow_more_nodes(solver.nodes.max(allowance));
        let mut line = vec![Move(first as u16)];
        let mut pos = self.position;
        let mut value = value;
        let mut col = first;
        loop {
            pos.play_column(&g, col);
            // Pons' value counts from the game's end, so the side now to move is worth its
            // negation.
            value = -value;
            if g.has_four(pos.opponent()) || pos.moves >= g.cells() {
                return line;
            }
            match solver.best_column(&pos, value) {
                Some(next) => {
                    col = next;
                    line.push(Move(col as u16));
                }
                None => return line,
            }
        }
    }

    /// Solves exactly under `limits`; `None` when a limit stopped the solver first.
    /// With `root`, only the columns it allows are played (and, with `analysis`, scored): each
    /// is solved on its own and the best taken, since the position's own value may come from
    /// a column the client ruled out. With `multipv` k > 1 every allowed column is solved the
    /// same way and the k best get a proven line each ([`SearchReport::lines`]).
    fn solve_report(
        &self,
        solver: &mut Solver<'_>,
        options: SearchOptions,
        root: Option<&RootFilter>,
        start: Instant,
    ) -> Option<SearchReport> {
        let pos = &self.position;
        let analysis = options.analysis;
        let mut columns = Vec::new();
        let (value, best_col, root_moves) = if analysis || root.is_some() || options.multipv > 1 {
            let allowed = |col: u32| RootFilter::admits(root, Move(col as u16));
            let mut scores = solver.analyse_columns(pos, allowed)?;
            // Best first; ties keep column order.
            scores.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
            let (best_col, value) = *scores.first()?;
            columns.clone_from(&scores);
            let root_moves = scores
                .iter()
                .map(|&(col, s)| {
                    let (score, proof) = self.engine_score(s);
                    MoveScore {
                        mv: Move(col as u16),
                        score,
                        proof: Some(proof),
                        depth: self.max_remaining_plies(),
                    }
                })
                .collect();
            let root_moves = if analysis { root_moves } else { Vec::new() };
            (value, best_col, root_moves)
        } else {
            let value = solver.solve(pos)?;
            (value, solver.best_column(pos, value)?, Vec::new())
        };
        let (score, proof) = self.engine_score(value);
        let depth = self.max_remaining_plies();
        let pv = self.proven_line(solver, value, best_col);
        let lines = if options.multipv > 1 {
            let mut lines = Vec::with_capacity(options.multipv.min(columns.len()));
            for (i, &(col, col_value)) in columns.iter().take(options.multipv).enumerate() {
                let (score, proof) = self.engine_score(col_value);
                let line = if i == 0 {
                    pv.clone()
                } else {
                    self.proven_line(solver, col_value, col)
                };
                lines.push(Line {
                    mv: Move(col as u16),
                    score,
                    proof: Some(proof),
                    depth,
                    pv: line,
                });
            }
            lines
        } else {
            Vec::new()
        };
        Some(SearchReport {
            best_move: Some(Move(best_col as u16)),
            score,
            proof: Some(proof),
            depth,
            nodes: solver.nodes,
            table: solver.stats,
            elapsed: start.elapsed(),
            stop_reason: StopReason::Proven,
            pv,
            root_moves,
            lines,
            // The solver's one "iteration" is the whole game tree, so the report's depth and
            // its iterations agree.
            iterations: vec![Iteration {
                depth,
                score,
                best_move: Move(best_col as u16),
                nodes: solver.nodes,
            }],
            threat_proof: None,
        })
    }
}

impl Default for Connect4 {
    fn default() -> Self {
        Self::new()
    }
}

fn size_limits(width: u32, height: u32) -> String {
    format!(
        "a Connect-4 board of {width} columns x {height} rows is not supported: at least 4 on a \
         side and columns x (rows + 1) at most 64"
    )
}

/// A deadline at `percent` of the way from `start` to `deadline`.
fn share_of(start: Instant, deadline: Deadline, percent: u32) -> Deadline {
    let budget = deadline.0.saturating_duration_since(start);
    Deadline(start + budget * percent / 100)
}

impl Game for Connect4 {
    fn move_space(&self) -> usize {
        self.geometry.width as usize
    }

    fn hash(&self) -> u64 {
        mix(self.position.key())
    }

    fn side_to_move(&self) -> Side {
        if self.position.moves.is_multiple_of(2) {
            Side::First
        } else {
            Side::Second
        }
    }

    fn plies_played(&self) -> u32 {
        self.position.moves
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.status() != Status::Ongoing {
            return;
        }
        let g = &self.geometry;
        out.extend(
            (0..g.width)
                .filter(|&col| self.position.can_play(g, col))
                .map(|col| Move(col as u16)),
        );
    }

    #[inline]
    fn make(&mut self, mv: Move) {
        self.position.play_column(&self.geometry, mv.0 as u32);
    }

    #[inline]
    fn unmake(&mut self, mv: Move) {
        let cell = self.position.top_disc(&self.geometry, mv.0 as u32);
        self.position.undo(cell);
    }

    fn status(&self) -> Status {
        if self.geometry.has_four(self.position.opponent()) {
            Status::Lost
        } else if self.position.moves == self.geometry.cells() {
            Status::Draw
        } else {
            Status::Ongoing
        }
    }

    fn evaluate(&self) -> Score {
        eval::evaluate(&self.geometry, &self.position)
    }

    fn max_remaining_plies(&self) -> u32 {
        self.geometry.cells() - self.position.moves
    }

    /// The winning move if there is one; else the non-losing moves; else (every move loses on
    /// the next ply, all equally fast) just one legal move.
    fn search_moves(&self, out: &mut Vec<Move>) {
        let g = &self.geometry;
        let pos = &self.position;
        if let Some(mv) = self.immediate_win() {
            out.push(mv);
            return;
        }
        let non_losing = pos.non_losing_moves(g);
        let cells = if non_losing != 0 {
            non_losing
        } else {
            let playable = pos.playable(g);
            playable & playable.wrapping_neg()
        };
        out.extend(
            (0..g.width)
                .filter(|&col| cells & g.column_mask(col) != 0)
                .map(|col| Move(col as u16)),
        );
    }

    fn immediate_win(&self) -> Option<Move> {
        let wins = self.position.winning_moves(&self.geometry);
        (wins != 0).then(|| Move(self.geometry.column_of(wins & wins.wrapping_neg()) as u16))
    }

    /// Threats the move creates, then closeness to the centre.
    fn move_order_hint(&self, mv: Move) -> i32 {
        let g = &self.geometry;
        let col = mv.0 as u32;
        let cell = self.position.landing_cell(g, col);
        let threats = self.position.threats_after(g, cell) as i32;
        let off_centre = (2 * col as i32 - (g.width as i32 - 1)).abs();
        threats * 32 + (g.width as i32 - off_centre)
    }
}

impl BoardGame for Connect4 {
    type Rules = ();
    const NAME: &'static str = "connect4";
    /// 15 rows (on 4 columns) or 12 columns (on 4 rows) are the extremes of 64-bit boards.
    const MAX_SIDE: usize = 15;

    fn from_grid(grid: &Grid, to_move: Option<Side>, _rules: &()) -> Result<Self, PositionError> {
        let (width, height) = (grid.cols as u32, grid.rows as u32);
        let geometry = Geometry::new(width, height)
            .ok_or_else(|| PositionError::Shape(size_limits(width, height)))?;
        // Read each column from the bottom; a disc above an empty cell floats.
        let mut stones = [0u64; 2];
        for col in 0..grid.cols {
            let mut empty_below = false;
            for row in (0..grid.rows).rev() {
                match grid.at(row, col) {
                    Stone::Empty => empty_below = true,
                    Stone::Player(_) if empty_below => {
                        return Err(PositionError::Floating { row, col });
                    }
                    Stone::Player(side) => {
                        let height_from_bottom = (grid.rows - 1 - row) as u32;
                        stones[side.index()] |=
                            1u64 << (col as u32 * (height + 1) + height_from_bottom);
                    }
                }
            }
        }
        let side = grid.side_to_move(to_move, false)?;
        let (x_four, o_four) = (geometry.has_four(stones[0]), geometry.has_four(stones[1]));
        let mask = stones[0] | stones[1];
        match (x_four, o_four) {
            (true, true) => {
                return Err(PositionError::GameOver(
                    "both X and O have four in a row".into(),
                ));
            }
            (true, false) => return Err(PositionError::GameOver("X has four in a row".into())),
            (false, true) => return Err(PositionError::GameOver("O has four in a row".into())),
            _ if mask == geometry.board => {
                return Err(PositionError::GameOver("the board is full: a draw".into()));
            }
            _ => {}
        }
        Ok(Connect4 {
            geometry,
            position: Position {
                current: stones[side.index()],
                mask,
                moves: mask.count_ones(),
            },
        })
    }

    fn cell_of(&self, mv: Move) -> Cell {
        let col = mv.0 as u32;
        let stack = (self.position.mask & self.geometry.column_mask(col)).count_ones();
        Cell {
            row: (self.geometry.height - 1 - stack.min(self.geometry.height - 1)) as usize,
            col: col as usize,
        }
    }

    /// Solves exactly when the budget allows, else falls back to the generic engine with the
    /// heuristic. Plain minimax, and a depth limit shallower than the game's end, go straight
    /// to the generic engine.
    fn think(
        &self,
        limits: &SearchLimits,
        options: SearchOptions,
        table: &TranspositionTable,
    ) -> SearchReport {
        let start = Instant::now();
        let solvable = options.algorithm == Algorithm::AlphaBeta
            && self.status() == Status::Ongoing
            && limits
                .max_depth
                .is_none_or(|depth| depth >= self.max_remaining_plies());
        if !solvable {
            return search(self, limits, options, table);
        }
        table.new_search();
        let solver_limits = SearchLimits {
            deadline: limits
                .deadline
                .map(|d| share_of(start, d, SOLVER_SHARE_PERCENT)),
            max_depth: None,
            max_nodes: limits
                .max_nodes
                .map(|n| n * SOLVER_SHARE_PERCENT as u64 / 100),
            cancel: limits.cancel.clone(),
            // The solver has no iterations to report; the fallback search below does.
            progress: None,
            // The root's restriction is applied by `solve_report`, not inside the solver.
            root: None,
        };
        let mut solver = Solver::new(self.geometry, table, solver_limits).with_book(&STANDARD_BOOK);
        if let Some(mut report) =
            self.solve_report(&mut solver, options, limits.root.as_ref(), start)
        {
            if solver.book_hits > 0 {
                report.stop_reason = StopReason::Book;
            }
            return report;
        }
        // The solver ran out of budget: the generic search gets the rest. Its first iteration
        // ignores time and node limits, so a legal move comes back even if none is left.
        let fallback_limits = SearchLimits {
            max_nodes: limits.max_nodes.map(|n| n.saturating_sub(solver.nodes)),
            ..limits.clone()
        };
        let mut report = search(self, &fallback_limits, options, table);
        report.nodes += solver.nodes;
        report.table.probes += solver.stats.probes;
        report.table.hits += solver.stats.hits;
        report.elapsed = start.elapsed();
        report
    }
}

#[cfg(test)]
mod tests;
