//! What a search tells its caller: the move, the score, and how it got there.

use std::time::Duration;

use super::game::{Move, Score, WIN, is_decisive};
use super::limits::StopReason;
use super::progress::{IterationInfo, Progress};
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

    /// The same result for the other side.
    pub fn flipped(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Loss => Outcome::Win,
            Outcome::Draw => Outcome::Draw,
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

/// Which selective threat search proved a report's win, when a game's own one did (gomoku's
/// root searches); the engine's exact search and game solvers leave it unset. A
/// threat-space proof is a line of forcing moves, the kind a teacher names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreatProof {
    /// Victory by continuous fours: every attacking move makes a four.
    Vcf,
    /// Victory by continuous threats: fours and open threes.
    Vct,
}

impl ThreatProof {
    /// Both kinds, for reading names back.
    pub const ALL: [ThreatProof; 2] = [ThreatProof::Vcf, ThreatProof::Vct];

    /// Upper-case name, as players write it (`VCF`, `VCT`).
    pub fn as_str(self) -> &'static str {
        match self {
            ThreatProof::Vcf => "VCF",
            ThreatProof::Vct => "VCT",
        }
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

/// One of the best root moves with its own principal variation (UCI's MultiPV line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub mv: Move,
    /// Exact at `depth`: the move was searched with a full window.
    pub score: Score,
    pub proof: Option<Proof>,
    pub depth: u32,
    /// The line, starting with `mv`.
    pub pv: Vec<Move>,
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
    /// With `multipv` k > 1 ([`super::SearchOptions::multipv`]): the k best root moves (fewer
    /// when fewer are legal), best first, each with its own line, all from the same completed
    /// iteration; `lines[0]` is `best_move` with `score` and `pv`. Empty otherwise.
    pub lines: Vec<Line>,
    pub iterations: Vec<Iteration>,
    /// Set when `proof` (a win, `proof.plies_to_end` plies long) came from a threat search.
    pub threat_proof: Option<ThreatProof>,
}

impl SearchReport {
    /// A search's report before it has found anything: no move, score 0, no iteration.
    pub fn empty(stop_reason: StopReason) -> Self {
        SearchReport {
            best_move: None,
            score: 0,
            proof: None,
            depth: 0,
            nodes: 0,
            table: TableStats::default(),
            elapsed: Duration::ZERO,
            stop_reason,
            pv: Vec::new(),
            root_moves: Vec::new(),
            lines: Vec::new(),
            iterations: Vec::new(),
            threat_proof: None,
        }
    }

    /// Records a completed `iteration` as the answer so far: its best move, score and depth,
    /// and `line` (the PV table's root line; a line that does not start with the best move,
    /// which a table cutoff at the root's child can leave, is replaced by the move alone). The
    /// iteration joins `iterations` and is told to `progress` with `nodes_so_far`, the whole
    /// search's count.
    pub fn complete_iteration(
        &mut self,
        iteration: Iteration,
        line: &[Move],
        nodes_so_far: u64,
        progress: Option<&Progress>,
    ) {
        let best = iteration.best_move;
        self.best_move = Some(best);
        self.score = iteration.score;
        self.depth = iteration.depth;
        self.pv.clear();
        if line.first() == Some(&best) {
            self.pv.extend_from_slice(line);
        } else {
            self.pv.push(best);
        }
        if let Some(progress) = progress {
            progress.report(&IterationInfo {
                depth: iteration.depth,
                score: iteration.score,
                best_move: best,
                pv: &self.pv,
                nodes: nodes_so_far,
            });
        }
        self.iterations.push(iteration);
    }

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
