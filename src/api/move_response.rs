//! The `200` body of `POST /move`, [`MoveResponse`]: what a JSON request gets, what the event
//! stream's `answer` event carries, and what the answer-body cache keeps serialised.
//!
//! openapi.yaml's `MoveResponse` is the contract this type must stay in step with.

use serde::Serialize;

use super::threats::ThreatsJson;
use super::vocabulary::{CellJson, Player, millis, outcome, wdl, wdl_model};
use crate::engine::Score;
use crate::games::Cell;
use crate::games::notation::Notation;
use crate::service::Answer;
use crate::service::cache::CacheTier;

/// Transposition-table use of one search.
#[derive(Clone, Debug, Serialize)]
pub struct TableJson {
    pub probes: u64,
    pub hits: u64,
    pub fill_permille: u32,
}

/// One completed iteration.
#[derive(Clone, Debug, Serialize)]
pub struct IterationJson {
    pub depth: u32,
    pub nodes: u64,
    pub score: Score,
    #[serde(rename = "move")]
    pub mv: CellJson,
}

/// One root move's score, for analysis.
#[derive(Clone, Debug, Serialize)]
pub struct MoveScoreJson {
    #[serde(rename = "move")]
    pub mv: CellJson,
    pub score: Score,
    pub outcome: Option<&'static str>,
    pub plies_to_end: Option<u32>,
    /// `[win, draw, loss]` per mille for the side to move, playing this move (exact when
    /// proven; see [`super::vocabulary::wdl`]).
    pub wdl: Option<[u16; 3]>,
    /// Depth of the search that gave `score`: the list ranks deeper scores first.
    pub depth: u32,
}

/// One of the best moves with its own line (`multipv`), best first.
#[derive(Clone, Debug, Serialize)]
pub struct LineJson {
    #[serde(rename = "move")]
    pub mv: CellJson,
    pub score: Score,
    pub outcome: Option<&'static str>,
    pub plies_to_end: Option<u32>,
    pub wdl: Option<[u16; 3]>,
    pub depth: u32,
    /// The line, starting with `move`.
    pub pv: Vec<CellJson>,
    /// Gomoku: what the line's move makes and blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threats: Option<ThreatsJson>,
}

/// The `200` body of `POST /move`.
#[derive(Clone, Debug, Serialize)]
pub struct MoveResponse {
    pub game: &'static str,
    pub to_move: Player,
    #[serde(rename = "move")]
    pub mv: CellJson,
    /// Side to move's view, the engine's scale kept as is: proven, ±(1,000,000 − plies_to_end)
    /// (0 for a draw); otherwise the heuristic value, strictly inside ±999,872. Bigger is
    /// always better for the side to move, and a quicker win scores higher.
    pub score: Score,
    pub outcome: Option<&'static str>,
    pub plies_to_end: Option<u32>,
    /// `[win, draw, loss]` per mille for the side to move: exact when proven, else from the
    /// game's fitted model (`wdl_model`).
    pub wdl: Option<[u16; 3]>,
    /// The version of the model behind a heuristic `wdl` (in this answer and its analysis).
    pub wdl_model: Option<&'static str>,
    pub depth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub elapsed_ms: f64,
    pub stop_reason: &'static str,
    pub tt: TableJson,
    pub pv: Vec<CellJson>,
    pub iterations: Vec<IterationJson>,
    pub cached: bool,
    /// `local` or `shared` (Redis), when `cached`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<Vec<MoveScoreJson>>,
    /// With `multipv`: the k best moves, best first, each with its line; `lines[0]` is `move`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<LineJson>>,
    /// With `analysis` under renju: black's forbidden points now, with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbidden: Option<Vec<ForbiddenJson>>,
    /// The strength level played (10 = full strength).
    pub level: u8,
    /// The seed of a weakened level's choice (the request's, or a fresh one to replay it with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub deterministic: bool,
    /// Gomoku: what `move` makes and blocks, and a threat search's proof of the win.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threats: Option<ThreatsJson>,
}

/// A point black may not play (renju), for analysis.
#[derive(Clone, Debug, Serialize)]
pub struct ForbiddenJson {
    pub cell: CellJson,
    /// `double_three`, `double_four` or `overline`.
    pub reason: &'static str,
}

impl MoveResponse {
    /// The body for `answer`, its moves without their names.
    pub fn new(answer: &Answer, cached_from: Option<CacheTier>) -> Self {
        Self::named(answer, cached_from, None)
    }

    /// The body for `answer`, every move named by `notation` (the asked board's).
    pub fn named(
        answer: &Answer,
        cached_from: Option<CacheTier>,
        notation: Option<&Notation>,
    ) -> Self {
        let cell = |c: Cell| CellJson::named(c, notation);
        let (outcome_name, plies_to_end) = outcome(answer.proof);
        MoveResponse {
            game: answer.game,
            to_move: answer.to_move.into(),
            mv: cell(answer.best),
            score: answer.score,
            outcome: outcome_name,
            plies_to_end,
            wdl: wdl(answer.game, answer.score, answer.proof),
            wdl_model: wdl_model(answer.game),
            depth: answer.depth,
            nodes: answer.nodes,
            nps: answer.nps,
            elapsed_ms: millis(answer.elapsed),
            stop_reason: answer.stop_reason.as_str(),
            tt: TableJson {
                probes: answer.table.probes,
                hits: answer.table.hits,
                fill_permille: answer.fill_permille,
            },
            pv: answer.pv.iter().map(|&c| cell(c)).collect(),
            iterations: answer
                .iterations
                .iter()
                .map(|it| IterationJson {
                    depth: it.depth,
                    nodes: it.nodes,
                    score: it.score,
                    mv: cell(it.best),
                })
                .collect(),
            cached: cached_from.is_some(),
            cached_from: cached_from.map(CacheTier::as_str),
            analysis: answer.analysis.as_ref().map(|moves| {
                moves
                    .iter()
                    .map(|m| {
                        let (outcome_name, plies_to_end) = outcome(m.proof);
                        MoveScoreJson {
                            mv: cell(m.cell),
                            score: m.score,
                            outcome: outcome_name,
                            plies_to_end,
                            wdl: wdl(answer.game, m.score, m.proof),
                            depth: m.depth,
                        }
                    })
                    .collect()
            }),
            lines: answer.lines.as_ref().map(|lines| {
                lines
                    .iter()
                    .map(|line| {
                        let (outcome_name, plies_to_end) = outcome(line.proof);
                        LineJson {
                            mv: cell(line.cell),
                            score: line.score,
                            outcome: outcome_name,
                            plies_to_end,
                            wdl: wdl(answer.game, line.score, line.proof),
                            depth: line.depth,
                            pv: line.pv.iter().map(|&c| cell(c)).collect(),
                            // A line's proof is the engine's own, never a threat search's.
                            threats: line
                                .threats
                                .as_ref()
                                .map(|labels| ThreatsJson::new(labels, None, line.proof)),
                        }
                    })
                    .collect()
            }),
            forbidden: answer.forbidden.as_ref().map(|points| {
                points
                    .iter()
                    .map(|p| ForbiddenJson {
                        cell: cell(p.cell),
                        reason: p.reason,
                    })
                    .collect()
            }),
            level: answer.style.level,
            seed: answer.style.seed,
            deterministic: answer.style.deterministic,
            threats: answer
                .threats
                .as_ref()
                .map(|labels| ThreatsJson::new(labels, answer.threat_proof, answer.proof)),
        }
    }
}
