//! The answer cache: recent answers by position and question, in front of the worker pool.
//!
//! A stored answer is served only to a request it fully answers. `max_depth` and `max_nodes`
//! are part of the question (the key), so a depth-3 question never gets a depth-12 answer.
//! Within one key: a proven answer, or one that stopped at its own depth or node limit, is the
//! answer whatever the budget; one stopped by the clock serves only budgets its search *window*
//! covers (the time it really had, from its start on a worker to its deadline), so an answer
//! that spent most of its budget queueing is never served as the answer to that whole budget.
//! The level, the seed of a weakened level and `deterministic` are part of the key too
//! ([`super::levels::Style`]), so a weakened answer never serves a full-strength request.
//! The cache is bounded twice: by entries (the `lru` crate's capacity) and by an estimate of the
//! bytes its answers hold (least recently used answers go first).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;

use crate::engine::{Side, StopReason};

use super::Answer;
use super::latency::FRESH_START;

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
    /// Limits that shape the answer itself: a search to depth 3 is another question.
    pub max_depth: Option<u32>,
    pub max_nodes: Option<u64>,
    /// Level, seed and mode: a weakened or deterministic answer is another question.
    pub style: super::levels::Style,
}

impl CacheKey {
    /// The key of the plainest question about a position: the game's default rules (no rule
    /// text), a full-strength alpha-beta best move without analysis or limits. Tests and tools
    /// name the fields they ask differently on top of it (`CacheKey { analysis: true, ..key }`).
    pub fn plain(game: &'static str, board: impl Into<String>, to_move: Side) -> CacheKey {
        CacheKey {
            game,
            rules: String::new(),
            board: board.into(),
            to_move,
            minimax: false,
            analysis: false,
            max_depth: None,
            max_nodes: None,
            style: Default::default(),
        }
    }
}

/// The limits a request asks for. `None` is no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskedLimits {
    pub budget_ms: u64,
    pub max_depth: Option<u32>,
    pub max_nodes: Option<u64>,
}

#[derive(Debug)]
struct Stored {
    answer: Arc<Answer>,
    bytes: usize,
}

impl Stored {
    /// Whether this answer is all a search under `asked` (same key) would give.
    fn serves(&self, asked: &AskedLimits) -> bool {
        serves(&self.answer, asked)
    }
}

/// The serving rule, for this cache and the shared one: whether `answer` (stored under the
/// request's key) is all a search under `asked` would give.
pub fn serves(answer: &Answer, asked: &AskedLimits) -> bool {
    match answer.stop_reason {
        StopReason::Proven | StopReason::Book | StopReason::Depth | StopReason::Nodes => true,
        StopReason::Time => {
            // A window within FRESH_START of the budget is as much as a fresh search gets.
            u128::from(asked.budget_ms) <= answer.window.as_millis() + FRESH_START.as_millis()
        }
        StopReason::Cancelled => false,
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

    /// Stores an answer (never a cancelled one).
    pub fn put(&self, key: CacheKey, answer: Arc<Answer>) {
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
        let stored = Stored { answer, bytes };
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

/// Which cache an answer was served from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheTier {
    /// This process's answer cache.
    Local,
    /// The cache shared by replicas (Redis).
    Shared,
}

impl CacheTier {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheTier::Local => "local",
            CacheTier::Shared => "shared",
        }
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
