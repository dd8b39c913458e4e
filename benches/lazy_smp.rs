//! Does Lazy SMP pay on this machine? Time to a fixed depth of the generic engine on Connect-4
//! opening positions (Pons' Test_L1_R2), with 0 and 1 helper threads, interleaved, median of
//! the rounds. Run: `cargo bench --bench lazy_smp [-- <positions> <depth> <rounds>]`.

use std::time::Instant;

use clap::Parser;

use kibitz::engine::{SearchLimits, SearchOptions, TranspositionTable, search};
use kibitz::games::connect4::Connect4;

/// `lazy_smp`'s arguments, in order, each with its default.
#[derive(Parser)]
struct Args {
    /// Positions, the first of Test_L1_R2.
    #[arg(default_value_t = 12)]
    count: usize,
    /// The depth each search goes to.
    #[arg(default_value_t = 16)]
    depth: u32,
    /// Interleaved rounds, of which the median is printed.
    #[arg(default_value_t = 3)]
    rounds: usize,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {
        count,
        depth,
        rounds,
        ..
    } = Args::parse();
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
