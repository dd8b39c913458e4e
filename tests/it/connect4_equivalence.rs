//! Search equivalences on Connect-4: on random positions of small boards and near-end standard
//! boards, the generic alpha-beta at exact depth finds plain minimax's value, the exact solver
//! finds the same value, and turning the transposition table off changes no result.

use proptest::prelude::*;

use kibitz::engine::{
    Algorithm, Game, Move, Score, SearchLimits, SearchOptions, Status, StopReason,
    TranspositionTable, search,
};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;

/// Plays `choices` (each picks among the legal columns) on an empty board, stopping before the
/// game would end or once `empty_left` cells remain. `None` if the game ended first.
fn random_position(
    width: u32,
    height: u32,
    choices: &[usize],
    empty_left: u32,
) -> Option<Connect4> {
    let mut game = Connect4::with_size(width, height).expect("a supported size");
    let mut legal = Vec::new();
    for &choice in choices {
        if game.max_remaining_plies() <= empty_left {
            break;
        }
        legal.clear();
        game.legal_moves(&mut legal);
        let mv: Move = legal[choice % legal.len()];
        game.make(mv);
        if game.status() != Status::Ongoing {
            return None;
        }
    }
    Some(game)
}

fn exact_search(game: &Connect4, algorithm: Algorithm, without_table: bool) -> Score {
    let table = TranspositionTable::with_megabytes(1);
    let options = SearchOptions {
        algorithm,
        without_table,
        ..Default::default()
    };
    let report = search(
        game,
        &SearchLimits::with_depth(game.max_remaining_plies()),
        options,
        &table,
    );
    assert!(
        report.proof.is_some(),
        "an exact-depth search is a proof: {game:?}"
    );
    report.score
}

fn solved(game: &Connect4, table: &TranspositionTable) -> Score {
    let report = game.think(&SearchLimits::default(), SearchOptions::default(), table);
    assert_eq!(report.stop_reason, StopReason::Proven);
    report.score
}

/// Minimax, alpha-beta with and without the table, and the solver all agree.
fn all_agree(game: &Connect4) {
    let minimax = exact_search(game, Algorithm::Minimax, true);
    let alpha_beta = exact_search(game, Algorithm::AlphaBeta, false);
    let without_table = exact_search(game, Algorithm::AlphaBeta, true);
    let table = TranspositionTable::with_megabytes(1);
    let solver = solved(game, &table);
    assert_eq!(alpha_beta, minimax, "alpha-beta vs minimax on {game:?}");
    assert_eq!(without_table, alpha_beta, "table off vs on on {game:?}");
    assert_eq!(solver, alpha_beta, "solver vs alpha-beta on {game:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn four_by_four_values_agree(choices in prop::collection::vec(0usize..4, 16)) {
        if let Some(game) = random_position(4, 4, &choices, 9) {
            all_agree(&game);
        }
    }

    #[test]
    fn five_by_four_values_agree(choices in prop::collection::vec(0usize..5, 20)) {
        if let Some(game) = random_position(5, 4, &choices, 8) {
            all_agree(&game);
        }
    }

    #[test]
    fn near_end_standard_values_agree(choices in prop::collection::vec(0usize..7, 42)) {
        if let Some(game) = random_position(7, 6, &choices, 7) {
            all_agree(&game);
        }
    }

    /// Deeper positions than minimax can afford: the solver against alpha-beta, table on and off.
    #[test]
    fn solver_matches_alpha_beta_on_whole_small_boards(choices in prop::collection::vec(0usize..5, 20), plies in 0usize..8) {
        if let Some(game) = random_position(5, 4, &choices[..plies], 0) {
            let alpha_beta = exact_search(&game, Algorithm::AlphaBeta, false);
            let table = TranspositionTable::with_megabytes(1);
            prop_assert_eq!(solved(&game, &table), alpha_beta);
            prop_assert_eq!(exact_search(&game, Algorithm::AlphaBeta, true), alpha_beta);
        }
    }
}

#[test]
fn the_empty_four_by_four_board_is_a_draw_for_every_searcher() {
    let game = Connect4::with_size(4, 4).unwrap();
    let table = TranspositionTable::with_megabytes(1);
    assert_eq!(solved(&game, &table), 0);
    assert_eq!(exact_search(&game, Algorithm::AlphaBeta, false), 0);
}

#[test]
fn analysis_scores_match_a_solve_of_each_child() {
    let table = TranspositionTable::with_megabytes(1);
    let game = random_position(5, 4, &[2, 2, 1, 3, 0, 4], 0).expect("an ongoing game");
    let options = SearchOptions {
        analysis: true,
        ..Default::default()
    };
    let report = game.think(&SearchLimits::default(), options, &table);
    for root_move in &report.root_moves {
        let mut child = game.clone();
        child.make(root_move.mv);
        let through_child = match child.status() {
            Status::Ongoing => {
                let child_score = solved(&child, &table);
                // One ply further from the end, seen from the other side.
                -child_score + child_score.signum()
            }
            Status::Lost => kibitz::engine::WIN - 1,
            Status::Draw => 0,
        };
        assert_eq!(root_move.score, through_child, "{:?}", root_move.mv);
    }
}
