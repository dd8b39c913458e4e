//! On tiny m,n,k boards (5x5, k = 3 and 4, 8 or 9 empty cells) solved to the end, kibitz's alpha-beta (with its threat-pruned moves,
//! table, killers and hints) gives exactly the plain minimax value, and the table changes
//! nothing.

use kibitz::engine::Status;
use kibitz::engine::{
    Algorithm, Game, SearchLimits, SearchOptions, SearchReport, TranspositionTable, search,
};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::{Gomoku, GomokuRules, Overline};

/// Unfinished 5x5 positions with `empty` empty cells, reached by seeded random play, k = 3 or
/// 4 alternately.
fn positions() -> Vec<Gomoku> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut found = Vec::new();
    while found.len() < 6 {
        let k = if found.len() % 2 == 0 { 4 } else { 3 };
        let empty = if k == 4 { 9 } else { 8 };
        let rules = GomokuRules::new(k, Overline::Win).unwrap();
        let mut p = Gomoku::new(5, 5, rules).unwrap();
        while p.status() == Status::Ongoing && p.max_remaining_plies() > empty {
            let mut moves = Vec::new();
            p.legal_moves(&mut moves);
            p.make(moves[(next() % moves.len() as u64) as usize]);
        }
        if p.status() == Status::Ongoing && p.immediate_win().is_none() {
            found.push(p);
        }
    }
    found
}

fn solve(p: &Gomoku, algorithm: Algorithm, without_table: bool) -> SearchReport {
    let table = TranspositionTable::with_megabytes(4);
    let depth = p.max_remaining_plies();
    let options = SearchOptions {
        algorithm,
        without_table,
        ..Default::default()
    };
    search(p, &SearchLimits::with_depth(depth), options, &table)
}

#[test]
fn alpha_beta_equals_minimax_when_solved_to_the_end() {
    for p in positions() {
        let minimax = solve(&p, Algorithm::Minimax, false);
        let alpha_beta = solve(&p, Algorithm::AlphaBeta, false);
        assert_eq!(alpha_beta.score, minimax.score, "{p:?}");
        assert_eq!(alpha_beta.proof, minimax.proof, "{p:?}");
        assert!(alpha_beta.nodes < minimax.nodes);
    }
}

#[test]
fn the_table_changes_no_result() {
    for p in positions() {
        let with = solve(&p, Algorithm::AlphaBeta, false);
        let without = solve(&p, Algorithm::AlphaBeta, true);
        assert_eq!(
            (with.score, with.proof),
            (without.score, without.proof),
            "{p:?}"
        );
    }
}

#[test]
fn think_agrees_with_the_solved_value() {
    for p in positions() {
        let minimax = solve(&p, Algorithm::Minimax, false);
        let table = TranspositionTable::with_megabytes(4);
        let limits = SearchLimits::with_depth(p.max_remaining_plies());
        let report = p.think(&limits, SearchOptions::default(), &table);
        assert_eq!(report.score, minimax.score, "{p:?}");
    }
}
