//! The bodies of cached answers, kept so that a hot answer is serialised once
//! (`kibitz::api::answer_bodies`): a hit serves its own answer's body, never one kept for an
//! answer the cache has dropped, and the bodies kept stay within their bound.

use crate::service::common::*;
use kibitz::api::answer_bodies::MAX_BYTES;
use kibitz::config::Config;
use serde_json::{Value, json};

fn tictactoe(board: [&str; 3]) -> Value {
    json!({"game": "tictactoe", "board": board})
}

/// What a hit on the answer of `fresh` (a `cached: false` reply) must be.
fn as_hit(fresh: &Value) -> Value {
    let mut hit = fresh.clone();
    hit["cached"] = json!(true);
    hit["cached_from"] = json!("local");
    hit
}

#[tokio::test]
async fn a_hit_after_the_cache_dropped_its_answer_serves_the_new_answer() {
    let state = state_with(Config {
        cache_entries: 1,
        ..Config::for_tests()
    });
    let position = tictactoe(["X..", ".O.", "..."]);
    let first = post_move(&state, position.clone()).await.body;
    let hit = post_move(&state, position.clone()).await.body;
    assert_eq!(hit, as_hit(&first));
    // One entry: another position's answer takes the first one's place.
    post_move(&state, tictactoe(["...", "...", "..."])).await;
    let again = post_move(&state, position.clone()).await.body;
    assert_eq!(again["cached"], false);
    let hit_again = post_move(&state, position).await.body;
    assert_eq!(hit_again, as_hit(&again));
}

/// Every tic-tac-toe position with X to move or O to move that is not over, as rows.
fn open_positions() -> Vec<[String; 3]> {
    let lines = [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [0, 3, 6],
        [1, 4, 7],
        [2, 5, 8],
        [0, 4, 8],
        [2, 4, 6],
    ];
    (0..3u32.pow(9))
        .filter_map(|code| {
            let cells: Vec<char> = (0..9)
                .map(|i| ['.', 'X', 'O'][(code / 3u32.pow(i) % 3) as usize])
                .collect();
            let count = |c| cells.iter().filter(|&&x| x == c).count();
            let (x, o) = (count('X'), count('O'));
            let won = lines.iter().any(|l| {
                cells[l[0]] != '.' && cells[l[0]] == cells[l[1]] && cells[l[1]] == cells[l[2]]
            });
            let rows = |r: usize| cells[r * 3..r * 3 + 3].iter().collect::<String>();
            (x + o < 9 && (x == o || x == o + 1) && !won).then(|| [rows(0), rows(1), rows(2)])
        })
        .collect()
}

#[tokio::test]
async fn the_bodies_kept_stay_within_their_bound() {
    let state = state_with(Config {
        cache_entries: 10_000,
        cache_mb: Some(64),
        ..Config::for_tests()
    });
    let positions = open_positions();
    assert!(positions.len() > 2000, "{}", positions.len());
    for rows in &positions {
        let position = json!({"game": "tictactoe", "board": rows});
        post_move(&state, position.clone()).await;
        let hit = post_move(&state, position).await;
        assert_eq!(hit.body["cached"], true, "{rows:?}");
        assert!(state.answer_bodies.bytes() <= MAX_BYTES);
    }
    // Full: tic-tac-toe bodies are under 1 KiB, so the count binds before the bytes.
    assert_eq!(state.answer_bodies.len(), 1024);
}
