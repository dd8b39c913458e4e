//! Every integration test but the timing ones, in one binary: each test binary links the whole
//! crate, and on a 2-core machine fifteen links took most of a cold `cargo test --release`
//! (matklad's "delete cargo integration tests" layout). The latency tests are their own binary,
//! `tests/service_timing.rs`, so that nothing else runs beside them.
//!
//! - `analysis_agreement`: `analysis` agrees with the move, score and outcome it comes with.
//! - `search_equivalence`, `connect4_equivalence`, `gomoku_search_equivalence`: alpha-beta with
//!   every shortcut equals plain minimax; the table on or off changes nothing.
//! - `tictactoe_perfect`: exhaustive tic-tac-toe.
//! - `connect4_positions`: known-answer positions from Pascal Pons' benchmark sets
//!   (`tests/data/connect4/`).
//! - `connect4_opening`: the empty board gets the centre at every budget.
//! - `connect4_book`: the opening book agrees with the solver and answers the opening exactly.
//! - `search_limits`: every limit is honoured.
//! - `gomoku_rules`, `gomoku_tactics`, `gomoku_limits`, `gomoku_pbrain`, `gomoku_arena`,
//!   `gomoku_renju`, `gomoku_defence`, `gomoku_evaluation`: gomoku.
//! - `levels`: strength levels, seeds and deterministic answers through `POST /move`.
//! - `service`: the HTTP contract, in process and over a socket.
//! - `playground`: the web page's files, headers and openapi.yaml entries (the page itself is
//!   tested in a browser by `tests/browser/`, run by `.ci/browser`).
//! - `shared_cache`: replicas sharing answers through a real `redis-server` (`redis_support`
//!   starts the processes; its `redis_server` finds the program, or fetches Debian's).
//! - `live_progress`: `POST /move` streamed as Server-Sent Events, and the engine's progress
//!   hook; `sse_client` is the small SSE reader those tests use.
//! - `game_review`: `POST /review`, marks, outcome changes, illegal lists, budgets, streaming;
//!   `review_summary`: its per-player summary (marks counted, accuracy).
//! - `docs`: README.md and docs/: every relative link and repository path resolves, every
//!   `curl` example is answered without a 5xx, with the status the documents show; the code's
//!   comments name no stale path, section or anchor; the layers' "never"s hold in `src/`.
//! - `analyses`: batch analyses, in process and across replicas sharing a real Redis.
//! - `boards`: test boards written as their stones.
//! - `move_lists`: positions as move lists (JSON or notation) and moves named in answers.
//! - `node_signature`: both searchers visit the nodes `tests/data/node-signature.txt` records.
//! - `root_moves`: `searchmoves` and `exclude` restrict the root in every game.
//! - `multipv`: the k best moves with a line each, in the engine and through `POST /move`.
//! - `wdl`: win/draw/loss on every scored answer, exact when proven (tic-tac-toe exhaustively).
//! - `threat_labels`: gomoku's `threats` (what a move makes and blocks, a VCF's kind and length).

mod analyses;
mod analysis_agreement;
mod boards;
mod connect4_book;
mod connect4_equivalence;
mod connect4_opening;
mod connect4_positions;
mod docs;
mod game_review;
mod gomoku_arena;
mod gomoku_defence;
mod gomoku_evaluation;
mod gomoku_limits;
mod gomoku_move_order;
mod gomoku_pbrain;
mod gomoku_renju;
mod gomoku_rules;
mod gomoku_search_equivalence;
mod gomoku_tactics;
mod levels;
mod live_progress;
mod move_lists;
mod multipv;
mod node_signature;
mod playground;
mod redis_support;
mod review_summary;
mod root_moves;
mod search_equivalence;
mod search_limits;
mod service;
mod shared_cache;
mod sse_client;
mod threat_labels;
mod tictactoe_oracle;
mod tictactoe_perfect;
mod wdl;
