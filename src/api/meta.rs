//! The small routes around `POST /move`: the game catalogue, health, readiness, metrics, the
//! OpenAPI document, and the 404 fallback.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::{AppState, clip_path};
use crate::service::games::{GameInfo, catalog, deterministic_rate};
use crate::service::{DEFAULT_BUDGET_MS, MAX_DEPTH};

/// The OpenAPI 3.1 document, compiled in so the served contract is the one built.
pub const OPENAPI_YAML: &str = include_str!("../../openapi.yaml");

/// Request limits that apply to every game.
#[derive(Clone, Debug, Serialize)]
pub struct Limits {
    pub default_budget_ms: u64,
    pub max_budget_ms: u64,
    pub max_depth: u32,
    pub max_body_bytes: usize,
    /// `level`: 1 (weakest) to 10 (full strength, the default).
    pub min_level: u8,
    pub max_level: u8,
    /// Nodes per millisecond of `budget_ms` a `deterministic` search without `max_nodes` gets.
    pub deterministic_nodes_per_ms: u64,
}

/// A game as `GET /games` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct GameEntry {
    #[serde(flatten)]
    pub info: GameInfo,
    pub limits: Limits,
}

/// `GET /games`: every game with its board format, rules options and limits.
pub async fn games(State(state): State<AppState>) -> Json<serde_json::Value> {
    let max_budget_ms = state.service.max_budget_ms();
    let limits = Limits {
        default_budget_ms: DEFAULT_BUDGET_MS.min(max_budget_ms),
        max_budget_ms,
        max_depth: MAX_DEPTH,
        max_body_bytes: state.config.max_body_bytes,
        min_level: crate::engine::skill::WEAKEST,
        max_level: crate::engine::skill::FULL_STRENGTH,
        deterministic_nodes_per_ms: 0,
    };
    let games: Vec<GameEntry> = catalog()
        .into_iter()
        .map(|info| GameEntry {
            limits: Limits {
                deterministic_nodes_per_ms: deterministic_rate(info.name),
                ..limits.clone()
            },
            info,
        })
        .collect();
    // The teaching evaluator is not a game but belongs in the same catalogue of what to post.
    let tree = json!({
        "route": "/tree",
        "description": "evaluate a game tree you write: minimax value, best move, and what alpha-beta pruned",
        "max_nodes": crate::engine::tree::MAX_NODES,
        "max_depth": crate::engine::tree::MAX_DEPTH,
        "max_name_chars": crate::engine::tree::MAX_NAME_CHARS,
        "max_body_bytes": state.config.tree_max_body_bytes,
    });
    Json(json!({ "games": games, "tree": tree }))
}

/// `GET /healthz`: the process answers.
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// `GET /readyz`: ready to take searches (workers started, tables allocated, not shutting
/// down).
pub async fn readyz(State(state): State<AppState>) -> ApiResult<Json<serde_json::Value>> {
    if !state.ready.load(Ordering::Relaxed) {
        return Err(ApiError::NotReady);
    }
    Ok(Json(json!({
        "status": "ready",
        "workers": state.service.workers(),
        "table_bytes": state.service.table_bytes(),
    })))
}

/// `GET /metrics`: Prometheus metrics as OpenMetrics text.
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        state.service.metrics().render(),
    )
        .into_response()
}

/// `GET /openapi.yaml`: the API contract.
pub async fn openapi() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/yaml"),
        )],
        OPENAPI_YAML,
    )
        .into_response()
}

/// Any path without a route.
pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(clip_path(uri.path()))
}
