//! `/analyses` on one replica without Redis: the real server on a loopback port, its batch
//! items in the in-process store, run by its own idle workers.

use std::time::Duration;

use serde_json::{Value, json};

use super::batch_client::*;
use crate::service::common::{Running, start_server};
use crate::sse_client::get_events;
use kibitz::config::Config;

async fn server(config: Config) -> (Running, String) {
    let running = start_server(Config {
        replica_name: Some("solo".into()),
        ..config
    })
    .await;
    let base = format!("http://{}", running.addr);
    (running, base)
}

#[tokio::test]
async fn a_batch_without_redis_is_answered_in_process_every_item_once_in_order() {
    let (_server, base) = server(Config::for_tests()).await;
    let items = mixed_items(24);
    let (status, accepted, location) =
        submit(&base, &json!({"items": items, "budget_ms": 10}), None).await;
    assert_eq!(status, 202, "{accepted}");
    let id = accepted["id"].as_str().expect("an id");
    assert_eq!(location, format!("/analyses/{id}"));
    assert_eq!(accepted["status"], "queued");
    assert_eq!(accepted["total"], 24);
    assert_eq!(accepted["results"], json!([]));
    let done = until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(done["status"], "done");
    let replicas = exactly_once(&done, 24);
    assert_eq!(replicas.into_iter().collect::<Vec<_>>(), ["solo"]);
    // An item's answer is the one its route gives: a position's best move, a game's plies.
    let results = done["results"].as_array().unwrap();
    assert!(results[0]["answer"]["move"].is_object(), "{}", results[0]);
    assert_eq!(results[5]["answer"]["plies"].as_array().unwrap().len(), 3);
    let (status, queue) = get(&base, "/analyses").await;
    assert_eq!(status, 200);
    assert_eq!(queue["store"], "memory");
    assert_eq!(
        (queue["queued"].as_u64(), queue["pending"].as_u64()),
        (Some(0), Some(0))
    );
}

/// The problem of a refused batch: status, and the pointer of its (first) error.
async fn refused(base: &str, body: &Value) -> (u16, String, String) {
    let (status, problem, _) = submit(base, body, None).await;
    let pointer = problem["errors"][0]["pointer"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let detail = problem["detail"].as_str().unwrap_or("").to_owned();
    (status, pointer, detail)
}

#[tokio::test]
async fn bad_batches_are_refused_before_anything_is_queued_naming_the_item_and_why() {
    let (_server, base) = server(Config {
        batch_max_items: 4,
        batch_max_total_budget_ms: 100,
        ..Config::for_tests()
    })
    .await;
    let good = json!({"move": connect4_move(&[3])});
    let many = json!({"items": vec![good.clone(); 5], "budget_ms": 10});
    let (status, pointer, detail) = refused(&base, &many).await;
    assert_eq!((status, pointer.as_str()), (422, "/items"), "{detail}");
    assert!(detail.contains("KIBITZ_BATCH_MAX_ITEMS"), "{detail}");

    let bad_board = json!({"game": "connect4", "board": ["......."]});
    let body = json!({"items": [good, good, {"move": bad_board}], "budget_ms": 10});
    let (status, pointer, detail) = refused(&base, &body).await;
    assert_eq!(status, 422, "{detail}");
    assert!(
        pointer.starts_with("/items/2/move/board"),
        "{pointer}: {detail}"
    );

    let unknown_field = json!({"game": "connect4", "board": [], "colour": "red"});
    let body = json!({"items": [good, {"move": unknown_field}]});
    let (status, pointer, detail) = refused(&base, &body).await;
    assert_eq!(status, 400, "{detail}");
    assert!(pointer.starts_with("/items/1"), "{pointer}: {detail}");
    assert!(detail.contains("colour"), "{detail}");

    let neither = json!({"items": [good, {"search": {}}]});
    let (status, pointer, detail) = refused(&base, &neither).await;
    assert_eq!((status, pointer.as_str()), (400, "/items/1"), "{detail}");

    let illegal =
        json!({"game": "tictactoe", "moves": [{"row": 0, "col": 0}, {"row": 0, "col": 0}]});
    let body = json!({"items": [{"review": illegal}], "budget_ms": 10});
    let (status, pointer, detail) = refused(&base, &body).await;
    assert_eq!(
        (status, pointer.as_str()),
        (422, "/items/0/review/moves/1"),
        "{detail}"
    );

    // The batch's budget is out of range whether or not an item inherits it.
    let out_of_range = json!({"items": [good], "budget_ms": 0});
    let (status, pointer, _) = refused(&base, &out_of_range).await;
    assert_eq!((status, pointer.as_str()), (422, "/budget_ms"));
    let own_budget = json!({"game": "tictactoe", "moves": "", "budget_ms": 1});
    let unused = json!({"items": [{"move": own_budget}], "budget_ms": 0});
    let (status, pointer, _) = refused(&base, &unused).await;
    assert_eq!((status, pointer.as_str()), (422, "/budget_ms"));
    let item_out_of_range = json!({"game": "tictactoe", "moves": "", "budget_ms": 0});
    let body = json!({"items": [{"move": item_out_of_range}]});
    let (status, pointer, _) = refused(&base, &body).await;
    assert_eq!((status, pointer.as_str()), (422, "/items/0/move/budget_ms"));

    let over_budget = json!({"items": [good, good, good], "budget_ms": 40});
    let (status, pointer, detail) = refused(&base, &over_budget).await;
    assert_eq!((status, pointer.as_str()), (422, "/items"), "{detail}");
    assert!(
        detail.contains("KIBITZ_BATCH_MAX_TOTAL_BUDGET_MS"),
        "{detail}"
    );

    let (status, _, detail) = refused(&base, &json!({"items": []})).await;
    assert_eq!(status, 422, "{detail}");

    let (_, queue) = get(&base, "/analyses").await;
    assert_eq!(
        (queue["queued"].as_u64(), queue["pending"].as_u64()),
        (Some(0), Some(0))
    );
}

#[tokio::test]
async fn a_client_with_too_many_batches_in_flight_is_refused_with_429() {
    // The test's requests all come from 127.0.0.1: trusting it as a proxy lets one of them
    // stand for another client by the address it forwards.
    let (_server, base) = server(Config {
        batch_max_in_flight: 1,
        trusted_proxies: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::for_tests()
    })
    .await;
    let long = json!({"items": gomoku_items(40), "budget_ms": 50});
    let (status, _, _) = submit(&base, &long, Some("alice")).await;
    assert_eq!(status, 202);
    let (status, problem, _) = submit(&base, &long, Some("alice")).await;
    assert_eq!(status, 429, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("KIBITZ_BATCH_MAX_IN_FLIGHT")
    );
    // Another name is not another client (X-Client-Id is not read)...
    let (status, _, _) = submit(&base, &long, Some("bob")).await;
    assert_eq!(status, 429, "a name chosen by the client lifted its limit");
    // ...another address is.
    let status = reqwest::Client::new()
        .post(format!("{base}/analyses"))
        .header("x-forwarded-for", "203.0.113.9")
        .json(&long)
        .send()
        .await
        .expect("an answer")
        .status();
    assert_eq!(status, 202, "another client has its own limit");
}

#[tokio::test]
async fn a_cancelled_batch_runs_no_more_items() {
    let (_server, base) = server(Config::for_tests()).await;
    let body = json!({"items": gomoku_items(60), "budget_ms": 50});
    let (_, _, location) = submit(&base, &body, None).await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    let response = reqwest::Client::new()
        .post(format!("{base}{location}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let cancelled: Value = response.json().await.unwrap();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let done_then = cancelled["done"].as_u64().unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (_, later) = get(&base, &location).await;
    assert_eq!(later["status"], "cancelled");
    // At most the items running when it was cancelled finished after.
    assert!(later["done"].as_u64().unwrap() <= done_then + 2, "{later}");
    assert!(later["done"].as_u64().unwrap() < 60);
}

#[tokio::test]
async fn a_deleted_batch_is_gone_a_get_after_is_404_and_a_second_delete_too() {
    let (_server, base) = server(Config::for_tests()).await;
    let body = json!({"items": gomoku_items(10), "budget_ms": 50});
    let (_, _, location) = submit(&base, &body, None).await;
    let client = reqwest::Client::new();
    let response = client
        .delete(format!("{base}{location}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let (status, problem) = get(&base, &location).await;
    assert_eq!(status, 404, "{problem}");
    let response = client
        .delete(format!("{base}{location}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let response = client
        .post(format!("{base}{location}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    // Its items are not run: the queue empties without them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, queue) = get(&base, "/analyses").await;
    assert_eq!(queue["queued"], 0, "{queue}");
}

#[tokio::test]
async fn an_analysis_streams_each_result_as_it_completes_then_the_whole_batch() {
    let (_server, base) = server(Config::for_tests()).await;
    let body = json!({"items": mixed_items(8), "budget_ms": 20});
    let (_, _, location) = submit(&base, &body, None).await;
    let stream = get_events(&format!("{base}{location}")).await;
    assert_eq!(stream.status(), 200);
    assert!(stream.content_type().starts_with("text/event-stream"));
    let events = stream.collect().await;
    let (last, results) = events.split_last().expect("events");
    assert_eq!(last.name, "analysis", "{}", last.raw);
    assert_eq!(last.data["status"], "done");
    assert_eq!(results.len(), 8, "one event per item");
    let mut indices: Vec<u64> = results
        .iter()
        .map(|e| {
            assert_eq!(e.name, "result");
            e.data["index"].as_u64().unwrap()
        })
        .collect();
    indices.sort_unstable();
    assert_eq!(indices, (0..8).collect::<Vec<u64>>());
}

#[tokio::test]
async fn an_analysis_is_gone_once_its_results_expire() {
    let (_server, base) = server(Config {
        batch_result_ttl_s: 1,
        ..Config::for_tests()
    })
    .await;
    let (status, _) = get(&base, "/analyses/00000000-0000-4000-8000-000000000000").await;
    assert_eq!(status, 404);
    let (status, _) = get(&base, "/analyses/not-an-id").await;
    assert_eq!(status, 404);
    let body = json!({"items": mixed_items(2), "budget_ms": 10});
    let (_, _, location) = submit(&base, &body, None).await;
    until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(5),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, problem) = get(&base, &location).await;
    assert_eq!(status, 404, "{problem}");
}

#[tokio::test]
async fn batch_results_name_their_moves_as_the_routes_do() {
    let (_server, base) = server(Config::for_tests()).await;
    let items = json!([
        {"move": {"game": "tictactoe", "board": ["XX.", "OO.", "..."]}},
        {"move": {"game": "connect4", "moves": "4444"}},
        {"review": {"game": "tictactoe", "moves": "b2 a3 a1"}},
    ]);
    let (status, accepted, location) =
        submit(&base, &json!({"items": items, "budget_ms": 200}), None).await;
    assert_eq!(status, 202, "{accepted}");
    let done = until_finished(
        std::slice::from_ref(&base),
        &location,
        Duration::from_secs(20),
    )
    .await;
    let results = done["results"].as_array().unwrap();
    let answer = |i: u64| {
        results
            .iter()
            .find(|r| r["index"] == i)
            .map(|r| r["answer"].clone())
            .unwrap_or_else(|| panic!("result {i}: {done}"))
    };
    let ttt = answer(0);
    assert_eq!(ttt["move"]["notation"], "c3", "{ttt}");
    assert_eq!(ttt["pv"][0]["notation"], "c3", "{ttt}");
    let c4 = answer(1);
    let column = c4["move"]["column"].as_u64().expect("a column");
    assert_eq!(c4["move"]["notation"], (column + 1).to_string(), "{c4}");
    let review = answer(2);
    let names: Vec<&str> = review["plies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["played"]["notation"].as_str().unwrap_or("unnamed"))
        .collect();
    assert_eq!(names, ["b2", "a3", "a1"], "{review}");
}
