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
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::error::{ApiError, ApiResult, status_of};
use super::json::ApiJson;
use super::move_list::MoveListJson;
use super::sse::{EventPump, json_event, wants_event_stream};
use super::vocabulary::{CellJson, Player, millis, outcome, whole};
use super::{AppState, Arrival};
use crate::engine::{Score, Side};
use crate::games::notation::Notation;
use crate::service::caller::{Caller, ClientId};
use crate::service::games::notation_for;
use crate::service::metrics::{self, RequestKind, RequestRecord};
use crate::service::review::{
    GameStatus, PlayerSummary, PlyReview, Review, ReviewError, ReviewQuery,
};

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
    pub moves: MoveListJson,
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
            moves: self.moves.into(),
            budget_ms: self.budget_ms,
            ply_budget_ms: self.ply_budget_ms,
            arrival,
            caller: Default::default(),
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
    /// The mover's `[win, draw, loss]` per mille with the best move and with the played one.
    pub best_wdl: [u16; 3],
    pub played_wdl: [u16; 3],
    /// This move's accuracy, 0 to 100, to a tenth (docs/api.md, "Game review").
    pub accuracy: f64,
    pub depth: u32,
    pub cached: bool,
}

impl PlyJson {
    /// The ply, its moves named by `notation`.
    pub fn named(p: &PlyReview, notation: Option<&Notation>) -> Self {
        let (best_outcome, best_plies_to_end) = outcome(p.best_proof);
        let (played_outcome, played_plies_to_end) = outcome(p.played_proof);
        PlyJson {
            ply: p.ply,
            player: p.player.into(),
            played: CellJson::named(p.played, notation),
            best: CellJson::named(p.best, notation),
            best_score: p.best_score,
            played_score: p.played_score,
            loss: p.loss,
            mark: p.mark.as_str(),
            best_outcome,
            best_plies_to_end,
            played_outcome,
            played_plies_to_end,
            outcome_change: p.outcome_change.clone(),
            best_wdl: p.best_wdl.as_array(),
            played_wdl: p.played_wdl.as_array(),
            accuracy: (p.accuracy * 10.0).round() / 10.0,
            depth: p.depth,
            cached: p.cached,
        }
    }
}

/// One player's summary: moves judged, how many got each mark, and the mean accuracy.
#[derive(Clone, Debug, Serialize)]
pub struct PlayerSummaryJson {
    pub moves: usize,
    pub best: usize,
    pub good: usize,
    pub inaccuracy: usize,
    pub mistake: usize,
    pub blunder: usize,
    /// The mean of the moves' accuracies, 0 to 100; `null` without a move.
    pub accuracy: Option<f64>,
}

impl From<&PlayerSummary> for PlayerSummaryJson {
    fn from(p: &PlayerSummary) -> Self {
        let [best, good, inaccuracy, mistake, blunder] = p.marks;
        PlayerSummaryJson {
            moves: p.moves,
            best,
            good,
            inaccuracy,
            mistake,
            blunder,
            accuracy: p.accuracy,
        }
    }
}

/// The review's `summary`, one entry per player.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryJson {
    #[serde(rename = "X")]
    pub x: PlayerSummaryJson,
    #[serde(rename = "O")]
    pub o: PlayerSummaryJson,
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
    /// The version of the model behind the plies' heuristic `best_wdl` and `played_wdl`.
    pub wdl_model: &'static str,
    /// Per player, over the plies judged: the count of each mark and the accuracy.
    pub summary: SummaryJson,
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

impl ReviewResponse {
    /// The body for `review`, its moves named by `notation`.
    pub fn named(review: &Review, notation: Option<&Notation>) -> Self {
        let (status, winner) = match review.status {
            GameStatus::Ongoing => ("ongoing", None),
            GameStatus::Draw => ("draw", None),
            GameStatus::Won(side) => ("won", Some(side.into())),
        };
        ReviewResponse {
            game: review.game,
            plies: review
                .plies
                .iter()
                .map(|p| PlyJson::named(p, notation))
                .collect(),
            wdl_model: review.wdl_model,
            summary: SummaryJson {
                x: (&review.summary[0]).into(),
                o: (&review.summary[1]).into(),
            },
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

impl From<&Review> for ReviewResponse {
    fn from(review: &Review) -> Self {
        ReviewResponse::named(review, None)
    }
}

impl From<ReviewError> for ApiError {
    fn from(error: ReviewError) -> Self {
        match error {
            ReviewError::Service(error) => ApiError::from(error),
            ReviewError::OutOfRange { pointer, message } => ApiError::unplayable(pointer, message),
        }
    }
}

/// `POST /review`.
pub async fn review(
    State(state): State<AppState>,
    arrival: Option<axum::Extension<Arrival>>,
    client: Option<axum::Extension<ClientId>>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<ReviewRequest>,
) -> ApiResult<Response> {
    let arrival = arrival.map_or_else(Instant::now, |a| a.0.0);
    let game = metrics::game_label(&request.game);
    let query = ReviewQuery {
        caller: Caller::interactive(super::identity::client_of(client)),
        ..request.into_query(arrival)
    };
    let notation = notation_for(&query.game, query.board.as_deref().unwrap_or_default());
    let service = state.service.clone();
    // Where admission writes the client's standing (for the `RateLimit` headers).
    let caller = query.caller.clone();
    // Counted as abandoned (499) if the client goes away before the review ends.
    let record = RequestRecord::start(service.metrics(), RequestKind::Review, game, arrival);
    if !wants_event_stream(&headers) {
        let result = service.review(query, None).await.map_err(ApiError::from);
        record.finish(status_of(&result));
        let response = Json(ReviewResponse::named(&result?, notation.as_ref())).into_response();
        let standing = super::identity::standing_of(&state, &caller);
        return Ok(super::identity::with_standing(response, standing));
    }
    // Plies are sent as judged; a slow reader holds the review back (bounded memory). Until
    // the first ply is judged, an error is still a plain problem+json response.
    let (sender, plies) = mpsc::channel::<PlyReview>(16);
    let reviewing = async move { service.review(query, Some(sender)).await };
    let finish = move |result: Result<Review, ReviewError>| {
        let result = result.map_err(ApiError::from);
        record.finish(status_of(&result));
        Ok(json_event(
            "review",
            &ReviewResponse::named(&result?, notation.as_ref()),
        ))
    };
    let each =
        move |ply: PlyReview| Some(json_event("ply", &PlyJson::named(&ply, notation.as_ref())));
    let pump = EventPump::new(reviewing, plies, each, finish)
        .first()
        .await?;
    // The first ply is judged, so the review's worker was admitted, unless that ply came from
    // a cache: then the client's standing now (the review admits its worker with its first
    // search, later).
    let standing = super::identity::standing_of(&state, &caller);
    let response = pump.into_response(state.service.metrics().event_stream_opened("/review"));
    Ok(super::identity::with_standing(response, standing))
}
