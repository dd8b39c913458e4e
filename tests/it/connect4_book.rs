//! The opening book (BitBully's 12-ply database and the shallow layer kibitz derives from it,
//! shipped in `src/games/connect4/book/`): its values agree with kibitz's own solver, and
//! `think` answers the opening exactly from it.

use std::time::Duration;

use kibitz::engine::{
    Deadline, Move, Outcome, SearchLimits, SearchOptions, StopReason, TranspositionTable,
};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;
use kibitz::games::connect4::book::{SHALLOW_PLIES, STANDARD_BOOK, TWELVE_PLY_BOOK, derive};
use kibitz::games::connect4::position::Geometry;
use kibitz::games::connect4::solver::Solver;

/// Entries spread over the whole book by a fixed linear congruential sequence (reproducible,
/// and no two runs of the test read different entries).
fn sample_indices(count: usize) -> Vec<usize> {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % STANDARD_BOOK.len()
        })
        .collect()
}

#[test]
fn a_sample_of_book_entries_matches_the_solver_without_the_book() {
    let table = TranspositionTable::with_megabytes(16);
    for index in sample_indices(16) {
        let (pos, book_value) = STANDARD_BOOK.entry(index).expect("a stored entry");
        let mut solver = Solver::new(Geometry::standard(), &table, SearchLimits::default());
        assert_eq!(solver.solve(&pos), Some(book_value), "entry {index}");
    }
}

#[test]
fn the_empty_board_is_a_first_player_win_on_the_last_disc_with_the_centre() {
    let table = TranspositionTable::with_megabytes(16);
    let limits = SearchLimits {
        deadline: Some(Deadline::after(Duration::from_secs(5))),
        ..SearchLimits::default()
    };
    let report = Connect4::new().think(&limits, SearchOptions::default(), &table);
    let proof = report.proof.expect("an exact answer");
    assert_eq!(report.best_move, Some(Move(3)));
    assert_eq!(report.stop_reason, StopReason::Book);
    assert_eq!(proof.outcome, Outcome::Win);
    assert_eq!(proof.plies_to_end, 41);
}

#[test]
fn every_first_move_gets_its_exact_value() {
    let table = TranspositionTable::with_megabytes(16);
    let limits = SearchLimits {
        deadline: Some(Deadline::after(Duration::from_secs(5))),
        ..SearchLimits::default()
    };
    let options = SearchOptions {
        analysis: true,
        ..SearchOptions::default()
    };
    let report = Connect4::new().think(&limits, options, &table);
    let mut outcomes: Vec<(u16, Outcome)> = report
        .root_moves
        .iter()
        .map(|m| (m.mv.0, m.proof.expect("exact").outcome))
        .collect();
    outcomes.sort_by_key(|&(col, _)| col);
    // True values of the first moves, columns 0..6: -2, -1, 0, +1, 0, -1, -2 (first player's side).
    use Outcome::{Draw, Loss, Win};
    assert_eq!(
        outcomes,
        [
            (0, Loss),
            (1, Loss),
            (2, Draw),
            (3, Win),
            (4, Draw),
            (5, Loss),
            (6, Loss)
        ]
    );
}

#[test]
fn a_position_past_the_book_is_proven_by_search_not_the_book() {
    let table = TranspositionTable::with_megabytes(16);
    // Pons' Test_L2_R1, line 1: 25 discs, beyond the book.
    let game = Connect4::from_moves("5554224333234511764415115").expect("a legal line");
    let report = game.think(&SearchLimits::default(), SearchOptions::default(), &table);
    assert_eq!(report.stop_reason, StopReason::Proven);
}

#[test]
fn the_shipped_shallow_layer_is_what_the_twelve_disc_layer_derives() {
    let derived = derive::derive_shallow_layer(SHALLOW_PLIES).expect("the 12-disc layer is whole");
    assert!(derive::matches_shipped_layer(&derived));
}

#[test]
fn a_sample_of_shallow_entries_matches_the_solver_on_the_twelve_disc_layer_alone() {
    let table = TranspositionTable::with_megabytes(16);
    let step = STANDARD_BOOK.shallow_len() / 40;
    for index in (0..STANDARD_BOOK.shallow_len()).step_by(step) {
        let (pos, book_value) = STANDARD_BOOK.shallow_entry(index).expect("a stored entry");
        let mut solver = Solver::new(Geometry::standard(), &table, SearchLimits::default())
            .with_book(&TWELVE_PLY_BOOK);
        assert_eq!(
            solver.solve(&pos),
            Some(book_value),
            "entry {index}: {pos:?}"
        );
    }
}

#[test]
fn every_position_of_the_books_range_is_answered_exactly_from_the_book() {
    let table = TranspositionTable::with_megabytes(16);
    // 0, 4, 8 (shallow layer), 10 (two plies above the 12-disc layer) and 12 discs.
    for line in ["", "4455", "12345671", "1234567123", "243335424257"] {
        let game = Connect4::from_moves(line).expect("a legal line");
        let report = game.think(&SearchLimits::default(), SearchOptions::default(), &table);
        assert_eq!(report.stop_reason, StopReason::Book, "{line:?}");
        assert!(report.proof.is_some(), "{line:?}");
    }
}
