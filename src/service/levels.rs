//! Strength levels and reproducible answers: what `level`, `seed` and `deterministic` do to a
//! move request between its validation and its search.
//!
//! - `level` 1..=9 weakens the search ([`crate::engine::skill`]): a depth cap, a share of the
//!   budget (and of a node limit), every root move scored, and a seeded softmax draw among them. 10, the default, is full strength and runs
//!   exactly the search it always did.
//! - `seed` fixes that draw. A weakened request without one gets a fresh random seed (seed 0
//!   when it is deterministic), returned in the answer so the draw can be replayed; such an
//!   answer is neither read from nor stored in any cache (a client that gave no seed asked for a
//!   fresh choice).
//! - `deterministic` makes the whole answer a function of the request: a fresh private table
//!   instead of the game's warm shared one, a node limit instead of the clock (derived from
//!   `budget_ms` by a fixed per-game rate, [`ServedGame::DETERMINISTIC_NODES_PER_MS`], unless
//!   `max_nodes` is given), one thread. The clock still guards the latency promise: a
//!   deterministic search that has not reached its node limit by the deadline is cancelled and
//!   answered with a 503 rather than with an answer another replica would not give.
//!
//! [`Style`] is the resolved triple; it is part of the answer and of both cache keys, so a
//! weakened answer is never served to a full-strength request, nor a timed one to a
//! deterministic request, and vice versa.

use crate::engine::skill::{FULL_STRENGTH, Skill, SplitMix64, WEAKEST};
use crate::engine::{
    CancelFlag, Deadline, SearchLimits, SearchOptions, SearchReport, TranspositionTable,
};

use super::ServiceError;
use super::games::ServedGame;

/// What a request asked about strength and reproducibility (validated by [`resolve`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlayStyle {
    /// 1..=10; `None` is 10. Read as any whole number up to 2^64 - 1, so that an error names
    /// the level that was sent.
    pub level: Option<u64>,
    pub seed: Option<u64>,
    pub deterministic: bool,
}

/// The style an answer was computed with: part of the answer and of the cache keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    pub level: u8,
    /// The seed of the weakened choice: the request's, or a fresh one. `None` at level 10,
    /// which draws nothing (so a seed there does not split the cache).
    pub seed: Option<u64>,
    pub deterministic: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            level: FULL_STRENGTH,
            seed: None,
            deterministic: false,
        }
    }
}

impl Style {
    /// Whether this answer may be looked up in and stored to the caches: not when its seed was
    /// drawn for this request alone.
    pub fn cacheable(&self, asked: &PlayStyle) -> bool {
        self.seed.is_none() || asked.seed.is_some() || self.deterministic
    }
}

/// Largest private table of a deterministic search, in MiB: with one search per worker this
/// bounds the extra memory deterministic requests take to workers x this.
pub const DETERMINISTIC_TABLE_MB_CAP: usize = 16;

/// Validates the request's style and fills in the defaults (a fresh seed for a weakened request
/// without one).
pub fn resolve(asked: &PlayStyle) -> Result<Style, ServiceError> {
    let level = asked.level.unwrap_or(u64::from(FULL_STRENGTH));
    if !(u64::from(WEAKEST)..=u64::from(FULL_STRENGTH)).contains(&level) {
        return Err(ServiceError::OutOfRange {
            pointer: "/level",
            message: format!(
                "level is {level}; it must be between {WEAKEST} (weakest) and {FULL_STRENGTH} \
                 (full strength, the default)"
            ),
        });
    }
    let level = level as u8;
    // A deterministic request draws with seed 0 when it names none: nothing it gets may vary.
    let seed = (level < FULL_STRENGTH).then(|| {
        asked
            .seed
            .unwrap_or_else(|| if asked.deterministic { 0 } else { fresh_seed() })
    });
    Ok(Style {
        level,
        seed,
        deterministic: asked.deterministic,
    })
}

/// A seed nobody asked for: the standard library's random hasher keys (random per process and
/// different for every `RandomState`), over the clock; below 2^53, so that a JavaScript
/// client (the playground) reads it as the exact number it was and can replay it.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish() >> (64 - DRAWN_SEED_BITS)
}

/// Drawn seeds have this many bits: every one is a safe integer in JavaScript.
pub const DRAWN_SEED_BITS: u32 = 53;

/// The node limit of a deterministic search: `max_nodes` if given, else the budget at the
/// game's fixed rate (at least one node per millisecond).
pub fn deterministic_nodes<G: ServedGame>(budget_ms: u64, max_nodes: Option<u64>) -> u64 {
    max_nodes.unwrap_or_else(|| budget_ms.saturating_mul(G::DETERMINISTIC_NODES_PER_MS.max(1)))
}

/// A fresh table for a deterministic search: about one entry per node it may visit, between
/// one MiB and [`DETERMINISTIC_TABLE_MB_CAP`] (and the game's own cap). A function of the node
/// limit and the game only, so every replica searches with the same table.
pub fn private_table<G: ServedGame>(nodes: u64) -> TranspositionTable {
    let bytes = nodes.saturating_mul(TranspositionTable::ENTRY_BYTES as u64);
    let megabytes = usize::try_from(bytes.div_ceil(1 << 20)).unwrap_or(usize::MAX);
    TranspositionTable::with_megabytes(
        megabytes
            .clamp(1, DETERMINISTIC_TABLE_MB_CAP)
            .min(G::TABLE_MB_CAP.max(1)),
    )
}

/// Searches `position` at `style`'s level: the game's own search at full strength; at levels
/// 1..=9 the game's search with the level's depth cap and share of the budget and node limit,
/// every root move scored, then the seeded draw ([`Skill::choose`]). The report's `root_moves`
/// are filled only when `analysis` was asked by the caller (`options.analysis`).
pub fn search_at_level<G: ServedGame>(
    position: &G,
    limits: &SearchLimits,
    options: SearchOptions,
    table: &TranspositionTable,
    style: &Style,
) -> SearchReport {
    let Some(skill) = Skill::in_table(style.level, &G::SKILL_LEVELS) else {
        return position.think(limits, options, table);
    };
    let limits = SearchLimits {
        max_depth: Some(
            limits
                .max_depth
                .map_or(skill.max_depth, |d| d.min(skill.max_depth)),
        ),
        deadline: limits.deadline.map(|d| {
            let now = std::time::Instant::now();
            Deadline(
                now + d
                    .0
                    .saturating_duration_since(now)
                    .mul_f64(skill.budget_share),
            )
        }),
        max_nodes: limits
            .max_nodes
            .map(|n| ((n as f64 * skill.budget_share) as u64).max(1)),
        ..limits.clone()
    };
    let weak_options = SearchOptions {
        analysis: true,
        candidates_only: !options.analysis,
        ..options
    };
    let mut report = position.think(&limits, weak_options, table);
    let mut rng = SplitMix64::new(style.seed.unwrap_or(0));
    skill.choose(&mut report, G::SKILL_UNIT, &mut rng);
    if !options.analysis {
        report.root_moves.clear();
    }
    report
}

/// Cancels a search at a point in time, unless dropped first: the deadline of a deterministic
/// search, which has no clock of its own.
pub struct CancelAt(tokio::task::JoinHandle<()>);

impl CancelAt {
    /// Must be called inside the tokio runtime (every request is).
    pub fn spawn(flag: CancelFlag, at: std::time::Instant) -> Self {
        CancelAt(tokio::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            flag.cancel();
        }))
    }
}

impl Drop for CancelAt {
    fn drop(&mut self) {
        self.0.abort();
    }
}
