//! When a search must stop: a deadline, a depth, a node count, or a cancel flag.
//!
//! The first limit hit wins. Node limits and cancellation are polled every [`CHECK_INTERVAL`]
//! nodes, so the check costs next to nothing per node; the deadline on a grid of its own that
//! follows the nodes' cost (`clock.rs`), so that slow nodes overshoot it by under a millisecond
//! too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::game::Move;
use super::progress::Progress;

/// Nodes between two reads of the clock and the cancel flag.
pub const CHECK_INTERVAL: u64 = 1024;

/// A point in time after which the search must return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(pub Instant);

impl Deadline {
    pub fn after(budget: Duration) -> Self {
        Deadline(Instant::now() + budget)
    }

    pub fn has_passed(&self) -> bool {
        Instant::now() >= self.0
    }

    pub fn remaining(&self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }
}

/// A flag another thread sets to stop a search (a client that went away, a server shutting
/// down). Cloning shares the flag.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Everything that can end a search before it proves the result.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    pub deadline: Option<Deadline>,
    /// Deepest iteration to run (plies from the root).
    pub max_depth: Option<u32>,
    /// Stop once this many nodes have been visited.
    pub max_nodes: Option<u64>,
    pub cancel: Option<CancelFlag>,
    /// Told of every completed iteration of the main search thread (not a limit: a window on
    /// the search, see [`super::progress`]). Searches other than the iterative deepening (a
    /// game's exact solver, threat searches) report nothing through it.
    pub progress: Option<Progress>,
    /// The root moves the search may choose among (UCI's `searchmoves`); `None`: every move.
    /// Read at the root only, never per node.
    pub root: Option<RootFilter>,
}

/// The moves a search may answer with at its root, as a bit per move code: every searcher
/// checks its root moves against it (the generic engine, a game's solver, its threat
/// searches), so a restricted question never gets an answer outside the set. Cloning shares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootFilter(Arc<[u64]>);

impl RootFilter {
    /// The filter allowing exactly `moves`.
    pub fn new(moves: &[Move]) -> Self {
        let words = moves.iter().map(|m| m.index() / 64 + 1).max().unwrap_or(0);
        let mut bits = vec![0u64; words];
        for mv in moves {
            bits[mv.index() / 64] |= 1 << (mv.index() % 64);
        }
        RootFilter(bits.into())
    }

    /// Whether the root may play `mv`.
    #[inline]
    pub fn allows(&self, mv: Move) -> bool {
        self.0
            .get(mv.index() / 64)
            .is_some_and(|word| word & (1 << (mv.index() % 64)) != 0)
    }

    /// Whether `filter` (absent: no restriction) allows `mv`.
    #[inline]
    pub fn admits(filter: Option<&RootFilter>, mv: Move) -> bool {
        filter.is_none_or(|f| f.allows(mv))
    }
}

impl SearchLimits {
    /// The limits of a Lazy SMP helper of a search under `self`: the same deadline, depth and
    /// root moves,
    /// no node cap (the calling thread's count is the one capped), stopped by `stop` (raised
    /// when the calling thread ends), and no progress reports (the caller's iterations are the
    /// answer's).
    pub fn for_helper(&self, stop: &CancelFlag) -> SearchLimits {
        SearchLimits {
            deadline: self.deadline,
            max_depth: self.max_depth,
            max_nodes: None,
            cancel: Some(stop.clone()),
            progress: None,
            root: self.root.clone(),
        }
    }

    /// Limits with only a time budget from now.
    pub fn with_budget(budget: Duration) -> Self {
        SearchLimits {
            deadline: Some(Deadline::after(budget)),
            ..Default::default()
        }
    }

    /// Limits with only a depth.
    pub fn with_depth(depth: u32) -> Self {
        SearchLimits {
            max_depth: Some(depth),
            ..Default::default()
        }
    }

    /// Which hard limit, if any, has been reached after `nodes` nodes. Reads the clock.
    pub fn reached(&self, nodes: u64) -> Option<StopReason> {
        self.reached_but_the_deadline(nodes).or_else(|| {
            self.deadline
                .is_some_and(|d| d.has_passed())
                .then_some(StopReason::Time)
        })
    }

    /// Which limit other than the deadline, if any, has been reached after `nodes` nodes.
    pub fn reached_but_the_deadline(&self, nodes: u64) -> Option<StopReason> {
        if self.cancel.as_ref().is_some_and(CancelFlag::is_cancelled) {
            return Some(StopReason::Cancelled);
        }
        if self.max_nodes.is_some_and(|max| nodes >= max) {
            return Some(StopReason::Nodes);
        }
        None
    }
}

/// Why a search returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The result is proven: no limit cut it short.
    Proven,
    /// The result is exact and came from an opening book (a game's own table of solved
    /// positions), not from this search alone.
    Book,
    /// The deepest allowed iteration completed.
    Depth,
    Nodes,
    Time,
    Cancelled,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Proven => "proven",
            StopReason::Book => "book",
            StopReason::Depth => "depth",
            StopReason::Nodes => "nodes",
            StopReason::Time => "time",
            StopReason::Cancelled => "cancelled",
        }
    }
}
