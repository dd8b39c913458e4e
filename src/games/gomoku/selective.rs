//! The selective view of a position that [`Gomoku::think`](super::Gomoku) hands to the engine on
//! big boards: the same rules, but in quiet positions only the most promising moves are searched.
//!
//! Gomoku's full candidate set (every empty cell within two of a stone) is 40 to 80 moves in a
//! middle game, and most of them neither attack nor defend. Strong engines search only the best
//! few by threat order; doing the same doubles the depth reached in a budget. The price is that
//! the set may miss a best move, so this view is never used where exactness is promised (small
//! boards, minimax, analysis), and `think` does not report the main search's decisive scores as
//! proofs. Threat positions keep the full, sound threat-rule set of [`Gomoku::search_moves`].

use crate::engine::{Game, Move, Score, Side, Status};

use super::Gomoku;
use super::patterns::{FIVE, OPEN_FOUR};

/// Boards with more cells than this are searched selectively.
pub const SELECTIVE_MIN_CELLS: usize = 100;
/// Moves kept at the root and below it in quiet positions. Below the root 12 rather than 8:
/// against Carbon-Gomoku at 200 ms a move (`kibitz arena`, Gomocup and balanced openings,
/// interleaved rounds on a loaded 2-core machine, builds with tuning knobs) 12 scored 63.3 %
/// where 8 scored 51.6 % (192 games each, about 2.4 standard errors apart). 16 scored as well
/// or better (66.7 % of 96, then 71.4 % of 96 where 8 scored 59.4 %), but with it the main
/// search settles on moves whose opponent's threat win is too big for the defence check's
/// node cap, and `think` fails the 15-ply defence test.
const ROOT_WIDTH: usize = 20;
const WIDTH: usize = 12;

/// Reverse futility pruning: with at most `FUTILITY_DEPTH` plies left and no open three or four
/// of the opponent on the board, a null-window node whose evaluation beats beta by
/// `FUTILITY_MARGIN` per ply is not searched. Against Carbon-Gomoku (`kibitz arena`, 200 ms,
/// both builds at once, four opening sets, 392 games each) 69.6 % against 66.8 % without it:
/// inside the noise, but the mean depth reached rises by 0.6-0.7 plies (README, "Benchmark
/// figures"; margins of 20 and 60 a ply, or up to 5 plies, scored no better).
const FUTILITY_MARGIN: Score = 40;
const FUTILITY_DEPTH: i32 = 3;
/// Razoring: with one ply left in the same quiet positions, a null-window node whose evaluation
/// is this far below alpha is not searched. On top of the futility pruning, against
/// Carbon-Gomoku (200 ms): 72.8 % of 496 games where the futility pruning alone scored 68.4 %
/// of 840 on the same three opening sets (README, "Benchmark figures"; ahead on two sets,
/// behind by 6 points on the balanced one in 48 games).
const RAZOR_MARGIN: Score = 100;

/// A position whose quiet move sets are cut to the best few by threat order.
#[derive(Clone, Debug)]
pub struct Selective {
    pub position: Gomoku,
    /// Stones on the board at the root (the root gets a wider set).
    root_stones: u32,
}

impl Selective {
    pub fn new(position: Gomoku) -> Self {
        let root_stones = position.plies_played();
        Selective {
            position,
            root_stones,
        }
    }

    /// The opponent has a four or an open three: the position is not quiet.
    fn opponent_threatens(&self) -> bool {
        let board = self.position.board();
        let opp = 1 - self.position.side_to_move().index();
        board.level_count[opp][FIVE as usize] > 0 || board.level_count[opp][OPEN_FOUR as usize] > 0
    }
}

impl Game for Selective {
    fn move_space(&self) -> usize {
        self.position.move_space()
    }
    fn hash(&self) -> u64 {
        // Distinct from the exact view's entries: a selective score is not an exact one.
        self.position.hash() ^ 0x5E1E_C71F_E000_0001
    }
    fn side_to_move(&self) -> Side {
        self.position.side_to_move()
    }
    fn plies_played(&self) -> u32 {
        self.position.plies_played()
    }
    fn legal_moves(&self, out: &mut Vec<Move>) {
        self.position.legal_moves(out)
    }
    fn make(&mut self, mv: Move) {
        self.position.make(mv)
    }
    fn unmake(&mut self, mv: Move) {
        self.position.unmake(mv)
    }
    fn status(&self) -> Status {
        self.position.status()
    }
    fn evaluate(&self) -> Score {
        self.position.evaluate()
    }
    fn max_remaining_plies(&self) -> u32 {
        self.position.max_remaining_plies()
    }
    fn immediate_win(&self) -> Option<Move> {
        self.position.immediate_win()
    }
    fn must_answer_threat(&self) -> bool {
        self.position.must_answer_threat()
    }
    fn move_order_hint(&self, mv: Move) -> i32 {
        self.position.move_order_hint(mv)
    }
    /// Quiet late moves are searched shallower: one ply from the third move on, two from the
    /// fourth at 4 plies or more, three from the ninth at 6 or more. Against Carbon-Gomoku
    /// (`kibitz arena`, 200 ms, three paired runs of 48 games, both builds at once) these
    /// reductions scored 97/46/1 where the milder ones before them (two plies only from the
    /// sixth move at 5 or more) scored 88/56/0: 67.7 % against 61.1 %, about 1.2 standard
    /// errors, ahead on the balanced openings twice (+18.7 and +7.3 points) and behind on the
    /// Gomocup ones once (-6.3). No reductions at all scored 54.2 % against 64.6 %. A reduced
    /// move that beats alpha is searched again at full depth, and threats are never reduced.
    fn reduction(&self, mv: Move, move_number: usize, depth: i32) -> i32 {
        if depth < 3 || move_number < 2 || self.position.is_tactical(mv.index()) {
            0
        } else if move_number >= 8 && depth >= 6 {
            3
        } else if move_number >= 3 && depth >= 4 {
            2
        } else {
            1
        }
    }

    fn futility_margin(&self, depth: i32) -> Option<Score> {
        (depth <= FUTILITY_DEPTH && !self.opponent_threatens()).then_some(FUTILITY_MARGIN * depth)
    }

    fn razor_margin(&self, depth: i32) -> Option<Score> {
        (depth == 1 && !self.opponent_threatens()).then_some(RAZOR_MARGIN)
    }

    fn search_moves(&self, out: &mut Vec<Move>) {
        self.position.search_moves(out);
        let threatened = self.opponent_threatens();
        let width = if self.position.plies_played() == self.root_stones {
            ROOT_WIDTH
        } else {
            WIDTH
        };
        if threatened
            || self.position.board().cells.len() <= SELECTIVE_MIN_CELLS
            || out.len() <= width
        {
            return;
        }
        // Partial selection: the `width` best by hint, in no particular order (the engine orders).
        // Each hint is computed once, into a stack buffer (a board has at most 625 cells).
        let mut scored = [(0i32, Move::NONE); super::MAX_SIDE * super::MAX_SIDE];
        let scored = &mut scored[..out.len()];
        for (slot, &mv) in scored.iter_mut().zip(out.iter()) {
            *slot = (-self.position.move_order_hint(mv), mv);
        }
        scored.select_nth_unstable_by_key(width, |&(key, _)| key);
        out.clear();
        out.extend(scored[..width].iter().map(|&(_, mv)| mv));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;

    /// 15x15 after `moves` (row, column), black first.
    fn selective(moves: &[(usize, usize)]) -> Selective {
        let mut p = Gomoku::new(15, 15, GomokuRules::default()).unwrap();
        for &(row, col) in moves {
            let mv = p.move_at(row, col);
            p.make(mv);
        }
        Selective::new(p)
    }

    #[test]
    fn quiet_positions_get_a_futility_margin_near_the_horizon_only() {
        let quiet = selective(&[(7, 7), (8, 8), (7, 9)]);
        assert_eq!(quiet.futility_margin(1), Some(FUTILITY_MARGIN));
        assert_eq!(
            quiet.futility_margin(FUTILITY_DEPTH),
            Some(FUTILITY_MARGIN * FUTILITY_DEPTH)
        );
        assert_eq!(quiet.futility_margin(FUTILITY_DEPTH + 1), None);
    }

    #[test]
    fn quiet_positions_are_razored_one_ply_from_the_horizon_only() {
        let quiet = selective(&[(7, 7), (8, 8), (7, 9)]);
        assert_eq!(quiet.razor_margin(1), Some(RAZOR_MARGIN));
        assert_eq!(quiet.razor_margin(2), None);
    }

    #[test]
    fn no_futility_pruning_or_razoring_against_an_open_three() {
        // Black's open three on row 7, white to move.
        let threatened = selective(&[(7, 6), (0, 0), (7, 7), (0, 14), (7, 8)]);
        assert!(threatened.opponent_threatens());
        assert_eq!(threatened.futility_margin(1), None);
        assert_eq!(threatened.razor_margin(1), None);
    }
}
