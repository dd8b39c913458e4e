//! What a search tells its caller: the move, the score, and how it got there.

use std::time::Duration;

use super::game::{Move, Score, WIN, is_decisive};
use super::limits::StopReason;
use super::table::TableStats;

/// The game-theoretic result of a position, once proven, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Loss,
    Draw,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Loss => "loss",
            Outcome::Draw => "draw",
        }
    }
}

/// A proven result: who wins and when the game ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub outcome: Outcome,
    /// Plies until the game ends with best play, the suggested move being ply 1.
    pub plies_to_end: u32,
}

impl Proof {
    /// The proof a decisive (mate-convention) score carries, if it is one.
    pub fn from_decisive(score: Score) -> Option<Proof> {
        if !is_decisive(score) {
            return None;
        }
        let plies_to_end = (WIN - score.abs()) as u32;
        let outcome = if score > 0 {
            Outcome::Win
        } else {
            Outcome::Loss
        };
        Some(Proof {
            outcome,
            plies_to_end,
        })
    }
}

/// The score of one root move, from the side to move's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveScore {
    pub mv: Move,
    pub score: Score,
    pub proof: Option<Proof>,
    /// Depth of the search that gave `score`. An iteration cut short leaves some moves scored
    /// one ply deeper than the rest; the list ranks every deeper score above every shallower
    /// one, so its first entry is always the report's best move with the report's score.
    pub depth: u32,
}

/// One completed iteration of iterative deepening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    pub depth: u32,
    pub score: Score,
    pub best_move: Move,
    /// Nodes this iteration visited.
    pub nodes: u64,
}

/// Everything a search found out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchReport {
    /// The suggested move; `None` only when the game is already over.
    pub best_move: Option<Move>,
    pub score: Score,
    /// Set when the result is proven, not just searched.
    pub proof: Option<Proof>,
    /// Deepest iteration completed (0 when none completed).
    pub depth: u32,
    pub nodes: u64,
    pub table: TableStats,
    pub elapsed: Duration,
    pub stop_reason: StopReason,
    /// Principal variation, starting with `best_move`.
    pub pv: Vec<Move>,
    /// Score of every legal root move, when analysis was asked for: deepest first, then best
    /// first; `root_moves[0]` is `best_move` with `score`.
    pub root_moves: Vec<MoveScore>,
    pub iterations: Vec<Iteration>,
}

impl SearchReport {
    /// Nodes per second, 0 for an instant search.
    pub fn nodes_per_second(&self) -> u64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            (self.nodes as f64 / secs) as u64
        } else {
            0
        }
    }
}
