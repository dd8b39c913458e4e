//! Batch analyses' metrics, registered under `kibitz_batch_*`: the queue a scaler reads
//! (items waiting, items held by a replica), items reclaimed from a replica that stopped,
//! item latency, and how items and batches ended. Every label comes from a closed set.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// How an item or a batch ended: items `answered`, `failed` (after their attempts) or
/// `skipped` (their batch was cancelled or expired); batches `accepted`, `done`, `cancelled`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    pub outcome: &'static str,
}

/// Batch metrics. Atomics inside; cheap to clone.
#[derive(Clone)]
pub struct BatchMetrics {
    /// Items queued and not yet taken by any replica (over every replica: read from the store).
    pub queue_depth: Gauge,
    /// Items taken by some replica and not yet finished (over every replica).
    pub pending: Gauge,
    /// Items this replica took over from another that held them too long.
    pub reclaimed: Counter,
    /// Items this replica finished, by outcome.
    pub items: Family<OutcomeLabel, Counter>,
    /// Batches, by outcome (`accepted` here; `done` and `cancelled` where they ended).
    pub batches: Family<OutcomeLabel, Counter>,
    /// Time from taking an item to storing its result.
    pub item_duration: Histogram,
    /// Batches refused by a bound over every client, by bound (`items`, `bytes`, `work`).
    pub refused: Family<ReasonLabel, Counter>,
    /// Entries read back from the store and refused, by what failed (`signature`, `shape`,
    /// `index`, `answer`).
    pub forged: Family<ReasonLabel, Counter>,
}

/// Why a batch or an entry was refused (a closed set).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    pub reason: &'static str,
}

impl BatchMetrics {
    /// Registers the metrics in `registry` (a sub-registry with the `batch` prefix).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = BatchMetrics {
            queue_depth: Gauge::default(),
            pending: Gauge::default(),
            reclaimed: Counter::default(),
            items: Family::default(),
            batches: Family::default(),
            item_duration: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            refused: Family::default(),
            forged: Family::default(),
        };
        registry.register(
            "refused",
            "Batches refused because the queue over every client was full, by bound",
            metrics.refused.clone(),
        );
        registry.register(
            "forged",
            "Batch queue entries and results read back from the store and refused, by check",
            metrics.forged.clone(),
        );
        registry.register(
            "queue_depth",
            "Batch items waiting for a worker, over every replica (the autoscaling signal)",
            metrics.queue_depth.clone(),
        );
        registry.register(
            "pending",
            "Batch items taken by a replica and not yet finished, over every replica",
            metrics.pending.clone(),
        );
        registry.register(
            "reclaimed",
            "Batch items this replica took over from one that held them past the idle timeout",
            metrics.reclaimed.clone(),
        );
        registry.register(
            "items",
            "Batch items finished by this replica, by outcome (answered, failed, skipped)",
            metrics.items.clone(),
        );
        registry.register(
            "batches",
            "Batches by outcome (accepted, done, cancelled)",
            metrics.batches.clone(),
        );
        registry.register_with_unit(
            "item_duration",
            "Time from taking a batch item to storing its result",
            Unit::Seconds,
            metrics.item_duration.clone(),
        );
        metrics
    }

    pub fn item(&self, outcome: &'static str) {
        self.items.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    pub fn refused(&self, reason: &'static str) {
        self.refused.get_or_create(&ReasonLabel { reason }).inc();
    }

    pub fn forged(&self, reason: &'static str) {
        self.forged.get_or_create(&ReasonLabel { reason }).inc();
    }

    pub fn batch(&self, outcome: &'static str) {
        self.batches.get_or_create(&OutcomeLabel { outcome }).inc();
    }
}
