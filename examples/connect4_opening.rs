//! How much of a Connect-4 game from the empty board kibitz answers optimally within 100 ms.
//!
//! `cargo run --release --example connect4_opening -- [--per-count N] [--max-discs D] [--budget-ms B]`
//!
//! Random-play positions (fixed seed; moves uniformly among the legal ones, never a finished
//! game) with 0 ..= D discs (default 14), N of each count (default 10). For each, the exact
//! value of every legal move is computed first, without a time limit (the solver, with the
//! opening book), then `Connect4::think` answers it with a `B` ms budget (default 100) on a
//! table shared by all the timed answers, as the service's is. A move counts as optimal when
//! its exact value equals the best one (a fastest win, a longest loss, or a draw). Printed per
//! disc count: optimal answers, answers that came back exact (`book` or `proven`), and the
//! slowest answer's wall time.

use std::time::{Duration, Instant};

use clap::Parser;
use kibitz::engine::{
    Deadline, Game, Move, SearchLimits, SearchOptions, StopReason, TranspositionTable,
};
use kibitz::games::BoardGame;
use kibitz::games::connect4::Connect4;
use kibitz::games::connect4::book::STANDARD_BOOK;
use kibitz::games::connect4::solver::Solver;

/// `connect4_opening`'s options.
#[derive(Parser)]
struct Args {
    /// Random-play positions drawn for each disc count.
    #[arg(long, default_value_t = 10)]
    per_count: usize,
    /// The largest disc count drawn.
    #[arg(long, default_value_t = 14)]
    max_discs: u32,
    /// Each answer's budget.
    #[arg(long, default_value_t = 100)]
    budget_ms: u64,
}

/// A small reproducible generator (PCG's LCG step, top bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize % n
    }
}

/// A position reached by `discs` random legal moves that leaves the game unfinished, or `None`
/// when this walk ended the game first.
fn random_position(rng: &mut Lcg, discs: u32) -> Option<Connect4> {
    let mut game = Connect4::new();
    let mut moves = Vec::new();
    for _ in 0..discs {
        moves.clear();
        game.legal_moves(&mut moves);
        if moves.is_empty() {
            return None;
        }
        game.make(moves[rng.below(moves.len())]);
    }
    let mut left = Vec::new();
    game.legal_moves(&mut left);
    (!left.is_empty()).then_some(game)
}

/// The columns reaching the position's exact value.
fn optimal_columns(game: &Connect4, table: &TranspositionTable) -> Vec<u32> {
    let mut solver =
        Solver::new(*game.geometry(), table, SearchLimits::default()).with_book(&STANDARD_BOOK);
    let scores = solver.analyse(game.position()).unwrap_or_default();
    let best = scores.iter().map(|&(_, s)| s).max().unwrap_or(0);
    scores
        .iter()
        .filter(|&&(_, s)| s == best)
        .map(|&(col, _)| col)
        .collect()
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let reference_table = TranspositionTable::with_megabytes(64);
    let service_table = TranspositionTable::with_megabytes(64);
    let mut rng = Lcg(0x5EED_C4C4);
    let (mut all_optimal, mut all_count) = (0, 0);
    println!("discs  optimal  exact  slowest_ms");
    for discs in 0..=args.max_discs {
        let (mut optimal, mut exact, mut count) = (0, 0, 0);
        let mut slowest = Duration::ZERO;
        let mut attempts = 0;
        while count < args.per_count && attempts < 100 * args.per_count {
            attempts += 1;
            let Some(game) = random_position(&mut rng, discs) else {
                continue;
            };
            let optimal_set = optimal_columns(&game, &reference_table);
            let limits = SearchLimits {
                deadline: Some(Deadline::after(Duration::from_millis(args.budget_ms))),
                ..SearchLimits::default()
            };
            let started = Instant::now();
            let report = game.think(&limits, SearchOptions::default(), &service_table);
            slowest = slowest.max(started.elapsed());
            count += 1;
            let Some(Move(col)) = report.best_move else {
                continue;
            };
            optimal += usize::from(optimal_set.contains(&u32::from(col)));
            exact += usize::from(matches!(
                report.stop_reason,
                StopReason::Book | StopReason::Proven
            ));
        }
        println!(
            "{discs:>5}  {optimal:>3}/{count:<3}  {exact:>3}/{count:<3}  {:>9.1}",
            slowest.as_secs_f64() * 1e3
        );
        all_optimal += optimal;
        all_count += count;
    }
    println!(
        "optimal within {} ms: {all_optimal}/{all_count} ({:.1} %)",
        args.budget_ms,
        100.0 * all_optimal as f64 / all_count.max(1) as f64
    );
    Ok(())
}
