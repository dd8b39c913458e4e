//! `wdl` (win/draw/loss per mille for the side to move) on every scored answer: exact for every
//! proven one (tic-tac-toe exhaustively, through `POST /move` with `analysis`), from the game's
//! fitted model otherwise (`wdl_model` names it), summing to 1000 everywhere, in streamed
//! iteration events and in review plies too.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::boards::{open_tictactoe_positions, tictactoe_rows as rows, tictactoe_won as won};
use crate::service::common::*;
use crate::sse_client::post_events;

/// The game value for the side to move (`stone` to play): 1 win, 0 draw, -1 loss; by brute force.
fn value(cells: &mut [u8; 9], stone: u8, memo: &mut HashMap<([u8; 9], u8), i32>) -> i32 {
    let other = if stone == b'X' { b'O' } else { b'X' };
    if won(cells, other) {
        return -1;
    }
    if cells.iter().all(|&c| c != b'.') {
        return 0;
    }
    if let Some(&v) = memo.get(&(*cells, stone)) {
        return v;
    }
    let mut best = -1;
    for i in 0..9 {
        if cells[i] == b'.' {
            cells[i] = stone;
            best = best.max(-value(cells, other, memo));
            cells[i] = b'.';
        }
    }
    memo.insert((*cells, stone), best);
    best
}

fn exact(value: i32) -> Value {
    match value {
        1 => json!([1000, 0, 0]),
        0 => json!([0, 1000, 0]),
        _ => json!([0, 0, 1000]),
    }
}

fn sums_to_1000(wdl: &Value) -> bool {
    wdl.as_array()
        .is_some_and(|a| a.len() == 3 && a.iter().filter_map(Value::as_u64).sum::<u64>() == 1000)
}

#[tokio::test]
async fn every_tictactoe_answer_and_analysis_entry_has_the_exact_wdl_of_its_true_value() {
    let state = state();
    let positions = open_tictactoe_positions();
    assert_eq!(positions.len(), 4520);
    let mut memo = HashMap::new();
    for (cells, stone) in positions {
        let reply = post_move(
            &state,
            json!({"game": "tictactoe", "board": rows(&cells), "analysis": true}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let body = &reply.body;
        assert!(body["outcome"].is_string(), "always proven: {}", reply.text);
        let mut board = cells;
        let truth = value(&mut board, stone, &mut memo);
        assert_eq!(
            body["wdl"],
            exact(truth),
            "{:?}: {}",
            rows(&cells),
            reply.text
        );
        let other = if stone == b'X' { b'O' } else { b'X' };
        for entry in body["analysis"].as_array().unwrap() {
            let cell =
                entry["move"]["row"].as_u64().unwrap() * 3 + entry["move"]["col"].as_u64().unwrap();
            let mut after = cells;
            after[cell as usize] = stone;
            let truth = -value(&mut after, other, &mut memo);
            assert_eq!(entry["wdl"], exact(truth), "{:?} {entry}", rows(&cells));
        }
    }
}

#[tokio::test]
async fn a_heuristic_answer_takes_its_wdl_from_the_named_model_and_is_never_certain() {
    let state = state();
    // A Connect-4 middle game searched only 2 plies deep: not proven.
    let reply = post_move(
        &state,
        json!({"game": "connect4", "moves": "4453432", "max_depth": 2, "analysis": true}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = &reply.body;
    assert!(body["outcome"].is_null(), "{}", reply.text);
    assert_eq!(body["wdl_model"], "connect4-2026-12-04");
    assert!(sums_to_1000(&body["wdl"]), "{}", body["wdl"]);
    assert!(body["wdl"][0] != 1000 && body["wdl"][2] != 1000);
    // Analysis entries: best first, so the chance to win never rises down the list among
    // entries of one depth, and each entry's triple sums to 1000.
    let entries = body["analysis"].as_array().unwrap();
    assert_eq!(entries[0]["wdl"], body["wdl"]);
    for entry in entries {
        assert!(sums_to_1000(&entry["wdl"]), "{entry}");
    }
    for pair in entries.windows(2) {
        if pair[0]["depth"] == pair[1]["depth"] && pair[1]["outcome"].is_null() {
            assert!(
                pair[0]["wdl"][0].as_u64() >= pair[1]["wdl"][0].as_u64(),
                "{pair:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_book_answers_connect4_openings_exactly() {
    let state = state();
    let reply = post_move(&state, json!({"game": "connect4", "moves": "44"})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let expected = match reply.body["outcome"].as_str() {
        Some("win") => json!([1000, 0, 0]),
        Some("draw") => json!([0, 1000, 0]),
        Some("loss") => json!([0, 0, 1000]),
        other => panic!("the book proves it: {other:?}"),
    };
    assert_eq!(reply.body["wdl"], expected);
}

#[tokio::test]
async fn streamed_iterations_carry_wdl() {
    let server = start_server(kibitz::config::Config::for_tests()).await;
    let reader = post_events(
        &server.url("/move"),
        &json!({"game": "gomoku", "moves": "h8 h9 i8", "max_depth": 3}),
    )
    .await;
    assert_eq!(reader.status(), 200);
    let events = reader.collect().await;
    let iterations: Vec<&Value> = events
        .iter()
        .filter(|e| e.name == "iteration")
        .map(|e| &e.data)
        .collect();
    assert!(!iterations.is_empty());
    for it in iterations {
        assert!(sums_to_1000(&it["wdl"]), "{it}");
    }
    let answer = &events.last().unwrap().data;
    assert_eq!(answer["wdl_model"], "gomoku-2026-12-04");
    assert!(sums_to_1000(&answer["wdl"]), "{answer}");
}

#[tokio::test]
async fn review_plies_carry_the_movers_wdl_before_and_after() {
    let state = state();
    let reply = send(
        kibitz::api::app(state.clone()),
        post_json_request(
            "/review",
            &json!({"game": "tictactoe", "moves": "b2 a3 a1 c3"}),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["wdl_model"], "tictactoe-2026-12-04");
    for ply in reply.body["plies"].as_array().unwrap() {
        for (field, outcome) in [
            ("best_wdl", "best_outcome"),
            ("played_wdl", "played_outcome"),
        ] {
            let expected = match ply[outcome].as_str() {
                Some("win") => json!([1000, 0, 0]),
                Some("draw") => json!([0, 1000, 0]),
                Some("loss") => json!([0, 0, 1000]),
                other => panic!("tic-tac-toe is proven: {other:?}"),
            };
            assert_eq!(ply[field], expected, "{ply}");
        }
    }
}
