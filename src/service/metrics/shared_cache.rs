//! The shared answer cache's (Redis) metrics, registered under `kibitz_shared_cache_*`: hits
//! and misses by game, failed or skipped calls, values refused by the trust checks, and the
//! latency of the calls that answered. Defined here with the other metrics, so that the cache
//! uses them and the registry holds them without either module reaching into the other.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::GameLabel;

/// Labels of a shared-cache failure: the operation (`get`, `set`) and what went wrong
/// (`timeout`, `redis`, `undecodable`, `invalid` for a value the trust checks refused, `skipped`
/// while the breaker is open).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SharedErrorLabels {
    pub op: &'static str,
    pub kind: &'static str,
}

/// The game and the check a refused value failed
/// ([`Refusal::reason`](crate::service::shared_cache::trust::Refusal::reason)).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusalLabels {
    pub game: &'static str,
    pub reason: &'static str,
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
    pub refused: Family<RefusalLabels, Counter>,
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
            refused: Family::default(),
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
            "refused",
            "Values read from Redis that decoded but were not served (errors kind=\"invalid\"), \
             by game and by the check they failed",
            metrics.refused.clone(),
        );
        registry.register(
            "duration_seconds",
            "Latency of Redis calls that answered, by operation",
            metrics.duration.clone(),
        );
        metrics
    }

    /// Counts a failed or skipped call.
    pub fn error(&self, op: &'static str, kind: &'static str) {
        self.errors
            .get_or_create(&SharedErrorLabels { op, kind })
            .inc();
    }
}
