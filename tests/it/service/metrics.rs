//! `GET /metrics`: both exposition formats by `Accept`, and that every request is counted,
//! those whose client went away included, with the gauges of what is open or queued.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use serde_json::{Value, json};

use crate::boards::quiet_opening;
use crate::service::common::*;
use crate::sse_client::post_events;
use kibitz::api::{AppState, app};
use kibitz::config::Config;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /metrics` in process, with `accept` when given.
async fn scrape(state: &AppState, accept: Option<&str>) -> Reply {
    let mut request = Request::get("/metrics");
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    send(app(state.clone()), request.body(Body::empty()).unwrap()).await
}

/// `GET /metrics` over the socket, as a scraper without preferences.
async fn scrape_server(client: &reqwest::Client, server: &Running) -> String {
    let response = client.get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

/// The value of the sample written `series` (name and labels exactly as rendered), if any.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|value| value.trim().parse().expect("a number"))
}

/// Scrapes until `series` reads `want`, for at most two seconds; returns the last text.
async fn scrape_until(
    client: &reqwest::Client,
    server: &Running,
    series: &str,
    want: f64,
) -> String {
    let start = Instant::now();
    loop {
        let text = scrape_server(client, server).await;
        if sample(&text, series) == Some(want) || start.elapsed() > Duration::from_secs(2) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A 15x15 gomoku opening without threats: every search spends its whole budget.
fn quiet_gomoku(budget_ms: u64) -> Value {
    json!({"game": "gomoku", "board": quiet_opening(), "budget_ms": budget_ms})
}

fn one_worker_no_cache(queue: usize) -> Config {
    Config {
        workers: 1,
        queue,
        cache_entries: 0,
        ..Config::for_tests()
    }
}

#[tokio::test]
async fn metrics_are_openmetrics_when_asked_for_and_the_prometheus_text_format_otherwise() {
    let state = state();
    post_move(
        &state,
        json!({"game": "tictactoe", "board": ["...", "...", "..."]}),
    )
    .await;
    let prometheus = "application/openmetrics-text;version=1.0.0,\
        application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    for accept in [Some("application/openmetrics-text"), Some(prometheus)] {
        let reply = scrape(&state, accept).await;
        assert_eq!(reply.status, 200);
        assert_eq!(content_type(&reply), OPENMETRICS, "{accept:?}");
        assert!(reply.text.ends_with("# EOF\n"), "{accept:?}");
        assert!(reply.text.contains("# TYPE kibitz_move_requests counter\n"));
    }
    for accept in [None, Some("*/*"), Some("text/plain")] {
        let reply = scrape(&state, accept).await;
        assert_eq!(reply.status, 200);
        assert_eq!(content_type(&reply), PROMETHEUS_TEXT, "{accept:?}");
        assert_eq!(reply.headers["vary"], "accept");
        let text = &reply.text;
        assert!(!text.contains("# EOF"), "{accept:?}:\n{text}");
        for counter in [
            "kibitz_http_requests_total",
            "kibitz_move_requests_total",
            "kibitz_cache_misses_total",
            "kibitz_searches_cancelled_total",
            "process_cpu_seconds_total",
        ] {
            let typed = format!("# TYPE {counter} counter\n");
            assert!(text.contains(&typed), "{accept:?}: no {typed} in\n{text}");
        }
        assert!(text.contains("# TYPE kibitz_build_info gauge\n"), "{text}");
        let build = format!(
            "kibitz_build_info{{version=\"{}\"",
            env!("CARGO_PKG_VERSION")
        );
        assert!(text.contains(&build), "{text}");
        assert!(sample(text, "process_resident_memory_bytes").is_some_and(|b| b > 1e6));
        assert!(sample(text, "process_open_fds").is_some_and(|n| n >= 3.0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deterministic_search_that_overran_its_budget_is_counted_with_its_status_and_reason() {
    let state = state_with(Config {
        cache_entries: 0,
        ..Config::for_tests()
    });
    // A gomoku node limit far beyond what 20 ms can search.
    let mut request = quiet_gomoku(20);
    request["deterministic"] = json!(true);
    request["max_nodes"] = json!(1_000_000_000u64);
    let reply = post_move(&state, request).await;
    assert!(reply.text.contains("node limit"), "{}", reply.text);
    let text = scrape(&state, None).await.text;
    let status = reply.status.as_u16();
    let counted = format!("kibitz_move_requests_total{{game=\"gomoku\",status=\"{status}\"}}");
    assert_eq!(sample(&text, &counted), Some(1.0), "{text}");
    let refused = r#"kibitz_rejections_total{reason="deterministic_overrun"}"#;
    assert_eq!(sample(&text, refused), Some(1.0), "{text}");
}

#[tokio::test]
async fn a_stream_its_client_abandoned_is_counted_as_a_499_and_closes_its_gauge() {
    let server = start_server(one_worker_no_cache(0)).await;
    let client = reqwest::Client::new();
    let mut reader = post_events(&server.url("/move"), &quiet_gomoku(30_000)).await;
    assert_eq!(reader.status(), 200);
    assert_eq!(reader.next().await.expect("an iteration").name, "iteration");
    let open = r#"kibitz_event_streams_open{route="/move"}"#;
    assert_eq!(
        sample(&scrape_server(&client, &server).await, open),
        Some(1.0)
    );
    drop(reader);
    let abandoned = r#"kibitz_move_requests_total{game="gomoku",status="499"}"#;
    let text = scrape_until(&client, &server, abandoned, 1.0).await;
    assert_eq!(sample(&text, abandoned), Some(1.0), "{text}");
    assert_eq!(sample(&text, open), Some(0.0), "{text}");
    // An abandoned request has no answer, so no answer latency.
    assert_eq!(
        sample(
            &text,
            r#"kibitz_move_duration_seconds_count{game="gomoku"}"#
        ),
        None,
        "{text}"
    );
}

#[tokio::test]
async fn a_json_move_its_client_abandoned_is_counted_as_a_499() {
    let server = start_server(one_worker_no_cache(0)).await;
    let gave_up = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&quiet_gomoku(5_000))
        .timeout(Duration::from_millis(50))
        .send()
        .await;
    assert!(gave_up.is_err());
    let client = reqwest::Client::new();
    let abandoned = r#"kibitz_move_requests_total{game="gomoku",status="499"}"#;
    let text = scrape_until(&client, &server, abandoned, 1.0).await;
    assert_eq!(sample(&text, abandoned), Some(1.0), "{text}");
}

#[tokio::test]
async fn reviews_are_counted_by_game_and_status_with_their_plies_and_durations() {
    let server = start_server(Config::for_tests()).await;
    let client = reqwest::Client::new();
    let cell = |row: usize, col: usize| json!({"row": row, "col": col});
    let game = json!({"game": "tictactoe", "moves": [cell(1, 1), cell(0, 1), cell(0, 0)]});
    let answered = client
        .post(server.url("/review"))
        .json(&game)
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    let streamed = post_events(&server.url("/review"), &game)
        .await
        .collect()
        .await;
    assert_eq!(streamed.last().map(|e| e.name.as_str()), Some("review"));
    let illegal = json!({"game": "tictactoe", "moves": [cell(1, 1), cell(1, 1)]});
    let refused = client
        .post(server.url("/review"))
        .json(&illegal)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let text = scrape_until(
        &client,
        &server,
        r#"kibitz_event_streams_open{route="/review"}"#,
        0.0,
    )
    .await;
    for (series, want) in [
        (
            r#"kibitz_review_requests_total{game="tictactoe",status="200"}"#,
            2.0,
        ),
        (
            r#"kibitz_review_requests_total{game="tictactoe",status="422"}"#,
            1.0,
        ),
        (r#"kibitz_review_plies_total{game="tictactoe"}"#, 6.0),
        (
            r#"kibitz_review_duration_seconds_count{game="tictactoe"}"#,
            3.0,
        ),
        (r#"kibitz_event_streams_open{route="/review"}"#, 0.0),
    ] {
        assert_eq!(sample(&text, series), Some(want), "{series} in\n{text}");
    }
}

#[tokio::test]
async fn open_connections_are_counted_until_they_close() {
    let server = start_server(Config::for_tests()).await;
    // The scraper's own keep-alive connection is one of those counted.
    let client = reqwest::Client::new();
    let gauge = "kibitz_http_connections_open";
    assert_eq!(
        sample(&scrape_server(&client, &server).await, gauge),
        Some(1.0)
    );
    let idle: Vec<_> =
        futures_util::future::join_all((0..3).map(|_| tokio::net::TcpStream::connect(server.addr)))
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
    let text = scrape_until(&client, &server, gauge, 4.0).await;
    assert_eq!(sample(&text, gauge), Some(4.0), "{text}");
    drop(idle);
    let text = scrape_until(&client, &server, gauge, 1.0).await;
    assert_eq!(sample(&text, gauge), Some(1.0), "{text}");
}

#[tokio::test]
async fn a_search_waiting_for_the_busy_worker_is_counted_as_queued() {
    let state = state_with(one_worker_no_cache(4));
    let busy = tokio::spawn(post_move_owned(state.clone(), quiet_gomoku(400)));
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Guaranteed a worker in time (the busy one ends at 400 ms), so it queues.
    let waiting = tokio::spawn(post_move_owned(state.clone(), quiet_gomoku(1_000)));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let text = scrape(&state, None).await.text;
    assert_eq!(sample(&text, "kibitz_searches_queued"), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, "kibitz_searches_in_flight"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(busy.await.unwrap(), 200);
    assert_eq!(waiting.await.unwrap(), 200);
    let text = scrape(&state, None).await.text;
    assert_eq!(sample(&text, "kibitz_searches_queued"), Some(0.0), "{text}");
}

/// `POST /move` in process from a task of its own; its status.
async fn post_move_owned(state: AppState, body: Value) -> u16 {
    post_move(&state, body).await.status.as_u16()
}
