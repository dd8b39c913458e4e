//! `Gomoku::think` honours every limit and always answers with a legal move: a 1 ms budget, a
//! cancelled search, a node cap, a depth cap, plain minimax and analysis.

use std::time::Duration;

use kibitz::engine::{
    Algorithm, CancelFlag, Game, SearchLimits, SearchOptions, SearchReport, TranspositionTable,
};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::{Gomoku, GomokuRules};

/// A quiet 15x15 middle game (opening 3 of the shared set plus six moves).
fn middle_game() -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    for token in "7,7 8,8 10,5 6,8 10,8 7,8 5,8 10,7 5,7 8,7 8,5".split_whitespace() {
        let (x, y) = token.split_once(',').expect("x,y");
        p.make(p.move_at(y.parse().expect("y"), x.parse().expect("x")));
    }
    p
}

fn think(p: &Gomoku, limits: SearchLimits, options: SearchOptions) -> SearchReport {
    let table = TranspositionTable::with_megabytes(4);
    p.think(&limits, options, &table)
}

fn assert_legal(p: &Gomoku, report: &SearchReport) {
    let mv = report.best_move.expect("a move");
    assert!(p.is_legal(mv), "{mv:?} is not legal");
}

#[test]
fn a_one_millisecond_budget_still_returns_a_legal_move() {
    let p = middle_game();
    let report = think(
        &p,
        SearchLimits::with_budget(Duration::from_millis(1)),
        SearchOptions::default(),
    );
    assert_legal(&p, &report);
    assert!(
        report.elapsed < Duration::from_millis(100),
        "{:?}",
        report.elapsed
    );
}

#[test]
fn a_cancelled_search_still_returns_a_legal_move() {
    let p = middle_game();
    let cancel = CancelFlag::new();
    cancel.cancel();
    let limits = SearchLimits {
        cancel: Some(cancel),
        ..Default::default()
    };
    let report = think(&p, limits, SearchOptions::default());
    assert_legal(&p, &report);
}

#[test]
fn the_depth_cap_is_honoured() {
    let p = middle_game();
    let report = think(&p, SearchLimits::with_depth(3), SearchOptions::default());
    assert_legal(&p, &report);
    assert!(report.depth <= 3);
}

#[test]
fn the_node_cap_is_honoured() {
    let p = middle_game();
    let limits = SearchLimits {
        max_nodes: Some(5_000),
        ..Default::default()
    };
    let report = think(&p, limits, SearchOptions::default());
    assert_legal(&p, &report);
    // Each search stops within one clock-check interval of its share of the cap.
    assert!(report.nodes < 5_000 + 4 * 1_024, "{}", report.nodes);
}

#[test]
fn plain_minimax_plays_a_shallow_search() {
    let p = middle_game();
    let options = SearchOptions {
        algorithm: Algorithm::Minimax,
        ..Default::default()
    };
    let report = think(&p, SearchLimits::with_depth(1), options);
    assert_legal(&p, &report);
    assert_eq!(report.depth, 1);
}

#[test]
fn analysis_scores_every_legal_move() {
    let p = middle_game();
    let options = SearchOptions {
        analysis: true,
        ..Default::default()
    };
    let report = think(&p, SearchLimits::with_depth(1), options);
    assert_legal(&p, &report);
    let mut legal = Vec::new();
    p.legal_moves(&mut legal);
    assert_eq!(report.root_moves.len(), legal.len());
}

#[test]
fn long_lines_on_the_largest_board_answer_a_small_budget() {
    use kibitz::games::gomoku::Overline;
    let rules = GomokuRules::new(25, Overline::Win).expect("rules");
    let mut p = Gomoku::new(25, 25, rules).expect("board");
    for (r, c) in [(12, 12), (12, 13), (13, 12), (11, 11)] {
        p.make(p.move_at(r, c));
    }
    let report = think(
        &p,
        SearchLimits::with_budget(Duration::from_millis(5)),
        SearchOptions::default(),
    );
    assert_legal(&p, &report);
    assert!(
        report.elapsed < Duration::from_millis(200),
        "{:?}",
        report.elapsed
    );
}

#[test]
fn seven_in_a_row_is_seen_as_a_win_in_one() {
    use kibitz::games::gomoku::Overline;
    let rules = GomokuRules::new(7, Overline::Win).expect("rules");
    let mut p = Gomoku::new(9, 9, rules).expect("board");
    for c in 0..6 {
        p.make(p.move_at(0, c));
        p.make(p.move_at(2, c));
    }
    assert_eq!(p.immediate_win(), Some(p.move_at(0, 6)));
}
