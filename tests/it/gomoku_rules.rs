//! Gomoku rules: overlines, other win lengths (m,n,k-games), validation of rules and boards, and
//! the incremental evaluation against a from-scratch one.

use kibitz::engine::{Game, Move, Side, Status};
use kibitz::games::gomoku::patterns::OPEN_FOUR;
use kibitz::games::gomoku::{Gomoku, GomokuRules, Overline};
use kibitz::games::{BoardGame, Grid, PositionError};
use proptest::prelude::*;

fn rules(win_length: u32, overline: Overline) -> GomokuRules {
    GomokuRules::new(win_length, overline).expect("valid rules")
}

fn position(rows: &[&str], rules: GomokuRules) -> Result<Gomoku, PositionError> {
    Gomoku::from_grid(&Grid::parse(rows, 25)?, None, &rules)
}

const OVERLINE_BOARD: [&str; 7] = [
    ".......", "XXX.XX.", ".......", "OO.....", "O......", "..O....", "...O...",
];

#[test]
fn a_six_wins_in_free_style() {
    let mut p = position(&OVERLINE_BOARD, rules(5, Overline::Win)).unwrap();
    let gap = p.move_at(1, 3);
    assert_eq!(p.immediate_win(), Some(gap));
    p.make(gap);
    assert_eq!(p.status(), Status::Lost);
}

#[test]
fn a_six_does_not_win_under_exactly_five() {
    let mut p = position(&OVERLINE_BOARD, rules(5, Overline::NoWin)).unwrap();
    assert_eq!(p.immediate_win(), None);
    p.make(p.move_at(1, 3));
    assert_eq!(p.status(), Status::Ongoing);
}

#[test]
fn a_finished_six_is_refused_only_in_free_style() {
    let six = [
        ".......", "XXXXXX.", "OOOO...", "O......", "...O...", ".......", ".......",
    ];
    assert!(matches!(
        position(&six, rules(5, Overline::Win)),
        Err(PositionError::GameOver(_))
    ));
    assert!(position(&six, rules(5, Overline::NoWin)).is_ok());
}

#[test]
fn three_in_a_row_wins_when_k_is_3() {
    let p = position(
        &[".....", ".XX..", "..O..", "...O.", "....."],
        rules(3, Overline::Win),
    )
    .unwrap();
    let win = p.immediate_win().expect("a win in one");
    assert!([p.move_at(1, 0), p.move_at(1, 3)].contains(&win));
}

#[test]
fn four_in_a_row_wins_when_k_is_4_and_three_does_not() {
    let mut p = position(
        &["......", ".XXX..", "......", "..OO..", "....O.", "......"],
        rules(4, Overline::Win),
    )
    .unwrap();
    let win = p.immediate_win().expect("a win in one");
    p.make(win);
    assert_eq!(p.status(), Status::Lost);
    let q = position(
        &["......", ".XX...", "......", "..OO..", "......", "......"],
        rules(4, Overline::Win),
    )
    .unwrap();
    assert_eq!(q.immediate_win(), None);
}

#[test]
fn six_in_a_row_is_needed_when_k_is_6() {
    let mut p = position(
        &[
            "........", ".XXXXX..", "........", "OOOO....", "........", "......O.", "........",
            "........",
        ],
        rules(6, Overline::NoWin),
    )
    .unwrap();
    let win = p.immediate_win().expect("a win in one");
    p.make(win);
    assert_eq!(p.status(), Status::Lost);
}

#[test]
fn rules_out_of_range_are_refused() {
    assert!(matches!(
        GomokuRules::new(2, Overline::Win),
        Err(PositionError::Rules(_))
    ));
    assert!(matches!(
        GomokuRules::new(26, Overline::Win),
        Err(PositionError::Rules(_))
    ));
    assert!(matches!(
        Gomoku::new(5, 6, rules(7, Overline::Win)),
        Err(PositionError::Rules(_))
    ));
    assert!(Gomoku::new(5, 7, rules(7, Overline::Win)).is_ok());
}

#[test]
fn boards_out_of_range_are_refused() {
    assert!(matches!(
        Gomoku::new(4, 15, GomokuRules::default()),
        Err(PositionError::Shape(_))
    ));
    assert!(matches!(
        Gomoku::new(15, 26, GomokuRules::default()),
        Err(PositionError::Shape(_))
    ));
    let wide = vec![".".repeat(26); 5];
    assert!(matches!(
        Grid::parse(&wide, 25),
        Err(PositionError::Shape(_))
    ));
    assert!(Gomoku::new(5, 25, GomokuRules::default()).is_ok());
}

#[test]
fn finished_games_and_impossible_counts_are_refused() {
    let five = [
        ".......", "XXXXX..", "OOOO...", ".......", ".......", ".......", ".......",
    ];
    match position(&five, GomokuRules::default()) {
        Err(PositionError::GameOver(why)) => assert!(why.contains('X')),
        other => panic!("expected a finished game, got {other:?}"),
    }
    let counts = [
        ".......", "XXX....", ".......", ".......", ".......", ".......", ".......",
    ];
    assert!(matches!(
        position(&counts, GomokuRules::default()),
        Err(PositionError::Counts(_))
    ));
}

#[test]
fn a_setup_position_honours_the_requested_side() {
    let grid = Grid::parse(&[".....", ".X...", "..O..", ".....", "....."], 25).unwrap();
    let p = Gomoku::from_grid(&grid, Some(Side::Second), &GomokuRules::default()).unwrap();
    assert_eq!(p.side_to_move(), Side::Second);
    let q = Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap();
    assert_eq!(q.side_to_move(), Side::First);
}

#[test]
fn moves_are_cell_indices() {
    let p = Gomoku::new(7, 9, GomokuRules::default()).unwrap();
    let mv = p.move_at(3, 5);
    assert_eq!(mv, Move(3 * 9 + 5));
    let cell = p.cell_of(mv);
    assert_eq!((cell.row, cell.col), (3, 5));
}

#[test]
fn the_empty_board_is_answered_in_the_centre() {
    let p = Gomoku::new(15, 15, GomokuRules::default()).unwrap();
    let mut moves = Vec::new();
    p.search_moves(&mut moves);
    assert_eq!(moves, vec![p.move_at(7, 7)]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After any sequence of makes and unmakes, the incremental patterns and evaluation equal
    /// those recomputed from the stones, and unmaking everything restores the start.
    #[test]
    fn incremental_evaluation_equals_a_scratch_one(
        rows in 5usize..=15,
        cols in 5usize..=15,
        k in 3u32..=6,
        exact in any::<bool>(),
        picks in prop::collection::vec(0usize..10_000, 1..60),
    ) {
        let overline = if exact { Overline::NoWin } else { Overline::Win };
        let k = k.min(rows.max(cols) as u32);
        let mut p = Gomoku::new(rows, cols, rules(k, overline)).unwrap();
        let (hash, eval) = (p.hash(), p.evaluate());
        let mut played = Vec::new();
        for pick in picks {
            if p.status() != Status::Ongoing {
                break;
            }
            let mut moves = Vec::new();
            p.legal_moves(&mut moves);
            let mv = moves[pick % moves.len()];
            p.make(mv);
            played.push(mv);
            prop_assert!(p.patterns_consistent());
            prop_assert_eq!(p.evaluate(), p.evaluate_from_scratch());
            if pick % 3 == 0 {
                let last = played.pop().unwrap();
                p.unmake(last);
                prop_assert!(p.patterns_consistent());
            }
        }
        while let Some(mv) = played.pop() {
            p.unmake(mv);
        }
        prop_assert_eq!((p.hash(), p.evaluate()), (hash, eval));
        prop_assert!(p.patterns_consistent());
    }

    /// The defence test that reads patterns with a hypothetical stone agrees with placing the
    /// stone and counting the attacker's open-four chances, on every empty cell.
    #[test]
    fn a_defence_against_open_threes_is_exactly_a_cell_that_leaves_no_open_four(
        size in 7usize..=15,
        k in 4u32..=6,
        exact in any::<bool>(),
        picks in prop::collection::vec(0usize..10_000, 4..40),
    ) {
        let overline = if exact { Overline::NoWin } else { Overline::Win };
        let mut p = Gomoku::new(size, size, rules(k, overline)).unwrap();
        // Stones placed near the centre make threes often.
        for pick in picks {
            let (r, c) = (size / 2 - 3 + pick % 7, size / 2 - 3 + (pick / 7) % 7);
            let mv = p.move_at(r, c);
            if p.is_legal(mv) && p.status() == Status::Ongoing {
                p.make(mv);
            }
        }
        if p.status() == Status::Ongoing {
            // The attacker is the side that just moved; the defender, to move, tries each cell.
            let attacker = p.side_to_move().other().index();
            for cell in 0..size * size {
                let mv = Move(cell as u16);
                if !p.is_legal(mv) {
                    continue;
                }
                let predicted = p.board().stops_open_fours(cell, attacker);
                let mut after = p.clone();
                after.make(mv);
                let actual = after.board().level_count[attacker][OPEN_FOUR as usize] == 0;
                prop_assert_eq!(predicted, actual, "cell {}", cell);
            }
        }
    }
}
