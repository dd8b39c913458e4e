//! Tic-tac-toe is solved: over every reachable unfinished position, the engine's move keeps the
//! game value, wins as fast as possible, and the proof it reports is the true one.

use std::time::Instant;

use kibitz::engine::{
    Algorithm, Deadline, Outcome, SearchLimits, SearchOptions, StopReason, TranspositionTable, WIN,
    search,
};
use kibitz::games::tictactoe::TicTacToe;

use crate::tictactoe_oracle::{Memo, exact, move_value, unfinished_positions};

#[test]
fn there_are_4520_reachable_unfinished_positions() {
    assert_eq!(unfinished_positions().len(), 4520);
}

#[test]
fn every_move_keeps_the_game_value_and_wins_fastest() {
    assert_perfect(&SearchLimits::default());
}

/// A search that starts after its deadline has passed (a request that waited in a queue, a
/// stalled thread) still solves: the engine runs positions this small to the end whatever the
/// clock. Found by CI, where a 2 ms budget ran out before a search began and a depth-1
/// guess came back.
#[test]
fn a_search_that_starts_after_its_deadline_still_solves_every_position() {
    assert_perfect(&SearchLimits {
        deadline: Some(Deadline(Instant::now())),
        ..SearchLimits::default()
    });
}

/// Over every reachable unfinished position, a search under `limits` plays a move that keeps
/// the game value, and proves the true value at the true distance.
fn assert_perfect(limits: &SearchLimits) {
    let table = TranspositionTable::with_megabytes(4);
    let mut memo = Memo::new();
    for mut position in unfinished_positions() {
        let value = exact(&mut position, &mut memo);
        let report = search(&position, limits, SearchOptions::default(), &table);
        let mv = report.best_move.expect("an unfinished position has a move");
        let after = move_value(&mut position, mv, &mut memo);
        assert_eq!(after, value, "move {mv:?} worsens {position:?}");
        assert_eq!(report.stop_reason, StopReason::Proven);
        let proof = report.proof.expect("tic-tac-toe is always proven");
        let expected = match value {
            v if v > 0 => Outcome::Win,
            v if v < 0 => Outcome::Loss,
            _ => Outcome::Draw,
        };
        assert_eq!(proof.outcome, expected, "{position:?}");
        if value != 0 {
            assert_eq!(proof.plies_to_end as i32, WIN - value.abs(), "{position:?}");
            assert_eq!(report.score, value);
        }
    }
}

#[test]
fn the_empty_board_is_a_draw_in_nine_plies() {
    let table = TranspositionTable::with_megabytes(1);
    let report = search(
        &TicTacToe::new(),
        &SearchLimits::default(),
        SearchOptions::default(),
        &table,
    );
    let proof = report.proof.unwrap();
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Draw, 9));
}

#[test]
fn full_minimax_from_the_empty_board_visits_549946_nodes() {
    let table = TranspositionTable::with_megabytes(1);
    let options = SearchOptions {
        algorithm: Algorithm::Minimax,
        ..Default::default()
    };
    let report = search(
        &TicTacToe::new(),
        &SearchLimits::with_depth(9),
        options,
        &table,
    );
    let last = report.iterations.last().unwrap();
    assert_eq!((last.depth, last.nodes), (9, 549_946));
    assert_eq!(report.proof.unwrap().outcome, Outcome::Draw);
}

#[test]
fn alpha_beta_solves_the_empty_board_in_a_tiny_fraction_of_minimax_nodes() {
    let table = TranspositionTable::with_megabytes(1);
    let report = search(
        &TicTacToe::new(),
        &SearchLimits::default(),
        SearchOptions::default(),
        &table,
    );
    assert!(
        report.nodes * 50 < 549_946,
        "alpha-beta used {} nodes",
        report.nodes
    );
}
