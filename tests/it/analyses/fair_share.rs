//! Batch items are shared between clients round-robin, in process and through a real
//! `redis-server`: a client's long batch queued first does not make another client's short
//! batch wait behind all of it. Two clients by their addresses (127.0.0.x: the identity of a
//! client without a key is its address), one worker, no spare worker; the flood's batch is
//! queued first, the polite one's just after. In queue order the polite batch would be done
//! only after all ten of the flood's items; in turns it is done after about two of them.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::batch_client::*;
use crate::redis_support::{Redis, Replica};
use crate::service::common::start_server;
use kibitz::config::Config;
use kibitz::service::batch::redis_store::lane_of;

/// The flood's items, each a 300 ms gomoku search.
const FLOOD_ITEMS: usize = 10;
/// The most of the flood's items done when the polite batch is: in turns two (three when a
/// poll comes late), in queue order all ten.
const FLOOD_DONE_AT_MOST: u64 = 4;

/// A client whose requests come from `127.0.0.{octet}`.
fn client_from(octet: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, octet)))
        .build()
        .expect("a client")
}

async fn submit_from(client: &reqwest::Client, base: &str, body: &Value) -> String {
    let response = client
        .post(format!("{base}/analyses"))
        .json(body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 202);
    response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("a Location")
        .to_owned()
}

/// Items done of the batch at `location`.
async fn done(base: &str, location: &str) -> u64 {
    get(base, location).await.1["done"].as_u64().unwrap_or(0)
}

/// Queues the flood's batch, then the polite one's, and waits for the polite batch: how many
/// of the flood's items were done by then.
async fn flood_done_when_the_polite_batch_is(base: &str, flood: u8, polite: u8) -> u64 {
    let items = gomoku_items(FLOOD_ITEMS + 2);
    let flood_location = submit_from(
        &client_from(flood),
        base,
        &json!({"items": items[..FLOOD_ITEMS], "budget_ms": 300}),
    )
    .await;
    let polite_location = submit_from(
        &client_from(polite),
        base,
        &json!({"items": items[FLOOD_ITEMS..], "budget_ms": 300}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = get(base, &polite_location).await;
        assert_eq!(status, 200, "{body}");
        if body["status"] == "done" {
            assert_eq!(body["done"], 2, "{body}");
            return done(base, &flood_location).await;
        }
        assert!(
            Instant::now() < deadline,
            "the polite batch never ended: {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn in_process_a_short_batch_is_not_kept_behind_another_client_s_long_one() {
    let server = start_server(Config {
        workers: 1,
        batch_spare_workers: 0,
        replica_name: Some("solo".into()),
        ..Config::for_tests()
    })
    .await;
    let base = format!("http://{}", server.addr);
    let flood_done = flood_done_when_the_polite_batch_is(&base, 2, 3).await;
    assert!(
        flood_done <= FLOOD_DONE_AT_MOST,
        "the polite batch waited for {flood_done} of the flood's {FLOOD_ITEMS} items"
    );
}

#[tokio::test]
async fn through_redis_a_short_batch_is_not_kept_behind_another_client_s_long_one() {
    // Two addresses whose identities hash to different lanes.
    let flood = 2;
    let polite = (3..=60)
        .find(|&octet| lane_of(&format!("127.0.0.{octet}")) != lane_of(&format!("127.0.0.{flood}")))
        .expect("two addresses in different lanes");
    let redis = Redis::start();
    let replica = Replica::start_with(
        &redis.url(),
        &[
            ("KIBITZ_BATCH_SPARE_WORKERS", "0"),
            ("KIBITZ_REPLICA_NAME", "fair"),
        ],
    )
    .await;
    let flood_done = flood_done_when_the_polite_batch_is(&replica.url(""), flood, polite).await;
    assert!(
        flood_done <= FLOOD_DONE_AT_MOST,
        "the polite batch waited for {flood_done} of the flood's {FLOOD_ITEMS} items"
    );
}
