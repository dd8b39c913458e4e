//! The API's one error type and its rendering as `application/problem+json` (RFC 9457).
//!
//! Every failure a client can see goes through [`ApiError`]: it picks the status, the problem
//! `type` and `title`, and renders the body. Client mistakes are logged at debug level at most;
//! internal causes are logged as errors here and never put in a response.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

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
    #[error("the body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
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
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::UnknownAnalysis(_) => StatusCode::NOT_FOUND,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
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
            ApiError::TooManyRequests { .. } => {
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let detail = match &self {
            ApiError::Internal(cause) => {
                let request_id = super::bookkeeping::current_request_id();
                tracing::error!(
                    cause = %cause,
                    request_id = %request_id.as_deref().unwrap_or("-"),
                    "internal error"
                );
                "the server failed to answer; the cause is logged".to_owned()
            }
            other => {
                tracing::debug!(error = %other, status = status.as_u16(), "request refused");
                other.to_string()
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
        if let ApiError::Overloaded { retry_after, .. }
        | ApiError::TooManyRequests { retry_after, .. } = &self
        {
            let secs = retry_after.as_secs().max(1);
            if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        if let ApiError::NotReady = &self {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
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
            spent @ ServiceError::BudgetSpent { .. } => ApiError::RequestTimeout(spent.to_string()),
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
        }
    }
}
