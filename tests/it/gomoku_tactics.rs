//! Gomoku tactics: win in one, forced block, open four, four-three and VCF wins of several
//! fours, each solved by `think` with a 100 ms budget (the assertions are on the move and the
//! proof, not the time); and, over random positions, never a missed five or forced block.

use std::time::Duration;

use kibitz::engine::{
    Game, Move, Outcome, SearchLimits, SearchOptions, SearchReport, Status, TranspositionTable,
};
use kibitz::games::gomoku::{Gomoku, GomokuRules, vct};
use kibitz::games::{BoardGame, Grid};
use kibitz::tools::arena::{parse_moves, play_moves};
use proptest::prelude::*;

use crate::boards::window;

fn position<S: AsRef<str>>(rows: &[S]) -> Gomoku {
    let grid = Grid::parse(rows, 25).expect("grid");
    Gomoku::from_grid(&grid, None, &GomokuRules::default()).expect("position")
}

fn think(p: &Gomoku) -> SearchReport {
    let table = TranspositionTable::with_megabytes(4);
    p.think(
        &SearchLimits::with_budget(Duration::from_millis(100)),
        SearchOptions::default(),
        &table,
    )
}

fn at(p: &Gomoku, row: usize, col: usize) -> Move {
    p.move_at(row, col)
}

/// Plays `line` from `p` and checks it is a forced win: every attacker move but the last makes
/// exactly one five threat (so the defender's next move is forced), the defender blocks it, and
/// the last move completes a line.
fn assert_forced_fours(mut p: Gomoku, line: &[Move]) {
    assert_eq!(
        line.len() % 2,
        1,
        "a VCF line ends with the attacker's five"
    );
    for (i, &mv) in line.iter().enumerate() {
        assert!(p.is_legal(mv), "move {i} of the line is illegal");
        let attacker = i % 2 == 0;
        p.make(mv);
        if i + 1 == line.len() {
            assert_eq!(p.status(), Status::Lost, "the line ends with a five");
        } else if attacker {
            // The defender's only non-losing reply is the next move of the line.
            let mut blocks = Vec::new();
            p.search_moves(&mut blocks);
            assert!(blocks.contains(&line[i + 1]));
            assert!(blocks.len() <= 2);
        }
    }
}

#[test]
fn win_in_one_is_played_even_when_the_opponent_has_a_four() {
    let rows = "
        ....XXXX.......
        ....OOOO.......";
    let p = position(&window(15, 5, rows));
    let report = think(&p);
    assert!([at(&p, 5, 3), at(&p, 5, 8)].contains(&report.best_move.unwrap()));
    let proof = report.proof.unwrap();
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Win, 1));
}

#[test]
fn a_four_of_the_opponent_is_blocked() {
    let rows = "
        ...XOOOO.......
        ...............
        .......X.......
        ......X........
        ...............
        ...............
        ............X..";
    let p = position(&window(15, 5, rows));
    assert_eq!(think(&p).best_move, Some(at(&p, 5, 8)));
}

#[test]
fn facing_an_open_four_on_a_big_board_the_loss_is_proven_and_one_end_blocked() {
    // O to move; X's open four has two completion cells, so any block loses in two plies. On
    // 15x15 the main search prunes: its loss must still be confirmed and reported.
    let rows = "
        ....XXXX.......
        ...............
        ...O.O.........
        ...............
        ......O........";
    let p = position(&window(15, 5, rows));
    let report = think(&p);
    assert!([at(&p, 5, 3), at(&p, 5, 8)].contains(&report.best_move.unwrap()));
    let proof = report.proof.expect("a proven loss");
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Loss, 2));
    assert_eq!(report.score, -(kibitz::engine::WIN - 2));
}

#[test]
fn an_open_three_becomes_an_open_four_and_wins_in_three_plies() {
    let rows = "
        ......O.O......
        ....XXX........
        ...............
        ...............
        ...............
        .........O.....";
    let p = position(&window(15, 6, rows));
    let report = think(&p);
    assert!([at(&p, 7, 3), at(&p, 7, 7)].contains(&report.best_move.unwrap()));
    let proof = report.proof.unwrap();
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Win, 3));
}

#[test]
fn a_four_three_wins_in_five_plies() {
    // (7,7) makes a four down column 7 and an open three along row 7.
    let rows = "
        .......O.......
        .......X.......
        .......X.......
        .......X.......
        .....XX........
        ...............
        ..O............
        ..........O....
        ...O.....O.....";
    let p = position(&window(15, 3, rows));
    let report = think(&p);
    assert_eq!(report.best_move, Some(at(&p, 7, 7)));
    let proof = report.proof.unwrap();
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Win, 5));
    assert_forced_fours(p, &report.pv);
}

#[test]
fn a_vcf_of_three_fours_is_found_and_proven() {
    let rows = "
        .......X.X.....
        .........O.....
        .........O.....
        .....O.X.O.....
        .....OXXX..OO..
        .....O.........
        ....XX.........";
    let p = position(&window(15, 4, rows));
    let report = think(&p);
    let proof = report.proof.unwrap();
    assert_eq!((proof.outcome, proof.plies_to_end), (Outcome::Win, 7));
    assert_eq!(report.score, kibitz::engine::WIN - 7);
    assert_forced_fours(p, &report.pv);
}

#[test]
fn a_vcf_of_four_fours_is_found_and_proven() {
    let rows = "
        .............O.
        ..........X....
        .......O..O..X.
        ....OX....OO...
        .......XOX.....
        ......XO.OO....
        ......X..X.....
        .....X..X......";
    let p = position(&window(15, 3, rows));
    let report = think(&p);
    let proof = report.proof.unwrap();
    assert_eq!(proof.outcome, Outcome::Win);
    assert!(proof.plies_to_end >= 7, "no shorter VCF exists here");
    assert_forced_fours(p, &report.pv);
}

/// Plays `moves` (indices into the candidate list, wrapped) from the empty 15x15 board, stopping
/// before any move that ends the game.
/// The position after `moves` (`x,y` = column,row, black first) on an empty 15x15 board.
fn from_moves(moves: &str) -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    play_moves(&mut p, &parse_moves(moves, 15).expect("x,y moves")).expect("legal moves");
    p
}

#[test]
fn an_eleven_threat_win_from_a_real_game_is_found_within_20000_nodes() {
    // Black to move, from a kibitz-Carbon game: black wins by threats in 23 plies (the complete
    // threat search, without the related-threat rule, needed 79,286 nodes for it).
    let p = from_moves(
        "12,2 13,3 14,4 14,5 13,6 12,7 11,6 10,4 10,3 10,6 8,5 12,5 12,4 7,6 10,2 11,2 7,5 \
         8,4 11,5 11,7 9,5 10,5 10,8 6,5 8,7 12,8 12,9 10,7 9,7 11,9 10,10 6,4 9,4 9,6 6,6 \
         5,4 4,4 5,5 8,8 8,9 10,11 4,6 9,9 7,7 10,12 10,9 10,13 10,14 7,3 5,7 12,12",
    );
    let limits = vct::VctLimits {
        deadline: None,
        max_nodes: 20_000,
        cancel: None,
    };
    let mut solver = vct::Vct::new(p.clone());
    let (first, plies) = solver.solve(vct::MAX_THREATS, &limits).expect("a VCT win");
    assert!(p.is_legal(first));
    assert_eq!(plies % 2, 1, "the attacker plays the last move");
    assert!(
        plies >= 21,
        "{plies} plies: the win takes eleven threats or more"
    );
}

fn random_position(choices: &[usize]) -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    for &c in choices {
        let mut moves = Vec::new();
        p.legal_moves(&mut moves);
        moves.retain(|m| {
            let cell = p.cell_of(*m);
            (3..12).contains(&cell.row) && (3..12).contains(&cell.col)
        });
        let mv = moves[c % moves.len()];
        p.make(mv);
        if p.status() != Status::Ongoing {
            p.unmake(mv);
            break;
        }
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn never_misses_a_five_or_a_forced_block(choices in prop::collection::vec(0usize..1000, 8..40)) {
        let p = random_position(&choices);
        let table = TranspositionTable::with_megabytes(1);
        let limits = SearchLimits { max_nodes: Some(2_000), ..Default::default() };
        let report = p.think(&limits, SearchOptions::default(), &table);
        let mv = report.best_move.expect("a move");
        let mut after = p.clone();
        after.make(mv);
        if p.immediate_win().is_some() {
            prop_assert_eq!(after.status(), Status::Lost, "missed a five");
        } else {
            // If the opponent could win at once before, it must not be able to win at the same
            // cell now: we blocked (when there was a single five threat).
            let mut threats = Vec::new();
            // Let the opponent move instead of us: where would it win at once?
            let mut swapped = p.clone();
            swapped.set_up(stones_of(&p), p.side_to_move().other());
            let mut moves = Vec::new();
            swapped.legal_moves(&mut moves);
            for &m in &moves {
                swapped.make(m);
                if swapped.status() == Status::Lost {
                    threats.push(m);
                }
                swapped.unmake(m);
            }
            if threats.len() == 1 {
                prop_assert_eq!(mv, threats[0], "missed the forced block");
            }
        }
    }
}

fn stones_of(p: &Gomoku) -> Vec<(usize, kibitz::engine::Side)> {
    (0..p.rows() * p.cols())
        .filter_map(|c| match p.stone(c / p.cols(), c % p.cols()) {
            kibitz::games::Stone::Player(s) => Some((c, s)),
            kibitz::games::Stone::Empty => None,
        })
        .collect()
}
