//! Client identity and fair share, through the real server on a loopback port: API keys
//! (401 problem+json without a valid one, the probes open), identities a client cannot choose
//! by header (`X-Client-Id` names nobody; a forwarded address counts only from a trusted
//! proxy), and one client's flood that cannot take the workers another client needs.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{Running, start_server};
use kibitz::config::Config;

pub(super) const ALICE: &str = "alice-0123456789abcdef";
pub(super) const BOB: &str = "bob-0123456789abcdef01";

/// A keys file for one test, removed when the returned guard drops (the server reads it once,
/// at start; the test holds the guard to its end, so a failing test leaves nothing behind).
pub(super) fn keys_file() -> tempfile::TempPath {
    let mut file = tempfile::Builder::new()
        .prefix("kibitz-keys-")
        .tempfile()
        .unwrap();
    write!(
        file,
        "# test keys\n{ALICE} alice partner\n{BOB} bob partner\n"
    )
    .unwrap();
    file.into_temp_path()
}

/// A gomoku position that `i` makes distinct, whose search uses its whole budget.
pub(super) fn gomoku(i: usize, budget_ms: u64) -> Value {
    let mut rows = vec![vec!['.'; 15]; 15];
    rows[2 + i % 11][2 + (i / 11) % 11] = 'X';
    rows[7][7] = 'O';
    rows[12][1 + (i / 121) % 13] = 'X';
    let board: Vec<String> = rows.into_iter().map(String::from_iter).collect();
    json!({"game": "gomoku", "board": board, "budget_ms": budget_ms})
}

pub(super) async fn post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client.post(url).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("an answer")
}

#[tokio::test]
async fn with_api_keys_a_request_without_a_valid_one_is_401_and_the_probes_stay_open() {
    let keys = keys_file();
    let server = start_server(Config {
        api_keys_file: Some(keys.to_path_buf()),
        ..Config::for_tests()
    })
    .await;
    let client = reqwest::Client::new();
    let body = json!({"game": "tictactoe", "board": ["X..", ".O.", "..."], "budget_ms": 50});
    for (headers, invalid) in [
        (vec![], false),
        (
            vec![("authorization", "Bearer not-a-key-of-this-server")],
            true,
        ),
        (vec![("authorization", "Basic YWxpY2U6c2VjcmV0")], true),
        (vec![("x-client-id", "alice")], false),
    ] {
        let response = post(&client, &server.url("/move"), &body, &headers).await;
        assert_eq!(response.status(), 401, "{headers:?}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.starts_with("Bearer realm=\"kibitz\""),
            "{challenge}"
        );
        assert_eq!(challenge.contains("invalid_token"), invalid, "{challenge}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["type"], "urn:kibitz:problem:unauthorized");
        assert_eq!(problem["status"], 401);
    }
    let bearer = format!("Bearer {ALICE}");
    let response = post(
        &client,
        &server.url("/move"),
        &body,
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(response.status(), 200);
    for path in ["/review", "/tree", "/analyses"] {
        let response = post(&client, &server.url(path), &json!({}), &[]).await;
        assert_eq!(response.status(), 401, "{path}");
    }
    for path in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/games",
        "/openapi.yaml",
        "/",
    ] {
        let status = reqwest::get(server.url(path)).await.unwrap().status();
        assert_eq!(status, 200, "{path}");
    }
}

/// A batch that stays in flight for the test (gomoku items at 2 s), posted with `headers`:
/// the status and the response.
async fn batch(server: &Running, headers: &[(&str, &str)]) -> reqwest::Response {
    let items: Vec<Value> = (0..2).map(|i| json!({"move": gomoku(i, 2000)})).collect();
    post(
        &reqwest::Client::new(),
        &server.url("/analyses"),
        &json!({"items": items}),
        headers,
    )
    .await
}

#[tokio::test]
async fn the_batch_limit_counts_by_key_whatever_client_id_a_client_sends() {
    let keys = keys_file();
    let server = start_server(Config {
        api_keys_file: Some(keys.to_path_buf()),
        batch_max_in_flight: 1,
        ..Config::for_tests()
    })
    .await;
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    let first = batch(&server, &[("authorization", &alice), ("x-client-id", "a")]).await;
    assert_eq!(first.status(), 202);
    // A new X-Client-Id does not make alice another client.
    let again = batch(&server, &[("authorization", &alice), ("x-client-id", "b")]).await;
    assert_eq!(again.status(), 429);
    let headers = again.headers();
    assert_eq!(
        headers["ratelimit-policy"],
        "\"batches\";q=1;qu=\"concurrent-requests\""
    );
    assert_eq!(headers["ratelimit"], "\"batches\";r=0;t=1");
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(
        batch(&server, &[("authorization", &bob)]).await.status(),
        202
    );
}

#[tokio::test]
async fn a_forwarded_address_names_the_client_only_when_a_trusted_proxy_sent_it() {
    for (trusted, second) in [(vec![], 429), (vec!["127.0.0.0/8".parse().unwrap()], 202)] {
        let server = start_server(Config {
            trusted_proxies: trusted,
            batch_max_in_flight: 1,
            ..Config::for_tests()
        })
        .await;
        let first = batch(&server, &[("x-forwarded-for", "203.0.113.1")]).await;
        assert_eq!(first.status(), 202);
        let other = batch(&server, &[("forwarded", "for=203.0.113.2")]).await;
        assert_eq!(other.status(), second);
    }
}

/// How many `/move`s the polite client sends, one after another.
const POLITE_MOVES: usize = 30;

/// Latencies of the polite client's `/move`s beside a flood from another client, on a
/// replica of `workers` workers: each polite answer's status and time.
async fn polite_beside_a_flood(workers: usize) -> Vec<(u16, Duration)> {
    let keys = keys_file();
    let server = start_server(Config {
        workers,
        api_keys_file: Some(keys.to_path_buf()),
        ..Config::for_tests()
    })
    .await;
    let url = server.url("/move");
    let stop = Arc::new(AtomicBool::new(false));
    let flood_statuses = Arc::new([(); 4].map(|()| AtomicUsize::new(0)));
    let mut flood = Vec::new();
    for lane in 0..4 {
        let (url, stop, statuses) = (url.clone(), Arc::clone(&stop), Arc::clone(&flood_statuses));
        flood.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let bearer = format!("Bearer {ALICE}");
            let mut i = 1000 + lane * 1000;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                // Every request poses as another client by header: none of it counts.
                let forged_id = format!("flood-{i}");
                let forged_address = format!("198.51.100.{}", i % 250);
                let response = post(
                    &client,
                    &url,
                    &gomoku(i, 300),
                    &[
                        ("authorization", &bearer),
                        ("x-client-id", &forged_id),
                        ("x-forwarded-for", &forged_address),
                        ("forwarded", &format!("for={forged_address}")),
                    ],
                )
                .await;
                let slot = match response.status().as_u16() {
                    200 => 0,
                    429 => {
                        assert!(response.headers().contains_key("ratelimit"));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        1
                    }
                    // On one worker, held by the polite client's search: the flood's own
                    // search, within its share, cannot start in time.
                    503 => 2,
                    _ => 3,
                };
                statuses[slot].fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let client = reqwest::Client::new();
    let bearer = format!("Bearer {BOB}");
    let mut polite = Vec::new();
    for i in 0..POLITE_MOVES {
        let asked = Instant::now();
        let response = post(
            &client,
            &url,
            &gomoku(i, 300),
            &[("authorization", &bearer)],
        )
        .await;
        polite.push((response.status().as_u16(), asked.elapsed()));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for lane in flood {
        lane.await.unwrap();
    }
    let [ok, _limited, _shed, other] = &*flood_statuses;
    assert!(
        ok.load(Ordering::Relaxed) > 0,
        "the flood was never answered"
    );
    // The flood ran searches beyond its share (which yield to the polite client's when it
    // would not get a worker in time), as the per-class metric tells (the class from the keys
    // file, never the key or its name).
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let yielded = metrics
        .lines()
        .find(|line| {
            line.starts_with("kibitz_client_searches_total{")
                && line.contains("class=\"partner\"")
                && line.contains("share=\"beyond\"")
        })
        .and_then(|line| line.rsplit(' ').next()?.parse::<f64>().ok());
    assert!(yielded.is_some_and(|n| n >= 1.0), "{metrics}");
    assert!(!metrics.contains(ALICE) && !metrics.contains("alice"));
    assert_eq!(
        other.load(Ordering::Relaxed),
        0,
        "the flood got other statuses"
    );
    polite
}

async fn a_polite_client_beside_a_flood_is_answered_in_time(workers: usize) {
    let polite = polite_beside_a_flood(workers).await;
    for (i, (status, _)) in polite.iter().enumerate() {
        assert_eq!(
            *status, 200,
            "polite move {i} on {workers} workers: {polite:?}"
        );
    }
    let mut took: Vec<Duration> = polite.iter().map(|(_, took)| *took).collect();
    took.sort();
    // p99 of 30: the largest but none.
    let p99 = took[(took.len() * 99).div_ceil(100) - 1];
    eprintln!("polite /move p99 beside a flood on {workers} workers: {p99:?} of {took:?}");
    // The promise: the budget (300 ms) plus 10 ms. The extra 30 ms is this test's own client
    // and the flood's four, timed on a loaded 2-core CI machine (measured figures: the note).
    let allowed = Duration::from_millis(300 + 10 + 30);
    assert!(p99 <= allowed, "p99 {p99:?} on {workers} workers: {took:?}");
}

#[tokio::test]
async fn on_two_workers_a_flooding_client_cannot_take_the_worker_a_polite_one_needs() {
    a_polite_client_beside_a_flood_is_answered_in_time(2).await;
}

// Not on one worker: there the flood's one search within its share holds the only worker, and
// a polite request arriving then is shed (docs/operations.md, "Client identity and fair
// share", says so).
