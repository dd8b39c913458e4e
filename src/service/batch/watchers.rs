//! Watching batches: every `GET /analyses/{id}` event stream of one batch on this replica
//! shares one poller, which reads only what is new.
//!
//! Key idea: the poller of a batch reads the store's cheap [`Progress`] (with Redis one
//! round trip of `HMGET` on the batch's hash and `HLEN` on its results, no result read) every
//! [`POLL`], and only when the number of stored results moved does it fetch results, and only
//! the indices it has not seen. What it has seen is published through a
//! [`tokio::sync::watch`] channel ([`Seen`]) that every watcher of the batch reads: a watcher
//! costs the store nothing, so N watchers of a batch cost what one does. The poller stops
//! once its batch is final (done, cancelled, gone) or its last watcher left; the check and
//! the removal from the map happen under the map's lock, under which watchers also
//! subscribe, so a watcher never subscribes to a poller that is leaving.
//!
//! Watchers are bounded per replica (`KIBITZ_BATCH_MAX_WATCHERS`, a semaphore): one more is
//! refused ([`BatchError::TooManyWatchers`]). On shutdown [`Watches::close`] ends every
//! watch with [`End::Closing`], so each stream ends with a last event and its connection can
//! close, instead of holding the drain open until the shutdown timeout cuts it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use super::{BatchError, BatchState, BatchStore, BatchView};

/// How often a batch's poller reads its progress.
pub const POLL: Duration = Duration::from_millis(100);

/// How long a new watcher waits for its batch's first read.
const FIRST_READ: Duration = Duration::from_secs(2);

/// A batch's progress as one cheap read gives it (no result is read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub total: usize,
    /// Results stored, as the store counts them (with Redis, `HLEN`: fields refused when
    /// read back count too; this only says whether to look).
    pub stored: usize,
    pub cancelled: bool,
    pub started: bool,
}

/// Why a watch ended without its batch being final.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The batch is unknown, deleted or expired.
    Gone,
    /// This replica is shutting down.
    Closing,
}

/// What the poller has seen of a batch, shared by its watchers.
#[derive(Debug, Default)]
pub struct Seen {
    /// False until the first read.
    pub loaded: bool,
    pub state: Option<BatchState>,
    pub total: usize,
    /// Results in the order the poller saw them (each index once), so that a watcher sends
    /// the ones past what it sent.
    pub results: Vec<(usize, Arc<str>)>,
    pub end: Option<End>,
}

impl Seen {
    /// The batch as a view (results in index order).
    pub fn view(&self, id: &str) -> BatchView {
        let mut results: Vec<(usize, String)> = self
            .results
            .iter()
            .map(|(index, json)| (*index, json.to_string()))
            .collect();
        results.sort_unstable_by_key(|(index, _)| *index);
        BatchView {
            id: id.to_owned(),
            state: self.state.unwrap_or(BatchState::Queued),
            total: self.total,
            results,
        }
    }

    /// Whether nothing more will change.
    pub fn is_final(&self) -> bool {
        self.end.is_some() || matches!(self.state, Some(BatchState::Done | BatchState::Cancelled))
    }
}

/// One poller's channel, with a number telling it apart from a later poller of the same id.
struct Poller {
    sender: watch::Sender<Seen>,
    generation: u64,
}

/// The watched batches of this replica. Cheap to share (behind an `Arc`).
pub struct Watches {
    store: Arc<dyn BatchStore>,
    /// Batch id → its poller. A std mutex, held only to look up, subscribe and remove.
    pollers: Mutex<HashMap<String, Poller>>,
    /// Numbers pollers apart (see [`Poller::generation`]); under `pollers`' lock.
    next_generation: Mutex<u64>,
    /// One permit per watcher: the bound.
    slots: Arc<Semaphore>,
    max_watchers: usize,
    /// Set once, on shutdown; every poller ends its watch with [`End::Closing`].
    closing: watch::Sender<bool>,
}

/// One watcher: the shared channel and its place in the bound.
pub struct Watcher {
    pub seen: watch::Receiver<Seen>,
    _slot: OwnedSemaphorePermit,
}

impl Watches {
    pub fn new(store: Arc<dyn BatchStore>, max_watchers: usize) -> Self {
        Watches {
            store,
            pollers: Mutex::default(),
            next_generation: Mutex::new(0),
            slots: Arc::new(Semaphore::new(max_watchers.min(Semaphore::MAX_PERMITS))),
            max_watchers,
            closing: watch::channel(false).0,
        }
    }

    /// Watches batch `id`: the channel its poller publishes to, loaded (its first read done),
    /// unless the replica has `KIBITZ_BATCH_MAX_WATCHERS` watchers already.
    pub async fn watch(self: &Arc<Self>, id: &str) -> Result<Watcher, BatchError> {
        let slot = Arc::clone(&self.slots).try_acquire_owned().map_err(|_| {
            BatchError::TooManyWatchers {
                limit: self.max_watchers as u64,
            }
        })?;
        let mut seen = {
            let mut pollers = self.pollers.lock().unwrap_or_else(PoisonError::into_inner);
            match pollers.get(id) {
                Some(poller) => poller.sender.subscribe(),
                None => {
                    let (sender, receiver) = watch::channel(Seen::default());
                    let generation = {
                        let mut next = self
                            .next_generation
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner);
                        *next += 1;
                        *next
                    };
                    pollers.insert(
                        id.to_owned(),
                        Poller {
                            sender: sender.clone(),
                            generation,
                        },
                    );
                    tokio::spawn(Arc::clone(self).poll(id.to_owned(), sender, generation));
                    receiver
                }
            }
        };
        // The poller publishes at least once (a read, an end) before it leaves; a store that
        // does not answer in time is the store's failure, not a hang.
        let loaded = tokio::time::timeout(FIRST_READ, async {
            seen.wait_for(|seen| seen.loaded || seen.end.is_some())
                .await
                .is_ok()
        })
        .await;
        if loaded != Ok(true) {
            return Err(BatchError::Store("the batch was not read in time".into()));
        }
        Ok(Watcher { seen, _slot: slot })
    }

    /// Ends every watch (shutdown): each stream sends its last event and closes.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Watchers now, for the tests and the gauge.
    pub fn watchers(&self) -> usize {
        self.max_watchers
            .saturating_sub(self.slots.available_permits())
    }

    /// Removes poller `generation` of `id` if nobody watches it or `leaving`; whether it is
    /// to stop. Under the lock watchers subscribe under (see the module doc).
    fn leave(&self, id: &str, generation: u64, leaving: bool) -> bool {
        let mut pollers = self.pollers.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(poller) = pollers.get(id) else {
            return true;
        };
        if poller.generation != generation {
            return true;
        }
        if leaving || poller.sender.receiver_count() == 0 {
            pollers.remove(id);
            return true;
        }
        false
    }

    /// The poller of batch `id` (see the module doc).
    async fn poll(self: Arc<Self>, id: String, sender: watch::Sender<Seen>, generation: u64) {
        let mut closing = self.closing.subscribe();
        let mut last: Option<Progress> = None;
        let mut known: HashSet<usize> = HashSet::new();
        loop {
            if *closing.borrow_and_update() {
                sender.send_modify(|seen| seen.end = Some(End::Closing));
                self.leave(&id, generation, true);
                return;
            }
            match self.read(&id, last, &mut known).await {
                Ok(None) => {
                    sender.send_modify(|seen| seen.end = Some(End::Gone));
                    self.leave(&id, generation, true);
                    return;
                }
                Ok(Some((progress, new))) => {
                    if last != Some(progress) || !new.is_empty() {
                        let state = BatchState::of(
                            progress.cancelled,
                            progress.started,
                            known.len(),
                            progress.total,
                        );
                        sender.send_modify(|seen| {
                            seen.loaded = true;
                            seen.total = progress.total;
                            seen.state = Some(state);
                            seen.results.extend(new);
                        });
                        last = Some(progress);
                        if matches!(state, BatchState::Done | BatchState::Cancelled) {
                            self.leave(&id, generation, true);
                            return;
                        }
                    }
                }
                // The store did not answer this time: look again (watchers keep what they had).
                Err(error) => tracing::debug!(%error, batch = %id, "batch progress not read"),
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = sender.closed() => {}
                _ = closing.changed() => {}
            }
            if sender.receiver_count() == 0 && self.leave(&id, generation, false) {
                return;
            }
        }
    }

    /// The progress, and the results not in `known` (added to it) when the count of stored
    /// results moved since `last`; `None` when the batch is gone.
    async fn read(
        &self,
        id: &str,
        last: Option<Progress>,
        known: &mut HashSet<usize>,
    ) -> Result<Option<(Progress, Vec<(usize, Arc<str>)>)>, BatchError> {
        let Some(progress) = self.store.progress(id).await? else {
            return Ok(None);
        };
        let mut new = Vec::new();
        if last.is_none_or(|last| last.stored != progress.stored) {
            let missing: Vec<usize> = (0..progress.total)
                .filter(|index| !known.contains(index))
                .collect();
            if !missing.is_empty() {
                for (index, json) in self.store.results(id, progress.total, &missing).await? {
                    if known.insert(index) {
                        new.push((index, Arc::from(json)));
                    }
                }
            }
        }
        Ok(Some((progress, new)))
    }
}
