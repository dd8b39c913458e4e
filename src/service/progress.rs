//! Live progress of a search, in cells: what the API streams while the engine thinks.
//!
//! A request that wants progress puts a [`ProgressSender`] in its query. When its job is
//! admitted and sure to start in time the service sends [`SearchEvent::Queued`] (so the API
//! knows admission is passed and can commit to a streamed answer at once, even while the job
//! waits in the queue), when it starts on a worker [`SearchEvent::Started`], then one
//! [`SearchEvent::Iteration`] per completed iteration, turned from engine moves into cells by
//! [`CellObserver`] on the search thread.
//!
//! The channel is bounded yet never fills, so a send never blocks the search and never drops an
//! iteration: depths only increase (the observer skips an iteration no deeper than the last one
//! sent, as when gomoku's confirming search starts again from depth 1), depths are below
//! [`MAX_PLY`], so one search sends at most `MAX_PLY + 1` events including `Queued` and
//! `Started`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::engine::{IterationInfo, MAX_PLY, ProgressObserver, Score};
use crate::games::{BoardGame, Cell};

/// Events of one search, in order: `Queued` (when sure of a worker), `Started`, then iterations of
/// increasing depth.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchEvent {
    /// The search is admitted and certain to get a worker in time: no 503 or 408 can come
    /// any more. Sent only by a search that waits in the pool's queue or is about to start.
    Queued,
    /// The search has a worker.
    Started,
    Iteration(IterationProgress),
}

/// One completed iteration, in cells.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationProgress {
    pub depth: u32,
    /// Side to move's view, engine scale (as [`super::Answer::score`]).
    pub score: Score,
    pub best: Cell,
    /// Principal variation, starting with `best`.
    pub pv: Vec<Cell>,
    /// Nodes the search has visited so far.
    pub nodes: u64,
    /// Since the search started on its worker.
    pub elapsed: Duration,
}

pub type ProgressSender = mpsc::Sender<SearchEvent>;
pub type ProgressReceiver = mpsc::Receiver<SearchEvent>;

/// Room for every event one search can send (see the module doc).
pub const CHANNEL_CAPACITY: usize = MAX_PLY + 2;

/// A channel for one search's events.
pub fn channel() -> (ProgressSender, ProgressReceiver) {
    mpsc::channel(CHANNEL_CAPACITY)
}

/// Turns the engine's iterations into [`IterationProgress`] and sends them, without blocking.
pub struct CellObserver<G> {
    root: G,
    sender: ProgressSender,
    started: Instant,
    /// Deepest iteration sent so far.
    last_depth: AtomicU32,
}

impl<G: BoardGame> CellObserver<G> {
    /// An observer of searches from `root`, started now.
    pub fn new(root: G, sender: ProgressSender) -> Self {
        CellObserver {
            root,
            sender,
            started: Instant::now(),
            last_depth: AtomicU32::new(0),
        }
    }
}

impl<G: BoardGame> ProgressObserver for CellObserver<G> {
    fn iteration(&self, info: &IterationInfo<'_>) {
        if info.depth <= self.last_depth.fetch_max(info.depth, Ordering::Relaxed) {
            return;
        }
        // The PV's cells are read along the line (a Connect-4 move's landing cell depends on
        // it): one position clone and one small vector per iteration, none per node.
        let mut walk = self.root.clone();
        let mut pv = Vec::with_capacity(info.pv.len());
        for &mv in info.pv {
            pv.push(walk.cell_of(mv));
            walk.make(mv);
        }
        let event = SearchEvent::Iteration(IterationProgress {
            depth: info.depth,
            score: info.score,
            best: self.root.cell_of(info.best_move),
            pv,
            nodes: info.nodes,
            elapsed: self.started.elapsed(),
        });
        // Full cannot happen (see the module doc); closed means the client went away, and
        // its search is being cancelled.
        let _ = self.sender.try_send(event);
    }
}
