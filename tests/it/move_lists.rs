//! Positions given as move lists (`moves`, in JSON or the game's notation) and moves named in
//! every answer (`notation`, Connect-4 `column`), through `POST /move` and `POST /review`.

use serde_json::{Value, json};

use crate::boards::board;
use crate::service::common::*;
use crate::sse_client::post_events;
use kibitz::api::AppState;
use kibitz::config::Config;

async fn review(state: &AppState, body: &Value) -> Reply {
    send(
        kibitz::api::app(state.clone()),
        post_json_request("/review", body),
    )
    .await
}

/// The parts of an answer that depend on the position alone (a deterministic or proven one).
fn verdict(answer: &Value) -> Value {
    json!([
        answer["to_move"],
        answer["move"],
        answer["score"],
        answer["outcome"],
        answer["pv"]
    ])
}

/// Asks for `moves` (and `board`, when given) and for the board they draw; both answers agree.
async fn same_as_drawn(state: &AppState, game: &str, listed: Value, drawn: Vec<String>) {
    let base = json!({"game": game, "deterministic": true, "max_nodes": 3000, "budget_ms": 5000});
    let mut by_moves = base.clone();
    by_moves["moves"] = listed.clone();
    let mut by_board = base;
    by_board["board"] = json!(drawn);
    let a = post_move(state, by_moves).await;
    let b = post_move(state, by_board).await;
    assert_eq!(a.status, 200, "{game} {listed}: {}", a.text);
    assert_eq!(b.status, 200, "{game}: {}", b.text);
    assert_eq!(verdict(&a.body), verdict(&b.body), "{game} {listed}");
}

#[tokio::test]
async fn a_move_list_and_its_drawn_board_give_the_same_answer_in_every_game() {
    let state = state();
    // Tic-tac-toe: X b2, O a1, X c3 (a1 bottom left).
    let ttt = board(3, 3, &[(1, 1, 'X'), (2, 0, 'O'), (0, 2, 'X')]);
    same_as_drawn(&state, "tictactoe", json!("b2 a1 c3"), ttt.clone()).await;
    same_as_drawn(&state, "tictactoe", json!("b2a1c3"), ttt.clone()).await;
    same_as_drawn(
        &state,
        "tictactoe",
        json!(["b2", "a1", {"row": 0, "col": 2}]),
        ttt,
    )
    .await;
    // Connect-4, Pons' digits and letters: columns 4, 4, 5, 5 (1-based).
    let c4 = board(6, 7, &[(5, 3, 'X'), (4, 3, 'O'), (5, 4, 'X'), (4, 4, 'O')]);
    for list in [
        json!("4455"),
        json!("d d e e"),
        json!([3, 3, 4, 4]),
        json!(["4", "d", 4, "5"]),
    ] {
        same_as_drawn(&state, "connect4", list, c4.clone()).await;
    }
    // Gomoku 15x15 in RIF notation, with and without spaces.
    let gomoku = board(15, 15, &[(7, 7, 'X'), (6, 7, 'O'), (7, 8, 'X')]);
    same_as_drawn(&state, "gomoku", json!("h8 h9 i8"), gomoku.clone()).await;
    same_as_drawn(&state, "gomoku", json!("h8h9i8"), gomoku).await;
}

#[tokio::test]
async fn moves_continue_a_given_board_of_any_size() {
    let state = state();
    // A 9x9 gomoku board with two stones, then e5 (the centre) and a1 (bottom left).
    let start = board(9, 9, &[(0, 0, 'X'), (0, 8, 'O')]);
    let drawn = board(9, 9, &[(0, 0, 'X'), (0, 8, 'O'), (4, 4, 'X'), (8, 0, 'O')]);
    let listed = json!({"game": "gomoku", "board": start, "moves": "e5 a1",
                        "deterministic": true, "max_nodes": 2000, "budget_ms": 5000});
    let by_board = json!({"game": "gomoku", "board": drawn,
                          "deterministic": true, "max_nodes": 2000, "budget_ms": 5000});
    let a = post_move(&state, listed).await;
    let b = post_move(&state, by_board).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(verdict(&a.body), verdict(&b.body));
    assert_eq!(
        a.body["to_move"], "X",
        "the side to move follows from the list"
    );
    // A 4-high, 5-wide Connect-4 board.
    let c4 = board(4, 5, &[(3, 0, 'X'), (3, 4, 'O')]);
    let listed = json!({"game": "connect4", "board": board(4, 5, &[]), "moves": "1 5"});
    let a = post_move(&state, listed).await;
    let b = post_move(&state, json!({"game": "connect4", "board": c4})).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(verdict(&a.body), verdict(&b.body));
}

#[tokio::test]
async fn every_move_of_an_answer_carries_its_name_and_reads_back_to_its_cell() {
    let state = state();
    for (game, start) in [
        ("tictactoe", json!("b2")),
        ("connect4", json!("44")),
        ("gomoku", json!("h8 h9")),
    ] {
        let reply = post_move(
            &state,
            json!({"game": game, "moves": start, "analysis": true, "budget_ms": 300}),
        )
        .await;
        assert_eq!(reply.status, 200, "{game}: {}", reply.text);
        let answer = &reply.body;
        let mut moves = vec![&answer["move"]];
        moves.extend(answer["pv"].as_array().unwrap());
        moves.extend(
            answer["iterations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| &i["move"]),
        );
        moves.extend(
            answer["analysis"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| &m["move"]),
        );
        for mv in &moves {
            let name = mv["notation"]
                .as_str()
                .unwrap_or_else(|| panic!("{game}: {mv}"));
            if game == "connect4" {
                assert_eq!(mv["column"], mv["col"], "{mv}");
                assert_eq!(name, (mv["col"].as_u64().unwrap() + 1).to_string());
            } else {
                assert!(mv.get("column").is_none(), "{mv}");
            }
        }
        // The suggested move, played by its name, fills the cell the answer named.
        let name = answer["move"]["notation"].as_str().unwrap();
        let mut continued = match &start {
            Value::String(s) => format!("{s} {name}"),
            _ => unreachable!(),
        };
        if game == "connect4" {
            continued = continued.replace(' ', "");
        }
        let after = post_move(
            &state,
            json!({"game": game, "moves": continued, "analysis": true}),
        )
        .await;
        if after.status == 200 {
            let filled = after.body["analysis"].as_array().unwrap().iter().any(|m| {
                m["move"]["row"] == answer["move"]["row"]
                    && m["move"]["col"] == answer["move"]["col"]
            });
            assert!(
                !filled,
                "{game}: {name} was played, so its cell is no longer a move"
            );
        }
    }
}

#[tokio::test]
async fn names_count_rows_from_the_bottom() {
    let state = state();
    // X to move wins at c3, the top right (row 0, column 2).
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]}),
    )
    .await;
    assert_eq!(
        reply.body["move"],
        json!({"row": 0, "col": 2, "notation": "c3"})
    );
    // Connect-4: the centre column of the empty board is column 4 (1-based), d.
    let reply = post_move(&state, json!({"game": "connect4", "moves": ""})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.body["move"],
        json!({"row": 5, "col": 3, "notation": "4", "column": 3})
    );
}

#[tokio::test]
async fn an_illegal_or_unreadable_move_is_a_422_naming_its_ply_and_why() {
    let state = state();
    let cases = [
        (
            json!({"game": "gomoku", "moves": "h8 h9 h8"}),
            "/moves",
            "ply 3",
            "occupied",
        ),
        (
            json!({"game": "gomoku", "moves": "h8 z9"}),
            "/moves",
            "ply 2",
            "off the board",
        ),
        (
            json!({"game": "gomoku", "moves": "h8 h"}),
            "/moves",
            "ply 2",
            "row number",
        ),
        (
            json!({"game": "gomoku", "moves": ["h8", {"row": 7, "col": 7}]}),
            "/moves/1",
            "ply 2",
            "occupied",
        ),
        (
            json!({"game": "gomoku", "moves": ["h8", "q3"]}),
            "/moves/1",
            "ply 2",
            "off the board",
        ),
        (
            json!({"game": "connect4", "moves": "4444444"}),
            "/moves",
            "ply 7",
            "full",
        ),
        (
            json!({"game": "connect4", "moves": "4480"}),
            "/moves",
            "ply 3",
            "off the board",
        ),
        (
            json!({"game": "connect4", "moves": [{"row": 5, "col": 3}]}),
            "/moves/0",
            "ply 1",
            "column number",
        ),
        (
            json!({"game": "tictactoe", "moves": "a1 b1 a2 b2 a3 b3"}),
            "/moves",
            "ply 6",
            "already over",
        ),
        (
            json!({"game": "tictactoe", "moves": "b2 ?"}),
            "/moves",
            "ply 2",
            "not a cell name",
        ),
    ];
    for (body, pointer, ply, why) in cases {
        for route in ["/move", "/review"] {
            let reply = if route == "/move" {
                post_move(&state, body.clone()).await
            } else {
                review(&state, &body).await
            };
            assert_eq!(reply.status, 422, "{route} {body}: {}", reply.text);
            let detail = reply.body["detail"].as_str().unwrap();
            assert!(detail.starts_with(ply), "{route} {body}: {detail}");
            assert!(detail.contains(why), "{route} {body}: {detail}");
            assert_eq!(
                reply.body["errors"][0]["pointer"], pointer,
                "{route} {body}"
            );
        }
    }
    // A list that ends the game leaves no move to suggest.
    let won = post_move(
        &state,
        json!({"game": "tictactoe", "moves": "a1 b1 a2 b2 a3"}),
    )
    .await;
    assert_eq!(won.status, 422, "{}", won.text);
    assert!(won.text.contains("X won with ply 5"), "{}", won.text);
    // Neither board nor moves: nothing to play.
    let none = post_move(&state, json!({"game": "tictactoe"})).await;
    assert_eq!(none.status, 400, "{}", none.text);
}

/// What the published schema refuses the server refuses, and what it accepts is read: a
/// `null` board is a wrong type (400 naming `board`), not "no board"; a move name of 16
/// characters that take more than 16 bytes is read as a name (a 422 for an unreadable one),
/// as the schema's `maxLength` counts characters; 17 characters are a 400.
#[tokio::test]
async fn a_null_board_and_long_names_are_judged_as_the_schema_judges_them() {
    let state = state();
    let null_board = post_move(
        &state,
        json!({"game": "gomoku", "board": null, "moves": "h8"}),
    )
    .await;
    assert_eq!(null_board.status, 400, "{}", null_board.text);
    assert_eq!(null_board.body["errors"][0]["pointer"], "/board");
    let sixteen = "\u{e9}".repeat(16);
    let read = post_move(&state, json!({"game": "gomoku", "moves": [sixteen]})).await;
    assert_eq!(read.status, 422, "{}", read.text);
    assert_eq!(read.body["errors"][0]["pointer"], "/moves/0");
    let seventeen = "\u{e9}".repeat(17);
    let long = post_move(&state, json!({"game": "gomoku", "moves": [seventeen]})).await;
    assert_eq!(long.status, 400, "{}", long.text);
}

#[tokio::test]
async fn a_review_of_a_notation_string_names_every_ply() {
    let state = state();
    let reply = review(
        &state,
        &json!({"game": "connect4", "moves": "4455", "budget_ms": 2000}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let plies = reply.body["plies"].as_array().unwrap();
    let played: Vec<&str> = plies
        .iter()
        .map(|p| p["played"]["notation"].as_str().unwrap())
        .collect();
    assert_eq!(played, ["4", "4", "5", "5"]);
    for ply in plies {
        assert!(ply["best"]["notation"].is_string(), "{ply}");
        assert_eq!(ply["best"]["column"], ply["best"]["col"], "{ply}");
    }
    let gomoku = review(
        &state,
        &json!({"game": "gomoku", "moves": "h8h9i8", "budget_ms": 900}),
    )
    .await;
    assert_eq!(gomoku.status, 200, "{}", gomoku.text);
    let played: Vec<&str> = gomoku.body["plies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["played"]["notation"].as_str().unwrap())
        .collect();
    assert_eq!(played, ["h8", "h9", "i8"]);
}

#[tokio::test]
async fn streamed_iterations_name_their_moves() {
    let server = start_server(Config::for_tests()).await;
    let events = post_events(
        &server.url("/move"),
        &json!({"game": "gomoku", "moves": "h8 h9", "budget_ms": 300}),
    )
    .await
    .collect()
    .await;
    let iterations: Vec<Value> = events
        .iter()
        .filter(|e| e.name == "iteration")
        .map(|e| e.data.clone())
        .collect();
    assert!(!iterations.is_empty());
    for it in &iterations {
        assert!(it["move"]["notation"].is_string(), "{it}");
        for mv in it["pv"].as_array().unwrap() {
            assert!(mv["notation"].is_string(), "{it}");
        }
    }
    let answer = &events.iter().find(|e| e.name == "answer").unwrap().data;
    assert!(answer["move"]["notation"].is_string(), "{answer}");
}

/// The `line` of a finished-game problem, as names.
fn line_names(problem: &Value) -> Vec<&str> {
    problem["line"]
        .as_array()
        .unwrap_or_else(|| panic!("a line: {problem}"))
        .iter()
        .map(|c| c["notation"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_finished_game_is_a_422_naming_the_winner_and_the_winning_line() {
    let state = state();
    // Tic-tac-toe won: X across the top row.
    let won = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["XXX", "OO.", "..."]}),
    )
    .await;
    assert_eq!(won.status, 422, "{}", won.text);
    assert_eq!(won.body["winner"], "X", "{}", won.text);
    assert_eq!(line_names(&won.body), ["a3", "b3", "c3"]);
    assert_eq!(won.body["errors"][0]["pointer"], "/board");
    assert!(
        won.body["detail"]
            .as_str()
            .unwrap()
            .contains("X has three in a row")
    );
    // A full board without a line: a draw, no winner.
    let drawn = post_move(
        &state,
        json!({"game": "tictactoe", "board": ["XOX", "XOO", "OXX"]}),
    )
    .await;
    assert_eq!(drawn.status, 422, "{}", drawn.text);
    assert_eq!(drawn.body["winner"], Value::Null, "{}", drawn.text);
    assert_eq!(drawn.body["line"], json!([]));
    // Connect-4 by its move list: X's column 4 four high after O plays column 5 thrice.
    let c4 = post_move(&state, json!({"game": "connect4", "moves": "4545454"})).await;
    assert_eq!(c4.status, 422, "{}", c4.text);
    assert_eq!(c4.body["winner"], "X");
    assert_eq!(line_names(&c4.body), ["4", "4", "4", "4"]);
    assert_eq!(c4.body["errors"][0]["pointer"], "/moves");
    assert!(c4.text.contains("X won with ply 7"), "{}", c4.text);
    // Gomoku on 9x9 from a start with one X stone: O moves first (a1, b1, ...), X makes five
    // down column e.
    let start = board(9, 9, &[(0, 0, 'X')]);
    let moves = "a1 e5 b1 e6 c1 e4 d1 e7 i9 e3";
    let five = post_move(
        &state,
        json!({"game": "gomoku", "board": start, "moves": moves}),
    )
    .await;
    assert_eq!(five.status, 422, "{}", five.text);
    assert_eq!(five.body["winner"], "X", "{}", five.text);
    assert_eq!(line_names(&five.body), ["e7", "e6", "e5", "e4", "e3"]);
    // The problem with its extension members matches the published schema.
    crate::live_progress::assert_schema("Problem", &five.body);
}
