//! Limits stop the search, and a legal move comes back whatever stopped it.

use std::time::Instant;

use kibitz::engine::{
    CancelFlag, Deadline, Game, SearchLimits, SearchOptions, StopReason, TranspositionTable, search,
};
use kibitz::games::connect4::Connect4;
use kibitz::games::tictactoe::TicTacToe;

fn is_legal<G: Game>(position: &G, mv: kibitz::engine::Move) -> bool {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    moves.contains(&mv)
}

#[test]
fn a_depth_limit_stops_after_that_iteration() {
    let table = TranspositionTable::with_megabytes(1);
    let report = search(
        &TicTacToe::new(),
        &SearchLimits::with_depth(3),
        SearchOptions::default(),
        &table,
    );
    assert_eq!(report.depth, 3);
    assert_eq!(report.stop_reason, StopReason::Depth);
    assert_eq!(report.proof, None);
    assert_eq!(report.iterations.len(), 3);
}

/// On a position too big to solve at once (the empty Connect-4 board, 42 plies left, through
/// the generic engine); a small one is solved whatever the clock (`tictactoe_perfect`).
#[test]
fn a_passed_deadline_still_gives_a_legal_move_from_depth_one() {
    let table = TranspositionTable::with_megabytes(1);
    let limits = SearchLimits {
        deadline: Some(Deadline(Instant::now())),
        ..Default::default()
    };
    let position = Connect4::new();
    let report = search(&position, &limits, SearchOptions::default(), &table);
    assert!(is_legal(&position, report.best_move.unwrap()));
    assert_eq!(report.stop_reason, StopReason::Time);
    assert_eq!(report.depth, 1);
}

#[test]
fn a_cancelled_search_still_gives_a_legal_move() {
    let table = TranspositionTable::with_megabytes(1);
    let cancel = CancelFlag::new();
    cancel.cancel();
    let limits = SearchLimits {
        cancel: Some(cancel),
        ..Default::default()
    };
    let position = TicTacToe::new();
    let report = search(&position, &limits, SearchOptions::default(), &table);
    assert!(is_legal(&position, report.best_move.unwrap()));
    assert_eq!(report.stop_reason, StopReason::Cancelled);
}

#[test]
fn a_node_limit_stops_minimax_close_to_it() {
    let table = TranspositionTable::with_megabytes(1);
    let limits = SearchLimits {
        max_nodes: Some(5_000),
        ..Default::default()
    };
    let options = SearchOptions {
        algorithm: kibitz::engine::Algorithm::Minimax,
        ..Default::default()
    };
    let report = search(&TicTacToe::new(), &limits, options, &table);
    assert_eq!(report.stop_reason, StopReason::Nodes);
    assert!(
        report.nodes < 5_000 + 2 * kibitz::engine::limits::CHECK_INTERVAL,
        "{} nodes",
        report.nodes
    );
}

#[test]
fn a_finished_game_has_no_move() {
    let table = TranspositionTable::with_megabytes(1);
    let mut position = TicTacToe::new();
    for mv in [0, 3, 1, 4, 2] {
        position.make(kibitz::engine::Move(mv));
    }
    let report = search(
        &position,
        &SearchLimits::default(),
        SearchOptions::default(),
        &table,
    );
    assert_eq!(report.best_move, None);
    assert_eq!(report.proof.unwrap().outcome, kibitz::engine::Outcome::Loss);
}

#[test]
fn depth_limited_searches_are_deterministic_on_a_fresh_table() {
    let run = || {
        let table = TranspositionTable::with_megabytes(1);
        search(
            &TicTacToe::new(),
            &SearchLimits::with_depth(5),
            SearchOptions::default(),
            &table,
        )
    };
    let (a, b) = (run(), run());
    assert_eq!(
        (a.best_move, a.score, a.nodes, a.pv),
        (b.best_move, b.score, b.nodes, b.pv)
    );
}

#[test]
fn a_warm_table_makes_a_repeated_solve_cheaper() {
    let table = TranspositionTable::with_megabytes(1);
    let cold = search(
        &TicTacToe::new(),
        &SearchLimits::default(),
        SearchOptions::default(),
        &table,
    );
    let warm = search(
        &TicTacToe::new(),
        &SearchLimits::default(),
        SearchOptions::default(),
        &table,
    );
    assert_eq!(cold.score, warm.score);
    assert!(
        warm.nodes < cold.nodes,
        "warm {} vs cold {}",
        warm.nodes,
        cold.nodes
    );
    assert!(warm.table.hits > 0);
}

#[test]
fn analysis_reports_a_proven_win_before_every_move_is_proven() {
    let table = TranspositionTable::with_megabytes(1);
    let mut position = TicTacToe::new();
    for mv in [0, 3, 1, 4] {
        position.make(kibitz::engine::Move(mv));
    }
    let options = SearchOptions {
        analysis: true,
        ..Default::default()
    };
    let report = search(&position, &SearchLimits::with_depth(1), options, &table);
    assert_eq!(
        report.stop_reason,
        StopReason::Depth,
        "the other moves are not proven at depth 1"
    );
    let proof = report.proof.expect("a win in one is proven at depth 1");
    assert_eq!(
        (proof.outcome, proof.plies_to_end),
        (kibitz::engine::Outcome::Win, 1)
    );
}
