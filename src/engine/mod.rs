//! The game-agnostic search engine.
//!
//! - [`game`]: the [`Game`] trait every game implements, scores and moves.
//! - [`mod@search`]: iterative-deepening alpha-beta (PVS) and plain minimax.
//! - [`table`]: the lock-free transposition table shared by all searches.
//! - [`ordering`]: killers, history and lazy move picking.
//! - [`limits`]: deadline, depth, node and cancel limits.
//! - [`clock`], [`pv`], [`threads`]: what every searcher (this one, and a game's own such as
//!   gomoku's main search) is built on: the node clock that polls the limits, the principal
//!   variation table, and the Lazy SMP helper-thread harness.
//! - [`report`]: what a search returns.
//! - [`progress`]: the hook told of each completed iteration (live progress).
//! - [`skill`]: strength levels 1-9 (a shallower search and a seeded softmax over root moves).
//!
//! The engine knows nothing of HTTP, serde or tokio; the service drives it from worker threads.

pub mod clock;
pub mod game;
pub mod limits;
pub mod ordering;
pub mod progress;
pub mod pv;
pub mod report;
pub mod search;
pub mod skill;
pub mod table;
pub mod threads;

pub use game::{Game, INFINITY, MATE_BOUND, MAX_PLY, Move, Score, Side, Status, WIN, is_decisive};
pub use limits::{CancelFlag, Deadline, RootFilter, SearchLimits, StopReason};
pub use progress::{IterationInfo, Progress, ProgressObserver};
pub use report::{Iteration, Line, MoveScore, Outcome, Proof, SearchReport, ThreatProof};
pub use search::{Algorithm, SOLVED_WHATEVER_THE_CLOCK_PLIES, SearchOptions, search};
pub use table::{Bound, DepthUnit, Entry, TableStats, TranspositionTable};
