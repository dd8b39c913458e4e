//! Live progress: a hook the search calls once per completed iteration of its main thread.
//!
//! A caller that wants to show a search as it deepens (the service streams it to HTTP clients,
//! a command-line tool could print UCI-style `info` lines) passes a [`Progress`] in the
//! [`SearchLimits`](super::SearchLimits). The engine stays game- and transport-agnostic: it hands
//! the observer a borrowed [`IterationInfo`] (the principal variation is a slice of the search's
//! own buffer), so the hook costs nothing per node and nothing at all when absent. The
//! observer runs on the search thread between two iterations: it must be quick and must not
//! block (the service's sends into a bounded channel that never fills, see
//! `service::progress`).

use std::fmt;
use std::sync::Arc;

use super::game::{Move, Score};

/// What one completed iteration found, as the search sees it (moves are engine codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IterationInfo<'a> {
    pub depth: u32,
    /// Side to move's view, mate convention (see [`Score`]).
    pub score: Score,
    pub best_move: Move,
    /// Principal variation, starting with `best_move`.
    pub pv: &'a [Move],
    /// Nodes the main thread has visited so far in this search (all iterations).
    pub nodes: u64,
}

/// Receives the iterations of a search as they complete.
pub trait ProgressObserver: Send + Sync {
    /// Called on the search thread after each completed iteration, deepest last.
    fn iteration(&self, info: &IterationInfo<'_>);
}

/// A shared handle on an observer, cheap to clone into limits.
#[derive(Clone)]
pub struct Progress(Arc<dyn ProgressObserver>);

impl Progress {
    pub fn new(observer: impl ProgressObserver + 'static) -> Self {
        Progress(Arc::new(observer))
    }

    /// Tells the observer about a completed iteration.
    #[inline]
    pub fn report(&self, info: &IterationInfo<'_>) {
        self.0.iteration(info);
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Any `Fn(&IterationInfo)` closure is an observer (handy in tests and tools).
impl<F> ProgressObserver for F
where
    F: Fn(&IterationInfo<'_>) + Send + Sync,
{
    fn iteration(&self, info: &IterationInfo<'_>) {
        self(info);
    }
}
