//! Connect-4, gomoku and the teaching tree through the HTTP API: the answers a client can
//! check for itself (exact outcomes, forced moves, the lecture tree).

use serde_json::{Value, json};

use super::common::{get, post_json_request, post_move, send, state};
use crate::boards::board15;
use kibitz::api::app;

fn cell(reply: &Value) -> (u64, u64) {
    (
        reply["move"]["row"].as_u64().unwrap(),
        reply["move"]["col"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn connect4_takes_an_immediate_win_and_says_so() {
    let board = [
        ".......", ".......", ".......", "O......", "O......", "OXXX...",
    ];
    let reply = post_move(&state(), json!({"game": "connect4", "board": board})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(cell(&reply.body), (5, 4), "X completes the bottom row");
    assert_eq!(reply.body["outcome"], "win");
    assert_eq!(reply.body["plies_to_end"], 1);
    assert_eq!(reply.body["stop_reason"], "proven");
}

#[tokio::test]
async fn connect4_blocks_the_only_threat() {
    let board = [
        ".......", ".......", ".......", ".......", "X......", "XOOO..X",
    ];
    let reply = post_move(
        &state(),
        json!({"game": "connect4", "board": board, "to_move": "X"}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(cell(&reply.body), (5, 4), "the landing cell of column 4");
}

#[tokio::test]
async fn connect4_solves_a_known_position_exactly() {
    // Pons' Test_L2_R1, first line: "5554224333234511764415115 4": the side to move wins, its
    // winning stone being its 18th (22 - 4).
    let moves = "5554224333234511764415115";
    let mut columns = vec![vec!['.'; 6]; 7];
    let mut heights = [0usize; 7];
    for (i, digit) in moves.bytes().enumerate() {
        let col = (digit - b'1') as usize;
        columns[col][heights[col]] = if i % 2 == 0 { 'X' } else { 'O' };
        heights[col] += 1;
    }
    let board: Vec<String> = (0..6)
        .rev()
        .map(|row| (0..7).map(|col| columns[col][row]).collect())
        .collect();
    let reply = post_move(
        &state(),
        json!({"game": "connect4", "board": board, "budget_ms": 5000}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["outcome"], "win");
    let n = moves.len() as i64;
    let p = reply.body["plies_to_end"].as_i64().unwrap();
    assert_eq!((44 - n - p) / 2, 4, "Pons score 4");
}

#[tokio::test]
async fn connect4_refuses_a_floating_disc_naming_it() {
    let board = [
        ".......", ".......", ".......", "...X...", ".......", "...O...",
    ];
    let reply = post_move(&state(), json!({"game": "connect4", "board": board})).await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert!(reply.text.contains("row 3"), "{}", reply.text);
}

#[tokio::test]
async fn gomoku_completes_five_and_reports_the_win() {
    // X has four in row 7, columns 3-6; O four in row 9, columns 4-7.
    let stones: Vec<_> = (3..7)
        .flat_map(|col| [(7, col, 'X'), (9, col + 1, 'O')])
        .collect();
    let board = board15(&stones);
    let reply = post_move(
        &state(),
        json!({"game": "gomoku", "board": board, "budget_ms": 200}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        matches!(cell(&reply.body), (7, 2) | (7, 7)),
        "{}",
        reply.text
    );
    assert_eq!(reply.body["outcome"], "win");
    assert_eq!(reply.body["plies_to_end"], 1);
}

#[tokio::test]
async fn gomoku_refuses_an_unknown_rule_naming_it() {
    let reply = post_move(
        &state(),
        json!({"game": "gomoku", "board": board15(&[]), "rules": {"renju": true}}),
    )
    .await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert_eq!(reply.body["errors"][0]["pointer"], "/rules/renju");
}

#[tokio::test]
async fn gomoku_refuses_a_board_over_the_size_limit() {
    let board = vec![".".repeat(26); 26];
    let reply = post_move(&state(), json!({"game": "gomoku", "board": board})).await;
    assert_eq!(reply.status, 422, "{}", reply.text);
}

#[tokio::test]
async fn tree_evaluates_the_lecture_tree() {
    let body = json!({"tree": "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], [D, (D1,14), (D2,5), (D3,2)]]"});
    let reply = send(app(state()), post_json_request("/tree", &body)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["value"], 3);
    assert_eq!(reply.body["best"], "B");
    assert_eq!(reply.body["minimax"], json!({"nodes": 13, "leaves": 9}));
    assert_eq!(reply.body["alphabeta"]["leaves"], 7);
    assert_eq!(
        reply.body["alphabeta"]["pruned"],
        json!([{"node": "C2", "parent": "C", "alpha": 3, "beta": 2, "cut": "alpha"}])
    );
}

#[tokio::test]
async fn tree_syntax_errors_are_422_with_the_position() {
    let reply = send(
        app(state()),
        post_json_request("/tree", &json!({"tree": "[A, (B,1) (C,2)]"})),
    )
    .await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert!(
        reply.body["detail"].as_str().unwrap().contains("at 10"),
        "{}",
        reply.text
    );
}

#[tokio::test]
async fn a_deep_tree_chain_is_refused_cleanly() {
    let text = format!("{}(L,1){}", "[N, ".repeat(50_000), "]".repeat(50_000));
    let reply = send(
        app(state()),
        post_json_request("/tree", &json!({"tree": text})),
    )
    .await;
    assert_eq!(
        reply.status,
        422,
        "{}",
        &reply.text[..reply.text.len().min(300)]
    );
}

#[tokio::test]
async fn games_lists_all_three_games_and_points_to_the_tree() {
    let reply = get(&state(), "/games").await;
    let names: Vec<&str> = reply.body["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tictactoe", "connect4", "gomoku"]);
    assert_eq!(reply.body["tree"]["route"], "/tree");
}

#[tokio::test]
async fn games_says_what_each_level_means_in_each_game() {
    let reply = get(&state(), "/games").await;
    for game in reply.body["games"].as_array().unwrap() {
        let name = game["name"].as_str().unwrap();
        let levels = game["levels"].as_array().unwrap();
        let numbers: Vec<u64> = levels
            .iter()
            .map(|l| l["level"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers, (1..=10).collect::<Vec<_>>(), "{name}");
        // Level 10 is the full search: no cap of its own, the whole budget, no draw.
        let full: serde_json::Map<String, Value> = levels[9]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !k.starts_with("rating"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            Value::Object(full),
            json!({"level": 10, "max_depth": null, "budget_share": 1.0, "temperature": 0.0,
                   "blunder": 0.0}),
            "{name}"
        );
        assert!(game["level_unit"].as_u64().unwrap() > 0, "{name}");
    }
    // The tables of docs/api.md, "Strength levels": Connect-4's caps are 1..=9 plies, the
    // others' 1, 2, 2, 2, 3, 3, 4, 5, 6; level 1 draws at temperature 12 and blunders 60%.
    let caps = |name: &str| -> Vec<u64> {
        let games = reply.body["games"].as_array().unwrap();
        let game = games.iter().find(|g| g["name"] == name).unwrap();
        game["levels"].as_array().unwrap()[..9]
            .iter()
            .map(|l| l["max_depth"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(caps("connect4"), (1..=9).collect::<Vec<_>>());
    assert_eq!(caps("gomoku"), [1, 2, 2, 2, 3, 3, 4, 5, 6]);
    let tictactoe = &reply.body["games"][0];
    assert_eq!(tictactoe["levels"][0]["temperature"], 12.0);
    assert_eq!(tictactoe["levels"][0]["blunder"], 0.6);
    assert_eq!(tictactoe["level_unit"], 10);
}

#[tokio::test]
async fn games_rates_each_level_on_its_measured_ladder_above_the_random_mover() {
    let reply = get(&state(), "/games").await;
    assert_schema_of_games(&reply.body);
    for game in reply.body["games"].as_array().unwrap() {
        let name = game["name"].as_str().unwrap();
        let levels = game["levels"].as_array().unwrap();
        let expected = kibitz::service::ladder::ladder(kibitz::service::games::level_ladder(name));
        assert_eq!(expected.len(), 10, "{name}");
        for (level, rated) in levels.iter().zip(&expected) {
            assert_eq!(
                level["rating"],
                rated.rating.round() as i64,
                "{name}: {level}"
            );
            assert_eq!(
                level["rating_low"],
                rated.low.round() as i64,
                "{name}: {level}"
            );
            match rated.high {
                Some(high) => assert_eq!(level["rating_high"], high.round() as i64),
                None => assert!(level["rating_high"].is_null()),
            }
            let rating = level["rating"].as_i64().unwrap();
            assert!(
                level["rating_low"].as_i64().unwrap() <= rating,
                "{name}: {level}"
            );
        }
        // Monotone within the intervals: no level's interval lies wholly below the one under it.
        for pair in levels.windows(2) {
            let below_low = pair[0]["rating_low"].as_i64().unwrap();
            assert!(
                pair[1]["rating_high"]
                    .as_i64()
                    .is_none_or(|high| high >= below_low),
                "{name}: {} below {}",
                pair[1],
                pair[0]
            );
        }
        assert!(
            levels[0]["rating_low"].as_i64().unwrap() > 0,
            "{name}: level 1 beats random"
        );
    }
}

fn assert_schema_of_games(body: &Value) {
    crate::live_progress::assert_schema("GamesResponse", body);
}
