//! The small routes around `POST /move`: the game catalogue (with what each strength level
//! means in each game), health, readiness, metrics, the OpenAPI document, and the 404 fallback.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::{AppState, clip_path};
use crate::engine::Score;
use crate::engine::skill::{FULL_STRENGTH, LevelTable, STANDARD_LEVELS, WEAKEST};
use crate::service::games::{GameInfo, catalog, deterministic_rate, level_ladder, skill_levels};
use crate::service::ladder::{Step, ladder};
use crate::service::metrics::Exposition;
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
    /// What each `level` means in this game, 1 to 10, so a client can say it (the playground's
    /// tooltip) without a copy of the engine's tables.
    pub levels: Vec<LevelInfo>,
    /// Score points one unit of `temperature` counts in this game.
    pub level_unit: Score,
}

/// One strength level of one game (`crate::engine::skill`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LevelInfo {
    pub level: u8,
    /// The deepest iteration, in plies; `None` at full strength (only `max_depth` caps it).
    pub max_depth: Option<u32>,
    /// The share of the budget (and of `max_nodes`) the level searches with.
    pub budget_share: f64,
    /// The softmax temperature of the move drawn, in units (0 at full strength: the best).
    pub temperature: f64,
    /// The probability of a plausible mistake instead (0 at full strength).
    pub blunder: f64,
    /// Elo above a uniformly random mover, from the game's measured self-play ladder
    /// (`service::ladder`); `None` where no ladder was measured.
    pub rating: Option<i64>,
    /// The rating's 95 % interval; `rating_high` is also `None` when unbounded.
    pub rating_low: Option<i64>,
    pub rating_high: Option<i64>,
}

/// A game's levels 1..=9 from its table, then full strength.
pub fn level_infos(table: &LevelTable) -> Vec<LevelInfo> {
    let weakened = (WEAKEST..FULL_STRENGTH).zip(table.iter()).map(
        |(level, &(max_depth, budget_share, temperature, blunder))| LevelInfo {
            level,
            max_depth: Some(max_depth),
            budget_share,
            temperature,
            blunder,
            rating: None,
            rating_low: None,
            rating_high: None,
        },
    );
    let full = LevelInfo {
        level: FULL_STRENGTH,
        max_depth: None,
        budget_share: 1.0,
        temperature: 0.0,
        blunder: 0.0,
        rating: None,
        rating_low: None,
        rating_high: None,
    };
    weakened.chain(std::iter::once(full)).collect()
}

/// `levels` with each level's rating from the game's measured ladder (`steps`).
pub fn with_ratings(mut levels: Vec<LevelInfo>, steps: &[Step]) -> Vec<LevelInfo> {
    for rated in ladder(steps) {
        if let Some(level) = levels.iter_mut().find(|l| l.level == rated.level) {
            // Whole Elo: the intervals are tens of points wide.
            level.rating = Some(rated.rating.round() as i64);
            level.rating_low = Some(rated.low.round() as i64);
            level.rating_high = rated.high.map(|h| h.round() as i64);
        }
    }
    levels
}

/// `GET /games`: every game with its board format, rules options and limits.
pub async fn games(State(state): State<AppState>) -> Json<serde_json::Value> {
    let max_budget_ms = state.service.max_budget_ms();
    let limits = Limits {
        default_budget_ms: DEFAULT_BUDGET_MS.min(max_budget_ms),
        max_budget_ms,
        max_depth: MAX_DEPTH,
        max_body_bytes: state.config.max_body_bytes,
        min_level: WEAKEST,
        max_level: FULL_STRENGTH,
        deterministic_nodes_per_ms: 0,
    };
    let games: Vec<GameEntry> = catalog()
        .into_iter()
        .map(|info| {
            let (table, unit) = skill_levels(info.name).unwrap_or((STANDARD_LEVELS, 0));
            GameEntry {
                limits: Limits {
                    deterministic_nodes_per_ms: deterministic_rate(info.name),
                    ..limits.clone()
                },
                levels: with_ratings(level_infos(&table), level_ladder(info.name)),
                level_unit: unit,
                info,
            }
        })
        .collect();
    // The teaching evaluator is not a game but belongs in the same catalogue of what to post.
    let tree = json!({
        "route": "/tree",
        "description": "evaluate a game tree you write: minimax value, best move, and what alpha-beta pruned",
        "max_nodes": crate::tree::MAX_NODES,
        "max_depth": crate::tree::MAX_DEPTH,
        "max_name_chars": crate::tree::MAX_NAME_CHARS,
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

/// `GET /metrics`: Prometheus metrics, as OpenMetrics or as the 0.0.4 text format (see
/// [`exposition_for`]). Caches are told the body depends on `Accept`.
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let format = exposition_for(&headers);
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(format.content_type()),
            ),
            (header::VARY, HeaderValue::from_static("accept")),
        ],
        state.service.metrics().render_in(format),
    )
        .into_response()
}

/// The media type OpenMetrics is asked for by (with any `version`).
const OPENMETRICS: &str = "application/openmetrics-text";

/// Which format an `Accept` header asks `/metrics` for. OpenMetrics when a range names
/// `application/openmetrics-text` with `q` above 0 and at least the `q` that `text/plain` gets
/// (from its most specific range: `text/plain`, `text/*`, `*/*`; a tie goes to the format named
/// outright); otherwise, with no `Accept` or `*/*` alone too, the 0.0.4 text format, which
/// every scraper reads. Prometheus lists both with falling `q`s, OpenMetrics first.
pub fn exposition_for(headers: &HeaderMap) -> Exposition {
    let mut openmetrics_q: f32 = 0.0;
    // (specificity, q) of the most specific range that matches text/plain.
    let mut text: Option<(u8, f32)> = None;
    for (essence, q) in media_ranges(headers) {
        if essence.eq_ignore_ascii_case(OPENMETRICS) {
            openmetrics_q = openmetrics_q.max(q);
            continue;
        }
        let specificity = if essence.eq_ignore_ascii_case("text/plain") {
            2
        } else if essence.eq_ignore_ascii_case("text/*") {
            1
        } else if essence == "*/*" {
            0
        } else {
            continue;
        };
        match text {
            Some((known, known_q)) if known > specificity => text = Some((known, known_q)),
            Some((known, known_q)) if known == specificity => {
                text = Some((known, known_q.max(q)));
            }
            _ => text = Some((specificity, q)),
        }
    }
    let text_q = text.map_or(0.0, |(_, q)| q);
    if openmetrics_q > 0.0 && openmetrics_q >= text_q {
        Exposition::OpenMetrics
    } else {
        Exposition::PrometheusText
    }
}

/// The media ranges of every `Accept` header, each as its type (`essence`, no parameters) and
/// its `q` (1 when absent or unreadable, clamped to 0..=1).
fn media_ranges(headers: &HeaderMap) -> impl Iterator<Item = (&str, f32)> {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|range| {
            let mut parts = range.split(';').map(str::trim);
            let essence = parts.next().filter(|e| !e.is_empty())?;
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .and_then(|(_, v)| v.trim().parse::<f32>().ok())
                .map_or(1.0, |q| q.clamp(0.0, 1.0));
            Some((essence, q))
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(accept: &[&str]) -> Exposition {
        let mut headers = HeaderMap::new();
        for value in accept {
            headers.append(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        }
        exposition_for(&headers)
    }

    #[test]
    fn openmetrics_is_served_only_to_clients_that_name_it_and_prefer_it() {
        use Exposition::{OpenMetrics, PrometheusText};
        assert_eq!(asking(&[]), PrometheusText);
        assert_eq!(asking(&["*/*"]), PrometheusText);
        assert_eq!(asking(&["text/plain"]), PrometheusText);
        assert_eq!(asking(&["application/json"]), PrometheusText);
        assert_eq!(asking(&["application/openmetrics-text"]), OpenMetrics);
        assert_eq!(
            asking(&["Application/OpenMetrics-Text; version=0.0.1"]),
            OpenMetrics
        );
        assert_eq!(
            asking(&["application/openmetrics-text;q=0"]),
            PrometheusText
        );
        // Named beside text/plain: q decides, a tie goes to the format named outright.
        assert_eq!(
            asking(&["text/plain, application/openmetrics-text"]),
            OpenMetrics
        );
        assert_eq!(
            asking(&["text/plain;q=0.9, application/openmetrics-text;q=0.5"]),
            PrometheusText
        );
        assert_eq!(
            asking(&["*/*;q=1", "application/openmetrics-text;q=0.5"]),
            PrometheusText
        );
        // The most specific range gives text/plain its q.
        assert_eq!(
            asking(&["*/*, text/plain;q=0.1, application/openmetrics-text;q=0.5"]),
            OpenMetrics
        );
    }

    #[test]
    fn the_accept_headers_prometheus_sends_get_openmetrics_unless_configured_for_text() {
        // Prometheus 2.x's default scrape protocols.
        let prometheus_2 = "application/openmetrics-text;version=1.0.0,\
            application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(asking(&[prometheus_2]), Exposition::OpenMetrics);
        // Prometheus 3's defaults (UTF-8 escaping offered).
        let prometheus_3 = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,\
            application/openmetrics-text;version=0.0.1;q=0.4,\
            text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(asking(&[prometheus_3]), Exposition::OpenMetrics);
        // scrape_protocols: [PrometheusText0.0.4]
        let text_only = "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(asking(&[text_only]), Exposition::PrometheusText);
    }
}
