//! Unit tests of the Connect-4 rules, board reading and `think`.

use std::time::Duration;

use super::*;
use crate::engine::CancelFlag;

fn board(rows: &[&str]) -> Result<Connect4, PositionError> {
    Connect4::from_grid(&Grid::parse(rows, Connect4::MAX_SIDE)?, None, &())
}

const EMPTY_ROW: &str = ".......";

fn standard(rows_from_top: &[&str]) -> Result<Connect4, PositionError> {
    let mut rows = vec![EMPTY_ROW; 6 - rows_from_top.len()];
    rows.extend_from_slice(rows_from_top);
    board(&rows)
}

#[test]
fn a_floating_disc_is_refused_with_its_cell() {
    let err = standard(&["...X...", ".......", "...O..."]).unwrap_err();
    assert_eq!(err, PositionError::Floating { row: 3, col: 3 });
}

#[test]
fn impossible_stone_counts_are_refused() {
    assert!(matches!(
        standard(&["XX....."]),
        Err(PositionError::Counts(_))
    ));
    assert!(matches!(
        standard(&["O......"]),
        Err(PositionError::Counts(_))
    ));
}

#[test]
fn the_requested_side_is_honoured_only_when_the_counts_agree() {
    let grid = Grid::parse(
        &[
            EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, EMPTY_ROW, "X......",
        ],
        15,
    )
    .unwrap();
    let game = Connect4::from_grid(&grid, Some(Side::Second), &()).unwrap();
    assert_eq!(game.side_to_move(), Side::Second);
    assert!(Connect4::from_grid(&grid, Some(Side::First), &()).is_err());
}

#[test]
fn boards_of_the_wrong_shape_are_refused() {
    assert!(matches!(
        board(&["...", "...", "..."]),
        Err(PositionError::Shape(_))
    ));
    let nine_by_seven = vec!["........."; 7];
    assert!(matches!(
        board(&nine_by_seven),
        Err(PositionError::Shape(_))
    ));
    let eight_by_seven = vec!["........"; 7];
    assert!(board(&eight_by_seven).is_ok());
}

fn game_over_message(rows: &[&str]) -> String {
    match standard(rows) {
        Err(PositionError::GameOver(message)) => message,
        other => panic!("expected a finished game, got {other:?}"),
    }
}

#[test]
fn a_horizontal_four_ends_the_game() {
    assert_eq!(
        game_over_message(&["OOO....", "XXXX..."]),
        "X has four in a row"
    );
}

#[test]
fn a_vertical_four_ends_the_game() {
    assert_eq!(
        game_over_message(&["O......", "OX.....", "OX.....", "OX....X"]),
        "O has four in a row"
    );
}

#[test]
fn a_rising_diagonal_four_ends_the_game() {
    assert_eq!(
        game_over_message(&["...X...", "..XO...", ".XOO...", "XOOX..X"]),
        "X has four in a row"
    );
}

#[test]
fn a_falling_diagonal_four_ends_the_game() {
    assert_eq!(
        game_over_message(&["X......", "OX.....", "OOX....", "XOOX.X."]),
        "X has four in a row"
    );
}

#[test]
fn a_full_board_without_four_is_a_draw() {
    // Columns alternate in pairs so no four forms anywhere.
    let rows = [
        "XXOOXXO", "OOXXOOX", "XXOOXXO", "OOXXOOX", "XXOOXXO", "OOXXOOX",
    ];
    assert_eq!(game_over_message(&rows), "the board is full: a draw");
}

#[test]
fn no_four_is_seen_across_a_column_edge() {
    // Column 0's top and column 1's bottom are neighbours in the bitboard but for the spare bit
    // between them, which is never a stone, so no line wraps from one column to the next.
    let game = standard(&[
        "XO.....", "OX.....", "XO.....", "OX.....", "XO.....", "OX.....",
    ])
    .unwrap();
    assert_eq!(game.status(), Status::Ongoing);
}

#[test]
fn make_then_unmake_restores_the_position() {
    let mut game = Connect4::from_moves("4453").unwrap();
    let before = game.clone();
    for col in [0u16, 3, 6] {
        game.make(Move(col));
        assert_ne!(game.hash(), before.hash());
        game.unmake(Move(col));
        assert_eq!(game, before);
    }
}

#[test]
fn an_immediate_win_is_found() {
    // X has three on the bottom row, columns 0..=2; X to move (O has three in column 6 too).
    let game = Connect4::from_moves("172737").unwrap();
    assert_eq!(game.immediate_win(), Some(Move(3)));
    let mut moves = Vec::new();
    game.search_moves(&mut moves);
    assert_eq!(moves, vec![Move(3)]);
}

#[test]
fn a_single_threat_forces_the_block() {
    // X threatens column 3 on the bottom row; O to move must block there.
    let game = Connect4::from_moves("17273").unwrap();
    assert_eq!(game.immediate_win(), None);
    let mut moves = Vec::new();
    game.search_moves(&mut moves);
    assert_eq!(moves, vec![Move(3)]);
}

#[test]
fn a_move_under_an_opponent_threat_is_not_searched() {
    // O has three on the third row from the bottom, columns 1..=3; columns 0 and 4 hold one
    // disc each, so X playing either would give O the cell above it and the row.
    let game = standard(&[".OOO...", ".XOX...", "XOXXO.X"]).unwrap();
    assert_eq!(game.side_to_move(), Side::First);
    let mut moves = Vec::new();
    game.search_moves(&mut moves);
    assert_eq!(moves, vec![Move(1), Move(2), Move(3), Move(5), Move(6)]);
}

#[test]
fn cell_of_names_the_landing_cell_counted_from_the_top() {
    let game = Connect4::from_moves("44").unwrap();
    assert_eq!(game.cell_of(Move(3)), Cell { row: 3, col: 3 });
    assert_eq!(game.cell_of(Move(0)), Cell { row: 5, col: 0 });
}

#[test]
fn from_moves_refuses_full_columns_and_moves_after_the_end() {
    assert!(Connect4::from_moves("4444444").is_err());
    assert!(Connect4::from_moves("1212121").is_ok());
    assert!(Connect4::from_moves("12121213").is_err());
    assert!(Connect4::from_moves("8").is_err());
}

#[test]
fn grid_and_move_list_build_the_same_position() {
    let from_moves = Connect4::from_moves("4453").unwrap();
    let from_grid = standard(&["...O...", "..OXX.."]).unwrap();
    assert_eq!(from_moves, from_grid);
}

#[test]
fn think_solves_a_win_in_one() {
    let table = TranspositionTable::with_megabytes(1);
    let game = Connect4::from_moves("172737").unwrap();
    let report = game.think(&SearchLimits::default(), SearchOptions::default(), &table);
    assert_eq!(report.best_move, Some(Move(3)));
    assert_eq!(report.score, WIN - 1);
    assert_eq!(report.stop_reason, StopReason::Proven);
    assert_eq!(
        report.proof,
        Some(Proof {
            outcome: Outcome::Win,
            plies_to_end: 1
        })
    );
}

#[test]
fn think_with_a_one_millisecond_budget_returns_a_legal_move_in_time() {
    let table = TranspositionTable::with_megabytes(4);
    let game = Connect4::new();
    let limits = SearchLimits::with_budget(Duration::from_millis(1));
    let started = Instant::now();
    let report = game.think(&limits, SearchOptions::default(), &table);
    // The solver polls every 1024 nodes (well under a millisecond) and the fallback's first
    // iteration is a handful of nodes; the slack only covers a busy machine's scheduling.
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "{:?}",
        started.elapsed()
    );
    let mv = report.best_move.expect("a move");
    assert!(mv.0 < 7);
    assert_ne!(report.stop_reason, StopReason::Proven);
}

#[test]
fn think_honours_a_cancel_flag() {
    let table = TranspositionTable::with_megabytes(4);
    let cancel = CancelFlag::new();
    cancel.cancel();
    let limits = SearchLimits {
        cancel: Some(cancel),
        ..Default::default()
    };
    // Past the opening book (which answers the empty board before the first poll): a line of
    // Pons' Test_L1_R2, 14 discs.
    let game = Connect4::from_moves("32751571231557").unwrap();
    let report = game.think(&limits, SearchOptions::default(), &table);
    assert!(report.best_move.is_some());
    assert_eq!(report.stop_reason, StopReason::Cancelled);
}

#[test]
fn think_with_a_node_limit_stays_near_it() {
    let table = TranspositionTable::with_megabytes(4);
    let limits = SearchLimits {
        max_nodes: Some(20_000),
        ..Default::default()
    };
    let report = Connect4::new().think(&limits, SearchOptions::default(), &table);
    assert!(report.best_move.is_some());
    assert!(report.nodes < 40_000, "{} nodes", report.nodes);
}

#[test]
fn think_with_a_shallow_depth_uses_the_generic_engine_at_that_depth() {
    let table = TranspositionTable::with_megabytes(4);
    let report = Connect4::new().think(
        &SearchLimits::with_depth(4),
        SearchOptions::default(),
        &table,
    );
    assert_eq!(report.depth, 4);
    assert_eq!(report.stop_reason, StopReason::Depth);
    assert!(report.proof.is_none());
}

#[test]
fn analysis_scores_every_legal_column_best_first() {
    let table = TranspositionTable::with_megabytes(16);
    // A late middle-game position from Pons' Test_L2_R1 (score 4 for the side to move).
    let game = Connect4::from_moves("5554224333234511764415115").unwrap();
    let options = SearchOptions {
        analysis: true,
        ..Default::default()
    };
    let report = game.think(&SearchLimits::default(), options, &table);
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    assert_eq!(report.root_moves.len(), legal.len());
    assert!(
        report
            .root_moves
            .windows(2)
            .all(|w| w[0].score >= w[1].score)
    );
    assert!(report.root_moves.iter().all(|m| m.proof.is_some()));
    assert_eq!(report.root_moves[0].mv, report.best_move.unwrap());
    assert_eq!(report.root_moves[0].score, report.score);
    // Pons' score 4 with 25 stones on the board: the win comes (44 - 25 - 2 * 4) = 11 plies on.
    assert_eq!(report.proof.unwrap().plies_to_end, 11);
}

#[test]
fn minimax_goes_to_the_generic_engine() {
    let table = TranspositionTable::with_megabytes(1);
    let options = SearchOptions {
        algorithm: Algorithm::Minimax,
        ..Default::default()
    };
    let report = Connect4::new().think(&SearchLimits::with_depth(2), options, &table);
    assert_eq!(report.iterations.last().map(|i| i.nodes), Some(1 + 7 + 49));
}
