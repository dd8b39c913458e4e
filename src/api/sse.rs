//! Server-Sent Events, the part every streamed route shares: whether the client asked for a
//! stream, events as JSON, and [`EventPump`], which answers a long job as an event stream.
//! `/move` ([`super::stream`]) and `/review` ([`super::review`]) both stream through it.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::sync::mpsc;

use super::error::ApiError;
use crate::service::metrics::GaugeGuard;

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

/// [`wants_event_stream`] as an extractor: it reads `Accept` in place, where taking the
/// `HeaderMap` would copy every header of every `/move` request.
pub struct WantsEventStream(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsEventStream {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(WantsEventStream(wants_event_stream(&parts.headers)))
    }
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

type Job<R> = Pin<Box<dyn Future<Output = R> + Send>>;
type Finish<R> = Box<dyn FnOnce(R) -> Result<Event, ApiError> + Send>;
type Each<M> = Box<dyn FnMut(M) -> Option<Event> + Send>;

/// A long job answered as an event stream: each message the job sends while it runs becomes
/// an event (or none), then its result becomes the last event. `/move` and `/review` both pump
/// through it.
///
/// The job runs inside the response body's stream, so a client that disconnects drops the job
/// (and cancels what it runs). Messages are always drained before the last event, so every
/// message sent before the job ended goes out ahead of its result.
pub struct EventPump<M, R> {
    /// `None` once the job has ended.
    job: Option<Job<R>>,
    messages: mpsc::Receiver<M>,
    message_event: Each<M>,
    /// Turns the job's result into its last event; taken when the job ends.
    finish: Option<Finish<R>>,
    /// Events ready to go out, oldest first.
    ready: VecDeque<Event>,
}

impl<M: Send + 'static, R: Send + 'static> EventPump<M, R> {
    pub fn new(
        job: impl Future<Output = R> + Send + 'static,
        messages: mpsc::Receiver<M>,
        message_event: impl FnMut(M) -> Option<Event> + Send + 'static,
        finish: impl FnOnce(R) -> Result<Event, ApiError> + Send + 'static,
    ) -> Self {
        EventPump {
            job: Some(Box::pin(job)),
            messages,
            message_event: Box::new(message_event),
            finish: Some(Box::new(finish)),
            ready: VecDeque::new(),
        }
    }

    fn push(&mut self, message: M) {
        if let Some(event) = (self.message_event)(message) {
            self.ready.push_back(event);
        }
    }

    /// The job ended with `result`: the messages it sent last, then its own event.
    fn end(&mut self, result: R) -> Result<(), ApiError> {
        while let Ok(message) = self.messages.try_recv() {
            self.push(message);
        }
        let finish = self
            .finish
            .take()
            .ok_or_else(|| ApiError::Internal("a stream's job ended twice".into()))?;
        self.ready.push_back(finish(result)?);
        Ok(())
    }

    /// Waits for the job's first message or its end, whichever comes first. An error here
    /// (the job failed before sending anything: refused, malformed, shed) is the caller's to
    /// answer as a plain problem+json response; after it, the status is 200 and an error can
    /// only be an `error` event. A closed channel (a job dropped unstarted) leaves the result
    /// to decide.
    pub async fn first(mut self) -> Result<Self, ApiError> {
        let Some(mut job) = self.job.take() else {
            return Ok(self);
        };
        tokio::select! {
            // Messages first: every one is sent before the result is.
            biased;
            Some(message) = self.messages.recv() => {
                self.push(message);
                self.job = Some(job);
            }
            result = &mut job => self.end(result)?,
        }
        Ok(self)
    }

    /// The next event, or `None` once the last one went out.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let mut job = self.job.take()?;
            tokio::select! {
                biased;
                Some(message) = self.messages.recv() => {
                    self.job = Some(job);
                    self.push(message);
                }
                result = &mut job => {
                    if let Err(error) = self.end(result) {
                        self.ready.push_back(error_event(error).await);
                    }
                }
            }
        }
    }

    /// The SSE response that sends the rest of the events; `open` (a unit of the open-streams
    /// gauge) is held by the body, so it is let go when the body ends or is dropped.
    pub fn into_response(self, open: GaugeGuard) -> Response {
        sse_response(futures_util::stream::unfold(
            (self, open),
            |(mut pump, open)| async {
                let event = pump.next().await?;
                Some((Ok(event), (pump, open)))
            },
        ))
    }
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
