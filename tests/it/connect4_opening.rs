//! The empty standard board, where column 3 (0-based, the centre) is the only winning move:
//! whatever the budget, kibitz must play it. With `budget_ms` 10000 it used to play column 2
//! (a draw), because the heuristic search's depth-16 and deeper iterations switched to it; the
//! depth-limited test below stands in for that long budget.

use std::time::Duration;

use kibitz::engine::{Deadline, Move, SearchLimits, SearchOptions, TranspositionTable, search};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;

const CENTRE: Move = Move(3);

fn think_for(budget: Duration) -> Option<Move> {
    let table = TranspositionTable::with_megabytes(16);
    let limits = SearchLimits {
        deadline: Some(Deadline::after(budget)),
        ..SearchLimits::default()
    };
    Connect4::new()
        .think(&limits, SearchOptions::default(), &table)
        .best_move
}

#[test]
fn the_empty_board_is_answered_with_the_centre_at_100_ms() {
    assert_eq!(think_for(Duration::from_millis(100)), Some(CENTRE));
}

#[test]
fn the_empty_board_is_answered_with_the_centre_at_1000_ms() {
    assert_eq!(think_for(Duration::from_millis(1000)), Some(CENTRE));
}

/// The heuristic search alone, as deep as a 10 s budget took it (depth 16 switched before).
#[test]
fn the_heuristic_search_keeps_the_centre_at_depth_16() {
    let table = TranspositionTable::with_megabytes(16);
    let limits = SearchLimits {
        max_depth: Some(16),
        ..SearchLimits::default()
    };
    let report = search(&Connect4::new(), &limits, SearchOptions::default(), &table);
    assert_eq!(report.depth, 16);
    assert_eq!(report.best_move, Some(CENTRE));
}
