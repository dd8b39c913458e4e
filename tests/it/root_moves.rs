//! `searchmoves` (only these) and `exclude` (not these) at the root of `POST /move`, in every
//! game: the answer's move is always allowed, and where the game is solved its score is the
//! best exact value among the allowed moves; bad lists are 422s naming the field; the answer
//! cache keeps a restricted question apart from the plain one.

use serde_json::{Value, json};

use crate::boards::board;
use crate::service::common::*;
use crate::tictactoe_oracle::{Memo, move_value, unfinished_positions};
use kibitz::engine::{
    Game, Move, RootFilter, SearchLimits, SearchOptions, TranspositionTable, search,
};

#[test]
fn tictactoe_restricted_roots_answer_the_best_exact_value_among_the_allowed_moves() {
    let mut memo = Memo::new();
    let table = TranspositionTable::with_megabytes(1);
    let mut checked = 0;
    for position in &unfinished_positions() {
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        let mut walk = position.clone();
        let values: Vec<i32> = legal
            .iter()
            .map(|&mv| move_value(&mut walk, mv, &mut memo))
            .collect();
        // Every move alone, every move excluded, and the first half of the moves.
        let mut sets: Vec<Vec<Move>> = legal.iter().map(|&mv| vec![mv]).collect();
        if legal.len() > 1 {
            for skip in 0..legal.len() {
                sets.push(
                    legal
                        .iter()
                        .copied()
                        .filter(|&m| m != legal[skip])
                        .collect(),
                );
            }
            sets.push(legal[..legal.len().div_ceil(2)].to_vec());
        }
        for allowed in sets {
            let limits = SearchLimits {
                root: Some(RootFilter::new(&allowed)),
                ..SearchLimits::default()
            };
            let report = search(position, &limits, SearchOptions::default(), &table);
            let best = report.best_move.expect("a move");
            assert!(
                allowed.contains(&best),
                "{position:?}: {best:?} not in {allowed:?}"
            );
            let expected = legal
                .iter()
                .zip(&values)
                .filter(|(m, _)| allowed.contains(m))
                .map(|(_, &v)| v)
                .max()
                .unwrap();
            assert_eq!(report.score, expected, "{position:?} among {allowed:?}");
            let played = values[legal.iter().position(|&m| m == best).unwrap()];
            assert_eq!(played, expected, "{position:?}: the move keeps the value");
            assert!(report.proof.is_some(), "tic-tac-toe is always proven");
            checked += 1;
        }
    }
    assert!(checked > 30_000, "{checked} restricted positions");
}

async fn ask(state: &kibitz::api::AppState, body: Value) -> Reply {
    let reply = post_move(state, body.clone()).await;
    assert_eq!(reply.status, 200, "{body}: {}", reply.text);
    reply
}

#[tokio::test]
async fn tictactoe_searchmoves_and_exclude_restrict_the_root_in_any_notation() {
    let state = state();
    // X to move wins at c3 (row 0, col 2): "XX." on top.
    let base = json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]});
    let plain = ask(&state, base.clone()).await;
    assert_eq!(plain.body["move"]["notation"], "c3");
    assert_eq!(plain.body["outcome"], "win");
    let mut excluded = base.clone();
    excluded["exclude"] = json!("c3");
    let reply = ask(&state, excluded.clone()).await;
    assert_ne!(reply.body["move"]["notation"], "c3");
    // O then wins at c2: whatever X plays but c2 loses; c2 itself draws or better.
    assert_eq!(reply.body["move"]["notation"], "c2", "{}", reply.text);
    assert_eq!(
        reply.body["cached"], false,
        "not the plain answer from the cache"
    );
    // The same restriction as JSON cells and as searchmoves gives the same answer.
    let mut as_cells = base.clone();
    as_cells["exclude"] = json!([{"row": 0, "col": 2}]);
    assert_eq!(ask(&state, as_cells).await.body["move"], reply.body["move"]);
    let mut only = base.clone();
    only["searchmoves"] = json!(["a1", "b1"]);
    let reply = ask(&state, only).await;
    let name = reply.body["move"]["notation"].as_str().unwrap().to_owned();
    assert!(["a1", "b1"].contains(&name.as_str()), "{name}");
    assert_eq!(
        reply.body["outcome"], "loss",
        "either lets O win: {}",
        reply.text
    );
    // The plain question still gets the plain answer (the cache keeps them apart).
    let again = ask(&state, base).await;
    assert_eq!(again.body["move"]["notation"], "c3");
    assert_eq!(again.body["cached"], true);
}

#[tokio::test]
async fn bad_restrictions_are_422s_naming_the_field() {
    let state = state();
    let base = json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]});
    let cases = [
        (json!({"exclude": ["c3", "a3"]}), "/exclude/1", "occupied"),
        (json!({"searchmoves": "z9"}), "/searchmoves", ""),
        (
            json!({"searchmoves": [{"row": 5, "col": 0}]}),
            "/searchmoves/0",
            "off the board",
        ),
        (
            json!({"exclude": "c3 c2 a1 b1 c1"}),
            "/exclude",
            "no legal move",
        ),
        (
            json!({"searchmoves": ["c3"], "exclude": ["c3"]}),
            "/exclude",
            "no legal move",
        ),
        (json!({"searchmoves": []}), "/searchmoves", "no legal move"),
    ];
    for (extra, pointer, words) in cases {
        let mut body = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let reply = post_move(&state, body.clone()).await;
        assert_eq!(reply.status, 422, "{body}: {}", reply.text);
        assert_eq!(content_type(&reply), "application/problem+json");
        assert_eq!(
            reply.body["errors"][0]["pointer"], pointer,
            "{body}: {}",
            reply.text
        );
        let detail = reply.body["detail"].as_str().unwrap();
        assert!(detail.contains(words), "{body}: {detail}");
    }
    // A Connect-4 cell where a column is wanted.
    let reply = post_move(
        &state,
        json!({"game": "connect4", "moves": "44", "exclude": [{"row": 5, "col": 0}]}),
    )
    .await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert_eq!(reply.body["errors"][0]["pointer"], "/exclude/0");
}

#[tokio::test]
async fn connect4_excluding_the_winning_column_changes_the_outcome_book_and_solver() {
    let state = state();
    // The empty board: only the centre wins (Pons' first-move values -2 -1 0 1 0 -1 -2).
    let plain = ask(&state, json!({"game": "connect4", "moves": ""})).await;
    assert_eq!(plain.body["move"]["column"], 3, "{}", plain.text);
    assert_eq!(plain.body["outcome"], "win");
    // Column "4" in Pons' 1-based digits is column 3 counted from 0, as answers count.
    let reply = ask(
        &state,
        json!({"game": "connect4", "moves": "", "exclude": "4"}),
    )
    .await;
    let column = reply.body["move"]["column"].as_u64().unwrap();
    assert!(column == 2 || column == 4, "{}", reply.text);
    assert_eq!(reply.body["outcome"], "draw", "{}", reply.text);
    let reply = ask(
        &state,
        json!({"game": "connect4", "moves": "", "searchmoves": [0]}),
    )
    .await;
    assert_eq!(reply.body["move"]["column"], 0);
    assert_eq!(reply.body["outcome"], "loss", "{}", reply.text);
    // Past the book: X wins at once in column 4 (three in the bottom row).
    let rows = board(
        6,
        7,
        &[
            (5, 0, 'X'),
            (5, 1, 'X'),
            (5, 2, 'X'),
            (4, 0, 'O'),
            (4, 1, 'O'),
            (4, 2, 'O'),
        ],
    );
    let plain = ask(&state, json!({"game": "connect4", "board": rows})).await;
    assert_eq!(plain.body["move"]["column"], 3);
    assert_eq!(plain.body["plies_to_end"], 1);
    let reply = ask(
        &state,
        json!({"game": "connect4", "board": rows, "exclude": ["4"]}),
    )
    .await;
    assert_ne!(reply.body["move"]["column"], 3, "{}", reply.text);
    assert_ne!(reply.body["plies_to_end"], 1, "{}", reply.text);
    assert!(reply.body["score"].as_i64() < plain.body["score"].as_i64());
    assert_eq!(
        reply.body["pv"][0], reply.body["move"],
        "the line starts with the move"
    );
    // The heuristic fallback (a node cap too small to solve) honours it too.
    let capped = ask(
        &state,
        json!({"game": "connect4", "moves": "4444", "searchmoves": "17", "max_nodes": 50}),
    )
    .await;
    let column = capped.body["move"]["column"].as_u64().unwrap();
    assert!(column == 0 || column == 6, "{}", capped.text);
}

#[tokio::test]
async fn gomoku_restricted_roots_never_answer_outside_the_set() {
    let state = state();
    // X has an open four in row 7 from the top: two cells make five.
    let xs = [(7, 2), (7, 3), (7, 4), (7, 5)];
    let os = [(5, 2), (5, 3), (5, 4)];
    let mut stones: Vec<(usize, usize, char)> = xs.iter().map(|&(r, c)| (r, c, 'X')).collect();
    stones.extend(os.iter().map(|&(r, c)| (r, c, 'O')));
    stones.push((3, 3, 'O'));
    for side in [15, 9] {
        let rows = board(side, side, &stones);
        let plain = ask(&state, json!({"game": "gomoku", "board": rows})).await;
        assert_eq!(plain.body["plies_to_end"], 1, "{side}: {}", plain.text);
        let first = plain.body["move"].clone();
        // Excluding one five leaves the other.
        let reply = ask(
            &state,
            json!({"game": "gomoku", "board": rows, "exclude": [first["notation"]]}),
        )
        .await;
        assert_ne!(reply.body["move"], first);
        assert_eq!(reply.body["plies_to_end"], 1, "{side}: {}", reply.text);
        let second = reply.body["move"].clone();
        // Excluding both: no five; the answer is neither, and O's three must be met.
        let both = json!([first["notation"], second["notation"]]);
        let reply = ask(
            &state,
            json!({"game": "gomoku", "board": rows, "exclude": both, "budget_ms": 300}),
        )
        .await;
        assert!(
            reply.body["move"] != first && reply.body["move"] != second,
            "{}",
            reply.text
        );
        // Only far cells: the answer is one of them (no threat search move slips through).
        let far = json!([{"row": 0, "col": 0}, {"row": side - 1, "col": side - 1}]);
        let reply = ask(
            &state,
            json!({"game": "gomoku", "board": rows, "searchmoves": far, "budget_ms": 300}),
        )
        .await;
        assert!(
            far.as_array().unwrap().contains(&json!({
                "row": reply.body["move"]["row"], "col": reply.body["move"]["col"]
            })),
            "{side}: {}",
            reply.text
        );
    }
}

#[tokio::test]
async fn gomoku_a_forced_block_that_is_excluded_is_not_played() {
    let state = state();
    // O has a closed four on row 8 (blocked on the left by X): the block is forced.
    let mut stones = vec![
        (7, 4, 'X'),
        (7, 5, 'O'),
        (7, 6, 'O'),
        (7, 7, 'O'),
        (7, 8, 'O'),
    ];
    stones.extend([(9, 9, 'X'), (10, 10, 'X'), (3, 12, 'X')]);
    let rows = board(15, 15, &stones);
    let plain = ask(
        &state,
        json!({"game": "gomoku", "board": rows, "budget_ms": 300}),
    )
    .await;
    assert_eq!(plain.body["move"]["notation"], "j8", "{}", plain.text);
    let reply = ask(
        &state,
        json!({"game": "gomoku", "board": rows, "exclude": "j8", "budget_ms": 300}),
    )
    .await;
    assert_ne!(reply.body["move"]["notation"], "j8", "{}", reply.text);
    assert_eq!(
        reply.body["outcome"], "loss",
        "O makes five: {}",
        reply.text
    );
}
