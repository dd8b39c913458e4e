//! The shared answer cache: answers kept in Redis, so that replicas answer each other's
//! positions.
//!
//! It sits between the local answer cache and a search (local `lru` → Redis → search) and
//! follows the local cache's serving rule: a stored answer serves only a request it fully
//! answers ([`crate::service::cache::serves`]). Redis must never break the latency promise, so
//! every call has a deadline of a few milliseconds ([`SharedCacheSettings::timeout`]), stores
//! run in a spawned task after the answer is handed back (never on the latency path), and a
//! circuit breaker (`breaker.rs`) skips Redis for a second after a few failures in a row. The
//! connection is the `redis` crate's `ConnectionManager`, made lazily (a Redis that is down at
//! start is not an error) and reconnecting by itself; [`endpoint`] makes its client (URL,
//! credentials, TLS).
//!
//! Redis is not trusted: whoever can write to it could otherwise make every replica serve
//! illegal moves. A value that does not decode ([`wire`]) or that is not an answer a search of
//! the key's position could give ([`trust`]) is dropped and counted, never an error for the
//! client, who gets a search as on a miss. The bad value is not deleted: that search stores
//! its own answer under the same key, which replaces it, and a `DEL` could race with another
//! replica writing a good one.

mod breaker;
pub mod endpoint;
pub mod trust;
pub mod wire;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::config::Config;
use crate::engine::StopReason;

use super::Answer;
use super::cache::CacheKey;
use super::games::ServedGame;
use super::metrics::shared_cache::{OpLabel, RefusalLabels, SharedCacheMetrics};
use breaker::Breaker;
pub use endpoint::Endpoint;
pub use wire::{FORMAT_VERSION, decode, encode, redis_key};

/// How the shared cache is reached and bounded (from [`crate::config::Config`]).
#[derive(Clone, Debug)]
pub struct SharedCacheSettings {
    pub endpoint: Endpoint,
    /// Deadline of every Redis call.
    pub timeout: Duration,
    /// Time to live of a stored answer.
    pub ttl: Duration,
    /// Largest value stored or read, in bytes.
    pub max_value_bytes: usize,
    /// What an answer read back may claim ([`trust::check`]).
    pub bounds: trust::Bounds,
}

impl SharedCacheSettings {
    /// The settings `config` asks for, or `None` without `KIBITZ_REDIS_URL`.
    pub fn from_config(config: &Config) -> Option<Self> {
        let url = config.redis_url.clone()?;
        Some(SharedCacheSettings {
            endpoint: Endpoint {
                url,
                username: config.redis_username.clone(),
                password: config
                    .redis_password
                    .as_ref()
                    .map(|p| p.expose().to_owned()),
                ca_file: config.redis_ca_file.clone(),
            },
            timeout: Duration::from_millis(config.redis_timeout_ms),
            ttl: Duration::from_secs(config.redis_ttl_s),
            max_value_bytes: config.redis_max_value_bytes,
            bounds: trust::Bounds {
                max_window: Duration::from_millis(config.max_budget_ms),
            },
        })
    }
}

/// Why the shared cache could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SharedCacheError {
    /// The `redis` crate's parse errors name the fault, never the URL (nor its password).
    #[error("KIBITZ_REDIS_URL is not a Redis URL: {0}")]
    Url(#[source] redis::RedisError),
    #[error("KIBITZ_REDIS_CA_FILE is set, and KIBITZ_REDIS_URL is not a rediss:// (TLS) URL")]
    CaWithoutTls,
    #[error("KIBITZ_REDIS_CA_FILE {}: {source}", path.display())]
    CaFile {
        path: std::path::PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
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
    /// The shared cache `config` asks for (`None` without `KIBITZ_REDIS_URL`); nothing is
    /// connected until the first call. Logs the address, without the password.
    pub fn from_config(
        config: &Config,
        metrics: SharedCacheMetrics,
    ) -> Result<Option<Self>, SharedCacheError> {
        SharedCacheSettings::from_config(config)
            .map(|settings| Self::new(settings, metrics))
            .transpose()
    }

    /// A shared cache at `settings.endpoint`; nothing is connected until the first call.
    pub fn new(
        settings: SharedCacheSettings,
        metrics: SharedCacheMetrics,
    ) -> Result<Self, SharedCacheError> {
        let (client, address) = endpoint::client(&settings.endpoint)?;
        tracing::info!(redis = %address, "shared answer cache");
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

    /// The stored answer for `key`, if Redis has a value that decodes to an answer a search
    /// of `position` (the key's) could give ([`trust::check`]). `None` on a miss, an error, a
    /// timeout, while the breaker is open, and for a value refused (counted and logged).
    pub async fn get<G: ServedGame>(&self, key: &CacheKey, position: &G) -> Option<Answer> {
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
        let Some(answer) = (value.len() <= self.settings.max_value_bytes)
            .then(|| decode(key, &value))
            .flatten()
        else {
            self.metrics.error("get", "undecodable");
            return None;
        };
        match trust::check(&answer, key, position, &self.settings.bounds) {
            Ok(()) => Some(answer),
            Err(refusal) => {
                self.metrics.error("get", "invalid");
                self.metrics
                    .refused
                    .get_or_create(&RefusalLabels {
                        game: G::NAME,
                        reason: refusal.reason(),
                    })
                    .inc();
                // What was wrong, and where; not the value (an attacker's bytes, up to
                // KIBITZ_REDIS_MAX_VALUE_BYTES of them).
                tracing::warn!(
                    key = %redis_key,
                    reason = refusal.reason(),
                    %refusal,
                    "shared cache value refused"
                );
                None
            }
        }
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
