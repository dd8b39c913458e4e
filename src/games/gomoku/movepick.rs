//! The main search's moves, generated in stages by what the opponent threatens: a five to
//! block, an open three (or several) to defend on its exact defence cells, a four-three point
//! to defend on the lines through it; else every candidate. The search orders and prunes what
//! this gives like any other moves: no stage exempts a move from move-count pruning or
//! reductions.
//!
//! The key idea: a threat of the opponent leaves few moves that matter, and the board's counts
//! say which, so the search never spends nodes on the rest. The first two stages are exact
//! ([`Gomoku::search_moves`]' threat rules, which the exact engine uses too). The four-three
//! stage is a selection, not a proof: against a point where the opponent would make a four
//! and an open three at once it keeps the point, the cells on the four lines through it within
//! reach of a pattern, and the mover's own fours (the tempo moves); a move elsewhere is one the
//! static win test ([`super::wincheck`]) refutes at its child in one node, so searching it
//! would only cost nodes.

use super::Gomoku;
use super::board::{DOUBLE_FOUR, FOUR_THREE};
use super::patterns::{FIVE, FOUR, OPEN_FOUR};
use crate::engine::{Game, Move, Status};

/// Which stage produced a node's moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// A five to make, or the blocks of the opponent's five (forced).
    Forced,
    /// Defences against the opponent's open three(s), plus the mover's fours.
    DefendThree,
    /// Defences against the opponent's four-three or double-four point(s), plus the mover's
    /// fours.
    DefendFourThree,
    /// Every candidate.
    All,
}

/// Most four-three points of the opponent the stage looks at; with more, every candidate is
/// searched (the position is lost or close to it, and the list would be most of them anyway).
const MAX_POINTS: usize = 4;

impl Gomoku {
    /// The main search's moves for the side to move, appended to `out` (renju's forbidden
    /// points left out), and the stage that produced them.
    pub fn staged_moves(&self, out: &mut Vec<Move>) -> Stage {
        let from = out.len();
        if self.status() != Status::Ongoing {
            return Stage::All;
        }
        let me = self.to_move;
        let (mine, theirs) = (me.index(), me.other().index());
        let counts = &self.board.level_count;
        if counts[mine][FIVE as usize] > 0
            || counts[theirs][FIVE as usize] > 0
            || counts[theirs][OPEN_FOUR as usize] > 0
        {
            // The exact threat rules: a five, the blocks, or the open three's defences.
            self.search_moves(out);
            let forced = counts[theirs][OPEN_FOUR as usize] == 0
                || self.first_five_cell(me).is_some()
                || self.five_cells(me.other(), &mut [0usize; 1]) > 0;
            return if forced {
                Stage::Forced
            } else {
                Stage::DefendThree
            };
        }
        let combos = &self.board.combo_count[theirs];
        if combos[FOUR_THREE] + combos[DOUBLE_FOUR] > 0 {
            let mut points = [0usize; MAX_POINTS];
            let mut n = 0;
            self.for_each_candidate(|cell| {
                let shape = self.board.shape(cell, theirs) as usize;
                if (shape == FOUR_THREE || shape == DOUBLE_FOUR) && self.allowed(cell, me.other()) {
                    if n < MAX_POINTS {
                        points[n] = cell;
                    }
                    n += 1;
                }
            });
            if (1..=MAX_POINTS).contains(&n) {
                let points = &points[..n];
                let cols = self.cols() as i32;
                let reach = self.board.geo.patterns.h as i32;
                self.for_each_candidate(|cell| {
                    let (r, c) = (cell as i32 / cols, cell as i32 % cols);
                    let defends = points.iter().any(|&p| {
                        let (dr, dc) = (r - p as i32 / cols, c - p as i32 % cols);
                        (dr == 0 || dc == 0 || dr.abs() == dc.abs())
                            && dr.abs().max(dc.abs()) <= reach
                    });
                    if defends || self.board.best_level(cell, mine) >= FOUR {
                        out.push(Move(cell as u16));
                    }
                });
                self.drop_forbidden(out, from);
                if out.len() > from {
                    return Stage::DefendFourThree;
                }
            }
        }
        self.search_moves(out);
        Stage::All
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    fn position(rows: &[&str]) -> Gomoku {
        let mut full: Vec<String> = rows.iter().map(|r| format!("{r:.<15}")).collect();
        full.resize(15, ".".repeat(15));
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let grid = Grid::parse(&full, 25).unwrap();
        Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap()
    }

    fn cells(p: &Gomoku, moves: &[Move]) -> Vec<(usize, usize)> {
        let mut v: Vec<_> = moves
            .iter()
            .map(|m| (m.index() / p.cols(), m.index() % p.cols()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_open_three_is_answered_on_its_exact_defence_cells_only() {
        // O to move (X has one stone more); X's open three on row 7, cols 5-7; O has no four.
        let p = position(&[
            "O", "", "", "", "", "", "", ".....XXX", "", "", "O", "", "O", "", "X",
        ]);
        let mut moves = Vec::new();
        assert_eq!(p.staged_moves(&mut moves), Stage::DefendThree);
        // `..XXX..` is stopped by the cells next to it only: after a stone two away, X still
        // makes an open four on the near side.
        assert_eq!(cells(&p, &moves), vec![(7, 4), (7, 8)]);
    }

    #[test]
    fn a_split_three_has_three_defence_cells() {
        let p = position(&[
            "O",
            "",
            "",
            "",
            "",
            "",
            "",
            ".....XX.X",
            "",
            "",
            "O",
            "",
            "O",
            "",
            "X",
        ]);
        let mut moves = Vec::new();
        assert_eq!(p.staged_moves(&mut moves), Stage::DefendThree);
        assert_eq!(cells(&p, &moves), vec![(7, 4), (7, 7), (7, 9)]);
    }

    #[test]
    fn a_four_three_point_is_defended_on_its_lines_or_by_fours() {
        // O to move; X's (7, 8) makes a four on column 8 and an open three on row 7.
        let p = position(&[
            "O.............O",
            "",
            "",
            "........O",
            "........X",
            "........X",
            "........X",
            "......XX",
            "",
            "",
            "",
            "...O",
            "",
            "..............X",
            "O",
        ]);
        let mut moves = Vec::new();
        assert_eq!(p.staged_moves(&mut moves), Stage::DefendFourThree);
        let got = cells(&p, &moves);
        assert!(got.contains(&(7, 8)), "{got:?}");
        assert!(got.contains(&(8, 8)) && got.contains(&(7, 5)) && got.contains(&(7, 9)));
        // Far from the point, nothing.
        assert!(got.iter().all(|&(r, c)| {
            let (dr, dc) = (r as i32 - 7, c as i32 - 8);
            (dr == 0 || dc == 0 || dr.abs() == dc.abs()) && dr.abs().max(dc.abs()) <= 4
        }));
        let mut all = Vec::new();
        p.search_moves(&mut all);
        assert!(got.len() < all.len());
    }

    #[test]
    fn a_quiet_position_gives_every_candidate() {
        let p = position(&["", "", "", "", "", "", "", ".......X", "........O"]);
        let mut staged = Vec::new();
        let mut all = Vec::new();
        assert_eq!(p.staged_moves(&mut staged), Stage::All);
        p.search_moves(&mut all);
        assert_eq!(staged, all);
    }
}
