//! Live progress: `POST /move` with `Accept: text/event-stream` over a real socket, read by the
//! SSE client of `sse_client`, and the engine's progress hook beneath it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::boards::quiet_opening;
use crate::service::common::*;
use crate::sse_client::{SseEvent, post_events};
use kibitz::config::Config;
use kibitz::engine::{
    IterationInfo, Move, Progress, SearchLimits, SearchOptions, TranspositionTable, search,
};
use kibitz::games::tictactoe::TicTacToe;

/// A 15x15 gomoku opening: no threats, so every budget is spent deepening.
fn gomoku(budget_ms: u64) -> Value {
    json!({"game": "gomoku", "board": quiet_opening(), "budget_ms": budget_ms})
}

/// Checks `instance` against `#/components/schemas/{name}` of openapi.yaml.
pub fn assert_schema(name: &str, instance: &Value) {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": spec()["components"],
        "$ref": format!("#/components/schemas/{name}"),
    });
    let validator = jsonschema::draft202012::new(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{instance}");
}

fn names(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.name.as_str()).collect()
}

#[tokio::test]
async fn iterations_arrive_in_increasing_depth_while_the_engine_thinks_then_the_answer() {
    let server = start_server(Config {
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await;
    let reader = post_events(&server.url("/move"), &gomoku(800)).await;
    assert_eq!(reader.status(), 200);
    assert!(reader.content_type().starts_with("text/event-stream"));
    let events = reader.collect().await;
    let (answer, iterations) = events.split_last().expect("events");
    assert_eq!(answer.name, "answer", "{:?}", names(&events));
    assert!(iterations.len() >= 3, "{:?}", names(&events));
    assert!(iterations.iter().all(|e| e.name == "iteration"));
    for pair in iterations.windows(2) {
        let (a, b) = (&pair[0].data, &pair[1].data);
        assert!(b["depth"].as_u64() > a["depth"].as_u64(), "{a} then {b}");
        assert!(b["nodes"].as_u64() >= a["nodes"].as_u64(), "{a} then {b}");
        assert!(
            b["elapsed_ms"].as_f64() >= a["elapsed_ms"].as_f64(),
            "{a} then {b}"
        );
    }
    for event in iterations {
        assert_schema("MoveIterationEvent", &event.data);
        assert_eq!(event.data["pv"][0], event.data["move"], "{}", event.data);
    }
    assert_schema("MoveResponse", &answer.data);
    // The iterations streamed are the answer's, depth for depth and move for move.
    let streamed: Vec<(&Value, &Value)> = iterations
        .iter()
        .map(|e| (&e.data["depth"], &e.data["move"]))
        .collect();
    let reported: Vec<(&Value, &Value)> = answer.data["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|it| (&it["depth"], &it["move"]))
        .collect();
    assert_eq!(streamed, reported);
    // The first iteration came while the engine was still thinking, well before the answer,
    // and the answer kept the latency promise (generous bound: the machine is shared).
    assert!(
        iterations[0].at + Duration::from_millis(100) < answer.at,
        "first iteration at {:?}, answer at {:?}",
        iterations[0].at,
        answer.at
    );
    assert!(
        answer.at < Duration::from_millis(800 + 400),
        "{:?}",
        answer.at
    );
}

#[tokio::test]
async fn the_answer_event_is_the_json_answer() {
    // Two fresh servers so that both searches start from an empty table and count alike.
    let config = || Config {
        cache_entries: 0,
        ..Config::for_tests()
    };
    let (streaming, plain) = (start_server(config()).await, start_server(config()).await);
    let body = json!({"game": "tictactoe", "board": ["X..", "...", "..."]});
    let events = post_events(&streaming.url("/move"), &body)
        .await
        .collect()
        .await;
    let answer = events.last().expect("events");
    assert_eq!(answer.name, "answer");
    let json_answer: Value = reqwest::Client::new()
        .post(plain.url("/move"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Same fields in the same order (same serializer); only the clock readings differ.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&answer.data), keys(&json_answer));
    let without_clock = |v: &Value| {
        let mut v = v.clone();
        v["elapsed_ms"] = Value::Null;
        v["nps"] = Value::Null;
        v
    };
    assert_eq!(without_clock(&answer.data), without_clock(&json_answer));
    // Tic-tac-toe from one X is a proven draw found by iterative deepening: one event a depth.
    assert_eq!(answer.data["outcome"], "draw");
    assert_eq!(
        events.len() - 1,
        answer.data["iterations"].as_array().unwrap().len()
    );
}

#[tokio::test]
async fn a_cached_answer_streams_only_the_answer_event() {
    let server = start_server(Config::for_tests()).await;
    let body = json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]});
    let first = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let events = post_events(&server.url("/move"), &body)
        .await
        .collect()
        .await;
    assert_eq!(names(&events), ["answer"]);
    assert_eq!(events[0].data["cached"], true);
    assert_eq!(events[0].data["cached_from"], "local");
    assert_schema("MoveResponse", &events[0].data);
}

/// A server whose one worker, once busy, sheds every other search, and that answers nothing
/// from a cache: every request is a search of its own.
async fn one_worker_no_queue_no_cache() -> Running {
    start_server(Config {
        workers: 1,
        queue: 0,
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await
}

#[tokio::test]
async fn errors_before_the_stream_starts_are_problem_json() {
    let server = one_worker_no_queue_no_cache().await;
    let url = server.url("/move");
    let problem = |reader: &crate::sse_client::EventReader| {
        assert_eq!(reader.content_type(), "application/problem+json");
    };
    // 422: a board no game reaches.
    let bad_board = post_events(
        &url,
        &json!({"game": "tictactoe", "board": ["XX.", "...", "..."]}),
    )
    .await;
    assert_eq!(bad_board.status(), 422);
    problem(&bad_board);
    let text = bad_board.text().await;
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["errors"][0]["pointer"], "/board");
    // 422: a budget out of range.
    let budget = post_events(
        &url,
        &json!({"game": "tictactoe", "board": ["...", "...", "..."], "budget_ms": 0}),
    )
    .await;
    assert_eq!(budget.status(), 422);
    problem(&budget);
    // 400: not the request's shape.
    let malformed = post_events(&url, &json!({"game": "tictactoe"})).await;
    assert_eq!(malformed.status(), 400);
    problem(&malformed);
    // 503: the one worker is busy with a long stream and nothing may queue.
    let mut busy = post_events(&url, &gomoku(10_000)).await;
    assert_eq!(busy.status(), 200);
    assert_eq!(busy.next().await.expect("an iteration").name, "iteration");
    let shed = post_events(&url, &gomoku(500)).await;
    assert_eq!(shed.status(), 503);
    problem(&shed);
    assert!(shed.response.headers().contains_key("retry-after"));
}

/// Waits up to `limit` for `done`, polling; returns how long it took, or `None`.
async fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

#[tokio::test]
async fn a_client_that_drops_the_stream_cancels_its_search_and_frees_the_worker() {
    let server = one_worker_no_queue_no_cache().await;
    let metrics = Arc::clone(server.state.service.metrics());
    let mut reader = post_events(&server.url("/move"), &gomoku(30_000)).await;
    assert_eq!(reader.status(), 200);
    assert_eq!(reader.next().await.expect("an iteration").name, "iteration");
    assert_eq!(metrics.searches_in_flight.get(), 1);
    drop(reader);
    let freed = wait_for(Duration::from_secs(5), || {
        metrics.searches_cancelled.get() == 1 && metrics.searches_in_flight.get() == 0
    })
    .await;
    // Generous: the cancel flag is read every 1024 nodes, well under a millisecond.
    assert!(
        freed.is_some_and(|t| t < Duration::from_secs(2)),
        "the search went on after the client left: {freed:?}"
    );
    // The only worker takes the next request at once instead of shedding it.
    let next = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&json!({"game": "tictactoe", "board": ["X..", "...", "..."], "budget_ms": 500}))
        .send()
        .await
        .unwrap();
    assert_eq!(next.status(), 200);
}

#[tokio::test]
async fn a_stream_is_not_cut_by_the_header_timeout() {
    let server = start_server(Config {
        header_timeout_ms: 150,
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await;
    let events = post_events(&server.url("/move"), &gomoku(900))
        .await
        .collect()
        .await;
    let answer = events.last().expect("events");
    assert_eq!(answer.name, "answer", "{:?}", names(&events));
    // The stream outlived the header timeout well beyond it. Not the whole budget: gomoku's
    // main search does not start an iteration it does not expect to finish (its hard limit is
    // 85 % of the turn, and an iteration is predicted at 1.5 times the last), so it may answer
    // from about a third of the 900 ms on, never before 250 ms unless it proved a result.
    assert!(answer.at > Duration::from_millis(250), "{:?}", answer.at);
}

/// What the hook saw of one iteration: depth, best move, principal variation, nodes so far.
type Seen = (u32, Move, Vec<Move>, u64);

#[test]
fn the_progress_hook_sees_each_iteration_of_the_main_thread_once() {
    for helper_threads in [0, 1] {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let sink = Arc::clone(&seen);
        let limits = SearchLimits {
            progress: Some(Progress::new(move |info: &IterationInfo<'_>| {
                sink.lock().unwrap().push((
                    info.depth,
                    info.best_move,
                    info.pv.to_vec(),
                    info.nodes,
                ));
            })),
            ..SearchLimits::default()
        };
        let options = SearchOptions {
            helper_threads,
            ..SearchOptions::default()
        };
        let table = TranspositionTable::with_megabytes(1);
        let report = search(&TicTacToe::new(), &limits, options, &table);
        let seen = seen.lock().unwrap();
        let depths: Vec<u32> = seen.iter().map(|s| s.0).collect();
        let reported: Vec<u32> = report.iterations.iter().map(|it| it.depth).collect();
        assert_eq!(depths, reported, "helpers: {helper_threads}");
        for (s, it) in seen.iter().zip(&report.iterations) {
            assert_eq!(s.1, it.best_move);
            assert_eq!(s.2.first(), Some(&it.best_move));
        }
        assert_eq!(seen.last().unwrap().2, report.pv);
        assert!(seen.windows(2).all(|w| w[1].3 > w[0].3), "nodes grow");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_stream_opens_at_once_and_answers_when_its_worker_frees() {
    // Before: a stream waiting for a worker sent no byte, not even its status line, until the
    // worker started (clients and proxies timed out on seconds of silence).
    let server = start_server(Config {
        workers: 1,
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await;
    let url = server.url("/move");
    let mut busy = post_events(&url, &gomoku(1_500)).await;
    assert_eq!(busy.next().await.expect("an iteration").name, "iteration");
    // The worker frees within 1.5 s, before this search's latest start (3 s): it is sure to run.
    let mut board = gomoku(4_000);
    board["board"][3] = json!("...X...........");
    let sent = Instant::now();
    let queued = post_events(&url, &board).await;
    let opened = sent.elapsed();
    assert_eq!(queued.status(), 200);
    assert!(queued.content_type().starts_with("text/event-stream"));
    assert!(
        opened < Duration::from_millis(700),
        "the stream opened after {opened:?}, while queued behind a 1.5 s search"
    );
    let events = queued.collect().await;
    assert_eq!(events.last().map(|e| e.name.as_str()), Some("answer"));
    assert!(events.last().unwrap().at > Duration::from_millis(1_000));
}
