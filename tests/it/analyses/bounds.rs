//! The bounds over every client's batches together: a flood of batches, each under a new
//! `X-Client-Id` (which the per-client limit cannot catch), is refused `503` with
//! `Retry-After` once the queued items, the stored bytes or the queued search time reach their
//! setting, in process and in a real `redis-server` configured as the manifest configures it
//! (`volatile-lru`), where the flood evicts nothing: neither the answer cache nor an earlier
//! batch. Items are counted as stored, re-serialised compactly, not as sent.

use serde_json::{Value, json};

use super::batch_client::*;
use crate::redis_support::{Redis, Replica};
use crate::service::common::start_server;
use kibitz::config::Config;

/// POSTs `body` as client `client`: the status, the `Retry-After` and the body.
async fn post(base: &str, body: &Value, client: &str) -> (u16, Option<String>, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/analyses"))
        .header("x-client-id", client)
        .json(body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (
        status,
        retry_after,
        response.json().await.unwrap_or(Value::Null),
    )
}

/// Submits `body` under client ids `flood-0`, `flood-1`, ... until one is refused (at most
/// `tries`): the ids of the batches accepted and the refusal (status, `Retry-After`, problem).
async fn flood(
    base: &str,
    body: &Value,
    tries: usize,
) -> (Vec<String>, (u16, Option<String>, Value)) {
    let mut accepted = Vec::new();
    for n in 0..tries {
        let (status, retry_after, answer) = post(base, body, &format!("flood-{n}")).await;
        if status != 202 {
            return (accepted, (status, retry_after, answer));
        }
        accepted.push(answer["id"].as_str().expect("an id").to_owned());
    }
    panic!("{tries} batches under new client ids were all accepted: nothing bounds the queue");
}

/// Gomoku positions at 2 s each on one worker: the queue does not drain during the test.
fn slow_batch(items: usize) -> Value {
    json!({"items": gomoku_items(items), "budget_ms": 2000})
}

fn assert_full(refusal: &(u16, Option<String>, Value), setting: &str) {
    let (status, retry_after, problem) = refusal;
    assert_eq!(*status, 503, "{problem}");
    assert!(retry_after.is_some(), "a Retry-After: {problem}");
    assert_eq!(
        problem["type"], "urn:kibitz:problem:overloaded",
        "{problem}"
    );
    let detail = problem["detail"].as_str().unwrap_or("");
    assert!(detail.contains(setting), "{detail}");
}

async fn server(config: Config) -> (crate::service::common::Running, String) {
    let running = start_server(Config {
        workers: 1,
        ..config
    })
    .await;
    let base = format!("http://{}", running.addr);
    (running, base)
}

#[tokio::test]
async fn a_flood_under_new_client_ids_is_refused_503_at_the_queued_items_bound_until_room_is_freed()
{
    let (_server, base) = server(Config {
        batch_max_queued_items: 30,
        ..Config::for_tests()
    })
    .await;
    let (accepted, refusal) = flood(&base, &slow_batch(10), 20).await;
    assert_eq!(accepted.len(), 3, "{:?}", refusal.2);
    assert_full(&refusal, "KIBITZ_BATCH_MAX_QUEUED_ITEMS");
    // Room comes back when queued items go: a cancelled batch's items no longer count.
    let cancelled = reqwest::Client::new()
        .delete(format!("{base}/analyses/{}", accepted[0]))
        .send()
        .await
        .expect("an answer");
    assert!(cancelled.status().is_success());
    let (status, body, _) = submit(&base, &slow_batch(5), Some("late")).await;
    assert_eq!(status, 202, "{body}");
}

#[tokio::test]
async fn the_queued_search_time_is_bounded_over_every_client() {
    let (_server, base) = server(Config {
        batch_max_queued_work_ms: 50_000,
        ..Config::for_tests()
    })
    .await;
    // 10 items at 2 s: 20 s a batch, so two fit and the third passes 50 s.
    let (accepted, refusal) = flood(&base, &slow_batch(10), 20).await;
    assert_eq!(accepted.len(), 2, "{:?}", refusal.2);
    assert_full(&refusal, "KIBITZ_BATCH_MAX_QUEUED_WORK_MS");
}

#[tokio::test]
async fn items_count_as_stored_compactly_not_as_sent_and_the_stored_bytes_are_bounded() {
    let (_server, base) = server(Config {
        batch_max_stored_bytes: 64 * 1024,
        ..Config::for_tests()
    })
    .await;
    // One position padded with 1 MB of white space: stored, it is a few hundred bytes.
    let item = serde_json::to_string(&gomoku_items(1)[0]).unwrap();
    let padded = format!(
        "{{\"items\": [{}{item}], \"budget_ms\": 2000}}",
        " \n".repeat(500_000)
    );
    let response = reqwest::Client::new()
        .post(format!("{base}/analyses"))
        .header("content-type", "application/json")
        .header("x-client-id", "padded")
        .body(padded)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    assert_eq!(status, 202, "{:?}", response.text().await);
    // Each gomoku item is about 300 bytes and counts 256 more: 64 KiB holds about 100.
    let (accepted, refusal) = flood(&base, &slow_batch(40), 20).await;
    assert_eq!(accepted.len(), 2, "{:?}", refusal.2);
    assert_full(&refusal, "KIBITZ_BATCH_MAX_STORED_BYTES");
}

/// `INFO stats`' `evicted_keys`.
fn evicted_keys(redis: &Redis) -> u64 {
    let mut connection = redis.connection().expect("redis answers");
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut connection)
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("evicted_keys:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("evicted_keys")
}

#[tokio::test]
async fn a_flood_in_a_volatile_lru_redis_is_refused_before_it_evicts_the_cache_or_another_batch() {
    // The manifest's policy, with a small memory so that an unbounded flood fills it.
    let redis =
        Redis::start_with_args(&["--maxmemory", "6mb", "--maxmemory-policy", "volatile-lru"]);
    let replica = Replica::start_with(
        &redis.url(),
        &[
            ("KIBITZ_BATCH_MAX_STORED_BYTES", "1048576"),
            ("KIBITZ_BATCH_MAX_QUEUED_ITEMS", "100000"),
            ("KIBITZ_BATCH_MAX_QUEUED_WORK_MS", "1000000000"),
            ("KIBITZ_BATCH_MAX_TOTAL_BUDGET_MS", "100000000"),
        ],
    )
    .await;
    replica.until_connected().await;
    let cached = redis.keys();
    assert!(cached > 0, "the answer cache holds answers");
    let base = replica.url("");
    let (status, innocent, location) = submit(&base, &slow_batch(1), Some("innocent")).await;
    assert_eq!(status, 202, "{innocent}");
    // 1,000 gomoku items a batch (about 550 KB stored): an unbounded flood passes 6 MB in 12.
    let items: Vec<Value> = (0..1000)
        .map(|i| gomoku_items(90)[i % 90].clone())
        .collect();
    let body = json!({"items": items, "budget_ms": 2000});
    let (accepted, refusal) = flood(&base, &body, 40).await;
    assert!(accepted.len() <= 2, "{} accepted", accepted.len());
    assert_full(&refusal, "KIBITZ_BATCH_MAX_STORED_BYTES");
    assert_eq!(evicted_keys(&redis), 0, "nothing evicted");
    assert_eq!(redis.keys(), cached, "the answer cache is whole");
    let (status, body) = get(&base, &location).await;
    assert_eq!(status, 200, "the earlier batch is still there: {body}");
}
