//! The service: everything between a parsed request and an engine search, with no HTTP in it.
//!
//! - [`games`]: the served games, their rules parsers and the name-to-type dispatch.
//! - [`latency`]: the latency contract (a 200 never later than its budget plus a few ms, else a
//!   503 at once): a request's times and the margins that keep it.
//! - [`pool`]: the search worker threads and the admission control that keeps the latency
//!   promise.
//! - [`caller`]: who a request is for (its client's identity) and whether it yields its worker.
//! - [`answer`]: a search's answer with its moves as cells, and how a worker makes one.
//! - [`cache`]: the answer cache in front of the pool.
//! - [`shared_cache`]: the answer cache shared by replicas (Redis), behind the local one.
//! - [`metrics`]: the Prometheus metrics.
//! - [`progress`]: a search's iterations as they complete, for streamed answers.
//! - [`replay`]: a game given as its moves (JSON cells or notation), replayed to a position.
//! - [`review`]: a game's moves judged ply by ply, one search per position.
//! - [`tree`]: when a teaching tree's evaluation gets a place (a slot per search worker).
//! - [`fair_slots`]: a semaphore whose slots go round-robin to the clients holding fewest.
//! - [`root`]: the root's restriction (`searchmoves`, `exclude`), resolved on the asked
//!   position.
//! - [`levels`]: strength levels, seeds and deterministic answers; [`ladder`]: what each level
//!   means on a rating scale, as measured.
//! - [`wdl`]: win/draw/loss chances from a score: exact when proven, else a fitted model.
//! - [`batch`]: batch analyses, their items shared by every replica's idle workers (Redis
//!   Streams) or queued in process.
//!
//! A move request flows: validate limits → parse rules and board → cache lookup → admission →
//! search on a worker (one transposition table per game, shared by all requests) → cache store.
//! A request whose future is dropped (the client went away) cancels its search through a drop
//! guard, which frees the worker within a few hundred microseconds.

pub mod answer;
pub mod batch;
pub mod cache;
pub mod caller;
pub mod fair_slots;
pub mod games;
pub mod ladder;
pub mod latency;
pub mod levels;
pub mod metrics;
pub mod pool;
pub mod progress;
pub mod replay;
pub mod review;
pub mod root;
pub mod shared_cache;
pub mod tree;
pub mod wdl;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::{Config, MemorySizing};
use crate::engine::{
    Algorithm, CancelFlag, Deadline, SearchLimits, SearchOptions, Side, StopReason,
    TranspositionTable,
};
use crate::games::{BoardGame, Cell, Grid, PositionError};

use answer::think;
pub use answer::{Answer, ForbiddenCell, IterationCell, LineCell, ScoredCell, Served};
use cache::{AnswerCache, AskedLimits, CacheKey, CacheTier};
use games::{GAME_NAMES, GameTask, RulesError, ServedGame, table_caps, with_game};
use latency::JobTimes;
use metrics::{GameLabel, Metrics};
use pool::{PoolError, WorkerPool};

/// Deepest iteration a request may ask for (the engine's ply limit, less the root).
pub const MAX_DEPTH: u32 = crate::engine::MAX_PLY as u32 - 1;

/// Why the service cannot answer a move request.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("unknown game")]
    UnknownGame(String),
    #[error(transparent)]
    Position(#[from] PositionError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// A limit outside its range: the JSON pointer of the field and what is allowed.
    #[error("{message}")]
    OutOfRange {
        pointer: &'static str,
        message: String,
    },
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The request took so long to arrive that too little of its budget is left to search.
    #[error(
        "the request took {elapsed_ms} ms to arrive, leaving too little of its budget_ms of \
         {budget_ms} to search (a search starts with at least a quarter of its budget left)"
    )]
    BudgetSpent { budget_ms: u64, elapsed_ms: u64 },
    /// A deterministic search had not reached its node limit when its budget ran out: any
    /// answer now would depend on this machine's speed and load. The request asks for more
    /// nodes than this server searches in its budget: the client's to change, not to retry.
    #[error(
        "the deterministic search reached {reached} of its node limit of {nodes} in the \
         {searched_ms} ms of its budget_ms of {budget_ms} it had; give a larger budget_ms or a \
         smaller max_nodes"
    )]
    DeterministicOverrun {
        nodes: u64,
        reached: u64,
        searched_ms: u64,
        budget_ms: u64,
    },
    /// Move `index` (0-based) of a move list cannot be read or played: `pointer` is where it
    /// was written (`/moves/3` in a JSON list, `/moves` for a notation string).
    #[error("ply {} ({pointer}): {reason}", index + 1)]
    IllegalMove {
        index: usize,
        pointer: String,
        reason: String,
    },
    /// The position asked about is a finished game: who won (`None`: a draw) and the line
    /// that won, as cells and named on the asked board.
    #[error("the game is already over: {message}")]
    Finished {
        message: String,
        /// `/board`, or `/moves` when a move list ended the game.
        pointer: &'static str,
        winner: Option<Side>,
        line: Vec<Cell>,
        notation: crate::games::notation::Notation,
    },
    /// Every `/tree` evaluation slot (one per search worker) stayed busy while the request
    /// waited for one.
    #[error(
        "all {slots} tree evaluation slots (one per search worker) stayed busy while this \
         request waited for one"
    )]
    TreeSlotsBusy { slots: usize },
    /// A tree's evaluation ended without a result (its thread panicked).
    #[error("tree evaluation failed: {0}")]
    TreeFailed(String),
    /// The engine returned no move for a position it accepted as ongoing.
    #[error("the search returned no move")]
    NoMove,
    /// A `searchmoves` or `exclude` move that does not read or is not legal, or a restriction
    /// leaving no legal move: `pointer` is where (`/exclude/2`, `/searchmoves`).
    #[error("{reason}")]
    RootMove { pointer: String, reason: String },
}

/// A move request, parsed but not yet validated against the game.
#[derive(Clone, Debug)]
pub struct MoveQuery {
    pub game: String,
    /// Rows top to bottom; empty when not given (then `moves` start from the empty board).
    pub board: Vec<String>,
    /// The moves played from `board` (or from the game's empty board) to the position asked
    /// about; the side to move follows from them.
    pub moves: Option<replay::MoveList>,
    pub to_move: Option<Side>,
    /// Milliseconds for the whole request, queueing included; `None` = the default (1000).
    pub budget_ms: Option<u64>,
    pub max_depth: Option<u32>,
    pub max_nodes: Option<u64>,
    pub algorithm: Algorithm,
    pub analysis: bool,
    pub rules: Option<Value>,
    /// `level`, `seed` and `deterministic`.
    pub style: levels::PlayStyle,
    /// When the request arrived: the budget runs from here.
    pub arrival: Instant,
    /// Where to send the search's progress (`Queued`, `Started`, then each iteration), when streamed.
    /// An answer from a cache sends nothing.
    pub progress: Option<progress::ProgressSender>,
    /// Who asked, and whether the search yields its worker (a batch item).
    pub caller: caller::Caller,
    /// `searchmoves` and `exclude` (the default: every move).
    pub root: root::RootQuery,
    /// How many best moves to answer with a line each (`lines`); `None`: no `lines`.
    pub multipv: Option<u64>,
}

/// Most lines `multipv` may ask for: each costs about one more search of the root per
/// iteration.
pub const MAX_MULTIPV: u64 = 16;

/// Default `budget_ms`.
pub const DEFAULT_BUDGET_MS: u64 = 1000;

/// The searches under way, so that shutdown can stop them all. A std mutex: held for one map
/// insert or remove per request, never across an `.await`.
#[derive(Default)]
struct ActiveSearches {
    flags: Mutex<HashMap<u64, CancelFlag>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl ActiveSearches {
    fn flags(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancelFlag>> {
        self.flags.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Cancels a search when the request's future is dropped (client gone) or done, and takes it
/// off the active list.
struct CancelOnDrop {
    flag: CancelFlag,
    id: u64,
    active: Arc<Inner>,
}

impl CancelOnDrop {
    fn register(flag: CancelFlag, inner: &Arc<Inner>) -> Self {
        let active = &inner.active;
        let id = active
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        active.flags().insert(id, flag.clone());
        CancelOnDrop {
            flag,
            id,
            active: Arc::clone(inner),
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.flag.cancel();
        self.active.active.flags().remove(&self.id);
    }
}

struct Inner {
    pool: WorkerPool,
    cache: AnswerCache,
    /// The Redis cache shared by replicas, when `KIBITZ_REDIS_URL` is set.
    shared: Option<shared_cache::SharedCache>,
    /// One table per game, created at start for the served games (and on first use for any
    /// other `ServedGame`, e.g. a test's). The tables themselves are lock-free and shared by
    /// every worker; this std mutex guards only the map, for one lookup per search.
    tables: Mutex<HashMap<&'static str, Arc<TranspositionTable>>>,
    /// Table and cache sizes, as configured or derived from the memory limit.
    sizing: MemorySizing,
    max_budget_ms: u64,
    metrics: Arc<Metrics>,
    /// Cancel flags of the searches under way (see [`Service::cancel_all`]).
    active: ActiveSearches,
    /// Set by [`Service::cancel_all`] at the end of shutdown: series of searches (reviews) stop
    /// before their next search and answer with what they have. Relaxed: a flag read between
    /// searches, ordering nothing else.
    stopping: std::sync::atomic::AtomicBool,
    /// The `/tree` evaluations' places, one per search worker, shared fairly by client.
    tree_slots: tree::TreeSlots,
}

/// The move service. Cheap to clone: one `Arc` around state that is itself safe to share.
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

impl Service {
    /// Starts the worker threads and allocates the tables and the cache.
    pub fn new(config: &Config, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let pool = WorkerPool::with_share(
            config.worker_count(),
            config.queue,
            config.admission_patience_percent,
            config.client_share_percent,
            Arc::clone(&metrics),
        )?;
        let caps = table_caps();
        // Games whose table is capped below the default (tic-tac-toe) barely count.
        let full_tables = caps
            .iter()
            .filter(|(_, cap)| *cap >= crate::config::DEFAULT_TABLE_MB)
            .count();
        let sizing = config.memory_sizing(full_tables);
        let tables = caps
            .into_iter()
            .map(|(name, cap)| {
                let table = TranspositionTable::with_megabytes(sizing.table_mb.min(cap));
                (name, Arc::new(table))
            })
            .collect();
        let shared = shared_cache::SharedCache::from_config(config, metrics.shared_cache.clone())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(Service {
            inner: Arc::new(Inner {
                pool,
                cache: AnswerCache::new(config.cache_entries, sizing.cache_mb << 20),
                shared,
                tables: Mutex::new(tables),
                sizing,
                max_budget_ms: config.max_budget_ms,
                metrics,
                active: ActiveSearches::default(),
                stopping: std::sync::atomic::AtomicBool::new(false),
                tree_slots: tree::TreeSlots::new(
                    config.worker_count(),
                    config.client_share_percent,
                ),
            }),
        })
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    /// Names of the games served.
    pub fn game_names(&self) -> &'static [&'static str] {
        GAME_NAMES
    }

    pub fn max_budget_ms(&self) -> u64 {
        self.inner.max_budget_ms
    }

    pub fn workers(&self) -> usize {
        self.inner.pool.workers()
    }

    /// Whether [`Service::cancel_all`] was called.
    pub fn stopping(&self) -> bool {
        self.inner
            .stopping
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The worker pool (tests occupy it with their own jobs).
    pub fn pool(&self) -> &WorkerPool {
        &self.inner.pool
    }

    /// Stops every search under way (each answers with its best move so far), and every
    /// review before its next search (each answers with the plies judged); returns how many
    /// searches. Shutdown calls it when its timeout runs out.
    pub fn cancel_all(&self) -> usize {
        self.inner
            .stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let flags = self.inner.active.flags();
        for flag in flags.values() {
            flag.cancel();
        }
        flags.len()
    }

    /// Answers held by the answer cache.
    pub fn cached_answers(&self) -> usize {
        self.inner.cache.len()
    }

    /// Table and cache sizes in use, and the memory limit they were derived from.
    pub fn memory_sizing(&self) -> MemorySizing {
        self.inner.sizing
    }

    /// Bytes taken by all transposition tables.
    pub fn table_bytes(&self) -> usize {
        self.tables().values().map(|t| t.bytes()).sum()
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, Arc<TranspositionTable>>> {
        self.inner
            .tables
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn table_for<G: ServedGame>(&self) -> Arc<TranspositionTable> {
        let mut tables = self.tables();
        let table = tables.entry(G::NAME).or_insert_with(|| {
            Arc::new(TranspositionTable::with_megabytes(
                self.inner.sizing.table_mb.min(G::TABLE_MB_CAP),
            ))
        });
        Arc::clone(table)
    }

    fn check_limits(&self, query: &MoveQuery) -> Result<AskedLimits, ServiceError> {
        let max = self.inner.max_budget_ms;
        let budget_ms = query.budget_ms.unwrap_or(DEFAULT_BUDGET_MS.min(max));
        if !(1..=max).contains(&budget_ms) {
            return Err(ServiceError::OutOfRange {
                pointer: "/budget_ms",
                message: format!("budget_ms is {budget_ms}; it must be between 1 and {max}"),
            });
        }
        if let Some(depth) = query.max_depth
            && !(1..=MAX_DEPTH).contains(&depth)
        {
            return Err(ServiceError::OutOfRange {
                pointer: "/max_depth",
                message: format!("max_depth is {depth}; it must be between 1 and {MAX_DEPTH}"),
            });
        }
        if let Some(k) = query.multipv
            && !(1..=MAX_MULTIPV).contains(&k)
        {
            return Err(ServiceError::OutOfRange {
                pointer: "/multipv",
                message: format!("multipv is {k}; it must be between 1 and {MAX_MULTIPV}"),
            });
        }
        if query.max_nodes == Some(0) {
            return Err(ServiceError::OutOfRange {
                pointer: "/max_nodes",
                message: "max_nodes must be at least 1".into(),
            });
        }
        Ok(AskedLimits {
            budget_ms,
            max_depth: query.max_depth,
            max_nodes: query.max_nodes,
        })
    }

    /// What a move request asks for game `G`, checked as a search would need it: its limits,
    /// rules, board and style; an error is the one the request is answered with.
    fn check<G: ServedGame>(&self, query: &MoveQuery) -> Result<Checked<G>, ServiceError> {
        let asked = self.check_limits(query)?;
        let rules = G::parse_rules(query.rules.as_ref())?;
        let (grid, position) = match &query.moves {
            None if query.board.is_empty() => {
                return Err(PositionError::Shape("give `board`, `moves` or both".into()).into());
            }
            None => {
                let grid = Grid::parse(&query.board, G::MAX_SIDE)?;
                let position = match G::from_grid(&grid, query.to_move, &rules) {
                    Err(PositionError::GameOver(message)) => {
                        return Err(finished::<G>(&grid, &rules, message, "/board"));
                    }
                    other => other?,
                };
                (grid, position)
            }
            Some(moves) => {
                let board = (!query.board.is_empty()).then_some(query.board.as_slice());
                let played = replay::replay::<G>(board, query.to_move, &rules, moves, false)
                    .map_err(|error| match error {
                        // The starting board was over before any move.
                        ServiceError::Position(PositionError::GameOver(message)) => {
                            let grid = board.and_then(|b| Grid::parse(b, G::MAX_SIDE).ok());
                            match grid {
                                Some(grid) => finished::<G>(&grid, &rules, message, "/board"),
                                None => PositionError::GameOver(message).into(),
                            }
                        }
                        other => other,
                    })?;
                if let Some(message) = finished_after_moves(&played.last, played.played.len()) {
                    return Err(finished::<G>(&played.grid, &rules, message, "/moves"));
                }
                (played.grid, played.last)
            }
        };
        let style = levels::resolve(&query.style)?;
        if query.multipv.is_some_and(|k| k > 1) && style.level < crate::engine::skill::FULL_STRENGTH
        {
            // A weakened level draws its move from among the candidates, so its move would
            // not be the best line's.
            return Err(ServiceError::OutOfRange {
                pointer: "/multipv",
                message: format!(
                    "multipv above 1 needs full strength (level {}); level {} draws its move \
                     at random among the candidates",
                    crate::engine::skill::FULL_STRENGTH,
                    style.level
                ),
            });
        }
        let plan = root::resolve(&query.root, &position, &grid)?;
        Ok(Checked {
            asked,
            rules,
            grid,
            position,
            style,
            plan,
        })
    }

    /// Checks a move request for the game it names without answering it (a batch's items are
    /// all checked before any is queued, each refused as a lone request would be); its budget
    /// in ms when it could be answered.
    pub async fn check_move(&self, query: &MoveQuery) -> Result<u64, ServiceError> {
        with_game(CheckMove {
            service: self,
            query,
        })
        .await
    }

    /// Answers a move request for the game it names (see [`Service::play`]).
    pub async fn dispatch(&self, query: MoveQuery) -> Result<Served, ServiceError> {
        with_game(Play {
            service: self,
            query,
        })
        .await
    }

    /// Answers a move request for game `G`: from the cache, or by a search on a worker.
    pub async fn play<G: ServedGame>(&self, query: MoveQuery) -> Result<Served, ServiceError> {
        self.play_on::<G>(query, Runner::Pool).await
    }

    /// [`Service::play`], with the search (if any) run by `runner`. The steps, in order:
    /// check the question, ask the caches, admit the search, run it, keep the answer.
    async fn play_on<G: ServedGame>(
        &self,
        query: MoveQuery,
        runner: Runner<'_>,
    ) -> Result<Served, ServiceError> {
        // Step 1. Check the question: limits, rules, board (or move list), level, root moves.
        let Checked {
            asked,
            rules,
            grid,
            position,
            style,
            plan,
        } = self.check::<G>(&query)?;
        let cacheable = style.cacheable(&query.style);
        // A deterministic search stops at a node limit, which is then part of the question.
        let max_nodes = if style.deterministic {
            Some(levels::deterministic_nodes::<G>(
                asked.budget_ms,
                asked.max_nodes,
            ))
        } else {
            asked.max_nodes
        };
        let asked = AskedLimits { max_nodes, ..asked };

        // Step 2. The caches: this replica's, then the shared one (Redis, checked on reading).
        let key = CacheKey {
            game: G::NAME,
            rules: G::rules_key(&rules),
            board: board_key(&grid),
            to_move: position.side_to_move(),
            minimax: query.algorithm == Algorithm::Minimax,
            analysis: query.analysis,
            max_depth: asked.max_depth,
            max_nodes: asked.max_nodes,
            style,
            root: plan.key(),
            multipv: query.multipv.unwrap_or(0) as u8,
        };
        // The shared cache's checks know no root restriction and no lines: a restricted or
        // multi-line question is answered by this replica and its own cache only.
        let shareable = cacheable && key.root.is_empty() && key.multipv == 0;
        let metrics = &self.inner.metrics;
        let label = GameLabel { game: G::NAME };
        if cacheable && let Some(answer) = self.inner.cache.get(&key, &asked) {
            metrics.cache_hits.get_or_create(&label).inc();
            return Ok(Served {
                answer,
                cached: true,
                cached_from: Some(CacheTier::Local),
            });
        }
        metrics.cache_misses.get_or_create(&label).inc();
        if shareable && let Some(served) = self.shared_lookup(&key, &position, &asked, &label).await
        {
            return Ok(served);
        }

        // Step 3. The search's limits: a budget already spent is a 503 at once; the request's
        // cancel flag stops the search when the client goes away (or, for a batch item, when
        // a request that cannot wait needs its worker).
        let times = JobTimes::for_budget(query.arrival, Duration::from_millis(asked.budget_ms));
        let now = Instant::now();
        if now >= times.latest_start {
            metrics.rejection("budget_spent");
            return Err(ServiceError::BudgetSpent {
                budget_ms: asked.budget_ms,
                elapsed_ms: now.duration_since(query.arrival).as_millis() as u64,
            });
        }
        let cancel = CancelFlag::new();
        let _cancel_on_drop = CancelOnDrop::register(cancel.clone(), &self.inner);
        // How this search yields its worker, if the pool makes it (see `pool::Yielding`).
        let claim = match &runner {
            Runner::Pool => query.caller.claim(),
            // A series' claim was made when its worker was reserved.
            Runner::Held(reservation) => reservation.claim().clone(),
        };
        let yielding = claim.yielding.clone();
        if let Some(yielding) = &yielding {
            yielding.watch(&cancel);
        }
        let search_deadline = times.search_deadline();
        // A deterministic search has no deadline of its own (the clock would make its answer
        // depend on this machine's speed and load); a timer cancels it at the deadline instead,
        // which keeps the latency promise and the pool's accounting.
        let _timer = style
            .deterministic
            .then(|| levels::CancelAt::spawn(cancel.clone(), search_deadline));
        let limits = SearchLimits {
            deadline: (!style.deterministic).then_some(Deadline(search_deadline)),
            max_depth: asked.max_depth,
            max_nodes: asked.max_nodes,
            cancel: Some(cancel),
            progress: None,
            root: plan.filter.clone(),
        };
        // One search per worker and one worker per core: a helper thread takes a core only
        // when another worker is idle now (it would otherwise compete with a search), only
        // for a game that gains from it, never for a deterministic or node-capped search (a
        // second thread's timing would change its answer; its nodes are not capped).
        let spare_core = G::SPARE_CORE_HELPS
            && !style.deterministic
            && asked.max_nodes.is_none()
            && self.inner.pool.idle_workers() >= 2;
        let options = SearchOptions {
            algorithm: query.algorithm,
            analysis: query.analysis,
            helper_threads: usize::from(spare_core),
            multipv: query.multipv.unwrap_or(0) as usize,
            ..SearchOptions::default()
        };
        // Step 4. The job a worker runs: the search on the game's shared table (a deterministic
        // search's own fresh one), its progress streamed when asked.
        let shared_table = (!style.deterministic).then(|| self.table_for::<G>());
        let worker_metrics = Arc::clone(metrics);
        let progress = query.progress;
        let queued = progress.clone();
        let job = move || {
            // A deterministic search's fresh table is made on the worker, in its budget.
            let private;
            let table = match &shared_table {
                Some(table) => table.as_ref(),
                None => {
                    private = levels::private_table::<G>(limits.max_nodes.unwrap_or(0));
                    &private
                }
            };
            let window = search_deadline.saturating_duration_since(Instant::now());
            let mut limits = limits;
            if let Some(sender) = progress {
                let _ = sender.try_send(progress::SearchEvent::Started);
                let observer = progress::CellObserver::new(position.clone(), sender);
                limits.progress = Some(crate::engine::Progress::new(observer));
            }
            let answer = think(&position, &limits, options, table, window, style);
            if matches!(&answer, Ok(a) if a.stop_reason == StopReason::Cancelled) {
                worker_metrics.searches_cancelled.inc();
            }
            answer
        };
        // Step 5. Admission and the run: the pool admits the job only if it can start in time
        // (else a 503 now); a review's searches run on the worker it holds.
        let answer = match runner {
            Runner::Pool => {
                let pending = self.inner.pool.submit_as(times, claim, job)?;
                // A job sure to start can commit a streamed answer to 200 now, so a client
                // waiting in the queue sees the stream open at once.
                if pending.guaranteed()
                    && let Some(sender) = queued
                {
                    let _ = sender.try_send(progress::SearchEvent::Queued);
                }
                pending.wait().await
            }
            Runner::Held(reservation) => reservation.run(job).await,
        }??;
        if style.deterministic && answer.stop_reason == StopReason::Cancelled {
            metrics.rejection("deterministic_overrun");
            return Err(ServiceError::DeterministicOverrun {
                nodes: asked.max_nodes.unwrap_or(0),
                reached: answer.nodes,
                searched_ms: answer.elapsed.as_millis() as u64,
                budget_ms: asked.budget_ms,
            });
        }
        // Step 6. Count it and keep it: both caches, when the question may be shared.
        metrics
            .search_depth
            .get_or_create(&label)
            .observe(f64::from(answer.depth));
        metrics
            .search_nodes
            .get_or_create(&label)
            .observe(answer.nodes as f64);
        let answer = Arc::new(answer);
        if cacheable {
            if shareable && let Some(shared) = &self.inner.shared {
                shared.spawn_store(key.clone(), Arc::clone(&answer));
            }
            self.inner.cache.put(key, Arc::clone(&answer));
        }
        Ok(Served {
            answer,
            cached: false,
            cached_from: None,
        })
    }

    /// The shared cache's answer, if it has one that is legal in `position` (the key's) and
    /// serves `asked` (same rule as the local cache); a hit is kept in the local cache too.
    async fn shared_lookup<G: ServedGame>(
        &self,
        key: &CacheKey,
        position: &G,
        asked: &AskedLimits,
        label: &GameLabel,
    ) -> Option<Served> {
        let shared = self.inner.shared.as_ref()?;
        let metrics = &self.inner.metrics.shared_cache;
        let found = shared
            .get(key, position)
            .await
            .filter(|answer| cache::serves(answer, asked));
        let Some(answer) = found else {
            metrics.misses.get_or_create(label).inc();
            return None;
        };
        metrics.hits.get_or_create(label).inc();
        let threats = answer::label_best(position, answer.best);
        let answer = Arc::new(Answer { threats, ..answer });
        self.inner.cache.put(key.clone(), Arc::clone(&answer));
        Some(Served {
            answer,
            cached: true,
            cached_from: Some(CacheTier::Shared),
        })
    }
}

/// Why a move list's last position has no move to suggest, in words; `None` while the game
/// goes on.
fn finished_after_moves<G: BoardGame>(position: &G, plies: usize) -> Option<String> {
    match position.status() {
        crate::engine::Status::Ongoing => None,
        crate::engine::Status::Lost => Some(format!(
            "{} won with ply {plies} of the move list",
            position.side_to_move().other().letter()
        )),
        crate::engine::Status::Draw => Some(format!("a draw after ply {plies} of the move list")),
    }
}

/// The refusal of a finished game on `grid`: its winner and winning line, read from the board
/// (a full board without a line is a draw).
fn finished<G: ServedGame>(
    grid: &Grid,
    rules: &G::Rules,
    message: String,
    pointer: &'static str,
) -> ServiceError {
    let (winner, line) = match grid.winning_line(G::win_length(rules)) {
        Some((side, line)) => (Some(side), line),
        None => (None, Vec::new()),
    };
    ServiceError::Finished {
        message,
        pointer,
        winner,
        line,
        notation: replay::notation_of::<G>(grid),
    }
}

/// A move request checked for game `G` ([`Service::check`]).
struct Checked<G: ServedGame> {
    asked: AskedLimits,
    rules: G::Rules,
    grid: Grid,
    position: G,
    style: levels::Style,
    /// The root's restriction.
    plan: root::RootPlan,
}

/// [`Service::check_move`] as a [`GameTask`].
struct CheckMove<'a> {
    service: &'a Service,
    query: &'a MoveQuery,
}

impl GameTask for CheckMove<'_> {
    type Output = Result<u64, ServiceError>;

    fn game(&self) -> &str {
        &self.query.game
    }

    fn run<G: ServedGame>(self) -> impl Future<Output = Self::Output> + Send {
        let checked = self
            .service
            .check::<G>(self.query)
            .map(|checked| checked.asked.budget_ms);
        std::future::ready(checked)
    }

    fn unknown(self) -> Self::Output {
        Err(ServiceError::UnknownGame(self.query.game.clone()))
    }
}

/// A move request as a [`GameTask`]: [`Service::play`] for the game it names.
struct Play<'a> {
    service: &'a Service,
    query: MoveQuery,
}

impl GameTask for Play<'_> {
    type Output = Result<Served, ServiceError>;

    fn game(&self) -> &str {
        &self.query.game
    }

    fn run<G: ServedGame>(self) -> impl Future<Output = Self::Output> + Send {
        self.service.play::<G>(self.query)
    }

    fn unknown(self) -> Self::Output {
        Err(ServiceError::UnknownGame(self.query.game))
    }
}

/// Where a search runs: on the pool, admitted on its own, or on a worker held for a series
/// of searches (a review).
enum Runner<'a> {
    Pool,
    Held(&'a mut pool::Reservation),
}

/// The board in canonical text for the cache key.
fn board_key(grid: &Grid) -> String {
    let mut key = String::with_capacity(grid.cells.len() + grid.rows);
    for (i, stone) in grid.cells.iter().enumerate() {
        if i > 0 && i % grid.cols == 0 {
            key.push('/');
        }
        key.push(stone.letter());
    }
    key
}
