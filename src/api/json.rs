//! Our own JSON body extractor, so that every rejection is a problem+json [`ApiError`].
//!
//! Order of checks: the content type (415); the declared length against the limit (413 before
//! a byte is read); the body read with the limit enforced as it streams (413 as soon as it is
//! crossed); then the JSON itself (400), through `serde_path_to_error` so the message names the
//! field at fault as a JSON pointer.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::header;
use http_body_util::{BodyExt, Limited};
use serde::de::DeserializeOwned;

use super::AppState;
use super::error::{ApiError, FieldError};

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
    let essence = essence.to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = read_json_body(request, state.config.max_body_bytes).await?;
        let deserializer = &mut serde_json::Deserializer::from_slice(&bytes);
        match serde_path_to_error::deserialize(deserializer) {
            Ok(value) => Ok(ApiJson(value)),
            Err(error) => Err(describe(error)),
        }
    }
}

/// Reads a JSON body of at most `limit` bytes: 415 unless the content type is JSON, 413 from the
/// declared length before reading, or as soon as the streamed body crosses the limit.
pub async fn read_json_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    if !is_json(&request) {
        return Err(ApiError::UnsupportedMediaType);
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let body: Body = request.into_body();
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::PayloadTooLarge { limit })
        }
        Err(_) => Err(ApiError::bad_request("", "the body could not be read")),
    }
}

/// Turns a serde error into a 400 naming the field.
fn describe(error: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in error.path().iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => pointer.push('?'),
        }
    }
    // serde_json appends " at line L column C"; the pointer says where instead.
    let message = error.into_inner().to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    };
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
