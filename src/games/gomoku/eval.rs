//! The static evaluation: a linear function of the board's pattern and shape counts, from the
//! side to move's point of view, plus the threat judgement of [`Gomoku::threat_bonus`].
//!
//! The board keeps, per side, how many (empty cell, line) pairs have each pattern level and how
//! many empty cells have each shape class, incrementally; the evaluation is then a dot product
//! of about thirty numbers, so it costs nothing per node. Mover and opponent have separate
//! weights because tempo is most of gomoku: the same open three is a winning threat for the side
//! to move and only a chore to answer for the other.
//!
//! [`Gomoku::threat_bonus`]: super::Gomoku

use super::board::{Board, COMBO_CLASSES};
use super::patterns::LEVELS;
use crate::engine::Score;

/// Weights of the linear evaluation.
pub struct Weights {
    /// Per pattern level (none, two, open two, three, open three, four, open four, five) of the
    /// side to move.
    pub mover_level: [i32; LEVELS],
    /// The same for the opponent (usually negative).
    pub other_level: [i32; LEVELS],
    /// Per shape class (see `board::combo_class`) of the side to move.
    pub mover_shape: [i32; COMBO_CLASSES],
    pub other_shape: [i32; COMBO_CLASSES],
    /// Constant term: the value of having the move.
    pub tempo: i32,
}

/// Fitted, not guessed: 3,444 positions from kibitz-Carbon games (free-style 15x15) labelled
/// with Rapfi's evaluation at 100 ms, least squares in win-probability space (logistic scale
/// 200) with the forced-win positions left out (the threat judgement and the search own those).
/// On held-out positions the fit's error is 0.017 against 0.046 for a constant and 0.048 for the
/// hand-set weights it replaced. (Their comparison in play came from the old arena, whose scores
/// were flattered by engines' protocol faults; it was not repeated.)
/// A mover's five is a win the search sees before any evaluation, hence its 0.
pub const WEIGHTS: Weights = Weights {
    mover_level: [0, 2, 6, 6, 26, 27, 48, 0],
    other_level: [0, -1, -4, -6, -24, -28, -15, -95],
    mover_shape: [0, 5, 4, 52, 32, 18, -2, 5],
    other_shape: [0, 3, -7, -63, -39, -23, -5, -8],
    tempo: 39,
};

/// The linear part of the evaluation for `mover` (0 or 1).
#[inline]
pub fn linear(board: &Board, mover: usize, w: &Weights) -> Score {
    let other = 1 - mover;
    let mut score = w.tempo;
    for level in 1..LEVELS {
        score += w.mover_level[level] * board.level_count[mover][level] as Score
            + w.other_level[level] * board.level_count[other][level] as Score;
    }
    for class in 1..COMBO_CLASSES {
        score += w.mover_shape[class] * board.combo_count[mover][class] as Score
            + w.other_shape[class] * board.combo_count[other][class] as Score;
    }
    score
}
