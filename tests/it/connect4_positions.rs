//! Known-answer positions: a fast subset of each of Pascal Pons' six benchmark files.
//!
//! For every position, `think` must prove the exact game value (the README's score, converted
//! from the report's outcome and plies to the end) and suggest a move that keeps it: the child
//! after that move, solved again, is worth exactly the negated score; the principal variation
//! plays out the proven game. The files are copied in
//! `tests/data/connect4/` (see its README); a missing file fails the test.

use std::path::Path;

use kibitz::engine::{
    Game, Outcome, SearchLimits, SearchOptions, SearchReport, Status, TranspositionTable,
};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;

const DATA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/connect4");

/// Pons' score of a proven report: |score| = (cells + 2 - stones - plies) / 2.
fn pons_score(report: &SearchReport, game: &Connect4) -> i32 {
    let proof = report.proof.expect("an unlimited think proves the value");
    let cells = (game.width() * game.height()) as i32;
    let magnitude = (cells + 2 - game.plies_played() as i32 - proof.plies_to_end as i32) / 2;
    match proof.outcome {
        Outcome::Win => magnitude,
        Outcome::Loss => -magnitude,
        Outcome::Draw => 0,
    }
}

/// Lines `range` of `file` as (moves, expected score).
fn cases(file: &str, lines: std::ops::Range<usize>) -> Vec<(String, i32)> {
    let path = Path::new(DATA_DIR).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}); the Connect-4 data belongs in tests/data/connect4",
            path.display()
        )
    });
    let selected: Vec<_> = text
        .lines()
        .skip(lines.start)
        .take(lines.len())
        .map(|line| {
            let (moves, score) = line.split_once(' ').expect("`<moves> <score>`");
            (moves.to_string(), score.trim().parse().expect("a score"))
        })
        .collect();
    assert_eq!(
        selected.len(),
        lines.len(),
        "{file} is shorter than expected"
    );
    selected
}

fn check_file(file: &str, lines: std::ops::Range<usize>) {
    let table = TranspositionTable::with_megabytes(32);
    for (moves, expected) in cases(file, lines) {
        let game = Connect4::from_moves(&moves).expect("a valid position");
        let report = game.think(&SearchLimits::default(), SearchOptions::default(), &table);
        assert_eq!(pons_score(&report, &game), expected, "{file}: {moves}");

        let best = report.best_move.expect("a move");
        let mut child = game.clone();
        child.make(best);
        let through_best = match child.status() {
            // The move won at once: Pons' score of a win on the next ply.
            Status::Lost => (game.width() * game.height() + 1 - game.plies_played()) as i32 / 2,
            // The move filled the board.
            Status::Draw => 0,
            Status::Ongoing => {
                let child_report =
                    child.think(&SearchLimits::default(), SearchOptions::default(), &table);
                -pons_score(&child_report, &child)
            }
        };
        assert_eq!(
            through_best, expected,
            "{file}: {moves}, best move {best:?}"
        );
    }
}

#[test]
fn end_game_easy_first_50_are_exact() {
    check_file("Test_L3_R1", 0..50);
}

#[test]
fn middle_game_easy_first_50_are_exact() {
    check_file("Test_L2_R1", 0..50);
}

#[test]
fn middle_game_medium_first_20_are_exact() {
    check_file("Test_L2_R2", 0..20);
}

#[test]
fn beginning_easy_first_50_are_exact() {
    check_file("Test_L1_R1", 0..50);
}

#[test]
fn beginning_medium_first_5_are_exact() {
    check_file("Test_L1_R2", 0..5);
}

/// Line 3 of the hard set (a few million nodes); lines 1 and 2 take tens of millions, too slow
/// for the default test run (the benchmark covers them).
#[test]
fn beginning_hard_line_3_is_exact() {
    check_file("Test_L1_R3", 2..3);
}

/// Plays `report.pv` from `game` and checks it is the proven game: legal, as long as
/// `plies_to_end`, and ending as the proof says (the side to move at the root wins with the
/// last stone, loses to it, or the board fills).
fn assert_pv_plays_out_the_proof(game: &Connect4, report: &SearchReport, moves: &str) {
    let proof = report.proof.expect("proven");
    assert_eq!(
        report.pv.len(),
        proof.plies_to_end as usize,
        "{moves}: pv {:?} against {proof:?}",
        report.pv
    );
    let mut walk = game.clone();
    for (i, &mv) in report.pv.iter().enumerate() {
        assert_eq!(
            walk.status(),
            Status::Ongoing,
            "{moves}: over before ply {i}"
        );
        let mut legal = Vec::new();
        walk.legal_moves(&mut legal);
        assert!(legal.contains(&mv), "{moves}: {mv:?} illegal at ply {i}");
        walk.make(mv);
    }
    let ended = walk.status();
    match proof.outcome {
        // The last stone was the winner's: the side to move after it has lost.
        Outcome::Win | Outcome::Loss => assert_eq!(ended, Status::Lost, "{moves}"),
        Outcome::Draw => assert_eq!(ended, Status::Draw, "{moves}"),
    }
    if proof.outcome != Outcome::Draw {
        let root_side_moved_last = report.pv.len() % 2 == 1;
        assert_eq!(
            root_side_moved_last,
            proof.outcome == Outcome::Win,
            "{moves}: the winner must play the last stone"
        );
    }
}

#[test]
fn the_principal_variation_of_an_exact_solve_plays_out_the_proven_game() {
    let table = TranspositionTable::with_megabytes(32);
    for (file, lines) in [("Test_L3_R1", 0..50), ("Test_L2_R1", 0..30)] {
        for (moves, _) in cases(file, lines) {
            let game = Connect4::from_moves(&moves).expect("a valid position");
            let report = game.think(&SearchLimits::default(), SearchOptions::default(), &table);
            assert_pv_plays_out_the_proof(&game, &report, &moves);
        }
    }
}
