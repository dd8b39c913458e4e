//! Gomoku speed: nodes per second and depth reached by `think` at 200 ms in 15x15 middle games
//! (shared tournament openings, some with a few more moves), median of five runs each.
//!
//! Run with `cargo bench --bench gomoku`. Each run uses a fresh 64 MiB table.
//!
//! `cargo bench --bench gomoku -- --nodes N` searches each position once to `N` nodes instead
//! (one table, allocated before the first search), the stable form for
//! `valgrind --tool=callgrind`: instructions divided by the nodes printed give instructions per
//! node, which a loaded machine does not change.

use std::time::Duration;

use kibitz::engine::{Game, SearchLimits, SearchOptions, TranspositionTable};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::{parse_moves, play_moves};

const RUNS: usize = 5;
const BUDGET_MS: u64 = 200;

/// Middle-game positions as `x,y` (column,row) moves from the empty board, black first.
const POSITIONS: [(&str, &str); 4] = [
    (
        "opening 3 + 6",
        "7,7 8,8 10,5 6,8 10,8 7,8 5,8 10,7 5,7 8,7 8,5",
    ),
    (
        "opening 4 + 6",
        "7,7 7,8 8,10 9,8 9,6 8,7 10,7 8,9 8,8 6,6 10,9",
    ),
    (
        "opening 9",
        "12,2 13,3 14,4 14,5 13,6 12,7 11,6 10,4 10,3 10,6 8,5",
    ),
    ("opening 10 + 2", "7,7 8,8 10,9 10,8 11,5 9,9 9,7"),
];

fn position(moves: &str) -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    play_moves(&mut p, &parse_moves(moves, 15).expect("x,y moves")).expect("legal moves");
    p
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// `--nodes N`: one search per position to `N` nodes; prints the total nodes searched.
fn fixed_nodes(max_nodes: u64) {
    let table = TranspositionTable::with_megabytes(64);
    let mut total = 0;
    for (name, moves) in POSITIONS {
        table.clear();
        let limits = SearchLimits {
            max_nodes: Some(max_nodes),
            ..SearchLimits::default()
        };
        let report = position(moves).think(&limits, SearchOptions::default(), &table);
        println!(
            "{name:<16} nodes {:>10} depth {:>3}",
            report.nodes, report.depth
        );
        total += report.nodes;
    }
    println!("total nodes {total}");
}

/// The bench's options.
#[derive(clap::Parser)]
struct Args {
    /// One search per position to this many nodes instead of the timed runs.
    #[arg(long)]
    nodes: Option<u64>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    if let Some(n) = <Args as clap::Parser>::parse().nodes {
        return fixed_nodes(n);
    }
    println!("gomoku 15x15, {BUDGET_MS} ms a search, median of {RUNS} runs");
    println!(
        "{:<16} {:>12} {:>6} {:>10} {:>8}",
        "position", "nodes/s", "depth", "nodes", "proof"
    );
    let mut all_nps = Vec::new();
    let mut all_depth = Vec::new();
    for (name, moves) in POSITIONS {
        let p = position(moves);
        let (mut nps, mut depth, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
        let mut proof = None;
        for _ in 0..RUNS {
            let table = TranspositionTable::with_megabytes(64);
            let limits = SearchLimits::with_budget(Duration::from_millis(BUDGET_MS));
            let report = p.think(&limits, SearchOptions::default(), &table);
            nps.push(report.nodes_per_second());
            depth.push(u64::from(report.depth));
            nodes.push(report.nodes);
            proof = report.proof;
        }
        let (n, d) = (median(nps), median(depth));
        all_nps.push(n);
        all_depth.push(d);
        let proof = proof.map_or("-".to_string(), |p| format!("{:?}", p.outcome));
        println!("{name:<16} {n:>12} {d:>6} {:>10} {proof:>8}", median(nodes));
        let _ = p.plies_played();
    }
    println!(
        "median over positions: {} nodes/s, depth {}",
        median(all_nps),
        median(all_depth)
    );
}
