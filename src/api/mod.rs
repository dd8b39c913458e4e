//! The HTTP API: routes, bodies, errors, and the middleware every response goes through.
//!
//! - [`moves`]: `POST /move`.
//! - [`stream`]: `POST /move` as Server-Sent Events (live progress).
//! - [`review`]: `POST /review`, a game judged ply by ply.
//! - [`tree`]: `POST /tree`, the teaching tree evaluator.
//! - [`playground`]: `GET /`, the web page, and its embedded files.
//! - [`meta`]: `GET /games`, `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`.
//! - [`json`]: the JSON extractor whose rejections are ours (415, 413, 400).
//! - [`error`]: [`ApiError`], rendered as `application/problem+json`.
//!
//! [`app`] builds the whole router from an [`AppState`], so tests drive it in process with
//! `tower::ServiceExt::oneshot` and `main` serves the very same router.

pub mod error;
pub mod json;
pub mod meta;
pub mod moves;
pub mod playground;
pub mod review;
pub mod stream;
pub mod tree;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, Response, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tokio::sync::Semaphore;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::config::Config;
use crate::service::Service;
use crate::service::metrics::{RouteLabel, RouteLabels};

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
    /// Slots for `POST /tree` evaluations (one per search worker): each holds a body of up to
    /// `tree_max_body_bytes` and its tree, so their number bounds the memory trees can take.
    pub tree_slots: Arc<Semaphore>,
    /// Bytes of `/move` bodies being received, one permit a byte (`max_body_bytes_in_flight`):
    /// a body is read only once its declared size fits, so stalled uploads cannot add up.
    pub body_bytes: Arc<Semaphore>,
}

impl AppState {
    pub fn new(service: Service, config: Config) -> Self {
        AppState {
            service,
            tree_slots: Arc::new(Semaphore::new(config.worker_count())),
            body_bytes: Arc::new(Semaphore::new(
                config
                    .max_body_bytes_in_flight
                    .max(config.max_body_bytes)
                    .min(Semaphore::MAX_PERMITS),
            )),
            config: Arc::new(config),
            ready: Arc::new(AtomicBool::new(true)),
        }
    }
}

/// When a request reached the router: the start of its budget.
#[derive(Clone, Copy, Debug)]
pub struct Arrival(pub Instant);

/// The whole API.
pub fn app(state: AppState) -> Router {
    let request_id = HeaderName::from_static(REQUEST_ID);
    let cors = cors_layer(&state.config.cors_origins);
    Router::new()
        .route("/move", post(moves::suggest_move))
        .route("/tree", post(tree::evaluate))
        .route("/review", post(review::review))
        .route("/games", get(meta::games))
        .route("/healthz", get(meta::healthz))
        .route("/readyz", get(meta::readyz))
        .route("/metrics", get(meta::metrics))
        .route("/openapi.yaml", get(meta::openapi))
        .route("/", get(playground::page))
        .route("/playground/style.css", get(playground::style))
        .route("/playground/app.js", get(playground::app_script))
        .route("/playground/tree.js", get(playground::tree_script))
        .route("/playground/icon.svg", get(playground::icon))
        .fallback(meta::not_found)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            record_metrics,
        ))
        .layer(
            ServiceBuilder::new()
                .layer(middleware::from_fn(stamp_arrival))
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(
                    TraceLayer::new_for_http()
                        .make_span_with(|request: &Request<Body>| {
                            let id = request
                                .headers()
                                .get(REQUEST_ID)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or("-");
                            tracing::info_span!(
                                "request",
                                method = %request.method(),
                                uri = %request.uri(),
                                request_id = %id,
                            )
                        })
                        .on_response(DefaultOnResponse::new().level(Level::INFO)),
                )
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal("a handler panicked".into()).into_response()
                }))
                .layer(middleware::from_fn(problem_for_405))
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
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::CONTENT_TYPE, HeaderName::from_static(REQUEST_ID)])
            .expose_headers([HeaderName::from_static(REQUEST_ID), header::RETRY_AFTER])
            .max_age(Duration::from_secs(3600)),
    )
}

async fn stamp_arrival(mut request: Request, next: Next) -> Response<Body> {
    request.extensions_mut().insert(Arrival(Instant::now()));
    next.run(request).await
}

/// axum answers a known path with the wrong method itself (405 with `Allow`); give it our body.
async fn problem_for_405(request: Request, next: Next) -> Response<Body> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let mut problem = ApiError::MethodNotAllowed {
        method,
        path: clip_path(&path),
    }
    .into_response();
    if let Some(allow) = allow {
        problem.headers_mut().insert(header::ALLOW, allow);
    }
    problem
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

async fn record_metrics(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let start = Instant::now();
    let response = next.run(request).await;
    let metrics = state.service.metrics();
    metrics
        .http_requests
        .get_or_create(&RouteLabels {
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    metrics
        .http_duration
        .get_or_create(&RouteLabel { route })
        .observe(start.elapsed().as_secs_f64());
    response
}
