//! kibitz: an HTTP service that suggests moves in board games.
//!
//! - [`api`]: the HTTP layer (`POST /tree` so far).
//! - [`engine`]: game-agnostic search (iterative-deepening alpha-beta, transposition table,
//!   move ordering, limits, reports). Knows nothing of HTTP.
//! - [`games`]: the games, each behind [`engine::Game`], and the board text format they share.

pub mod api;
pub mod engine;
pub mod games;
