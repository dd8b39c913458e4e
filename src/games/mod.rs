//! The games kibitz plays, each behind the engine's [`Game`] trait, plus what every board game
//! shares: reading a board given as text rows ([`Grid`]) and validating it ([`PositionError`]).
//!
//! [`BoardGame`] is what the service needs on top of the rules: build a position from a grid,
//! name a move's cell, and think about a position (by default the generic engine; a game with a
//! better driver, such as an exact solver or a threat search, overrides [`BoardGame::think`]).
//!
//! - [`tictactoe`]: bitboards, solved by the engine.
//! - [`connect4`]: bitboards and a Pons-style exact solver, with the engine as fallback.
//! - [`gomoku`]: any m,n,k-game on 5 to 25 cells a side; incremental line patterns, threat
//!   searches (VCF, VCT) before the engine, and the Gomocup piskvork protocol.
//! - [`notation`]: moves named as other tools name them (`h8`, Connect-4 column digits).

pub mod connect4;
pub mod gomoku;
pub mod notation;
pub mod tictactoe;

use std::fmt::Debug;

use crate::engine::{
    Game, Move, SearchLimits, SearchOptions, SearchReport, Side, TranspositionTable, search,
};

/// A cell, 0-based from the top-left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub row: usize,
    pub col: usize,
}

/// What a grid cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stone {
    Empty,
    Player(Side),
}

impl Stone {
    /// The board text's letter: `.` empty, [`Side::letter`] for a stone.
    pub fn letter(self) -> char {
        match self {
            Stone::Empty => '.',
            Stone::Player(side) => side.letter(),
        }
    }

    /// The stone a board text's letter stands for, in either case; `None` for anything else.
    pub fn from_letter(letter: char) -> Option<Stone> {
        match letter {
            '.' => Some(Stone::Empty),
            'X' | 'x' => Some(Stone::Player(Side::First)),
            'O' | 'o' => Some(Stone::Player(Side::Second)),
            _ => None,
        }
    }
}

/// A board read from text rows, top to bottom: `.` empty, `X`/`x` first player, `O`/`o` second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub rows: usize,
    pub cols: usize,
    /// Row-major, `rows * cols` cells.
    pub cells: Vec<Stone>,
}

impl Grid {
    /// Parses rows of text, refusing anything larger than `max_side` on either side before
    /// looking at the cells (the caller's body limit bounds the input itself).
    pub fn parse<S: AsRef<str>>(rows: &[S], max_side: usize) -> Result<Grid, PositionError> {
        if rows.is_empty() {
            return Err(PositionError::Shape("the board has no rows".into()));
        }
        let cols = rows[0].as_ref().chars().count();
        if cols == 0 {
            return Err(PositionError::Shape("row 0 is empty".into()));
        }
        if rows.len() > max_side || cols > max_side {
            return Err(PositionError::Shape(format!(
                "the board is {} rows x {} columns; at most {max_side} on a side",
                rows.len(),
                cols
            )));
        }
        let mut cells = Vec::with_capacity(rows.len() * cols);
        for (r, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            let len = row.chars().count();
            if len != cols {
                return Err(PositionError::Shape(format!(
                    "row {r} has {len} cells; row 0 has {cols}"
                )));
            }
            for (c, ch) in row.chars().enumerate() {
                cells.push(Stone::from_letter(ch).ok_or(PositionError::BadCell {
                    row: r,
                    col: c,
                    found: ch,
                })?);
            }
        }
        Ok(Grid {
            rows: rows.len(),
            cols,
            cells,
        })
    }

    /// An empty board of `rows` x `cols`.
    pub fn empty(rows: usize, cols: usize) -> Grid {
        Grid {
            rows,
            cols,
            cells: vec![Stone::Empty; rows * cols],
        }
    }

    pub fn at(&self, row: usize, col: usize) -> Stone {
        self.cells[row * self.cols + col]
    }

    /// Puts `stone` on the cell at `row`, `col` (no rule checked: a board, not a move).
    pub fn set(&mut self, row: usize, col: usize, stone: Stone) {
        self.cells[row * self.cols + col] = stone;
    }

    /// The board as text rows, top to bottom, in upper case: what [`Grid::parse`] reads.
    pub fn to_rows(&self) -> Vec<String> {
        self.cells
            .chunks(self.cols.max(1))
            .map(|row| row.iter().map(|s| s.letter()).collect())
            .collect()
    }

    /// A line of at least `length` stones of one side in a row (across, down or diagonal),
    /// the longest found first, as its cells from one end to the other: the line that won a
    /// finished game, for an answer that says who won and where. `None` when there is none.
    pub fn winning_line(&self, length: usize) -> Option<(Side, Vec<Cell>)> {
        let mut best: Option<(Side, Vec<Cell>)> = None;
        let directions: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];
        for row in 0..self.rows {
            for col in 0..self.cols {
                let Stone::Player(side) = self.at(row, col) else {
                    continue;
                };
                for (dr, dc) in directions {
                    // Start only at a line's first stone.
                    let before = (row as isize - dr, col as isize - dc);
                    if self.stone_at(before) == Some(Stone::Player(side)) {
                        continue;
                    }
                    let mut cells = Vec::new();
                    let mut at = (row as isize, col as isize);
                    while self.stone_at(at) == Some(Stone::Player(side)) {
                        cells.push(Cell {
                            row: at.0 as usize,
                            col: at.1 as usize,
                        });
                        at = (at.0 + dr, at.1 + dc);
                    }
                    let longer = best.as_ref().is_none_or(|(_, b)| cells.len() > b.len());
                    if cells.len() >= length && longer {
                        best = Some((side, cells));
                    }
                }
            }
        }
        best
    }

    /// The stone at a signed position, `None` off the board.
    fn stone_at(&self, (row, col): (isize, isize)) -> Option<Stone> {
        let (row, col) = (usize::try_from(row).ok()?, usize::try_from(col).ok()?);
        (row < self.rows && col < self.cols).then(|| self.at(row, col))
    }

    /// Stones of each side: (first, second).
    pub fn counts(&self) -> (usize, usize) {
        let first = self
            .cells
            .iter()
            .filter(|&&s| s == Stone::Player(Side::First))
            .count();
        let second = self
            .cells
            .iter()
            .filter(|&&s| s == Stone::Player(Side::Second))
            .count();
        (first, second)
    }

    /// The side to move implied by the stone counts, or the requested one when the counts allow
    /// it. Alternating play from an empty board with the first player starting leaves the first
    /// player either level (first to move) or one stone ahead (second to move).
    pub fn side_to_move(
        &self,
        requested: Option<Side>,
        allow_setup: bool,
    ) -> Result<Side, PositionError> {
        let (x, o) = self.counts();
        let natural = if x == o {
            Side::First
        } else if x == o + 1 {
            Side::Second
        } else if allow_setup && requested.is_some() && x.abs_diff(o) <= 1 {
            return Ok(requested.unwrap_or(Side::First));
        } else {
            return Err(PositionError::Counts(format!(
                "X has {x} stones and O has {o}: X moves first, so X has as many stones as O or one more"
            )));
        };
        match requested {
            Some(side) if side != natural && !allow_setup => Err(PositionError::Counts(format!(
                "X has {x} stones and O has {o}, so {} is to move, not {}",
                natural.letter(),
                side.letter()
            ))),
            Some(side) => Ok(side),
            None => Ok(natural),
        }
    }
}

/// Why a board cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("{0}")]
    Shape(String),
    #[error("row {row}, column {col}: '{found}' is not a cell; use '.', 'X' or 'O'")]
    BadCell { row: usize, col: usize, found: char },
    #[error("{0}")]
    Counts(String),
    #[error("row {row}, column {col}: the disc floats above an empty cell")]
    Floating { row: usize, col: usize },
    #[error("the game is already over: {0}")]
    GameOver(String),
    #[error("{0}")]
    Rules(String),
}

/// A game the service can play: rules plus the board format and a move's cell.
pub trait BoardGame: Game + Debug {
    /// Game-specific options (gomoku's win length and overline rule, ...).
    type Rules: Clone + Debug + Default + PartialEq + Send + Sync + 'static;

    /// The name clients use (`"tictactoe"`, ...).
    const NAME: &'static str;

    /// Largest board side accepted, checked before a board is read cell by cell.
    const MAX_SIDE: usize;

    /// Whether [`BoardGame::think`] plays better with a helper thread
    /// (`SearchOptions::helper_threads`) when the service has an idle core: gomoku's threat
    /// search does (docs/journal/search.md, "Lazy SMP"). The others search on one thread, which
    /// keeps their node counts those of one search.
    const SPARE_CORE_HELPS: bool = false;

    /// Builds a position, rejecting boards that cannot arise in the game.
    fn from_grid(
        grid: &Grid,
        to_move: Option<Side>,
        rules: &Self::Rules,
    ) -> Result<Self, PositionError>;

    /// The cell a move plays into (Connect-4: the landing cell).
    fn cell_of(&self, mv: Move) -> Cell;

    /// Under rules that forbid some empty points to a player (renju: black's double threes,
    /// double fours and overlines), those points now, with the reason's name, in cell order;
    /// `None` when the rules forbid nothing.
    fn forbidden_cells(&self) -> Option<Vec<(Move, &'static str)>> {
        None
    }

    /// What playing `mv` makes and blocks in threat terms (gomoku's [`gomoku::labels`]: a five,
    /// an open four, ...; under renju, black's forbidden point instead); `None` for a game
    /// without such labels, an illegal move or a finished game. Callable for any move of the
    /// position: the suggested one, or the first move of each line.
    fn threat_labels(&self, _mv: Move) -> Option<gomoku::labels::MoveLabels> {
        None
    }

    /// Searches the position. The generic engine by default.
    fn think(
        &self,
        limits: &SearchLimits,
        options: SearchOptions,
        table: &TranspositionTable,
    ) -> SearchReport {
        search(self, limits, options, table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_reads_rows_top_to_bottom_in_either_case() {
        let grid = Grid::parse(&["x.O", "...", "X.o"], 10).unwrap();
        assert_eq!((grid.rows, grid.cols), (3, 3));
        assert_eq!(grid.at(0, 0), Stone::Player(Side::First));
        assert_eq!(grid.at(0, 2), Stone::Player(Side::Second));
        assert_eq!(grid.at(2, 2), Stone::Player(Side::Second));
        assert_eq!(grid.counts(), (2, 2));
    }

    #[test]
    fn a_grid_written_as_rows_reads_back_the_same() {
        let mut grid = Grid::empty(2, 3);
        grid.set(0, 2, Stone::Player(Side::First));
        grid.set(1, 0, Stone::Player(Side::Second));
        assert_eq!(grid.to_rows(), ["..X", "O.."]);
        assert_eq!(Grid::parse(&grid.to_rows(), 10).unwrap(), grid);
        assert_eq!(Stone::from_letter('x').map(Stone::letter), Some('X'));
        assert_eq!(Stone::from_letter('#'), None);
    }

    #[test]
    fn grid_names_the_bad_cell() {
        let err = Grid::parse(&["...", ".#."], 10).unwrap_err();
        assert_eq!(
            err,
            PositionError::BadCell {
                row: 1,
                col: 1,
                found: '#'
            }
        );
    }

    #[test]
    fn grid_refuses_ragged_and_oversized_boards() {
        assert!(matches!(
            Grid::parse(&["...", ".."], 10),
            Err(PositionError::Shape(_))
        ));
        assert!(matches!(
            Grid::parse(&["..........."], 10),
            Err(PositionError::Shape(_))
        ));
        assert!(matches!(
            Grid::parse::<&str>(&[], 10),
            Err(PositionError::Shape(_))
        ));
    }

    #[test]
    fn the_winning_line_is_found_in_every_direction() {
        let across = Grid::parse(&["...", "XXX", "OO."], 3).unwrap();
        let (side, cells) = across.winning_line(3).unwrap();
        assert_eq!(side, Side::First);
        assert_eq!(
            cells,
            (0..3).map(|col| Cell { row: 1, col }).collect::<Vec<_>>()
        );
        let anti = Grid::parse(&["X.O", "XO.", "O.X"], 3).unwrap();
        let (side, cells) = anti.winning_line(3).unwrap();
        assert_eq!(side, Side::Second);
        assert_eq!(
            cells,
            [(0, 2), (1, 1), (2, 0)]
                .map(|(row, col)| Cell { row, col })
                .to_vec()
        );
        let none = Grid::parse(&["XO.", "OX.", "..."], 3).unwrap();
        assert_eq!(none.winning_line(3), None);
        // The longer of two lines.
        let two = Grid::parse(&["XXXX.", "OOOOO", "XX...", ".....", "....."], 5).unwrap();
        assert_eq!(two.winning_line(4).unwrap().0, Side::Second);
    }

    #[test]
    fn side_to_move_follows_the_counts() {
        let grid = Grid::parse(&["X..", "...", "..."], 3).unwrap();
        assert_eq!(grid.side_to_move(None, false), Ok(Side::Second));
        assert!(grid.side_to_move(Some(Side::First), false).is_err());
        assert_eq!(grid.side_to_move(Some(Side::First), true), Ok(Side::First));
        let bad = Grid::parse(&["XX.", "...", "..."], 3).unwrap();
        assert!(matches!(
            bad.side_to_move(None, false),
            Err(PositionError::Counts(_))
        ));
    }
}
