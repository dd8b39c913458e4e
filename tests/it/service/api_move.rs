//! `POST /move` in process (tower `oneshot`): what a good request gets back.

use crate::boards::board15;
use crate::service::common::*;
use serde_json::json;

#[tokio::test]
async fn a_winning_move_is_proven_with_the_public_score() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = &reply.body;
    assert_eq!(body["move"], json!({"row": 0, "col": 2, "notation": "c3"}));
    assert_eq!(body["to_move"], "X");
    assert_eq!(body["outcome"], "win");
    assert_eq!(body["plies_to_end"], 1);
    assert_eq!(body["score"], 1_000_000 - 1);
    assert_eq!(body["stop_reason"], "proven");
    assert_eq!(body["cached"], false);
    assert_eq!(body["pv"][0], body["move"]);
}

#[tokio::test]
async fn a_lost_position_reports_the_loss_and_its_length() {
    let state = state();
    // O to move; X threatens two lines at once.
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["X.X", ".O.", "X.O"]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["outcome"], "loss");
    let plies = reply.body["plies_to_end"].as_i64().unwrap();
    assert_eq!(reply.body["score"], -(1_000_000 - plies));
}

#[tokio::test]
async fn the_empty_board_is_a_proven_draw() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["outcome"], "draw");
    assert_eq!(reply.body["score"], 0);
    assert!(reply.body.get("analysis").is_none());
}

#[tokio::test]
async fn lower_case_letters_and_an_explicit_side_are_accepted() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["x..", "...", "..."], "to_move": "O"}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["to_move"], "O");
}

#[tokio::test]
async fn analysis_scores_every_legal_move_best_first() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."], "analysis": true}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let analysis = reply.body["analysis"].as_array().unwrap();
    assert_eq!(analysis.len(), 5);
    assert_eq!(
        analysis[0]["move"],
        json!({"row": 0, "col": 2, "notation": "c3"})
    );
    assert_eq!(analysis[0]["outcome"], "win");
    let scores: Vec<i64> = analysis
        .iter()
        .map(|m| m["score"].as_i64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[tokio::test]
async fn minimax_visits_more_nodes_than_alphabeta_at_the_same_depth() {
    let state = state();
    let board = json!(["...", "...", "..."]);
    let nodes = |reply: &Reply| reply.body["iterations"][3]["nodes"].as_u64().unwrap();
    let minimax = post_move(
        &state,
        json!({"game": "tictactoe", "board": board, "algorithm": "minimax", "max_depth": 4}),
    )
    .await;
    let alphabeta = post_move(
        &state,
        json!({"game": "tictactoe", "board": board, "algorithm": "alphabeta", "max_depth": 4}),
    )
    .await;
    assert_eq!(minimax.status, 200, "{}", minimax.text);
    assert_eq!(minimax.body["depth"], 4);
    assert_eq!(minimax.body["stop_reason"], "depth");
    assert_eq!(minimax.body["iterations"].as_array().unwrap().len(), 4);
    assert!(nodes(&minimax) > nodes(&alphabeta));
    assert_eq!(minimax.body["tt"]["probes"], 0);
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    assert!(reply.headers.contains_key("x-request-id"));
    let reply = get(&state, "/nowhere").await;
    assert!(reply.headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn games_lists_each_game_with_its_board_rules_and_limits() {
    let state = state();
    let reply = get(&state, "/games").await;
    assert_eq!(reply.status, 200);
    let games = reply.body["games"].as_array().unwrap();
    let ttt = games.iter().find(|g| g["name"] == "tictactoe").unwrap();
    assert_eq!(ttt["board"]["max_rows"], 3);
    assert_eq!(ttt["limits"]["max_budget_ms"], 60_000);
    assert!(ttt["rules"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn health_and_readiness_answer() {
    let state = state();
    assert_eq!(get(&state, "/healthz").await.body["status"], "ok");
    let ready = get(&state, "/readyz").await;
    assert_eq!(ready.status, 200);
    assert_eq!(ready.body["workers"], 2);
}

#[tokio::test]
async fn readiness_turns_503_when_shutting_down() {
    let state = state();
    state
        .ready
        .store(false, std::sync::atomic::Ordering::Relaxed);
    let reply = get(&state, "/readyz").await;
    assert_eq!(reply.status, 503);
    assert_eq!(content_type(&reply), "application/problem+json");
}

#[tokio::test]
async fn metrics_count_requests_by_game_and_status() {
    let state = state();
    post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    post_move(
        &state,
        json!({"game": "nope", "board": ["...", "...", "..."]}),
    )
    .await;
    let reply = get(&state, "/metrics").await;
    assert_eq!(reply.status, 200);
    // No Accept: the Prometheus text format, which every scraper reads.
    assert_eq!(
        content_type(&reply),
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = &reply.text;
    for needle in [
        r#"kibitz_move_requests_total{game="tictactoe",status="200"} 1"#,
        r#"kibitz_move_requests_total{game="unknown",status="422"} 1"#,
        "kibitz_move_duration_seconds_bucket",
        "kibitz_search_depth_bucket",
        "kibitz_search_nodes_bucket",
        "kibitz_cache_misses_total",
        "kibitz_searches_in_flight",
        "kibitz_http_requests_total",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
}

#[tokio::test]
async fn the_openapi_document_is_served() {
    let state = state();
    let reply = get(&state, "/openapi.yaml").await;
    assert_eq!(reply.status, 200);
    assert_eq!(content_type(&reply), "application/yaml");
    assert!(reply.text.starts_with("openapi: 3.1"));
}

#[tokio::test]
async fn cors_headers_are_sent_for_configured_origins_only() {
    let config = kibitz::config::Config {
        cors_origins: vec!["https://board.example".into()],
        ..kibitz::config::Config::for_tests()
    };
    let state = state_with(config);
    let request = |origin: &str| {
        axum::http::Request::get("/healthz")
            .header("origin", origin)
            .body(axum::body::Body::empty())
            .unwrap()
    };
    let allowed = send(
        kibitz::api::app(state.clone()),
        request("https://board.example"),
    )
    .await;
    assert_eq!(
        allowed.headers.get("access-control-allow-origin").unwrap(),
        "https://board.example"
    );
    let other = send(kibitz::api::app(state), request("https://evil.example")).await;
    assert!(other.headers.get("access-control-allow-origin").is_none());
}

/// Black to move on 15x15 with a double three at row 4, col 4 (white's stones in the corners).
fn renju_double_three_board() -> Vec<String> {
    board15(&[
        (2, 4, 'X'),
        (3, 4, 'X'),
        (4, 2, 'X'),
        (4, 3, 'X'),
        (0, 14, 'O'),
        (14, 14, 'O'),
        (14, 0, 'O'),
        (0, 10, 'O'),
    ])
}

#[tokio::test]
async fn renju_analysis_lists_blacks_forbidden_points_apart_from_the_scored_moves() {
    let state = state();
    let reply = post_move(
        &state,
        json!({"game": "gomoku", "board": renju_double_three_board(),
               "rules": {"variant": "renju"}, "analysis": true, "max_depth": 1}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let point = json!({"row": 4, "col": 4, "notation": "e11"});
    let forbidden = reply.body["forbidden"]
        .as_array()
        .expect("a forbidden list");
    assert!(
        forbidden.contains(&json!({"cell": point, "reason": "double_three"})),
        "{forbidden:?}"
    );
    let analysis = reply.body["analysis"].as_array().unwrap();
    assert!(analysis.iter().all(|m| m["move"] != point));
    assert_eq!(analysis.len() + forbidden.len(), 225 - 8);
}

#[tokio::test]
async fn forbidden_points_appear_only_with_analysis_under_renju() {
    let state = state();
    let board = renju_double_three_board();
    let free_style = post_move(
        &state,
        json!({"game": "gomoku", "board": board, "analysis": true, "max_depth": 1}),
    )
    .await;
    assert_eq!(free_style.status, 200, "{}", free_style.text);
    assert!(free_style.body.get("forbidden").is_none());
    let no_analysis = post_move(
        &state,
        json!({"game": "gomoku", "board": board, "rules": {"variant": "renju"}, "max_depth": 1}),
    )
    .await;
    assert_eq!(no_analysis.status, 200, "{}", no_analysis.text);
    assert!(no_analysis.body.get("forbidden").is_none());
}
