//! The answer cache shared by replicas through Redis, with real processes
//! ([`crate::redis_support`]): a second replica answers from the first one's search, sharing
//! resumes after Redis comes back, a garbage value is ignored. The latency tests with Redis
//! killed or hung are in `tests/service_timing.rs`, where nothing runs beside them.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::redis_support::*;
use crate::service::common::*;
use kibitz::config::Config;
use kibitz::engine::Side;
use kibitz::service::cache::CacheKey;
use kibitz::service::shared_cache::redis_key;

#[tokio::test]
async fn a_second_replica_answers_the_first_ones_position_from_redis() {
    let redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    let request = connect4_request(&[3, 3, 2]);

    let (status, first, _) = a.post_move(&request).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["cached"], false);
    wait_for_keys(&redis, 1).await;

    let (status, second, _) = b.post_move(&request).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["cached"], true);
    assert_eq!(second["cached_from"], "shared");
    assert_eq!(second["move"], first["move"]);
    assert_eq!(second["nodes"], first["nodes"], "the first search's report");
}

#[tokio::test]
async fn sharing_resumes_by_itself_when_redis_comes_back() {
    let mut redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    redis.kill();
    // Both replicas notice (their calls fail and the breakers open).
    for opening in [[0, 1], [0, 2], [0, 3], [0, 4]] {
        let request = connect4_request(&opening);
        assert_eq!(a.post_move(&request).await.0, 200);
        assert_eq!(b.post_move(&request).await.0, 200);
    }
    redis.restart();

    let started = Instant::now();
    for n in 0..100 {
        // A new position each time (base-7 digits of n), so only Redis can share it.
        let request = connect4_request(&[n % 7, (n / 7) % 7, (n / 49) % 7, 3]);
        let (status, _, _) = a.post_move(&request).await;
        assert_eq!(status, 200);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (status, body, _) = b.post_move(&request).await;
        assert_eq!(status, 200);
        if body["cached_from"] == "shared" {
            assert!(started.elapsed() < Duration::from_secs(10));
            return;
        }
    }
    panic!("sharing did not resume");
}

#[tokio::test]
async fn a_garbage_value_under_a_key_is_ignored_and_counted() {
    let redis = Redis::start();
    let key = CacheKey {
        game: "tictactoe",
        rules: String::new(),
        board: "XX./OO./...".into(),
        to_move: Side::First,
        minimax: false,
        analysis: false,
        max_depth: None,
        max_nodes: None,
        style: Default::default(),
    };
    let mut connection = redis.connection().expect("redis answers");
    let _: () = redis::cmd("SET")
        .arg(redis_key(&key))
        .arg("not an answer")
        .query(&mut connection)
        .expect("SET");
    let server = start_server(Config {
        redis_url: Some(redis.url()),
        // Room for a slow first connection.
        redis_timeout_ms: 1000,
        ..Config::for_tests()
    })
    .await;

    let response = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["move"], json!({"row": 0, "col": 2}));
    assert_eq!(body["cached"], false);
    let metrics = server.state.service.metrics().render();
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get",kind="undecodable"} 1"#),
        "{metrics}"
    );
}
