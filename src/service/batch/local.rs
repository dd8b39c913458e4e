//! The in-process batch store, for a replica without Redis: the same API on one machine, with
//! nothing else to run. Batches live as long as the process (a restart loses them), which is
//! what a single machine without Redis can promise.
//!
//! What every client's batches hold together ([`Usage`]) is counted under the same lock that
//! queues and drops items, so it is exact: an item counts from its batch's admission until it
//! is finished or skipped, a result from its storing until its batch expires.
//!
//! Within a priority, items are taken round-robin between clients ([`FairQueue`]): a client's
//! big batch queued first delays another client's batch by one item a turn, not by all of its
//! own.
//!
//! One std mutex guards everything (held for a few map and queue operations, never across an
//! `.await`); a [`Notify`] wakes a consumer waiting for an item.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::Notify;

use super::fair_queue::FairQueue;
use super::watchers::Progress;
use super::{
    BatchError, BatchSettings, BatchState, BatchStore, BatchView, Delivery, Handle, NewBatch,
    QueueDepth, Usage, stored_bytes,
};

/// How long [`BatchStore::take`] waits for an item before answering `None`.
const TAKE_WAIT: Duration = Duration::from_millis(250);

struct Batch {
    client: String,
    total: usize,
    cancelled: bool,
    started: bool,
    results: BTreeMap<usize, String>,
    /// What its results count in [`State::usage`].
    result_bytes: u64,
    /// Created or last given a result: it expires `ttl` after.
    touched: Instant,
}

impl Batch {
    fn state(&self) -> BatchState {
        BatchState::of(self.cancelled, self.started, self.results.len(), self.total)
    }

    fn view(&self, id: &str) -> BatchView {
        BatchView {
            id: id.to_owned(),
            state: self.state(),
            total: self.total,
            results: self.results.iter().map(|(&i, r)| (i, r.clone())).collect(),
        }
    }
}

#[derive(Default)]
struct State {
    batches: HashMap<String, Batch>,
    /// One queue per priority, in [`Priority::ALL`] order, each served round-robin between
    /// the batches' clients.
    queues: [FairQueue<Delivery>; 3],
    /// Items taken and not finished, by token.
    held: HashMap<u64, Delivery>,
    next_token: u64,
    /// Items queued or held, their bytes and budgets, and the bytes of results kept.
    usage: Usage,
}

impl State {
    /// Takes batch `id`'s queued items off every queue and releases them (deleted or
    /// cancelled: they will not run).
    fn drop_queued(&mut self, id: &str) {
        let mut dropped = Vec::new();
        for queue in &mut self.queues {
            queue.retain(|d| {
                let keep = d.batch != id;
                if !keep {
                    dropped.push(d.clone());
                }
                keep
            });
        }
        for delivery in &dropped {
            self.release(delivery);
        }
    }

    /// An item queued or held no more.
    fn release(&mut self, delivery: &Delivery) {
        self.usage.items = self.usage.items.saturating_sub(1);
        self.usage.bytes = self
            .usage
            .bytes
            .saturating_sub(stored_bytes(&delivery.item));
        self.usage.work_ms = self.usage.work_ms.saturating_sub(delivery.work_ms);
    }
}

/// The in-process store.
pub struct LocalStore {
    state: Mutex<State>,
    queued: Notify,
    settings: BatchSettings,
}

impl LocalStore {
    pub fn new(settings: BatchSettings) -> Self {
        LocalStore {
            state: Mutex::default(),
            queued: Notify::new(),
            settings,
        }
    }

    /// The state, with expired batches dropped.
    fn state(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let ttl = self.settings.ttl;
        let mut expired_bytes = 0;
        state.batches.retain(|_, b| {
            let keep = b.touched.elapsed() < ttl;
            if !keep {
                expired_bytes += b.result_bytes;
            }
            keep
        });
        state.usage.bytes = state.usage.bytes.saturating_sub(expired_bytes);
        state
    }

    fn create_now(&self, batch: &NewBatch) -> Result<u64, BatchError> {
        let mut state = self.state();
        let in_flight = state
            .batches
            .values()
            .filter(|b| b.client == batch.client)
            .filter(|b| matches!(b.state(), BatchState::Queued | BatchState::Running))
            .count() as u64;
        if in_flight >= self.settings.max_in_flight {
            return Err(BatchError::TooManyInFlight {
                limit: self.settings.max_in_flight,
            });
        }
        let adds = Usage::of(batch);
        if let Some(bound) = state.usage.exceeded_by(&adds, &self.settings) {
            return Err(BatchError::Full {
                bound,
                limit: self.settings.limit(bound),
            });
        }
        state.usage.items += adds.items;
        state.usage.bytes += adds.bytes;
        state.usage.work_ms += adds.work_ms;
        state.batches.insert(
            batch.id.clone(),
            Batch {
                client: batch.client.clone(),
                total: batch.items.len(),
                cancelled: false,
                started: false,
                results: BTreeMap::new(),
                result_bytes: 0,
                touched: Instant::now(),
            },
        );
        let queue = &mut state.queues[batch.priority.rank()];
        for (index, item) in batch.items.iter().enumerate() {
            queue.push_back(
                &batch.client,
                Delivery {
                    batch: batch.id.clone(),
                    index,
                    total: batch.items.len(),
                    item: item.json.clone(),
                    budget_ms: batch.budget_ms,
                    work_ms: item.work_ms,
                    counted: true,
                    attempts: 0,
                    reclaimed: false,
                    priority: batch.priority,
                    handle: Handle::Local(0),
                },
            );
        }
        drop(state);
        self.queued.notify_waiters();
        Ok(in_flight + 1)
    }

    /// The next item, taken now, if any.
    fn pop(&self) -> Option<Delivery> {
        let mut state = self.state();
        let mut delivery = state.queues.iter_mut().find_map(FairQueue::pop)?;
        let token = state.next_token;
        state.next_token += 1;
        delivery.attempts += 1;
        delivery.handle = Handle::Local(token);
        state.held.insert(token, delivery.clone());
        Some(delivery)
    }

    fn token(delivery: &Delivery) -> u64 {
        match delivery.handle {
            Handle::Local(token) => token,
            Handle::Stream { .. } => u64::MAX,
        }
    }
}

impl BatchStore for LocalStore {
    fn create<'a>(&'a self, batch: &'a NewBatch) -> BoxFuture<'a, Result<u64, BatchError>> {
        std::future::ready(self.create_now(batch)).boxed()
    }

    fn view<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>> {
        let view = self.state().batches.get(id).map(|b| b.view(id));
        std::future::ready(Ok(view)).boxed()
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, BatchError>> {
        let mut state = self.state();
        let Some(batch) = state.batches.remove(id) else {
            return std::future::ready(Ok(false)).boxed();
        };
        state.usage.bytes = state.usage.bytes.saturating_sub(batch.result_bytes);
        state.drop_queued(id);
        std::future::ready(Ok(true)).boxed()
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>> {
        let mut state = self.state();
        let view = state.batches.get_mut(id).map(|batch| {
            if batch.state() != BatchState::Done {
                batch.cancelled = true;
            }
            batch.view(id)
        });
        // Its items still queued go now; one being run finishes and is then dropped.
        if view.is_some() {
            state.drop_queued(id);
        }
        std::future::ready(Ok(view)).boxed()
    }

    fn take<'a>(
        &'a self,
        _consumer: &'a str,
    ) -> BoxFuture<'a, Result<Option<Delivery>, BatchError>> {
        async move {
            let deadline = tokio::time::Instant::now() + TAKE_WAIT;
            loop {
                let queued = self.queued.notified();
                tokio::pin!(queued);
                queued.as_mut().enable();
                if let Some(delivery) = self.pop() {
                    return Ok(Some(delivery));
                }
                if tokio::time::timeout_at(deadline, queued).await.is_err() {
                    return Ok(None);
                }
            }
        }
        .boxed()
    }

    fn wanted<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Result<bool, BatchError>> {
        let mut state = self.state();
        let wanted = match state.batches.get_mut(&delivery.batch) {
            Some(batch) if !batch.cancelled && !batch.results.contains_key(&delivery.index) => {
                batch.started = true;
                true
            }
            _ => false,
        };
        std::future::ready(Ok(wanted)).boxed()
    }

    fn finish<'a>(
        &'a self,
        delivery: &'a Delivery,
        result: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, BatchError>> {
        let mut state = self.state();
        if let Some(held) = state.held.remove(&Self::token(delivery)) {
            state.release(&held);
        }
        let mut stored = 0;
        // A cancelled batch is final: a result that comes in after is not kept.
        let done = match (state.batches.get_mut(&delivery.batch), result) {
            (Some(batch), Some(result))
                if !batch.cancelled && !batch.results.contains_key(&delivery.index) =>
            {
                batch.results.insert(delivery.index, result.to_owned());
                stored = stored_bytes(result);
                batch.result_bytes += stored;
                batch.touched = Instant::now();
                batch.results.len() == batch.total
            }
            _ => false,
        };
        state.usage.bytes += stored;
        std::future::ready(Ok(done)).boxed()
    }

    fn give_back<'a>(
        &'a self,
        delivery: &'a Delivery,
        failed: bool,
    ) -> BoxFuture<'a, Result<(), BatchError>> {
        let mut state = self.state();
        if let Some(mut item) = state.held.remove(&Self::token(delivery)) {
            let priority = item.priority.rank();
            // Its batch's client (a batch deleted meanwhile: the item is skipped when taken).
            let client = state
                .batches
                .get(&item.batch)
                .map(|batch| batch.client.clone())
                .unwrap_or_default();
            if failed {
                state.queues[priority].push_back(&client, item);
            } else {
                // Released unrun (a drain): this hand-out does not count.
                item.attempts -= 1;
                state.queues[priority].push_front(&client, item);
            }
        }
        drop(state);
        self.queued.notify_waiters();
        std::future::ready(Ok(())).boxed()
    }

    fn heartbeat<'a>(
        &'a self,
        _consumer: &'a str,
        _delivery: &'a Delivery,
    ) -> BoxFuture<'a, Result<(), BatchError>> {
        std::future::ready(Ok(())).boxed()
    }

    fn sweep(&self) -> BoxFuture<'_, Result<(), BatchError>> {
        // Expired batches go whenever the state is read.
        drop(self.state());
        std::future::ready(Ok(())).boxed()
    }

    fn depth(&self) -> BoxFuture<'_, Result<QueueDepth, BatchError>> {
        let state = self.state();
        let depth = QueueDepth {
            queued: state.queues.iter().map(|q| q.len() as u64).sum(),
            pending: state.held.len() as u64,
        };
        std::future::ready(Ok(depth)).boxed()
    }

    fn progress<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Progress>, BatchError>> {
        let progress = self.state().batches.get(id).map(|batch| Progress {
            total: batch.total,
            stored: batch.results.len(),
            cancelled: batch.cancelled,
            started: batch.started,
        });
        std::future::ready(Ok(progress)).boxed()
    }

    fn results<'a>(
        &'a self,
        id: &'a str,
        _total: usize,
        indices: &'a [usize],
    ) -> BoxFuture<'a, Result<Vec<(usize, String)>, BatchError>> {
        let state = self.state();
        let results = state.batches.get(id).map_or_else(Vec::new, |batch| {
            indices
                .iter()
                .filter_map(|i| batch.results.get(i).map(|r| (*i, r.clone())))
                .collect()
        });
        std::future::ready(Ok(results)).boxed()
    }
}
