//! Gomoku defence against deep threat sequences, on positions from arena games kibitz lost to
//! Rapfi (200 ms a move): kibitz's recorded move let the opponent win by threats (a VCT of 15
//! to 31 plies, found here by the threat search), while another move did not. `think` must see
//! the threat and play a move after which the opponent has no such win.

use std::time::Duration;

use kibitz::engine::{Game, Move, SearchLimits, SearchOptions, Status, TranspositionTable};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::vcf::{Vcf, VcfLimits};
use kibitz::games::gomoku::vct::{self, Vct, VctLimits};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::{parse_moves, play_moves};

/// The position after `moves` (`x,y` = column,row, black first) on an empty 15x15 board.
fn from_moves(moves: &str) -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    play_moves(&mut p, &parse_moves(moves, 15).expect("x,y moves")).expect("legal moves");
    p
}

/// The side to move's forced win by fours or threats (300,000 nodes each), with its length.
fn threat_win(p: &Gomoku) -> Option<u32> {
    if p.immediate_win().is_some() {
        return Some(1);
    }
    let fours = VcfLimits {
        max_nodes: 300_000,
        ..VcfLimits::default()
    };
    if let Some(line) = Vcf::new(p.clone()).solve(&fours) {
        return Some(line.len() as u32);
    }
    let limits = VctLimits {
        deadline: None,
        max_nodes: 300_000,
        cancel: None,
    };
    Vct::new(p.clone())
        .solve(vct::MAX_THREATS, &limits)
        .map(|(_, plies)| plies)
}

fn after(p: &Gomoku, mv: Move) -> Gomoku {
    let mut q = p.clone();
    q.make(mv);
    assert_eq!(q.status(), Status::Ongoing);
    q
}

/// `position` (kibitz to move), the move kibitz played in the game, and the least length of
/// the opponent's win after it: the win is there, and `think` avoids it.
fn assert_defends(position: &str, recorded: (usize, usize), min_plies: u32) {
    let p = from_moves(position);
    let recorded = p.move_at(recorded.1, recorded.0);
    let plies = threat_win(&after(&p, recorded)).expect("the recorded move loses to threats");
    assert!(
        plies >= min_plies,
        "a win of {plies} plies, {min_plies} expected"
    );
    let table = TranspositionTable::with_megabytes(16);
    // A generous budget: the defence search takes a share of it, and the machine may be busy.
    let limits = SearchLimits::with_budget(Duration::from_millis(1_000));
    let report = p.think(&limits, SearchOptions::default(), &table);
    let chosen = report.best_move.expect("a move");
    assert_eq!(
        threat_win(&after(&p, chosen)),
        None,
        "{chosen:?} still loses to threats"
    );
}

/// The deepest of the defences. When `think` began to pass it, and how reliably:
/// docs/journal/gomoku.md, "The 31-ply defence test".
#[test]
fn a_31_ply_threat_win_is_seen_and_defended() {
    // Gomocup opening 1, kibitz black: 6,4 let white win by threats in 31 plies.
    assert_defends(
        "11,1 8,2 7,4 8,3 9,3 8,4 8,1 9,6 10,6 9,7 9,8 10,5 8,6 7,2 9,4 9,1 6,2 6,7 7,8 6,8 6,9 5,7",
        (6, 4),
        31,
    );
}

#[test]
fn a_15_ply_threat_win_right_after_the_opening_is_seen_and_defended() {
    // Gomocup opening 4, kibitz white at its third move: 5,7 let black win in 15 plies.
    assert_defends("7,7 7,8 8,10 9,8 9,6 6,6 6,8 5,9 8,6", (5, 7), 15);
}
