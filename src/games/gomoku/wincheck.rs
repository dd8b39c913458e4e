//! The static win test: won and lost shapes recognised from the board's counts alone, at
//! every node of the main search, before any move is made.
//!
//! The key idea (the "quick win check" of strong engines such as Rapfi, here from kibitz's own
//! incremental counts): once the side to move has no five to block, a few shapes decide the game
//! by force whatever the opponent does, and the board already counts them. Recognising them
//! statically turns a line that would cost a four, its block and a VCF into one node: a move
//! that ignores a winning shape is refuted at its child in one node.
//!
//! In order, for the side to move ("me"):
//! 1. I have a cell that makes five: win in 1.
//! 2. The opponent has two or more such cells: I can block one only: loss in 2.
//! 3. The opponent has one: the block is forced; nothing static to say, unless I am renju's
//!    black and the block is a forbidden point: loss in 2. (The move rules then offer every
//!    allowed cell, each refuted by the five at its child: a full-width node the board decides.)
//! 4. I have a cell that makes an open four, or two fours at once: the opponent, with no five
//!    to make, cannot stop both completions: win in 3.
//! 5. I have a four-three cell (a four and an open three at once) and the opponent has no cell
//!    that makes a four: it must block the four, with a stone that threatens no five, and the
//!    three then becomes an open four, against which a four of the opponent's comes too late:
//!    win in 5. (The test `every_static_verdict_is_proven` has the VCF solver prove every
//!    claimed win on random positions.)
//! 6. The opponent has a cell that makes an open four (an open three on the board, or
//!    several), I have no cell that makes a four, and no single cell of mine stops every open
//!    four it could make ([`Board::stops_open_fours`](super::board::Board::stops_open_fours),
//!    exact): whatever I play makes no five threat, it makes an open four, and I have no five
//!    to answer with: loss in 4. The search's move rules had no answer to give there and
//!    searched every candidate, each refuted at its child by step 4: at depth 12 on the
//!    refutation set those children were a fifth of the main search's nodes (the gomoku
//!    journal, "An unstoppable open four read statically").
//!
//! Under renju black's open fours, double fours and four-threes may be forbidden points or end
//! in overlines, so steps 4 to 6 are not taken for black, nor step 6 against it; its fives are
//! exact (step 1 asks [`Gomoku::five_cells`], which knows).

use super::Gomoku;
use super::board::{DOUBLE_FOUR, FOUR_THREE};
use super::patterns::{FOUR, OPEN_FOUR};
use crate::engine::{Game, Status};

/// What the board alone says of the side to move's game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The side to move wins in this many plies (its own moves and the replies, its last
    /// move included).
    WinIn(u32),
    /// The side to move loses in this many plies.
    LossIn(u32),
}

impl Gomoku {
    /// The static verdict of the position for the side to move, if a won or lost shape is on
    /// the board (see the module's steps); `None` for a finished game or no such shape.
    pub fn static_verdict(&self) -> Option<Verdict> {
        if self.status() != Status::Ongoing {
            return None;
        }
        let me = self.to_move;
        let (mine, theirs) = (me.index(), me.other().index());
        if self.first_five_cell(me).is_some() {
            return Some(Verdict::WinIn(1));
        }
        let mut their_fives = [0usize; 2];
        match self.five_cells(me.other(), &mut their_fives) {
            0 => {}
            // Renju's black may not block on a forbidden point: the five comes next.
            1 if !self.allowed(their_fives[0], me) => return Some(Verdict::LossIn(2)),
            1 => return None,
            _ => return Some(Verdict::LossIn(2)),
        }
        if self.black_is_restricted(me) {
            return None;
        }
        let board = &self.board;
        if board.level_count[mine][OPEN_FOUR as usize] > 0
            || board.combo_count[mine][DOUBLE_FOUR] > 0
        {
            return Some(Verdict::WinIn(3));
        }
        let their_fours = board.level_count[theirs][FOUR as usize]
            + board.level_count[theirs][OPEN_FOUR as usize];
        if board.combo_count[mine][FOUR_THREE] > 0 && their_fours == 0 {
            return Some(Verdict::WinIn(5));
        }
        // Step 6. My open fours returned above, so a four of mine is a plain one.
        if board.level_count[theirs][OPEN_FOUR as usize] > 0
            && board.level_count[mine][FOUR as usize] == 0
            && !self.black_is_restricted(me.other())
            && !board
                .threat_cells(theirs, FOUR)
                .iter()
                .any(|cell| board.stops_open_fours(cell, theirs))
        {
            return Some(Verdict::LossIn(4));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Move;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    /// A 15x15 position from rows of `X`, `O`, `.` (missing rows empty), the side to move from
    /// the stone counts.
    fn position(rows: &[&str], rules: GomokuRules) -> Gomoku {
        let mut full: Vec<String> = rows.iter().map(|r| format!("{r:.<15}")).collect();
        full.resize(15, ".".repeat(15));
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let grid = Grid::parse(&full, 25).unwrap();
        Gomoku::from_grid(&grid, None, &rules).unwrap()
    }

    /// Plays `line` (cells as (row, col)) from `pos` and says whether the side that moved first
    /// in it made five on its last move.
    fn last_move_wins(pos: &Gomoku, line: &[(usize, usize)]) -> bool {
        let mut p = pos.clone();
        for &(r, c) in line {
            let mv = p.move_at(r, c);
            assert!(p.is_legal(mv), "{line:?} at {r},{c}");
            p.make(mv);
        }
        p.status() == Status::Lost
    }

    #[test]
    fn a_five_to_make_is_a_win_in_one() {
        let p = position(&["XXXX", "OOO", ".O"], GomokuRules::default());
        assert_eq!(p.static_verdict(), Some(Verdict::WinIn(1)));
    }

    #[test]
    fn two_fives_of_the_opponent_are_a_loss_in_two() {
        // X to move; O has an open four on row 1 (two completions), X nothing to answer with.
        let rows = ["X.X.X", ".OOOO.", "", "", "", "", "", "", "", "..........X"];
        let p = position(&rows, GomokuRules::default());
        assert_eq!(p.side_to_move(), crate::engine::Side::First);
        assert_eq!(p.static_verdict(), Some(Verdict::LossIn(2)));
    }

    #[test]
    fn one_five_of_the_opponent_leaves_the_block_to_the_search() {
        let p = position(&["X.X.X", "XOOOO."], GomokuRules::default());
        assert_eq!(p.static_verdict(), None);
    }

    /// X to move; row 7 holds `.XXX.` with room on both sides.
    const OPEN_THREE_ROWS: [&str; 12] = ["", "", "", "O", "", "", "", ".....XXX", "", "O", "", "O"];

    #[test]
    fn an_open_four_to_make_is_a_win_in_three_and_the_line_proves_it() {
        let p = position(&OPEN_THREE_ROWS, GomokuRules::default());
        assert_eq!(p.static_verdict(), Some(Verdict::WinIn(3)));
        // X makes the open four at (7, 4); whichever end O blocks, X completes the other.
        assert!(last_move_wins(&p, &[(7, 4), (7, 3), (7, 8)]));
        assert!(last_move_wins(&p, &[(7, 4), (7, 8), (7, 3)]));
    }

    #[test]
    fn a_four_three_is_a_win_in_five_only_when_the_opponent_has_no_four() {
        // X at (7, 8) makes a four down column 8 (closed above by O at (3, 8)) and an open
        // three on row 7 (cols 6-8).
        let mut rows = [
            "O",
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
            "O",
            "",
            "O.............O",
        ];
        let p = position(&rows, GomokuRules::default());
        assert_eq!(p.static_verdict(), Some(Verdict::WinIn(5)));
        // The line: the four, its block, the open four, either block, the five.
        assert!(last_move_wins(
            &p,
            &[(7, 8), (8, 8), (7, 5), (7, 4), (7, 9)]
        ));
        // Give O a three that can become a four: the claim is withdrawn.
        rows[11] = "OOO";
        rows[13] = "";
        let q = position(&rows, GomokuRules::default());
        assert!(q.board().level_count[1][FOUR as usize] > 0);
        assert_eq!(q.static_verdict(), None);
    }

    #[test]
    fn two_open_threes_no_cell_stops_are_a_loss_in_four_unless_a_four_is_left() {
        // X to move, no three of its own; O has open threes on row 7 and down column 10,
        // apart: any cell stops one of them at most.
        let mut rows = [
            "X.X",
            "",
            "..........O",
            "..........O",
            "..........O",
            "",
            "",
            ".....OOO",
            "",
            "",
            "",
            "",
            "",
            "",
            "X...X...X...X",
        ];
        let p = position(&rows, GomokuRules::default());
        assert_eq!(p.static_verdict(), Some(Verdict::LossIn(4)));
        // O makes its open four whatever X plays; X's block of one end leaves the other.
        assert!(last_move_wins(&p, &[(7, 4), (5, 10), (1, 10), (6, 10)]));
        // One open three: its ends stop it, nothing is claimed.
        rows[7] = "";
        rows[14] = "X";
        assert_eq!(
            position(&rows, GomokuRules::default()).static_verdict(),
            None
        );
        // Both threes, and X has a four to make (a closed three on row 0): the four may
        // start a counter-attack, nothing is claimed.
        rows[7] = ".....OOO";
        rows[0] = "XXX";
        rows[14] = "X...X...X";
        let q = position(&rows, GomokuRules::default());
        assert!(q.board().level_count[0][FOUR as usize] > 0);
        assert_eq!(q.static_verdict(), None);
    }

    #[test]
    fn renju_black_is_not_credited_with_shapes_that_may_be_forbidden() {
        let p = position(&OPEN_THREE_ROWS, GomokuRules::renju());
        assert_eq!(p.static_verdict(), None);
    }

    /// Every win the static test claims is one the exact VCF solver proves within as many
    /// fours (an open four, a double four and a four-three are all won by continuous fours),
    /// on random crowded positions of three rule sets; a claimed loss in 2 is two fives of the
    /// opponent's, and a claimed loss in 4 leaves the opponent an open four to make (a win in
    /// 3) after every legal move. Asserts enough claims of each kind that it cannot pass
    /// vacuously.
    #[test]
    fn every_static_verdict_is_proven() {
        use crate::engine::Side;
        use crate::games::gomoku::Overline;
        use crate::games::gomoku::vcf::{Vcf, VcfLimits};
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let rules = [
            GomokuRules::default(),
            GomokuRules::new(5, Overline::NoWin).unwrap(),
            GomokuRules::renju(),
        ];
        let mut claims = [0u32; 5]; // win in 3, win in 5, loss in 2, win in 1, loss in 4
        for round in 0..12_000 {
            let rules = rules[round % rules.len()];
            let mut p = Gomoku::new(15, 15, rules).unwrap();
            let stones = 8 + next(30) as usize;
            let mut placed = Vec::new();
            while placed.len() < stones {
                // Crowded around the centre, so that threes and fours are common.
                let (r, c) = (4 + next(7) as usize, 4 + next(7) as usize);
                let cell = r * 15 + c;
                if !placed.iter().any(|&(x, _)| x == cell) {
                    let side = if placed.len().is_multiple_of(2) {
                        Side::First
                    } else {
                        Side::Second
                    };
                    placed.push((cell, side));
                }
            }
            let to_move = if stones.is_multiple_of(2) {
                Side::First
            } else {
                Side::Second
            };
            p.set_up(placed, to_move);
            if p.board().has_five(0) || p.board().has_five(1) {
                continue;
            }
            match p.static_verdict() {
                Some(Verdict::WinIn(1)) => {
                    claims[3] += 1;
                    assert!(p.immediate_win().is_some());
                }
                Some(Verdict::WinIn(plies)) => {
                    claims[if plies == 3 { 0 } else { 1 }] += 1;
                    // The solver returns the first win it finds, not the shortest: bound its
                    // fours by the claim instead.
                    let limits = VcfLimits {
                        max_depth: plies.div_ceil(2),
                        ..VcfLimits::default()
                    };
                    let line = Vcf::new(p.clone()).solve(&limits);
                    assert!(line.is_some(), "no VCF of {plies} plies: {p:?}");
                }
                Some(Verdict::LossIn(2)) => {
                    claims[2] += 1;
                    assert!(p.immediate_win().is_none());
                    // Two fives to block, or (renju's black) one on a forbidden point: every
                    // move leaves the opponent a five.
                    let mut moves = Vec::new();
                    p.legal_moves(&mut moves);
                    for mv in moves {
                        let mut child = p.clone();
                        child.make(mv);
                        assert!(
                            child.immediate_win().is_some(),
                            "{mv:?} escapes the loss in 2 of {p:?}"
                        );
                    }
                }
                Some(Verdict::LossIn(plies)) => {
                    assert_eq!(plies, 4, "{p:?}");
                    claims[4] += 1;
                    let mut moves = Vec::new();
                    p.legal_moves(&mut moves);
                    assert!(!moves.is_empty());
                    for mv in moves {
                        let mut child = p.clone();
                        child.make(mv);
                        assert_eq!(
                            child.static_verdict(),
                            Some(Verdict::WinIn(3)),
                            "{mv:?} answers the open three of {p:?}"
                        );
                    }
                }
                None => {}
            }
        }
        assert!(claims.iter().all(|&n| n >= 20), "claims {claims:?}");
    }

    #[test]
    fn a_finished_game_has_no_verdict() {
        let mut p = position(&["XXXX", "OOOO"], GomokuRules::default());
        p.make(Move(4));
        assert_eq!(p.static_verdict(), None);
    }
}
