//! Connect-4 benchmark on Pascal Pons' position files, plus the tic-tac-toe solve.
//!
//! `cargo bench --bench connect4 -- [<file>...] [--limit N] [--table-mb M] [--warm]`
//!
//! For each file (default: the six sets in `tests/data/connect4/`, `Test_L1_R3` cut to its
//! first 100 lines unless `--limit` says otherwise) it solves every position with
//! `Connect4::think` and no limits, checks the exact score (converted from the report's outcome
//! and plies to the end, as `tests/it/connect4_positions.rs` does), and prints positions solved correctly,
//! mean and median wall-clock time per position, mean CPU time per position (the thread's
//! scheduler run time: on a shared machine wall time mostly measures the neighbours; it is
//! tick-grained per position, so only its mean over many positions is meaningful), mean nodes,
//! and nodes per second of wall and of CPU time. The table (default 8 MiB, which measured
//! fastest here: it mostly stays in cache, and depth-preferred replacement keeps the big
//! subtrees) is cleared before each position, outside the timed region, as Pons' solver is reset
//! between positions; `--warm` keeps it instead.
//!
//! `--score-only` times what Pons' `c4solver` and BitBully's `mtdf` do, for a side-by-side
//! comparison: the exact score alone (`Solver::solve`), without the opening book and without
//! looking for the move that reaches it. Without it, the service's path is timed (`think`: the
//! book, then the best move too).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use kibitz::engine::{
    Algorithm, Outcome, SearchLimits, SearchOptions, SearchReport, TranspositionTable, search,
};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;
use kibitz::games::connect4::score::score_from_distance;
use kibitz::games::connect4::solver::Solver;
use kibitz::games::tictactoe::TicTacToe;

const DATA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/connect4");
const DEFAULT_FILES: [&str; 6] = [
    "Test_L3_R1",
    "Test_L2_R1",
    "Test_L2_R2",
    "Test_L1_R1",
    "Test_L1_R2",
    "Test_L1_R3",
];
const DEFAULT_L1_R3_LIMIT: usize = 100;

/// The bench's options, as the command line gives them.
#[derive(Parser)]
struct Options {
    /// Position files (Pons' format); the six sets of `tests/data/connect4/` when none.
    files: Vec<PathBuf>,
    /// Only the first N positions of each file (default: all, Test_L1_R3's first 100).
    #[arg(long)]
    limit: Option<usize>,
    /// The table's size.
    #[arg(long, default_value_t = 8)]
    table_mb: usize,
    /// Keep the table across positions instead of clearing it before each.
    #[arg(long)]
    warm: bool,
    /// The exact score alone (what Pons' `c4solver` computes), not the service's path.
    #[arg(long)]
    score_only: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

struct Args {
    files: Vec<(PathBuf, Option<usize>)>,
    table_mb: usize,
    warm: bool,
    score_only: bool,
}

fn parse_args() -> Args {
    let Options {
        files,
        limit,
        table_mb,
        warm,
        score_only,
        ..
    } = Options::parse();
    let files = if files.is_empty() {
        DEFAULT_FILES
            .iter()
            .map(|name| {
                let default_limit = (*name == "Test_L1_R3").then_some(DEFAULT_L1_R3_LIMIT);
                (Path::new(DATA_DIR).join(name), limit.or(default_limit))
            })
            .collect()
    } else {
        files.into_iter().map(|f| (f, limit)).collect()
    };
    Args {
        files,
        table_mb,
        warm,
        score_only,
    }
}

/// CPU time this thread has run, from the kernel's scheduler statistics: on a machine shared
/// with other work, wall-clock times mostly measure the neighbours, CPU time much less so.
struct ThreadClock {
    schedstat: Option<File>,
}

impl ThreadClock {
    fn new() -> Self {
        ThreadClock {
            schedstat: File::open("/proc/thread-self/schedstat").ok(),
        }
    }

    /// Nanoseconds on the CPU so far; 0 where the kernel does not say.
    fn now(&self) -> Duration {
        let mut buf = [0u8; 64];
        let read = self
            .schedstat
            .as_ref()
            .and_then(|f| f.read_at(&mut buf, 0).ok())
            .unwrap_or(0);
        let text = std::str::from_utf8(&buf[..read]).unwrap_or("");
        let nanos = text
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        Duration::from_nanos(nanos)
    }
}

/// Mean and median of `times`, which gets sorted.
fn mean_median(times: &mut [Duration]) -> (Duration, Duration) {
    if times.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    let total: Duration = times.iter().sum();
    times.sort();
    let n = times.len();
    let median = if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    };
    (total / n as u32, median)
}

/// Pons' score of a proven report, from `moves` stones on the board.
fn pons_score(report: &SearchReport, game: &Connect4) -> Option<i32> {
    let proof = report.proof?;
    let moves = game.position().moves;
    let cells = game.width() * game.height();
    Some(match proof.outcome {
        Outcome::Draw => 0,
        Outcome::Win => score_from_distance(true, proof.plies_to_end, moves, cells),
        Outcome::Loss => score_from_distance(false, proof.plies_to_end, moves, cells),
    })
}

/// The exact score and nodes of `game`: the service's path, or the bare solver's score.
fn solve(game: &Connect4, table: &TranspositionTable, score_only: bool) -> (Option<i32>, u64) {
    if score_only {
        let mut solver = Solver::new(*game.geometry(), table, SearchLimits::default());
        let score = solver.solve(game.position());
        return (score, solver.nodes);
    }
    let report = game.think(&SearchLimits::default(), SearchOptions::default(), table);
    (pons_score(&report, game), report.nodes)
}

fn bench_file(
    path: &Path,
    limit: Option<usize>,
    table: &TranspositionTable,
    args: &Args,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let clock = ThreadClock::new();
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let mut nodes = 0u64;
    let mut correct = 0;
    for (n, line) in text.lines().take(limit.unwrap_or(usize::MAX)).enumerate() {
        let (moves, expected) = line
            .split_once(' ')
            .and_then(|(m, s)| Some((m, s.trim().parse::<i32>().ok()?)))
            .ok_or_else(|| format!("{}:{}: not `<moves> <score>`", path.display(), n + 1))?;
        let game = Connect4::from_moves(moves).map_err(|e| format!("line {}: {e}", n + 1))?;
        if !args.warm {
            table.clear();
        }
        let cpu_started = clock.now();
        let started = Instant::now();
        let (score, searched) = solve(&game, table, args.score_only);
        times.push(started.elapsed());
        cpu_times.push(clock.now().saturating_sub(cpu_started));
        nodes += searched;
        if score == Some(expected) {
            correct += 1;
        } else {
            eprintln!("wrong: {line} -> {score:?}");
        }
    }
    let count = times.len();
    let (mean, median) = mean_median(&mut times);
    let (cpu_mean, _) = mean_median(&mut cpu_times);
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let per_position = nodes as f64 / count.max(1) as f64;
    // The scheduler's clock advances by ticks (4 ms here): a total below ~100 ms says little.
    let cpu_total = cpu_mean * count as u32;
    let (cpu_mean_text, cpu_rate_text) = if cpu_total >= Duration::from_millis(100) {
        (
            format!("{:>10.1} us", cpu_mean.as_secs_f64() * 1e6),
            format!("{:>5.2}", per_position / cpu_mean.as_secs_f64() / 1e6),
        )
    } else {
        (format!("{:>13}", "-"), format!("{:>5}", "-"))
    };
    println!(
        "kibitz {name:<12} {correct:>4}/{count:<4} wall mean {:>10.1} us median {:>10.1} us | cpu mean {cpu_mean_text} | mean nodes {per_position:>11.0} | {:>5.2} M nodes/s wall, {cpu_rate_text} cpu",
        mean.as_secs_f64() * 1e6,
        median.as_secs_f64() * 1e6,
        per_position / mean.as_secs_f64().max(1e-12) / 1e6,
    );
    Ok(())
}

fn bench_tictactoe() {
    let table = TranspositionTable::with_megabytes(1);
    for (name, algorithm) in [
        ("minimax", Algorithm::Minimax),
        ("alpha-beta", Algorithm::AlphaBeta),
    ] {
        table.clear();
        let options = SearchOptions {
            algorithm,
            ..Default::default()
        };
        let started = Instant::now();
        let report = search(
            &TicTacToe::new(),
            &SearchLimits::with_depth(9),
            options,
            &table,
        );
        let elapsed = started.elapsed();
        // Minimax runs depths 1..=9; its full-tree count is the last iteration's.
        let nodes = match algorithm {
            Algorithm::Minimax => report.iterations.last().map_or(report.nodes, |i| i.nodes),
            Algorithm::AlphaBeta => report.nodes,
        };
        println!(
            "tictactoe empty board, {name:<10}: {nodes:>7} nodes, {:>8.1} us (all iterations), proof {:?}",
            elapsed.as_secs_f64() * 1e6,
            report.proof
        );
    }
}

fn main() {
    let args = parse_args();
    let table = TranspositionTable::with_megabytes(args.table_mb);
    println!(
        "table {} MiB ({} entries), {}; {}",
        table.bytes() >> 20,
        table.capacity(),
        if args.warm {
            "kept warm across positions"
        } else {
            "cleared before each position"
        },
        if args.score_only {
            "score only, no book (as Pons' and BitBully's solvers)"
        } else {
            "the service's path (book, then the best move)"
        }
    );
    for (path, limit) in &args.files {
        if let Err(message) = bench_file(path, *limit, &table, &args) {
            eprintln!("{message}");
            std::process::exit(1);
        }
    }
    bench_tictactoe();
}
