//! The API's one error type and its rendering as `application/problem+json` (RFC 9457).
//!
//! Every failure a client can see goes through [`ApiError`]: it picks the status, the problem
//! `type` and `title`, and renders the body. Rendering logs nothing, as in axum's examples: the
//! response carries an [`ErrorLog`] in its extensions, and the bookkeeping layer, which knows
//! the request, writes it (client mistakes at debug level, internal causes as errors, never put
//! in a response). A response turned into a body elsewhere (an SSE `error` event, a batch
//! item's result) never reaches that layer: its `ErrorLog` is written when it is dropped, so
//! every internal cause is logged exactly once either way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::json::BodyLimit;
use super::vocabulary::{CellJson, Player};
use crate::games::PositionError;
use crate::service::ServiceError;
use crate::service::pool::PoolError;

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// `Result` for handlers.
pub type ApiResult<T, E = ApiError> = Result<T, E>;

/// One thing wrong with a request, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// JSON pointer (RFC 6901) into the request body, e.g. `/budget_ms`; `""` is the whole body.
    pub pointer: String,
    pub message: String,
}

/// Everything that can go wrong, as the client sees it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed JSON, wrong types, missing or unknown fields.
    #[error("{detail}")]
    BadRequest {
        detail: String,
        errors: Vec<FieldError>,
    },
    #[error("the body must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    #[error("the body is larger than {} bytes ({})", limit.bytes, limit.setting)]
    PayloadTooLarge { limit: BodyLimit },
    /// Parses, but cannot be played.
    #[error("{detail}")]
    Unplayable {
        detail: String,
        errors: Vec<FieldError>,
    },
    /// A 422 with members beyond the standard ones (a finished game's `winner` and `line`).
    #[error("{detail}")]
    UnplayableWith {
        detail: String,
        errors: Vec<FieldError>,
        members: serde_json::Map<String, serde_json::Value>,
    },
    #[error("no route for {0}")]
    NotFound(String),
    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed { method: String, path: String },
    /// A limit of the server's was hit (`detail` says which); retry after the delay.
    #[error("{detail}; retry after {}s", retry_after.as_secs().max(1))]
    Overloaded {
        detail: String,
        retry_after: Duration,
    },
    /// The request itself arrived too slowly (`detail` says what and how long).
    #[error("{0}")]
    RequestTimeout(String),
    /// A limit on this client's requests was hit (`detail` says which); retry after the delay.
    #[error("{detail}")]
    TooManyRequests {
        detail: String,
        retry_after: Duration,
    },
    /// No batch analysis has that id (never, or no longer: expired).
    #[error(
        "no analysis '{0}': unknown, or expired (results are kept KIBITZ_BATCH_RESULT_TTL_S \
         after the last one)"
    )]
    UnknownAnalysis(String),
    #[error("the server is shutting down")]
    NotReady,
    /// Something broke inside; the cause is logged, the client gets a bare 500.
    #[error("internal error")]
    Internal(String),
    /// API keys are configured and the request has no valid one (`invalid_token`: it sent
    /// one that is not a key).
    #[error("{detail}")]
    Unauthorized { detail: String, invalid_token: bool },
    /// A 429 for a per-client limit with a quota: answered with the `RateLimit` and
    /// `RateLimit-Policy` headers of the IETF httpapi draft (quota units: concurrent requests).
    #[error("{detail}")]
    RateLimited {
        detail: String,
        retry_after: Duration,
        limit: RateLimit,
    },
}

/// A per-client limit as the IETF httpapi `RateLimit` headers describe it (structured-field
/// form, draft-ietf-httpapi-ratelimit-headers): the policy's name, its quota of concurrent
/// requests, and what is left of it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// `searches` (a client's share of the workers), `trees` (its share of `/tree`'s slots)
    /// or `batches` (batches in flight).
    pub policy: &'static str,
    pub quota: u64,
    pub remaining: u64,
}

impl RateLimit {
    /// `RateLimit-Policy` and `RateLimit`, the latter with `t` the seconds until a unit is
    /// expected back, when that can be told (`None`: left out, as the draft allows).
    pub fn headers(&self, reset: Option<Duration>) -> [(header::HeaderName, HeaderValue); 2] {
        let policy = format!(
            "\"{}\";q={};qu=\"concurrent-requests\"",
            self.policy, self.quota
        );
        let mut now = format!("\"{}\";r={}", self.policy, self.remaining);
        if let Some(reset) = reset {
            now.push_str(&format!(";t={}", reset.as_secs()));
        }
        let value = |text: String| {
            HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
        };
        [
            (
                header::HeaderName::from_static("ratelimit-policy"),
                value(policy),
            ),
            (header::HeaderName::from_static("ratelimit"), value(now)),
        ]
    }
}

/// The status `result` is answered with, 200 or the error's: what the request metrics count.
pub fn status_of<T>(result: &ApiResult<T>) -> u16 {
    result
        .as_ref()
        .map_or_else(|error| error.status_code().as_u16(), |_| 200)
}

impl ApiError {
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unplayable { .. } | ApiError::UnplayableWith { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Overloaded { .. } | ApiError::NotReady => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::TooManyRequests { .. } | ApiError::RateLimited { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::UnknownAnalysis(_) => StatusCode::NOT_FOUND,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
        }
    }

    /// The problem type: a URN naming the kind of problem (listed in openapi.yaml).
    fn kind(&self) -> (&'static str, &'static str) {
        match self {
            ApiError::BadRequest { .. } => ("urn:kibitz:problem:bad-request", "Malformed request"),
            ApiError::UnsupportedMediaType => (
                "urn:kibitz:problem:unsupported-media-type",
                "Unsupported media type",
            ),
            ApiError::PayloadTooLarge { .. } => (
                "urn:kibitz:problem:payload-too-large",
                "Request body too large",
            ),
            ApiError::Unplayable { .. } | ApiError::UnplayableWith { .. } => (
                "urn:kibitz:problem:unplayable",
                "The request cannot be played",
            ),
            ApiError::NotFound(_) | ApiError::UnknownAnalysis(_) => {
                ("urn:kibitz:problem:not-found", "Not found")
            }
            ApiError::TooManyRequests { .. } | ApiError::RateLimited { .. } => {
                ("urn:kibitz:problem:too-many-requests", "Too many requests")
            }
            ApiError::MethodNotAllowed { .. } => (
                "urn:kibitz:problem:method-not-allowed",
                "Method not allowed",
            ),
            ApiError::Overloaded { .. } => ("urn:kibitz:problem:overloaded", "Overloaded"),
            ApiError::RequestTimeout(_) => (
                "urn:kibitz:problem:request-timeout",
                "The request arrived too slowly",
            ),
            ApiError::NotReady => ("urn:kibitz:problem:not-ready", "Not ready"),
            ApiError::Internal(_) => ("urn:kibitz:problem:internal", "Internal server error"),
            ApiError::Unauthorized { .. } => ("urn:kibitz:problem:unauthorized", "Unauthorized"),
        }
    }

    /// A 422 with one error at `pointer`.
    pub fn unplayable(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        ApiError::Unplayable {
            detail: message.clone(),
            errors: vec![FieldError {
                pointer: pointer.into(),
                message,
            }],
        }
    }

    /// The same error about a part of a larger body: every pointer (and the detail) under
    /// `prefix` (`/items/3` for a batch's fourth item).
    pub fn under(self, prefix: &str) -> Self {
        let place = |errors: Vec<FieldError>| -> Vec<FieldError> {
            errors
                .into_iter()
                .map(|e| FieldError {
                    pointer: format!("{prefix}{}", e.pointer),
                    message: e.message,
                })
                .collect()
        };
        let name = prefix.trim_start_matches('/');
        match self {
            ApiError::BadRequest { detail, errors } => ApiError::BadRequest {
                detail: format!("{name}: {detail}"),
                errors: place(errors),
            },
            ApiError::Unplayable { detail, errors } => ApiError::Unplayable {
                detail: format!("{name}: {detail}"),
                errors: place(errors),
            },
            ApiError::UnplayableWith {
                detail,
                errors,
                members,
            } => ApiError::UnplayableWith {
                detail: format!("{name}: {detail}"),
                errors: place(errors),
                members,
            },
            other => other,
        }
    }

    /// A 400 with one error at `pointer`.
    pub fn bad_request(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        ApiError::BadRequest {
            detail: message.clone(),
            errors: vec![FieldError {
                pointer: pointer.into(),
                message,
            }],
        }
    }
}

/// The RFC 9457 body.
#[derive(Serialize)]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'static str,
    status: u16,
    detail: String,
    #[serde(skip_serializing_if = "<[FieldError]>::is_empty")]
    errors: &'a [FieldError],
    /// Extension members (RFC 9457, section 3.2).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    members: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

/// What an error response's log line says, carried in the response's extensions from
/// [`ApiError::into_response`] to the bookkeeping layer ([`ErrorLog::write`]). Cheap to clone
/// (extensions must be); the line is written once, by `write` or, failing that, when the last
/// clone is dropped.
#[derive(Clone)]
pub struct ErrorLog(Arc<PendingLog>);

struct PendingLog {
    what: LogLine,
    written: AtomicBool,
}

enum LogLine {
    /// A 500's cause: an error, never shown to the client.
    Internal(String),
    /// A refusal of the client's request: debug level (made only when that level is on).
    Refused { status: u16, detail: String },
}

impl ErrorLog {
    fn new(what: LogLine) -> Self {
        ErrorLog(Arc::new(PendingLog {
            what,
            written: AtomicBool::new(false),
        }))
    }

    /// Writes the line, naming the request `request_id`, unless it was written already.
    pub fn write(&self, request_id: &str) {
        if !self.0.written.swap(true, Ordering::Relaxed) {
            self.0.what.write(request_id);
        }
    }
}

impl LogLine {
    fn write(&self, request_id: &str) {
        match self {
            LogLine::Internal(cause) => {
                tracing::error!(cause = %cause, request_id = %request_id, "internal error");
            }
            LogLine::Refused { status, detail } => {
                tracing::debug!(error = %detail, status, request_id = %request_id, "request refused");
            }
        }
    }
}

impl Drop for PendingLog {
    /// The line of a response that never reached the bookkeeping layer.
    fn drop(&mut self) {
        if !*self.written.get_mut() {
            let request_id = super::bookkeeping::current_request_id();
            self.what.write(request_id.as_deref().unwrap_or("-"));
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let (detail, log) = match &self {
            ApiError::Internal(cause) => (
                "the server failed to answer; the cause is logged".to_owned(),
                Some(LogLine::Internal(cause.clone())),
            ),
            other => {
                let detail = other.to_string();
                let log = tracing::enabled!(tracing::Level::DEBUG).then(|| LogLine::Refused {
                    status: status.as_u16(),
                    detail: detail.clone(),
                });
                (detail, log)
            }
        };
        let (kind, title) = self.kind();
        let errors = match &self {
            ApiError::BadRequest { errors, .. }
            | ApiError::Unplayable { errors, .. }
            | ApiError::UnplayableWith { errors, .. } => errors.as_slice(),
            _ => &[],
        };
        let members = match &self {
            ApiError::UnplayableWith { members, .. } => Some(members),
            _ => None,
        };
        let body = Problem {
            kind,
            title,
            status: status.as_u16(),
            detail,
            errors,
            members,
        };
        let json = serde_json::to_vec(&body).unwrap_or_default();
        let mut response = (
            status,
            [(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON))],
            json,
        )
            .into_response();
        if let ApiError::RateLimited {
            limit, retry_after, ..
        } = &self
        {
            let reset = Duration::from_secs(retry_after.as_secs().max(1));
            response.headers_mut().extend(limit.headers(Some(reset)));
        }
        if let ApiError::Overloaded { retry_after, .. }
        | ApiError::TooManyRequests { retry_after, .. }
        | ApiError::RateLimited { retry_after, .. } = &self
        {
            let secs = retry_after.as_secs().max(1);
            if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        if let ApiError::Unauthorized { invalid_token, .. } = &self {
            // RFC 6750: the scheme and realm, and why when a token was sent.
            let challenge = if *invalid_token {
                "Bearer realm=\"kibitz\", error=\"invalid_token\""
            } else {
                "Bearer realm=\"kibitz\""
            };
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
        }
        if let ApiError::NotReady = &self {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if let Some(what) = log {
            response.extensions_mut().insert(ErrorLog::new(what));
        }
        response
    }
}

/// Shortens client text echoed in a message.
fn clip(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head}...")
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::UnknownGame(name) => {
                let known = crate::service::games::GAME_NAMES.join(", ");
                ApiError::unplayable(
                    "/game",
                    format!("unknown game '{}'; the games are: {known}", clip(&name)),
                )
            }
            ServiceError::Position(error) => {
                let pointer = match &error {
                    PositionError::BadCell { row, .. } | PositionError::Floating { row, .. } => {
                        format!("/board/{row}")
                    }
                    PositionError::Rules(_) => "/rules".to_owned(),
                    _ => "/board".to_owned(),
                };
                ApiError::unplayable(pointer, error.to_string())
            }
            ServiceError::Rules(error) => ApiError::unplayable(error.pointer, error.message),
            ServiceError::OutOfRange { pointer, message } => ApiError::unplayable(pointer, message),
            ServiceError::Pool(PoolError::Overloaded {
                reason,
                retry_after,
            }) => ApiError::Overloaded {
                detail: reason.to_string(),
                retry_after,
            },
            // Only background work (a batch item) is pre-empted; it is run again, as if shed.
            preempted @ ServiceError::Pool(PoolError::Preempted) => ApiError::Overloaded {
                detail: preempted.to_string(),
                retry_after: std::time::Duration::from_secs(1),
            },
            spent @ ServiceError::BudgetSpent { .. } => ApiError::RequestTimeout(spent.to_string()),
            ServiceError::Pool(
                ref over @ PoolError::OverShare {
                    share, retry_after, ..
                },
            ) => ApiError::RateLimited {
                detail: over.to_string(),
                retry_after,
                limit: RateLimit {
                    policy: "searches",
                    quota: share as u64,
                    remaining: 0,
                },
            },
            ServiceError::Pool(PoolError::Panicked) => {
                ApiError::Internal("a search panicked".into())
            }
            overrun @ ServiceError::DeterministicOverrun { .. } => {
                ApiError::unplayable("/max_nodes", overrun.to_string())
            }
            ref illegal @ ServiceError::IllegalMove { ref pointer, .. } => {
                ApiError::unplayable(pointer.clone(), illegal.to_string())
            }
            ref finished @ ServiceError::Finished {
                pointer,
                winner,
                ref line,
                ref notation,
                ..
            } => {
                let detail = finished.to_string();
                let line: Vec<CellJson> = line
                    .iter()
                    .map(|&cell| CellJson::named(cell, Some(notation)))
                    .collect();
                let mut members = serde_json::Map::new();
                members.insert("winner".into(), serde_json::json!(winner.map(Player::from)));
                members.insert("line".into(), serde_json::json!(line));
                ApiError::UnplayableWith {
                    errors: vec![FieldError {
                        pointer: pointer.into(),
                        message: detail.clone(),
                    }],
                    detail,
                    members,
                }
            }
            ServiceError::NoMove => ApiError::Internal("the search returned no move".into()),
            busy @ ServiceError::TreeSlotsBusy { .. } => ApiError::Overloaded {
                detail: busy.to_string(),
                retry_after: std::time::Duration::from_secs(1),
            },
            failed @ ServiceError::TreeFailed(_) => ApiError::Internal(failed.to_string()),
            ServiceError::RootMove { pointer, reason } => ApiError::unplayable(pointer, reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Mutex;

    use super::*;

    /// A log sink for one test's subscriber.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("the sink").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What `run` logs at debug level and above.
    fn logged(run: impl FnOnce()) -> String {
        let lines = Lines::default();
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, run);
        let bytes = lines.0.lock().expect("the sink").clone();
        String::from_utf8(bytes).expect("text")
    }

    #[test]
    fn rendering_logs_nothing_and_the_layer_writes_the_line_once() {
        let text = logged(|| {
            let mut response = ApiError::Internal("the disk is on fire".into()).into_response();
            let log = response
                .extensions_mut()
                .remove::<ErrorLog>()
                .expect("an ErrorLog on a 500");
            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
            log.write("req-1");
            log.clone().write("req-1");
            drop(log);
        });
        assert_eq!(text.matches("internal error").count(), 1, "{text}");
        assert!(
            text.contains("the disk is on fire") && text.contains("req-1"),
            "{text}"
        );
    }

    #[test]
    fn a_response_turned_into_a_body_elsewhere_is_logged_when_dropped() {
        let text = logged(|| {
            // As `sse::error_event` does: the body taken, the rest dropped.
            let response = ApiError::Internal("no worker answered".into()).into_response();
            let (_parts, _body) = response.into_parts();
        });
        assert_eq!(text.matches("internal error").count(), 1, "{text}");
        assert!(text.contains("no worker answered"), "{text}");
        let refused = logged(|| drop(ApiError::bad_request("/board", "no rows").into_response()));
        assert!(
            refused.contains("request refused") && !refused.contains("ERROR"),
            "{refused}"
        );
    }
}
