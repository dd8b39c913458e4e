//! The answer cache: a stored answer serves only a request it fully answers. Proven answers
//! serve any budget for the same question; `max_depth` and `max_nodes` are part of the
//! question; an answer stopped by the clock serves only budgets its search window covers.

use crate::service::common::*;
use serde_json::json;

#[tokio::test]
async fn a_proven_answer_is_served_from_the_cache() {
    let state = state();
    let body = json!({"game": "tictactoe", "board": ["X..", "...", "..."]});
    let first = post_move(&state, body.clone()).await;
    assert_eq!(first.body["cached"], false);
    assert_eq!(first.body["stop_reason"], "proven");
    let second = post_move(&state, body).await;
    assert_eq!(second.body["cached"], true);
    assert_eq!(second.body["move"], first.body["move"]);
    assert_eq!(second.body["nodes"], first.body["nodes"]);
    let metrics = get(&state, "/metrics").await.text;
    assert!(
        metrics.contains(r#"kibitz_cache_hits_total{game="tictactoe"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_proven_answer_serves_the_same_question_with_any_budget() {
    let state = state();
    post_move(
        &state,
        json!({"game": "tictactoe", "board": ["X..", "...", "..."]}),
    )
    .await;
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["x..", "...", "..."], "budget_ms": 5}),
    )
    .await;
    assert_eq!(
        reply.body["cached"], true,
        "lower-case board, same position"
    );
}

#[tokio::test]
async fn a_depth_limit_after_a_deeper_search_is_answered_at_that_depth() {
    let state = state();
    let board = json!([
        ".......", ".......", ".......", ".......", "...O...", "..XXO.."
    ]);
    let deep = post_move(
        &state,
        json!({"game": "connect4", "board": board, "budget_ms": 300}),
    )
    .await;
    assert!(deep.body["depth"].as_u64().unwrap() > 3, "{}", deep.body);
    let shallow = post_move(
        &state,
        json!({"game": "connect4", "board": board, "budget_ms": 300, "max_depth": 3}),
    )
    .await;
    assert_eq!(shallow.body["cached"], false);
    assert_eq!(shallow.body["depth"], 3);
    assert_eq!(shallow.body["stop_reason"], "depth");
}

#[tokio::test]
async fn a_node_limit_after_a_bigger_search_is_answered_within_it() {
    let state = state();
    let board = json!([
        ".......", ".......", ".......", ".......", "...O...", "..XXO.."
    ]);
    let big = post_move(
        &state,
        json!({"game": "connect4", "board": board, "budget_ms": 300}),
    )
    .await;
    let big_nodes = big.body["nodes"].as_u64().unwrap();
    let small = post_move(
        &state,
        json!({"game": "connect4", "board": board, "budget_ms": 300, "max_nodes": 50}),
    )
    .await;
    assert_eq!(small.body["cached"], false);
    // Stopped by the cap, or proven within it (the game's table is warm from the big search).
    let stop = small.body["stop_reason"].as_str().unwrap();
    assert!(["nodes", "proven", "book"].contains(&stop), "{stop}");
    let small_nodes = small.body["nodes"].as_u64().unwrap();
    assert!(
        small_nodes < big_nodes && small_nodes <= 2_000,
        "{small_nodes} nodes for max_nodes 50 (the big search took {big_nodes})"
    );
}

#[tokio::test]
async fn an_unproven_answer_serves_only_requests_within_its_limits() {
    let state = state();
    let ask = |depth: u32| json!({"game": "tictactoe", "board": ["...", "...", "..."], "max_depth": depth});
    let shallow = post_move(&state, ask(3)).await;
    assert_eq!(shallow.body["stop_reason"], "depth");
    assert_eq!(post_move(&state, ask(3)).await.body["cached"], true);
    let deeper = post_move(&state, ask(4)).await;
    assert_eq!(deeper.body["cached"], false, "depth 4 was not searched yet");
    assert_eq!(deeper.body["depth"], 4);
    let unlimited = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    assert_eq!(unlimited.body["cached"], false);
}

#[tokio::test]
async fn algorithm_and_analysis_are_part_of_the_question() {
    let state = state();
    let board = json!(["X..", "...", "..."]);
    post_move(&state, json!({"game": "tictactoe", "board": board})).await;
    let minimax = post_move(
        &state,
        json!({"game": "tictactoe", "board": board, "algorithm": "minimax"}),
    )
    .await;
    assert_eq!(minimax.body["cached"], false);
    let analysis = post_move(
        &state,
        json!({"game": "tictactoe", "board": board, "analysis": true}),
    )
    .await;
    assert_eq!(analysis.body["cached"], false);
    assert!(analysis.body["analysis"].is_array());
    let again = post_move(
        &state,
        json!({"game": "tictactoe", "board": board, "analysis": true}),
    )
    .await;
    assert_eq!(again.body["cached"], true);
    assert!(again.body["analysis"].is_array());
}

#[tokio::test]
async fn a_zero_entry_cache_never_serves() {
    let config = kibitz::config::Config {
        cache_entries: 0,
        ..kibitz::config::Config::for_tests()
    };
    let state = state_with(config);
    let body = json!({"game": "tictactoe", "board": ["X..", "...", "..."]});
    post_move(&state, body.clone()).await;
    assert_eq!(post_move(&state, body).await.body["cached"], false);
    assert_eq!(state.service.cached_answers(), 0);
}

#[test]
fn the_cache_stays_within_its_byte_bound() {
    use kibitz::engine::{Side, StopReason, TableStats};
    use kibitz::games::Cell;
    use kibitz::service::Answer;
    use kibitz::service::cache::{AnswerCache, CacheKey};
    use std::sync::Arc;
    let cache = AnswerCache::new(1000, 20_000);
    let answer = Arc::new(Answer {
        game: "tictactoe",
        to_move: Side::First,
        best: Cell { row: 0, col: 0 },
        score: 0,
        proof: None,
        depth: 1,
        nodes: 1,
        nps: 0,
        elapsed: Default::default(),
        window: Default::default(),
        stop_reason: StopReason::Time,
        table: TableStats::default(),
        fill_permille: 0,
        pv: vec![Cell { row: 0, col: 0 }; 100],
        iterations: Vec::new(),
        analysis: None,
        forbidden: None,
        lines: None,
        style: Default::default(),
        threats: None,
        threat_proof: None,
    });
    for i in 0..500 {
        let key = CacheKey::plain("tictactoe", format!("{i:09}"), Side::First);
        cache.put(key, Arc::clone(&answer));
    }
    // Each entry holds ~2 KB of PV: 20 KB keeps only a handful, however many were put.
    assert!(cache.len() < 20, "{}", cache.len());
    assert!(!cache.is_empty());
}
