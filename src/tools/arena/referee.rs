//! The referee: the arena's own board, which alone decides how a game ends.
//!
//! The key idea is distrust. Players are only asked for moves; the referee keeps the stones in a
//! plain array, counts the line through every move itself and declares a win only when the rule
//! set's winning line stands on the board (free-style: five or more; standard: exactly five;
//! renju: exactly five for black, five or more for white). It never asks the engine's
//! incremental [`Gomoku`](crate::games::gomoku::Gomoku) position, so a bug there cannot make a
//! win. Under renju a black move on a forbidden point (the exact test of
//! [`renju`]) loses on the board, as in a real game.

use crate::games::gomoku::renju::{self, Forbidden};
use crate::games::gomoku::{GomokuRules, Overline};

/// The rule sets a match can be played under, with their piskvork `INFO rule` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleSet {
    /// Five or more in a row wins (piskvork rule 0).
    Freestyle,
    /// Exactly five wins, for both colours (rule 1).
    Standard,
    /// Black: exactly five, and no double three, double four or overline; white: five or more
    /// (rule 4).
    Renju,
}

impl RuleSet {
    /// The value sent as `INFO rule`.
    pub fn piskvork_code(self) -> u8 {
        match self {
            RuleSet::Freestyle => 0,
            RuleSet::Standard => 1,
            RuleSet::Renju => 4,
        }
    }

    /// The engine's rules for this rule set.
    pub fn engine_rules(self) -> GomokuRules {
        match self {
            RuleSet::Freestyle => GomokuRules::default(),
            RuleSet::Standard => GomokuRules {
                overline: Overline::NoWin,
                ..GomokuRules::default()
            },
            RuleSet::Renju => GomokuRules::renju(),
        }
    }
}

/// A stone colour; black moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Black,
    White,
}

impl Colour {
    pub fn other(self) -> Colour {
        match self {
            Colour::Black => Colour::White,
            Colour::White => Colour::Black,
        }
    }

    fn cell_value(self) -> u8 {
        match self {
            Colour::Black => 1,
            Colour::White => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Colour::Black => "black",
            Colour::White => "white",
        }
    }
}

/// What a legal move did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The game goes on.
    Continue,
    /// The mover made the rule set's winning line: it wins.
    Win,
    /// Renju: black played a forbidden point and loses.
    Foul(Forbidden),
    /// The board is full without a win: a draw.
    Full,
}

/// A move the referee refuses outright (a protocol fault of the player who sent it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("{0},{1} is off the board")]
    OffBoard(usize, usize),
    #[error("{0},{1} is already taken")]
    Occupied(usize, usize),
}

/// The arena's board.
#[derive(Clone, Debug)]
pub struct Referee {
    size: usize,
    rule: RuleSet,
    /// `0` empty, `1` black, `2` white (row-major), as [`renju`] reads it.
    cells: Vec<u8>,
    stones: usize,
}

impl Referee {
    pub fn new(size: usize, rule: RuleSet) -> Self {
        Referee {
            size,
            rule,
            cells: vec![0; size * size],
            stones: 0,
        }
    }

    /// Whose move it is: black on an even count of stones.
    pub fn to_move(&self) -> Colour {
        if self.stones.is_multiple_of(2) {
            Colour::Black
        } else {
            Colour::White
        }
    }

    pub fn stones(&self) -> usize {
        self.stones
    }

    /// Plays the side to move's stone on column `x`, row `y` and judges it.
    pub fn play(&mut self, x: usize, y: usize) -> Result<Verdict, IllegalMove> {
        if x >= self.size || y >= self.size {
            return Err(IllegalMove::OffBoard(x, y));
        }
        let cell = y * self.size + x;
        if self.cells[cell] != 0 {
            return Err(IllegalMove::Occupied(x, y));
        }
        let mover = self.to_move();
        if self.rule == RuleSet::Renju
            && mover == Colour::Black
            && let Some(why) = renju::forbidden(&self.cells, self.size, self.size, cell)
        {
            self.place(cell, mover);
            return Ok(Verdict::Foul(why));
        }
        self.place(cell, mover);
        let longest = self.longest_line_through(cell, mover);
        let wins = match (self.rule, mover) {
            (RuleSet::Freestyle, _) | (RuleSet::Renju, Colour::White) => longest >= 5,
            (RuleSet::Standard, _) => self.has_exact_five_through(cell, mover),
            (RuleSet::Renju, Colour::Black) => self.has_exact_five_through(cell, mover),
        };
        Ok(if wins {
            Verdict::Win
        } else if self.stones == self.cells.len() {
            Verdict::Full
        } else {
            Verdict::Continue
        })
    }

    fn place(&mut self, cell: usize, colour: Colour) {
        self.cells[cell] = colour.cell_value();
        self.stones += 1;
    }

    /// The run of `colour` through `cell` along (`dr`, `dc`).
    fn run(&self, cell: usize, colour: Colour, (dr, dc): (i32, i32)) -> usize {
        let value = colour.cell_value();
        let (row, col) = ((cell / self.size) as i32, (cell % self.size) as i32);
        let mut length = 1;
        for sign in [-1, 1] {
            let (mut r, mut c) = (row + sign * dr, col + sign * dc);
            while r >= 0
                && c >= 0
                && (r as usize) < self.size
                && (c as usize) < self.size
                && self.cells[r as usize * self.size + c as usize] == value
            {
                length += 1;
                r += sign * dr;
                c += sign * dc;
            }
        }
        length
    }

    const LINES: [(i32, i32); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

    fn longest_line_through(&self, cell: usize, colour: Colour) -> usize {
        Self::LINES
            .iter()
            .map(|&d| self.run(cell, colour, d))
            .max()
            .unwrap_or(1)
    }

    fn has_exact_five_through(&self, cell: usize, colour: Colour) -> bool {
        Self::LINES.iter().any(|&d| self.run(cell, colour, d) == 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays `moves` (x, y), alternating from black, and returns the last verdict.
    fn play_all(rule: RuleSet, moves: &[(usize, usize)]) -> Verdict {
        let mut referee = Referee::new(15, rule);
        let mut verdict = Verdict::Continue;
        for &(x, y) in moves {
            assert_eq!(verdict, Verdict::Continue, "the game ended early");
            verdict = referee.play(x, y).expect("legal");
        }
        verdict
    }

    /// Black on row 7 at the given columns, white answering on row 0 far apart.
    fn black_row(cols: &[usize]) -> Vec<(usize, usize)> {
        let mut moves = Vec::new();
        for (i, &c) in cols.iter().enumerate() {
            moves.push((c, 7));
            if i + 1 < cols.len() {
                moves.push((i * 2, 0));
            }
        }
        moves
    }

    #[test]
    fn five_in_a_row_wins_free_style() {
        assert_eq!(
            play_all(RuleSet::Freestyle, &black_row(&[3, 4, 5, 6, 7])),
            Verdict::Win
        );
    }

    #[test]
    fn four_in_a_row_does_not_win() {
        assert_eq!(
            play_all(RuleSet::Freestyle, &black_row(&[3, 4, 5, 6])),
            Verdict::Continue
        );
    }

    #[test]
    fn six_in_a_row_wins_free_style_but_not_standard() {
        let six = black_row(&[1, 2, 4, 5, 6, 3]);
        assert_eq!(play_all(RuleSet::Freestyle, &six), Verdict::Win);
        assert_eq!(play_all(RuleSet::Standard, &six), Verdict::Continue);
    }

    #[test]
    fn a_black_overline_is_a_renju_foul() {
        let six = black_row(&[1, 2, 4, 5, 6, 3]);
        assert_eq!(
            play_all(RuleSet::Renju, &six),
            Verdict::Foul(Forbidden::Overline)
        );
    }

    #[test]
    fn a_taken_cell_is_refused() {
        let mut referee = Referee::new(15, RuleSet::Freestyle);
        referee.play(7, 7).expect("legal");
        assert_eq!(referee.play(7, 7), Err(IllegalMove::Occupied(7, 7)));
        assert_eq!(referee.play(15, 0), Err(IllegalMove::OffBoard(15, 0)));
    }
}
