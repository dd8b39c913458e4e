//! Our own JSON body extractor, so that every rejection is a problem+json [`ApiError`].
//!
//! Order of checks: the content type (415); the declared length against the limit (413 before
//! a byte is read); room among the bytes of bodies in flight (503 at once, so that however many
//! clients stall mid-body the server holds at most `max_body_bytes_in_flight` of them); the
//! body read with the limit enforced as it streams (413 as soon as it is crossed) and within
//! `body_timeout_ms` of the request's arrival (408); then the JSON itself (400), through
//! `serde_path_to_error` so the message names the field at fault as a JSON pointer. A UTF-8
//! byte-order mark before the JSON is ignored, as RFC 8259 allows; anything but white space
//! after the value is not (a 400).

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::header;
use futures_util::FutureExt;
use http_body_util::{BodyExt, Limited};
use serde::de::DeserializeOwned;

use super::error::{ApiError, FieldError};
use super::{AppState, Arrival};

/// How large a route's body may be, and the setting that says so (named in its 413).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit {
    pub bytes: usize,
    pub setting: &'static str,
}

/// A JSON body of type `T`, with our rejections.
pub struct ApiJson<T>(pub T);

fn is_json(request: &Request) -> bool {
    let Some(value) = request.headers().get(header::CONTENT_TYPE) else {
        return false;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    let ends_with = |suffix: &str| {
        essence.len() >= suffix.len()
            && essence
                .get(essence.len() - suffix.len()..)
                .is_some_and(|end| end.eq_ignore_ascii_case(suffix))
    };
    essence.eq_ignore_ascii_case("application/json")
        || (essence
            .get(.."application/".len())
            .is_some_and(|start| start.eq_ignore_ascii_case("application/"))
            && ends_with("+json"))
}

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let limit = BodyLimit {
            bytes: state.config.max_body_bytes,
            setting: "KIBITZ_MAX_BODY_BYTES",
        };
        let bytes = read_held_body(request, state, limit).await?;
        parse(without_bom(&bytes)).map(ApiJson)
    }
}

/// A JSON body of at most `limit` bytes, read once room for it is held among the bytes of
/// bodies in flight (the checks of the module doc, in their order), and its room with it:
/// the room is held for as long as the body is (dropped with it: see [`HeldBody`]).
pub async fn read_held_body(
    request: Request,
    state: &AppState,
    limit: BodyLimit,
) -> Result<HeldBody, ApiError> {
    {
        let declared = check_json(&request, limit)?;
        // Room for the whole body, as declared (or as large as allowed when not declared),
        // held until it is parsed.
        let room = declared.unwrap_or(limit.bytes as u64);
        let _room = u32::try_from(room)
            .ok()
            .and_then(|bytes| {
                std::sync::Arc::clone(&state.body_bytes)
                    .try_acquire_many_owned(bytes)
                    .ok()
            })
            .ok_or_else(|| ApiError::Overloaded {
                detail: format!(
                    "the server is receiving as many request bodies as it holds at once \
                     ({} bytes, KIBITZ_MAX_BODY_BYTES_IN_FLIGHT)",
                    state.config.max_body_bytes_in_flight
                ),
                retry_after: Duration::from_secs(1),
            })?;
        let deadline = body_deadline(&request, state);
        let bytes = read_body(request, limit, deadline).await?;
        Ok(HeldBody { bytes, _room })
    }
}

/// A body's bytes and the room they hold among the bytes in flight, released when dropped.
pub struct HeldBody {
    bytes: Bytes,
    _room: tokio::sync::OwnedSemaphorePermit,
}

impl std::ops::Deref for HeldBody {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

/// `json` as one `T` and nothing after it but white space, or a 400 saying what is wrong where.
pub fn parse<T: DeserializeOwned>(json: &[u8]) -> Result<T, ApiError> {
    // Tracking the path to every value costs on every request, and only a failure needs it:
    // parse plainly, and only a body that fails is parsed again to say where.
    let deserializer = &mut serde_json::Deserializer::from_slice(json);
    T::deserialize(&mut *deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|_| describe_failure::<T>(json))
}

/// Why `json` is not one `T` (it must fail to parse as one), naming the field at fault.
fn describe_failure<T: DeserializeOwned>(json: &[u8]) -> ApiError {
    let deserializer = &mut serde_json::Deserializer::from_slice(json);
    match serde_path_to_error::deserialize::<_, T>(&mut *deserializer) {
        Err(error) => {
            let pointer = pointer_of(error.path());
            describe(pointer, &error.into_inner())
        }
        // The value parses; what follows it does not belong (a second value, say).
        Ok(_) => match deserializer.end() {
            Err(error) => describe(String::new(), &error),
            Ok(()) => ApiError::bad_request("", "the body could not be parsed"),
        },
    }
}

/// A body's bytes without a leading UTF-8 byte-order mark.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// When the body must have arrived: `body_timeout_ms` after the request did.
pub fn body_deadline(request: &Request, state: &AppState) -> Instant {
    let arrival = request
        .extensions()
        .get::<Arrival>()
        .map_or_else(Instant::now, |a| a.0);
    arrival + Duration::from_millis(state.config.body_timeout_ms)
}

fn declared_length(request: &Request) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// The checks made before a byte of the body is read: 415 unless the content type is JSON,
/// 413 when the declared length is over `limit`. The declared length, if any.
pub fn check_json(request: &Request, limit: BodyLimit) -> Result<Option<u64>, ApiError> {
    if !is_json(request) {
        return Err(ApiError::UnsupportedMediaType);
    }
    let declared = declared_length(request);
    if declared.is_some_and(|len| len > limit.bytes as u64) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    Ok(declared)
}

/// Reads a JSON body of at most `limit` bytes by `deadline`: [`check_json`]'s answers, 413 as
/// soon as the streamed body crosses the limit, 408 when it has not all arrived by the deadline.
pub async fn read_json_body(
    request: Request,
    limit: BodyLimit,
    deadline: Instant,
) -> Result<Bytes, ApiError> {
    check_json(&request, limit)?;
    read_body(request, limit, deadline).await
}

/// [`read_json_body`] after [`check_json`].
async fn read_body(
    request: Request,
    limit: BodyLimit,
    deadline: Instant,
) -> Result<Bytes, ApiError> {
    let started = request
        .extensions()
        .get::<Arrival>()
        .map_or_else(Instant::now, |a| a.0);
    let body: Body = request.into_body();
    let mut read = std::pin::pin!(Limited::new(body, limit.bytes).collect());
    // A body that came with its headers is read without starting a timer; one still on its
    // way gets the deadline (whose timeout would also have read a ready body first).
    let read = match (&mut read).now_or_never() {
        Some(read) => Ok(read),
        None => tokio::time::timeout_at(deadline.into(), read).await,
    };
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::PayloadTooLarge { limit })
        }
        Ok(Err(_)) => Err(ApiError::bad_request("", "the body could not be read")),
        Err(_) => Err(ApiError::RequestTimeout(format!(
            "the request body had not all arrived {} ms after its headers \
             (KIBITZ_BODY_TIMEOUT_MS)",
            deadline.saturating_duration_since(started).as_millis()
        ))),
    }
}

/// A serde path as a JSON pointer (RFC 6901).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

/// A 400 for `error` at `pointer` (`""`: the whole body).
fn describe(pointer: String, error: &serde_json::Error) -> ApiError {
    // serde_json appends " at line L column C"; the pointer says where instead.
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    };
    // A whole number too large for its field is of the schema's type (its integers have no
    // maximum) but out of range: a 422 as any other range error, not a malformed body.
    if let Some(message) = message.strip_prefix(super::vocabulary::whole::OUT_OF_RANGE) {
        return ApiError::unplayable(pointer, message);
    }
    let detail = if pointer.is_empty() {
        format!("invalid JSON body: {message}")
    } else {
        format!("{}: {message}", &pointer[1..])
    };
    ApiError::BadRequest {
        detail,
        errors: vec![FieldError { pointer, message }],
    }
}
