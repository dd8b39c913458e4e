//! The search worker pool: a fixed set of OS threads that run searches, and the admission
//! control that decides, when a request arrives, whether it can get a worker in time.
//!
//! Searches are CPU-bound for their whole budget, so they never run on tokio's threads: a
//! request hands a job to the pool through a FIFO channel and awaits a oneshot answer.
//!
//! The key idea of admission: every admitted job ends by its own deadline (the engine stops at
//! it), so the deadlines of the jobs admitted and not yet finished bound when a worker frees up.
//! With `k` such jobs and `w` workers, a new job is `k + 1`-th in line and starts once `k - w + 1`
//! of them have finished, that is, at the latest at the `(k - w + 1)`-th smallest of their
//! deadlines. When that bound is before the job's latest useful start, it is *guaranteed* a
//! worker in time and queues. Otherwise it is shed at once with 503 (behind a load balancer the
//! client retries on another replica with nearly all of its budget left); a configured
//! patience lets it wait a share of its budget instead, in case a running search ends early
//! (most are proven early), and be shed only if none has. Beyond `workers + queue` jobs the pool
//! sheds at once. Every shed says which limit was hit and when a worker is expected free (the
//! same bound), for `Retry-After`. A job that has not started when its request gives up is
//! withdrawn atomically, so it never runs after its 503 was sent.
//!
//! Background work (a batch item) is admitted with a [`Yielding`]: it *yields* its worker to
//! interactive work. When an interactive job would not be guaranteed a worker in time, the pool
//! pre-empts admitted background jobs, latest deadline first, until it is: each one's search is
//! stopped through its cancel flag (the engine looks at it as often as at its clock, so it ends
//! within [`OVERSHOOT`] as a deadline would), its deadline in the admitted set becomes "now",
//! and its result is thrown away for [`PoolError::Preempted`], so that its owner runs it again
//! later. On a one-worker replica a `/move` therefore waits at most the time a search takes to
//! stop, whatever batch work is running; background work itself is never pre-empted by other
//! background work.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::latency::{JobTimes, OVERSHOOT};
use super::metrics::Metrics;
use crate::engine::CancelFlag;

/// Job states; moved from `QUEUED` exactly once, by whichever side gets there first.
const QUEUED: u8 = 0;
const STARTED: u8 = 1;
const WITHDRAWN: u8 = 2;

/// Why the pool did not run a job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// No worker could be had in time: which limit was hit, and when a worker is expected free.
    #[error("{reason}")]
    Overloaded {
        reason: ShedReason,
        retry_after: Duration,
    },
    /// The job panicked; the worker survived.
    #[error("the search panicked")]
    Panicked,
    /// Background work whose worker was taken back for interactive work (see [`Yielding`]):
    /// its result, if any, is not its answer; run it again later.
    #[error("the search was stopped to free its worker for an interactive request")]
    Preempted,
    /// A search its client ran beyond its fair share of the workers was stopped (or never
    /// started) because another client's request needed the worker.
    #[error(
        "this client already had {share} searches running or queued, its share of the {workers} \
         search workers (KIBITZ_CLIENT_SHARE_PERCENT), and this one, run beyond it, gave its \
         worker to another client's request"
    )]
    OverShare {
        share: usize,
        workers: usize,
        retry_after: Duration,
    },
}

/// How background work yields its worker: the pool sets [`Yielding::preempted`] and cancels
/// the search that holds the worker now. One per piece of background work (a batch item), for
/// every search it runs (a review runs several on one held worker).
#[derive(Debug, Default)]
pub struct Yielding {
    /// Set once, by the pool, under its admission lock; read by the owner after each search.
    /// Relaxed is enough with the mutex below: the flag is also read under it.
    preempted: std::sync::atomic::AtomicBool,
    /// An interactive search (admitted beyond its client's share when it yields): pre-empted,
    /// it answers [`PoolError::OverShare`]; background work answers [`PoolError::Preempted`]
    /// and is run again later.
    interactive: bool,
    /// The cancel flag of the search running for this work now, if any. A std mutex: held for
    /// one clone or one store, never across an `.await`.
    current: Mutex<Option<CancelFlag>>,
    /// Told when the work is pre-empted, so that a job still queued leaves the queue at once
    /// (its place is counted free from then) rather than when a worker reaches it.
    stopped: tokio::sync::Notify,
}

impl Yielding {
    /// For background work: pre-empted, its answer is thrown away.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// For an interactive search: used only if the pool admits it beyond its client's fair
    /// share; pre-empted then, it answers [`PoolError::OverShare`].
    pub fn interactive() -> Arc<Self> {
        Arc::new(Yielding {
            interactive: true,
            ..Yielding::default()
        })
    }

    /// What pre-empted work answers: background work [`PoolError::Preempted`] (run it again),
    /// an interactive search beyond its client's share (`share` of `workers`)
    /// [`PoolError::OverShare`].
    fn error(&self, (share, workers): (usize, usize)) -> PoolError {
        if self.interactive {
            PoolError::OverShare {
                share,
                workers,
                retry_after: Duration::from_secs(1),
            }
        } else {
            PoolError::Preempted
        }
    }

    /// Whether the pool took the worker back: the work's results are not answers.
    pub fn preempted(&self) -> bool {
        self.preempted.load(Ordering::Relaxed)
    }

    /// Makes `flag` the search the pool stops if it pre-empts this work (at once, if it
    /// already has).
    pub fn watch(&self, flag: &CancelFlag) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        *current = Some(flag.clone());
        if self.preempted() {
            flag.cancel();
        }
    }

    fn preempt(&self) {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        self.preempted.store(true, Ordering::Relaxed);
        if let Some(flag) = current.as_ref() {
            flag.cancel();
        }
        self.stopped.notify_one();
    }
}

/// Who a job is for, as admission sees it.
#[derive(Clone, Debug, Default)]
pub struct Claim {
    /// The client's identity (its fair share is counted by it); `None`: no client's.
    pub client: Option<Arc<str>>,
    /// The client's class, the only label the per-client metrics carry.
    pub class: Option<Arc<str>>,
    /// How the job's search yields when the pool needs its worker back.
    pub yielding: Option<Arc<Yielding>>,
    /// Background work (a batch item): always yields, never makes another job yield.
    /// Otherwise the job yields only if admitted beyond its client's share.
    pub background: bool,
    /// Where admission writes the client's standing against its share, for the `RateLimit`
    /// headers of the answer (interactive work only).
    pub standing: Option<Arc<OnceLock<Standing>>>,
}

/// A client's fair share of the workers as admission saw it when it admitted one of its jobs:
/// `quota` jobs at once are sure to keep their worker, `remaining` of them were still free
/// after this one (0: this job, or a later one, runs beyond the share and yields its worker to
/// another client's request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    pub quota: usize,
    pub remaining: usize,
}

impl Claim {
    /// Background work that yields through `yielding`.
    pub fn background(yielding: Arc<Yielding>) -> Self {
        Claim {
            client: None,
            class: None,
            yielding: Some(yielding),
            background: true,
            standing: None,
        }
    }
}

/// One admitted job: its ticket id, its deadline, its client, and how it yields if it may be
/// pre-empted (background work, or a job beyond its client's share).
struct Entry {
    id: u64,
    deadline: Instant,
    client: Option<Arc<str>>,
    class: Option<Arc<str>>,
    yielding: Option<Arc<Yielding>>,
}

/// Which limit made the pool shed a job, in words a client can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShedReason {
    #[error(
        "all {workers} search workers are busy and {queue} more searches are queued, the \
         queue's limit (KIBITZ_QUEUE)"
    )]
    QueueFull { workers: usize, queue: usize },
    #[error(
        "no search worker can start this search within three quarters of its {budget_ms} ms \
         budget: all {workers} are busy and the first is expected free in {free_in_ms} ms"
    )]
    NoWorkerInTime {
        budget_ms: u64,
        workers: usize,
        free_in_ms: u64,
    },
    #[error(
        "no search worker became free within the {waited_ms} ms this request may wait for one \
         (KIBITZ_ADMISSION_PATIENCE_PERCENT)"
    )]
    NoEarlyFinish { waited_ms: u64 },
}

/// Whole seconds until `at`, at least one (`Retry-After` counts in seconds).
fn seconds_until(at: Instant) -> Duration {
    let wait = at.saturating_duration_since(Instant::now());
    Duration::from_secs(wait.as_millis().div_ceil(1000).max(1) as u64)
}

/// The work to do on a worker; it returns the delivery of its result, which the worker calls
/// only after the job has left the admitted set (so a caller that got its answer and asks
/// again at once finds the worker counted free).
type Work = Box<dyn FnOnce() -> Deliver + Send>;
type Deliver = Box<dyn FnOnce() + Send>;

struct Job {
    run: Work,
    /// `QUEUED`, then `STARTED` by the worker or `WITHDRAWN` by the request that gave up.
    state: Arc<AtomicU8>,
    /// Removes the job from the admitted set when dropped (after it ran, was skipped, or
    /// panicked).
    _ticket: Ticket,
}

/// State shared by the request side and the workers.
struct Shared {
    /// Deadlines of the jobs admitted and not yet finished, by ticket id. A std mutex: held for
    /// a few comparisons on at most `workers + queue` entries, never across an `.await`.
    admitted: Mutex<VecDeque<Entry>>,
    /// Source of ticket ids; only uniqueness matters, so relaxed ordering is enough.
    next_ticket: AtomicU64,
    workers: usize,
    queue: usize,
    /// Percent of its budget a job not guaranteed a worker may wait before it is shed.
    patience_percent: u32,
    /// Jobs one client may hold beyond which its jobs yield (see [`WorkerPool::new`]).
    share: usize,
    metrics: Arc<Metrics>,
    /// Woken whenever a job leaves the admitted set, for [`WorkerPool::until_idle_beyond`].
    freed: tokio::sync::Notify,
}

impl Shared {
    fn admitted(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        // A panic never happens while the lock is held (plain Vec operations); recover anyway.
        self.admitted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes ticket `id` out of the admitted set, if it is still there, and says so to
    /// [`WorkerPool::until_idle_beyond`]; a second release of the same ticket does nothing.
    fn release(&self, id: u64) {
        let mut admitted = self.admitted();
        if let Some(i) = admitted.iter().position(|entry| entry.id == id) {
            admitted.remove(i);
        }
        drop(admitted);
        self.freed.notify_waiters();
    }
}

/// Leaves the admitted set when dropped.
struct Ticket {
    id: u64,
    shared: Arc<Shared>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.shared.release(self.id);
    }
}

/// The worker threads and their admission control. Cheap to clone.
#[derive(Clone)]
pub struct WorkerPool {
    /// Admitted set and counters, shared with the workers (see [`Shared`]).
    shared: Arc<Shared>,
    /// Sends jobs to the workers. `mpsc::Sender` is `Sync`; sends happen under the admission
    /// lock so the channel order is the admission order the bound above assumes.
    sender: mpsc::Sender<Job>,
}

impl WorkerPool {
    /// Starts `workers` threads (at least one). They exit when the last pool handle is dropped.
    /// A job that is not guaranteed a worker in time waits `patience_percent` of its budget
    /// for an early finish (0: it is shed at once).
    pub fn new(
        workers: usize,
        queue: usize,
        patience_percent: u8,
        metrics: Arc<Metrics>,
    ) -> std::io::Result<Self> {
        Self::with_share(workers, queue, patience_percent, 100, metrics)
    }

    /// [`WorkerPool::new`], where one client's jobs beyond `share_percent` of the workers
    /// (rounded up, at least one) are admitted only onto a worker idle now and yield it, with
    /// what they found, when another client's job needs it; with no idle worker they are
    /// refused ([`PoolError::OverShare`]). A lone client still has every worker; a second one
    /// always finds one within its share.
    pub fn with_share(
        workers: usize,
        queue: usize,
        patience_percent: u8,
        share_percent: u8,
        metrics: Arc<Metrics>,
    ) -> std::io::Result<Self> {
        let workers = workers.max(1);
        let share = (workers * usize::from(share_percent.clamp(1, 100)))
            .div_ceil(100)
            .max(1);
        let (sender, receiver) = mpsc::channel::<Job>();
        // Workers take turns at the receiver; the lock is held only while waiting for a job.
        let receiver = Arc::new(Mutex::new(receiver));
        let shared = Arc::new(Shared {
            admitted: Mutex::new(VecDeque::with_capacity(workers + queue)),
            next_ticket: AtomicU64::new(0),
            workers,
            queue,
            patience_percent: u32::from(patience_percent),
            share,
            metrics,
            freed: tokio::sync::Notify::new(),
        });
        for i in 0..workers {
            let receiver = Arc::clone(&receiver);
            let metrics = Arc::clone(&shared.metrics);
            thread::Builder::new()
                .name(format!("kibitz-search-{i}"))
                .spawn(move || worker_loop(&receiver, &metrics))?;
        }
        Ok(WorkerPool { shared, sender })
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.shared.workers
    }

    /// Workers with no admitted job now (running or queued for them).
    pub fn idle_workers(&self) -> usize {
        self.shared
            .workers
            .saturating_sub(self.shared.admitted().len())
    }

    /// `client`'s standing against its fair share now, nothing consumed: what an answer that
    /// used no worker (one from a cache) tells its client in its `RateLimit` headers. Counted
    /// as admission counts it, so the next search admitted for `client` sees one fewer.
    pub fn standing(&self, client: &str) -> Standing {
        let held = held_by(&self.shared.admitted(), client);
        Standing {
            quota: self.shared.share,
            remaining: self.shared.share.saturating_sub(held),
        }
    }

    /// Returns once more than `spare` workers are idle: background work (batch items) takes a
    /// worker only then, so that interactive requests always find the `spare` ones free and
    /// never queue behind it.
    pub async fn until_idle_beyond(&self, spare: usize) {
        loop {
            // Registered before the test, so a job leaving between the two is not missed.
            let freed = self.shared.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.idle_workers() > spare {
                return;
            }
            freed.await;
        }
    }

    /// Runs `work` on a worker if one can be had in time, and returns its result.
    ///
    /// Dropping the returned future before the job starts withdraws it; after it started, the
    /// caller stops it through its own cancel flag (see `CancelOnDrop` in the service).
    pub async fn run<R, F>(&self, times: JobTimes, work: F) -> Result<R, PoolError>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        self.submit(times, work)?.wait().await
    }

    /// Admits `work` or sheds it, at once (see the module doc); an admitted job is queued and
    /// its [`Pending`] waits for its result. Dropping the `Pending` before the job starts
    /// withdraws it.
    pub fn submit<R, F>(&self, times: JobTimes, work: F) -> Result<Pending<R>, PoolError>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        self.submit_as(times, Claim::default(), work)
    }

    /// [`WorkerPool::submit`] for `claim`'s client: background work gives its worker back
    /// when interactive work needs it (see the module doc), and its `Pending` answers
    /// [`PoolError::Preempted`] then; an interactive job beyond its client's share yields too,
    /// answering with what it found.
    pub fn submit_as<R, F>(
        &self,
        times: JobTimes,
        claim: Claim,
        work: F,
    ) -> Result<Pending<R>, PoolError>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        let (answer_tx, answer_rx) = oneshot::channel();
        let state = Arc::new(AtomicU8::new(QUEUED));
        let metrics = Arc::clone(&self.shared.metrics);
        let yielding = claim.yielding.clone();
        let before_start = claim.yielding.clone();
        let admitted = self.admit(
            times,
            claim,
            &state,
            Box::new(move || {
                // Pre-empted while queued: its worker is wanted elsewhere, so it does not start.
                let result = if before_start.as_ref().is_some_and(|y| y.preempted()) {
                    Err(PoolError::Preempted)
                } else {
                    // Caught here, not only by the worker, so the answer channel is dropped (and
                    // the caller told) only after the job has left the admitted set.
                    catch_unwind(AssertUnwindSafe(work)).map_err(|_| {
                        metrics.search_panics.inc();
                        tracing::error!("a search panicked; the worker goes on");
                        PoolError::Panicked
                    })
                };
                Box::new(move || {
                    // The receiver is gone only if the request gave up; nothing to do then.
                    let _ = answer_tx.send(result);
                })
            }),
        )?;
        Ok(Pending {
            times,
            admitted,
            answer_rx,
            withdraw: Withdraw(state),
            metrics: Arc::clone(&self.shared.metrics),
            yielding,
            share: (self.shared.share, self.shared.workers),
        })
    }

    /// A worker held for a series of jobs that together end by `times.deadline` (a game review),
    /// admitted once, when the first job is run: the series is never shed part-way because
    /// other requests took the workers between its jobs.
    pub fn reserve(&self, times: JobTimes) -> Reservation {
        self.reserve_as(times, Claim::default())
    }

    /// [`WorkerPool::reserve`], for background work when `yielding` is given (see
    /// [`WorkerPool::submit_as`]): once pre-empted, every later task of the series answers
    /// [`PoolError::Preempted`] without running.
    pub fn reserve_as(&self, times: JobTimes, claim: Claim) -> Reservation {
        Reservation {
            pool: self.clone(),
            times,
            held: None,
            yielding: claim.yielding.clone(),
            claim,
        }
    }

    /// Decides at once whether the job may wait for a worker; if so, queues it and returns when
    /// its request should give up waiting.
    fn admit(
        &self,
        times: JobTimes,
        claim: Claim,
        state: &Arc<AtomicU8>,
        run: Work,
    ) -> Result<Admitted, PoolError> {
        let shared = &self.shared;
        let mut admitted = shared.admitted();
        let now = Instant::now();
        let held = claim
            .client
            .as_ref()
            .map_or(0, |client| held_by(&admitted, client));
        let yielding = if claim.background {
            claim.yielding
        } else if held < shared.share || claim.yielding.is_none() {
            // Within its share: it may take a worker back from work that yields (background
            // work, and other clients' work beyond their share).
            preempt_for(&mut admitted, shared, times, now, claim.client.as_ref());
            None
        } else {
            // Beyond its share: admitted as any job (a lone client loses nothing), but it
            // yields its worker when another client's job within its share needs it.
            claim.yielding
        };
        if let Some(standing) = &claim.standing {
            let _ = standing.set(Standing {
                quota: shared.share,
                remaining: shared.share.saturating_sub(held + 1),
            });
        }
        let k = admitted.len();
        if staying(&admitted) >= shared.workers + shared.queue {
            // Room comes when the first admitted job ends.
            let first_end = admitted.iter().map(|e| e.deadline).min().unwrap_or(now);
            drop(admitted);
            shared.metrics.rejection("queue_full");
            return Err(PoolError::Overloaded {
                reason: ShedReason::QueueFull {
                    workers: shared.workers,
                    queue: shared.queue,
                },
                retry_after: seconds_until(first_end + OVERSHOOT),
            });
        }
        let (give_up, free_at) = if k < shared.workers {
            (times.latest_start, now)
        } else {
            let free_at = first_free(&admitted, shared.workers);
            if free_at <= times.latest_start {
                (times.latest_start, free_at)
            } else {
                // Not guaranteed: wait for an early finish only as long as allowed.
                let budget = times.deadline.saturating_duration_since(times.arrival);
                let patience = budget * shared.patience_percent / 100;
                ((times.arrival + patience).min(times.latest_start), free_at)
            }
        };
        if give_up <= now {
            drop(admitted);
            shared.metrics.rejection("no_time");
            let budget = times.deadline.saturating_duration_since(times.arrival);
            return Err(PoolError::Overloaded {
                reason: ShedReason::NoWorkerInTime {
                    budget_ms: budget.as_millis() as u64,
                    workers: shared.workers,
                    free_in_ms: free_at.saturating_duration_since(now).as_millis() as u64,
                },
                retry_after: seconds_until(free_at),
            });
        }
        if let (Some(class), false) = (&claim.class, claim.background) {
            let share = if yielding.is_some() {
                "beyond"
            } else {
                "within"
            };
            shared.metrics.client_search(class, share);
        }
        let id = shared.next_ticket.fetch_add(1, Ordering::Relaxed);
        admitted.push_back(Entry {
            id,
            deadline: times.deadline,
            client: claim.client,
            class: claim.class,
            yielding,
        });
        let job = Job {
            run,
            state: Arc::clone(state),
            _ticket: Ticket {
                id,
                shared: Arc::clone(shared),
            },
        };
        // Up before the send, so the worker that takes the job never brings it below zero.
        shared.metrics.searches_queued.inc();
        // The workers hold the receiver for as long as any pool handle exists, so this cannot
        // fail; if it did, the returned job (and its ticket, which takes this lock) must be
        // dropped after the lock is released.
        let sent = self.sender.send(job);
        drop(admitted);
        match sent {
            Ok(()) => Ok(Admitted {
                give_up,
                free_at,
                ticket: id,
            }),
            Err(_) => {
                shared.metrics.searches_queued.dec();
                Err(PoolError::Panicked)
            }
        }
    }
}

/// When the admitted jobs free a worker for one more (there are at least `workers` of them):
/// the `(k - workers + 1)`-th smallest deadline, plus the overshoot.
fn first_free(admitted: &VecDeque<Entry>, workers: usize) -> Instant {
    let mut deadlines: Vec<Instant> = admitted.iter().map(|e| e.deadline).collect();
    let (_, &mut free_at, _) = deadlines.select_nth_unstable(admitted.len() - workers);
    free_at + OVERSHOOT
}

/// Admitted jobs not pre-empted: the queue's limit counts these (a pre-empted job leaves
/// within [`OVERSHOOT`], so its place is as good as free).
fn staying(admitted: &VecDeque<Entry>) -> usize {
    admitted
        .iter()
        .filter(|e| !e.yielding.as_ref().is_some_and(|y| y.preempted()))
        .count()
}

/// Whether an admitted job does not count against its client's share: it yields (background
/// work, or a job admitted beyond its client's share).
fn yields_now(entry: &Entry) -> bool {
    entry.yielding.is_some()
}

/// The admitted jobs that count against `client`'s share (see [`yields_now`]).
fn held_by(admitted: &VecDeque<Entry>, client: &str) -> usize {
    admitted
        .iter()
        .filter(|e| e.client.as_deref() == Some(client) && !yields_now(e))
        .count()
}

/// Pre-empts background jobs and other clients' jobs beyond their share, latest deadline first, until an interactive job with `times`
/// arriving `now` is guaranteed a worker in time (or none is left to pre-empt): each one is
/// told to stop, and counted as ending within [`OVERSHOOT`] from now, as the stop flag is
/// looked at as often as the clock. Runs under the admission lock, so two requests never
/// count the same stop twice.
fn preempt_for(
    admitted: &mut VecDeque<Entry>,
    shared: &Shared,
    times: JobTimes,
    now: Instant,
    client: Option<&Arc<str>>,
) {
    loop {
        let k = admitted.len();
        let full = staying(admitted) >= shared.workers + shared.queue;
        if !full
            && (k < shared.workers || first_free(admitted, shared.workers) <= times.latest_start)
        {
            return;
        }
        let victim = admitted
            .iter_mut()
            .filter(|e| {
                e.yielding.as_ref().is_some_and(|y| {
                    // A client's own work beyond its share is not stopped for its own job:
                    // it would gain nothing but lose the search (a lone client keeps it all).
                    let own = y.interactive && e.client.as_ref() == client;
                    !(y.preempted() || own)
                }) && e.deadline > now
            })
            .max_by_key(|e| e.deadline);
        let Some(victim) = victim else { return };
        if let Some(yielding) = &victim.yielding {
            yielding.preempt();
            if let (true, Some(class)) = (yielding.interactive, &victim.class) {
                shared.metrics.client_search(class, "yielded");
            }
        }
        victim.deadline = now;
        shared.metrics.searches_preempted.inc();
    }
}

/// A queued job: when its request gives up waiting for a worker, when one is expected free,
/// and its ticket in the admitted set.
struct Admitted {
    give_up: Instant,
    free_at: Instant,
    ticket: u64,
}

/// An admitted job's result to come (see [`WorkerPool::submit`]).
pub struct Pending<R> {
    times: JobTimes,
    admitted: Admitted,
    answer_rx: oneshot::Receiver<Result<R, PoolError>>,
    /// Withdraws the job if this is dropped before it started.
    withdraw: Withdraw,
    metrics: Arc<Metrics>,
    /// Set for work that may yield: its result is thrown away once it was pre-empted.
    yielding: Option<Arc<Yielding>>,
    /// The pool's per-client share and its workers, for [`PoolError::OverShare`].
    share: (usize, usize),
}

impl<R> Pending<R> {
    /// Whether the job is certain to start in time: a worker was idle, or the admitted jobs'
    /// deadlines free one before the job's latest start. Otherwise it waits, within its
    /// patience, for a search to end early, and may still be shed.
    pub fn guaranteed(&self) -> bool {
        self.admitted.give_up >= self.times.latest_start
    }

    /// Waits for the result; sheds the job if it has not started when its request gives up.
    pub async fn wait(mut self) -> Result<R, PoolError> {
        let Admitted {
            give_up, free_at, ..
        } = self.admitted;
        let share = self.share;
        let preempted = |answer: Result<R, PoolError>| match &self.yielding {
            Some(yielding) if yielding.preempted() => Err(yielding.error(share)),
            _ => answer,
        };
        let watched = self.yielding.clone();
        let stopped = async {
            match &watched {
                Some(yielding) => yielding.stopped.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = &mut self.answer_rx => {
                return preempted(answer.map_err(|_| PoolError::Panicked)?);
            }
            () = tokio::time::sleep_until(give_up.into()) => {}
            () = stopped => {}
        }
        let withdrawn = self
            .withdraw
            .0
            .compare_exchange(QUEUED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if let Some(yielding) = self.yielding.as_ref().filter(|y| y.preempted())
            && withdrawn
        {
            // Pre-empted before a worker took it: it never runs.
            return Err(yielding.error(share));
        }
        if withdrawn {
            self.metrics.rejection("late");
            return Err(PoolError::Overloaded {
                reason: ShedReason::NoEarlyFinish {
                    waited_ms: give_up
                        .saturating_duration_since(self.times.arrival)
                        .as_millis() as u64,
                },
                retry_after: seconds_until(free_at),
            });
        }
        // It started just in time: it ends by its deadline.
        let answer = (&mut self.answer_rx)
            .await
            .map_err(|_| PoolError::Panicked)?;
        preempted(answer)
    }
}

/// A task for a held worker, with its panic caught where it runs.
type HeldTask = Box<dyn FnOnce() + Send>;

/// A worker for a series of jobs, admitted on first use (see [`WorkerPool::reserve`]).
///
/// The first [`Reservation::run`] admits one pool job, whose deadline is the series' own, that
/// runs the series' tasks in turn from a channel until the reservation is dropped. While the
/// series does other work between tasks (cache look-ups), the worker waits for it: the
/// admission arithmetic counted it busy until the deadline anyway, so no promise made to
/// another request depends on it. Dropping the reservation closes the channel, so the worker
/// is free once the task it runs (if any) ends; callers cancel that task through its own flag.
pub struct Reservation {
    pool: WorkerPool,
    times: JobTimes,
    held: Option<Held>,
    /// Who the series is for (see [`WorkerPool::reserve_as`]).
    claim: Claim,
    /// The claim's: once pre-empted, the series cannot go on.
    yielding: Option<Arc<Yielding>>,
}

struct Held {
    tasks: mpsc::Sender<HeldTask>,
    /// The pool job's ticket, released by the reservation itself when it is dropped between
    /// tasks (see `Drop for Reservation`).
    ticket: u64,
    /// Whether a task was sent and its answer not yet received: the worker is busy with it.
    task_running: bool,
    /// The pool job that runs the tasks; polled while a task is awaited, so a job still queued
    /// when its request gives up is shed as any other.
    job: Pin<Box<dyn Future<Output = Result<(), PoolError>> + Send>>,
    /// Set once `job` completed (with its error; it cannot succeed while `tasks` is open).
    ended: Option<PoolError>,
}

impl Reservation {
    /// Who the series is for.
    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    /// Runs `work` on the held worker, admitting the series first if this is its first task.
    pub async fn run<R, F>(&mut self, work: F) -> Result<R, PoolError>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        let share = (self.pool.shared.share, self.pool.shared.workers);
        if let Some(yielding) = self.yielding.as_ref().filter(|y| y.preempted()) {
            return Err(yielding.error(share));
        }
        if self.held.is_none() {
            let (tasks, inbox) = mpsc::channel::<HeldTask>();
            // Admitted now for what is left of the series' time, so that a series whose first
            // search comes late (its first positions were cached) is judged by its remaining time.
            let now = Instant::now();
            let times =
                JobTimes::for_budget(now, self.times.deadline.saturating_duration_since(now));
            let pending = self.pool.submit_as(times, self.claim.clone(), move || {
                while let Ok(task) = inbox.recv() {
                    task();
                }
            })?;
            self.held = Some(Held {
                tasks,
                ticket: pending.admitted.ticket,
                task_running: false,
                job: Box::pin(pending.wait()),
                ended: None,
            });
        }
        let Some(held) = self.held.as_mut() else {
            return Err(PoolError::Panicked);
        };
        if let Some(error) = &held.ended {
            return Err(error.clone());
        }
        let (answer_tx, mut answer_rx) = oneshot::channel();
        let metrics = Arc::clone(&self.pool.shared.metrics);
        let task: HeldTask = Box::new(move || {
            let result = catch_unwind(AssertUnwindSafe(work)).map_err(|_| {
                metrics.search_panics.inc();
                tracing::error!("a search panicked; the worker goes on");
                PoolError::Panicked
            });
            let _ = answer_tx.send(result);
        });
        if held.tasks.send(task).is_err() {
            // The job is gone (withdrawn or ended): its result says why.
            let error = held.job.as_mut().await.err().unwrap_or(PoolError::Panicked);
            held.ended = Some(error.clone());
            return Err(error);
        }
        // Cleared only once the answer is in: if this future is dropped first, the task may
        // still be running and the worker stays counted busy until the job itself ends.
        held.task_running = true;
        tokio::select! {
            biased;
            answer = &mut answer_rx => {
                held.task_running = false;
                match &self.yielding {
                    Some(yielding) if yielding.preempted() => Err(yielding.error(share)),
                    _ => answer.unwrap_or(Err(PoolError::Panicked)),
                }
            }
            ended = held.job.as_mut() => {
                // The job ended before the task ran: shed while queued, or its worker is gone.
                let error = ended.err().unwrap_or(PoolError::Panicked);
                held.ended = Some(error.clone());
                Err(error)
            }
        }
    }
}

impl Drop for Reservation {
    /// Frees the worker in the admitted set at once when no task of the series is running. The
    /// worker thread notices the closed channel and ends the job only a moment later; under
    /// load that moment was long enough for the series' client to ask again, find the worker
    /// still counted busy until the series' deadline, and be shed with a 503. A job not yet
    /// started is withdrawn by its `Pending` and skipped by the worker that takes it, so it
    /// never runs after this.
    fn drop(&mut self) {
        if let Some(held) = &self.held
            && !held.task_running
        {
            self.pool.shared.release(held.ticket);
        }
    }
}

/// Withdraws a job that has not started when the request's future is dropped.
struct Withdraw(Arc<AtomicU8>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        let _ = self
            .0
            .compare_exchange(QUEUED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire);
    }
}

fn worker_loop(receiver: &Mutex<mpsc::Receiver<Job>>, metrics: &Metrics) {
    loop {
        let job = {
            let receiver = receiver.lock().unwrap_or_else(PoisonError::into_inner);
            match receiver.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        // Taken off the queue, whether it runs or was withdrawn.
        metrics.searches_queued.dec();
        let Job {
            run,
            state,
            _ticket,
        } = job;
        if state
            .compare_exchange(QUEUED, STARTED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue;
        }
        metrics.searches_in_flight.inc();
        let outcome = catch_unwind(AssertUnwindSafe(run));
        metrics.searches_in_flight.dec();
        drop(_ticket);
        match outcome {
            Ok(deliver) => deliver(),
            Err(_) => {
                metrics.search_panics.inc();
                tracing::error!("a search panicked; the worker goes on");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(workers: usize, queue: usize) -> WorkerPool {
        WorkerPool::new(workers, queue, 0, Arc::new(Metrics::new())).unwrap()
    }

    #[tokio::test]
    async fn a_job_runs_on_a_worker_thread() {
        let pool = pool(1, 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(1));
        let name = pool
            .run(times, || thread::current().name().map(str::to_owned))
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("kibitz-search-0"));
    }

    #[tokio::test]
    async fn a_panicking_job_is_reported_and_the_worker_survives() {
        let pool = pool(1, 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(1));
        let result: Result<(), _> = pool.run(times, || panic!("boom")).await;
        assert_eq!(result, Err(PoolError::Panicked));
        let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(1));
        assert_eq!(pool.run(times, || 7).await, Ok(7));
    }

    #[tokio::test]
    async fn waiting_for_an_idle_worker_returns_when_a_job_ends() {
        let pool = pool(1, 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(500));
        let busy = pool.submit(times, || thread::sleep(Duration::from_millis(50)));
        assert_eq!(pool.idle_workers(), 0);
        let started = Instant::now();
        let waited = tokio::time::timeout(Duration::from_secs(2), pool.until_idle_beyond(0));
        let (done, waited) = tokio::join!(busy.unwrap().wait(), waited);
        assert_eq!(done, Ok(()));
        assert!(waited.is_ok(), "never told the worker was idle");
        assert!(started.elapsed() >= Duration::from_millis(40));
        assert_eq!(pool.idle_workers(), 1);
    }

    #[tokio::test]
    async fn a_full_queue_sheds_at_once() {
        let pool = pool(1, 0);
        let start = Instant::now();
        let times = JobTimes::for_budget(start, Duration::from_millis(300));
        let busy = pool.run(times, || thread::sleep(Duration::from_millis(200)));
        let second = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(300));
            let result = pool.run(times, || ()).await;
            (result, start.elapsed())
        };
        let (first, (second, at)) = tokio::join!(busy, second);
        assert_eq!(first, Ok(()));
        assert!(matches!(second, Err(PoolError::Overloaded { .. })));
        assert!(at < Duration::from_millis(60), "shed after {at:?}");
    }
    /// Background work that runs until its cancel flag is set, as a search does.
    fn until_cancelled(yielding: &Yielding) -> impl FnOnce() + Send + 'static {
        let flag = CancelFlag::new();
        yielding.watch(&flag);
        move || {
            while !flag.is_cancelled() {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }

    #[tokio::test]
    async fn background_work_gives_its_worker_to_an_interactive_job_and_answers_preempted() {
        let pool = pool(1, 0);
        let yielding = Yielding::new();
        let background = pool
            .submit_as(
                JobTimes::for_budget(Instant::now(), Duration::from_secs(5)),
                Claim::background(Arc::clone(&yielding)),
                until_cancelled(&yielding),
            )
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        // Without pre-emption a 1-worker pool with no queue sheds this at once.
        let started = Instant::now();
        let interactive = pool
            .submit(
                JobTimes::for_budget(Instant::now(), Duration::from_millis(200)),
                || 7,
            )
            .expect("admitted: the background job yields");
        assert!(interactive.guaranteed());
        assert_eq!(interactive.wait().await, Ok(7));
        assert!(started.elapsed() < Duration::from_millis(100));
        assert_eq!(background.wait().await, Err(PoolError::Preempted));
        assert!(yielding.preempted());
    }

    #[tokio::test]
    async fn background_work_never_preempts_background_work() {
        let pool = pool(1, 0);
        let first = Yielding::new();
        let running = pool
            .submit_as(
                JobTimes::for_budget(Instant::now(), Duration::from_millis(300)),
                Claim::background(Arc::clone(&first)),
                until_cancelled(&first),
            )
            .unwrap();
        let second = Yielding::new();
        let refused = pool.submit_as(
            JobTimes::for_budget(Instant::now(), Duration::from_millis(300)),
            Claim::background(Arc::clone(&second)),
            until_cancelled(&second),
        );
        assert!(matches!(refused, Err(PoolError::Overloaded { .. })));
        assert!(!first.preempted());
        drop(running);
    }

    #[tokio::test]
    async fn a_held_series_of_background_work_is_preempted_between_its_tasks() {
        let pool = pool(1, 0);
        let yielding = Yielding::new();
        let mut series = pool.reserve_as(
            JobTimes::for_budget(Instant::now(), Duration::from_secs(5)),
            Claim::background(Arc::clone(&yielding)),
        );
        assert_eq!(series.run(|| 1).await, Ok(1));
        let interactive = pool
            .submit(
                JobTimes::for_budget(Instant::now(), Duration::from_millis(200)),
                || 2,
            )
            .expect("admitted: the series yields");
        // The series must let its worker go for the interactive job to run: its next task
        // answers `Preempted`, and dropping it frees the worker.
        let next = series.run(|| 3).await;
        assert_eq!(next, Err(PoolError::Preempted));
        drop(series);
        assert_eq!(interactive.wait().await, Ok(2));
    }

    #[tokio::test]
    async fn a_reservation_holds_its_worker_between_its_jobs_until_dropped() {
        let pool = pool(1, 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(5));
        let mut reservation = pool.reserve(times);
        let first = reservation.run(|| thread::current().name().map(str::to_owned));
        assert_eq!(first.await.unwrap().as_deref(), Some("kibitz-search-0"));
        // Between the reservation's jobs its worker is still taken: a 1-worker pool with no
        // queue sheds another request at once.
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(300));
        assert!(matches!(
            pool.run(times, || ()).await,
            Err(PoolError::Overloaded { .. })
        ));
        assert_eq!(reservation.run(|| 2 + 2).await, Ok(4));
        drop(reservation);
        // Dropped between its jobs: the worker is counted free at once, not when its thread
        // gets round to ending the held job (late under load: the docs test's client asked
        // again within those milliseconds and was shed).
        assert_eq!(pool.idle_workers(), 1);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(300));
        assert_eq!(pool.run(times, || 7).await, Ok(7));
    }

    #[tokio::test]
    async fn a_reservation_dropped_while_its_job_runs_keeps_the_worker_counted_busy() {
        let pool = pool(1, 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(5));
        let mut reservation = pool.reserve(times);
        let running = reservation.run(|| thread::sleep(Duration::from_millis(300)));
        let given_up = tokio::time::timeout(Duration::from_millis(50), running).await;
        assert!(given_up.is_err(), "the task ended early");
        drop(reservation);
        assert_eq!(pool.idle_workers(), 0);
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(100));
        assert!(matches!(
            pool.run(times, || ()).await,
            Err(PoolError::Overloaded { .. })
        ));
    }

    #[tokio::test]
    async fn a_reservation_whose_job_panics_goes_on_with_its_next_job() {
        let pool = pool(1, 0);
        let mut reservation =
            pool.reserve(JobTimes::for_budget(Instant::now(), Duration::from_secs(5)));
        let failed: Result<(), _> = reservation.run(|| panic!("boom")).await;
        assert_eq!(failed, Err(PoolError::Panicked));
        assert_eq!(reservation.run(|| 5).await, Ok(5));
    }

    #[tokio::test]
    async fn a_reservation_that_cannot_get_a_worker_in_time_is_shed() {
        let pool = pool(1, 4);
        let busy = pool.run(
            JobTimes::for_budget(Instant::now(), Duration::from_millis(400)),
            || thread::sleep(Duration::from_millis(300)),
        );
        let shed = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            // Its latest start (three quarters of 100 ms) comes before the worker is free.
            let mut reservation = pool.reserve(JobTimes::for_budget(
                Instant::now(),
                Duration::from_millis(100),
            ));
            reservation.run(|| ()).await
        };
        let (busy, shed) = tokio::join!(busy, shed);
        assert_eq!(busy, Ok(()));
        assert!(
            matches!(shed, Err(PoolError::Overloaded { .. })),
            "{shed:?}"
        );
    }

    /// An interactive claim of `client`'s, as `Caller::claim` makes one.
    fn interactive(client: &str) -> Claim {
        Claim {
            client: Some(client.into()),
            class: Some("test".into()),
            yielding: Some(Yielding::interactive()),
            background: false,
            standing: Some(Arc::default()),
        }
    }

    fn shared_pool(workers: usize, queue: usize) -> WorkerPool {
        WorkerPool::with_share(workers, queue, 0, 50, Arc::new(Metrics::new())).unwrap()
    }

    #[tokio::test]
    async fn a_lone_client_beyond_its_share_is_admitted_as_before_and_keeps_its_searches() {
        // Two workers, a share of one: the second and third jobs run beyond the share (the
        // third queued), and none is stopped or refused, as nobody else wants a worker.
        let pool = shared_pool(2, 2);
        let claims: Vec<Claim> = (0..3).map(|_| interactive("alice")).collect();
        let mut pending = Vec::new();
        for (i, claim) in claims.iter().enumerate() {
            // The third's budget outlasts the first's, so it is sure of a worker in time.
            let budget = Duration::from_secs(1 + 2 * i as u64);
            let times = JobTimes::for_budget(Instant::now(), budget);
            let job = move || {
                thread::sleep(Duration::from_millis(60));
                i
            };
            pending.push(pool.submit_as(times, claim.clone(), job).expect("admitted"));
        }
        for (i, job) in pending.into_iter().enumerate() {
            assert_eq!(job.wait().await, Ok(i));
        }
        let standing = |i: usize| *claims[i].standing.as_ref().unwrap().get().unwrap();
        assert_eq!(
            standing(0),
            Standing {
                quota: 1,
                remaining: 0
            }
        );
        assert_eq!(
            standing(2),
            Standing {
                quota: 1,
                remaining: 0
            }
        );
        assert_eq!(pool.shared.metrics.searches_preempted.get(), 0);
    }

    #[tokio::test]
    async fn a_client_s_standing_now_counts_its_searches_within_the_share_and_consumes_nothing() {
        // Four workers, a share of two.
        let pool = shared_pool(4, 0);
        let full = Standing {
            quota: 2,
            remaining: 2,
        };
        assert_eq!(pool.standing("alice"), full);
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let mut pending = Vec::new();
        for _ in 0..3 {
            let held = Arc::clone(&held);
            let times = JobTimes::for_budget(Instant::now(), Duration::from_secs(5));
            let job = move || {
                let _ = held.lock().unwrap().recv();
            };
            pending.push(
                pool.submit_as(times, interactive("alice"), job)
                    .expect("admitted"),
            );
            // Asking does not count: the same answer twice.
            assert_eq!(pool.standing("alice"), pool.standing("alice"));
        }
        // The third search runs beyond the share and yields: it does not count.
        assert_eq!(
            pool.standing("alice"),
            Standing {
                quota: 2,
                remaining: 0
            }
        );
        assert_eq!(pool.standing("bob"), full);
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        for job in pending {
            assert_eq!(job.wait().await, Ok(()));
        }
        assert_eq!(pool.standing("alice"), full);
    }

    #[tokio::test]
    async fn another_clients_job_stops_a_search_run_beyond_its_clients_share() {
        let pool = shared_pool(2, 0);
        let long = || JobTimes::for_budget(Instant::now(), Duration::from_secs(5));
        let within = pool
            .submit_as(long(), interactive("flood"), || {
                thread::sleep(Duration::from_millis(400));
            })
            .unwrap();
        let beyond_claim = interactive("flood");
        let beyond_yielding = Arc::clone(beyond_claim.yielding.as_ref().unwrap());
        let beyond = pool
            .submit_as(long(), beyond_claim, until_cancelled(&beyond_yielding))
            .expect("admitted onto the idle worker");
        tokio::time::sleep(Duration::from_millis(20)).await;
        // A third of the flood's, beyond its share, finds both workers taken: shed as before.
        let third = pool.submit_as(
            JobTimes::for_budget(Instant::now(), Duration::from_millis(200)),
            interactive("flood"),
            || (),
        );
        assert!(
            matches!(third, Err(PoolError::Overloaded { .. })),
            "{:?}",
            third.err()
        );
        // The polite client's, within its share, takes the worker of the one beyond it.
        let started = Instant::now();
        let polite = pool
            .submit_as(
                JobTimes::for_budget(Instant::now(), Duration::from_millis(200)),
                interactive("polite"),
                || 7,
            )
            .expect("admitted: the flood's search beyond its share yields");
        assert_eq!(polite.wait().await, Ok(7));
        assert!(started.elapsed() < Duration::from_millis(150));
        assert!(matches!(
            beyond.wait().await,
            Err(PoolError::OverShare {
                share: 1,
                workers: 2,
                ..
            })
        ));
        assert_eq!(within.wait().await, Ok(()));
    }
}
