//! `/tree`'s slots shared fairly between clients, through the real server on a loopback port:
//! a client keeping many big trees in flight (32 at once on 2 slots) beside a polite client
//! sending one small tree at a time. With first-come slots the polite client waits behind
//! every queued tree of the flood, past the body deadline (503); with fair slots it gets the
//! next slot that frees, so it is never refused and waits at most about one big tree.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::start_server;
use kibitz::config::Config;

const FLOODER: &str = "flooder-0123456789abcdef";
const POLITE: &str = "polite-0123456789abcdef";
/// Trees the flood keeps in flight at once.
const FLOOD_LANES: usize = 32;
/// Trees the polite client sends, one after another.
const POLITE_TREES: usize = 20;
/// Each request's body deadline (the wait for a slot counts against it).
const BODY_TIMEOUT_MS: u64 = 500;

/// The keys file, removed when the returned guard drops (the server reads it once, at start).
fn keys_file() -> tempfile::TempPath {
    let mut file = tempfile::Builder::new()
        .prefix("kibitz-keys-")
        .tempfile()
        .unwrap();
    write!(file, "{FLOODER} flooder partner\n{POLITE} polite partner\n").unwrap();
    file.into_temp_path()
}

/// A tree in the bracket form: `branching` children a node, `depth` levels below the root,
/// leaves valued from `seed` (so that no two flood trees are alike).
fn tree_text(branching: usize, depth: usize, seed: usize) -> String {
    fn node(text: &mut String, branching: usize, depth: usize, counter: &mut usize) {
        *counter += 1;
        let name = format!("n{counter}");
        if depth == 0 {
            let value = (*counter * 7919) % 201;
            text.push_str(&format!("({name},{})", value as i64 - 100));
            return;
        }
        text.push('[');
        text.push_str(&name);
        for _ in 0..branching {
            text.push_str(", ");
            node(text, branching, depth - 1, counter);
        }
        text.push(']');
    }
    let mut text = String::new();
    let mut counter = seed;
    node(&mut text, branching, depth, &mut counter);
    text
}

/// What one `/tree` request got: its status, how long it took, and its `RateLimit` header;
/// an error when the connection was cut (a request refused before its body was read may have
/// its connection closed while the client still sends: the flood's lot, never the polite one's).
async fn post_tree(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    body: &Value,
) -> Result<(u16, Duration, Option<String>), reqwest::Error> {
    let asked = Instant::now();
    let response = client.post(url).bearer_auth(key).json(body).send().await?;
    let status = response.status().as_u16();
    let limit = response
        .headers()
        .get("ratelimit")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    response.bytes().await?;
    Ok((status, asked.elapsed(), limit))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_polite_tree_is_never_refused_beside_a_client_keeping_many_big_trees_in_flight() {
    let keys = keys_file();
    let server = start_server(Config {
        workers: 2,
        api_keys_file: Some(keys.to_path_buf()),
        body_timeout_ms: BODY_TIMEOUT_MS,
        ..Config::for_tests()
    })
    .await;
    let url = server.url("/tree");
    // About 100,000 nodes, traced: tens of milliseconds each.
    let big: Arc<Vec<Value>> = Arc::new(
        (0..4)
            .map(|seed| json!({"tree": tree_text(46, 3, seed * 100_000), "trace": true}))
            .collect(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let flood_ok = Arc::new(AtomicUsize::new(0));
    let flood_took = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut flood = Vec::new();
    for lane in 0..FLOOD_LANES {
        let (url, stop, ok, took, big) = (
            url.clone(),
            Arc::clone(&stop),
            Arc::clone(&flood_ok),
            Arc::clone(&flood_took),
            Arc::clone(&big),
        );
        flood.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut i = lane;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let Ok((status, elapsed, _)) =
                    post_tree(&client, &url, FLOODER, &big[i % big.len()]).await
                else {
                    continue;
                };
                // 503: no slot in time; 408: the wait left too little of the body deadline.
                assert!(matches!(status, 200 | 503 | 408), "the flood got {status}");
                if status == 200 {
                    ok.fetch_add(1, Ordering::Relaxed);
                    took.lock().unwrap().push(elapsed);
                }
            }
        }));
    }
    // The flood fills both slots and the queue before the polite client comes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = reqwest::Client::new();
    let small = json!({"tree": "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], [D, (D1,14), (D2,5), (D3,2)]]"});
    let mut polite = Vec::new();
    for _ in 0..POLITE_TREES {
        let answer = post_tree(&client, &url, POLITE, &small).await;
        polite.push(answer.expect("the polite client's connection is never cut"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for lane in flood {
        lane.await.unwrap();
    }
    let refused = polite.iter().filter(|(status, ..)| *status != 200).count();
    let mut took: Vec<Duration> = polite.iter().map(|(_, took, _)| *took).collect();
    took.sort();
    let mut flood_took = flood_took.lock().unwrap().clone();
    flood_took.sort();
    let flood_median = flood_took.get(flood_took.len() / 2).copied();
    eprintln!(
        "polite /tree beside a {FLOOD_LANES}-lane flood on 2 slots: {refused} of {POLITE_TREES} \
         refused, latency max {:?} (sorted {took:?}); flood 200s {}, median {flood_median:?}",
        took.last(),
        flood_ok.load(Ordering::Relaxed),
    );
    assert!(
        flood_ok.load(Ordering::Relaxed) > 0,
        "the flood was never answered"
    );
    assert_eq!(refused, 0, "polite trees refused: {polite:?}");
    // Bounded: the polite tree waits for the first of the flood's two running trees to end,
    // not for the flood's queue; half the body deadline leaves a loaded machine room.
    let worst = took.last().copied().unwrap_or_default();
    assert!(
        worst < Duration::from_millis(BODY_TIMEOUT_MS / 2),
        "polite latency {worst:?}: {took:?}"
    );
    // Its share is one of the two slots, and it held none when it asked.
    for (_, _, limit) in &polite {
        assert_eq!(limit.as_deref(), Some("\"trees\";r=0;t=1"));
    }
}

#[tokio::test]
async fn a_tree_answer_says_the_client_s_share_of_the_slots() {
    let server = start_server(Config {
        workers: 4,
        ..Config::for_tests()
    })
    .await;
    let response = reqwest::Client::new()
        .post(server.url("/tree"))
        .json(&json!({"tree": "[A, (B,1), (C,2)]"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers();
    // 50 % of 4 slots: 2, one left after this one.
    assert_eq!(
        headers["ratelimit-policy"],
        "\"trees\";q=2;qu=\"concurrent-requests\""
    );
    assert_eq!(headers["ratelimit"], "\"trees\";r=1;t=1");
}
