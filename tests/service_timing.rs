//! The latency promise and cancellation, on a game whose searches always run to their limit:
//! under overload only 200s within budget + 10 ms and fast 503s; a dropped request frees its
//! worker at once. With the shared cache's Redis killed or hung, replicas still answer within
//! budget + 10 ms and without errors (`it/redis_support.rs` starts the processes).

use std::time::{Duration, Instant};

#[path = "it/service/common.rs"]
mod common;
#[path = "it/redis_support.rs"]
mod redis_support;

use common::*;
use kibitz::config::Config;
use kibitz::service::pool::{PoolError, ShedReason};
use kibitz::service::{MoveQuery, ServiceError};
use redis_support::*;
use serde_json::json;

/// Timing tests run one at a time: each measures latency on a machine with few cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn slow_query(i: usize, budget_ms: u64) -> MoveQuery {
    let board = slow_board(i);
    let rows: Vec<&str> = board.iter().map(String::as_str).collect();
    query("slow", &rows, budget_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_gives_only_timely_answers_and_fast_rejections() {
    let _serial = SERIAL.lock().await;
    // One worker: the other core answers requests (on this 2-core machine).
    let service = service(1, 64);
    let budget = Duration::from_millis(200);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let service = service.clone();
        tasks.push(tokio::spawn(async move {
            let query = slow_query(i, budget.as_millis() as u64);
            let arrival = query.arrival;
            let result = service.play::<SlowGame>(query).await;
            (result, arrival.elapsed())
        }));
    }
    let (mut answered, mut shed) = (0, 0);
    for task in tasks {
        let (result, took) = task.await.unwrap();
        match result {
            Ok(served) => {
                answered += 1;
                assert!(!served.cached);
                assert!(
                    took <= budget + Duration::from_millis(10),
                    "200 after {took:?}"
                );
            }
            Err(ServiceError::Pool(PoolError::Overloaded { .. })) => {
                shed += 1;
                assert!(
                    took <= budget / 10 + Duration::from_millis(10),
                    "503 after {took:?}"
                );
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert!(answered >= 1, "answered {answered}");
    assert!(shed >= 4, "shed {shed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_uses_its_budget_and_stops_on_time() {
    let _serial = SERIAL.lock().await;
    let service = service(1, 0);
    let query = slow_query(1, 150);
    let arrival = query.arrival;
    let served = service.play::<SlowGame>(query).await.unwrap();
    let took = arrival.elapsed();
    assert_eq!(served.answer.stop_reason.as_str(), "time");
    assert!(took >= Duration::from_millis(140), "{took:?}");
    assert!(
        took <= Duration::from_millis(160),
        "promise is budget + 10 ms: {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_request_cancels_its_search_and_frees_the_worker() {
    let _serial = SERIAL.lock().await;
    let service = service(1, 0);
    let long = {
        let service = service.clone();
        tokio::spawn(async move { service.play::<SlowGame>(slow_query(2, 5_000)).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(service.metrics().searches_in_flight.get(), 1);
    // The client goes away: its future is dropped.
    long.abort();
    let _ = long.await;
    let start = Instant::now();
    while service.metrics().searches_in_flight.get() != 0 {
        assert!(
            start.elapsed() < Duration::from_millis(20),
            "worker still busy"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // The only worker takes the next request at once.
    let served = service.play::<SlowGame>(slow_query(3, 50)).await;
    assert!(served.is_ok(), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_would_start_too_late_is_shed_at_once() {
    let _serial = SERIAL.lock().await;
    let service = service(1, 8);
    let long = {
        let service = service.clone();
        tokio::spawn(async move { service.play::<SlowGame>(slow_query(4, 400)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The worker is busy until ~400 ms; a 100 ms request cannot start in time.
    let query = slow_query(5, 100);
    let arrival = query.arrival;
    let result = service.play::<SlowGame>(query).await;
    assert!(matches!(
        result,
        Err(ServiceError::Pool(PoolError::Overloaded { .. }))
    ));
    assert!(
        arrival.elapsed() <= Duration::from_millis(20),
        "{:?}",
        arrival.elapsed()
    );
    // A request with budget enough to wait for the worker is queued and answered in time.
    let query = slow_query(6, 1_000);
    let arrival = query.arrival;
    let served = service.play::<SlowGame>(query).await;
    assert!(served.is_ok(), "{served:?}");
    assert!(arrival.elapsed() <= Duration::from_millis(1_010));
    long.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_worker_busy_for_seconds_a_request_that_cannot_start_in_time_is_shed_in_under_50_ms()
 {
    let _serial = SERIAL.lock().await;
    let service = service(2, 64);
    let busy: Vec<_> = (0..2)
        .map(|i| {
            let service = service.clone();
            tokio::spawn(async move { service.play::<SlowGame>(slow_query(10 + i, 6_000)).await })
        })
        .collect();
    while service.metrics().searches_in_flight.get() != 2 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let query = slow_query(20, 2_000);
    let arrival = query.arrival;
    let result = service.play::<SlowGame>(query).await;
    let waited = arrival.elapsed();
    match result {
        Err(ServiceError::Pool(PoolError::Overloaded {
            reason,
            retry_after,
        })) => {
            assert!(
                matches!(reason, ShedReason::NoWorkerInTime { .. }),
                "{reason}"
            );
            // The workers are busy for about six seconds more.
            assert!(
                (Duration::from_secs(5)..=Duration::from_secs(7)).contains(&retry_after),
                "Retry-After {retry_after:?}"
            );
        }
        other => panic!("expected a 503, got {other:?}"),
    }
    assert!(waited < Duration::from_millis(50), "shed after {waited:?}");
    // Dropping the busy requests cancels their searches.
    for task in busy {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_answer_is_not_served_later_as_the_answer_to_its_whole_budget() {
    let _serial = SERIAL.lock().await;
    let service = service(1, 8);
    let busy = {
        let service = service.clone();
        tokio::spawn(async move { service.play::<SlowGame>(slow_query(30, 400)).await })
    };
    while service.metrics().searches_in_flight.get() != 1 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // Queued behind ~400 ms of search: a 1,000 ms request searches for about 600 ms.
    let queued = service
        .play::<SlowGame>(slow_query(31, 1_000))
        .await
        .expect("queued, then answered");
    assert!(!queued.cached);
    assert!(
        queued.answer.window < Duration::from_millis(700),
        "{:?}",
        queued.answer.window
    );
    busy.await.unwrap().unwrap();
    // On the idle server the same question with the same budget is searched afresh...
    let again = service
        .play::<SlowGame>(slow_query(31, 1_000))
        .await
        .unwrap();
    assert!(!again.cached, "a 600 ms search served as a 1,000 ms answer");
    // ...and an answer serves a budget its window covers.
    let smaller = service.play::<SlowGame>(slow_query(31, 500)).await.unwrap();
    assert!(smaller.cached);
}

/// Two replicas of one worker sharing `redis`, connected and warm, then `fault` is done to
/// Redis; then 28 distinct gomoku positions (no cache answers them, so each search runs to its
/// 100 ms budget). Every answer is a 200 within budget + 10 ms: the search's deadline counts
/// from the request's arrival, so a Redis call that waits takes its time from the search, never
/// from the promise. One exception is not Redis's doing and is let through: a search that itself
/// ran longer than the whole budget (its own `elapsed_ms`), which is a process starved of CPU on
/// a loaded machine (seen once: 178 ms) and is what `a_search_uses_its_budget_and_stops_on_time`
/// is about.
async fn replicas_answer_on_time_after(redis: &mut Redis, fault: fn(&mut Redis)) -> [Replica; 2] {
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    // Connected first, so that the calls after the fault meet a connection that was live.
    for replica in [&a, &b] {
        assert_eq!(replica.post_move(&connect4_request(&[6])).await.0, 200);
    }
    fault(redis);
    for i in 0..14 {
        let request = json!({"game": "gomoku", "board": gomoku_board(i), "budget_ms": 100});
        for replica in [&a, &b] {
            let (status, body, elapsed) = replica.post_move(&request).await;
            assert_eq!(status, 200, "{body}");
            let search =
                Duration::from_secs_f64(body["elapsed_ms"].as_f64().expect("elapsed_ms") / 1e3);
            assert!(
                elapsed <= Duration::from_millis(110) || search > Duration::from_millis(100),
                "answered in {elapsed:?}, of which the search took {search:?}"
            );
        }
    }
    [a, b]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_killed_replicas_answer_within_budget_plus_10_ms_without_errors() {
    let _serial = SERIAL.lock().await;
    let mut redis = Redis::start();
    replicas_answer_on_time_after(&mut redis, Redis::kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_hung_replicas_answer_within_budget_plus_10_ms_without_errors() {
    let _serial = SERIAL.lock().await;
    let mut redis = Redis::start();
    let [a, _b] = replicas_answer_on_time_after(&mut redis, |redis| redis.freeze()).await;
    let metrics = reqwest::get(a.url("/metrics")).await.expect("metrics");
    let metrics = metrics.text().await.expect("text");
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get",kind="timeout"}"#),
        "{metrics}"
    );
}

/// A 15x15 gomoku board with two stones placed by `i` (distinct for `i` < 1500): a position
/// whose search runs to its deadline, and that no cache has seen.
fn gomoku_pair(i: usize) -> Vec<String> {
    let mut rows = vec![vec!['.'; 15]; 15];
    rows[3 + i % 10][3 + i / 10 % 10] = 'X';
    rows[0][i / 100] = 'O';
    rows.into_iter().map(String::from_iter).collect()
}

/// `n` `/move` requests at a 100 ms budget, one after another; their latencies, sorted.
async fn move_latencies(replica: &Replica, first: usize, n: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(n);
    for i in first..first + n {
        let body = json!({"game": "gomoku", "board": gomoku_pair(i), "budget_ms": 100});
        let (status, answer, elapsed) = replica.post_move(&body).await;
        assert_eq!(status, 200, "{answer}");
        took.push(elapsed);
    }
    took.sort_unstable();
    took
}

/// The `p`-th percentile (0 to 100) of sorted `samples`.
fn percentile(samples: &[Duration], p: usize) -> Duration {
    samples[(samples.len() * p).div_ceil(100).clamp(1, samples.len()) - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_p99_stays_within_budget_plus_10_ms_while_a_batch_runs() {
    let _serial = SERIAL.lock().await;
    let redis = Redis::start();
    // Two workers: batch items take one (KIBITZ_BATCH_SPARE_WORKERS=1 leaves the other idle).
    let replica = Replica::start_with(&redis.url(), &[("KIBITZ_WORKERS", "2")]).await;
    let quiet = move_latencies(&replica, 0, 40).await;
    let items: Vec<_> = (0..400)
        .map(|i| json!({"move": {"game": "gomoku", "board": gomoku_pair(200 + i)}}))
        .collect();
    let response = reqwest::Client::new()
        .post(replica.url("/analyses"))
        .json(&json!({"items": items, "budget_ms": 20, "priority": "high"}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 202);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let busy = move_latencies(&replica, 40, 40).await;
    let status: serde_json::Value = reqwest::get(replica.url(&location))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let done = status["done"].as_u64().unwrap();
    println!(
        "/move at 100 ms: p50 {:?} p99 {:?} alone; p50 {:?} p99 {:?} with a batch running \
         ({done} of 400 items done meanwhile)",
        percentile(&quiet, 50),
        percentile(&quiet, 99),
        percentile(&busy, 50),
        percentile(&busy, 99),
    );
    assert!(
        done > 5 && done < 400,
        "the batch ran all along: {done} done"
    );
    assert!(
        percentile(&busy, 99) <= Duration::from_millis(110),
        "p99 {:?} with a batch running",
        percentile(&busy, 99)
    );
}

/// 25x25 boards of exactly six in a row, whose patterns are computed rather than looked up: a
/// node costs sixty times a 15x15 five-in-a-row one. Read every 1,024 nodes, the clock let
/// these answers come up to 32 ms late (random positions of 46 and 73 stones; the second was
/// measured with six or more, computed too until it got a table).
const SIX_IN_A_ROW_BOARDS: [[&str; 25]; 2] = [
    [
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        "........X.O.....X........",
        ".........................",
        "............OXXO.........",
        "......XO.X.OXX.O.........",
        ".........XO......X.......",
        "......O.O...XX....O......",
        "......XX.......OO.O......",
        "........X................",
        ".......OO.......O.X......",
        ".........X.....O..X......",
        ".......OOO...............",
        "......X..O..X....O.......",
        ".........X...X...OX......",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
    ],
    [
        ".........................",
        ".........................",
        ".........................",
        ".........................",
        ".....X......X.O..........",
        "......O.....O...O........",
        "......XO....OX..O..OX....",
        "......X......XO...X......",
        "........XX.OX......X.....",
        ".......O..X..O......X....",
        "................X...O....",
        ".......XX.....X.X........",
        "............X...XX.......",
        "......XO....O............",
        "............O.....O.X....",
        "......X.............X....",
        ".....O.X..OOOX..OO.O.....",
        "........X.XO.............",
        "....OO..X.OO.XO..O..X....",
        ".......O.X..O.X..O.......",
        ".......X.....X....OO.....",
        ".........................",
        ".........................",
        ".........................",
        ".........................",
    ],
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_nodes_still_answer_within_budget_plus_10_ms() {
    let _serial = SERIAL.lock().await;
    let state = state_with(Config {
        workers: 1,
        ..Config::for_tests()
    });
    for board in &SIX_IN_A_ROW_BOARDS {
        for budget_ms in [50u64, 200] {
            let body = json!({
                "game": "gomoku",
                "board": board,
                "rules": {"win_length": 6, "overline": "no_win"},
                "budget_ms": budget_ms,
            });
            let started = Instant::now();
            let reply = post_move(&state, body).await;
            let took = started.elapsed();
            assert_eq!(reply.status, 200, "{}", reply.text);
            assert!(
                took <= Duration::from_millis(budget_ms + 10),
                "exactly six, {budget_ms} ms: answered in {took:?}"
            );
        }
    }
}
