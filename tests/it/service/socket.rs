//! The real server over a real socket (port 0): requests, request ids, body limits, and
//! graceful shutdown.

use std::time::Duration;

use crate::service::common::*;
use kibitz::config::Config;
use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};

#[tokio::test]
async fn a_move_is_answered_over_http() {
    let server = start_server(Config::for_tests()).await;
    let client = reqwest::Client::new();
    let response = client
        .post(server.url("/move"))
        .json(&json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-request-id"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["move"], json!({"row": 0, "col": 2, "notation": "c3"}));
}

#[tokio::test]
async fn the_client_request_id_is_echoed() {
    let server = start_server(Config::for_tests()).await;
    let response = reqwest::Client::new()
        .get(server.url("/healthz"))
        .header("x-request-id", "trace-me-42")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-me-42");
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_413_over_the_wire() {
    let server = start_server(Config {
        max_body_bytes: 1024,
        ..Config::for_tests()
    })
    .await;
    let big = json!({"game": "tictactoe", "board": ["x".repeat(10_000)]});
    let response = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}

#[tokio::test]
async fn shutdown_turns_readiness_off_and_stops_the_server() {
    let mut server = start_server(Config::for_tests()).await;
    let client = reqwest::Client::new();
    let ready = client.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    drop(ready);
    drop(client);
    server.stop.take().unwrap().send(()).unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(5), &mut server.task).await;
    assert!(matches!(finished, Ok(Ok(Ok(())))), "{finished:?}");
    assert!(
        !server
            .state
            .ready
            .load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(
        reqwest::Client::new()
            .get(server.url("/healthz"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_binary_starts_from_kibitz_addr() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
        .env("KIBITZ_TABLE_MB", "1")
        .env("KIBITZ_DRAIN_MS", "0")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/readyz");
    let mut ready = false;
    for _ in 0..100 {
        if let Ok(response) = reqwest::get(&url).await {
            ready = response.status() == 200;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // SIGTERM: a graceful exit.
    kill_process(Pid::from_child(&child), Signal::TERM).expect("SIGTERM");
    let status = child.wait().unwrap();
    assert!(ready, "the server never became ready");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_its_search() {
    let server = start_server(Config {
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await;
    // Plain minimax over the empty board takes well over 5 ms (about 1.3 M nodes).
    let body = json!({"game": "tictactoe", "board": ["...", "...", "..."],
                      "algorithm": "minimax", "analysis": true, "budget_ms": 5000});
    let gave_up = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&body)
        .timeout(Duration::from_millis(3))
        .send()
        .await;
    assert!(gave_up.is_err());
    let metrics = server.state.service.metrics();
    for _ in 0..200 {
        if metrics.searches_cancelled.get() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(metrics.searches_cancelled.get(), 1);
    assert_eq!(metrics.searches_in_flight.get(), 0);
}

#[tokio::test]
async fn more_workers_than_cores_are_warned_about_at_start() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let start = |workers: usize| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
            .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
            .env("KIBITZ_WORKERS", workers.to_string())
            .env("KIBITZ_TABLE_MB", "1")
            .env("KIBITZ_DRAIN_MS", "0")
            .env("KIBITZ_LOG_FORMAT", "json")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for (workers, warned) in [(cores + 3, true), (cores, false)] {
        let child = start(workers);
        let url = format!("http://127.0.0.1:{port}/readyz");
        for _ in 0..100 {
            if reqwest::get(&url).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        kill_process(Pid::from_child(&child), Signal::TERM).expect("SIGTERM");
        let output = child.wait_with_output().unwrap();
        let log = String::from_utf8_lossy(&output.stderr);
        let warning = log
            .lines()
            .find(|line| line.contains("KIBITZ_WORKERS is above the cores"));
        assert_eq!(
            warning.is_some(),
            warned,
            "{workers} workers on {cores} cores:\n{log}"
        );
        if let Some(line) = warning {
            assert!(line.contains("\"level\":\"WARN\""), "{line}");
            assert!(line.contains(&format!("\"workers\":{workers}")), "{line}");
        }
    }
}
