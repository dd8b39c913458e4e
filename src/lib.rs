//! kibitz: an HTTP service that suggests moves in board games.
//!
//! The dependency arrow points one way: `api` → `service` → `games` → `engine`, with side doors
//! from `api` to `engine` and `games` (the report's vocabulary) and from `api` to `tree` (the
//! teaching trees stand alone).
//!
//! - [`engine`]: game-agnostic search (iterative-deepening alpha-beta, transposition table,
//!   move ordering, limits, reports). Knows nothing of HTTP.
//! - [`games`]: the games, each behind [`engine::Game`], and the board text format they share.
//! - [`service`]: the move service without HTTP: game dispatch, the search worker pool and its
//!   admission control, the answer cache, metrics.
//! - [`api`]: the HTTP API on axum: routes, JSON bodies, problem+json errors, middleware;
//!   [`api::app`] builds the router.
//! - [`config`]: the server's configuration (flags with `KIBITZ_*` environment fallbacks).
//! - [`server`]: binds, serves and shuts down gracefully; what `main` calls.
//! - [`tree`]: the teaching trees (`POST /tree`): bracket text, minimax and textbook alpha-beta
//!   over a small explicit tree. Their own product: they use neither the engine nor HTTP.
//! - [`tools`]: the binary's subcommands that are not the service (the gomoku arena, the
//!   piskvork adapter, the Connect-4 book's derivation). Nothing that serves requests imports it.

pub mod api;
pub mod config;
pub mod engine;
pub mod games;
pub mod server;
pub mod service;
pub mod tools;
pub mod tree;
