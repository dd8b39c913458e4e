//! `POST /move`: the request and response bodies, and the handler.
//!
//! Implements the "API" section of the service issue; openapi.yaml (`MoveRequest`,
//! `MoveResponse`) is the contract these types must stay in step with.

use std::time::Instant;

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ApiResult};
use super::json::ApiJson;
use super::stream::WantsEventStream;
use super::{AppState, Arrival};
use crate::engine::{Algorithm, Proof, Score, Side};
use crate::games::Cell;
use crate::service::cache::CacheTier;
use crate::service::metrics::{self, RequestKind, RequestRecord};
use crate::service::{Answer, MoveQuery, Served};

/// `X` or `O`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum Player {
    X,
    O,
}

impl From<Player> for Side {
    fn from(player: Player) -> Side {
        match player {
            Player::X => Side::First,
            Player::O => Side::Second,
        }
    }
}

impl From<Side> for Player {
    fn from(side: Side) -> Player {
        match side {
            Side::First => Player::X,
            Side::Second => Player::O,
        }
    }
}

/// Which search algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlgorithmName {
    #[default]
    Alphabeta,
    Minimax,
}

/// By hand so that every wrong value, `null` included, gets a message naming the choices.
impl<'de> Deserialize<'de> for AlgorithmName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        const CHOICES: &str = "\"alphabeta\" or \"minimax\"";
        match Option::<String>::deserialize(deserializer)?.as_deref() {
            Some("alphabeta") => Ok(AlgorithmName::Alphabeta),
            Some("minimax") => Ok(AlgorithmName::Minimax),
            Some(other) => Err(D::Error::custom(format!(
                "unknown algorithm \"{}\", expected {CHOICES}",
                other.chars().take(40).collect::<String>()
            ))),
            None => Err(D::Error::custom(format!(
                "algorithm may not be null: expected {CHOICES}, or leave it out for alphabeta"
            ))),
        }
    }
}

/// The `POST /move` body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    pub game: String,
    /// Rows top to bottom.
    pub board: Vec<String>,
    pub to_move: Option<Player>,
    #[serde(default, deserialize_with = "whole::option")]
    pub budget_ms: Option<u64>,
    #[serde(default, deserialize_with = "whole::option")]
    pub max_depth: Option<u32>,
    #[serde(default, deserialize_with = "whole::option")]
    pub max_nodes: Option<u64>,
    #[serde(default)]
    pub algorithm: AlgorithmName,
    #[serde(default)]
    pub analysis: bool,
    #[serde(default, deserialize_with = "unique_keys::option")]
    pub rules: Option<serde_json::Value>,
    /// 1 (weakest) to 10 (full strength, the default); the range is checked by the service.
    #[serde(default, deserialize_with = "whole::option")]
    pub level: Option<u64>,
    #[serde(default, deserialize_with = "seed::option")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub deterministic: bool,
}

/// `seed`: any whole number from 0 to 2^64 - 1, exactly (a seed that saturated would silently
/// name another stream), or null. A number written with a zero fraction (`7.0`, `1e3`) is the
/// whole number it equals, as JSON Schema's `integer` has it.
mod seed {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::Number;

    pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
        let Some(number) = Option::<Number>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let whole_double = number
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < super::whole::TWO_TO_64)
            .map(|f| f as u64);
        number.as_u64().or(whole_double).map(Some).ok_or_else(|| {
            D::Error::custom(format!(
                "invalid seed {number}: expected a whole number from 0 to {}",
                u64::MAX
            ))
        })
    }
}

/// `rules` as JSON, refusing an object that names a key twice: serde_json's own `Value` keeps
/// the last, so `{"win_length": 4, "win_length": 5}` would silently play k = 5.
mod unique_keys {
    use std::fmt;

    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};

    pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
        Ok(Option::<Unique>::deserialize(deserializer)?.map(|unique| unique.0))
    }

    struct Unique(Value);

    impl<'de> Deserialize<'de> for Unique {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(UniqueVisitor)
        }
    }

    struct UniqueVisitor;

    impl<'de> Visitor<'de> for UniqueVisitor {
        type Value = Unique;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_unit<E: Error>(self) -> Result<Unique, E> {
            Ok(Unique(Value::Null))
        }

        fn visit_bool<E: Error>(self, v: bool) -> Result<Unique, E> {
            Ok(Unique(Value::Bool(v)))
        }

        fn visit_i64<E: Error>(self, v: i64) -> Result<Unique, E> {
            Ok(Unique(Value::Number(v.into())))
        }

        fn visit_u64<E: Error>(self, v: u64) -> Result<Unique, E> {
            Ok(Unique(Value::Number(v.into())))
        }

        fn visit_f64<E: Error>(self, v: f64) -> Result<Unique, E> {
            Ok(Unique(
                Number::from_f64(v).map_or(Value::Null, Value::Number),
            ))
        }

        fn visit_str<E: Error>(self, v: &str) -> Result<Unique, E> {
            Ok(Unique(Value::String(v.to_owned())))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
            let mut items = Vec::new();
            while let Some(Unique(item)) = seq.next_element()? {
                items.push(item);
            }
            Ok(Unique(Value::Array(items)))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
            let mut object = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let Unique(value) = map.next_value()?;
                if object.contains_key(&key) {
                    return Err(A::Error::custom(format!(
                        "duplicate key \"{}\"",
                        key.chars().take(40).collect::<String>()
                    )));
                }
                object.insert(key, value);
            }
            Ok(Unique(Value::Object(object)))
        }
    }
}

/// Whole-number fields as JSON Schema sees them: `5` and `5.0` are the same integer. Values
/// too large for the field saturate, so the range check answers them (422), not the parser.
pub(super) mod whole {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::Number;

    /// 2^64 as a double: every whole double below it is an exact u64.
    pub const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

    /// How a "too large" error starts. serde errors carry only text, so the JSON extractor
    /// tells this range error (a 422: the number is an integer, as the schema asks) from a
    /// shape error (a 400) by this prefix, which it strips.
    pub const OUT_OF_RANGE: &str = "out of range: ";

    /// A required whole number, read like [`option`] (JSON Schema's `integer` includes `3.0`).
    pub fn required<'de, D, T>(deserializer: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        option(deserializer)?.ok_or_else(|| D::Error::custom("expected a whole number, not null"))
    }

    pub fn option<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<u64>,
    {
        let Some(number) = Option::<Number>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let value = match number.as_u64() {
            Some(value) => Some(value),
            None => match number.as_f64() {
                Some(f) if f >= 0.0 && f.fract() == 0.0 => (f < TWO_TO_64).then_some(f as u64),
                _ => {
                    return Err(D::Error::custom(format!(
                        "invalid value: {number}, expected a whole number of at least 0"
                    )));
                }
            },
        };
        // Never saturate: an error echoing a clamped value would name a number nobody sent.
        match value.and_then(|v| T::try_from(v).ok()) {
            Some(value) => Ok(Some(value)),
            None => Err(D::Error::custom(format!(
                "{OUT_OF_RANGE}{number} is larger than this field can be"
            ))),
        }
    }
}

/// A cell, 0-based from the top-left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CellJson {
    pub row: usize,
    pub col: usize,
}

impl From<Cell> for CellJson {
    fn from(cell: Cell) -> Self {
        CellJson {
            row: cell.row,
            col: cell.col,
        }
    }
}

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
    /// Depth of the search that gave `score`: the list ranks deeper scores first.
    pub depth: u32,
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
    /// With `analysis` under renju: black's forbidden points now, with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbidden: Option<Vec<ForbiddenJson>>,
    /// The strength level played (10 = full strength).
    pub level: u8,
    /// The seed of a weakened level's choice (the request's, or a fresh one to replay it with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub deterministic: bool,
}

/// A point black may not play (renju), for analysis.
#[derive(Clone, Debug, Serialize)]
pub struct ForbiddenJson {
    pub cell: CellJson,
    /// `double_three`, `double_four` or `overline`.
    pub reason: &'static str,
}

fn outcome(proof: Option<Proof>) -> (Option<&'static str>, Option<u32>) {
    match proof {
        Some(p) => (Some(p.outcome.as_str()), Some(p.plies_to_end)),
        None => (None, None),
    }
}

impl MoveResponse {
    pub fn new(answer: &Answer, cached_from: Option<CacheTier>) -> Self {
        let (outcome_name, plies_to_end) = outcome(answer.proof);
        MoveResponse {
            game: answer.game,
            to_move: answer.to_move.into(),
            mv: answer.best.into(),
            score: answer.score,
            outcome: outcome_name,
            plies_to_end,
            depth: answer.depth,
            nodes: answer.nodes,
            nps: answer.nps,
            elapsed_ms: (answer.elapsed.as_secs_f64() * 1e6).round() / 1e3,
            stop_reason: answer.stop_reason.as_str(),
            tt: TableJson {
                probes: answer.table.probes,
                hits: answer.table.hits,
                fill_permille: answer.fill_permille,
            },
            pv: answer.pv.iter().map(|&c| c.into()).collect(),
            iterations: answer
                .iterations
                .iter()
                .map(|it| IterationJson {
                    depth: it.depth,
                    nodes: it.nodes,
                    score: it.score,
                    mv: it.best.into(),
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
                            mv: m.cell.into(),
                            score: m.score,
                            outcome: outcome_name,
                            plies_to_end,
                            depth: m.depth,
                        }
                    })
                    .collect()
            }),
            forbidden: answer.forbidden.as_ref().map(|points| {
                points
                    .iter()
                    .map(|p| ForbiddenJson {
                        cell: p.cell.into(),
                        reason: p.reason,
                    })
                    .collect()
            }),
            level: answer.style.level,
            seed: answer.style.seed,
            deterministic: answer.style.deterministic,
        }
    }
}

/// `POST /move`: suggests a move within the request's budget; streamed as Server-Sent Events
/// when the client accepts `text/event-stream` (see [`super::stream`]).
pub async fn suggest_move(
    State(state): State<AppState>,
    arrival: Option<axum::Extension<Arrival>>,
    WantsEventStream(streamed): WantsEventStream,
    ApiJson(request): ApiJson<MoveRequest>,
) -> ApiResult<Response> {
    let arrival = arrival.map_or_else(Instant::now, |a| a.0.0);
    let service = &state.service;
    let game_label = metrics::game_label(&request.game);
    let query = MoveQuery {
        game: request.game,
        board: request.board,
        to_move: request.to_move.map(Side::from),
        budget_ms: request.budget_ms,
        max_depth: request.max_depth,
        max_nodes: request.max_nodes,
        algorithm: match request.algorithm {
            AlgorithmName::Alphabeta => Algorithm::AlphaBeta,
            AlgorithmName::Minimax => Algorithm::Minimax,
        },
        analysis: request.analysis,
        rules: request.rules,
        style: crate::service::levels::PlayStyle {
            level: request.level,
            seed: request.seed,
            deterministic: request.deterministic,
        },
        arrival,
        progress: None,
    };
    if streamed {
        return Ok(super::stream::move_events(state.clone(), query, game_label, arrival).await);
    }
    // Counted as abandoned if the client goes away while the search runs.
    let record = RequestRecord::start(service.metrics(), RequestKind::Move, game_label, arrival);
    let result = service.dispatch(query).await.map_err(ApiError::from);
    record.finish(match &result {
        Ok(_) => 200,
        Err(error) => error.status_code().as_u16(),
    });
    let Served {
        answer,
        cached_from,
        ..
    } = result?;
    Ok(state.answer_bodies.response(&answer, cached_from))
}
