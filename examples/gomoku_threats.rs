//! Threat sequences in recorded arena games: which forced wins kibitz missed, in attack and
//! in defence, and whether the current `think` sees them at a given budget.
//!
//! `cargo run --release --example gomoku_threats -- GAMES.txt [--ms 200] [--oracle-nodes N]
//!  [--player PREFIX] [--dump] [--trace]`
//!
//! `--player` names kibitz in the records by the start of its player name (default `kibitz`;
//! an arena that ran kibitz as `external:/path/to/wrapper` needs that text). `--dump` prints,
//! for each defence position, the opponent's threat win the oracle found after the recorded
//! move (its first move and length) and the VCT nodes it took; `--trace` prints `think`'s own
//! defence check of its chosen move (when it ran, the time left, its verdict, its nodes) on
//! stderr.
//!
//! For every game of the record (`kibitz arena --record`) that kibitz lost, every position
//! where kibitz was to move is judged with a large threat search (VCF, then VCT with
//! `--oracle-nodes`, default 2,000,000):
//! - attack: kibitz to move had a forced win (found by the oracle): does `think` at `--ms`
//!   report a proven win?
//! - defence: the first recorded kibitz move that left the opponent a forced win, where one of
//!   the 40 best moves by threat order did not (the position was not yet lost to the oracle):
//!   does `think` at `--ms` now choose a move after which the oracle finds no forced win?
//!
//! The oracle is kibitz's own threat search with a big budget: it proves every win it reports
//! but misses some (its attacker rule is not complete), so the counts are lower bounds.

use std::time::Duration;

use clap::Parser;
use kibitz::engine::{Game, Move, Outcome, SearchLimits, SearchOptions, Side, TranspositionTable};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::vcf::{Vcf, VcfLimits};
use kibitz::games::gomoku::vct::{self, Vct, VctLimits};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::openings::play_moves;
use kibitz::tools::arena::record::read_records;
use kibitz::tools::arena::referee::Colour;

/// Whether the side to move has a forced win the oracle finds.
fn oracle_wins(pos: &Gomoku, nodes: u64) -> bool {
    if pos.immediate_win().is_some() {
        return true;
    }
    let vcf = VcfLimits {
        max_nodes: nodes,
        ..VcfLimits::default()
    };
    if Vcf::new(pos.clone()).solve(&vcf).is_some() {
        return true;
    }
    let limits = VctLimits {
        deadline: None,
        max_nodes: nodes,
        cancel: None,
    };
    Vct::new(pos.clone())
        .solve(vct::MAX_THREATS, &limits)
        .is_some()
}

/// Whether the opponent has a forced win (by the oracle) after `mv`.
fn loses_after(pos: &Gomoku, mv: Move, nodes: u64) -> bool {
    let mut after = pos.clone();
    after.make(mv);
    after.status() == kibitz::engine::Status::Ongoing && oracle_wins(&after, nodes)
}

/// `gomoku_threats`' options.
#[derive(Parser)]
struct Args {
    /// Game record files, as `kibitz arena` writes them.
    files: Vec<String>,
    /// The time kibitz gets on each position.
    #[arg(long, default_value_t = 200)]
    ms: u64,
    /// Nodes the oracle's threat search gets to say whether a position is won.
    #[arg(long, default_value_t = 2_000_000)]
    oracle_nodes: u64,
    /// The start of kibitz's player name in the records.
    #[arg(long, default_value = "kibitz")]
    player: String,
    /// For each defence position, print the opponent's threat win the oracle found.
    #[arg(long)]
    dump: bool,
    /// Log the defence check (`kibitz::gomoku::defence=debug`) to stderr.
    #[arg(long)]
    trace: bool,
}

fn main() -> anyhow::Result<()> {
    let Args {
        ms,
        oracle_nodes: oracle,
        player,
        dump,
        trace,
        files,
    } = Args::parse();
    if trace {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter("kibitz::gomoku::defence=debug")
            .init();
    }
    let (mut attack_positions, mut attack_found) = (0, 0);
    let (mut defence_positions, mut defence_found) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file)?;
        for game in read_records(&text, 15)? {
            let (kibitz_side, kibitz_colour) = if game.black.starts_with(&player) {
                (Side::First, Colour::Black)
            } else {
                (Side::Second, Colour::White)
            };
            if game.winner != Some(kibitz_colour.other()) {
                continue;
            }
            let (opening, moves, title) = (&game.opening, &game.stones, game.title.as_str());
            let mut pos = Gomoku::new(15, 15, GomokuRules::default())?;
            play_moves(&mut pos, &moves[..opening.len()])?;
            let mut defence_done = false;
            for (ply, &(x, y)) in moves.iter().enumerate().skip(opening.len()) {
                let played = pos.move_at(y, x);
                if pos.side_to_move() == kibitz_side && pos.immediate_win().is_none() {
                    let think = |pos: &Gomoku| {
                        let table = TranspositionTable::with_megabytes(64);
                        let limits = SearchLimits::with_budget(Duration::from_millis(ms));
                        pos.think(&limits, SearchOptions::default(), &table)
                    };
                    if oracle_wins(&pos, oracle) {
                        attack_positions += 1;
                        let report = think(&pos);
                        let proven = report.proof.is_some_and(|p| p.outcome == Outcome::Win);
                        attack_found += usize::from(proven);
                        println!(
                            "{title}: ply {ply} attack: win missed in game, think proves it: {proven}"
                        );
                    } else if !defence_done && loses_after(&pos, played, oracle) {
                        // The first move that let a forced win in (the position before it
                        // was not lost for the opponent to move... as far as the oracle sees).
                        // Counted only when one of the 40 best moves by threat order is
                        // safe (else the game was lost before this move).
                        defence_done = true;
                        let mut candidates = Vec::new();
                        pos.legal_moves(&mut candidates);
                        candidates.retain(|m| pos.board().near[m.index()] > 0);
                        candidates.sort_by_key(|&m| std::cmp::Reverse(pos.move_order_hint(m)));
                        let savable = candidates
                            .iter()
                            .take(40)
                            .any(|&m| !loses_after(&pos, m, oracle));
                        if !savable {
                            println!("{title}: ply {ply} defence: already lost");
                            pos.make(played);
                            continue;
                        }
                        if dump {
                            let mut after = pos.clone();
                            after.make(played);
                            let limits = VctLimits {
                                deadline: None,
                                max_nodes: oracle,
                                cancel: None,
                            };
                            let mut solver = Vct::new(after);
                            let found = solver.solve(vct::MAX_THREATS, &limits);
                            let prefix: Vec<String> = moves[..=ply]
                                .iter()
                                .map(|&(x, y)| format!("{x},{y}"))
                                .collect();
                            println!(
                                "dump {found:?} in {} VCT nodes after: {}",
                                solver.nodes(),
                                prefix.join(" ")
                            );
                        }
                        defence_positions += 1;
                        let report = think(&pos);
                        let chosen = report.best_move.unwrap_or(played);
                        let safe = !loses_after(&pos, chosen, oracle);
                        defence_found += usize::from(safe);
                        println!(
                            "{title}: ply {ply} defence: recorded move lost, think's move is safe: {safe}"
                        );
                    }
                }
                pos.make(played);
            }
        }
    }
    println!(
        "attack: {attack_found}/{attack_positions} missed wins now proven; defence: \
         {defence_found}/{defence_positions} first losing moves now avoided (oracle {oracle} nodes, {ms} ms)"
    );
    Ok(())
}
