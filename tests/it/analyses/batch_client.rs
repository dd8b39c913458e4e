//! What the batch tests send and check: batches of real positions and games, submitting,
//! polling until done, and the exactly-once check of the results.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A Connect-4 position after `opening` (columns), as a `/move` body without a budget.
pub fn connect4_move(opening: &[usize]) -> Value {
    let mut body = crate::redis_support::connect4_request(opening);
    if let Some(fields) = body.as_object_mut() {
        fields.remove("max_depth");
    }
    body
}

/// A tic-tac-toe game of three moves, distinct by `i` (< 504), as a `/review` body.
pub fn tictactoe_review(i: usize) -> Value {
    let (a, b, c) = (i % 9, (i / 9) % 8, (i / 72) % 7);
    let mut free: Vec<usize> = (0..9).collect();
    let moves: Vec<Value> = [a, b, c]
        .into_iter()
        .map(|pick| {
            let cell = free.remove(pick % free.len());
            json!({"row": cell / 3, "col": cell % 3})
        })
        .collect();
    json!({"game": "tictactoe", "moves": moves})
}

/// `n` gomoku positions (two stones, distinct for `n` < 90), whose searches use their whole
/// budget.
pub fn gomoku_items(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut rows = vec![vec!['.'; 15]; 15];
            rows[3 + i % 10][3 + i / 10] = 'X';
            rows[13][13] = 'O';
            let board: Vec<String> = rows.into_iter().map(String::from_iter).collect();
            json!({"move": {"game": "gomoku", "board": board}})
        })
        .collect()
}

/// `n` items: every sixth a game to review, the others Connect-4 positions, all distinct.
pub fn mixed_items(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            if i % 6 == 5 {
                json!({"review": tictactoe_review(i)})
            } else {
                let opening = [i % 7, (i / 7) % 7, (i / 49) % 7, 3];
                json!({"move": connect4_move(&opening)})
            }
        })
        .collect()
}

/// POSTs a batch to `base`; the status, the body and the `Location`.
pub async fn submit(base: &str, body: &Value, client: Option<&str>) -> (u16, Value, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/analyses"))
        .json(body);
    if let Some(client) = client {
        request = request.header("x-client-id", client);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body, location)
}

/// GETs `path` from `base`: the status and the body.
pub async fn get(base: &str, path: &str) -> (u16, Value) {
    let response = reqwest::get(format!("{base}{path}"))
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Polls `location` on `bases` in turn (any replica answers for any batch) until the batch
/// is `done` or `cancelled`, at most `patience`; the last body.
pub async fn until_finished(bases: &[String], location: &str, patience: Duration) -> Value {
    let deadline = Instant::now() + patience;
    let mut turn = 0;
    loop {
        let base = &bases[turn % bases.len()];
        turn += 1;
        if let Ok(response) = reqwest::get(format!("{base}{location}")).await
            && response.status() == 200
            && let Ok(body) = response.json::<Value>().await
        {
            if matches!(body["status"].as_str(), Some("done" | "cancelled")) {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "not finished in {patience:?}: {body}"
            );
        } else {
            assert!(Instant::now() < deadline, "no answer for {location}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Checks that `body` has one result per index from 0 to `total`, in order, each answered
/// with 200 and the answer its item's route gives (a `/move` answer's `move`, a review's
/// `plies`); the replicas that answered.
pub fn exactly_once(body: &Value, total: usize) -> BTreeSet<String> {
    assert_eq!(body["total"], total, "{body}");
    assert_eq!(body["done"], total, "{body}");
    let results = body["results"].as_array().expect("results");
    let indices: Vec<u64> = results
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (0..total as u64).collect();
    assert_eq!(indices, expected, "every index once, in order");
    for result in results {
        assert_eq!(result["status"], 200, "{result}");
        let answer = &result["answer"];
        assert!(
            answer.get("move").is_some() || answer.get("plies").is_some(),
            "{result}"
        );
    }
    results
        .iter()
        .map(|r| r["replica"].as_str().unwrap_or("").to_owned())
        .collect()
}
