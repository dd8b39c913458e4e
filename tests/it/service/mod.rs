//! The service's HTTP contract and runtime behaviour. The timing tests live apart, in
//! `tests/service_timing.rs` (their own binary), so no other test competes with them for the
//! cores.
//!
//! - `api_move`: `POST /move` and the meta routes in process (`oneshot`).
//! - `answer_bodies`: cached answers' bodies, kept: the right one served, within bounds.
//! - `api_errors`: one test per error kind.
//! - `bookkeeping`: what every request gets: log lines, metrics of a panic, ids in errors.
//! - `api_games`: Connect-4, gomoku and `POST /tree` answers a client can check.
//! - `cache`: the answer cache.
//! - `clients`: API keys (401), identities a client cannot choose, fair share under a flood.
//! - `fair_tree`: `/tree`'s slots shared fairly between clients under a flood of big trees.
//! - `rate_limits`: the `RateLimit` headers on streamed, cached and batch answers.
//! - `metrics`: `/metrics` in both exposition formats; every request counted, abandoned ones
//!   too; the open and queued gauges.
//! - `openapi_contract`: real responses against openapi.yaml's schemas.
//! - `socket`: the real server on port 0, and the binary itself.
//! - `exposure`: the binary against idle, slow, stalled and half-sent clients, and SIGTERM.

mod answer_bodies;
mod api_errors;
mod api_games;
mod api_move;
mod bookkeeping;
mod cache;
mod clients;
pub mod common;
mod exposure;
mod fair_tree;
mod metrics;
mod openapi_contract;
mod rate_limits;
mod socket;
