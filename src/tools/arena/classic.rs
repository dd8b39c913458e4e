//! The classic baseline: plain fixed-depth alpha-beta minimax with a count-the-lines evaluation.
//!
//! Deliberately textbook and independent of kibitz's engine: a plain board, moves within one
//! cell of a stone, and an evaluation that scans every window of `k` cells on the board and
//! scores a window holding only one side's stones by how many it holds. A move that completes a
//! line is taken at once and a five of the opponent is blocked (the search would find both at
//! depth 2 anyway). Depth 2 by default (`classic:3` for more).

use crate::engine::{Game, Move};
use crate::games::gomoku::Gomoku;
use crate::games::{Stone, gomoku::Overline};

/// Window score by stones in it, for the side owning them.
const WINDOW_SCORE: [i64; 6] = [0, 1, 10, 100, 1_000, 1_000_000];
const WIN_SCORE: i64 = 1_000_000_000;

/// A plain board for the baseline.
struct Plain {
    rows: usize,
    cols: usize,
    k: usize,
    exact: bool,
    /// 0 empty, 1 first player, 2 second.
    cells: Vec<u8>,
}

impl Plain {
    fn from(position: &Gomoku) -> Self {
        let (rows, cols) = (position.rows(), position.cols());
        let cells = (0..rows * cols)
            .map(|c| match position.stone(c / cols, c % cols) {
                Stone::Empty => 0,
                Stone::Player(s) => s.index() as u8 + 1,
            })
            .collect();
        Plain {
            rows,
            cols,
            k: position.rules().win_length as usize,
            exact: position.rules().overline == Overline::NoWin,
            cells,
        }
    }

    fn at(&self, r: i32, c: i32) -> Option<u8> {
        (r >= 0 && c >= 0 && (r as usize) < self.rows && (c as usize) < self.cols)
            .then(|| self.cells[r as usize * self.cols + c as usize])
    }

    /// Whether the stone on `cell` belongs to a winning line.
    fn wins_at(&self, cell: usize) -> bool {
        let who = self.cells[cell];
        let (r, c) = ((cell / self.cols) as i32, (cell % self.cols) as i32);
        [(0, 1), (1, 0), (1, 1), (1, -1)].iter().any(|&(dr, dc)| {
            let mut run = 1;
            for sign in [-1, 1] {
                let mut i = 1;
                while self.at(r + sign * dr * i, c + sign * dc * i) == Some(who) {
                    run += 1;
                    i += 1;
                }
            }
            run == self.k || (run > self.k && !self.exact)
        })
    }

    /// Count-the-lines evaluation for `me` (1 or 2).
    fn evaluate(&self, me: u8) -> i64 {
        let mut score = 0;
        let k = self.k as i32;
        for &(dr, dc) in &[(0, 1), (1, 0), (1, 1), (1, -1)] {
            for r in 0..self.rows as i32 {
                for c in 0..self.cols as i32 {
                    let end = (r + dr * (k - 1), c + dc * (k - 1));
                    if self.at(end.0, end.1).is_none() {
                        continue;
                    }
                    let (mut mine, mut theirs) = (0, 0);
                    for i in 0..k {
                        match self.at(r + dr * i, c + dc * i) {
                            Some(0) | None => {}
                            Some(x) if x == me => mine += 1,
                            Some(_) => theirs += 1,
                        }
                    }
                    let weight = |n: usize| WINDOW_SCORE[n.min(5)];
                    if theirs == 0 {
                        score += weight(mine);
                    } else if mine == 0 {
                        score -= weight(theirs);
                    }
                }
            }
        }
        score
    }

    fn moves(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for cell in 0..self.cells.len() {
            if self.cells[cell] != 0 {
                continue;
            }
            let (r, c) = ((cell / self.cols) as i32, (cell % self.cols) as i32);
            let near = (-1..=1)
                .any(|dr| (-1..=1).any(|dc| matches!(self.at(r + dr, c + dc), Some(1 | 2))));
            if near {
                out.push(cell);
            }
        }
        if out.is_empty() {
            out.extend((0..self.cells.len()).filter(|&c| self.cells[c] == 0));
        }
        out
    }

    /// Negamax alpha-beta to `depth` for `me` to move.
    fn negamax(&mut self, depth: u32, me: u8, mut alpha: i64, beta: i64) -> i64 {
        if depth == 0 {
            return self.evaluate(me);
        }
        let moves = self.moves();
        let mut best = -WIN_SCORE * 2;
        for cell in moves {
            self.cells[cell] = me;
            let score = if self.wins_at(cell) {
                WIN_SCORE + depth as i64
            } else if depth == 1 {
                self.evaluate(me)
            } else {
                -self.negamax(depth - 1, 3 - me, -beta, -alpha)
            };
            self.cells[cell] = 0;
            if score > best {
                best = score;
            }
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        if best == -WIN_SCORE * 2 { 0 } else { best }
    }
}

/// The baseline's move for `position` searched to `depth` plies.
pub fn classic_move(position: &Gomoku, depth: u32) -> Option<Move> {
    let mut plain = Plain::from(position);
    let me = position.side_to_move().index() as u8 + 1;
    // Under renju black never plays a forbidden point (deeper plies do not look: a baseline).
    let mut moves = plain.moves();
    moves.retain(|&cell| position.forbidden(cell).is_none() || me != 1);
    let mut best: Option<(i64, usize)> = None;
    let (mut alpha, beta) = (-WIN_SCORE * 4, WIN_SCORE * 4);
    for cell in moves {
        plain.cells[cell] = me;
        let score = if plain.wins_at(cell) {
            WIN_SCORE * 2
        } else {
            -plain.negamax(depth.max(1) - 1, 3 - me, -beta, -alpha)
        };
        plain.cells[cell] = 0;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, cell));
        }
        alpha = alpha.max(score);
    }
    best.map(|(_, cell)| Move(cell as u16))
}
