//! Renju: known forbidden points for black (double three, double four, overline, and the false
//! threes whose only four point is itself forbidden), the engine's move filter built on them,
//! and the `variant` rule of the API.

use std::time::Duration;

use kibitz::engine::{Game, Move, SearchLimits, SearchOptions, Side, TranspositionTable};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::renju::{self, Forbidden};
use kibitz::games::gomoku::vcf::{Vcf, VcfLimits};
use kibitz::games::gomoku::vct::{self, Vct, VctLimits};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::service::games::parse_gomoku_rules;

use crate::boards::window;

const SIZE: usize = 15;

/// A 15x15 board from rows laid at its top-left: `X` black, `O` white, `*` the point asked
/// about (empty). Returns the cells (`0`/`1`/`2`) and the asked cell.
fn board<S: AsRef<str>>(rows: &[S]) -> (Vec<u8>, usize) {
    let mut cells = vec![0u8; SIZE * SIZE];
    let mut asked = usize::MAX;
    for (r, row) in rows.iter().enumerate() {
        for (c, ch) in row.as_ref().chars().enumerate() {
            let cell = r * SIZE + c;
            match ch {
                'X' => cells[cell] = 1,
                'O' => cells[cell] = 2,
                '*' => asked = cell,
                _ => {}
            }
        }
    }
    (cells, asked)
}

/// The renju position of `cells`, black to move.
fn position(cells: &[u8]) -> Gomoku {
    let mut p = Gomoku::new(SIZE, SIZE, GomokuRules::renju()).expect("15x15 renju");
    let stones = cells.iter().enumerate().filter_map(|(i, &v)| match v {
        1 => Some((i, Side::First)),
        2 => Some((i, Side::Second)),
        _ => None,
    });
    p.set_up(stones, Side::First);
    p
}

/// The verdict on the `*` point, checked to be the same through the engine's filtered path.
fn verdict(rows: &[&str]) -> Option<Forbidden> {
    let (cells, asked) = board(rows);
    let exact = renju::forbidden(&cells, SIZE, SIZE, asked);
    assert_eq!(
        position(&cells).forbidden(asked),
        exact,
        "the engine's pattern filter disagrees with the exact test"
    );
    exact
}

#[test]
fn two_open_threes_at_once_are_a_forbidden_double_three() {
    assert_eq!(
        verdict(&[
            ".........",
            ".........",
            "....X....",
            "....X....",
            "..XX*....",
            ".........",
            ".........",
        ]),
        Some(Forbidden::DoubleThree)
    );
}

#[test]
fn a_split_three_counts_as_a_three() {
    assert_eq!(
        verdict(&[
            ".........",
            ".........",
            "....X....",
            "....X....",
            ".X.X*....",
            ".........",
            ".........",
        ]),
        Some(Forbidden::DoubleThree)
    );
}

#[test]
fn a_four_and_a_three_are_allowed() {
    assert_eq!(
        verdict(&[
            ".........",
            "....X....",
            "....X....",
            "....X....",
            "..XX*....",
            ".........",
            ".........",
        ]),
        None
    );
}

#[test]
fn a_three_blocked_at_one_end_is_no_three() {
    assert_eq!(
        verdict(&[
            ".........",
            ".........",
            "....X....",
            "....X....",
            ".OXX*....",
            ".........",
            ".........",
        ]),
        None
    );
}

#[test]
fn a_three_that_could_only_become_an_overline_is_no_three() {
    // Row 4 `X.XX.*`: the straight four needs col 4, and its end at col 1 would join col 0
    // into six; so only column 5 makes a three.
    assert_eq!(
        verdict(&[
            "..........",
            "..........",
            ".....X....",
            ".....X....",
            "X.XX.*....",
            "..........",
            "..........",
        ]),
        None
    );
}

#[test]
fn fours_on_two_lines_are_a_forbidden_double_four() {
    assert_eq!(
        verdict(&[
            ".........",
            "....X....",
            "....X....",
            "....X....",
            ".XXX*....",
            ".........",
        ]),
        Some(Forbidden::DoubleFour)
    );
}

#[test]
fn two_fours_on_one_line_are_a_forbidden_double_four() {
    assert_eq!(
        verdict(&["...........", "..X.X*X.X..", "..........."]),
        Some(Forbidden::DoubleFour)
    );
}

#[test]
fn six_in_a_row_is_a_forbidden_overline() {
    assert_eq!(
        verdict(&["...........", "..XXX*XX...", "..........."]),
        Some(Forbidden::Overline)
    );
}

#[test]
fn exactly_five_wins_even_where_it_also_makes_a_double_three() {
    assert_eq!(
        verdict(&[
            ".........",
            ".........",
            "..X.X....",
            "...XX....",
            "XXXX*....",
            ".........",
        ]),
        None
    );
}

/// Row 7 holds the split three `X.X*` whose only straight-four point is (7,5); column 5 holds
/// `column` (rows 0..), which decides whether (7,5) is itself forbidden once `*` is down.
/// Column 7 holds an ordinary three through `*`.
fn false_three_board(column: &[usize]) -> Vec<String> {
    let mut rows = vec![vec!['.'; 12]; 12];
    rows[7][4] = 'X';
    rows[7][6] = 'X';
    rows[7][7] = '*';
    rows[5][7] = 'X';
    rows[6][7] = 'X';
    for &r in column {
        rows[r][5] = 'X';
    }
    rows.into_iter().map(|r| r.into_iter().collect()).collect()
}

#[test]
fn a_three_whose_only_four_point_is_an_overline_is_false_so_no_double_three() {
    // (7,5) would join rows 4-6 and 8-9 of column 5: six in a row, forbidden.
    let rows = false_three_board(&[4, 5, 6, 8, 9]);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(verdict(&rows), None);
}

#[test]
fn a_three_whose_only_four_point_is_a_double_four_is_false_so_no_double_three() {
    // (7,5) would make a four in column 5 (rows 4-7) beside the row's straight four.
    let rows = false_three_board(&[4, 5, 6]);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(verdict(&rows), None);
}

#[test]
fn the_same_three_is_real_when_its_four_point_is_allowed() {
    // (7,5) now makes only a three in column 5 beside the four: allowed, so the double three
    // at `*` is real.
    let rows = false_three_board(&[5, 6]);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(verdict(&rows), Some(Forbidden::DoubleThree));
}

#[test]
fn a_three_whose_four_point_is_a_four_three_three_is_false() {
    // Row 7's split three `X.X*` needs (7,5); with `*` down, (7,5) makes the row's four plus
    // threes in column 5 (rows 5-7) and on the diagonal (5,3), (6,4): a double three beside a
    // four, forbidden (the test of those threes is the second level of recursion). So `*`
    // makes one real three (column 7) and is allowed.
    let mut rows = vec![vec!['.'; 12]; 12];
    for (r, c) in [
        (7, 4),
        (7, 6),
        (5, 7),
        (6, 7),
        (6, 5),
        (5, 5),
        (6, 4),
        (5, 3),
    ] {
        rows[r][c] = 'X';
    }
    rows[7][7] = '*';
    let rows: Vec<String> = rows.into_iter().map(|r| r.into_iter().collect()).collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(verdict(&rows), None);
}

#[test]
fn the_engine_lists_the_forbidden_points() {
    let (cells, asked) = board(&[
        ".........",
        ".........",
        "....X....",
        "....X....",
        "..XX*....",
        ".........",
    ]);
    let points = position(&cells).forbidden_points();
    assert!(points.contains(&(Move(asked as u16), Forbidden::DoubleThree)));
}

#[test]
fn free_style_rules_forbid_nothing() {
    let (cells, asked) = board(&["...........", "..XXX*XX..."]);
    let mut p = Gomoku::new(SIZE, SIZE, GomokuRules::default()).expect("board");
    p.set_up(
        cells
            .iter()
            .enumerate()
            .filter(|(_, v)| **v == 1)
            .map(|(i, _)| (i, Side::First)),
        Side::First,
    );
    assert_eq!(p.forbidden(asked), None);
}

#[test]
fn black_making_six_under_renju_is_no_win_and_not_played() {
    let (cells, asked) = board(&["...........", "..XXX*XX...", "OOO.O......"]);
    let p = position(&cells);
    assert_eq!(p.immediate_win(), None);
    let mut moves = Vec::new();
    p.legal_moves(&mut moves);
    assert!(!moves.contains(&Move(asked as u16)));
}

#[test]
fn the_engine_never_plays_a_forbidden_point_as_black() {
    // The double-three point is the obvious attacking move; under renju it is forbidden.
    let rows = "
        ....X..........
        ....X..........
        ..XX*..........";
    let (mut cells, asked) = board(&window(15, 2, rows));
    // White stones elsewhere so the counts look like a game.
    for cell in [10 * SIZE + 10, 11 * SIZE + 12, 12 * SIZE + 9] {
        cells[cell] = 2;
    }
    let p = position(&cells);
    let table = TranspositionTable::with_megabytes(8);
    let limits = SearchLimits::with_budget(Duration::from_millis(300));
    let report = p.think(&limits, SearchOptions::default(), &table);
    let chosen = report.best_move.expect("a move");
    assert_ne!(chosen, Move(asked as u16));
    assert_eq!(p.forbidden(chosen.index()), None);
}

#[test]
fn the_api_takes_variant_renju() {
    let rules = parse_gomoku_rules(Some(&serde_json::json!({"variant": "renju"})), 25)
        .expect("renju is a variant");
    assert_eq!(rules, GomokuRules::renju());
}

#[test]
fn renju_with_another_line_length_is_refused_at_the_variant() {
    let error = parse_gomoku_rules(
        Some(&serde_json::json!({"variant": "renju", "win_length": 6})),
        25,
    )
    .expect_err("renju is five in a row");
    assert_eq!(error.pointer, "/rules/variant");
}

/// White's four on row 5 is completed only at (5,4), a double three for black (with the
/// column's stones at rows 3 and 4 and the diagonal's at (6,5) and (7,6)).
const FORBIDDEN_BLOCK: [&str; 9] = [
    ".........",
    ".........",
    ".........",
    "....X....",
    "....X....",
    "OOOO*....",
    ".....X...",
    "......X..",
    ".........",
];

#[test]
fn black_still_moves_when_the_only_block_of_a_four_is_forbidden() {
    // Black cannot block, the game is lost, and the engine must still answer with an allowed
    // move.
    let (cells, block) = board(&FORBIDDEN_BLOCK);
    let p = position(&cells);
    assert_eq!(p.forbidden(block), Some(Forbidden::DoubleThree));
    let table = TranspositionTable::with_megabytes(8);
    let limits = SearchLimits::with_budget(Duration::from_millis(100));
    let report = p.think(&limits, SearchOptions::default(), &table);
    let chosen = report.best_move.expect("a move");
    assert_eq!(p.forbidden(chosen.index()), None);
}

// The threat searches (VCF, VCT) under renju: black never plays a forbidden point, as a threat
// or as a block, and a white four whose only block is forbidden cannot be stopped.

/// The position of `cells` under `rules`, `to_move` to move.
fn position_with(cells: &[u8], rules: GomokuRules, to_move: Side) -> Gomoku {
    let mut p = Gomoku::new(SIZE, SIZE, rules).expect("15x15");
    let stones = cells.iter().enumerate().filter_map(|(i, &v)| match v {
        1 => Some((i, Side::First)),
        2 => Some((i, Side::Second)),
        _ => None,
    });
    p.set_up(stones, to_move);
    p
}

fn vcf_line(p: &Gomoku) -> Option<Vec<Move>> {
    Vcf::new(p.clone()).solve(&VcfLimits::default())
}

fn vct_win(p: &Gomoku) -> Option<(Move, u32)> {
    let limits = VctLimits {
        deadline: None,
        max_nodes: 2_000_000,
        cancel: None,
    };
    Vct::new(p.clone()).solve(vct::MAX_THREATS, &limits)
}

/// Plays `line` from `p` and checks that no black move of it is forbidden when played and
/// that it ends with a win for the side that started it.
fn assert_legal_winning_line(p: &Gomoku, line: &[Move]) {
    let mut q = p.clone();
    let attacker = q.side_to_move();
    for &mv in line {
        assert!(q.is_legal(mv), "{mv:?} is not legal in\n{q:?}");
        if q.side_to_move() == Side::First {
            assert_eq!(
                q.forbidden(mv.index()),
                None,
                "black plays forbidden {mv:?}"
            );
        }
        q.make(mv);
    }
    assert_eq!(q.status(), kibitz::engine::Status::Lost);
    assert_eq!(q.side_to_move(), attacker.other());
}

#[test]
fn black_finds_a_vcf_under_renju_and_plays_it() {
    // A four on row 5 forces white to (5,8); then (8,8) is a four-three (allowed in renju):
    // the column four and the diagonal/row threes win. Every black move of the line is legal.
    let rows = "
        .....XXX.......
        ...............
        ........X......
        ........X......
        ........X......
        ...............
        ...............
        ...O.O.O.O.O...
        ...........O...";
    let (cells, _) = board(&window(15, 5, rows));
    let p = position_with(&cells, GomokuRules::renju(), Side::First);
    let line = vcf_line(&p).expect("black's VCF under renju");
    assert_legal_winning_line(&p, &line);
    let table = TranspositionTable::with_megabytes(8);
    let limits = SearchLimits::with_budget(Duration::from_millis(300));
    let report = p.think(&limits, SearchOptions::default(), &table);
    let proof = report.proof.expect("think proves black's win under renju");
    assert_eq!(proof.outcome, kibitz::engine::Outcome::Win);
    assert_eq!(p.forbidden(report.best_move.expect("a move").index()), None);
}

/// Black's double four at (7,7): a win in one move in free-style, forbidden in renju, where
/// black has no other forced win.
fn double_four_board() -> (Vec<u8>, usize) {
    let rows = "
        .......O.......
        .......X.......
        .......X.......
        .......X.......
        ...OXXX*.......
        ...............
        ...............
        ...............
        ...........O...
        ............O..";
    board(&window(15, 3, rows))
}

#[test]
fn a_vcf_whose_key_move_is_a_forbidden_double_four_is_not_reported_under_renju() {
    let (cells, key) = double_four_board();
    let free = position_with(&cells, GomokuRules::default(), Side::First);
    let line = vcf_line(&free).expect("free-style: the double four wins");
    assert_eq!(line[0], Move(key as u16));
    let renju_pos = position_with(&cells, GomokuRules::renju(), Side::First);
    assert_eq!(renju_pos.forbidden(key), Some(Forbidden::DoubleFour));
    if let Some(line) = vcf_line(&renju_pos) {
        panic!("renju: a VCF reported through {line:?}");
    }
    if let Some(found) = vct_win(&renju_pos) {
        assert_ne!(
            found.0,
            Move(key as u16),
            "renju: a VCT through the double four"
        );
    }
    // Black may still win by other threats (its stones are strong); whatever `think` plays or
    // proves, it is not the double four, and a proven line is legal.
    let table = TranspositionTable::with_megabytes(8);
    let limits = SearchLimits::with_budget(Duration::from_millis(200));
    let report = renju_pos.think(&limits, SearchOptions::default(), &table);
    assert_ne!(report.best_move, Some(Move(key as u16)));
    assert_eq!(
        renju_pos.forbidden(report.best_move.expect("a move").index()),
        None
    );
}

/// White to move: the diagonal three (3,3)-(5,5), closed by black at (2,2), becomes a four at
/// (6,6) whose only block (7,7) is a double three for black.
fn forbidden_block_board() -> (Vec<u8>, usize) {
    let rows = "
        ..X............
        ...O...........
        ....O..X.......
        .....O.X.......
        ...............
        .....XX*.......
        ...............
        ...............
        ...............
        ..........O....";
    board(&window(15, 2, rows))
}

#[test]
fn white_wins_by_a_four_whose_only_block_is_forbidden_for_black() {
    let (cells, block) = forbidden_block_board();
    let renju_pos = position_with(&cells, GomokuRules::renju(), Side::Second);
    assert_eq!(renju_pos.forbidden(block), Some(Forbidden::DoubleThree));
    let line = vcf_line(&renju_pos).expect("renju: white's four cannot be blocked");
    assert_eq!(line[0], Move((6 * SIZE + 6) as u16));
    assert_legal_winning_line(&renju_pos, &line);
    // In free-style black simply blocks: no VCF.
    let free = position_with(&cells, GomokuRules::default(), Side::Second);
    assert_eq!(vcf_line(&free), None);
    // The VCT agrees, and `think` reports the proven win.
    assert!(vct_win(&renju_pos).is_some());
    let table = TranspositionTable::with_megabytes(8);
    let limits = SearchLimits::with_budget(Duration::from_millis(200));
    let report = renju_pos.think(&limits, SearchOptions::default(), &table);
    assert_eq!(
        report.proof.map(|p| p.outcome),
        Some(kibitz::engine::Outcome::Win)
    );
}

// Black's overline points: fives in the board's patterns (white's five-or-more reading), no
// threat under renju. The main search once read them as fives to block.

/// A renju game of 82 moves, black to move (kibitz against Rapfi, 2026-12-07): black has two
/// overline points (row 7, column 5 on a diagonal; row 13, column 10 on its row) and white
/// attacks.
const OVERLINE_GAME: [&str; 15] = [
    "...............",
    "...............",
    "...............",
    "....O....O.....",
    "......OXXXXO...",
    ".O...OOXXO.....",
    "..XXOXXOO.X....",
    "..OXO.OXXO.....",
    "..XOXO.OXXXO...",
    "..OXO..XOOX....",
    ".OOX.XOXOOOOX..",
    "X.X.XO.XXOXO...",
    "..OXX..OXOOX...",
    "..OO.OXXXX.X...",
    "............O..",
];

#[test]
fn an_overline_point_of_black_is_no_five_for_white_to_block() {
    let (cells, six) = board(&["...........", "..XXX*XX...", "OOO.O......"]);
    let p = position_with(&cells, GomokuRules::renju(), Side::Second);
    assert!(p.board().level_count[0][kibitz::games::gomoku::patterns::FIVE as usize] > 0);
    assert_eq!(p.five_cells(Side::First, &mut [0; 1]), 0, "{six} makes six");
    assert!(
        !p.must_answer_threat(),
        "white need not block an overline point"
    );
    // Free-style, the same point is a five, and white must block it.
    let q = position_with(&cells, GomokuRules::default(), Side::Second);
    assert!(q.must_answer_threat());
}

#[test]
fn a_depth_one_search_stays_small_beside_an_overline_point() {
    // Read as a five to block, the overline point made every white node of the tree a forced
    // one, never judged at the horizon: the depth-1 iteration, which no clock stops, visited
    // 504,000 nodes and took 420 ms of a 175 ms turn.
    let (cells, _) = board(&OVERLINE_GAME);
    let p = position(&cells);
    let table = TranspositionTable::with_megabytes(8);
    let report = p.think(
        &SearchLimits::with_depth(1),
        SearchOptions::default(),
        &table,
    );
    assert!(report.nodes < 20_000, "{} nodes to depth 1", report.nodes);
    let chosen = report.best_move.expect("a move");
    assert_eq!(p.forbidden(chosen.index()), None);
}

#[test]
fn black_facing_a_five_it_may_not_block_is_lost_on_the_board() {
    let (cells, block) = board(&FORBIDDEN_BLOCK);
    let p = position(&cells);
    assert_eq!(p.forbidden(block), Some(Forbidden::DoubleThree));
    assert_eq!(
        p.static_verdict(),
        Some(kibitz::games::gomoku::wincheck::Verdict::LossIn(2))
    );
    // Where black may block, the board says nothing yet.
    let mut free = cells.clone();
    free[3 * SIZE + 4] = 0;
    assert_eq!(position(&free).forbidden(block), None);
    assert_eq!(position(&free).static_verdict(), None);
}
