//! A search's answer with its moves as cells (what the API renders, the caches keep and the
//! shared cache checks), and how a worker turns the engine's report into one.
//!
//! The engine speaks in move codes; everything above the service speaks in cells, read on the
//! asked position (a Connect-4 move's landing cell, and each principal-variation move's, depend
//! on the stones below it, so the line is walked move by move).

use std::sync::Arc;
use std::time::Duration;

use super::ServiceError;
use super::cache::CacheTier;
use super::games::ServedGame;
use super::levels;
use crate::engine::{
    Move, Outcome, Proof, Score, SearchLimits, SearchOptions, Side, StopReason, TableStats,
    ThreatProof, TranspositionTable,
};
use crate::games::Cell;
use crate::games::gomoku::labels::{MoveLabels, Threat};

/// A root move with its score, for analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredCell {
    pub cell: Cell,
    pub score: Score,
    pub proof: Option<Proof>,
    /// Depth of the search that gave `score` (see [`crate::engine::MoveScore::depth`]).
    pub depth: u32,
}

/// One of the best moves with its own line (`multipv`).
#[derive(Clone, Debug, PartialEq)]
pub struct LineCell {
    pub cell: Cell,
    pub score: Score,
    pub proof: Option<Proof>,
    pub depth: u32,
    /// The line's cells, read along it, starting with `cell`.
    pub pv: Vec<Cell>,
    /// Gomoku: what the line's move makes and blocks (as the answer's `threats`).
    pub threats: Option<MoveLabels>,
}

/// A point the rules forbid to a player now (renju: black), for analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct ForbiddenCell {
    pub cell: Cell,
    /// `double_three`, `double_four` or `overline`.
    pub reason: &'static str,
}

/// One completed iteration of iterative deepening.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationCell {
    pub depth: u32,
    pub nodes: u64,
    pub score: Score,
    pub best: Cell,
}

/// A search's answer, with moves as cells: what the API renders and the cache keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub game: &'static str,
    pub to_move: Side,
    pub best: Cell,
    /// Side to move's view; engine scale (proven: ±(1,000,000 − plies to the end)).
    pub score: Score,
    pub proof: Option<Proof>,
    pub depth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub elapsed: Duration,
    /// The time the search was given: from its start on a worker to its deadline. A queued
    /// search gets less than its budget; the cache serves it only to budgets it covers.
    pub window: Duration,
    pub stop_reason: StopReason,
    pub table: TableStats,
    pub fill_permille: u32,
    pub pv: Vec<Cell>,
    pub iterations: Vec<IterationCell>,
    /// Every legal move scored, best first, when asked.
    pub analysis: Option<Vec<ScoredCell>>,
    /// With analysis, under rules that forbid points (renju): black's forbidden points now.
    pub forbidden: Option<Vec<ForbiddenCell>>,
    /// With `multipv`: the best moves, best first, each with its line; `lines[0]` is `best`
    /// with `score`, `proof` and `pv`.
    pub lines: Option<Vec<LineCell>>,
    /// The level, seed and mode the answer was computed with.
    pub style: levels::Style,
    /// Gomoku: what `best` makes and blocks ([`crate::games::BoardGame::threat_labels`]);
    /// `None` for the other games. It follows from the position and the move, so the shared
    /// cache does not store it: `label_best` works it out again on reading.
    pub threats: Option<MoveLabels>,
    /// Set when `proof` (a win) came from a threat search: gomoku's root VCF or VCT.
    pub threat_proof: Option<ThreatProof>,
}

impl Answer {
    /// Heap bytes held by the lists (for the cache's byte bound).
    pub fn heap_bytes(&self) -> usize {
        self.pv.capacity() * std::mem::size_of::<Cell>()
            + self.iterations.capacity() * std::mem::size_of::<IterationCell>()
            + self
                .analysis
                .as_ref()
                .map_or(0, |a| a.capacity() * std::mem::size_of::<ScoredCell>())
            + self
                .forbidden
                .as_ref()
                .map_or(0, |f| f.capacity() * std::mem::size_of::<ForbiddenCell>())
            + self.lines.as_ref().map_or(0, |lines| {
                lines.capacity() * std::mem::size_of::<LineCell>()
                    + lines
                        .iter()
                        .map(|l| {
                            l.pv.capacity() * std::mem::size_of::<Cell>()
                                + l.threats.as_ref().map_or(0, |t| {
                                    (t.makes.capacity() + t.blocks.capacity())
                                        * std::mem::size_of::<Threat>()
                                })
                        })
                        .sum::<usize>()
            })
            + self.threats.as_ref().map_or(0, |t| {
                (t.makes.capacity() + t.blocks.capacity()) * std::mem::size_of::<Threat>()
            })
    }
}

/// An answer and whether it came from a cache.
#[derive(Clone, Debug)]
pub struct Served {
    pub answer: Arc<Answer>,
    pub cached: bool,
    /// Which cache, when `cached`.
    pub cached_from: Option<CacheTier>,
}

/// Runs on a worker: searches and turns engine moves into cells.
pub(super) fn think<G: ServedGame>(
    position: &G,
    limits: &SearchLimits,
    options: SearchOptions,
    table: &TranspositionTable,
    window: Duration,
    style: levels::Style,
) -> Result<Answer, ServiceError> {
    let report = levels::search_at_level(position, limits, options, table, &style);
    let best = report.best_move.ok_or(ServiceError::NoMove)?;
    let pv = cells_along(position, &report.pv);
    let cell = |mv: Move| position.cell_of(mv);
    // With `multipv`, the engine's lines; at k = 1 (or a search cut short before its first
    // multi-line iteration) the one line is the answer's own move.
    let lines = (options.multipv > 0).then(|| {
        if report.lines.is_empty() {
            vec![LineCell {
                cell: cell(best),
                score: report.score,
                proof: report.proof,
                depth: report.depth,
                pv: pv.clone(),
                threats: position.threat_labels(best),
            }]
        } else {
            report
                .lines
                .iter()
                .map(|line| LineCell {
                    cell: cell(line.mv),
                    score: line.score,
                    proof: line.proof,
                    depth: line.depth,
                    pv: cells_along(position, &line.pv),
                    threats: position.threat_labels(line.mv),
                })
                .collect()
        }
    });
    Ok(Answer {
        game: G::NAME,
        to_move: position.side_to_move(),
        best: cell(best),
        score: report.score,
        proof: report.proof,
        depth: report.depth,
        nodes: report.nodes,
        nps: report.nodes_per_second(),
        elapsed: report.elapsed,
        window,
        stop_reason: report.stop_reason,
        table: report.table,
        fill_permille: table.fill_permille(),
        pv,
        iterations: report
            .iterations
            .iter()
            .map(|it| IterationCell {
                depth: it.depth,
                nodes: it.nodes,
                score: it.score,
                best: cell(it.best_move),
            })
            .collect(),
        analysis: options.analysis.then(|| {
            report
                .root_moves
                .iter()
                .map(|m| ScoredCell {
                    cell: cell(m.mv),
                    score: m.score,
                    proof: m.proof,
                    depth: m.depth,
                })
                .collect()
        }),
        forbidden: options
            .analysis
            .then(|| position.forbidden_cells())
            .flatten()
            .map(|points| {
                points
                    .into_iter()
                    .map(|(mv, reason)| ForbiddenCell {
                        cell: cell(mv),
                        reason,
                    })
                    .collect()
            }),
        lines,
        style,
        threats: position.threat_labels(best),
        // Only a win is proven by a threat search; anything else would be a bug upstream,
        // and the label would mislead.
        threat_proof: report
            .threat_proof
            .filter(|_| report.proof.is_some_and(|p| p.outcome == Outcome::Win)),
    })
}

/// The cells of `line` from `position`, read along it (a Connect-4 move's landing cell depends
/// on the moves before it).
fn cells_along<G: ServedGame>(position: &G, line: &[Move]) -> Vec<Cell> {
    let mut walk = position.clone();
    let mut cells = Vec::with_capacity(line.len());
    for &mv in line {
        cells.push(walk.cell_of(mv));
        walk.make(mv);
    }
    cells
}

/// The threat labels of the move that plays into `best` in `position` (`None` when no legal
/// move does, or the game has no labels): for an answer read back from the shared cache.
pub(super) fn label_best<G: ServedGame>(position: &G, best: Cell) -> Option<MoveLabels> {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    moves
        .into_iter()
        .find(|&mv| position.cell_of(mv) == best)
        .and_then(|mv| position.threat_labels(mv))
}
