//! `/move` first on every replica size: batch items that hold every worker give one back
//! (pre-emption) when a `/move` would not get a worker in time, so the `/move` is answered
//! 200 within its budget, and the items are run again and answered later.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::batch_client::*;
use crate::service::common::start_server;
use kibitz::config::Config;

/// A gomoku position none of the batch's items has (a third stone), as a `/move` body.
fn move_body(i: usize, budget_ms: u64) -> Value {
    let mut rows = vec![vec!['.'; 15]; 15];
    rows[2 + i % 11][2 + i / 11] = 'X';
    rows[1][13] = 'O';
    rows[13][1] = 'X';
    let board: Vec<String> = rows.into_iter().map(String::from_iter).collect();
    json!({"game": "gomoku", "board": board, "budget_ms": budget_ms})
}

/// Items held now (being run), read from `GET /analyses`.
async fn held(base: &str) -> u64 {
    get(base, "/analyses").await.1["pending"]
        .as_u64()
        .unwrap_or(0)
}

/// On a replica of `workers` workers whose batch items take them all, `/move`s asked one
/// after another are all answered 200 within their budget plus a margin, and the batch is
/// still answered whole, every item once.
async fn moves_beside_a_batch_of_long_items(workers: usize) {
    let server = start_server(Config {
        workers,
        batch_spare_workers: 0,
        replica_name: Some("solo".into()),
        ..Config::for_tests()
    })
    .await;
    let base = format!("http://{}", server.addr);
    let items = gomoku_items(workers + 1);
    let (status, accepted, location) =
        submit(&base, &json!({"items": items, "budget_ms": 2000}), None).await;
    assert_eq!(status, 202, "{accepted}");
    let waited = Instant::now();
    while held(&base).await < workers as u64 {
        assert!(waited.elapsed() < Duration::from_secs(5), "items not taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let client = reqwest::Client::new();
    let budget_ms = 300;
    // The answer leaves the server by its budget plus a few ms; the rest of the margin is this
    // test's client on a shared 2-core machine.
    let margin = Duration::from_millis(40);
    for i in 0..8 {
        let asked = Instant::now();
        let response = client
            .post(format!("{base}/move"))
            .json(&move_body(i, budget_ms))
            .send()
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let took = asked.elapsed();
        assert_eq!(status, 200, "move {i} on {workers} workers: {body}");
        assert!(
            took <= Duration::from_millis(budget_ms) + margin,
            "move {i} on {workers} workers took {took:?}"
        );
    }
    let metrics = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .unwrap_or_default();
    let preempted = metrics
        .lines()
        .find_map(|line| line.strip_prefix("kibitz_searches_preempted_total "))
        .and_then(|n| n.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(preempted >= 1.0, "no item was pre-empted:\n{metrics}");
    let done = until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(30),
    )
    .await;
    exactly_once(&done, workers + 1);
}

#[tokio::test]
async fn on_one_worker_busy_with_long_batch_items_every_move_is_answered_in_time() {
    moves_beside_a_batch_of_long_items(1).await;
}

#[tokio::test]
async fn on_two_workers_busy_with_long_batch_items_every_move_is_answered_in_time() {
    moves_beside_a_batch_of_long_items(2).await;
}
