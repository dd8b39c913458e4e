//! Server-Sent Events: `POST /move` with `Accept: text/event-stream` streams the search.
//!
//! Events, in order:
//! - `iteration`, once per completed iteration of the search (depth only increases): depth,
//!   score, move, principal variation, nodes so far and milliseconds since the search started;
//! - `answer`, last: the whole answer, the very `MoveResponse` a JSON request gets, serialised
//!   by the same `serde_json`;
//! - `error` instead of `answer` if the search fails after the stream began (a panic): the
//!   problem+json body a JSON request would have got.
//!
//! The HTTP status is decided before the first byte of the stream: the request is parsed,
//! checked, looked up in the cache and admitted to the pool exactly as a JSON one, and once
//! its search is sure to get a worker in time (the service sends `Queued`, at once on
//! admission, even while the search still waits in the queue) the `200` with
//! `text/event-stream` goes out with a comment line. Every refusal before that (400, 422, 408,
//! 503) is the same problem+json as without streaming; a search admitted only on patience (not
//! sure to start) keeps its status until it starts. An answer from the cache streams just its
//! `answer` event. The `200` carries the `RateLimit` headers of the client's standing that
//! admission computed (admission is over by then), or its standing now for a cached answer.
//!
//! The search runs inside the response body's stream: a client that disconnects makes hyper
//! drop the body, which drops the service future, whose drop guard cancels the search (the
//! worker is free within a millisecond or so). A comment line every
//! [`KEEP_ALIVE`](super::sse::KEEP_ALIVE) keeps proxies from timing the stream out and lets a
//! write notice a peer that vanished silently.

use std::future::Future;

use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::AppState;
use super::error::ApiResult;
use super::identity::{standing_of, with_standing};
use super::move_response::MoveResponse;
use super::sse::{EventPump, json_event};
use super::vocabulary::{CellJson, millis};
use crate::engine::Proof;
use crate::games::notation::Notation;
use crate::service::Served;
use crate::service::caller::Caller;
use crate::service::progress::{IterationProgress, ProgressReceiver, SearchEvent};
use crate::service::wdl::{self, WdlModel};

/// The `iteration` event's data.
#[derive(Clone, Debug, Serialize)]
pub struct IterationEventJson {
    pub depth: u32,
    /// Side to move's view, engine scale (as the answer's `score`).
    pub score: crate::engine::Score,
    #[serde(rename = "move")]
    pub mv: CellJson,
    /// `[win, draw, loss]` per mille for the side to move (as the answer's `wdl`): exact for a
    /// decisive score, else the game's model (an iteration carries no draw proof).
    pub wdl: Option<[u16; 3]>,
    pub pv: Vec<CellJson>,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Milliseconds since the search started on its worker.
    pub elapsed_ms: f64,
}

impl IterationEventJson {
    /// The event for `it`, its moves named by `notation`.
    pub fn named(
        it: &IterationProgress,
        notation: Option<&Notation>,
        model: Option<&WdlModel>,
    ) -> Self {
        IterationEventJson {
            depth: it.depth,
            score: it.score,
            mv: CellJson::named(it.best, notation),
            wdl: model.map(|m| wdl::wdl(m, it.score, Proof::from_decisive(it.score)).as_array()),
            pv: it
                .pv
                .iter()
                .map(|&c| CellJson::named(c, notation))
                .collect(),
            nodes: it.nodes,
            elapsed_ms: millis(it.elapsed),
        }
    }
}

/// The `iteration` event of a search event; a queued search sends a comment line, so the
/// client sees the stream open while it waits for a worker; a worker starting sends nothing.
fn iteration_event(
    event: SearchEvent,
    notation: Option<&Notation>,
    model: Option<&WdlModel>,
) -> Option<Event> {
    match event {
        SearchEvent::Iteration(it) => Some(json_event(
            "iteration",
            &IterationEventJson::named(&it, notation, model),
        )),
        SearchEvent::Queued => {
            Some(Event::default().comment("admitted; waiting for a search worker"))
        }
        SearchEvent::Started => None,
    }
}

/// `POST /move` answered as an event stream (see the module doc): `answer` is the search (the
/// request counted in the metrics, see [`super::moves`]) for `caller`, `events` its progress,
/// `model` the asked game's win/draw/loss model (for the events' `wdl`).
pub async fn move_events(
    state: &AppState,
    caller: &Caller,
    answer: impl Future<Output = ApiResult<Served>> + Send + 'static,
    events: ProgressReceiver,
    notation: Option<Notation>,
    model: Option<WdlModel>,
) -> Response {
    let finish = move |result: ApiResult<Served>| {
        let served = result?;
        let response = MoveResponse::named(&served.answer, served.cached_from, notation.as_ref());
        Ok(json_event("answer", &response))
    };
    // Until the search is sure of a worker (the service sends `Queued` or `Started`), an error
    // is still a plain problem+json response.
    let each = move |event| iteration_event(event, notation.as_ref(), model.as_ref());
    match EventPump::new(answer, events, each, finish).first().await {
        // The search was admitted (or answered from a cache) before the first event: the
        // standing admission computed goes out with the stream's headers.
        Ok(pump) => with_standing(
            pump.into_response(state.service.metrics().event_stream_opened("/move")),
            standing_of(state, caller),
        ),
        Err(error) => error.into_response(),
    }
}
