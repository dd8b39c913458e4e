//! `/analyses`: batch analysis. `POST /analyses` takes many positions (each a `/move` body)
//! and games (each a `/review` body) and answers `202 Accepted` at once, with the batch's id
//! and `Location`; `GET /analyses/{id}` says how far it is and gives the results so far (as
//! Server-Sent Events with `Accept: text/event-stream`, one `result` event per item as it
//! completes, then the whole batch as `analysis`); `POST /analyses/{id}/cancel` cancels it
//! (the batch stays readable), `DELETE /analyses/{id}` deletes it (a `GET` after is 404);
//! `GET /analyses` is the queue, for a scaler.
//!
//! Key idea: a batch is refused whole, before anything is queued, when any item would be
//! refused as a lone request: every item is parsed by the very types `/move` and `/review`
//! parse, and checked by the service's own checks, its errors' pointers put under
//! `/items/{i}`; whether the batch then gets in (its limits, its client's, every client's
//! together) is the service's to say ([`crate::service::batch::Batches::admit`]); this module
//! translates its refusals. Items are stored re-serialised compactly, never as sent. Once queued, items are run by the idle workers of every replica
//! ([`crate::service::batch`]) through [`Runner`], which answers each as its route would
//! have: its `status` is the HTTP status the lone request would have had, its `answer` the
//! body (the answer, or the problem), or the status is `failed` once its attempts are spent.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::json::{parse, read_held_body, without_bom};
use super::move_response::MoveResponse;
use super::moves::MoveRequest;
use super::review::{ReviewRequest, ReviewResponse};
use super::sse::{json_event, sse_response, wants_event_stream};
use super::vocabulary::whole;
use crate::service::MoveQuery;
use crate::service::batch::watchers::{End, Watcher};
use crate::service::batch::{
    BatchError, BatchView, Delivery, ItemRunner, NewBatch, NewItem, Outcome, Priority,
};
use crate::service::caller::{Caller, ClientId};
use crate::service::games::notation_for;
use crate::service::review::ReviewQuery;

/// When a client told the batch queue is full may try again.
const FULL_RETRY_AFTER: Duration = Duration::from_secs(5);

/// The `POST /analyses` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalysesRequest {
    /// Each item as sent: parsed, and queued, one by one.
    items: Vec<Box<RawValue>>,
    /// The budget of items that name none: a position's `budget_ms`, a game's `ply_budget_ms`.
    #[serde(default, deserialize_with = "whole::option")]
    budget_ms: Option<u64>,
    #[serde(default)]
    priority: Option<PriorityJson>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum PriorityJson {
    High,
    Normal,
    Low,
}

impl From<PriorityJson> for Priority {
    fn from(priority: PriorityJson) -> Self {
        match priority {
            PriorityJson::High => Priority::High,
            PriorityJson::Normal => Priority::Normal,
            PriorityJson::Low => Priority::Low,
        }
    }
}

/// One item: a position or a game, as its route's body.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "lowercase",
    expecting = "an item: {\"move\": <a /move body>} or {\"review\": <a /review body>}"
)]
enum ItemJson {
    Move(MoveRequest),
    Review(ReviewRequest),
}

impl ItemJson {
    /// The item with the batch's budget where it names none.
    fn with_budget(mut self, budget_ms: Option<u64>) -> Self {
        match &mut self {
            ItemJson::Move(request) => request.budget_ms = request.budget_ms.or(budget_ms),
            ItemJson::Review(request) => {
                request.ply_budget_ms = request.ply_budget_ms.or(budget_ms);
            }
        }
        self
    }

    fn kind(&self) -> &'static str {
        match self {
            ItemJson::Move(_) => "move",
            ItemJson::Review(_) => "review",
        }
    }
}

/// A batch as answered by `POST` (202), `GET` and `POST .../cancel`.
#[derive(Serialize)]
struct AnalysisJson<'a> {
    id: &'a str,
    status: &'static str,
    done: usize,
    total: usize,
    /// In index order, each index at most once.
    results: Vec<&'a RawValue>,
}

impl<'a> AnalysisJson<'a> {
    fn new(view: &'a BatchView, results: &'a [Box<RawValue>]) -> Self {
        AnalysisJson {
            id: &view.id,
            status: view.state.as_str(),
            done: view.results.len(),
            total: view.total,
            results: results.iter().map(AsRef::as_ref).collect(),
        }
    }
}

/// The stored results that are JSON (Redis is not trusted: another value is left out).
fn parsed_results(view: &BatchView) -> Vec<Box<RawValue>> {
    view.results
        .iter()
        .filter_map(|(_, result)| RawValue::from_string(result.clone()).ok())
        .collect()
}

fn analysis_response(status: StatusCode, view: &BatchView) -> Response {
    let results = parsed_results(view);
    (status, axum::Json(AnalysisJson::new(view, &results))).into_response()
}

/// One item's result, as stored.
#[derive(Serialize)]
struct ResultJson<'a> {
    index: usize,
    /// The HTTP status the lone request would have had, or `"failed"`.
    status: serde_json::Value,
    /// The body the lone request would have had: its answer, or its problem.
    answer: &'a RawValue,
    replica: &'a str,
    attempts: u64,
}

impl From<BatchError> for ApiError {
    fn from(error: BatchError) -> Self {
        match error {
            over @ BatchError::TooManyInFlight { limit } => ApiError::RateLimited {
                detail: over.to_string(),
                retry_after: Duration::from_secs(1),
                limit: super::error::RateLimit {
                    policy: "batches",
                    quota: limit,
                    remaining: 0,
                },
            },
            limit @ (BatchError::Empty
            | BatchError::TooManyItems { .. }
            | BatchError::OverBudget { .. }) => ApiError::unplayable("/items", limit.to_string()),
            full @ BatchError::Full { .. } => ApiError::Overloaded {
                detail: full.to_string(),
                retry_after: FULL_RETRY_AFTER,
            },
            watchers @ BatchError::TooManyWatchers { .. } => ApiError::Overloaded {
                detail: watchers.to_string(),
                retry_after: Duration::from_secs(1),
            },
            BatchError::Store(cause) => {
                tracing::warn!(%cause, "batch store failed");
                ApiError::Overloaded {
                    detail: "the batch store (Redis) did not answer".into(),
                    retry_after: Duration::from_secs(1),
                }
            }
        }
    }
}

/// `POST /analyses`.
pub async fn submit(
    State(state): State<AppState>,
    client: Option<axum::Extension<ClientId>>,
    request: Request,
) -> ApiResult<Response> {
    // The in-flight limit counts by the client's identity (its key, else its address), never
    // by a name the client picks.
    let client = super::identity::client_of(client).name.to_string();
    let settings = state.batches.settings().clone();
    let limit = super::json::BodyLimit {
        bytes: state.config.batch_max_body_bytes,
        setting: "KIBITZ_BATCH_MAX_BODY_BYTES",
    };
    let body = read_held_body(request, &state, limit).await?;
    let batch: AnalysesRequest = parse(without_bom(&body))?;
    drop(body);
    // Too many items are refused before any is parsed.
    settings.check_count(batch.items.len() as u64)?;
    // The batch's own budget is checked even when every item names its own (the schema's
    // `minimum: 1` holds for the field, whether or not an item inherits it).
    if batch.budget_ms == Some(0) {
        return Err(ApiError::unplayable(
            "/budget_ms",
            "budget_ms is 0; it must be at least 1",
        ));
    }
    let mut items = Vec::with_capacity(batch.items.len());
    for (index, raw) in batch.items.iter().enumerate() {
        let at = format!("/items/{index}");
        let item = parse::<ItemJson>(raw.get().as_bytes())
            .map_err(|e| e.under(&at))?
            .with_budget(batch.budget_ms);
        let kind = item.kind();
        let work_ms = check(&state, item)
            .await
            .map_err(|e| e.under(&format!("{at}/{kind}")))?;
        items.push(NewItem {
            json: compact(raw).map_err(|e| e.under(&at))?,
            work_ms,
        });
    }
    let id = super::bookkeeping::random_uuid().hyphenated().to_string();
    let new = NewBatch {
        id: id.clone(),
        client,
        priority: batch.priority.map(Priority::from).unwrap_or_default(),
        budget_ms: batch.budget_ms,
        items,
    };
    let in_flight = state.batches.admit(&new).await?;
    let view = BatchView {
        id: id.clone(),
        state: crate::service::batch::BatchState::Queued,
        total: new.items.len(),
        results: Vec::new(),
    };
    let mut response = analysis_response(StatusCode::ACCEPTED, &view);
    if let Ok(location) = HeaderValue::from_str(&format!("/analyses/{id}")) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    // The client's batches in flight as the admission that took this one counted them (this
    // one included), against KIBITZ_BATCH_MAX_IN_FLIGHT; the same policy as its 429. No `t`:
    // a unit comes back when one of them finishes, which nobody can tell yet.
    let limit = super::error::RateLimit {
        policy: "batches",
        quota: settings.max_in_flight,
        remaining: settings.max_in_flight.saturating_sub(in_flight),
    };
    response.headers_mut().extend(limit.headers(None));
    Ok(response)
}

/// The item's JSON without the white space it was sent with (it parsed as an item, so it
/// parses as a value; keys come out sorted, which no item's meaning depends on).
fn compact(raw: &RawValue) -> ApiResult<String> {
    let value: serde_json::Value = parse(raw.get().as_bytes())?;
    serde_json::to_string(&value).map_err(|e| ApiError::Internal(e.to_string()))
}

/// Checks an item as its route would before searching; its budget in ms.
async fn check(state: &AppState, item: ItemJson) -> ApiResult<u64> {
    let now = Instant::now();
    match item {
        ItemJson::Move(request) => Ok(state.service.check_move(&request.into_query(now)).await?),
        ItemJson::Review(request) => {
            Ok(state.service.check_review(&request.into_query(now)).await?)
        }
    }
}

/// An id as batches have them (a UUID's text); anything else names no batch.
fn known_shape(id: &str) -> bool {
    id.len() == 36 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

async fn find(state: &AppState, id: &str) -> ApiResult<BatchView> {
    let view = if known_shape(id) {
        state.batches.view(id).await?
    } else {
        None
    };
    view.ok_or_else(|| ApiError::UnknownAnalysis(super::clip_path(id)))
}

/// `GET /analyses/{id}`: the batch as JSON, or as events with `Accept: text/event-stream`.
///
/// A stream watches the batch through the replica's shared poller
/// ([`crate::service::batch::watchers`]): each result once, then the whole batch as `analysis`
/// once it is done or cancelled; or an `error` event when the batch is deleted or expires
/// (404's problem) or the replica shuts down (503's: the client asks again, another replica
/// answers it with Redis). So every stream ends with a last event.
pub async fn status(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    if !wants_event_stream(&headers) {
        let view = find(&state, &id).await?;
        return Ok(analysis_response(StatusCode::OK, &view));
    }
    if !known_shape(&id) {
        return Err(ApiError::UnknownAnalysis(super::clip_path(&id)));
    }
    let watcher = state.batches.watch(&id).await?;
    if watcher.seen.borrow().end == Some(End::Gone) {
        return Err(ApiError::UnknownAnalysis(super::clip_path(&id)));
    }
    let open = state
        .service
        .metrics()
        .event_stream_opened("/analyses/{id}");
    let events = futures_util::stream::unfold(
        Some(Streamed {
            id,
            watcher,
            sent: 0,
            _open: open,
        }),
        |streamed| async move {
            let mut streamed = streamed?;
            let events = streamed.next_events().await;
            let last = events.last().is_some_and(|(last, _)| *last);
            let events: Vec<Result<Event, Infallible>> =
                events.into_iter().map(|(_, event)| Ok(event)).collect();
            Some((
                futures_util::stream::iter(events),
                (!last).then_some(streamed),
            ))
        },
    );
    Ok(sse_response(futures_util::StreamExt::flatten(events)))
}

/// A streamed `GET`: its watch and how much of it was sent.
struct Streamed {
    id: String,
    watcher: Watcher,
    /// Results sent: the first `sent` of the watch's results (in the order it saw them).
    sent: usize,
    _open: crate::service::metrics::GaugeGuard,
}

impl Streamed {
    /// The events due now (waiting until there is one): each new result, and last the whole
    /// batch once it is done or cancelled, or the error that ends the watch; `true` marks the
    /// last event.
    async fn next_events(&mut self) -> Vec<(bool, Event)> {
        loop {
            let (mut events, last) = {
                let seen = self.watcher.seen.borrow_and_update();
                let mut events = Vec::new();
                for (_, result) in seen.results.iter().skip(self.sent) {
                    if let Ok(raw) = RawValue::from_string(result.to_string()) {
                        events.push((false, json_event("result", &raw)));
                    }
                }
                self.sent = seen.results.len();
                let last = match seen.end {
                    Some(End::Gone) => Some(Err(ApiError::UnknownAnalysis(self.id.clone()))),
                    Some(End::Closing) => Some(Err(ApiError::NotReady)),
                    None if seen.is_final() => {
                        let view = seen.view(&self.id);
                        let results = parsed_results(&view);
                        Some(Ok(json_event(
                            "analysis",
                            &AnalysisJson::new(&view, &results),
                        )))
                    }
                    None => None,
                };
                (events, last)
            };
            match last {
                Some(Ok(event)) => events.push((true, event)),
                Some(Err(error)) => events.push((true, super::sse::error_event(error).await)),
                None => {}
            }
            if !events.is_empty() {
                return events;
            }
            // The poller left without a last word (it never does): end as on shutdown.
            if self.watcher.seen.changed().await.is_err() {
                return vec![(true, super::sse::error_event(ApiError::NotReady).await)];
            }
        }
    }
}

/// `DELETE /analyses/{id}`: deletes the batch (its items not yet run are not run): `204`, and
/// `404` from then on.
pub async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    if known_shape(&id) && state.batches.delete(&id).await? {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Err(ApiError::UnknownAnalysis(super::clip_path(&id)))
}

/// `POST /analyses/{id}/cancel`: cancels the batch (items not yet run are not run); the batch
/// as it is (`done` if it had finished), still readable.
pub async fn cancel(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let view = if known_shape(&id) {
        state.batches.cancel(&id).await?
    } else {
        None
    };
    let view = view.ok_or_else(|| ApiError::UnknownAnalysis(super::clip_path(&id)))?;
    Ok(analysis_response(StatusCode::OK, &view))
}

/// The `GET /analyses` body: the queue over every replica.
#[derive(Serialize)]
struct QueueJson<'a> {
    /// Items waiting for a worker.
    queued: u64,
    /// Items being run.
    pending: u64,
    /// `redis` (shared by the replicas) or `memory` (this replica's).
    store: &'static str,
    replica: &'a str,
}

/// `GET /analyses`: the queue, for a scaler (also `kibitz_batch_queue_depth`).
pub async fn queue_status(State(state): State<AppState>) -> ApiResult<Response> {
    let depth = state.batches.depth().await?;
    let settings = state.batches.settings();
    Ok(axum::Json(QueueJson {
        queued: depth.queued,
        pending: depth.pending,
        store: if state.config.redis_url.is_some() {
            "redis"
        } else {
            "memory"
        },
        replica: &settings.replica,
    })
    .into_response())
}

/// Runs batch items as their routes would answer them (see the module doc).
pub struct Runner {
    state: AppState,
}

impl Runner {
    pub fn new(state: AppState) -> Arc<Self> {
        Arc::new(Runner { state })
    }

    /// The item answered as its route would answer it: its status and body; or when to run
    /// it again is the service's to decide ([`Outcome::Shed`], [`Outcome::Retry`]).
    async fn answer(&self, delivery: &Delivery) -> Result<(u16, String), Outcome> {
        let item = parse::<ItemJson>(delivery.item.as_bytes()).map_err(|_| Outcome::Retry)?;
        let answered = match item.with_budget(delivery.budget_ms) {
            ItemJson::Move(request) => self.play(request).await,
            ItemJson::Review(request) => self.review(request).await,
        };
        match answered {
            Ok(body) => Ok((200, body)),
            // A `/move` took the worker between the look and the search, or the time went
            // before it (a slow store): not the item's fault.
            Err(ApiError::Overloaded { .. } | ApiError::RequestTimeout(_)) => Err(Outcome::Shed),
            // A panic or a fault of ours: not an answer; its attempts decide.
            Err(ApiError::Internal(_)) => Err(Outcome::Retry),
            Err(error) => Ok((error.status_code().as_u16(), problem_body(error).await)),
        }
    }

    async fn play(&self, request: MoveRequest) -> ApiResult<String> {
        let query = MoveQuery {
            caller: batch_item_caller(),
            ..request.into_query(Instant::now())
        };
        // Moves named on the asked board, as `/move` names them.
        let notation = notation_for(&query.game, &query.board);
        let served = self.state.service.dispatch(query).await?;
        let body = MoveResponse::named(&served.answer, served.cached_from, notation.as_ref());
        serde_json::to_string(&body).map_err(|e| ApiError::Internal(e.to_string()))
    }

    async fn review(&self, request: ReviewRequest) -> ApiResult<String> {
        let query = ReviewQuery {
            caller: batch_item_caller(),
            ..request.into_query(Instant::now())
        };
        let notation = notation_for(&query.game, query.board.as_deref().unwrap_or_default());
        let review = self.state.service.review(query, None).await?;
        serde_json::to_string(&ReviewResponse::named(&review, notation.as_ref()))
            .map_err(|e| ApiError::Internal(e.to_string()))
    }

    fn result(&self, delivery: &Delivery, status: serde_json::Value, body: &str) -> String {
        let fallback = RawValue::from_string("null".to_owned());
        let Ok(answer) = RawValue::from_string(body.to_owned()).or(fallback) else {
            return String::new();
        };
        serde_json::to_string(&ResultJson {
            index: delivery.index,
            status,
            answer: &answer,
            replica: &self.state.batches.settings().replica,
            attempts: delivery.attempts,
        })
        .unwrap_or_default()
    }
}

/// Batch items run as background work: a `/move`, `/review` or `/tree` that finds no worker
/// free in time takes one back from an item, which is run again later
/// ([`crate::service::pool::Yielding`]).
fn batch_item_caller() -> Caller {
    Caller::background(ClientId::new("batch", "batch"))
}

/// The problem+json body `error` renders as.
async fn problem_body(error: ApiError) -> String {
    let bytes = axum::body::to_bytes(error.into_response().into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl ItemRunner for Runner {
    fn run<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Outcome> {
        async move {
            match self.answer(delivery).await {
                Ok((status, body)) => {
                    Outcome::Answered(self.result(delivery, status.into(), &body))
                }
                Err(again) => again,
            }
        }
        .boxed()
    }

    fn failed(&self, delivery: &Delivery) -> String {
        let problem = serde_json::json!({
            "type": "urn:kibitz:problem:batch-item-failed",
            "title": "The item could not be analysed",
            "status": 500,
            "detail": format!(
                "the item was handed to a worker {} times without an answer (its search \
                 failed, its replica stopped, or it does not decode): KIBITZ_BATCH_MAX_ATTEMPTS",
                delivery.attempts.saturating_sub(1)
            ),
        });
        self.result(delivery, "failed".into(), &problem.to_string())
    }
}
