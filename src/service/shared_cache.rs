//! The shared answer cache: answers kept in Redis, so that replicas answer each other's
//! positions.
//!
//! It sits between the local answer cache and a search (local `lru` → Redis → search) and
//! follows the local cache's serving rule: a stored answer serves only a request it fully
//! answers ([`super::cache::serves`]). Redis must never break the latency promise, so every
//! call has a deadline of a few milliseconds ([`SharedCacheSettings::timeout`]), stores run in
//! a spawned task after the answer is handed back (never on the latency path), and a circuit
//! breaker skips Redis for a second after a few failures in a row, then lets one call through
//! to see whether it is back. The connection is the `redis` crate's `ConnectionManager`, made
//! lazily (a Redis that is down at start is not an error) and reconnecting by itself.
//!
//! Keys carry [`FORMAT_VERSION`] and the crate's version, so replicas of two versions during a
//! rolling update never read each other's answers. Values are JSON with a TTL and a size bound;
//! a value that does not decode is ignored and counted, never an error for the client.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde::{Deserialize, Serialize};

use crate::engine::{Outcome, Proof, Side, StopReason, TableStats};
use crate::games::Cell;

use super::cache::CacheKey;
use super::metrics::GameLabel;
use super::{Answer, ForbiddenCell, IterationCell, ScoredCell};

/// Bumped whenever the key or value layout changes.
pub const FORMAT_VERSION: u32 = 3;

/// Failures in a row that open the circuit breaker.
const BREAKER_FAILURES: u32 = 3;
/// How long an open breaker skips Redis before letting one call through.
const BREAKER_OPEN: Duration = Duration::from_secs(1);

/// How the shared cache is reached and bounded (from [`crate::config::Config`]).
#[derive(Clone, Debug)]
pub struct SharedCacheSettings {
    /// `redis://host:port/db`.
    pub url: String,
    /// Deadline of every Redis call.
    pub timeout: Duration,
    /// Time to live of a stored answer.
    pub ttl: Duration,
    /// Largest value stored or read, in bytes.
    pub max_value_bytes: usize,
}

/// Why the shared cache could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SharedCacheError {
    #[error("KIBITZ_REDIS_URL is not a Redis URL: {0}")]
    Url(#[source] redis::RedisError),
}

/// Labels of a shared-cache failure: the operation (`get`, `set`) and what went wrong
/// (`timeout`, `redis`, `undecodable`, `skipped` while the breaker is open).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SharedErrorLabels {
    pub op: &'static str,
    pub kind: &'static str,
}

/// The operation a latency is for.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpLabel {
    pub op: &'static str,
}

/// The shared cache's metrics, registered under `kibitz_shared_cache_*`. Atomics inside.
#[derive(Clone)]
pub struct SharedCacheMetrics {
    pub hits: Family<GameLabel, Counter>,
    pub misses: Family<GameLabel, Counter>,
    pub errors: Family<SharedErrorLabels, Counter>,
    pub duration: Family<OpLabel, Histogram>,
}

fn redis_latency_histogram() -> Histogram {
    Histogram::new([
        0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.010, 0.020, 0.050,
    ])
}

impl SharedCacheMetrics {
    /// Registers the metrics in `registry` (a sub-registry with the `shared_cache` prefix).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = SharedCacheMetrics {
            hits: Family::default(),
            misses: Family::default(),
            errors: Family::default(),
            duration: Family::new_with_constructor(redis_latency_histogram as fn() -> _),
        };
        registry.register(
            "hits",
            "Answers served from the shared cache (Redis), by game",
            metrics.hits.clone(),
        );
        registry.register(
            "misses",
            "Shared-cache lookups that found no answer serving the request, by game",
            metrics.misses.clone(),
        );
        registry.register(
            "errors",
            "Shared-cache calls that failed or were skipped, by operation and kind",
            metrics.errors.clone(),
        );
        registry.register(
            "duration_seconds",
            "Latency of Redis calls that answered, by operation",
            metrics.duration.clone(),
        );
        metrics
    }

    fn error(&self, op: &'static str, kind: &'static str) {
        self.errors
            .get_or_create(&SharedErrorLabels { op, kind })
            .inc();
    }
}

/// Skips Redis after [`BREAKER_FAILURES`] failures in a row, for [`BREAKER_OPEN`]; then one
/// call goes through (the others still skip) and its outcome closes or reopens the breaker.
/// Lock-free: two atomics, read and written by every request task.
#[derive(Debug)]
struct Breaker {
    /// Failures since the last success.
    failures: AtomicU32,
    /// Milliseconds since `epoch` until which Redis is skipped; 0 = closed.
    open_until_ms: AtomicU64,
    epoch: Instant,
}

impl Breaker {
    fn new() -> Self {
        Breaker {
            failures: AtomicU32::new(0),
            open_until_ms: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether a call may go to Redis now.
    fn allow(&self) -> bool {
        let until = self.open_until_ms.load(Ordering::Acquire);
        if until == 0 {
            return true;
        }
        let now = self.now_ms();
        if now < until {
            return false;
        }
        // Half-open: the one caller that moves the deadline on makes the trial call.
        let reopened = now + BREAKER_OPEN.as_millis() as u64;
        self.open_until_ms
            .compare_exchange(until, reopened, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn success(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.open_until_ms.store(0, Ordering::Release);
    }

    fn failure(&self) {
        if self.failures.fetch_add(1, Ordering::Relaxed) + 1 >= BREAKER_FAILURES {
            self.failures.store(0, Ordering::Relaxed);
            let until = self.now_ms() + BREAKER_OPEN.as_millis() as u64;
            self.open_until_ms.store(until.max(1), Ordering::Release);
        }
    }
}

/// The shared cache. Cheap to clone (the connection manager and the state are shared).
#[derive(Clone)]
pub struct SharedCache {
    /// Made on first use, inside the runtime (the service may be built outside one); the
    /// manager itself is a cheap clone around a multiplexed connection that reconnects.
    connection: Arc<Mutex<Option<ConnectionManager>>>,
    client: redis::Client,
    settings: Arc<SharedCacheSettings>,
    breaker: Arc<Breaker>,
    metrics: SharedCacheMetrics,
}

impl SharedCache {
    /// A shared cache at `settings.url`; nothing is connected until the first call.
    pub fn new(
        settings: SharedCacheSettings,
        metrics: SharedCacheMetrics,
    ) -> Result<Self, SharedCacheError> {
        let client = redis::Client::open(settings.url.as_str()).map_err(SharedCacheError::Url)?;
        Ok(SharedCache {
            connection: Arc::new(Mutex::new(None)),
            client,
            settings: Arc::new(settings),
            breaker: Arc::new(Breaker::new()),
            metrics,
        })
    }

    fn connection(&self) -> Option<ConnectionManager> {
        let mut slot = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            // Calls are bounded by our own deadline; these bound the manager's own waits so
            // that a dead Redis costs reconnection attempts in the background, not requests.
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_millis(500)))
                .set_response_timeout(Some(Duration::from_millis(500)))
                .set_number_of_retries(2)
                .set_min_delay(Duration::from_millis(50))
                .set_max_delay(Duration::from_millis(500));
            *slot = ConnectionManager::new_lazy_with_config(self.client.clone(), config).ok();
        }
        slot.clone()
    }

    /// The stored answer for `key`, if Redis has a value that decodes. `None` on a miss, an
    /// error, a timeout or while the breaker is open.
    pub async fn get(&self, key: &CacheKey) -> Option<Answer> {
        if !self.breaker.allow() {
            self.metrics.error("get", "skipped");
            return None;
        }
        let mut connection = self.connection()?;
        let redis_key = redis_key(key);
        let started = Instant::now();
        let reply = tokio::time::timeout(
            self.settings.timeout,
            connection.get::<_, Option<Vec<u8>>>(&redis_key),
        )
        .await;
        let value = match reply {
            Ok(Ok(value)) => {
                self.breaker.success();
                self.observe("get", started);
                value?
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "shared cache get failed");
                self.breaker.failure();
                self.metrics.error("get", "redis");
                return None;
            }
            Err(_) => {
                self.breaker.failure();
                self.metrics.error("get", "timeout");
                return None;
            }
        };
        let decoded = (value.len() <= self.settings.max_value_bytes)
            .then(|| decode(key, &value))
            .flatten();
        if decoded.is_none() {
            self.metrics.error("get", "undecodable");
        }
        decoded
    }

    /// Stores `answer` under `key` in a spawned task, so the caller answers first.
    pub fn spawn_store(&self, key: CacheKey, answer: Arc<Answer>) {
        if answer.stop_reason == StopReason::Cancelled {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let this = self.clone();
        runtime.spawn(async move {
            // Let the task writing the response run first on this thread.
            tokio::task::yield_now().await;
            this.store(&key, &answer).await;
        });
    }

    async fn store(&self, key: &CacheKey, answer: &Answer) {
        let value = encode(answer);
        if value.len() > self.settings.max_value_bytes {
            return;
        }
        if !self.breaker.allow() {
            self.metrics.error("set", "skipped");
            return;
        }
        let Some(mut connection) = self.connection() else {
            return;
        };
        let started = Instant::now();
        let ttl_seconds = self.settings.ttl.as_secs().max(1);
        let reply = tokio::time::timeout(
            self.settings.timeout,
            connection.set_ex::<_, _, ()>(redis_key(key), value, ttl_seconds),
        )
        .await;
        match reply {
            Ok(Ok(())) => {
                self.breaker.success();
                self.observe("set", started);
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "shared cache set failed");
                self.breaker.failure();
                self.metrics.error("set", "redis");
            }
            Err(_) => {
                self.breaker.failure();
                self.metrics.error("set", "timeout");
            }
        }
    }

    fn observe(&self, op: &'static str, started: Instant) {
        self.metrics
            .duration
            .get_or_create(&OpLabel { op })
            .observe(started.elapsed().as_secs_f64());
    }
}

/// The Redis key of a question: format and crate versions first, then every part of
/// [`CacheKey`] (none contains `|`: names, canonical rules and board text, numbers).
pub fn redis_key(key: &CacheKey) -> String {
    let limit = |limit: Option<u64>| limit.map_or_else(|| "-".to_owned(), |n| n.to_string());
    format!(
        "kibitz:v{FORMAT_VERSION}:{}|{}|{}|{}|{}|{}|{}|{}|{}|L{}|{}|{}",
        env!("CARGO_PKG_VERSION"),
        key.game,
        key.rules,
        key.board,
        match key.to_move {
            Side::First => 'X',
            Side::Second => 'O',
        },
        if key.minimax { "minimax" } else { "alphabeta" },
        if key.analysis { "analysis" } else { "best" },
        limit(key.max_depth.map(u64::from)),
        limit(key.max_nodes),
        key.style.level,
        limit(key.style.seed),
        if key.style.deterministic {
            "deterministic"
        } else {
            "timed"
        },
    )
}

/// A cell as `[row, col]`.
type WireCell = [u32; 2];
/// A proof as `[outcome, plies_to_end]`, outcome 1 win, -1 loss, 0 draw.
type WireProof = (i8, u32);

/// The stored value: an answer. The game, the side to move and the limits asked are the key's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireEntry {
    best: WireCell,
    score: i32,
    proof: Option<WireProof>,
    depth: u32,
    nodes: u64,
    nps: u64,
    elapsed_us: u64,
    /// The time the search had (the serving rule reads it).
    window_us: u64,
    stop_reason: String,
    probes: u64,
    hits: u64,
    fill_permille: u32,
    pv: Vec<WireCell>,
    /// `[depth, nodes, score, move]` per completed iteration.
    iterations: Vec<(u32, u64, i32, WireCell)>,
    /// `[cell, score, proof, depth]` per analysed root move.
    analysis: Option<Vec<WireScoredCell>>,
    /// `[cell, reason]` per forbidden point (renju analysis).
    #[serde(default)]
    forbidden: Option<Vec<(WireCell, String)>>,
}

/// One analysed root move: `[cell, score, proof, depth]`.
type WireScoredCell = (WireCell, i32, Option<WireProof>, u32);

fn wire_cell(cell: Cell) -> WireCell {
    [cell.row as u32, cell.col as u32]
}

fn cell_of(wire: WireCell) -> Cell {
    Cell {
        row: wire[0] as usize,
        col: wire[1] as usize,
    }
}

fn wire_proof(proof: Proof) -> WireProof {
    let outcome = match proof.outcome {
        Outcome::Win => 1,
        Outcome::Loss => -1,
        Outcome::Draw => 0,
    };
    (outcome, proof.plies_to_end)
}

fn proof_of(wire: WireProof) -> Option<Proof> {
    let outcome = match wire.0 {
        1 => Outcome::Win,
        -1 => Outcome::Loss,
        0 => Outcome::Draw,
        _ => return None,
    };
    Some(Proof {
        outcome,
        plies_to_end: wire.1,
    })
}

fn forbidden_reason_of(name: &str) -> Option<&'static str> {
    crate::games::gomoku::renju::Forbidden::ALL
        .into_iter()
        .map(|reason| reason.name())
        .find(|&known| known == name)
}

fn stop_reason_of(name: &str) -> Option<StopReason> {
    [
        StopReason::Proven,
        StopReason::Book,
        StopReason::Depth,
        StopReason::Nodes,
        StopReason::Time,
    ]
    .into_iter()
    .find(|reason| reason.as_str() == name)
}

/// The value stored for `answer`.
pub fn encode(answer: &Answer) -> Vec<u8> {
    let entry = WireEntry {
        best: wire_cell(answer.best),
        score: answer.score,
        proof: answer.proof.map(wire_proof),
        depth: answer.depth,
        nodes: answer.nodes,
        nps: answer.nps,
        elapsed_us: u64::try_from(answer.elapsed.as_micros()).unwrap_or(u64::MAX),
        window_us: u64::try_from(answer.window.as_micros()).unwrap_or(u64::MAX),
        stop_reason: answer.stop_reason.as_str().to_owned(),
        probes: answer.table.probes,
        hits: answer.table.hits,
        fill_permille: answer.fill_permille,
        pv: answer.pv.iter().copied().map(wire_cell).collect(),
        iterations: answer
            .iterations
            .iter()
            .map(|it| (it.depth, it.nodes, it.score, wire_cell(it.best)))
            .collect(),
        analysis: answer.analysis.as_ref().map(|moves| {
            moves
                .iter()
                .map(|m| (wire_cell(m.cell), m.score, m.proof.map(wire_proof), m.depth))
                .collect()
        }),
        forbidden: answer.forbidden.as_ref().map(|points| {
            points
                .iter()
                .map(|p| (wire_cell(p.cell), p.reason.to_owned()))
                .collect()
        }),
    };
    // Serialising plain data into a Vec cannot fail.
    serde_json::to_vec(&entry).unwrap_or_default()
}

/// The answer stored for `key`, or `None` if the value is not one this version wrote.
pub fn decode(key: &CacheKey, value: &[u8]) -> Option<Answer> {
    let entry: WireEntry = serde_json::from_slice(value).ok()?;
    let proof = match entry.proof {
        Some(wire) => Some(proof_of(wire)?),
        None => None,
    };
    let analysis = match entry.analysis {
        Some(moves) => Some(
            moves
                .into_iter()
                .map(|(cell, score, proof, depth)| {
                    Some(ScoredCell {
                        cell: cell_of(cell),
                        score,
                        proof: match proof {
                            Some(wire) => Some(proof_of(wire)?),
                            None => None,
                        },
                        depth,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    let forbidden = match entry.forbidden {
        Some(points) => Some(
            points
                .into_iter()
                .map(|(cell, reason)| {
                    Some(ForbiddenCell {
                        cell: cell_of(cell),
                        reason: forbidden_reason_of(&reason)?,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    let answer = Answer {
        game: key.game,
        to_move: key.to_move,
        best: cell_of(entry.best),
        score: entry.score,
        proof,
        depth: entry.depth,
        nodes: entry.nodes,
        nps: entry.nps,
        elapsed: Duration::from_micros(entry.elapsed_us),
        window: Duration::from_micros(entry.window_us),
        stop_reason: stop_reason_of(&entry.stop_reason)?,
        table: TableStats {
            probes: entry.probes,
            hits: entry.hits,
        },
        fill_permille: entry.fill_permille,
        pv: entry.pv.into_iter().map(cell_of).collect(),
        iterations: entry
            .iterations
            .into_iter()
            .map(|(depth, nodes, score, best)| IterationCell {
                depth,
                nodes,
                score,
                best: cell_of(best),
            })
            .collect(),
        analysis,
        forbidden,
        style: key.style,
    };
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CacheKey {
        CacheKey {
            game: "tictactoe",
            rules: String::new(),
            board: "XX./OO./...".into(),
            to_move: Side::First,
            minimax: false,
            analysis: true,
            max_depth: Some(7),
            max_nodes: None,
            style: Default::default(),
        }
    }

    fn answer() -> Answer {
        let cell = Cell { row: 0, col: 2 };
        Answer {
            game: "tictactoe",
            to_move: Side::First,
            best: cell,
            score: 999_999,
            proof: Some(Proof {
                outcome: Outcome::Win,
                plies_to_end: 1,
            }),
            depth: 1,
            nodes: 6,
            nps: 100_000,
            elapsed: Duration::from_micros(52),
            window: Duration::from_millis(999),
            stop_reason: StopReason::Proven,
            table: TableStats { probes: 3, hits: 1 },
            fill_permille: 0,
            pv: vec![cell],
            iterations: vec![IterationCell {
                depth: 1,
                nodes: 6,
                score: 999_999,
                best: cell,
            }],
            analysis: Some(vec![ScoredCell {
                cell,
                score: 999_999,
                proof: None,
                depth: 1,
            }]),
            forbidden: Some(vec![ForbiddenCell {
                cell: Cell { row: 1, col: 1 },
                reason: "double_three",
            }]),
            style: Default::default(),
        }
    }

    #[test]
    fn an_encoded_answer_decodes_to_itself() {
        let decoded = decode(&key(), &encode(&answer())).unwrap();
        assert_eq!(decoded, answer());
    }

    #[test]
    fn values_that_are_not_entries_do_not_decode() {
        assert!(decode(&key(), b"garbage").is_none());
        assert!(decode(&key(), b"{}").is_none());
        let unknown_reason = String::from_utf8(encode(&answer()))
            .unwrap()
            .replace("\"proven\"", "\"cancelled\"");
        assert!(decode(&key(), unknown_reason.as_bytes()).is_none());
        let unknown_forbidden = String::from_utf8(encode(&answer()))
            .unwrap()
            .replace("\"double_three\"", "\"triple_three\"");
        assert!(decode(&key(), unknown_forbidden.as_bytes()).is_none());
    }

    #[test]
    fn keys_carry_the_format_and_crate_versions_and_the_whole_question() {
        let text = redis_key(&key());
        assert!(text.starts_with(&format!(
            "kibitz:v{FORMAT_VERSION}:{}|",
            env!("CARGO_PKG_VERSION")
        )));
        let mut other = key();
        other.analysis = false;
        assert_ne!(redis_key(&other), text);
        other = key();
        other.to_move = Side::Second;
        assert_ne!(redis_key(&other), text);
        other = key();
        other.max_depth = Some(8);
        assert_ne!(redis_key(&other), text);
        other = key();
        other.max_nodes = Some(7);
        assert_ne!(redis_key(&other), text, "a node limit is not a depth limit");
    }

    #[test]
    fn keys_separate_levels_seeds_and_deterministic_answers() {
        use crate::service::levels::Style;
        let full = redis_key(&key());
        let weak = |level: u8, seed: Option<u64>, deterministic: bool| {
            redis_key(&CacheKey {
                style: Style {
                    level,
                    seed,
                    deterministic,
                },
                ..key()
            })
        };
        assert_eq!(weak(10, None, false), full, "level 10 is the default");
        let all = [
            full.clone(),
            weak(9, Some(1), false),
            weak(9, Some(2), false),
            weak(8, Some(1), false),
            weak(10, None, true),
            weak(9, Some(1), true),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn a_decoded_answer_takes_its_style_from_the_key() {
        use crate::service::levels::Style;
        let style = Style {
            level: 3,
            seed: Some(77),
            deterministic: true,
        };
        let key = CacheKey { style, ..key() };
        let stored = Answer { style, ..answer() };
        assert_eq!(decode(&key, &encode(&stored)).unwrap(), stored);
    }

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_and_a_success_closes_it() {
        let breaker = Breaker::new();
        for _ in 0..BREAKER_FAILURES - 1 {
            breaker.failure();
        }
        assert!(breaker.allow(), "closed below the threshold");
        breaker.failure();
        assert!(!breaker.allow(), "open at the threshold");
        breaker.success();
        assert!(breaker.allow());
    }

    #[test]
    fn an_open_breaker_lets_one_trial_call_through_after_its_pause() {
        let breaker = Breaker::new();
        // Opened long enough ago for the pause to be over.
        breaker.open_until_ms.store(1, Ordering::Release);
        let breaker = Breaker {
            epoch: Instant::now() - Duration::from_secs(5),
            ..breaker
        };
        assert!(breaker.allow(), "the trial call");
        assert!(!breaker.allow(), "others skip while the trial runs");
    }
}
