//! What every request gets on its way in and out, in one layer: the time it arrived (the start
//! of its budget), its id (the client's `x-request-id`, else a new random UUID; echoed on the
//! response), its count and latency in the metrics (by route template and status), and, at
//! debug level, a span and a log line (target `kibitz::access`).
//!
//! One hand-written layer instead of the five generic ones it replaced, because each of those
//! cost every request something this service did not need (measured with callgrind, see
//! `benches/http_overhead.rs` and docs/journal/service.md, "HTTP overhead"): tower-http's trace layer
//! made an info-level span and wrote an info-level log line per response (about a fifth of the
//! instructions of a cached `/move`, and a `write` system call); `MakeRequestUuid` asked the
//! kernel for 16 random bytes per request (a `getrandom` system call); the two `from_fn`
//! middlewares each cloned the services beneath them and boxed a future; the metrics labels
//! were owned strings allocated per request. Here the span and the log line cost nothing
//! unless debug logging is on for `kibitz::access`, ids come from a keyed hash of a
//! per-thread count, and the labels are `&'static str`.
//!
//! The layer runs after routing (axum applies `Router::layer` to each route), so the route's
//! template is known; it sits outside the panic catcher, so a panic's 500 is counted too.
//! An error response's log line ([`ErrorLog`]) is written here, naming the request. While the
//! request is handled, its id is also in a task-local ([`current_request_id`]), so that the
//! line of an error rendered into a body elsewhere (an SSE event) names it too.

use std::cell::Cell;
use std::convert::Infallible;
use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, Response};
use tower::{Layer, Service};
use tracing::Instrument;

use super::error::ErrorLog;
use super::{Arrival, REQUEST_ID};
use crate::service::metrics::{Metrics, RouteLabel, RouteLabels};

/// The log target of the per-request span and line: `RUST_LOG=info,kibitz::access=debug`.
pub const ACCESS_LOG: &str = "kibitz::access";

/// The route label of requests no route matched (404s).
const UNMATCHED: &str = "unmatched";

tokio::task_local! {
    static CURRENT_REQUEST_ID: HeaderValue;
}

/// The id of the request being handled by this task, if any (for log lines).
pub fn current_request_id() -> Option<String> {
    CURRENT_REQUEST_ID
        .try_with(|id| String::from_utf8_lossy(id.as_bytes()).into_owned())
        .ok()
}

/// Adds [`Bookkeeping`] to each route; `routes` are the router's path templates, the closed set
/// the route label takes its values from.
#[derive(Clone)]
pub struct BookkeepingLayer {
    metrics: Arc<Metrics>,
    routes: Arc<[&'static str]>,
}

impl BookkeepingLayer {
    pub fn new(metrics: Arc<Metrics>, routes: Arc<[&'static str]>) -> Self {
        BookkeepingLayer { metrics, routes }
    }
}

impl<S> Layer<S> for BookkeepingLayer {
    type Service = Bookkeeping<S>;

    fn layer(&self, inner: S) -> Bookkeeping<S> {
        Bookkeeping {
            inner,
            layer: self.clone(),
        }
    }
}

/// See the module documentation.
#[derive(Clone)]
pub struct Bookkeeping<S> {
    inner: S,
    layer: BookkeepingLayer,
}

impl<S> Bookkeeping<S> {
    /// The route's template as a `&'static str`, so the metrics labels need no allocation.
    fn route_label(&self, request: &Request) -> &'static str {
        let Some(matched) = request.extensions().get::<MatchedPath>() else {
            return UNMATCHED;
        };
        self.layer
            .routes
            .iter()
            .find(|route| **route == matched.as_str())
            .copied()
            .unwrap_or(UNMATCHED)
    }
}

impl<S, B> Service<Request> for Bookkeeping<S>
where
    S: Service<Request, Response = Response<B>, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let arrival = Instant::now();
        request.extensions_mut().insert(Arrival(arrival));
        let header = HeaderName::from_static(REQUEST_ID);
        let id = match request.headers().get(&header) {
            Some(id) => id.clone(),
            None => {
                let id = new_request_id();
                request.headers_mut().insert(header.clone(), id.clone());
                id
            }
        };
        let route = self.route_label(&request);
        // Disabled (and then nearly free) unless debug logging is on for the target.
        let span = tracing::debug_span!(
            target: ACCESS_LOG,
            "request",
            method = %request.method(),
            uri = %request.uri(),
            request_id = %String::from_utf8_lossy(id.as_bytes()),
        );
        let answer = self.inner.call(request);
        let task_id = id.clone();
        let metrics = Arc::clone(&self.layer.metrics);
        let handled = async move {
            let Ok(mut response) = answer.instrument(span.clone()).await;
            if let Some(log) = response.extensions_mut().remove::<ErrorLog>() {
                log.write(&String::from_utf8_lossy(id.as_bytes()));
            }
            let status = response.status().as_u16();
            let seconds = arrival.elapsed().as_secs_f64();
            metrics
                .http_requests
                .get_or_create(&RouteLabels { route, status })
                .inc();
            metrics
                .http_duration
                .get_or_create(&RouteLabel { route })
                .observe(seconds);
            tracing::debug!(
                target: ACCESS_LOG,
                parent: &span,
                status,
                latency_ms = seconds * 1e3,
                "answered"
            );
            response.headers_mut().entry(header).or_insert(id);
            Ok(response)
        };
        Box::pin(CURRENT_REQUEST_ID.scope(task_id, handled))
    }
}

thread_local! {
    /// This thread's id source: hash keys std drew from the OS for this thread, and a count.
    static ID_SOURCE: (RandomState, Cell<u64>) = (RandomState::new(), Cell::new(0));
}

/// A random (version 4) UUID: SipHash under this thread's secret keys of a count, a
/// pseudo-random function, so ids are unpredictable and distinct without a system call each.
/// Request ids and batch analysis ids (`api::analyses`) are drawn from it.
pub fn random_uuid() -> uuid::Uuid {
    let bytes = ID_SOURCE.with(|(keys, count)| {
        let n = count.get();
        count.set(n.wrapping_add(1));
        let high = u128::from(keys.hash_one((n, 0u8)));
        let low = u128::from(keys.hash_one((n, 1u8)));
        (high << 64 | low).to_le_bytes()
    });
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// A new request id: a [`random_uuid`] as text.
fn new_request_id() -> HeaderValue {
    let uuid = random_uuid();
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let text = uuid.hyphenated().encode_lower(&mut text);
    // Hex digits and hyphens are always a valid header value.
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_request_ids_are_distinct_version_4_uuids() {
        let ids: std::collections::HashSet<String> = (0..1000)
            .map(|_| new_request_id().to_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 4, "{id}");
            assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122, "{id}");
        }
    }
}
