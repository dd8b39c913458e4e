//! The search's shortcuts never change a result: alpha-beta with its table, ordering and game
//! hooks returns the plain minimax value, with the table on or off, on many random positions.

use kibitz::engine::{
    Algorithm, Game, SearchLimits, SearchOptions, SearchReport, Status, TranspositionTable, search,
};
use kibitz::games::tictactoe::TicTacToe;
use proptest::prelude::*;

/// Plays the `choices` (each taken modulo the number of legal moves) while the game goes on.
fn random_position(choices: &[usize]) -> TicTacToe {
    let mut position = TicTacToe::new();
    let mut moves = Vec::new();
    for &choice in choices {
        moves.clear();
        position.legal_moves(&mut moves);
        if moves.len() <= 1 {
            break;
        }
        let mv = moves[choice % moves.len()];
        position.make(mv);
        if position.status() != Status::Ongoing {
            position.unmake(mv);
            break;
        }
    }
    position
}

fn solve(
    position: &TicTacToe,
    algorithm: Algorithm,
    without_table: bool,
    analysis: bool,
) -> SearchReport {
    let table = TranspositionTable::with_megabytes(1);
    let options = SearchOptions {
        algorithm,
        analysis,
        without_table,
        ..Default::default()
    };
    search(position, &SearchLimits::default(), options, &table)
}

proptest! {
    #[test]
    fn alpha_beta_value_equals_minimax_value(choices in proptest::collection::vec(0usize..9, 0..8)) {
        let position = random_position(&choices);
        let minimax = solve(&position, Algorithm::Minimax, false, false);
        let alpha_beta = solve(&position, Algorithm::AlphaBeta, false, false);
        prop_assert_eq!(alpha_beta.score, minimax.score);
        prop_assert_eq!(alpha_beta.proof, minimax.proof);
    }

    #[test]
    fn the_table_changes_no_result(choices in proptest::collection::vec(0usize..9, 0..8)) {
        let position = random_position(&choices);
        let with = solve(&position, Algorithm::AlphaBeta, false, false);
        let without = solve(&position, Algorithm::AlphaBeta, true, false);
        prop_assert_eq!(with.score, without.score);
        prop_assert_eq!(with.proof, without.proof);
    }

    #[test]
    fn helper_threads_prove_the_same_value(choices in proptest::collection::vec(0usize..9, 0..8)) {
        let position = random_position(&choices);
        let table = TranspositionTable::with_megabytes(1);
        let options = SearchOptions { helper_threads: 1, ..Default::default() };
        let parallel = search(&position, &SearchLimits::default(), options, &table);
        let single = solve(&position, Algorithm::AlphaBeta, false, false);
        prop_assert_eq!(parallel.score, single.score);
        prop_assert_eq!(parallel.proof, single.proof);
    }

    #[test]
    fn analysis_scores_every_legal_move_like_minimax(choices in proptest::collection::vec(0usize..9, 0..8)) {
        let position = random_position(&choices);
        let analysed = solve(&position, Algorithm::AlphaBeta, false, true);
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        prop_assert_eq!(analysed.root_moves.len(), legal.len());
        for scored in &analysed.root_moves {
            let mut child = position.clone();
            child.make(scored.mv);
            let reply = solve(&child, Algorithm::Minimax, true, false);
            // The child's value, one ply further from the end, seen from the parent.
            let expected = if reply.best_move.is_none() {
                kibitz::engine::WIN - 1
            } else {
                let v = -reply.score;
                if v > 0 { v - 1 } else if v < 0 { v + 1 } else { 0 }
            };
            prop_assert_eq!(scored.score, expected, "move {:?}", scored.mv);
        }
        prop_assert_eq!(analysed.root_moves[0].score, analysed.score);
    }
}
