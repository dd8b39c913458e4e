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
//! checked, looked up in the cache and admitted to the pool exactly as a JSON one, and only
//! once its search has a worker (the service sends `Started`) does the `200` with
//! `text/event-stream` go out. Every refusal before that (400, 422, 408, 503) is the same
//! problem+json as without streaming. An answer from the cache streams just its `answer` event.
//!
//! The search runs inside the response body's stream: a client that disconnects makes hyper
//! drop the body, which drops the service future, whose drop guard cancels the search (the
//! worker is free within a millisecond or so). A comment line every [`KEEP_ALIVE`] keeps
//! proxies from timing the stream out and lets a write notice a peer that vanished silently.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::AppState;
use super::error::ApiError;
use super::moves::{CellJson, MoveResponse};
use crate::service::metrics::{GameLabel, MoveLabels};
use crate::service::progress::{self, IterationProgress, ProgressReceiver, SearchEvent};
use crate::service::{MoveQuery, Served, Service, ServiceError};

/// The media type of a streamed answer.
pub const EVENT_STREAM: &str = "text/event-stream";

/// Interval of the keep-alive comments while the search is quiet.
pub const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// Whether the client asked for a stream: `text/event-stream` among its `Accept` media ranges
/// (any case, with or without parameters), not refused with `q=0`.
pub fn wants_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let essence = parts.next().unwrap_or("");
            essence.eq_ignore_ascii_case(EVENT_STREAM)
                && !parts.any(|p| {
                    p.split_once('=').is_some_and(|(k, v)| {
                        k.trim().eq_ignore_ascii_case("q")
                            && v.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
                    })
                })
        })
}

/// The `iteration` event's data.
#[derive(Clone, Debug, Serialize)]
pub struct IterationEventJson {
    pub depth: u32,
    /// Side to move's view, engine scale (as the answer's `score`).
    pub score: crate::engine::Score,
    #[serde(rename = "move")]
    pub mv: CellJson,
    pub pv: Vec<CellJson>,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Milliseconds since the search started on its worker.
    pub elapsed_ms: f64,
}

impl From<&IterationProgress> for IterationEventJson {
    fn from(it: &IterationProgress) -> Self {
        IterationEventJson {
            depth: it.depth,
            score: it.score,
            mv: it.best.into(),
            pv: it.pv.iter().map(|&c| c.into()).collect(),
            nodes: it.nodes,
            elapsed_ms: millis(it.elapsed),
        }
    }
}

/// Milliseconds with microsecond precision (as the answer's `elapsed_ms`).
pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// An SSE event named `name` with `data` as JSON.
pub fn json_event(name: &'static str, data: &impl Serialize) -> Event {
    let event = Event::default().event(name);
    match event.clone().json_data(data) {
        Ok(event) => event,
        // Our own response types always serialise; say so rather than panic.
        Err(_) => event.data("{}"),
    }
}

/// The `error` event: the problem+json body the error renders as.
pub async fn error_event(error: ApiError) -> Event {
    let response = error.into_response();
    let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    Event::default()
        .event("error")
        .data(String::from_utf8_lossy(&bytes))
}

/// An SSE response over `stream`, with keep-alive comments and no proxy buffering.
pub fn sse_response<S>(stream: S) -> Response
where
    S: futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // nginx buffers responses unless told not to.
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

type Search = Pin<Box<dyn Future<Output = Result<Served, ServiceError>> + Send>>;

/// Records a finished `/move` request in the metrics (as the JSON handler does).
fn record(service: &Service, game: &str, status: u16, arrival: Instant) {
    let metrics = service.metrics();
    metrics
        .move_requests
        .get_or_create(&MoveLabels {
            game: game.to_owned(),
            status,
        })
        .inc();
    metrics
        .move_duration
        .get_or_create(&GameLabel {
            game: game.to_owned(),
        })
        .observe(arrival.elapsed().as_secs_f64());
}

/// What the stream still has to do.
struct MoveStream {
    search: Option<Search>,
    events: ProgressReceiver,
    /// Events ready to go out, oldest first.
    ready: VecDeque<Event>,
    service: Service,
    game: &'static str,
    arrival: Instant,
}

impl MoveStream {
    fn push(&mut self, event: SearchEvent) {
        if let SearchEvent::Iteration(it) = event {
            self.ready
                .push_back(json_event("iteration", &IterationEventJson::from(&it)));
        }
    }

    /// The next event, or `None` once the answer (or error) went out.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let mut search = self.search.take()?;
            tokio::select! {
                // Iterations first: all of them are sent before the answer is.
                biased;
                Some(event) = self.events.recv() => {
                    self.search = Some(search);
                    self.push(event);
                }
                result = &mut search => {
                    // An iteration sent just before the answer may not have been seen yet.
                    while let Ok(event) = self.events.try_recv() {
                        self.push(event);
                    }
                    let last = answer_or_error(result, &self.service, self.game, self.arrival);
                    let event = match last {
                        Ok(answer) => answer,
                        Err(error) => error_event(error).await,
                    };
                    self.ready.push_back(event);
                }
            }
        }
    }
}

/// The `answer` event of a finished search, or its error; recorded in the metrics either way.
fn answer_or_error(
    result: Result<Served, ServiceError>,
    service: &Service,
    game: &str,
    arrival: Instant,
) -> Result<Event, ApiError> {
    match result {
        Ok(served) => {
            record(service, game, 200, arrival);
            let response = MoveResponse::new(&served.answer, served.cached_from);
            Ok(json_event("answer", &response))
        }
        Err(error) => {
            let error = ApiError::from(error);
            record(service, game, error.status_code().as_u16(), arrival);
            Err(error)
        }
    }
}

/// `POST /move` answered as an event stream (see the module doc). `game` is the metrics label.
pub async fn move_events(
    state: AppState,
    mut query: MoveQuery,
    game: &'static str,
    arrival: Instant,
) -> Response {
    let (sender, events) = progress::channel();
    query.progress = Some(sender);
    let service = state.service.clone();
    let mut search: Search = {
        let service = service.clone();
        Box::pin(async move { service.dispatch(query).await })
    };
    let mut stream = MoveStream {
        search: None,
        events,
        ready: VecDeque::new(),
        service,
        game,
        arrival,
    };
    // Until the search has a worker, an error is still a plain problem+json response. A closed
    // channel (the job was dropped unstarted) disables the first branch: the result decides.
    tokio::select! {
        biased;
        Some(event) = stream.events.recv() => {
            stream.push(event);
            stream.search = Some(search);
        }
        result = &mut search => {
            // A quick search can end before its first event was looked at: stream what it sent.
            while let Ok(event) = stream.events.try_recv() {
                stream.push(event);
            }
            match answer_or_error(result, &stream.service, game, arrival) {
                Ok(answer) => stream.ready.push_back(answer),
                Err(error) => return error.into_response(),
            }
        }
    }
    sse_response(futures_util::stream::unfold(stream, |mut stream| async {
        let event = stream.next().await?;
        Some((Ok(event), stream))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn a_stream_is_sent_only_to_clients_that_accept_one() {
        assert!(wants_event_stream(&accept("text/event-stream")));
        assert!(wants_event_stream(&accept("Text/Event-Stream; q=0.5")));
        assert!(wants_event_stream(&accept(
            "application/json, text/event-stream"
        )));
        assert!(!wants_event_stream(&accept("text/event-stream;q=0")));
        assert!(!wants_event_stream(&accept("application/json")));
        assert!(!wants_event_stream(&accept("*/*")));
        assert!(!wants_event_stream(&HeaderMap::new()));
    }
}
