//! The JSON bodies of answers served from the local answer cache, kept so that a hot answer is
//! serialised once rather than on every hit.
//!
//! An answer in the cache never changes, and the `POST /move` body of a hit on it is a
//! function of it alone (`cached: true`, `cached_from: "local"`), so its bytes can be kept and
//! sent again. That matters: serialising a tic-tac-toe answer with its principal variation and
//! iterations (about 900 bytes) took about 16,000 instructions, some 30 % of all a cached
//! request cost (`benches/http_overhead.rs --callgrind`).
//!
//! Bodies are found by the answer's identity: the address of its `Arc`, checked against a
//! `Weak` to it kept beside the body. While that `Weak` lives the allocation cannot be reused,
//! so an address whose `Weak` still upgrades to the very same `Arc` is the same answer. Answers
//! the cache dropped leave entries that no longer upgrade; they are replaced when met and fall
//! out in least-recently-used order. Bounded by [`MAX_BYTES`] of bodies and `MAX_ENTRIES` entries.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::move_response::MoveResponse;
use crate::games::notation::Notation;
use crate::service::Answer;
use crate::service::cache::CacheTier;
use crate::service::cache::sized_lru::SizedLru;

/// Bytes of bodies kept at most.
pub const MAX_BYTES: usize = 1 << 20;

/// Bodies kept at most.
const MAX_ENTRIES: NonZeroUsize = NonZeroUsize::new(1024).unwrap();

/// A body larger than this is not kept (it would push out many small ones).
const MAX_BODY_BYTES: usize = 16 * 1024;

/// Room for a typical answer's body (a tic-tac-toe answer is about 900 bytes); larger ones
/// grow the buffer.
const BODY_CAPACITY: usize = 2048;

struct Kept {
    answer: Weak<Answer>,
    body: Bytes,
}

/// See the module documentation.
pub struct AnswerBodies {
    /// Keyed by the answer's address (see the module documentation).
    inner: Mutex<SizedLru<usize, Kept>>,
}

impl Default for AnswerBodies {
    fn default() -> Self {
        AnswerBodies {
            inner: Mutex::new(SizedLru::new(MAX_ENTRIES, MAX_BYTES)),
        }
    }
}

impl AnswerBodies {
    /// The `200` response of `POST /move` for `answer`, served from `cached_from`, its moves
    /// named by `notation`. A kept body is the answer's alone although it names moves: the
    /// notation is the asked board's size, and the answer's cache key holds that board.
    pub fn response(
        &self,
        answer: &Arc<Answer>,
        cached_from: Option<CacheTier>,
        notation: Option<&Notation>,
    ) -> Response {
        // Only a local hit's body is the same every time (a fresh answer says `cached: false`,
        // a shared one `cached_from: "shared"`, and both are rare by comparison).
        let body = if cached_from == Some(CacheTier::Local) {
            self.kept(answer).map_or_else(
                || {
                    let body = render(answer, cached_from, notation)?;
                    self.keep(answer, &body);
                    Ok(body)
                },
                Ok,
            )
        } else {
            render(answer, cached_from, notation)
        };
        match body {
            Ok(body) => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body,
            )
                .into_response(),
            Err(error) => error.into_response(),
        }
    }

    /// The body kept for `answer`, if any.
    fn kept(&self, answer: &Arc<Answer>) -> Option<Bytes> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = inner.get(&address(answer))?;
        kept.answer
            .upgrade()
            .filter(|live| Arc::ptr_eq(live, answer))
            .map(|_| kept.body.clone())
    }

    fn keep(&self, answer: &Arc<Answer>, body: &Bytes) {
        if body.len() > MAX_BODY_BYTES {
            return;
        }
        let kept = Kept {
            answer: Arc::downgrade(answer),
            body: body.clone(),
        };
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.put(address(answer), kept, body.len());
    }

    /// Bodies kept now.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no body is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of bodies kept now.
    pub fn bytes(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes()
    }
}

fn address(answer: &Arc<Answer>) -> usize {
    Arc::as_ptr(answer) as usize
}

fn render(
    answer: &Answer,
    cached_from: Option<CacheTier>,
    notation: Option<&Notation>,
) -> Result<Bytes, ApiError> {
    let mut body = Vec::with_capacity(BODY_CAPACITY);
    serde_json::to_writer(
        &mut body,
        &MoveResponse::named(answer, cached_from, notation),
    )
    .map_err(|error| ApiError::Internal(format!("serialising an answer failed: {error}")))?;
    Ok(Bytes::from(body))
}
