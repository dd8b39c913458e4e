//! The answer cache: recent answers by position and question, in front of the worker pool.
//!
//! A request is served from the cache when the stored answer is at least as good as the search
//! it asks for: a proven result answers any limits; an unproven one answers a request whose
//! limits are all within the limits it was searched with (or that would have stopped at the
//! same completed depth). The cache is bounded twice: by entries (the `lru` crate's capacity)
//! and by an estimate of the bytes its answers hold (least recently used answers go first).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;

use crate::engine::{Side, StopReason};

use super::Answer;

/// What identifies a question: the position and what was asked about it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub game: &'static str,
    /// The rules in canonical text (equal rules, equal text).
    pub rules: String,
    /// The board in canonical text: rows joined by `/`, upper-case letters.
    pub board: String,
    pub to_move: Side,
    pub minimax: bool,
    pub analysis: bool,
}

/// The limits a search ran (or would run) under. `None` is no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskedLimits {
    pub budget_ms: u64,
    pub max_depth: Option<u32>,
    pub max_nodes: Option<u64>,
}

#[derive(Debug)]
struct Stored {
    answer: Arc<Answer>,
    limits: AskedLimits,
    bytes: usize,
}

impl Stored {
    /// Whether this answer is as good as a search under `asked` would give.
    fn serves(&self, asked: &AskedLimits) -> bool {
        let answer = &self.answer;
        if matches!(answer.stop_reason, StopReason::Proven | StopReason::Book) {
            return true;
        }
        if answer.stop_reason == StopReason::Depth
            && asked.max_depth.is_some()
            && asked.max_depth == self.limits.max_depth
        {
            return true;
        }
        let within = |asked: Option<u64>, stored: Option<u64>| match (asked, stored) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(s)) => a <= s,
        };
        asked.budget_ms <= self.limits.budget_ms
            && within(
                asked.max_depth.map(u64::from),
                self.limits.max_depth.map(u64::from),
            )
            && within(asked.max_nodes, self.limits.max_nodes)
    }
}

struct Inner {
    entries: LruCache<CacheKey, Stored>,
    /// Estimated bytes held by `entries`.
    bytes: usize,
}

/// The answer cache. Shared through `Arc`; every method takes `&self`.
pub struct AnswerCache {
    /// A std mutex: each section is one hash lookup or insert (no `.await` inside); `get`
    /// needs `&mut` because a hit moves the entry to the front.
    inner: Option<Mutex<Inner>>,
    max_bytes: usize,
}

impl AnswerCache {
    /// A cache of at most `entries` answers taking at most `max_bytes`; 0 entries disables it.
    pub fn new(entries: usize, max_bytes: usize) -> Self {
        let inner = NonZeroUsize::new(entries).map(|cap| {
            Mutex::new(Inner {
                entries: LruCache::new(cap),
                bytes: 0,
            })
        });
        AnswerCache { inner, max_bytes }
    }

    /// The stored answer for `key`, if it serves `asked`.
    pub fn get(&self, key: &CacheKey, asked: &AskedLimits) -> Option<Arc<Answer>> {
        let mut inner = self
            .inner
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let stored = inner.entries.get(key)?;
        stored.serves(asked).then(|| Arc::clone(&stored.answer))
    }

    /// Stores an answer searched under `limits` (never a cancelled one).
    pub fn put(&self, key: CacheKey, answer: Arc<Answer>, limits: AskedLimits) {
        if answer.stop_reason == StopReason::Cancelled {
            return;
        }
        let Some(inner) = self.inner.as_ref() else {
            return;
        };
        let bytes = estimate_bytes(&key, &answer);
        if bytes > self.max_bytes {
            return;
        }
        let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
        let stored = Stored {
            answer,
            limits,
            bytes,
        };
        if let Some((_, old)) = inner.entries.push(key, stored) {
            inner.bytes -= old.bytes;
        }
        inner.bytes += bytes;
        while inner.bytes > self.max_bytes {
            match inner.entries.pop_lru() {
                Some((_, old)) => inner.bytes -= old.bytes,
                None => break,
            }
        }
    }

    /// Number of answers held.
    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, |inner| {
            inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entries
                .len()
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes an entry holds: fixed parts, the key's strings and the answer's lists.
fn estimate_bytes(key: &CacheKey, answer: &Answer) -> usize {
    std::mem::size_of::<CacheKey>()
        + std::mem::size_of::<Stored>()
        + std::mem::size_of::<Answer>()
        + 64 // the LRU node and hash-table slot
        + key.rules.len()
        + key.board.len()
        + answer.heap_bytes()
}
