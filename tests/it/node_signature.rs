//! The node-count signature: the nodes every iteration of both searchers visits on fixed
//! positions at fixed depths, one thread, compared with `tests/data/node-signature.txt`.
//!
//! A change that should not alter the search (a refactor of its scaffolding, a new option left
//! off, a faster data structure) must leave every count as it was; a change that alters the
//! search on purpose rewrites the file with `KIBITZ_BLESS_SIGNATURE=1 cargo test --release
//! --test it node_signature` and says so in its commit (the diff of the file shows what moved).
//! Node counts are exact on every machine: they depend on no clock, only on the search.

use std::fmt::Write as _;

use kibitz::engine::{
    Algorithm, Game, SearchLimits, SearchOptions, SearchReport, TranspositionTable, search,
};
use kibitz::games::connect4::Connect4;
use kibitz::games::gomoku::search::MainSearch;
use kibitz::games::gomoku::{Gomoku, GomokuRules, Overline};
use kibitz::games::tictactoe::TicTacToe;

const SIGNATURE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/node-signature.txt");

/// One line of the signature: the position's name, then per iteration `depth:nodes`, then the
/// answer (move code and score) and the total.
fn line(name: &str, report: &SearchReport) -> String {
    let mut out = name.to_string();
    for it in &report.iterations {
        let _ = write!(out, " {}:{}", it.depth, it.nodes);
    }
    let best = report.best_move.map_or(-1, |mv| i64::from(mv.0));
    let _ = write!(
        out,
        " best={best} score={} total={}",
        report.score, report.nodes
    );
    out
}

fn engine(position: &impl Game, depth: u32, options: SearchOptions) -> SearchReport {
    let table = TranspositionTable::with_megabytes(16);
    search(position, &SearchLimits::with_depth(depth), options, &table)
}

fn alpha_beta() -> SearchOptions {
    SearchOptions::default()
}

/// A 15x15 (or other) gomoku position from `row,col` pairs, played alternately from X.
fn gomoku(size: usize, rules: GomokuRules, stones: &str) -> Gomoku {
    let mut p = Gomoku::new(size, size, rules).expect("a board size");
    for pair in stones.split_whitespace() {
        let (r, c) = pair.split_once(',').expect("row,col");
        let mv = p.move_at(r.parse().expect("row"), c.parse().expect("col"));
        p.make(mv);
    }
    p
}

fn main_search(p: &Gomoku, depth: u32) -> SearchReport {
    let table = TranspositionTable::with_megabytes(16);
    MainSearch::new(p.clone(), &table, SearchLimits::with_depth(depth)).run()
}

/// Every line of today's signature, in a fixed order.
fn signature() -> Vec<String> {
    let mut lines = Vec::new();
    let ttt = TicTacToe::new();
    lines.push(line("tictactoe-alphabeta", &engine(&ttt, 9, alpha_beta())));
    lines.push(line(
        "tictactoe-minimax",
        &engine(
            &ttt,
            9,
            SearchOptions {
                algorithm: Algorithm::Minimax,
                ..Default::default()
            },
        ),
    ));
    lines.push(line(
        "tictactoe-analysis",
        &engine(
            &ttt,
            9,
            SearchOptions {
                analysis: true,
                ..Default::default()
            },
        ),
    ));
    for moves in ["", "4453", "3642756"] {
        let p = Connect4::from_moves(moves).expect("a Connect-4 position");
        lines.push(line(
            &format!("connect4-engine-{moves:0<1}"),
            &engine(&p, 12, alpha_beta()),
        ));
    }
    let small = gomoku(9, GomokuRules::default(), "4,4 3,3 4,5 5,3");
    lines.push(line("gomoku9-engine", &engine(&small, 5, alpha_beta())));
    let free = GomokuRules::default();
    let standard = GomokuRules::new(5, Overline::NoWin).expect("standard rules");
    let renju = GomokuRules {
        renju: true,
        ..GomokuRules::default()
    };
    for (name, rules, stones) in [
        ("gomoku15-free-a", free, "4,10 5,4 6,7 10,6 8,9"),
        ("gomoku15-free-b", free, "6,5 6,8 6,7 9,8 6,4"),
        ("gomoku15-free-c", free, "7,7 8,8 6,8 7,8 8,7 6,6 9,6"),
        ("gomoku15-standard", standard, "10,7 9,7 8,7 7,4 4,5"),
        ("gomoku15-renju", renju, "7,7 7,8 8,8 6,6 9,9 6,8"),
    ] {
        let p = gomoku(15, rules, stones);
        lines.push(line(name, &main_search(&p, 7)));
    }
    lines
}

#[test]
fn both_searchers_visit_the_same_nodes_as_the_committed_signature() {
    let now = signature();
    if std::env::var_os("KIBITZ_BLESS_SIGNATURE").is_some() {
        let mut text = String::from(
            "# The node-count signature (tests/it/node_signature.rs): nodes per iteration \
             (depth:nodes), the answer and the total, one thread.\n",
        );
        for l in &now {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(SIGNATURE_PATH, text).expect("write the signature");
        return;
    }
    let committed = std::fs::read_to_string(SIGNATURE_PATH).expect("the committed signature");
    let committed: Vec<&str> = committed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(
        committed.len(),
        now.len(),
        "the signature has {} lines, the search gives {}",
        committed.len(),
        now.len()
    );
    for (want, got) in committed.iter().zip(&now) {
        assert_eq!(
            *want,
            got.as_str(),
            "the search visits other nodes than before"
        );
    }
}
