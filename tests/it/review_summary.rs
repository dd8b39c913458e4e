//! `POST /review`'s `summary`: per player, the count of each mark equals the plies' marks, and
//! the accuracy is the mean of the plies' own; a game of best moves is 100 % accurate.

use serde_json::{Value, json};

use crate::live_progress::assert_schema;
use crate::service::common::*;

const MARKS: [&str; 5] = ["best", "good", "inaccuracy", "mistake", "blunder"];

async fn review(state: &kibitz::api::AppState, body: Value) -> Value {
    let reply = send(
        kibitz::api::app(state.clone()),
        post_json_request("/review", &body),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_schema("ReviewResponse", &reply.body);
    reply.body
}

/// The summary agrees with the plies it sums up.
fn check_summary(body: &Value) {
    let plies = body["plies"].as_array().unwrap();
    for player in ["X", "O"] {
        let own: Vec<&Value> = plies.iter().filter(|p| p["player"] == player).collect();
        let summary = &body["summary"][player];
        assert_eq!(summary["moves"], own.len(), "{player}: {summary}");
        for mark in MARKS {
            let counted = own.iter().filter(|p| p["mark"] == mark).count();
            assert_eq!(summary[mark], counted, "{player} {mark}: {summary}");
        }
        if own.is_empty() {
            assert!(summary["accuracy"].is_null());
            continue;
        }
        let mean = own
            .iter()
            .map(|p| p["accuracy"].as_f64().unwrap())
            .sum::<f64>()
            / own.len() as f64;
        let accuracy = summary["accuracy"].as_f64().unwrap();
        // Each ply's accuracy is shown to a tenth, the mean of the unrounded ones too.
        assert!(
            (accuracy - mean).abs() <= 0.1,
            "{player}: {accuracy} vs {mean}"
        );
    }
}

#[tokio::test]
async fn the_summary_counts_equal_the_marks_and_average_the_plies_accuracy() {
    let state = state();
    // Tic-tac-toe: O's blunder at ply 2, X's thrown-away win at ply 5.
    let body = review(
        &state,
        json!({"game": "tictactoe", "moves": "b2 b3 a3 c1 c3"}),
    )
    .await;
    check_summary(&body);
    assert_eq!(body["summary"]["O"]["blunder"], 1);
    assert_eq!(body["summary"]["X"]["blunder"], 1);
    assert!(body["summary"]["X"]["accuracy"].as_f64().unwrap() < 100.0);
    // A blunder from a proven draw to a proven loss gives away 50 points: about 8.3 %.
    let ply2 = &body["plies"][1];
    assert_eq!(ply2["mark"], "blunder");
    let expected = 103.1668 * (-0.04354f64 * 50.0).exp() - 3.1669;
    assert!(
        (ply2["accuracy"].as_f64().unwrap() - expected).abs() <= 0.05,
        "{ply2}"
    );
    // Connect-4 past the book, heuristic marks among them.
    let body = review(
        &state,
        json!({"game": "connect4", "moves": "44534321167735", "ply_budget_ms": 20}),
    )
    .await;
    check_summary(&body);
}

#[tokio::test]
async fn a_game_of_best_moves_is_100_accurate_for_both_players() {
    let state = state();
    for (game, plies) in [("tictactoe", 9), ("connect4", 10)] {
        let mut moves: Vec<Value> = Vec::new();
        for _ in 0..plies {
            let reply = post_move(&state, json!({"game": game, "moves": moves})).await;
            if reply.status != 200 {
                break; // the game is over
            }
            let mv = &reply.body["move"];
            moves.push(match game {
                "connect4" => mv["column"].clone(),
                _ => json!({"row": mv["row"], "col": mv["col"]}),
            });
        }
        let body = review(&state, json!({"game": game, "moves": moves})).await;
        check_summary(&body);
        for player in ["X", "O"] {
            let summary = &body["summary"][player];
            assert_eq!(summary["best"], summary["moves"], "{game} {player}: {body}");
            assert_eq!(summary["accuracy"], 100.0, "{game} {player}: {summary}");
        }
    }
}
