//! A game given as the moves that led to it: read (JSON cells, columns, or the game's notation,
//! see [`crate::games::notation`]) and replayed from the empty board or a given one, refusing
//! the first move that cannot be played with its ply and why (off the board, occupied, column
//! full, game already over, renju forbidden point, a name that does not read).
//!
//! `POST /move` replays a list to reach the position it asks about; `POST /review` to judge
//! each ply. Both refuse a list the same way.

use super::ServiceError;
use super::games::ServedGame;
use crate::engine::{Move, Side, Status};
use crate::games::notation::{Notation, Spot};
use crate::games::{BoardGame, Cell, Grid, Stone};

/// A move as the client wrote it in a JSON list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayedMove {
    Cell {
        row: usize,
        col: usize,
    },
    /// Connect-4: a column, 0-based from the left.
    Column(usize),
    /// The move's name in the game's notation (`"h8"`, Connect-4 `"4"`).
    Named(String),
}

/// A game's moves as the client wrote them: a JSON list, or one notation string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveList {
    Listed(Vec<PlayedMove>),
    Text(String),
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::Listed(Vec::new())
    }
}

/// A position of the replayed game, as a search takes it.
pub struct Replayed {
    pub rows: Vec<String>,
    pub to_move: Side,
    pub status: Status,
}

/// The replayed game.
pub struct Replay<G> {
    /// With `keep_positions`: `positions[i]` is before move `i`, the last one after every move.
    pub positions: Vec<Replayed>,
    /// The cells the moves filled, in order.
    pub played: Vec<Cell>,
    /// The board and position after the last move.
    pub grid: Grid,
    pub last: G,
}

/// The empty board of the game's default size (as `GET /games` describes it).
pub fn default_board<G: ServedGame>() -> Vec<String> {
    let board = G::info().board;
    Grid::empty(board.default_rows, board.default_cols).to_rows()
}

/// How moves are named on `grid` in game `G`.
pub fn notation_of<G: ServedGame>(grid: &Grid) -> Notation {
    Notation {
        rows: grid.rows,
        cols: grid.cols,
        columns: G::info().board.gravity,
    }
}

/// Why `spot`, the list's move `index`, is not among the legal moves of `position` (grid
/// `grid`), in words.
pub(super) fn why_illegal<G: BoardGame>(
    position: &G,
    grid: &Grid,
    spot: Spot,
    index: usize,
) -> String {
    match position.status() {
        Status::Ongoing => {}
        Status::Lost if index == 0 => return "the starting position is already won".into(),
        Status::Lost => {
            return format!(
                "the game is already over: {} won with ply {index}",
                position.side_to_move().other().letter()
            );
        }
        Status::Draw => return format!("the game is already over: a draw after ply {index}"),
    }
    match spot {
        Spot::Column(col) if col >= grid.cols => format!(
            "column {col} is off the board (columns 0 to {})",
            grid.cols - 1
        ),
        Spot::Column(col) => format!("column {col} is full"),
        Spot::Cell(Cell { row, col }) if row >= grid.rows || col >= grid.cols => format!(
            "row {row}, column {col} is off the board ({} rows x {} columns)",
            grid.rows, grid.cols
        ),
        Spot::Cell(Cell { row, col }) if grid.at(row, col) != Stone::Empty => {
            format!("row {row}, column {col} is already occupied")
        }
        Spot::Cell(cell) => {
            let forbidden = position.forbidden_cells().and_then(|points| {
                points
                    .into_iter()
                    .find(|&(mv, _)| position.cell_of(mv) == cell)
            });
            if let Some((_, why)) = forbidden {
                return format!(
                    "row {}, column {} is forbidden to black under renju ({why})",
                    cell.row, cell.col
                );
            }
            format!(
                "row {}, column {} is not a legal move here",
                cell.row, cell.col
            )
        }
    }
}

/// The moves read as spots on a board named by `notation`, each refusal naming its ply.
fn read<G: ServedGame>(
    moves: &MoveList,
    notation: &Notation,
) -> Result<Vec<(Spot, String)>, ServiceError> {
    read_field::<G>(moves, notation, "/moves")
}

/// [`read`] for a list written at `field` (`/moves`, `/searchmoves`, `/exclude`): a refusal's
/// pointer is `field`, or `field/i` for the list's move `i`.
pub(super) fn read_field<G: ServedGame>(
    moves: &MoveList,
    notation: &Notation,
    field: &str,
) -> Result<Vec<(Spot, String)>, ServiceError> {
    match moves {
        MoveList::Text(text) => notation
            .parse(text)
            .map(|spots| {
                spots
                    .into_iter()
                    .map(|spot| (spot, String::from(field)))
                    .collect()
            })
            .map_err(|e| ServiceError::IllegalMove {
                index: e.index,
                pointer: field.into(),
                reason: e.reason,
            }),
        MoveList::Listed(list) => list
            .iter()
            .enumerate()
            .map(|(index, played)| {
                let pointer = format!("{field}/{index}");
                let fail = |reason: String| ServiceError::IllegalMove {
                    index,
                    pointer: pointer.clone(),
                    reason,
                };
                let spot = match played {
                    PlayedMove::Column(_) if !notation.columns => {
                        return Err(fail(format!(
                            "a move in {} is a cell {{\"row\", \"col\"}}, not a column",
                            G::NAME
                        )));
                    }
                    PlayedMove::Cell { .. } if notation.columns => {
                        return Err(fail(format!(
                            "a move in {} is a column number (0-based from the left), not a cell",
                            G::NAME
                        )));
                    }
                    PlayedMove::Column(col) => Spot::Column(*col),
                    &PlayedMove::Cell { row, col } => Spot::Cell(Cell { row, col }),
                    PlayedMove::Named(name) => notation.parse_one(name).map_err(fail)?,
                };
                Ok((spot, pointer))
            })
            .collect(),
    }
}

/// Replays `moves` from `board` (the game's empty default board when `None`), refusing the
/// first that cannot be played. With `keep_positions`, every position on the way is kept.
pub fn replay<G: ServedGame>(
    board: Option<&[String]>,
    to_move: Option<Side>,
    rules: &G::Rules,
    moves: &MoveList,
    keep_positions: bool,
) -> Result<Replay<G>, ServiceError> {
    let rows = board.map_or_else(default_board::<G>, <[String]>::to_vec);
    let mut grid = Grid::parse(&rows, G::MAX_SIDE)?;
    let mut position = G::from_grid(&grid, to_move, rules)?;
    let notation = notation_of::<G>(&grid);
    let spots = read::<G>(moves, &notation)?;
    // Each move fills a cell, so a legal list is never longer than the board has cells.
    let empty = grid.cells.iter().filter(|&&s| s == Stone::Empty).count();
    if spots.len() > empty {
        return Err(ServiceError::OutOfRange {
            pointer: "/moves",
            message: format!(
                "{} moves, but the board has only {empty} empty cells",
                spots.len()
            ),
        });
    }
    let mut positions = Vec::with_capacity(if keep_positions { spots.len() + 1 } else { 0 });
    let mut played = Vec::with_capacity(spots.len());
    let mut legal = Vec::new();
    for (index, (spot, pointer)) in spots.into_iter().enumerate() {
        if keep_positions {
            positions.push(Replayed {
                rows: grid.to_rows(),
                to_move: position.side_to_move(),
                status: position.status(),
            });
        }
        legal.clear();
        if position.status() == Status::Ongoing {
            position.legal_moves(&mut legal);
        }
        let found: Option<Move> = legal.iter().copied().find(|&mv| {
            let cell = position.cell_of(mv);
            match spot {
                Spot::Column(col) => cell.col == col,
                Spot::Cell(wanted) => cell == wanted,
            }
        });
        let Some(mv) = found else {
            let name = match spot {
                Spot::Cell(cell) if cell.row < grid.rows && cell.col < grid.cols => {
                    format!(" ({})", notation.name(cell))
                }
                Spot::Column(col) if col < grid.cols => format!(
                    " ({})",
                    notation.name(Cell {
                        row: grid.rows - 1,
                        col
                    })
                ),
                _ => String::new(),
            };
            return Err(ServiceError::IllegalMove {
                index,
                pointer,
                reason: why_illegal(&position, &grid, spot, index) + &name,
            });
        };
        let cell = position.cell_of(mv);
        grid.set(cell.row, cell.col, Stone::Player(position.side_to_move()));
        position.make(mv);
        played.push(cell);
    }
    if keep_positions {
        positions.push(Replayed {
            rows: grid.to_rows(),
            to_move: position.side_to_move(),
            status: position.status(),
        });
    }
    Ok(Replay {
        positions,
        played,
        grid,
        last: position,
    })
}
