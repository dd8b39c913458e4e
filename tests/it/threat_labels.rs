//! Gomoku's threat labels through `POST /move`: the `threats` member says what the suggested
//! move makes and blocks, and, when the root VCF or VCT proved the win, its kind and length.
//! Each claim is checked against the game's own rules, not against written-down answers.

use serde_json::{Value, json};

use crate::live_progress::assert_schema;
use crate::service::common::*;
use kibitz::engine::{Game, Move, Status};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::games::{BoardGame, Grid};

/// A 15x15 board from rows (missing rows and cells empty).
fn board(rows: &[&str]) -> Vec<String> {
    let mut full: Vec<String> = rows.iter().map(|r| format!("{r:.<15}")).collect();
    full.resize(15, ".".repeat(15));
    full
}

fn position(rows: &[String]) -> Gomoku {
    let grid = Grid::parse(rows, 25).unwrap();
    Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap()
}

fn cell_move(p: &Gomoku, cell: &Value) -> Move {
    let (row, col) = (cell["row"].as_u64().unwrap(), cell["col"].as_u64().unwrap());
    p.move_at(row as usize, col as usize)
}

fn shapes(list: &Value) -> Vec<(&str, Option<&str>)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| (t["shape"].as_str().unwrap(), t["line"].as_str()))
        .collect()
}

#[tokio::test]
async fn a_vcf_win_carries_its_kind_and_the_length_of_its_line() {
    // X to move: (7, 8) makes a four down column 8 (closed by O above) and an open three on
    // row 7: a four-three, won by continuous fours.
    let rows = board(&[
        "O",
        "",
        "",
        "........O",
        "........X",
        "........X",
        "........X",
        "......XX",
        "",
        "",
        "",
        "O",
        "",
        "O.............O",
    ]);
    let reply = post_move(
        &state(),
        json!({"game": "gomoku", "board": rows, "budget_ms": 1000}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = &reply.body;
    assert_schema("MoveResponse", body);
    assert_eq!(body["outcome"], "win", "{body}");
    let proof = &body["threats"]["proof"];
    assert_eq!(proof["kind"], "VCF", "{body}");
    let plies = proof["plies"].as_u64().unwrap();
    assert_eq!(Some(plies), body["plies_to_end"].as_u64());
    // The VCF's line is the answer's PV: as many plies as the proof says, every attacking
    // move a four (so each reply is forced) and the last one five, by the game's own rules.
    let pv = body["pv"].as_array().unwrap();
    assert_eq!(pv.len() as u64, plies, "{body}");
    let mut p = position(&rows);
    for (i, cell) in pv.iter().enumerate() {
        let mv = cell_move(&p, cell);
        assert!(p.is_legal(mv), "ply {i} {cell}");
        if i % 2 == 0 {
            let labels = p.threat_labels(mv).unwrap();
            assert!(
                labels
                    .makes
                    .iter()
                    .any(|t| matches!(t.shape.name(), "five" | "open_four" | "four")),
                "ply {i} is no four: {labels:?}"
            );
        }
        p.make(mv);
    }
    assert_eq!(p.status(), Status::Lost, "the line ends in five");
    // The first move is the four-three it is.
    let makes = shapes(&body["threats"]["makes"]);
    assert!(makes.contains(&("four_three", None)), "{makes:?}");
    assert!(makes.contains(&("four", Some("column"))), "{makes:?}");
}

#[tokio::test]
async fn a_forced_block_says_what_it_blocks() {
    // X to move; O has a four on row 1 closed by X at its left: the only move is (1, 5).
    let rows = board(&[
        "",
        "XOOOO",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "..........X",
        "",
        "...X",
        "",
        "............X",
    ]);
    let reply = post_move(
        &state(),
        json!({"game": "gomoku", "board": rows, "budget_ms": 300}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = &reply.body;
    assert_schema("MoveResponse", body);
    assert_eq!(body["move"]["row"], 1, "{body}");
    assert_eq!(body["move"]["col"], 5, "{body}");
    assert_eq!(shapes(&body["threats"]["blocks"]), [("four", Some("row"))]);
    assert_eq!(body["threats"]["proof"], Value::Null);
    // The block really was forced: O's only five cell is the one taken.
    let p = position(&rows);
    let mut fives = [0usize; 4];
    assert_eq!(p.five_cells(kibitz::engine::Side::Second, &mut fives), 1);
    assert_eq!(Move(fives[0] as u16), cell_move(&p, &body["move"]));
}

#[tokio::test]
async fn only_gomoku_answers_carry_threats() {
    let reply = post_move(
        &state(),
        json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.body.get("threats").is_none(), "{}", reply.body);
    let quiet = post_move(
        &state(),
        json!({"game": "gomoku", "board": board(&["", "", "", "", "", "", "", ".......X"]),
               "budget_ms": 100}),
    )
    .await;
    assert_eq!(quiet.status, 200, "{}", quiet.text);
    assert_schema("MoveResponse", &quiet.body);
    assert!(quiet.body["threats"]["makes"].is_array(), "{}", quiet.body);
}
