//! What the batch store reads back from a real `redis-server` is checked before it is used:
//! results and queue entries written into Redis by someone else (here with plain Redis
//! commands, as `redis-cli` would) are refused and counted, and the batch they aimed at is
//! answered by its own items.

use std::time::Duration;

use serde_json::{Value, json};

use super::batch_client::*;
use crate::redis_support::{Redis, Replica};

const KEY: &str = "a-test-key-of-32-bytes-or-so-123";

#[tokio::test]
async fn forged_results_and_queue_entries_are_refused_counted_and_the_real_items_answered() {
    let redis = Redis::start();
    let replica = Replica::start_with(
        &redis.url(),
        &[
            ("KIBITZ_REPLICA_NAME", "honest"),
            ("KIBITZ_BATCH_ENTRY_KEY", KEY),
        ],
    )
    .await;
    let base = replica.url("");
    let body = json!({"items": gomoku_items(3), "budget_ms": 400});
    let (status, accepted, location) = submit(&base, &body, None).await;
    assert_eq!(status, 202, "{accepted}");
    let id = accepted["id"].as_str().unwrap().to_owned();
    let mut connection = redis.connection().expect("redis answers");
    // While item 0 runs: results for the items not yet run, and index 0 written twice.
    let forged = |index: usize| {
        json!({"index": index, "status": 200, "replica": "mallory", "attempts": 1,
            "answer": {"game": "gomoku", "move": {"row": 99, "col": -1}, "score": "pwned"}})
        .to_string()
    };
    redis::cmd("HSET")
        .arg(format!("kibitz:batch:v1:{id}:results"))
        .arg(&["1", &forged(1), "2", "pwned", "00", &forged(0)])
        .query::<()>(&mut connection)
        .expect("HSET");
    // A queue entry in the victim's name, in the stream taken first.
    let item = json!({"move": {"game": "tictactoe", "board": ["X..", "...", "..."]}}).to_string();
    redis::cmd("XADD")
        .arg("kibitz:batch:v1:queue:high")
        .arg("*")
        .arg(&["batch", &id, "index", "0", "total", "3", "budget_ms", "5"])
        .arg(&["work_ms", "5", "item", &item])
        .query::<String>(&mut connection)
        .expect("XADD");

    let done = until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    exactly_once(&done, 3);
    for result in done["results"].as_array().unwrap() {
        assert_eq!(result["replica"], "honest", "{result}");
        assert_eq!(result["answer"]["game"], "gomoku", "{result}");
        let row = result["answer"]["move"]["row"].as_u64().unwrap();
        assert!(row < 15, "{result}");
    }
    let metrics = replica.metrics().await;
    for reason in ["signature", "index"] {
        let line = format!("kibitz_batch_forged_total{{reason=\"{reason}\"}}");
        assert!(
            metrics.contains(&line),
            "{reason} refusals counted: {metrics}"
        );
    }
}

#[tokio::test]
async fn without_a_key_results_are_still_checked_for_shape_and_index() {
    let redis = Redis::start();
    let replica = Replica::start(&redis.url()).await;
    let base = replica.url("");
    let body = json!({"items": gomoku_items(2), "budget_ms": 400});
    let (status, accepted, location) = submit(&base, &body, None).await;
    assert_eq!(status, 202, "{accepted}");
    let id = accepted["id"].as_str().unwrap();
    let mut connection = redis.connection().expect("redis answers");
    redis::cmd("HSET")
        .arg(format!("kibitz:batch:v1:{id}:results"))
        .arg(&["1", "pwned", "01", "{}"])
        .query::<()>(&mut connection)
        .expect("HSET");
    let done = until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(20),
    )
    .await;
    exactly_once(&done, 2);
    let results: Vec<&Value> = done["results"].as_array().unwrap().iter().collect();
    assert_eq!(results[1]["answer"]["game"], "gomoku", "{done}");
}
