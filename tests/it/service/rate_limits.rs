//! The `RateLimit` / `RateLimit-Policy` headers (IETF httpapi draft) on every answer a
//! per-client limit applies to, through the real server on a loopback port: streamed `/move`
//! and `/review` answers (the standing admission computed, sent before the search's events),
//! answers from this replica's cache and from the shared one (Redis: the client's standing
//! now, nothing consumed), and `POST /analyses`' 202 (the batches in flight). Each test moves
//! the numbers by having the client hold a search (or a batch) of its own.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::clients::{ALICE, BOB, gomoku, keys_file, post};
use super::common::{Running, start_server};
use crate::redis_support::{Redis, connect4_request, wait_for_keys};
use kibitz::config::Config;

/// Four workers at the default 50 % share: two searches at once for each client.
const QUOTA: usize = 2;
const SEARCHES_POLICY: &str = "\"searches\";q=2;qu=\"concurrent-requests\"";

/// The replica these tests run: four workers, half of them a client's share, and the keys of
/// `keys` (a guard from `keys_file`, held to the end of the test).
fn config(keys: &Path) -> Config {
    Config {
        workers: 4,
        client_share_percent: 50,
        api_keys_file: Some(keys.to_path_buf()),
        ..Config::for_tests()
    }
}

fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

/// The answer's `RateLimit-Policy` and `RateLimit` (empty when missing).
fn limits(response: &reqwest::Response) -> (String, String) {
    let field = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    (field("ratelimit-policy"), field("ratelimit"))
}

/// A search `key`'s client holds (a gomoku `/move` using its whole 3 s budget) until the
/// returned task is aborted; returns once admission counts it against the client's share.
async fn hold_a_search(
    server: &Running,
    key: &str,
    name: &str,
    i: usize,
) -> tokio::task::JoinHandle<()> {
    let url = server.url("/move");
    let auth = bearer(key);
    let task = tokio::spawn(async move {
        let _ = post(
            &reqwest::Client::new(),
            &url,
            &gomoku(i, 3000),
            &[("authorization", &auth)],
        )
        .await;
    });
    for _ in 0..400 {
        if server.state.service.pool().standing(name).remaining < QUOTA {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the held search was never admitted");
}

/// Stops a held search (dropping its request cancels it) and waits until its worker is free.
async fn release(server: &Running, held: tokio::task::JoinHandle<()>, name: &str) {
    held.abort();
    let _ = held.await;
    for _ in 0..400 {
        if server.state.service.pool().standing(name).remaining == QUOTA {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the held search never ended");
}

/// `body` posted to `path` as `key`'s client, asking for an event stream: the response, its
/// head read (the search's events not yet).
async fn streamed(server: &Running, path: &str, body: &Value, key: &str) -> reqwest::Response {
    post(
        &reqwest::Client::new(),
        &server.url(path),
        body,
        &[
            ("authorization", &bearer(key)),
            ("accept", "text/event-stream"),
        ],
    )
    .await
}

/// The stream read to its end: its last event's name must be `last`.
async fn ends_with(response: reqwest::Response, last: &str) {
    let text = response.text().await.expect("the stream");
    let events: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .collect();
    assert_eq!(events.last(), Some(&last), "{text}");
}

#[tokio::test]
async fn a_streamed_move_says_the_standing_admission_computed_before_its_events() {
    let keys = keys_file();
    let server = start_server(config(&keys)).await;
    let first = streamed(&server, "/move", &gomoku(1, 300), ALICE).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["content-type"], "text/event-stream");
    assert_eq!(
        limits(&first),
        (SEARCHES_POLICY.into(), "\"searches\";r=1;t=1".into())
    );
    ends_with(first, "answer").await;

    // With one search of alice's own running, her next stream has no unit left beside it;
    // bob's share is his own.
    let held = hold_a_search(&server, ALICE, "alice", 2).await;
    let second = streamed(&server, "/move", &gomoku(3, 300), ALICE).await;
    assert_eq!(second.status(), 200);
    assert_eq!(limits(&second).1, "\"searches\";r=0;t=1");
    let bobs = streamed(&server, "/move", &gomoku(4, 300), BOB).await;
    assert_eq!(limits(&bobs).1, "\"searches\";r=1;t=1");
    ends_with(second, "answer").await;
    ends_with(bobs, "answer").await;
    release(&server, held, "alice").await;
}

#[tokio::test]
async fn a_streamed_review_says_the_standing_of_the_worker_it_holds() {
    let keys = keys_file();
    let server = start_server(config(&keys)).await;
    let review = |i: usize| {
        let mut body = gomoku(i, 400);
        body["moves"] = json!([{"row": 0, "col": 0}]);
        body
    };
    let first = streamed(&server, "/review", &review(1), ALICE).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["content-type"], "text/event-stream");
    assert_eq!(
        limits(&first),
        (SEARCHES_POLICY.into(), "\"searches\";r=1;t=1".into())
    );
    ends_with(first, "review").await;

    let held = hold_a_search(&server, ALICE, "alice", 2).await;
    let second = streamed(&server, "/review", &review(3), ALICE).await;
    assert_eq!(second.status(), 200);
    assert_eq!(limits(&second).1, "\"searches\";r=0;t=1");
    ends_with(second, "review").await;
    release(&server, held, "alice").await;
}

#[tokio::test]
async fn a_cached_answer_says_the_client_s_standing_now_and_consumes_nothing() {
    let keys = keys_file();
    let server = start_server(config(&keys)).await;
    let client = reqwest::Client::new();
    let body = json!({"game": "tictactoe", "board": ["X..", ".O.", "..."], "budget_ms": 50});
    let auth = bearer(ALICE);
    let searched = post(
        &client,
        &server.url("/move"),
        &body,
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(limits(&searched).1, "\"searches\";r=1;t=1");
    assert_eq!(searched.json::<Value>().await.unwrap()["cached"], false);

    // Nothing held: the whole quota, and no unit coming back (no `t`).
    for accept in ["application/json", "text/event-stream"] {
        let cached = post(
            &client,
            &server.url("/move"),
            &body,
            &[("authorization", &auth), ("accept", accept)],
        )
        .await;
        assert_eq!(cached.status(), 200);
        assert_eq!(
            limits(&cached),
            (SEARCHES_POLICY.into(), "\"searches\";r=2".into()),
            "{accept}"
        );
        let text = cached.text().await.unwrap();
        assert!(text.contains("\"cached\":true"), "{accept}: {text}");
    }

    // One search of alice's running: a cached answer says one unit is left, and taking it
    // used none (the pool still counts one).
    let held = hold_a_search(&server, ALICE, "alice", 5).await;
    let cached = post(
        &client,
        &server.url("/move"),
        &body,
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(limits(&cached).1, "\"searches\";r=1;t=1");
    assert_eq!(cached.json::<Value>().await.unwrap()["cached"], true);
    assert_eq!(server.state.service.pool().standing("alice").remaining, 1);
    release(&server, held, "alice").await;
}

#[tokio::test]
async fn an_answer_from_the_shared_cache_says_the_client_s_standing_now() {
    let redis = Redis::start();
    let keys = keys_file();
    let with_redis = || Config {
        redis_url: Some(redis.url()),
        // Room for a slow first connection.
        redis_timeout_ms: 1000,
        ..config(&keys)
    };
    let first = start_server(with_redis()).await;
    let second = start_server(with_redis()).await;
    let client = reqwest::Client::new();
    let auth = bearer(ALICE);
    let positions = [connect4_request(&[3, 3, 2]), connect4_request(&[3, 2, 4])];
    for (stored, position) in positions.iter().enumerate() {
        let answer = post(
            &client,
            &first.url("/move"),
            position,
            &[("authorization", &auth)],
        )
        .await;
        assert_eq!(answer.status(), 200);
        wait_for_keys(&redis, stored + 1).await;
    }

    let shared = post(
        &client,
        &second.url("/move"),
        &positions[0],
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(
        limits(&shared),
        (SEARCHES_POLICY.into(), "\"searches\";r=2".into())
    );
    assert_eq!(
        shared.json::<Value>().await.unwrap()["cached_from"],
        "shared"
    );

    let held = hold_a_search(&second, ALICE, "alice", 7).await;
    let shared = post(
        &client,
        &second.url("/move"),
        &positions[1],
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(limits(&shared).1, "\"searches\";r=1;t=1");
    assert_eq!(
        shared.json::<Value>().await.unwrap()["cached_from"],
        "shared"
    );
    release(&second, held, "alice").await;
}

/// A batch that stays in flight for the test (gomoku items at 2 s), as `key`'s client.
async fn submit(server: &Running, key: &str) -> reqwest::Response {
    let items: Vec<Value> = (0..2).map(|i| json!({"move": gomoku(i, 2000)})).collect();
    post(
        &reqwest::Client::new(),
        &server.url("/analyses"),
        &json!({"items": items}),
        &[("authorization", &bearer(key))],
    )
    .await
}

/// Each 202 says how many more batches its client may have in flight, counted by admission.
async fn the_batch_202_counts_the_client_s_batches_in_flight(config: Config) {
    let server = start_server(Config {
        batch_max_in_flight: 3,
        ..config
    })
    .await;
    let policy = "\"batches\";q=3;qu=\"concurrent-requests\"";
    for left in [2, 1] {
        let accepted = submit(&server, ALICE).await;
        assert_eq!(accepted.status(), 202);
        assert_eq!(
            limits(&accepted),
            (policy.into(), format!("\"batches\";r={left}"))
        );
    }
    let bobs = submit(&server, BOB).await;
    assert_eq!(limits(&bobs).1, "\"batches\";r=2");
    let last = submit(&server, ALICE).await;
    assert_eq!(last.status(), 202);
    assert_eq!(limits(&last).1, "\"batches\";r=0");
    let refused = submit(&server, ALICE).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(
        limits(&refused),
        (policy.into(), "\"batches\";r=0;t=1".into())
    );
}

#[tokio::test]
async fn a_batch_202_says_how_many_more_batches_its_client_may_have_in_flight() {
    let keys = keys_file();
    the_batch_202_counts_the_client_s_batches_in_flight(config(&keys)).await;
}

#[tokio::test]
async fn a_batch_202_counts_the_batches_in_flight_in_redis_too() {
    let redis = Redis::start();
    let keys = keys_file();
    the_batch_202_counts_the_client_s_batches_in_flight(Config {
        redis_url: Some(redis.url()),
        redis_timeout_ms: 1000,
        ..config(&keys)
    })
    .await;
}
