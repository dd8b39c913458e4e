//! `POST /review` over a real socket: marks, proven outcome changes, illegal move lists,
//! budgets, the cache, and the per-ply event stream.

use std::time::Duration;

use serde_json::{Value, json};

use crate::boards::board15;
use crate::live_progress::assert_schema;
use crate::service::common::*;
use crate::sse_client::post_events;
use kibitz::config::Config;

fn cell(row: usize, col: usize) -> Value {
    json!({"row": row, "col": col})
}

/// A move of an answer as its cell alone (answers also name it, see `move_lists`).
fn at(mv: &Value) -> Value {
    json!({"row": mv["row"], "col": mv["col"]})
}

/// X centre, O edge (loses), X corner (wins in 5), O blocks, X lets the win go (a draw).
fn tictactoe_game() -> Value {
    json!({"game": "tictactoe", "moves": [cell(1, 1), cell(0, 1), cell(0, 0), cell(2, 2), cell(0, 2)]})
}

async fn review(server: &Running, body: &Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(server.url("/review"))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = response.json().await.unwrap();
    if status != 200 {
        assert_eq!(content_type, "application/problem+json", "{body}");
    }
    (status, body)
}

fn marks(review: &Value) -> Vec<&str> {
    review["plies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["mark"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_tictactoe_blunder_is_marked_and_the_outcome_change_named_at_its_ply() {
    let server = start_server(Config::for_tests()).await;
    let (status, body) = review(&server, &tictactoe_game()).await;
    assert_eq!(status, 200, "{body}");
    assert_schema("ReviewResponse", &body);
    assert_eq!(
        marks(&body),
        ["best", "blunder", "best", "best", "blunder"],
        "{body}"
    );
    let ply2 = &body["plies"][1];
    assert_eq!(ply2["ply"], 2);
    assert_eq!(ply2["player"], "O");
    assert_eq!(at(&ply2["played"]), cell(0, 1));
    assert_eq!(ply2["best_outcome"], "draw");
    assert_eq!(ply2["played_outcome"], "loss");
    assert_eq!(ply2["outcome_change"], "turned a draw into a loss in 6");
    assert_eq!(
        body["first_outcome_change"],
        json!({"ply": 2, "player": "O", "change": "turned a draw into a loss in 6"})
    );
    let ply5 = &body["plies"][4];
    assert_eq!(ply5["best_outcome"], "win");
    assert_eq!(ply5["played_outcome"], "draw");
    assert_eq!(ply5["outcome_change"], "threw away a win in 3: now a draw");
    // The score of a proven move is the mate-convention score of its outcome.
    assert_eq!(ply2["played_score"], -(1_000_000 - 6));
    assert_eq!(body["status"], "ongoing");
}

#[tokio::test]
async fn a_finished_game_reports_its_winner_and_the_winning_move_as_best() {
    let server = start_server(Config::for_tests()).await;
    let moves = [cell(0, 0), cell(1, 0), cell(0, 1), cell(1, 1), cell(0, 2)];
    let (status, body) = review(&server, &json!({"game": "tictactoe", "moves": moves})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "won");
    assert_eq!(body["winner"], "X");
    let last = &body["plies"][4];
    assert_eq!(last["mark"], "best");
    assert_eq!(last["played_outcome"], "win");
    assert_eq!(last["played_plies_to_end"], 1);
}

#[tokio::test]
async fn a_connect4_opening_blunder_throws_away_the_solved_win() {
    let server = start_server(Config::for_tests()).await;
    // The empty board is a first-player win in 41 with the centre; an edge column loses. The
    // solver needs a few ms a position with the opening book; the budget leaves room for a
    // machine busy with other tests.
    let request = json!({"game": "connect4", "moves": [0, 3, 3],
                         "budget_ms": 12_000, "ply_budget_ms": 3_000});
    let (status, body) = review(&server, &request).await;
    assert_eq!(status, 200, "{body}");
    assert_schema("ReviewResponse", &body);
    let first = &body["plies"][0];
    assert_eq!(at(&first["played"]), cell(5, 0));
    assert_eq!(at(&first["best"]), cell(5, 3));
    assert_eq!(first["mark"], "blunder");
    assert_eq!(first["best_outcome"], "win");
    assert_eq!(first["best_plies_to_end"], 41);
    assert_eq!(first["played_outcome"], "loss");
    assert_eq!(body["first_outcome_change"]["ply"], 1);
    assert!(
        first["outcome_change"]
            .as_str()
            .unwrap()
            .starts_with("threw away a win in 41: now a loss in"),
        "{first}"
    );
    // Every later ply is proven too, and O's reply in the centre keeps its won game.
    assert!(
        body["plies"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["best_outcome"].is_string() && p["played_outcome"].is_string()),
        "{body}"
    );
    assert_eq!(body["plies"][1]["mark"], "best");
}

#[tokio::test]
async fn a_connect4_review_can_start_from_a_given_position() {
    let server = start_server(Config::for_tests()).await;
    let board = [
        ".......", ".......", ".......", ".......", "...O...", "...X...",
    ];
    let body = json!({"game": "connect4", "board": board, "moves": [3, 2]});
    let (status, body) = review(&server, &body).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["plies"][0]["ply"], 1);
    assert_eq!(body["plies"][0]["player"], "X");
    let c4 = |row: usize, col: usize| json!({"row": row, "col": col, "notation": (col + 1).to_string(), "column": col});
    assert_eq!(body["plies"][0]["played"], c4(3, 3));
    assert_eq!(body["plies"][1]["played"], c4(5, 2));
}

#[tokio::test]
async fn illegal_move_lists_are_422_naming_the_ply_and_why() {
    let server = start_server(Config::for_tests()).await;
    // Black to move; row 7, column 7 would be a double three.
    let renju_board = board15(&[
        (0, 0, 'O'),
        (0, 2, 'O'),
        (5, 7, 'X'),
        (6, 7, 'X'),
        (7, 5, 'X'),
        (7, 6, 'X'),
        (14, 12, 'O'),
        (14, 14, 'O'),
    ]);
    let cases = [
        (
            json!({"game": "connect4", "moves": [3, 3, 3, 3, 3, 3, 3]}),
            "/moves/6",
            "column 3 is full",
        ),
        (
            json!({"game": "connect4", "moves": [9]}),
            "/moves/0",
            "column 9 is off the board",
        ),
        (
            json!({"game": "tictactoe", "moves": [cell(1, 1), cell(1, 1)]}),
            "/moves/1",
            "row 1, column 1 is already occupied",
        ),
        (
            json!({"game": "tictactoe", "moves": [cell(3, 0)]}),
            "/moves/0",
            "off the board",
        ),
        (
            json!({"game": "tictactoe", "moves":
                [cell(0, 0), cell(1, 0), cell(0, 1), cell(1, 1), cell(0, 2), cell(2, 2)]}),
            "/moves/5",
            "the game is already over: X won with ply 5",
        ),
        (
            json!({"game": "gomoku", "rules": {"variant": "renju"}, "board": renju_board,
                   "moves": [cell(7, 7)]}),
            "/moves/0",
            "forbidden to black under renju (double_three)",
        ),
        (
            json!({"game": "tictactoe", "moves": [4]}),
            "/moves/0",
            "a move in tictactoe is a cell {\"row\", \"col\"}, not a column",
        ),
        (
            json!({"game": "connect4", "moves": [cell(5, 3)]}),
            "/moves/0",
            "a move in connect4 is a column number (0-based from the left), not a cell",
        ),
    ];
    for (request, pointer, why) in cases {
        let (status, body) = review(&server, &request).await;
        assert_eq!(status, 422, "{request}: {body}");
        assert_eq!(body["errors"][0]["pointer"], pointer, "{body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains(why), "{detail} should say {why}");
        let ply: usize = pointer.rsplit('/').next().unwrap().parse().unwrap();
        assert!(detail.starts_with(&format!("ply {}", ply + 1)), "{detail}");
    }
    // More moves than the board has cells is refused before any is replayed.
    let many = vec![cell(0, 0); 10];
    let (status, body) = review(&server, &json!({"game": "tictactoe", "moves": many})).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["pointer"], "/moves");
    // Not a move at all: the JSON itself is refused.
    let (status, body) = review(
        &server,
        &json!({"game": "tictactoe", "moves": [{"row": -1, "col": 0}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn review_budgets_are_bounded() {
    let server = start_server(Config {
        max_budget_ms: 2_000,
        ..Config::for_tests()
    })
    .await;
    let mut game = tictactoe_game();
    game["budget_ms"] = json!(2_001);
    let (status, body) = review(&server, &game).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["pointer"], "/budget_ms");
    game["budget_ms"] = json!(10);
    let (status, body) = review(&server, &game).await;
    assert_eq!(status, 422, "6 positions need 30 ms: {body}");
    game["budget_ms"] = Value::Null;
    game["ply_budget_ms"] = json!(1);
    let (status, body) = review(&server, &game).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["pointer"], "/ply_budget_ms");
}

#[tokio::test]
async fn a_review_keeps_to_its_total_budget() {
    let server = start_server(Config {
        cache_entries: 0,
        ..Config::for_tests()
    })
    .await;
    // Six quiet gomoku plies: every position is searched to the clock, so the total budget
    // (not 7 x the per-ply one) bounds the review.
    let moves = [
        cell(7, 7),
        cell(8, 8),
        cell(6, 8),
        cell(8, 6),
        cell(9, 9),
        cell(5, 5),
    ];
    let request =
        json!({"game": "gomoku", "moves": moves, "budget_ms": 700, "ply_budget_ms": 5000});
    let started = std::time::Instant::now();
    let (status, body) = review(&server, &request).await;
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["plies"].as_array().unwrap().len(), 6);
    assert!(took < Duration::from_millis(700 + 400), "took {took:?}");
}

#[tokio::test]
async fn a_second_review_of_the_same_game_comes_from_the_cache() {
    let server = start_server(Config::for_tests()).await;
    let (_, first) = review(&server, &tictactoe_game()).await;
    let (_, second) = review(&server, &tictactoe_game()).await;
    let cached = |body: &Value| -> Vec<bool> {
        body["plies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["cached"].as_bool().unwrap())
            .collect()
    };
    assert!(cached(&second).iter().all(|&c| c), "{second}");
    assert_eq!(marks(&first), marks(&second));
}

#[tokio::test]
async fn a_review_streams_one_event_per_ply_then_the_whole_review() {
    let server = start_server(Config::for_tests()).await;
    let reader = post_events(&server.url("/review"), &tictactoe_game()).await;
    assert_eq!(reader.status(), 200);
    assert!(reader.content_type().starts_with("text/event-stream"));
    let events = reader.collect().await;
    let (last, plies) = events.split_last().unwrap();
    assert_eq!(last.name, "review");
    assert_schema("ReviewResponse", &last.data);
    assert_eq!(plies.len(), 5);
    for (i, event) in plies.iter().enumerate() {
        assert_eq!(event.name, "ply");
        assert_eq!(event.data["ply"], i + 1);
        assert_schema("PlyReview", &event.data);
        // Each ply event is the review's entry for that ply.
        assert_eq!(event.data, last.data["plies"][i]);
    }
    // Refusals come before the stream, as problem+json.
    let refused = post_events(
        &server.url("/review"),
        &json!({"game": "tictactoe", "moves": [cell(1, 1), cell(1, 1)]}),
    )
    .await;
    assert_eq!(refused.status(), 422);
    assert_eq!(refused.content_type(), "application/problem+json");
}

#[tokio::test]
async fn whole_numbers_written_with_a_zero_fraction_are_whole_numbers() {
    // JSON Schema's `integer` includes `3.0`: columns, cells and budgets may be written so.
    let server = start_server(Config::for_tests()).await;
    let (status, body) = review(
        &server,
        &json!({"game": "connect4", "moves": [3.0, 3], "ply_budget_ms": 100.0, "budget_ms": 1e3}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["plies"].as_array().unwrap().len(), 2);
    let (status, body) = review(
        &server,
        &json!({"game": "tictactoe", "moves": [{"row": 1.0, "col": 1}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = review(&server, &json!({"game": "connect4", "moves": [2.5]})).await;
    assert_eq!(status, 400, "{body}");
}

/// Twelve gomoku moves around the centre that make no five.
fn gomoku_game() -> Value {
    let moves: Vec<Value> = [
        (7, 7),
        (7, 8),
        (8, 7),
        (8, 8),
        (6, 6),
        (9, 9),
        (6, 8),
        (9, 6),
        (5, 5),
        (10, 10),
        (5, 9),
        (10, 5),
    ]
    .iter()
    .map(|&(r, c)| cell(r, c))
    .collect();
    json!({"game": "gomoku", "moves": moves, "ply_budget_ms": 300})
}

/// Keeps both workers of `server` busy with 400 ms gomoku searches (each on a new position, so
/// none is cached) until the returned flag is set.
fn keep_workers_busy(server: &Running) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for client in 0..2usize {
        let url = server.url("/move");
        let stop = std::sync::Arc::clone(&stop);
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut i = client;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let board = board15(&[(i / 15 % 15, i % 15, 'X')]);
                let _ = http
                    .post(&url)
                    .json(&json!({"game": "gomoku", "board": board, "budget_ms": 400}))
                    .send()
                    .await;
                i += 2;
            }
        });
    }
    stop
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_admitted_under_load_judges_every_ply() {
    // Before: each ply's search was admitted on its own, so under load a later one was shed and
    // the whole review answered 503 after seconds of work.
    let server = start_server(Config::for_tests()).await;
    let load = keep_workers_busy(&server);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, body) = review(&server, &gomoku_game()).await;
    load.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["plies"].as_array().unwrap().len(), 12, "{body}");
    assert_eq!(body["complete"], true, "{body}");
    assert_eq!(body["incomplete"], Value::Null);
    assert_schema("ReviewResponse", &body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_review_admitted_under_load_sends_every_ply_then_the_review() {
    let server = start_server(Config::for_tests()).await;
    let load = keep_workers_busy(&server);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let reader = post_events(&server.url("/review"), &gomoku_game()).await;
    assert_eq!(reader.status(), 200);
    let events = reader.collect().await;
    load.store(true, std::sync::atomic::Ordering::Relaxed);
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    let (last, plies) = events.split_last().unwrap();
    assert_eq!(last.name, "review", "{names:?}");
    assert_eq!(plies.len(), 12, "{names:?}");
    assert!(plies.iter().all(|e| e.name == "ply"), "{names:?}");
    assert_eq!(last.data["complete"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_review_cut_by_shutdown_ends_with_its_review_marked_incomplete() {
    // Before: the searches after the shutdown's stop went on, the process exited under them,
    // and the stream closed with neither `review` nor `error`.
    let config = Config {
        drain_ms: 0,
        shutdown_timeout_ms: 200,
        ..Config::for_tests()
    };
    let mut server = start_server(config).await;
    let mut game = gomoku_game();
    game["ply_budget_ms"] = json!(1000);
    let mut reader = post_events(&server.url("/review"), &game).await;
    assert_eq!(reader.status(), 200);
    let first = reader.next().await.expect("a first event");
    assert_eq!(first.name, "ply");
    let _ = server.stop.take().unwrap().send(());
    let mut events = vec![first];
    while let Some(event) = reader.next().await {
        events.push(event);
    }
    let last = events.last().unwrap();
    assert_eq!(last.name, "review", "the stream ended without its review");
    let plies = events.len() - 1;
    assert!(plies < 12, "the review was not cut: {plies} plies");
    assert_eq!(last.data["complete"], false);
    assert_eq!(last.data["incomplete"]["reason"], "shutdown");
    assert_eq!(last.data["incomplete"]["plies_left"], 12 - plies);
    assert_eq!(last.data["plies"].as_array().unwrap().len(), plies);
    assert_schema("ReviewResponse", &last.data);
    let stopped = tokio::time::timeout(Duration::from_secs(5), server.task).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the server did not stop: {stopped:?}"
    );
}

#[tokio::test]
async fn a_bad_move_cell_is_refused_naming_the_field_and_what_is_expected() {
    let server = start_server(Config::for_tests()).await;
    for (bad, pointer, expected) in [
        (json!({"row": -1, "col": 0}), "/moves/1/row", "whole number"),
        (
            json!({"row": 1.5, "col": 0}),
            "/moves/1/row",
            "whole number",
        ),
        (json!({"row": "3", "col": 0}), "/moves/1/row", "number"),
        (
            json!({"row": null, "col": 0}),
            "/moves/1/row",
            "whole number",
        ),
        (json!({"row": 0}), "/moves/1", "col"),
        (
            json!({"row": 0, "col": 0, "colour": "x"}),
            "/moves/1",
            "exactly",
        ),
        (json!(null), "/moves/1", "a move"),
        (json!(true), "/moves/1", "a move"),
    ] {
        let body = json!({"game": "tictactoe", "moves": [cell(1, 1), bad]});
        let (status, problem) = review(&server, &body).await;
        assert_eq!(status, 400, "{bad}: {problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            !detail.contains("MoveJson") && !detail.contains("enum"),
            "{bad}: {detail}"
        );
        assert!(detail.contains(expected), "{bad}: {detail}");
        assert_eq!(problem["errors"][0]["pointer"], pointer, "{bad}: {problem}");
    }
}

#[tokio::test]
async fn every_game_get_games_lists_is_reviewed_from_its_default_board() {
    // Review used to name its games itself (its own dispatch, thresholds and default boards),
    // so a game added to the served list would answer /move and get a 422 here.
    let server = start_server(Config::for_tests()).await;
    let games: Value = reqwest::get(server.url("/games"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let games = games["games"].as_array().unwrap();
    assert!(games.len() >= 3, "{games:?}");
    for game in games {
        let board = &game["board"];
        let (rows, cols) = (
            board["default_rows"].as_u64().unwrap() as usize,
            board["default_cols"].as_u64().unwrap() as usize,
        );
        // The middle column, or the middle cell: legal on every empty board.
        let first = if board["gravity"] == true {
            json!(cols / 2)
        } else {
            cell(rows / 2, cols / 2)
        };
        let name = &game["name"];
        let (status, body) = review(
            &server,
            &json!({"game": name, "moves": [first], "ply_budget_ms": 20}),
        )
        .await;
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(body["game"], *name);
        assert_eq!(body["plies"].as_array().unwrap().len(), 1, "{name}: {body}");
        assert_eq!(body["complete"], true, "{name}: {body}");
    }
}
