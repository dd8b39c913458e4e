//! `multipv: k` (the k best moves, each with its own line): in the engine, every line of every
//! tic-tac-toe position scored with its move's exact value, sorted, led by the answer's move,
//! clamped to the legal moves, and k = 1 searching exactly as without it; Connect-4's lines
//! from the solver and the book with their known values; gomoku's lines sorted and distinct,
//! an open four's two fives both on top; and through `POST /move` and batch items: `lines`
//! rendered, agreeing with `analysis`, and 422s for a k out of range.

use serde_json::{Value, json};

use crate::boards::{board, board15};
use crate::service::common::*;
use crate::tictactoe_oracle::{Memo, move_value, unfinished_positions};
use kibitz::engine::{
    Game, Move, Outcome, SearchLimits, SearchOptions, SearchReport, Status, StopReason,
    TranspositionTable, WIN, search,
};
use kibitz::games::connect4::Connect4;
use kibitz::games::gomoku::Gomoku;
use kibitz::games::tictactoe::TicTacToe;
use kibitz::games::{BoardGame, Grid};

fn with_multipv(k: usize) -> SearchOptions {
    SearchOptions {
        multipv: k,
        ..SearchOptions::default()
    }
}

/// What every report with lines must hold, whatever the game: the lines sorted best first,
/// their moves distinct and legal, `lines[0]` the report's move with its score and line, each
/// line's principal variation legal from the position and starting with its move.
fn check_lines<G: Game + Clone>(position: &G, report: &SearchReport, k: usize) {
    let lines = &report.lines;
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    assert_eq!(lines.len(), k.min(legal.len()), "{report:?}");
    assert!(
        lines.windows(2).all(|w| w[0].score >= w[1].score),
        "unsorted: {lines:?}"
    );
    let mut moves: Vec<Move> = lines.iter().map(|l| l.mv).collect();
    moves.sort_unstable();
    moves.dedup();
    assert_eq!(moves.len(), lines.len(), "a move twice: {lines:?}");
    assert_eq!(Some(lines[0].mv), report.best_move);
    assert_eq!(lines[0].score, report.score);
    assert_eq!(lines[0].pv, report.pv);
    for line in lines {
        assert!(legal.contains(&line.mv));
        assert_eq!(line.pv.first(), Some(&line.mv));
        let mut walk = position.clone();
        for &mv in &line.pv {
            assert_eq!(
                walk.status(),
                Status::Ongoing,
                "{line:?} plays on after the end"
            );
            let mut here = Vec::new();
            walk.legal_moves(&mut here);
            assert!(here.contains(&mv), "{line:?}: {mv:?} is illegal");
            walk.make(mv);
        }
    }
}

#[test]
fn tictactoe_every_line_of_every_position_has_its_moves_exact_value() {
    let mut memo = Memo::new();
    let table = TranspositionTable::with_megabytes(1);
    let mut checked = 0;
    for position in unfinished_positions() {
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        let mut walk = position.clone();
        let mut values: Vec<i32> = legal
            .iter()
            .map(|&mv| move_value(&mut walk, mv, &mut memo))
            .collect();
        values.sort_unstable_by(|a, b| b.cmp(a));
        for k in [2, 3, 5, 9] {
            let report = search(&position, &SearchLimits::default(), with_multipv(k), &table);
            check_lines(&position, &report, k);
            assert_eq!(report.stop_reason, StopReason::Proven);
            for (i, line) in report.lines.iter().enumerate() {
                let value = move_value(&mut walk, line.mv, &mut memo);
                assert_eq!(line.score, value, "{position:?} k={k}: {line:?}");
                // The i-th line is worth the i-th best move: no better move left out.
                assert_eq!(line.score, values[i], "{position:?} k={k}: line {i}");
                let proof = line.proof.expect("tic-tac-toe lines are proven");
                let outcome = match value.signum() {
                    1 => Outcome::Win,
                    -1 => Outcome::Loss,
                    _ => Outcome::Draw,
                };
                assert_eq!(proof.outcome, outcome);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 4520 * 4);
}

#[test]
fn tictactoe_k_of_one_searches_exactly_as_without_it() {
    let table = TranspositionTable::with_megabytes(1);
    for position in unfinished_positions().into_iter().step_by(7) {
        for depth in [1, 3, 9] {
            let limits = SearchLimits::with_depth(depth);
            table.clear();
            let plain = search(&position, &limits, SearchOptions::default(), &table);
            table.clear();
            let one = search(&position, &limits, with_multipv(1), &table);
            assert_eq!(
                (
                    plain.best_move,
                    plain.score,
                    plain.nodes,
                    &plain.pv,
                    &plain.iterations
                ),
                (
                    one.best_move,
                    one.score,
                    one.nodes,
                    &one.pv,
                    &one.iterations
                )
            );
            assert!(one.lines.is_empty());
        }
    }
}

#[test]
fn tictactoe_k_larger_than_the_legal_moves_clamps() {
    // Two empty cells: O to move.
    let grid = Grid::parse(&["XOX", "XOO", "..X"], 3).unwrap();
    let position = TicTacToe::from_grid(&grid, None, &()).unwrap();
    let table = TranspositionTable::with_megabytes(1);
    let report = search(
        &position,
        &SearchLimits::default(),
        with_multipv(16),
        &table,
    );
    check_lines(&position, &report, 16);
    assert_eq!(report.lines.len(), 2);
}

#[test]
fn a_cut_multipv_search_keeps_its_last_complete_iteration_whole() {
    let table = TranspositionTable::with_megabytes(1);
    let position = TicTacToe::new();
    for max_nodes in [10, 50, 200, 1_000, 3_000] {
        let limits = SearchLimits {
            max_nodes: Some(max_nodes),
            ..SearchLimits::default()
        };
        table.clear();
        let report = search(&position, &limits, with_multipv(4), &table);
        check_lines(&position, &report, 4);
        assert!(report.lines.iter().all(|l| l.depth == report.depth));
    }
}

#[test]
fn connect4_lines_from_the_book_have_the_known_values() {
    // The empty board: the centre column wins for X (on the last disc, ply 41 from here... the
    // book's value), columns 3 and 5 (1-based) draw, the others lose.
    let position = Connect4::new();
    let table = TranspositionTable::with_megabytes(16);
    let report = position.think(&SearchLimits::default(), with_multipv(3), &table);
    check_lines(&position, &report, 3);
    let outcomes: Vec<(u16, Outcome)> = report
        .lines
        .iter()
        .map(|l| (l.mv.0, l.proof.expect("exact").outcome))
        .collect();
    assert_eq!(
        outcomes,
        [(3, Outcome::Win), (2, Outcome::Draw), (4, Outcome::Draw)]
    );
    assert_eq!(report.stop_reason, StopReason::Book);
}

#[test]
fn connect4_lines_agree_with_the_solvers_analysis_of_every_column() {
    let table = TranspositionTable::with_megabytes(16);
    // Openings the book answers, every column solved.
    for moves in ["4455", "444444", "4433", "44444435"] {
        let position = Connect4::from_moves(moves).unwrap();
        let analysis = SearchOptions {
            analysis: true,
            ..SearchOptions::default()
        };
        table.clear();
        let scored = position.think(&SearchLimits::default(), analysis, &table);
        assert!(
            matches!(scored.stop_reason, StopReason::Proven | StopReason::Book),
            "{moves}"
        );
        table.clear();
        let report = position.think(&SearchLimits::default(), with_multipv(5), &table);
        check_lines(&position, &report, 5);
        for (line, scored) in report.lines.iter().zip(&scored.root_moves) {
            assert_eq!((line.mv, line.score), (scored.mv, scored.score), "{moves}");
            assert_eq!(line.proof, scored.proof);
        }
    }
}

#[test]
fn connect4_lines_past_the_solvers_budget_come_from_the_generic_search() {
    let position = Connect4::from_moves("4").unwrap();
    let table = TranspositionTable::with_megabytes(4);
    // A node cap far too small for any solve: the heuristic search answers.
    let limits = SearchLimits {
        max_nodes: Some(3_000),
        ..SearchLimits::default()
    };
    let report = position.think(&limits, with_multipv(3), &table);
    check_lines(&position, &report, 3);
}

fn gomoku(rows: &[String]) -> Gomoku {
    let grid = Grid::parse(rows, 19).unwrap();
    Gomoku::from_grid(&grid, None, &Default::default()).unwrap()
}

#[test]
fn gomoku_an_open_fours_two_fives_are_the_top_two_lines() {
    // X: an open four on row 7, columns 5..=8; fives at (7, 4) and (7, 9). O has three
    // scattered stones; X to move.
    let rows = board15(&[
        (7, 5, 'X'),
        (7, 6, 'X'),
        (7, 7, 'X'),
        (7, 8, 'X'),
        (3, 3, 'O'),
        (11, 3, 'O'),
        (3, 11, 'O'),
        (11, 11, 'O'),
    ]);
    let position = gomoku(&rows);
    let table = TranspositionTable::with_megabytes(4);
    let limits = SearchLimits::with_depth(3);
    let report = position.think(&limits, with_multipv(3), &table);
    check_lines(&position, &report, 3);
    let mut top: Vec<Move> = report.lines[..2].iter().map(|l| l.mv).collect();
    top.sort_unstable();
    let five = |col: usize| Move((7 * 15 + col) as u16);
    assert_eq!(top, [five(4), five(9)]);
    assert!(report.lines[..2].iter().all(|l| l.score == WIN - 1));
}

#[test]
fn gomoku_quiet_lines_are_sorted_distinct_and_led_by_the_move() {
    let table = TranspositionTable::with_megabytes(4);
    let quiet = board15(&[(7, 7, 'X'), (8, 8, 'O'), (6, 8, 'X')]);
    let small = board(7, 7, &[(3, 3, 'X'), (2, 2, 'O')]);
    for rows in [quiet, small] {
        let position = gomoku(&rows);
        let report = position.think(&SearchLimits::with_depth(2), with_multipv(5), &table);
        check_lines(&position, &report, 5);
    }
}

async fn ask(state: &kibitz::api::AppState, body: Value) -> Value {
    let reply = post_move(state, body.clone()).await;
    assert_eq!(reply.status, 200, "{body}: {}", reply.text);
    reply.body
}

/// The HTTP lines: sorted, each named, `lines[0]` the answer's move, score and line.
fn check_json_lines(answer: &Value, k: usize) {
    let lines = answer["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), k, "{answer}");
    assert_eq!(lines[0]["move"], answer["move"]);
    assert_eq!(lines[0]["score"], answer["score"]);
    assert_eq!(lines[0]["pv"], answer["pv"]);
    assert_eq!(lines[0]["wdl"], answer["wdl"]);
    for pair in lines.windows(2) {
        assert!(
            pair[0]["score"].as_i64() >= pair[1]["score"].as_i64(),
            "{answer}"
        );
    }
    for line in lines {
        assert!(line["move"]["notation"].is_string(), "{line}");
        assert_eq!(line["pv"][0], line["move"], "{line}");
        assert!(line["wdl"].is_array(), "{line}");
        assert!(line["depth"].is_u64(), "{line}");
    }
}

#[tokio::test]
async fn move_answers_lines_that_agree_with_analysis_in_every_game() {
    let state = state();
    let bodies = [
        json!({"game": "tictactoe", "moves": "b2 a1"}),
        json!({"game": "connect4", "moves": "4455"}),
        json!({"game": "gomoku", "board": board15(&[(7, 7, 'X'), (8, 8, 'O')]), "max_depth": 2}),
        json!({"game": "gomoku", "board": board(7, 7, &[(3, 3, 'X')]), "max_depth": 2}),
    ];
    for body in bodies {
        let mut asked = body.clone();
        asked["multipv"] = json!(3);
        asked["analysis"] = json!(true);
        asked["budget_ms"] = json!(3000);
        let answer = ask(&state, asked).await;
        check_json_lines(&answer, 3);
        let analysis = answer["analysis"].as_array().expect("analysis");
        for line in answer["lines"].as_array().unwrap() {
            let scored = analysis
                .iter()
                .find(|m| m["move"] == line["move"])
                .expect("every line's move is in the analysis");
            assert_eq!(scored["score"], line["score"], "{answer}");
        }
        if body["game"] == "connect4" {
            assert!(answer["lines"][0]["move"]["column"].is_u64(), "{answer}");
            assert!(answer["lines"][0]["outcome"].is_string(), "{answer}");
        }
    }
}

#[tokio::test]
async fn k_of_one_adds_only_the_one_line_and_k_clamps_to_the_legal_moves() {
    let state = state();
    let body = json!({"game": "tictactoe", "moves": "b2 a1 c3", "deterministic": true});
    let plain = ask(&state, body.clone()).await;
    let mut one = body.clone();
    one["multipv"] = json!(1);
    let one = ask(&state, one).await;
    check_json_lines(&one, 1);
    for field in [
        "move",
        "score",
        "pv",
        "depth",
        "nodes",
        "iterations",
        "outcome",
    ] {
        assert_eq!(plain[field], one[field], "{field}");
    }
    assert!(plain.get("lines").is_none());
    // Two empty cells: 16 lines asked, 2 answered.
    let two_left = json!({"game": "tictactoe", "board": ["XOX", "XOO", "..X"], "multipv": 16});
    let answer = ask(&state, two_left).await;
    check_json_lines(&answer, 2);
}

#[tokio::test]
async fn multipv_out_of_range_or_below_full_strength_is_a_422_naming_it() {
    let state = state();
    for (extra, needle) in [
        (json!({"multipv": 0}), "between 1 and 16"),
        (json!({"multipv": 17}), "between 1 and 16"),
        (json!({"multipv": 3, "level": 4}), "full strength"),
    ] {
        let mut body = json!({"game": "tictactoe", "moves": "b2"});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        let reply = post_move(&state, body.clone()).await;
        assert_eq!(reply.status, 422, "{body}: {}", reply.text);
        assert_eq!(
            reply.body["errors"][0]["pointer"], "/multipv",
            "{}",
            reply.text
        );
        assert!(reply.text.contains(needle), "{}", reply.text);
    }
    let reply = post_move(
        &state,
        json!({"game": "tictactoe", "moves": "b2", "multipv": "3"}),
    )
    .await;
    assert!(reply.status.is_client_error(), "{}", reply.text);
}

#[tokio::test]
async fn a_batch_move_item_answers_its_lines() {
    let running = start_server(kibitz::config::Config::for_tests()).await;
    let base = format!("http://{}", running.addr);
    let body = json!({"items": [
        {"move": {"game": "tictactoe", "moves": "b2", "multipv": 4}},
        {"move": {"game": "connect4", "moves": "44", "multipv": 2}},
    ], "budget_ms": 2000});
    let response = reqwest::Client::new()
        .post(format!("{base}/analyses"))
        .json(&body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 202);
    let accepted: Value = response.json().await.unwrap();
    let location = format!("/analyses/{}", accepted["id"].as_str().expect("an id"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let done = loop {
        let state: Value = reqwest::get(format!("{base}{location}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if state["status"] == "done" {
            break state;
        }
        assert!(std::time::Instant::now() < deadline, "{state}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let results = done["results"].as_array().unwrap();
    check_json_lines(&results[0]["answer"], 4);
    check_json_lines(&results[1]["answer"], 2);
}

#[tokio::test]
async fn gomoku_lines_say_what_their_moves_make_and_other_games_lines_have_no_labels() {
    let state = state();
    // X's open four on row 8 (h8 i8 j8 k8): both fives lead the lines, each labelled a five.
    let body = json!({"game": "gomoku", "moves": "h8 a1 i8 a15 j8 o1 k8 o15",
                      "multipv": 3, "max_depth": 3});
    let answer = ask(&state, body).await;
    check_json_lines(&answer, 3);
    let lines = answer["lines"].as_array().unwrap();
    for line in &lines[..2] {
        let makes = line["threats"]["makes"].as_array().expect("labels");
        assert!(makes.iter().any(|t| t["shape"] == "five"), "{line}: a five");
        assert!(line["threats"]["proof"].is_null(), "{line}");
    }
    assert!(lines.iter().all(|l| l["threats"].is_object()), "{answer}");
    let answer = ask(
        &state,
        json!({"game": "tictactoe", "moves": "b2", "multipv": 2}),
    )
    .await;
    assert!(
        answer["lines"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l.get("threats").is_none()),
        "{answer}"
    );
}
