//! Batch analyses: many positions and games in one request, answered by the idle workers of
//! every replica, while interactive requests keep theirs.
//!
//! A batch is stored whole when it is accepted, its items queued one entry each, in one of
//! two [`BatchStore`]s: Redis Streams ([`redis_store`]) when `KIBITZ_REDIS_URL` is set, so
//! that every replica's consumers share the work, or an in-process queue ([`local`]) on a
//! single replica. The key idea is that an item is acknowledged only after its result is
//! stored, and stored at most once per index: a replica that dies holding items leaves them
//! pending, another takes them over after an idle timeout, and a result written twice (the
//! dead replica had stored it, not acknowledged it) keeps the first. Each item is handed out
//! at most `KIBITZ_BATCH_MAX_ATTEMPTS` times; then it is marked `failed`, so a poison item
//! (a search that panics, an entry that does not decode, one that kills its replica) ends.
//!
//! Within a priority, items are taken round-robin between the batches' clients (their
//! identity, see `crate::api::identity`): exactly so in-process ([`fair_queue`]); in Redis
//! over 16 lanes a client's items are queued in by the hash of its identity
//! ([`redis_store::lane_of`]), so two clients sharing a lane are served in their queue order.
//!
//! The consumers of a replica ([`Consumers`]) take an item only when more than the spare
//! workers (`KIBITZ_BATCH_SPARE_WORKERS`) are idle, and hold at most as many items as the
//! other workers; and an item's search yields its worker when a `POST /move` would not get one
//! in time (it is pre-empted, see [`super::pool`]), so `/move` never waits behind batch work,
//! even on a one-worker replica.
//! What an item *is* (a `/move` or `/review` body) and how its result is written is the
//! API's ([`ItemRunner`]): this module moves opaque JSON text.
//!
//! On SIGTERM the consumers stop taking items at once; the items they hold finish within the
//! shutdown timeout, or are released (handed back for another replica to take at once).

pub mod fair_queue;
pub mod local;
pub mod redis_store;
pub mod verify;
pub mod watchers;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use super::metrics::batch::BatchMetrics;
use super::pool::WorkerPool;
use super::shared_cache::{SharedCacheError, SharedCacheSettings};
use crate::config::Config;

/// Which queue a batch's items wait in; higher ones are always taken first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Priority {
    High,
    #[default]
    Normal,
    Low,
}

impl Priority {
    /// In the order consumers take them.
    pub const ALL: [Priority; 3] = [Priority::High, Priority::Normal, Priority::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// Its place in [`Priority::ALL`].
    fn rank(self) -> usize {
        self as usize
    }
}

/// A batch as the API parsed and checked it, with its id: [`Batches::admit`] decides whether
/// it is queued.
#[derive(Clone, Debug)]
pub struct NewBatch {
    pub id: String,
    /// Who asked (for the in-flight limit).
    pub client: String,
    pub priority: Priority,
    /// The budget of items that name none (the API's to apply).
    pub budget_ms: Option<u64>,
    pub items: Vec<NewItem>,
}

/// One item of a [`NewBatch`].
#[derive(Clone, Debug)]
pub struct NewItem {
    /// Its JSON, re-serialised compactly by the API (never the client's text verbatim: white
    /// space a client pads an item with is not stored).
    pub json: String,
    /// The search time it asks for (a game's whole review), for the queued-work bound.
    pub work_ms: u64,
}

impl NewItem {
    /// What the item counts against `KIBITZ_BATCH_MAX_STORED_BYTES` while queued: its JSON and
    /// a fixed allowance for the store's own bookkeeping of an entry (a Redis stream entry's
    /// id, field names and the signature), so that many tiny items cannot slip under the bound.
    pub fn stored_bytes(&self) -> u64 {
        stored_bytes(&self.json)
    }
}

/// Bytes an entry of `json` counts as (see [`NewItem::stored_bytes`]).
pub(crate) fn stored_bytes(json: &str) -> u64 {
    json.len() as u64 + ENTRY_OVERHEAD_BYTES
}

/// The allowance per stored entry (item or result) for the store's bookkeeping.
const ENTRY_OVERHEAD_BYTES: u64 = 256;

/// What is queued and stored at once (see [`Bound`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Items queued or being run.
    pub items: u64,
    /// Bytes of queued items and kept results (see [`NewItem::stored_bytes`]).
    pub bytes: u64,
    /// The queued items' budgets, in ms.
    pub work_ms: u64,
}

impl Usage {
    /// What `batch` adds.
    pub fn of(batch: &NewBatch) -> Self {
        Usage {
            items: batch.items.len() as u64,
            bytes: batch.items.iter().map(NewItem::stored_bytes).sum(),
            work_ms: batch
                .items
                .iter()
                .fold(0u64, |sum, item| sum.saturating_add(item.work_ms)),
        }
    }

    /// The first bound `self` plus `more` would pass, under `settings`' limits.
    pub fn exceeded_by(&self, more: &Usage, settings: &BatchSettings) -> Option<Bound> {
        if self.items.saturating_add(more.items) > settings.max_queued_items {
            Some(Bound::Items)
        } else if self.bytes.saturating_add(more.bytes) > settings.max_stored_bytes {
            Some(Bound::Bytes)
        } else if self.work_ms.saturating_add(more.work_ms) > settings.max_queued_work_ms {
            Some(Bound::Work)
        } else {
            None
        }
    }
}

/// A bound on what every client's batches hold together (per replica without Redis, per
/// Redis with it), whatever any client says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Items,
    Bytes,
    Work,
}

impl Bound {
    /// Its setting.
    pub fn setting(self) -> &'static str {
        match self {
            Bound::Items => "KIBITZ_BATCH_MAX_QUEUED_ITEMS",
            Bound::Bytes => "KIBITZ_BATCH_MAX_STORED_BYTES",
            Bound::Work => "KIBITZ_BATCH_MAX_QUEUED_WORK_MS",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Bound::Items => "items queued",
            Bound::Bytes => "bytes of batch data stored",
            Bound::Work => "ms of search queued",
        }
    }

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Items => "items",
            Bound::Bytes => "bytes",
            Bound::Work => "work",
        }
    }

    pub(crate) fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Bound::Items),
            2 => Some(Bound::Bytes),
            3 => Some(Bound::Work),
            _ => None,
        }
    }
}

/// Where a batch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchState {
    Queued,
    Running,
    Done,
    Cancelled,
}

impl BatchState {
    pub fn as_str(self) -> &'static str {
        match self {
            BatchState::Queued => "queued",
            BatchState::Running => "running",
            BatchState::Done => "done",
            BatchState::Cancelled => "cancelled",
        }
    }

    /// The state of a batch of `total` items with `done` results.
    fn of(cancelled: bool, started: bool, done: usize, total: usize) -> Self {
        if done >= total {
            BatchState::Done
        } else if cancelled {
            BatchState::Cancelled
        } else if started || done > 0 {
            BatchState::Running
        } else {
            BatchState::Queued
        }
    }
}

/// A batch as stored: its state and the results so far, by index.
#[derive(Clone, Debug)]
pub struct BatchView {
    pub id: String,
    pub state: BatchState,
    pub total: usize,
    /// `(index, result JSON)`, in index order, each index at most once.
    pub results: Vec<(usize, String)>,
}

/// An item handed to a consumer.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub batch: String,
    pub index: usize,
    /// Items in its batch.
    pub total: usize,
    /// The item's JSON, as stored.
    pub item: String,
    /// The batch's budget for items that name none.
    pub budget_ms: Option<u64>,
    /// The search time it was admitted with (see [`NewItem::work_ms`]).
    pub work_ms: u64,
    /// Whether it counts in the store's [`Usage`] (an entry not written by kibitz does not).
    pub counted: bool,
    /// Times it was handed out, this time included.
    pub attempts: u64,
    /// Whether it was taken over from a consumer that held it too long.
    pub reclaimed: bool,
    /// Its batch's.
    pub priority: Priority,
    handle: Handle,
}

/// Where the store finds a delivery again.
#[derive(Clone, Debug)]
enum Handle {
    Local(u64),
    /// An entry of `priority`'s stream `lane` (see [`redis_store::lane_of`]).
    Stream {
        priority: Priority,
        lane: u8,
        id: String,
    },
}

/// How running an item went.
pub enum Outcome {
    /// Its result (JSON), to be stored: an answer or an error a lone request would have had.
    Answered(String),
    /// It could not be run this time (its search panicked, its entry did not decode): handed
    /// out again, until its attempts are spent.
    Retry,
    /// The pool shed it (a `/move` took the worker between the look and the search), or
    /// pre-empted it (a `/move` needed its worker: [`crate::service::pool::Yielding`]): not the
    /// item's fault, run again once a worker beyond the spare ones is idle.
    Shed,
}

/// Runs items: what an item means is the API's business.
pub trait ItemRunner: Send + Sync + 'static {
    fn run<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Outcome>;
    /// The result of an item whose attempts are spent.
    fn failed(&self, delivery: &Delivery) -> String;
}

/// Items waiting and held, over every replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDepth {
    pub queued: u64,
    pub pending: u64,
}

/// Why a batch was refused, or the store failed.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("a batch needs at least one item")]
    Empty,
    #[error("{count} items, more than the {limit} a batch may have (KIBITZ_BATCH_MAX_ITEMS)")]
    TooManyItems { count: u64, limit: u64 },
    #[error(
        "the items' budgets add up to {total_ms} ms, more than the {limit_ms} ms a batch may \
         ask for (KIBITZ_BATCH_MAX_TOTAL_BUDGET_MS)"
    )]
    OverBudget { total_ms: u64, limit_ms: u64 },
    #[error(
        "the batch queue is full: this batch would take it past its {limit} {what} ({setting}); \
         try again once queued work has been done",
        what = bound.what(),
        setting = bound.setting()
    )]
    Full { bound: Bound, limit: u64 },
    #[error(
        "this client already has {limit} batches queued or running, the limit \
         (KIBITZ_BATCH_MAX_IN_FLIGHT); wait for one to finish or cancel one"
    )]
    TooManyInFlight { limit: u64 },
    #[error("the batch store (Redis) failed: {0}")]
    Store(String),
    #[error(
        "this replica already streams {limit} batch watches, the limit \
         (KIBITZ_BATCH_MAX_WATCHERS); poll GET /analyses/{{id}} without an event stream, or \
         try again shortly"
    )]
    TooManyWatchers { limit: u64 },
}

impl From<redis::RedisError> for BatchError {
    fn from(error: redis::RedisError) -> Self {
        BatchError::Store(error.to_string())
    }
}

/// Where batches live. Every method is one short exchange with the store, except
/// [`BatchStore::take`], which waits a little for an item.
pub trait BatchStore: Send + Sync + 'static {
    /// Stores `batch` and queues its items, unless its client has too many in flight; how
    /// many its client has in flight with it (for the answer's `RateLimit` headers).
    fn create<'a>(&'a self, batch: &'a NewBatch) -> BoxFuture<'a, Result<u64, BatchError>>;
    /// The batch, or `None` if unknown or expired.
    fn view<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>>;
    /// Deletes the batch, its results and its count in the [`Usage`] (its items still queued
    /// are skipped when taken); whether it was there.
    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, BatchError>>;
    /// Cancels the batch (items not yet run are skipped); the batch as it is, or `None`.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>>;
    /// The next item for `consumer`: one taken over from a consumer that held it too long,
    /// else the oldest of the highest priority; `None` after a short wait for one.
    fn take<'a>(&'a self, consumer: &'a str)
    -> BoxFuture<'a, Result<Option<Delivery>, BatchError>>;
    /// Whether the item is still to be run: its batch is there and not cancelled, and its
    /// index has no result yet. Marks the batch running.
    fn wanted<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Result<bool, BatchError>>;
    /// Stores `result` for the item (unless its index has one) and then acknowledges it; with
    /// `None`, only acknowledges it. Whether its batch is now done.
    fn finish<'a>(
        &'a self,
        delivery: &'a Delivery,
        result: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, BatchError>>;
    /// Hands the item back to be taken again at once; `failed` counts this as an attempt.
    fn give_back<'a>(
        &'a self,
        delivery: &'a Delivery,
        failed: bool,
    ) -> BoxFuture<'a, Result<(), BatchError>>;
    /// Tells the store `consumer` is still working on the item (so it is not taken over).
    fn heartbeat<'a>(
        &'a self,
        consumer: &'a str,
        delivery: &'a Delivery,
    ) -> BoxFuture<'a, Result<(), BatchError>>;
    /// Items waiting and held.
    fn depth(&self) -> BoxFuture<'_, Result<QueueDepth, BatchError>>;
    /// Drops batches past their time (and what they count in the [`Usage`]).
    fn sweep(&self) -> BoxFuture<'_, Result<(), BatchError>>;
    /// The batch's progress without its results (one cheap read, see [`watchers`]), or `None`.
    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<watchers::Progress>, BatchError>>;
    /// The stored results of `indices` (of a batch of `total`), checked as [`Self::view`]
    /// checks them; the others are not there yet.
    fn results<'a>(
        &'a self,
        id: &'a str,
        total: usize,
        indices: &'a [usize],
    ) -> BoxFuture<'a, Result<Vec<(usize, String)>, BatchError>>;
}

/// The limits and names batches run under (from [`Config`]).
#[derive(Clone, Debug)]
pub struct BatchSettings {
    pub max_items: u64,
    pub max_total_budget_ms: u64,
    pub max_in_flight: u64,
    /// The bounds over every client (see [`Bound`]).
    pub max_queued_items: u64,
    pub max_stored_bytes: u64,
    pub max_queued_work_ms: u64,
    pub ttl: Duration,
    pub max_attempts: u64,
    pub reclaim_idle: Duration,
    /// Items a replica holds at once: its workers less the spare ones.
    pub batch_workers: usize,
    pub replica: String,
}

impl BatchSettings {
    pub fn from_config(config: &Config) -> Self {
        BatchSettings {
            max_items: config.batch_max_items,
            max_total_budget_ms: config.batch_max_total_budget_ms,
            max_in_flight: config.batch_max_in_flight,
            max_queued_items: config.batch_max_queued_items,
            max_stored_bytes: config.batch_max_stored_bytes,
            max_queued_work_ms: config.batch_max_queued_work_ms,
            ttl: Duration::from_secs(config.batch_result_ttl_s),
            max_attempts: config.batch_max_attempts,
            reclaim_idle: Duration::from_millis(config.batch_reclaim_idle_ms),
            batch_workers: config.batch_workers(),
            replica: config.replica(),
        }
    }

    /// The limit of `limit` for `bound`.
    pub fn limit(&self, bound: Bound) -> u64 {
        match bound {
            Bound::Items => self.max_queued_items,
            Bound::Bytes => self.max_stored_bytes,
            Bound::Work => self.max_queued_work_ms,
        }
    }

    /// Refuses a batch of `count` items before anything of it is parsed.
    pub fn check_count(&self, count: u64) -> Result<(), BatchError> {
        if count == 0 {
            return Err(BatchError::Empty);
        }
        if count > self.max_items {
            return Err(BatchError::TooManyItems {
                count,
                limit: self.max_items,
            });
        }
        Ok(())
    }

    /// Workers of `pool` that batch items leave idle for `/move` and `/review`: an item is
    /// taken, or tried again after a shed, only when more than these are idle.
    pub fn spare_workers(&self, pool: &WorkerPool) -> usize {
        pool.workers().saturating_sub(self.batch_workers)
    }
}

/// The batches of this deployment: the store and the settings. Cheap to clone.
#[derive(Clone)]
pub struct Batches {
    store: Arc<dyn BatchStore>,
    settings: Arc<BatchSettings>,
    metrics: BatchMetrics,
    /// The event streams' shared pollers (see [`watchers`]).
    watches: Arc<watchers::Watches>,
}

impl Batches {
    /// Redis Streams when `KIBITZ_REDIS_URL` is set (the shared cache's connection settings),
    /// else in process.
    pub fn from_config(config: &Config, metrics: BatchMetrics) -> Result<Self, SharedCacheError> {
        let settings = BatchSettings::from_config(config);
        let store: Arc<dyn BatchStore> = match SharedCacheSettings::from_config(config) {
            Some(redis) => Arc::new(redis_store::RedisStore::new(
                &redis.endpoint,
                settings.clone(),
                verify::Seal::from_config(config),
                metrics.clone(),
            )?),
            None => Arc::new(local::LocalStore::new(settings.clone())),
        };
        let watches = Arc::new(watchers::Watches::new(
            Arc::clone(&store),
            usize::try_from(config.batch_max_watchers).unwrap_or(usize::MAX),
        ));
        Ok(Batches {
            store,
            settings: Arc::new(settings),
            metrics,
            watches,
        })
    }

    /// Watches batch `id` for an event stream (see [`watchers`]): shared with every other
    /// watcher of it on this replica, bounded by `KIBITZ_BATCH_MAX_WATCHERS`.
    pub async fn watch(&self, id: &str) -> Result<watchers::Watcher, BatchError> {
        self.watches.watch(id).await
    }

    /// Ends every watch with its last event (shutdown).
    pub fn close_watches(&self) {
        self.watches.close();
    }

    pub fn settings(&self) -> &BatchSettings {
        &self.settings
    }

    pub fn metrics(&self) -> &BatchMetrics {
        &self.metrics
    }

    /// Queues `batch` if it keeps every limit: its own (items, total budget), its client's
    /// (batches in flight) and every client's together ([`Bound`]). This is the one place that
    /// decides whether a batch gets in; the API only parses and checks its items. Returns how
    /// many batches its client has in flight with this one (the limit is
    /// [`BatchSettings::max_in_flight`]).
    pub async fn admit(&self, batch: &NewBatch) -> Result<u64, BatchError> {
        self.settings.check_count(batch.items.len() as u64)?;
        let usage = Usage::of(batch);
        if usage.work_ms > self.settings.max_total_budget_ms {
            return Err(BatchError::OverBudget {
                total_ms: usage.work_ms,
                limit_ms: self.settings.max_total_budget_ms,
            });
        }
        match self.store.create(batch).await {
            Ok(in_flight) => {
                self.metrics.batch("accepted");
                Ok(in_flight)
            }
            Err(error) => {
                if let BatchError::Full { bound, .. } = &error {
                    self.metrics.refused(bound.as_str());
                }
                Err(error)
            }
        }
    }

    pub async fn view(&self, id: &str) -> Result<Option<BatchView>, BatchError> {
        self.store.view(id).await
    }

    pub async fn cancel(&self, id: &str) -> Result<Option<BatchView>, BatchError> {
        let view = self.store.cancel(id).await?;
        if view
            .as_ref()
            .is_some_and(|v| v.state == BatchState::Cancelled)
        {
            self.metrics.batch("cancelled");
        }
        Ok(view)
    }

    /// Deletes the batch (cancelling what is not run yet); whether it was there.
    pub async fn delete(&self, id: &str) -> Result<bool, BatchError> {
        let deleted = self.store.delete(id).await?;
        if deleted {
            self.metrics.batch("deleted");
        }
        Ok(deleted)
    }

    /// Items waiting and held, over every replica (also kept in the gauges).
    pub async fn depth(&self) -> Result<QueueDepth, BatchError> {
        let depth = self.store.depth().await?;
        self.metrics.queue_depth.set(depth.queued as i64);
        self.metrics.pending.set(depth.pending as i64);
        Ok(depth)
    }

    /// Starts this replica's consumers: they run items on `pool`'s idle workers through
    /// `runner` until [`Consumers::drain`].
    pub fn start(&self, pool: WorkerPool, runner: Arc<dyn ItemRunner>) -> Consumers {
        let (stop, stopped) = watch::channel(false);
        let (release, released) = watch::channel(false);
        let consumer = Consumer {
            batches: self.clone(),
            pool,
            runner,
            stopped,
            released,
        };
        let task = tokio::spawn(consumer.run());
        let gauges = tokio::spawn(self.clone().keep_gauges(stop.subscribe()));
        Consumers {
            stop,
            release,
            task: tokio::sync::Mutex::new(Some(task)),
            gauges,
        }
    }

    /// Refreshes the queue gauges and drops expired batches every second until stopped.
    async fn keep_gauges(self, mut stopped: watch::Receiver<bool>) {
        loop {
            if let Err(error) = self.depth().await {
                tracing::debug!(%error, "batch queue depth not read");
            }
            if let Err(error) = self.store.sweep().await {
                tracing::debug!(%error, "expired batches not swept");
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stopped.changed() => return,
            }
        }
    }
}

/// A replica's running consumers (see [`Batches::start`]).
pub struct Consumers {
    stop: watch::Sender<bool>,
    release: watch::Sender<bool>,
    task: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    gauges: tokio::task::JoinHandle<()>,
}

impl Consumers {
    /// Stops taking items (the ones held go on).
    pub fn stop_taking(&self) {
        let _ = self.stop.send(true);
        self.gauges.abort();
    }

    /// Stops taking items, lets the ones held finish within `grace`, then hands the rest back
    /// to the store (another replica takes them at once) and returns.
    pub async fn drain(&self, grace: Duration) {
        self.stop_taking();
        let Some(mut task) = self.task.lock().await.take() else {
            return;
        };
        if tokio::time::timeout(grace, &mut task).await.is_err() {
            let _ = self.release.send(true);
            // Giving back is one short call per item.
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

/// The loop that takes items while workers are idle, and runs each in its own task.
struct Consumer {
    batches: Batches,
    pool: WorkerPool,
    runner: Arc<dyn ItemRunner>,
    stopped: watch::Receiver<bool>,
    released: watch::Receiver<bool>,
}

impl Consumer {
    async fn run(mut self) {
        let settings = Arc::clone(&self.batches.settings);
        let slots = Arc::new(Semaphore::new(settings.batch_workers.max(1)));
        let spare = settings.spare_workers(&self.pool);
        let mut held = JoinSet::new();
        let mut backoff = Duration::ZERO;
        loop {
            while held.try_join_next().is_some() {}
            let mut stopped = self.stopped.clone();
            let taken = tokio::select! {
                biased;
                () = until_set(&mut stopped) => break,
                taken = async {
                    let slot = Arc::clone(&slots).acquire_owned().await.ok()?;
                    self.pool.until_idle_beyond(spare).await;
                    Some((slot, self.batches.store.take(&settings.replica).await))
                } => taken,
            };
            let Some((slot, taken)) = taken else { break };
            match taken {
                Ok(Some(delivery)) => {
                    backoff = Duration::ZERO;
                    let item = Item {
                        batches: self.batches.clone(),
                        runner: Arc::clone(&self.runner),
                        released: self.released.clone(),
                        pool: self.pool.clone(),
                        spare,
                    };
                    held.spawn(async move {
                        item.run(delivery).await;
                        drop(slot);
                    });
                }
                Ok(None) => {}
                Err(error) => {
                    backoff =
                        (backoff * 2).clamp(Duration::from_millis(50), Duration::from_secs(1));
                    tracing::warn!(%error, backoff_ms = backoff.as_millis() as u64, "batch items not taken");
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        _ = self.stopped.changed() => {}
                    }
                }
            }
        }
        while held.join_next().await.is_some() {}
    }
}

/// Returns once `flag` is true (or its sender is gone, which never sets it: then never).
async fn until_set(flag: &mut watch::Receiver<bool>) {
    if flag.wait_for(|set| *set).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Times an item shed by the pool (a `/move` took the worker first) is run again before it
/// counts as an attempt.
const SHED_RETRIES: usize = 5;

/// One item being run, with what it needs.
struct Item {
    batches: Batches,
    runner: Arc<dyn ItemRunner>,
    released: watch::Receiver<bool>,
    pool: WorkerPool,
    /// Workers left idle for `/move` (see [`BatchSettings::spare_workers`]).
    spare: usize,
}

impl Item {
    async fn run(mut self, delivery: Delivery) {
        let store = &self.batches.store;
        let settings = &self.batches.settings;
        let metrics = &self.batches.metrics;
        let started = Instant::now();
        if delivery.reclaimed {
            metrics.reclaimed.inc();
        }
        if delivery.attempts > settings.max_attempts {
            tracing::warn!(
                batch = %delivery.batch,
                index = delivery.index,
                attempts = delivery.attempts - 1,
                "batch item failed after its attempts"
            );
            let failed = self.runner.failed(&delivery);
            self.store_result(&delivery, Some(&failed), "failed").await;
            return;
        }
        match store.wanted(&delivery).await {
            Ok(true) => {}
            Ok(false) => {
                self.store_result(&delivery, None, "skipped").await;
                return;
            }
            // Left held: taken over after the idle timeout.
            Err(error) => {
                tracing::warn!(%error, "batch item not checked");
                return;
            }
        }
        let heartbeat = (settings.reclaim_idle / 3).max(Duration::from_millis(30));
        let mut shed = 0;
        let outcome = loop {
            // Boxed, so that dropping it (a release) drops the search, which cancels it.
            let mut running = self.runner.run(&delivery);
            let outcome = loop {
                tokio::select! {
                    outcome = &mut running => break Some(outcome),
                    () = until_set(&mut self.released) => break None,
                    () = tokio::time::sleep(heartbeat) => {
                        let _ = store.heartbeat(&settings.replica, &delivery).await;
                    }
                }
            };
            drop(running);
            match outcome {
                // The spare workers stay `/move`'s: again once one beyond them is idle.
                Some(Outcome::Shed) if shed < SHED_RETRIES => {
                    shed += 1;
                    tokio::select! {
                        () = self.pool.until_idle_beyond(self.spare) => {}
                        () = until_set(&mut self.released) => break None,
                    }
                }
                Some(Outcome::Shed) => break Some(Outcome::Retry),
                other => break other,
            }
        };
        match outcome {
            Some(Outcome::Answered(result)) => {
                self.store_result(&delivery, Some(&result), "answered")
                    .await;
                metrics
                    .item_duration
                    .observe(started.elapsed().as_secs_f64());
            }
            Some(Outcome::Retry | Outcome::Shed) => {
                if let Err(error) = store.give_back(&delivery, true).await {
                    tracing::warn!(%error, "batch item not handed back");
                }
            }
            None => {
                if let Err(error) = store.give_back(&delivery, false).await {
                    tracing::warn!(%error, "batch item not handed back");
                }
            }
        }
    }

    /// Stores the result (or only acknowledges the item), trying again for as long as the
    /// item would stay ours (a Redis restarting); given up, the item is taken over later and
    /// run again, its result stored once.
    async fn store_result(&self, delivery: &Delivery, result: Option<&str>, outcome: &'static str) {
        let give_up = Instant::now() + self.batches.settings.reclaim_idle;
        let mut wait = Duration::from_millis(20);
        loop {
            match self.batches.store.finish(delivery, result).await {
                Ok(done) => {
                    self.batches.metrics.item(outcome);
                    if done && result.is_some() {
                        self.batches.metrics.batch("done");
                    }
                    return;
                }
                Err(error) if Instant::now() < give_up => {
                    tracing::debug!(%error, "batch result not stored yet");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(500));
                }
                Err(error) => {
                    tracing::warn!(%error, "batch result not stored");
                    return;
                }
            }
        }
    }
}
