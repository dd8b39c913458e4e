//! Gomoku threat search: nodes and time of one VCT solve (up to 12 threats, 100,000 nodes) on
//! positions from kibitz-Carbon games, wins of 8 to 15 threats and proven failures, median
//! time of five runs (node counts are deterministic).
//!
//! Run with `cargo bench --bench gomoku_threats`.

use std::time::{Duration, Instant};

use kibitz::games::gomoku::{Gomoku, GomokuRules, vct};
use kibitz::tools::arena::{parse_moves, play_moves};

const RUNS: usize = 5;
const MAX_NODES: u64 = 100_000;

/// Side to move after the moves (`x,y` = column,row, black first) and what it has.
const POSITIONS: [(&str, &str); 8] = [
    (
        "win A",
        "7,7 8,8 10,7 9,6 6,5 8,7 8,9 7,8 6,9 9,8 6,8 8,6 9,7 10,9 7,6 5,9 7,4 7,3 6,7 6,6 4,7 \
         11,8 10,8 5,6",
    ),
    (
        "win B",
        "12,2 13,3 14,4 14,5 13,6 12,7 11,6 10,4 10,3 10,6 8,5 12,5 12,4 7,6 10,2 11,2 7,5 8,4 \
         11,5 11,7 9,5 10,5 10,8 6,5 8,7 12,8 12,9 10,7 9,7 11,9 10,10 6,4 9,4 9,6 6,6 5,4 4,4 \
         5,5 8,8 8,9 10,11 4,6 9,9 7,7 10,12 10,9 10,13 10,14 7,3 5,7 12,12 11,11 5,6",
    ),
    (
        "win C",
        "7,7 8,8 10,7 9,6 6,5 8,7 8,9 7,8 6,9 9,8 6,8 8,6 9,7",
    ),
    (
        "win D",
        "13,1 11,3 13,5 9,3 10,5 12,3 10,3 9,4 11,5 9,5 12,5 14,5 9,6 8,4 13,4",
    ),
    (
        "win E",
        "12,2 13,3 14,4 14,5 13,6 12,7 11,6 10,4 10,3 10,6 8,5 12,5 12,4 7,6 10,2 11,2 7,5 8,4 \
         11,5 11,7 9,5 10,5 10,8 6,5 8,7 12,8 12,9 10,7 9,7 11,9 10,10 6,4 9,4 9,6 6,6 5,4 4,4 \
         5,5 8,8 8,9 10,11 4,6 9,9",
    ),
    (
        "none F",
        "11,1 8,2 7,4 7,5 5,5 6,6 4,6 6,4 5,7 8,6 9,7 6,8 6,7 7,7 5,9 5,8 7,8 8,4",
    ),
    (
        "none G",
        "13,1 11,3 13,5 9,3 10,5 12,3 10,3 12,5 10,4 10,2 9,4 8,4 11,1 12,4 12,6 10,6 9,7 10,8 \
         9,8 11,6 7,6 7,5 6,6 8,5 5,6 8,6 4,6 3,6 9,5 9,6 8,3 11,2 12,1 9,1 8,0 9,2 10,1 14,1 \
         7,2 6,1 12,2 14,3",
    ),
    (
        "none H",
        "7,7 7,8 10,8 8,6 5,8 6,6 9,6 4,6 5,6 5,7 4,8 6,5 6,7 8,5 7,5 8,7 8,4 3,7 2,8 3,8 3,5 \
         4,9 2,7 6,9 2,9 2,10 5,10 7,9 5,9 8,10 6,8 3,11 4,5 2,5 5,4 6,3",
    ),
];

fn position(moves: &str) -> Gomoku {
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).expect("board");
    play_moves(&mut p, &parse_moves(moves, 15).expect("x,y moves")).expect("legal moves");
    p
}

fn main() {
    println!("gomoku VCT, {MAX_NODES} nodes at most, median of {RUNS} runs");
    println!(
        "{:<8} {:>8} {:>10} {:>12}",
        "position", "nodes", "time", "result"
    );
    let limits = vct::VctLimits {
        deadline: None,
        max_nodes: MAX_NODES,
        cancel: None,
    };
    let (mut all_nodes, mut all_time) = (0, Duration::ZERO);
    for (name, moves) in POSITIONS {
        let p = position(moves);
        let mut times = Vec::new();
        let (mut nodes, mut result) = (0, String::new());
        for _ in 0..RUNS {
            let mut solver = vct::Vct::new(p.clone());
            let start = Instant::now();
            let found = solver.solve(vct::MAX_THREATS, &limits);
            times.push(start.elapsed());
            nodes = solver.nodes();
            result = match found {
                Some((_, plies)) => format!("win in {plies}"),
                None if solver.stopped() => "unknown".to_string(),
                None => "none".to_string(),
            };
        }
        times.sort();
        let median = times[RUNS / 2];
        all_nodes += nodes;
        all_time += median;
        println!(
            "{name:<8} {nodes:>8} {:>8.2}ms {result:>12}",
            median.as_secs_f64() * 1e3
        );
    }
    println!(
        "total: {all_nodes} nodes, {:.1} ms",
        all_time.as_secs_f64() * 1e3
    );
}
