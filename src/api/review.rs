//! `POST /review`: a game's moves judged ply by ply (see `service::review` for how).
//!
//! JSON by default; with `Accept: text/event-stream` one `ply` event per ply as soon as it is
//! judged, then a `review` event with the whole answer (the JSON body, same serializer), or an
//! `error` event if a search fails after the stream began. Everything that can be refused is
//! refused before the stream starts (bad JSON, unknown game, bad start board or rules, an
//! illegal move naming its ply, budgets out of range, and a 503 when the first search cannot
//! get a worker), as problem+json.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::error::{ApiError, ApiResult, status_of};
use super::json::ApiJson;
use super::sse::{EventPump, json_event, wants_event_stream};
use super::vocabulary::{CellJson, Player, millis, outcome, whole};
use super::{AppState, Arrival};
use crate::engine::{Score, Side};
use crate::service::metrics::{self, RequestKind, RequestRecord};
use crate::service::review::{GameStatus, PlayedMove, PlyReview, Review, ReviewError, ReviewQuery};

/// A move in the list: a cell `{"row", "col"}`, or a Connect-4 column number.
#[derive(Clone, Copy, Debug)]
pub enum MoveJson {
    Column(usize),
    Cell(CellJson),
}

/// By hand, not `untagged`: every wrong move gets a message naming what is expected (and,
/// through the path tracker, the field: `/moves/3/row`), never a Rust type's name; a cell
/// takes exactly `row` and `col`.
impl<'de> Deserialize<'de> for MoveJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MoveVisitor)
    }
}

struct MoveVisitor;

/// A cell coordinate: a whole number of at least 0 (as `/move`'s limits are read).
struct Coordinate(usize);

impl<'de> Deserialize<'de> for Coordinate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        whole::required(deserializer).map(Coordinate)
    }
}

impl<'de> Visitor<'de> for MoveVisitor {
    type Value = MoveJson;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "a move: a cell {\"row\": R, \"col\": C} with whole numbers from 0, or a Connect-4 \
             column number from 0",
        )
    }

    fn visit_u64<E: de::Error>(self, column: u64) -> Result<MoveJson, E> {
        usize::try_from(column)
            .map(MoveJson::Column)
            .map_err(|_| E::custom(format!("column {column} is too large")))
    }

    fn visit_i64<E: de::Error>(self, column: i64) -> Result<MoveJson, E> {
        match u64::try_from(column) {
            Ok(column) => self.visit_u64(column),
            Err(_) => Err(E::custom(format!(
                "invalid move {column}: a column is a whole number from 0"
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, column: f64) -> Result<MoveJson, E> {
        // JSON Schema's `integer` includes `3.0`.
        if column >= 0.0 && column.fract() == 0.0 && column < whole::TWO_TO_64 {
            self.visit_u64(column as u64)
        } else if column >= whole::TWO_TO_64 && column.fract() == 0.0 {
            Err(E::custom(format!(
                "{}column {column} is larger than any board",
                whole::OUT_OF_RANGE
            )))
        } else {
            Err(E::custom(format!(
                "invalid move {column}: a column is a whole number from 0"
            )))
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MoveJson, A::Error> {
        let (mut row, mut col) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            let slot = match key.as_str() {
                "row" => &mut row,
                "col" => &mut col,
                other => {
                    return Err(de::Error::custom(format!(
                        "unknown field \"{}\" in a move: a cell has exactly \"row\" and \"col\"",
                        other.chars().take(40).collect::<String>()
                    )));
                }
            };
            if slot.is_some() {
                return Err(de::Error::custom(format!(
                    "duplicate field \"{key}\" in a move"
                )));
            }
            *slot = Some(map.next_value::<Coordinate>()?.0);
        }
        match (row, col) {
            (Some(row), Some(col)) => Ok(MoveJson::Cell(CellJson { row, col })),
            (None, _) => Err(de::Error::custom("a move's cell lacks \"row\"")),
            (_, None) => Err(de::Error::custom("a move's cell lacks \"col\"")),
        }
    }
}

/// The `POST /review` body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    pub game: String,
    /// The starting position (rows top to bottom, as `/move`'s `board`); the game's empty
    /// default board when absent.
    #[serde(default)]
    pub board: Option<Vec<String>>,
    #[serde(default)]
    pub to_move: Option<Player>,
    #[serde(default)]
    pub rules: Option<serde_json::Value>,
    pub moves: Vec<MoveJson>,
    #[serde(default, deserialize_with = "whole::option")]
    pub budget_ms: Option<u64>,
    #[serde(default, deserialize_with = "whole::option")]
    pub ply_budget_ms: Option<u64>,
}

impl ReviewRequest {
    /// The service's query for this body, arriving at `arrival`.
    pub fn into_query(self, arrival: Instant) -> ReviewQuery {
        ReviewQuery {
            game: self.game,
            board: self.board,
            to_move: self.to_move.map(Side::from),
            rules: self.rules,
            moves: self
                .moves
                .iter()
                .map(|m| match *m {
                    MoveJson::Column(col) => PlayedMove::Column(col),
                    MoveJson::Cell(cell) => PlayedMove::Cell {
                        row: cell.row,
                        col: cell.col,
                    },
                })
                .collect(),
            budget_ms: self.budget_ms,
            ply_budget_ms: self.ply_budget_ms,
            arrival,
        }
    }
}

/// One ply of the answer.
#[derive(Clone, Debug, Serialize)]
pub struct PlyJson {
    pub ply: usize,
    pub player: Player,
    pub played: CellJson,
    pub best: CellJson,
    pub best_score: Score,
    pub played_score: Score,
    pub loss: Score,
    pub mark: &'static str,
    pub best_outcome: Option<&'static str>,
    pub best_plies_to_end: Option<u32>,
    pub played_outcome: Option<&'static str>,
    pub played_plies_to_end: Option<u32>,
    pub outcome_change: Option<String>,
    pub depth: u32,
    pub cached: bool,
}

impl From<&PlyReview> for PlyJson {
    fn from(p: &PlyReview) -> Self {
        let (best_outcome, best_plies_to_end) = outcome(p.best_proof);
        let (played_outcome, played_plies_to_end) = outcome(p.played_proof);
        PlyJson {
            ply: p.ply,
            player: p.player.into(),
            played: p.played.into(),
            best: p.best.into(),
            best_score: p.best_score,
            played_score: p.played_score,
            loss: p.loss,
            mark: p.mark.as_str(),
            best_outcome,
            best_plies_to_end,
            played_outcome,
            played_plies_to_end,
            outcome_change: p.outcome_change.clone(),
            depth: p.depth,
            cached: p.cached,
        }
    }
}

/// Where the proven outcome first changed.
#[derive(Clone, Debug, Serialize)]
pub struct ChangeJson {
    pub ply: usize,
    pub player: Player,
    pub change: String,
}

/// Why a review stopped early.
#[derive(Clone, Debug, Serialize)]
pub struct IncompleteJson {
    /// `shutdown` or `search_failed`.
    pub reason: &'static str,
    pub detail: String,
    /// Plies of the list not judged.
    pub plies_left: usize,
}

/// The `200` body of `POST /review` (and the data of the streamed `review` event).
#[derive(Clone, Debug, Serialize)]
pub struct ReviewResponse {
    pub game: &'static str,
    pub plies: Vec<PlyJson>,
    pub first_outcome_change: Option<ChangeJson>,
    /// Whether every ply of the list was judged.
    pub complete: bool,
    /// Why not, when not `complete`: the review stopped early and `plies` holds the plies
    /// judged before (a prefix of the list).
    pub incomplete: Option<IncompleteJson>,
    /// `ongoing`, `won` or `draw`, after the last move.
    pub status: &'static str,
    pub winner: Option<Player>,
    pub elapsed_ms: f64,
}

impl From<&Review> for ReviewResponse {
    fn from(review: &Review) -> Self {
        let (status, winner) = match review.status {
            GameStatus::Ongoing => ("ongoing", None),
            GameStatus::Draw => ("draw", None),
            GameStatus::Won(side) => ("won", Some(side.into())),
        };
        ReviewResponse {
            game: review.game,
            plies: review.plies.iter().map(PlyJson::from).collect(),
            first_outcome_change: review.first_outcome_change.map(|i| {
                let ply = &review.plies[i];
                ChangeJson {
                    ply: ply.ply,
                    player: ply.player.into(),
                    change: ply.outcome_change.clone().unwrap_or_default(),
                }
            }),
            complete: review.incomplete.is_none(),
            incomplete: review.incomplete.as_ref().map(|why| IncompleteJson {
                reason: why.reason,
                detail: why.detail.clone(),
                plies_left: review.moves - review.plies.len(),
            }),
            status,
            winner,
            elapsed_ms: millis(review.elapsed),
        }
    }
}

impl From<ReviewError> for ApiError {
    fn from(error: ReviewError) -> Self {
        match error {
            ReviewError::Service(error) => ApiError::from(error),
            illegal @ ReviewError::IllegalMove { index, .. } => {
                ApiError::unplayable(format!("/moves/{index}"), illegal.to_string())
            }
            ReviewError::OutOfRange { pointer, message } => ApiError::unplayable(pointer, message),
        }
    }
}

/// `POST /review`.
pub async fn review(
    State(state): State<AppState>,
    arrival: Option<axum::Extension<Arrival>>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<ReviewRequest>,
) -> ApiResult<Response> {
    let arrival = arrival.map_or_else(Instant::now, |a| a.0.0);
    let game = metrics::game_label(&request.game);
    let query = request.into_query(arrival);
    let service = state.service.clone();
    // Counted as abandoned (499) if the client goes away before the review ends.
    let record = RequestRecord::start(service.metrics(), RequestKind::Review, game, arrival);
    if !wants_event_stream(&headers) {
        let result = service.review(query, None).await.map_err(ApiError::from);
        record.finish(status_of(&result));
        return Ok(Json(ReviewResponse::from(&result?)).into_response());
    }
    // Plies are sent as judged; a slow reader holds the review back (bounded memory). Until
    // the first ply is judged, an error is still a plain problem+json response.
    let (sender, plies) = mpsc::channel::<PlyReview>(16);
    let reviewing = async move { service.review(query, Some(sender)).await };
    let finish = move |result: Result<Review, ReviewError>| {
        let result = result.map_err(ApiError::from);
        record.finish(status_of(&result));
        Ok(json_event("review", &ReviewResponse::from(&result?)))
    };
    let pump = EventPump::new(reviewing, plies, ply_event, finish)
        .first()
        .await?;
    Ok(pump.into_response(state.service.metrics().event_stream_opened("/review")))
}

fn ply_event(ply: PlyReview) -> Option<Event> {
    Some(json_event("ply", &PlyJson::from(&ply)))
}
