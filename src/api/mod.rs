//! The HTTP API: routes, bodies, errors, and the middleware every response goes through.
//!
//! - [`moves`]: `POST /move`.
//! - [`move_response`]: its answer's body.
//! - [`threats`]: a gomoku answer's threat labels (what the move makes and blocks).
//! - [`move_list`]: `moves`, a game as its moves (JSON or the game's notation).
//! - [`stream`]: `POST /move` as Server-Sent Events (live progress).
//! - [`review`]: `POST /review`, a game judged ply by ply.
//! - [`analyses`]: `/analyses`, batches of positions and games run by idle workers.
//! - [`sse`]: what the streamed routes share: the `Accept` test and the event pump.
//! - [`vocabulary`]: the JSON words every route shares (players, cells, whole numbers).
//! - [`tree`]: `POST /tree`, the teaching tree evaluator.
//! - [`playground`]: `GET /`, the web page, and its embedded files.
//! - [`meta`]: `GET /games`, `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`.
//! - [`json`]: the JSON extractor whose rejections are ours (415, 413, 400).
//! - [`error`]: [`ApiError`], rendered as `application/problem+json`.
//! - [`bookkeeping`]: the layer every request passes: arrival time, request id, metrics, log.
//! - [`identity`]: who a request is from (an API key, else its address), or its 401.
//! - [`answer_bodies`]: the bodies of cached answers, serialised once.
//!
//! [`app`] builds the whole router from an [`AppState`], so tests drive it in process with
//! `tower::ServiceExt::oneshot` and `main` serves the very same router.

pub mod analyses;
pub mod answer_bodies;
pub mod bookkeeping;
pub mod error;
pub mod identity;
pub mod json;
pub mod meta;
pub mod move_list;
pub mod move_response;
pub mod moves;
pub mod playground;
pub mod review;
pub mod sse;
pub mod stream;
pub mod threats;
pub mod tree;
pub mod vocabulary;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, Uri, header};
use axum::response::IntoResponse;
use axum::routing::{MethodRouter, get, post};
use tokio::sync::Semaphore;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

use crate::config::Config;
use crate::service::Service;
use crate::service::batch::Batches;
use answer_bodies::AnswerBodies;
use bookkeeping::BookkeepingLayer;

pub use error::{ApiError, ApiResult};

/// Header carrying the request id (taken from the client when given, else a new UUID).
pub const REQUEST_ID: &str = "x-request-id";

/// What every handler can reach. Cheap to clone: each member is an `Arc` or wraps one.
#[derive(Clone)]
pub struct AppState {
    pub service: Service,
    /// Read-only after start.
    pub config: Arc<Config>,
    /// False once shutdown has begun, so `/readyz` turns load balancers away. An atomic flag:
    /// written once by the signal task, read by handlers.
    pub ready: Arc<AtomicBool>,
    /// Bytes of `/move` bodies being received, one permit a byte (`max_body_bytes_in_flight`):
    /// a body is read only once its declared size fits, so stalled uploads cannot add up.
    pub body_bytes: Arc<Semaphore>,
    /// The `/move` bodies of answers served from the answer cache, so each is serialised once.
    pub answer_bodies: Arc<AnswerBodies>,
    /// Batch analyses (`/analyses`): their store and limits.
    pub batches: Batches,
    /// How a request's client is told: API keys and trusted proxies (read-only after start).
    pub identities: Arc<identity::Identities>,
}

impl AppState {
    pub fn new(service: Service, batches: Batches, config: Config) -> Self {
        AppState {
            service,
            batches,
            body_bytes: Arc::new(Semaphore::new(
                config
                    .max_body_bytes_in_flight
                    .max(config.max_body_bytes)
                    .max(config.batch_max_body_bytes)
                    .min(Semaphore::MAX_PERMITS),
            )),
            config: Arc::new(config),
            ready: Arc::new(AtomicBool::new(true)),
            answer_bodies: Arc::default(),
            identities: Arc::default(),
        }
    }

    /// This state with `identities` (API keys, trusted proxies) instead of none.
    pub fn with_identities(self, identities: Arc<identity::Identities>) -> Self {
        AppState { identities, ..self }
    }
}

/// When a request reached the router: the start of its budget.
#[derive(Clone, Copy, Debug)]
pub struct Arrival(pub Instant);

/// The whole API.
pub fn app(state: AppState) -> Router {
    let routes: [(&'static str, MethodRouter<AppState>); 16] = [
        ("/move", post(moves::suggest_move)),
        (
            "/analyses",
            post(analyses::submit).get(analyses::queue_status),
        ),
        (
            "/analyses/{id}",
            get(analyses::status).delete(analyses::delete),
        ),
        ("/analyses/{id}/cancel", post(analyses::cancel)),
        ("/tree", post(tree::evaluate)),
        ("/review", post(review::review)),
        ("/games", get(meta::games)),
        ("/healthz", get(meta::healthz)),
        ("/readyz", get(meta::readyz)),
        ("/metrics", get(meta::metrics)),
        ("/openapi.yaml", get(meta::openapi)),
        ("/", get(playground::page)),
        ("/playground/style.css", get(playground::style)),
        ("/playground/app.js", get(playground::app_script)),
        ("/playground/tree.js", get(playground::tree_script)),
        ("/playground/icon.svg", get(playground::icon)),
    ];
    let paths: Arc<[&'static str]> = routes.iter().map(|(path, _)| *path).collect();
    let router = routes
        .into_iter()
        .fold(Router::new(), |router, (path, handlers)| {
            router.route(path, handlers)
        })
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(meta::not_found);
    with_layers(router, paths, state)
}

/// Wraps every route of `router`, whose templates are `paths` (the metrics' route labels), in
/// what each request passes through: [`bookkeeping`], the panic catcher (a 500 problem), and
/// CORS when configured. Public so that a test can put a route of its own in the same layers.
pub fn with_layers(
    router: Router<AppState>,
    paths: Arc<[&'static str]>,
    state: AppState,
) -> Router {
    let bookkeeping = BookkeepingLayer::new(Arc::clone(state.service.metrics()), paths);
    let cors = cors_layer(&state.config.cors_origins);
    // One `layer` call: each adds a boxed service per route that every request goes through.
    router
        .layer(
            ServiceBuilder::new()
                .layer(bookkeeping)
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    identity::identify,
                ))
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal("a handler panicked".into()).into_response()
                }))
                .option_layer(cors),
        )
        .with_state(state)
}

fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    let origins: Vec<&str> = origins
        .iter()
        .map(|o| o.trim())
        .filter(|o| !o.is_empty())
        .collect();
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.contains(&"*") {
        AllowOrigin::from(Any)
    } else {
        let values: Vec<HeaderValue> = origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        AllowOrigin::list(values)
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                HeaderName::from_static(REQUEST_ID),
            ])
            .expose_headers([
                HeaderName::from_static(REQUEST_ID),
                header::RETRY_AFTER,
                HeaderName::from_static("ratelimit"),
                HeaderName::from_static("ratelimit-policy"),
            ])
            .max_age(Duration::from_secs(3600)),
    )
}

/// A known path asked with a method it does not serve: our problem body (axum adds `Allow`).
async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: clip_path(uri.path()),
    }
}

/// Request paths are echoed in messages; keep them short.
pub(crate) fn clip_path(path: &str) -> String {
    if path.len() <= 64 {
        path.to_owned()
    } else {
        let mut end = 64;
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &path[..end])
    }
}
