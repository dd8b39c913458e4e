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
//! The cache is bounded twice: by entries and by an estimate of the bytes its answers hold
//! (least recently used answers go first; [`sized_lru`]).

pub mod sized_lru;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use crate::engine::{Side, StopReason};
use sized_lru::SizedLru;

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
    /// The root's restriction ([`super::root::RootPlan::key`]); empty for every move. A restricted answer never serves another restriction or none.
    pub root: String,
    /// `multipv` as asked (0: not asked, no `lines`); at most [`super::MAX_MULTIPV`].
    pub multipv: u8,
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
            root: String::new(),
            multipv: 0,
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

/// The answer cache. Shared through `Arc`; every method takes `&self`.
pub struct AnswerCache {
    /// A std mutex: each section is one hash lookup or insert (no `.await` inside); `get`
    /// needs `&mut` because a hit moves the entry to the front.
    inner: Option<Mutex<SizedLru<CacheKey, Arc<Answer>>>>,
}

impl AnswerCache {
    /// A cache of at most `entries` answers taking at most `max_bytes`; 0 entries disables it.
    pub fn new(entries: usize, max_bytes: usize) -> Self {
        let inner = NonZeroUsize::new(entries).map(|cap| Mutex::new(SizedLru::new(cap, max_bytes)));
        AnswerCache { inner }
    }

    /// The stored answer for `key`, if it serves `asked`.
    pub fn get(&self, key: &CacheKey, asked: &AskedLimits) -> Option<Arc<Answer>> {
        let mut inner = self
            .inner
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let answer = inner.get(key)?;
        serves(answer, asked).then(|| Arc::clone(answer))
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
        let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.put(key, answer, bytes);
    }

    /// Number of answers held.
    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, |inner| {
            inner.lock().unwrap_or_else(PoisonError::into_inner).len()
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
        + std::mem::size_of::<(Arc<Answer>, usize)>() // the entry: the answer and its size
        + std::mem::size_of::<Answer>()
        + 64 // the LRU node and hash-table slot
        + key.rules.len()
        + key.board.len()
        + answer.heap_bytes()
}
