//! The bodies of cached answers, kept so that a hot answer is serialised once
//! (`kibitz::api::answer_bodies`): a hit serves its own answer's body, never one kept for an
//! answer the cache has dropped, and the bodies kept stay within their bound.

use crate::boards::{open_tictactoe_positions, tictactoe_rows};
use crate::service::common::*;
use kibitz::api::answer_bodies::MAX_BYTES;
use kibitz::config::Config;
use serde_json::{Value, json};

fn tictactoe(board: [&str; 3]) -> Value {
    json!({"game": "tictactoe", "board": board})
}

/// What a hit on the answer of `fresh` (a `cached: false` reply) must be.
fn as_hit(fresh: &Value) -> Value {
    let mut hit = fresh.clone();
    hit["cached"] = json!(true);
    hit["cached_from"] = json!("local");
    hit
}

#[tokio::test]
async fn a_hit_after_the_cache_dropped_its_answer_serves_the_new_answer() {
    let state = state_with(Config {
        cache_entries: 1,
        ..Config::for_tests()
    });
    let position = tictactoe(["X..", ".O.", "..."]);
    let first = post_move(&state, position.clone()).await.body;
    let hit = post_move(&state, position.clone()).await.body;
    assert_eq!(hit, as_hit(&first));
    // One entry: another position's answer takes the first one's place.
    post_move(&state, tictactoe(["...", "...", "..."])).await;
    let again = post_move(&state, position.clone()).await.body;
    assert_eq!(again["cached"], false);
    let hit_again = post_move(&state, position).await.body;
    assert_eq!(hit_again, as_hit(&again));
}

#[tokio::test]
async fn the_bodies_kept_stay_within_their_bound() {
    let state = state_with(Config {
        cache_entries: 10_000,
        cache_mb: Some(64),
        ..Config::for_tests()
    });
    let positions = open_tictactoe_positions();
    assert!(positions.len() > 2000, "{}", positions.len());
    for (cells, _) in &positions {
        let rows = tictactoe_rows(cells);
        let position = json!({"game": "tictactoe", "board": rows});
        post_move(&state, position.clone()).await;
        let hit = post_move(&state, position).await;
        assert_eq!(hit.body["cached"], true, "{rows:?}");
        assert!(state.answer_bodies.bytes() <= MAX_BYTES);
    }
    // Full: tic-tac-toe bodies are under 1 KiB, so the count binds before the bytes.
    assert_eq!(state.answer_bodies.len(), 1024);
}
