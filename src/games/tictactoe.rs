//! Tic-tac-toe on bitboards: each side's stones are nine bits, a win is one of eight masks.
//!
//! The position key is exact (both bitboards and the side to move fit in 19 bits), so it needs
//! no Zobrist table and can never collide. The game is small enough for the engine to solve it
//! from the empty board in a few thousand nodes; the evaluation below only matters for
//! depth-limited teaching searches.

use crate::engine::{Game, Move, Score, Side, Status};

use super::{BoardGame, Cell, Grid, PositionError, Stone};

const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];
const FULL: u16 = 0b111_111_111;

/// A tic-tac-toe position. Cell `i` is row `i / 3`, column `i % 3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicTacToe {
    /// Stones of each side, indexed by [`Side::index`].
    stones: [u16; 2],
    to_move: Side,
    plies: u32,
}

impl Default for TicTacToe {
    fn default() -> Self {
        TicTacToe {
            stones: [0, 0],
            to_move: Side::First,
            plies: 0,
        }
    }
}

fn has_line(stones: u16) -> bool {
    LINES.iter().any(|&line| line & !stones == 0)
}

impl TicTacToe {
    /// The empty board, X to move.
    pub fn new() -> Self {
        Self::default()
    }

    fn occupied(&self) -> u16 {
        self.stones[0] | self.stones[1]
    }
}

impl Game for TicTacToe {
    fn move_space(&self) -> usize {
        9
    }

    fn hash(&self) -> u64 {
        self.stones[0] as u64 | (self.stones[1] as u64) << 9 | (self.to_move.index() as u64) << 18
    }

    fn side_to_move(&self) -> Side {
        self.to_move
    }

    fn plies_played(&self) -> u32 {
        self.plies
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.status() != Status::Ongoing {
            return;
        }
        let free = !self.occupied() & FULL;
        out.extend((0..9u16).filter(|i| free & (1 << i) != 0).map(Move));
    }

    fn make(&mut self, mv: Move) {
        self.stones[self.to_move.index()] |= 1 << mv.0;
        self.to_move = self.to_move.other();
        self.plies += 1;
    }

    fn unmake(&mut self, mv: Move) {
        self.to_move = self.to_move.other();
        self.stones[self.to_move.index()] &= !(1 << mv.0);
        self.plies -= 1;
    }

    fn status(&self) -> Status {
        if has_line(self.stones[self.to_move.other().index()]) {
            Status::Lost
        } else if self.occupied() == FULL {
            Status::Draw
        } else {
            Status::Ongoing
        }
    }

    /// Lines still open to one side and not the other, weighted by how full they are.
    fn evaluate(&self) -> Score {
        let me = self.stones[self.to_move.index()];
        let them = self.stones[self.to_move.other().index()];
        let mut score = 0;
        for &line in &LINES {
            match ((me & line).count_ones(), (them & line).count_ones()) {
                (n, 0) => score += [0, 1, 10, 0][n as usize],
                (0, n) => score -= [0, 1, 10, 0][n as usize],
                _ => {}
            }
        }
        score
    }

    fn max_remaining_plies(&self) -> u32 {
        (!self.occupied() & FULL).count_ones()
    }

    fn immediate_win(&self) -> Option<Move> {
        let me = self.stones[self.to_move.index()];
        let free = !self.occupied() & FULL;
        LINES.iter().find_map(|&line| {
            let gap = line & !me;
            (gap.count_ones() == 1 && gap & free != 0).then(|| Move(gap.trailing_zeros() as u16))
        })
    }

    /// Centre, then corners, then edges.
    fn move_order_hint(&self, mv: Move) -> i32 {
        [1, 0, 1, 0, 2, 0, 1, 0, 1][mv.index()]
    }
}

impl BoardGame for TicTacToe {
    type Rules = ();
    const NAME: &'static str = "tictactoe";
    const MAX_SIDE: usize = 3;

    fn from_grid(grid: &Grid, to_move: Option<Side>, _rules: &()) -> Result<Self, PositionError> {
        if grid.rows != 3 || grid.cols != 3 {
            return Err(PositionError::Shape(format!(
                "tic-tac-toe is played on 3 rows of 3 cells; got {} rows of {}",
                grid.rows, grid.cols
            )));
        }
        let mut position = TicTacToe::new();
        for (i, stone) in grid.cells.iter().enumerate() {
            if let Stone::Player(side) = stone {
                position.stones[side.index()] |= 1 << i;
            }
        }
        position.to_move = grid.side_to_move(to_move, false)?;
        position.plies = position.occupied().count_ones();
        let (x_line, o_line) = (has_line(position.stones[0]), has_line(position.stones[1]));
        match (x_line, o_line) {
            (true, true) => Err(PositionError::GameOver(
                "both X and O have three in a row".into(),
            )),
            (true, false) if position.to_move == Side::First => Err(PositionError::Counts(
                "X has three in a row but O has as many stones: O kept playing after losing".into(),
            )),
            (false, true) if position.to_move == Side::Second => Err(PositionError::Counts(
                "O has three in a row but X has more stones: X kept playing after losing".into(),
            )),
            (true, false) => Err(PositionError::GameOver("X has three in a row".into())),
            (false, true) => Err(PositionError::GameOver("O has three in a row".into())),
            _ if position.occupied() == FULL => {
                Err(PositionError::GameOver("the board is full: a draw".into()))
            }
            _ => Ok(position),
        }
    }

    fn cell_of(&self, mv: Move) -> Cell {
        Cell {
            row: mv.index() / 3,
            col: mv.index() % 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(rows: [&str; 3]) -> Result<TicTacToe, PositionError> {
        TicTacToe::from_grid(&Grid::parse(&rows, 3)?, None, &())
    }

    #[test]
    fn make_then_unmake_restores_the_position() {
        let mut p = TicTacToe::new();
        let before = p.clone();
        p.make(Move(4));
        assert_ne!(p.hash(), before.hash());
        p.unmake(Move(4));
        assert_eq!(p, before);
    }

    #[test]
    fn a_completed_line_means_the_side_to_move_lost() {
        let mut p = position(["XX.", "OO.", "..."]).unwrap();
        assert_eq!(p.immediate_win(), Some(Move(2)));
        p.make(Move(2));
        assert_eq!(p.status(), Status::Lost);
        let mut moves = Vec::new();
        p.legal_moves(&mut moves);
        assert!(moves.is_empty());
    }

    #[test]
    fn finished_and_impossible_boards_are_refused() {
        assert!(matches!(
            position(["XXX", "OO.", "..."]),
            Err(PositionError::GameOver(_))
        ));
        assert!(matches!(
            position(["XXX", "OOO", "..."]),
            Err(PositionError::GameOver(_))
        ));
        assert!(matches!(
            position(["XXX", "OO.", "O.."]),
            Err(PositionError::Counts(_))
        ));
        assert!(matches!(
            position(["XOX", "XOO", "OXX"]),
            Err(PositionError::GameOver(_))
        ));
        assert!(matches!(
            position(["XX.", "...", "..."]),
            Err(PositionError::Counts(_))
        ));
    }
}
