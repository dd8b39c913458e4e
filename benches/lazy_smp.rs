//! Does Lazy SMP pay on this machine? Time to a fixed depth of the generic engine on Connect-4
//! opening positions (Pons' Test_L1_R2), with 0 and 1 helper threads, interleaved, median of
//! the rounds. Run: `cargo bench --bench lazy_smp [-- <positions> <depth> <rounds>]`.

use std::time::Instant;

use kibitz::engine::{SearchLimits, SearchOptions, TranspositionTable, search};
use kibitz::games::connect4::Connect4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let count: usize = args.first().map_or(Ok(12), |a| a.parse())?;
    let depth: u32 = args.get(1).map_or(Ok(16), |a| a.parse())?;
    let rounds: usize = args.get(2).map_or(Ok(3), |a| a.parse())?;
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/connect4/Test_L1_R2"
    ))?;
    let positions = file
        .lines()
        .take(count)
        .map(|line| Connect4::from_moves(line.split(' ').next().unwrap_or("")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seconds = [Vec::new(), Vec::new()];
    let mut nodes = [0u64; 2];
    for _ in 0..rounds {
        for helpers in [0usize, 1] {
            let start = Instant::now();
            for position in &positions {
                let table = TranspositionTable::with_megabytes(16);
                let options = SearchOptions {
                    helper_threads: helpers,
                    ..Default::default()
                };
                nodes[helpers] +=
                    search(position, &SearchLimits::with_depth(depth), options, &table).nodes;
            }
            seconds[helpers].push(start.elapsed().as_secs_f64());
        }
    }
    for (helpers, runs) in seconds.iter_mut().enumerate() {
        runs.sort_by(f64::total_cmp);
        println!(
            "helper threads {helpers}: median {:.3} s for {count} positions to depth {depth}, {} nodes per round",
            runs[runs.len() / 2],
            nodes[helpers] / rounds as u64
        );
    }
    Ok(())
}
