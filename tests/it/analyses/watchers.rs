//! Watching a batch is cheap and bounded, against a real `redis-server`: 50 event streams of
//! one idle batch on a replica cost Redis what one poller does (counted with `INFO
//! commandstats`), every stream still ends with the batch's `analysis`, and the watchers past
//! `KIBITZ_BATCH_MAX_WATCHERS` get 503 with `Retry-After`.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;

use super::batch_client::*;
use crate::redis_support::{Redis, Replica};
use crate::sse_client::{EventReader, get_events};

/// Calls of each command so far, from `INFO commandstats`.
fn command_calls(redis: &Redis) -> HashMap<String, u64> {
    let mut connection = redis.connection().expect("a connection to redis");
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut connection)
        .expect("INFO commandstats");
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .split(',')
                .find_map(|field| field.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}

/// Calls of the commands that read a batch's hashes, between two snapshots.
fn hash_reads(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> u64 {
    [
        "hgetall", "hmget", "hget", "hlen", "hscan", "hkeys", "hvals",
    ]
    .iter()
    .map(|name| after.get(*name).unwrap_or(&0) - before.get(*name).unwrap_or(&0))
    .sum()
}

const WATCHERS: usize = 50;

#[tokio::test]
async fn fifty_watchers_of_an_idle_batch_cost_redis_what_one_does_and_one_more_is_503() {
    let redis = Redis::start();
    let limit = WATCHERS.to_string();
    let replica = Replica::start_with(
        &redis.url(),
        &[
            ("KIBITZ_BATCH_MAX_WATCHERS", limit.as_str()),
            ("KIBITZ_REPLICA_NAME", "w0"),
        ],
    )
    .await;
    // Items of 5 s on one worker: the batch hardly moves while it is watched.
    let body = json!({"items": gomoku_items(10), "budget_ms": 5000});
    let (status, accepted, location) = submit(&replica.url(""), &body, None).await;
    assert_eq!(status, 202, "{accepted}");
    let url = replica.url(&location);
    let mut streams: Vec<EventReader> = Vec::new();
    for _ in 0..WATCHERS {
        let stream = get_events(&url).await;
        assert_eq!(stream.status(), 200);
        streams.push(stream);
    }

    // One more is refused while the 50 are open.
    let refused = reqwest::Client::new()
        .get(&url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let problem: serde_json::Value = refused.json().await.expect("problem+json");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or("")
            .contains("KIBITZ_BATCH_MAX_WATCHERS"),
        "{problem}"
    );
    // A plain GET is not a watcher: still answered.
    let (plain, _) = get(&replica.url(""), &location).await;
    assert_eq!(plain, 200);

    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = command_calls(&redis);
    let window = Duration::from_secs(3);
    tokio::time::sleep(window).await;
    let after = command_calls(&redis);
    let reads = hash_reads(&before, &after);
    let per_watcher_second = reads as f64 / WATCHERS as f64 / window.as_secs_f64();
    eprintln!(
        "{reads} hash reads in {window:?} with {WATCHERS} watchers: \
         {per_watcher_second:.2} per watcher-second"
    );
    // One poller: a progress read (HMGET + HLEN) every 100 ms, results only when an item
    // finished (at most one in the window), and the consumer's own reads. Each watcher
    // reading for itself would be 50 x 10 x 2 = 1,000 a second.
    assert!(
        reads as f64 <= 30.0 * window.as_secs_f64(),
        "{reads} hash reads in {window:?}: {after:?}"
    );

    // Dropping a stream frees its place.
    drop(streams.pop());
    tokio::time::sleep(Duration::from_millis(50)).await;
    streams.push(get_events(&url).await);
    assert_eq!(streams.last().map(EventReader::status), Some(200));

    // Every watcher still hears the end: cancelled, the whole batch as `analysis`.
    let cancelled = reqwest::Client::new()
        .post(replica.url(&format!("{location}/cancel")))
        .send()
        .await
        .expect("an answer");
    assert_eq!(cancelled.status(), 200);
    for stream in streams {
        let events = tokio::time::timeout(Duration::from_secs(10), stream.collect())
            .await
            .expect("every stream ends after the cancel");
        let last = events.last().expect("a last event");
        assert_eq!(last.name, "analysis", "{events:?}");
        assert_eq!(last.data["status"], "cancelled", "{last:?}");
        let results = events.iter().filter(|e| e.name == "result").count();
        assert_eq!(
            last.data["done"].as_u64(),
            Some(results as u64),
            "each result once: {events:?}"
        );
    }
}
