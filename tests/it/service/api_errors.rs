//! One test per error kind: every refusal is `application/problem+json` with the right status,
//! and says what is wrong and where.

use std::time::{Duration, Instant};

use crate::service::common::*;
use axum::body::Body;
use axum::http::Request;
use kibitz::api::app;
use kibitz::config::Config;
use kibitz::service::latency::JobTimes;
use serde_json::{Value, json};

fn assert_problem(reply: &Reply, status: u16) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.text);
    assert_eq!(content_type(reply), "application/problem+json");
    assert_eq!(reply.body["status"], status);
    assert!(
        reply.body["type"]
            .as_str()
            .unwrap()
            .starts_with("urn:kibitz:problem:")
    );
    assert!(reply.body["title"].is_string());
    assert!(reply.body["detail"].is_string());
}

fn pointer(reply: &Reply) -> &str {
    reply.body["errors"][0]["pointer"].as_str().unwrap_or("")
}

fn detail(reply: &Reply) -> &str {
    reply.body["detail"].as_str().unwrap_or("")
}

async fn raw_move(state: &kibitz::api::AppState, content_type: &str, body: &str) -> Reply {
    let request = Request::post("/move")
        .header("content-type", content_type)
        .body(Body::from(body.to_owned()))
        .unwrap();
    send(app(state.clone()), request).await
}

#[tokio::test]
async fn malformed_json_is_400() {
    let reply = raw_move(
        &state(),
        "application/json",
        r#"{"game": "tictactoe", "board": ["#,
    )
    .await;
    assert_problem(&reply, 400);
}

#[tokio::test]
async fn text_after_the_json_value_is_400() {
    let reply = raw_move(
        &state(),
        "application/json",
        r#"{"game": "tictactoe", "board": ["...", "...", "..."]} {"game": "gomoku"}"#,
    )
    .await;
    assert_problem(&reply, 400);
    assert_eq!(pointer(&reply), "");
    assert_eq!(detail(&reply), "invalid JSON body: trailing characters");
}

#[tokio::test]
async fn a_wrong_type_is_400_naming_the_field() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget_ms": "soon"}),
    )
    .await;
    assert_problem(&reply, 400);
    assert_eq!(pointer(&reply), "/budget_ms");
}

#[tokio::test]
async fn an_unknown_field_is_400_naming_it() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget": 5}),
    )
    .await;
    assert_problem(&reply, 400);
    assert_eq!(pointer(&reply), "/budget");
    assert!(detail(&reply).contains("unknown field `budget`"));
}

#[tokio::test]
async fn a_missing_field_is_400() {
    let reply = post_move(&state(), json!({"game": "tictactoe"})).await;
    assert_problem(&reply, 400);
    assert!(detail(&reply).contains("missing field `board`"));
}

#[tokio::test]
async fn a_wrong_content_type_is_415() {
    let reply = raw_move(&state(), "text/plain", r#"{"game":"tictactoe","board":[]}"#).await;
    assert_problem(&reply, 415);
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_413_before_reading() {
    let config = Config {
        max_body_bytes: 100,
        ..Config::for_tests()
    };
    let state = state_with(config);
    // The body claims 1 MB but sends nothing: only the header can have been judged.
    let request = Request::post("/move")
        .header("content-type", "application/json")
        .header("content-length", "1000000")
        .body(Body::empty())
        .unwrap();
    let reply = send(app(state), request).await;
    assert_problem(&reply, 413);
    assert_eq!(
        detail(&reply),
        "the body is larger than 100 bytes (KIBITZ_MAX_BODY_BYTES)"
    );
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_is_413() {
    let config = Config {
        max_body_bytes: 100,
        ..Config::for_tests()
    };
    let state = state_with(config);
    let chunks = (0..1000).map(|_| Ok::<_, std::io::Error>(vec![b' '; 100]));
    let request = Request::post("/move")
        .header("content-type", "application/json")
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap();
    let reply = send(app(state), request).await;
    assert_problem(&reply, 413);
    assert_eq!(
        detail(&reply),
        "the body is larger than 100 bytes (KIBITZ_MAX_BODY_BYTES)"
    );
}

#[tokio::test]
async fn each_route_s_413_names_its_own_setting() {
    let config = Config {
        tree_max_body_bytes: 200,
        batch_max_body_bytes: 300,
        ..Config::for_tests()
    };
    let state = state_with(config);
    for (path, setting, limit) in [
        ("/tree", "KIBITZ_TREE_MAX_BODY_BYTES", 200),
        ("/analyses", "KIBITZ_BATCH_MAX_BODY_BYTES", 300),
    ] {
        let request = Request::post(path)
            .header("content-type", "application/json")
            .header("content-length", "1000000")
            .body(Body::empty())
            .unwrap();
        let reply = send(app(state.clone()), request).await;
        assert_problem(&reply, 413);
        assert_eq!(
            detail(&reply),
            format!("the body is larger than {limit} bytes ({setting})")
        );
    }
}

#[tokio::test]
async fn an_unknown_game_is_422_naming_the_valid_ones() {
    let reply = post_move(&state(), json!({"game": "chess", "board": ["..."]})).await;
    assert_problem(&reply, 422);
    assert_eq!(pointer(&reply), "/game");
    assert!(detail(&reply).contains("tictactoe"));
}

#[tokio::test]
async fn a_wrong_board_shape_is_422() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["....", "....", "....", "...."]}),
    )
    .await;
    assert_problem(&reply, 422);
    assert_eq!(pointer(&reply), "/board");
    let ragged = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["...", "..", "..."]}),
    )
    .await;
    assert_problem(&ragged, 422);
}

#[tokio::test]
async fn an_illegal_character_is_422_naming_the_row() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["...", ".#.", "..."]}),
    )
    .await;
    assert_problem(&reply, 422);
    assert_eq!(pointer(&reply), "/board/1");
    assert!(detail(&reply).contains("'#'"));
}

#[tokio::test]
async fn impossible_stone_counts_are_422() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["XX.", "...", "..."]}),
    )
    .await;
    assert_problem(&reply, 422);
    assert!(detail(&reply).contains("X has 2 stones and O has 0"));
}

#[tokio::test]
async fn a_side_the_counts_contradict_is_422() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["X..", "...", "..."], "to_move": "X"}),
    )
    .await;
    assert_problem(&reply, 422);
}

#[tokio::test]
async fn a_finished_game_is_422_saying_who_won() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["XXX", "OO.", "..."]}),
    )
    .await;
    assert_problem(&reply, 422);
    assert!(
        detail(&reply).contains("already over: X has three in a row"),
        "{}",
        detail(&reply)
    );
}

#[tokio::test]
async fn a_board_over_the_size_limit_is_422() {
    let row = ".".repeat(1000);
    let reply = post_move(&state(), json!({"game": "tictactoe", "board": [row]})).await;
    assert_problem(&reply, 422);
    assert!(detail(&reply).contains("at most 3 on a side"));
}

#[tokio::test]
async fn a_budget_out_of_range_is_422() {
    for budget in [0, 60_001] {
        let reply = post_move(
            &state(),
            json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget_ms": budget}),
        )
        .await;
        assert_problem(&reply, 422);
        assert_eq!(pointer(&reply), "/budget_ms");
    }
}

#[tokio::test]
async fn a_depth_or_node_limit_out_of_range_is_422() {
    for (field, value) in [("max_depth", 0), ("max_depth", 500), ("max_nodes", 0)] {
        let mut body = json!({"game": "tictactoe", "board": ["...", "...", "..."]});
        body[field] = Value::from(value);
        let reply = post_move(&state(), body).await;
        assert_problem(&reply, 422);
        assert_eq!(pointer(&reply), format!("/{field}"));
    }
}

#[tokio::test]
async fn rules_a_game_does_not_have_are_422() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "rules": {"win_length": 3}}),
    )
    .await;
    assert_problem(&reply, 422);
    assert_eq!(pointer(&reply), "/rules/win_length");
}

#[tokio::test]
async fn an_unknown_path_is_a_404_problem() {
    let reply = get(&state(), "/nowhere").await;
    assert_problem(&reply, 404);
}

#[tokio::test]
async fn a_wrong_method_is_a_405_problem_with_allow() {
    let reply = get(&state(), "/move").await;
    assert_problem(&reply, 405);
    assert_eq!(reply.headers.get("allow").unwrap(), "POST");
}

#[tokio::test]
async fn no_worker_in_time_is_an_immediate_503_with_retry_after() {
    let config = Config {
        workers: 1,
        queue: 0,
        ..Config::for_tests()
    };
    let state = state_with(config);
    // Occupy the only worker for a while.
    let pool = state.service.pool().clone();
    let busy = tokio::spawn(async move {
        let times = JobTimes::for_budget(Instant::now(), Duration::from_millis(500));
        pool.run(times, || std::thread::sleep(Duration::from_millis(300)))
            .await
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let start = Instant::now();
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["X..", "...", "..."], "budget_ms": 1000}),
    )
    .await;
    let waited = start.elapsed();
    assert_problem(&reply, 503);
    assert_eq!(reply.headers.get("retry-after").unwrap(), "1");
    assert!(waited < Duration::from_millis(50), "shed after {waited:?}");
    busy.await.unwrap().unwrap();
}

async fn boom() -> &'static str {
    panic!("secret cause")
}

#[tokio::test]
async fn a_panicking_handler_is_a_500_problem_without_the_cause() {
    use axum::routing::get as get_route;
    // The same layers as the app, around a route that panics.
    let router = axum::Router::new().route("/boom", get_route(boom)).layer(
        tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            axum::response::IntoResponse::into_response(kibitz::api::ApiError::Internal(
                "a handler panicked".into(),
            ))
        }),
    );
    let reply = send(router, Request::get("/boom").body(Body::empty()).unwrap()).await;
    assert_problem(&reply, 500);
    assert!(!reply.text.contains("secret"));
}

#[tokio::test]
async fn a_number_too_large_for_its_field_is_refused_as_sent_not_clamped() {
    // Before: 1e30 was read as 2^64 - 1 and the error named that number, which nobody sent.
    let state = state();
    for (field, sent, echoed) in [
        ("budget_ms", json!(1e30), "1e+30"),
        ("level", json!(1e20), "1e+20"),
        ("max_depth", json!(1e20), "1e+20"),
    ] {
        let mut body = json!({"game": "tictactoe", "board": ["...", "...", "..."]});
        body[field] = sent;
        let reply = post_move(&state, body).await;
        // An integer, as the schema asks, but out of range: 422, as any range error.
        assert_problem(&reply, 422);
        assert_eq!(pointer(&reply), format!("/{field}"));
        assert!(
            detail(&reply).contains(echoed),
            "{field}: {}",
            detail(&reply)
        );
        // The number is named as sent, never as a clamped value, and the range is given.
        assert!(
            !detail(&reply).contains("is 18446744073709551615")
                && !detail(&reply).contains("is 4294967295"),
            "{field}: {}",
            detail(&reply)
        );
        assert!(
            detail(&reply).contains("it must be a whole number from 0 to "),
            "{field}: {}",
            detail(&reply)
        );
    }
    // A negative whole number is out of range as 0 is (both 422), not malformed; a fraction
    // is no whole number at all (400).
    for (sent, status) in [(json!(-1), 422), (json!(0), 422), (json!(-1.5), 400)] {
        let body = json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget_ms": sent});
        let reply = post_move(&state, body).await;
        assert_problem(&reply, status);
        assert_eq!(pointer(&reply), "/budget_ms", "{sent}");
    }
}

#[tokio::test]
async fn a_level_out_of_range_is_refused_naming_the_level_sent() {
    // Before: 2^32 was clamped to 4294967295 and the error named that number.
    let state = state();
    let body =
        json!({"game": "tictactoe", "board": ["...", "...", "..."], "level": 4_294_967_296u64});
    let reply = post_move(&state, body).await;
    assert_problem(&reply, 422);
    assert_eq!(pointer(&reply), "/level");
    assert!(
        detail(&reply).contains("level is 4294967296;"),
        "{}",
        detail(&reply)
    );
}
