//! Strength levels, seeds and deterministic answers, through `POST /move`: the same request
//! with a seed and `deterministic` gets the same answer from every server, level 10 is today's
//! full strength, no level plays an illegal move or claims an outcome its move does not have,
//! the caches keep levels apart, and bad values are clear 4xx problems.

use serde_json::{Value, json};

use kibitz::api::AppState;
use kibitz::config::Config;
use kibitz::engine::Move;
use kibitz::engine::skill::Skill;
use kibitz::games::Grid;
use kibitz::games::connect4::Connect4;
use kibitz::games::gomoku::Gomoku;
use kibitz::games::tictactoe::TicTacToe;
use kibitz::service::games::ServedGame;

use crate::boards::board15;
use crate::service::common::{Reply, post_move, state, state_with};

/// A server without an answer cache: every request is a search.
fn uncached(table_mb: usize) -> AppState {
    state_with(Config {
        cache_entries: 0,
        table_mb: Some(table_mb),
        ..Config::for_tests()
    })
}

/// The answer without what depends on the clock or on where it came from.
fn reproducible_part(body: &Value) -> Value {
    let mut body = body.clone();
    for timing in ["elapsed_ms", "nps", "cached", "cached_from"] {
        body.as_object_mut().expect("an answer").remove(timing);
    }
    body
}

fn with(mut request: Value, extra: Value) -> Value {
    for (key, value) in extra.as_object().expect("an object") {
        request[key] = value.clone();
    }
    request
}

fn tictactoe(board: &[&str]) -> Value {
    json!({"game": "tictactoe", "board": board, "budget_ms": 500})
}

fn connect4(opening: &[usize]) -> Value {
    let mut rows = vec![vec!['.'; 7]; 6];
    let mut heights = [0usize; 7];
    for (i, &col) in opening.iter().enumerate() {
        rows[5 - heights[col]][col] = if i % 2 == 0 { 'X' } else { 'O' };
        heights[col] += 1;
    }
    let board: Vec<String> = rows.into_iter().map(String::from_iter).collect();
    json!({"game": "connect4", "board": board, "budget_ms": 500})
}

fn gomoku(stones: &[(usize, usize, char)]) -> Value {
    json!({"game": "gomoku", "board": board15(stones), "budget_ms": 1000})
}

/// A gomoku middle game: black to move.
fn gomoku_middle() -> Value {
    gomoku(&[
        (7, 7, 'X'),
        (7, 8, 'O'),
        (8, 8, 'X'),
        (6, 6, 'O'),
        (8, 6, 'X'),
        (9, 9, 'O'),
    ])
}

/// Renju, black to move, with a forbidden double three at (4, 4) that would otherwise be
/// black's most tempting move.
fn renju_with_a_forbidden_point() -> Value {
    let mut request = gomoku(&[
        (2, 4, 'X'),
        (3, 4, 'X'),
        (4, 2, 'X'),
        (4, 3, 'X'),
        (10, 10, 'O'),
        (10, 12, 'O'),
        (12, 10, 'O'),
        (12, 12, 'O'),
    ]);
    request["rules"] = json!({"variant": "renju"});
    request
}

/// The cells of the legal moves of `request`'s position, as the library sees them.
fn legal_cells<G: ServedGame>(request: &Value) -> Vec<(u64, u64)> {
    let rows: Vec<String> = serde_json::from_value(request["board"].clone()).unwrap();
    let grid = Grid::parse(&rows, G::MAX_SIDE).unwrap();
    let rules = G::parse_rules(request.get("rules")).unwrap();
    let position = G::from_grid(&grid, None, &rules).unwrap();
    let mut moves: Vec<Move> = Vec::new();
    position.legal_moves(&mut moves);
    moves
        .into_iter()
        .map(|mv| {
            let cell = position.cell_of(mv);
            (cell.row as u64, cell.col as u64)
        })
        .collect()
}

fn cell(body: &Value) -> (u64, u64) {
    (
        body["move"]["row"].as_u64().expect("a row"),
        body["move"]["col"].as_u64().expect("a col"),
    )
}

async fn ok(state: &AppState, request: Value) -> Value {
    let reply: Reply = post_move(state, request.clone()).await;
    assert_eq!(reply.status, 200, "{request}: {}", reply.text);
    reply.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deterministic_answers_are_identical_every_time_and_on_every_server() {
    // One server with a cache and a 4 MiB shared table, one without a cache and a 1 MiB table.
    let (cached, fresh) = (state(), uncached(1));
    let requests = [
        tictactoe(&["X..", ".O.", "..."]),
        with(
            connect4(&[3, 3, 2]),
            json!({"max_nodes": 200_000, "budget_ms": 5000}),
        ),
        with(connect4(&[3]), json!({"budget_ms": 50})),
        with(
            gomoku_middle(),
            json!({"max_nodes": 20_000, "budget_ms": 5000}),
        ),
        with(
            renju_with_a_forbidden_point(),
            json!({"max_nodes": 20_000, "budget_ms": 5000}),
        ),
    ];
    for request in requests {
        for level in [10, 6, 2] {
            let request = with(
                request.clone(),
                json!({"deterministic": true, "seed": 1234, "level": level}),
            );
            let first = ok(&cached, request.clone()).await;
            assert_eq!(first["deterministic"], true);
            assert_ne!(
                first["stop_reason"], "time",
                "{request}: the clock never decides"
            );
            let expected = reproducible_part(&first);
            for (server, name) in [
                (&cached, "again"),
                (&fresh, "other"),
                (&fresh, "other again"),
            ] {
                let again = ok(server, request.clone()).await;
                assert_eq!(reproducible_part(&again), expected, "{name}: {request}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deterministic_search_stops_at_a_node_limit_derived_from_the_budget() {
    let server = uncached(4);
    // The empty 8x7 board: no opening book, and no proof within the limit.
    let board = vec![".".repeat(8); 7];
    let request =
        json!({"game": "connect4", "board": board, "budget_ms": 300, "deterministic": true});
    let body = ok(&server, request).await;
    let limit = 300 * Connect4::DETERMINISTIC_NODES_PER_MS;
    // The limit stopped it, a node check or two past it at most.
    assert_eq!(body["stop_reason"], "nodes", "{body}");
    let nodes = body["nodes"].as_u64().unwrap();
    assert!(
        nodes >= limit && nodes < limit + limit / 10,
        "{nodes} nodes for a limit of {limit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weakened_level_searches_only_its_share_of_the_node_limit() {
    let server = uncached(4);
    let limit = 40_000;
    for level in [6u8, 8] {
        let share = Skill::in_table(level, &Gomoku::SKILL_LEVELS)
            .expect("a weakened level")
            .budget_share;
        let request = with(
            gomoku_middle(),
            json!({"level": level, "seed": 5, "max_nodes": limit, "budget_ms": 5000}),
        );
        let body = ok(&server, request).await;
        let nodes = body["nodes"].as_u64().expect("nodes");
        let allowed = (limit as f64 * share) as u64;
        // Its share stops it, at the first node check past it (the limits are read every
        // 1,024 nodes; its depth cap is deeper than this many nodes reach in this position).
        assert_eq!(body["stop_reason"], "nodes", "level {level}: {body}");
        assert!(
            nodes >= allowed && nodes <= allowed + 1024,
            "level {level}: {nodes} nodes, its share is {allowed} of {limit}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn level_10_is_the_default_and_plays_as_before() {
    let server = uncached(4);
    for request in [
        tictactoe(&["XX.", "OO.", "..."]),
        with(
            connect4(&[3, 3, 3, 3]),
            json!({"max_nodes": 200_000, "budget_ms": 5000}),
        ),
        with(
            gomoku_middle(),
            json!({"max_nodes": 20_000, "budget_ms": 5000}),
        ),
    ] {
        let request = with(request, json!({"deterministic": true}));
        let default = ok(&server, request.clone()).await;
        let ten = ok(&server, with(request.clone(), json!({"level": 10}))).await;
        assert_eq!(reproducible_part(&default), reproducible_part(&ten));
        assert_eq!(default["level"], 10);
        assert!(
            default.get("seed").is_none(),
            "level 10 draws nothing: {default}"
        );
        // A seed changes nothing at full strength.
        let seeded = ok(&server, with(request, json!({"seed": 99}))).await;
        assert_eq!(reproducible_part(&seeded), reproducible_part(&default));
    }
    // And the timed search: the proven win is played.
    let body = ok(&server, tictactoe(&["XX.", "OO.", "..."])).await;
    assert_eq!((cell(&body), &body["outcome"]), ((0, 2), &json!("win")));
    assert_eq!(body["level"], 10);
    assert_eq!(body["deterministic"], false);
}

async fn assert_levels_play_legal_moves<G: ServedGame>(server: &AppState, request: Value) {
    let legal = legal_cells::<G>(&request);
    for level in 1..=9 {
        for seed in 0..6u64 {
            let body = ok(
                server,
                with(request.clone(), json!({"level": level, "seed": seed})),
            )
            .await;
            assert!(
                legal.contains(&cell(&body)),
                "level {level} seed {seed} played {:?}, not a legal move of {request}",
                cell(&body)
            );
            assert_eq!(body["level"], level);
            assert_eq!(body["seed"], seed);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weakened_levels_play_only_legal_moves_and_never_a_forbidden_point() {
    let server = state();
    assert_levels_play_legal_moves::<TicTacToe>(&server, tictactoe(&["X..", ".O.", "..."])).await;
    assert_levels_play_legal_moves::<TicTacToe>(&server, tictactoe(&["XOX", "OXO", "..."])).await;
    // Connect-4: a full column (3) and a nearly full board.
    assert_levels_play_legal_moves::<Connect4>(&server, connect4(&[3, 3, 3, 3, 3, 3, 2, 4])).await;
    assert_levels_play_legal_moves::<Gomoku>(
        &server,
        with(gomoku_middle(), json!({"budget_ms": 100})),
    )
    .await;
    let renju = with(renju_with_a_forbidden_point(), json!({"budget_ms": 100}));
    assert!(
        !legal_cells::<Gomoku>(&renju).contains(&(4, 4)),
        "(4, 4) is forbidden"
    );
    assert_levels_play_legal_moves::<Gomoku>(&server, renju).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weakened_answer_claims_only_the_outcome_of_the_move_it_chose() {
    let server = state();
    // X wins at (0, 2) at once; most other moves lose to O's (1, 2).
    let request = tictactoe(&["XX.", "OO.", "..."]);
    let truth = ok(&server, with(request.clone(), json!({"analysis": true}))).await;
    let outcome_of = |c: (u64, u64)| {
        truth["analysis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| cell(m) == c)
            .map(|m| m["outcome"].clone())
            .expect("every legal move is analysed")
    };
    let mut moves_seen = std::collections::HashSet::new();
    for seed in 0..60u64 {
        let body = ok(
            &server,
            with(request.clone(), json!({"level": 1, "seed": seed})),
        )
        .await;
        let chosen = cell(&body);
        moves_seen.insert(chosen);
        if !body["outcome"].is_null() {
            assert_eq!(body["outcome"], outcome_of(chosen), "seed {seed}: {body}");
        }
        let pv = body["pv"].as_array().unwrap();
        assert_eq!(
            cell(&json!({"move": pv[0]})),
            chosen,
            "the line starts with the move"
        );
    }
    assert!(moves_seen.len() > 1, "level 1 does not always find the win");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_replays_the_same_choice_and_an_unseeded_answer_names_its_seed() {
    let request = tictactoe(&["X..", "...", "..."]);
    let mut moves = std::collections::HashSet::new();
    for seed in 0..20u64 {
        let seeded = with(request.clone(), json!({"level": 1, "seed": seed}));
        let a = ok(&uncached(1), seeded.clone()).await;
        let b = ok(&uncached(1), seeded).await;
        assert_eq!(cell(&a), cell(&b), "seed {seed}");
        moves.insert(cell(&a));
    }
    assert!(
        moves.len() > 2,
        "different seeds, different choices: {moves:?}"
    );
    let unseeded = ok(&state(), with(request.clone(), json!({"level": 2}))).await;
    let seed = unseeded["seed"].as_u64().expect("the seed drawn for it");
    // A drawn seed is a safe integer in JavaScript, so the playground can replay it (a
    // 64-bit draw is above 2^53 but once in 2,048).
    for _ in 0..20 {
        let drawn = ok(&state(), with(request.clone(), json!({"level": 2}))).await;
        let drawn = drawn["seed"].as_u64().expect("the seed drawn for it");
        assert!(drawn < 1 << 53, "seed {drawn} is not exact in JavaScript");
    }
    let replay = ok(
        &uncached(1),
        with(request, json!({"level": 2, "seed": seed})),
    )
    .await;
    assert_eq!(cell(&replay), cell(&unseeded));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_never_serves_one_level_or_mode_to_another() {
    let server = state();
    let request = with(connect4(&[3, 2, 4]), json!({"max_depth": 6}));
    let full = ok(&server, request.clone()).await;
    assert_eq!(full["cached"], false);
    let weak_request = with(request.clone(), json!({"level": 3, "seed": 5}));
    let weak = ok(&server, weak_request.clone()).await;
    assert_eq!(
        (&weak["cached"], &weak["level"]),
        (&json!(false), &json!(3))
    );
    let other_seed = ok(
        &server,
        with(request.clone(), json!({"level": 3, "seed": 6})),
    )
    .await;
    assert_eq!(
        other_seed["cached"], false,
        "another seed is another question"
    );
    let deterministic = ok(
        &server,
        with(request.clone(), json!({"deterministic": true})),
    )
    .await;
    assert_eq!(
        deterministic["cached"], false,
        "a timed answer never serves a deterministic one"
    );
    // Each is now served to its own question only.
    let full_again = ok(&server, request.clone()).await;
    assert_eq!(
        (&full_again["cached"], &full_again["level"]),
        (&json!(true), &json!(10))
    );
    assert_eq!(cell(&full_again), cell(&full));
    let weak_again = ok(&server, weak_request).await;
    assert_eq!(
        (&weak_again["cached"], &weak_again["level"]),
        (&json!(true), &json!(3))
    );
    assert_eq!(reproducible_part(&weak_again), reproducible_part(&weak));
    let deterministic_again = ok(
        &server,
        with(request.clone(), json!({"deterministic": true})),
    )
    .await;
    assert_eq!(deterministic_again["cached"], true);
    // A weakened request without a seed asks for a fresh draw: never from the cache.
    let unseeded = with(request, json!({"level": 3}));
    for _ in 0..2 {
        assert_eq!(ok(&server, unseeded.clone()).await["cached"], false);
    }
}

async fn problem(request: Value, status: u16, pointer: &str) {
    let reply = post_move(&state(), request.clone()).await;
    assert_eq!(reply.status.as_u16(), status, "{request}: {}", reply.text);
    assert_eq!(
        reply.headers["content-type"], "application/problem+json",
        "{request}"
    );
    assert_eq!(
        reply.body["errors"][0]["pointer"], pointer,
        "{request}: {}",
        reply.text
    );
}

#[tokio::test]
async fn bad_levels_seeds_and_modes_are_clear_problems() {
    let base = tictactoe(&["...", "...", "..."]);
    // A whole number out of range is a 422 whatever its sign or size; what is no whole
    // number at all is a 400.
    for level in [json!(0), json!(11), json!(1_000_000_000_000u64), json!(-1)] {
        problem(with(base.clone(), json!({"level": level})), 422, "/level").await;
    }
    for level in [json!(2.5), json!("3"), json!(true)] {
        problem(with(base.clone(), json!({"level": level})), 400, "/level").await;
    }
    let huge: Value = serde_json::from_str("18446744073709551616").unwrap();
    for seed in [json!(-1), json!(18446744073709551616.0), huge] {
        problem(with(base.clone(), json!({"seed": seed})), 422, "/seed").await;
    }
    for seed in [json!(1.5), json!("7")] {
        problem(with(base.clone(), json!({"seed": seed})), 400, "/seed").await;
    }
    for mode in [json!("yes"), json!(1), json!(null)] {
        problem(
            with(base.clone(), json!({"deterministic": mode})),
            400,
            "/deterministic",
        )
        .await;
    }
    // JSON Schema's `integer` includes a zero fraction: 7.0 is the seed 7.
    let reply = post_move(
        &state(),
        with(base.clone(), json!({"level": 1, "seed": 7.0})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["seed"], 7);
    // The largest seed is a seed; null is no seed.
    let reply = post_move(
        &state(),
        with(base.clone(), json!({"level": 1, "seed": u64::MAX})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["seed"], u64::MAX);
    let reply = post_move(&state(), with(base, json!({"seed": null, "level": null}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deterministic_search_that_cannot_finish_in_its_budget_is_a_422_naming_max_nodes() {
    // A gomoku node limit far beyond what 20 ms can search, on a quiet opening (no threat
    // sequence settles it early). Retrying cannot help: the request must change, so it is a
    // 4xx without Retry-After (a load balancer would retry a 503 elsewhere, in vain).
    let request = with(
        gomoku(&[(7, 7, 'X'), (7, 8, 'O')]),
        json!({"deterministic": true, "max_nodes": 1_000_000_000u64, "budget_ms": 20}),
    );
    let reply = post_move(&uncached(4), request).await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert_eq!(reply.headers["content-type"], "application/problem+json");
    let detail = reply.body["detail"].as_str().unwrap();
    assert!(detail.contains("node limit of 1000000000"), "{detail}");
    assert!(detail.contains("budget_ms of 20"), "{detail}");
    assert_eq!(
        reply.body["errors"][0]["pointer"], "/max_nodes",
        "{}",
        reply.text
    );
    assert!(!reply.headers.contains_key("retry-after"));
}
