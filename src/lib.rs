//! kibitz: an HTTP service that suggests moves in board games.
//!
//! - [`api`]: the HTTP layer (`POST /tree` so far).
//! - [`engine`]: game-agnostic search (iterative-deepening alpha-beta, transposition table,
//!   move ordering, limits, reports). Knows nothing of HTTP.
//! - [`games`]: the games, each behind [`engine::Game`], and the board text format they share.
//! - [`arena`]: gomoku matches between kibitz, baselines and external piskvork engines.

pub mod api;
pub mod arena;
pub mod engine;
pub mod games;
