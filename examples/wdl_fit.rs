//! Fits a game's win/draw/loss model (`src/service/wdl.rs`) on the outcomes of self-play games,
//! and prints the calibration table and Brier scores docs/api.md ("Win, draw, loss") quotes.
//!
//! ```text
//! cargo run --release --example wdl_fit -- --game connect4 [--games N] [--ms M]
//!     [--samples FILE] [--from FILE] [--heldout FILE] [--heldout-max N]
//! ```
//!
//! 1. Plays `--games` games of full-strength self-play (`search_at_level` at level 10, what
//!    `POST /move` runs), `--ms` a move, each from a varied start: tic-tac-toe from 0-3 random
//!    plies with the search capped at depth 2 (at full depth every answer is proven);
//!    Connect-4 7x6 from 2-10 random plies; gomoku 15x15 free-style from the openings of
//!    `tests/data/gomoku/openings-tuning-100-15x15.txt`, one game each in turn. Every position
//!    searched gives a sample: its score and whether it was proven (side to move's view), and
//!    how the game ended for that side. `--samples FILE` writes them; `--from FILE` reads them
//!    back instead of playing (a refit costs nothing).
//! 2. Splits by game: games whose number is 2 mod 3 are held out, the rest fit the model.
//!    Proven samples are left out of both (their triple is exact, not modelled).
//! 3. Fits `margin` and `scale` by maximum likelihood (a grid, then a pattern search), and
//!    prints them, the Brier score (the sum over win, draw and loss of the squared error,
//!    averaged over positions) on the held-out positions for the fit, the shipped model and a
//!    constant (the fit games' frequencies), and the calibration table: held-out positions in
//!    ten bins of predicted expected score, predicted against observed.
//!
//! `--heldout FILE` writes up to `--heldout-max` held-out samples (evenly thinned) as
//! `score result` lines: the committed sample the unit test in `src/service/wdl.rs` reads.

use std::fmt::Write as _;
use std::time::Duration;

use clap::Parser;

use kibitz::engine::TranspositionTable;
use kibitz::engine::skill::SplitMix64;
use kibitz::engine::{Move, Score, SearchLimits, SearchOptions, Side, Status};
use kibitz::games::Grid;
use kibitz::games::connect4::Connect4;
use kibitz::games::gomoku::Gomoku;
use kibitz::games::tictactoe::TicTacToe;
use kibitz::service::games::ServedGame;
use kibitz::service::levels::{Style, search_at_level};
use kibitz::service::wdl::{self, WdlModel};
use kibitz::tools::arena::openings::{parse_openings, play_moves};

#[path = "shared/game_name.rs"]
mod game_name;
use game_name::GameName;

/// `wdl_fit`'s options.
#[derive(Parser)]
struct Args {
    #[arg(long, value_enum)]
    game: GameName,
    /// Self-play games to play.
    #[arg(long, default_value_t = 120)]
    games: usize,
    /// Time a move.
    #[arg(long, default_value_t = 20)]
    ms: u64,
    /// Write every sample to this file (`game ply score proven result` lines).
    #[arg(long)]
    samples: Option<String>,
    /// Read the samples from this file instead of playing.
    #[arg(long)]
    from: Option<String>,
    /// Write held-out heuristic samples (`score result`) to this file.
    #[arg(long)]
    heldout: Option<String>,
    /// At most this many lines in `--heldout`.
    #[arg(long, default_value_t = 600)]
    heldout_max: usize,
}

/// How a game ended for the side to move of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Result3 {
    Win,
    Draw,
    Loss,
}

impl Result3 {
    fn letter(self) -> char {
        match self {
            Result3::Win => 'W',
            Result3::Draw => 'D',
            Result3::Loss => 'L',
        }
    }

    fn from_letter(c: &str) -> Option<Result3> {
        match c {
            "W" => Some(Result3::Win),
            "D" => Some(Result3::Draw),
            "L" => Some(Result3::Loss),
            _ => None,
        }
    }

    fn index(self) -> usize {
        match self {
            Result3::Win => 0,
            Result3::Draw => 1,
            Result3::Loss => 2,
        }
    }
}

/// One searched position.
#[derive(Clone, Copy, Debug)]
struct Sample {
    game: usize,
    ply: usize,
    score: Score,
    proven: bool,
    result: Result3,
}

/// Plays one self-play game from `pos`; the samples of every searched position.
fn self_play<G: ServedGame>(
    mut pos: G,
    game: usize,
    limits: &dyn Fn() -> SearchLimits,
    table: &TranspositionTable,
) -> Vec<Sample> {
    table.clear();
    let mut seen: Vec<(usize, Side, Score, bool)> = Vec::new();
    let mut legal = Vec::new();
    let mut ply = 0;
    let winner = loop {
        match pos.status() {
            Status::Ongoing => {}
            Status::Draw => break None,
            Status::Lost => break Some(pos.side_to_move().other()),
        }
        legal.clear();
        pos.legal_moves(&mut legal);
        if legal.is_empty() {
            break None;
        }
        let report = search_at_level(
            &pos,
            &limits(),
            SearchOptions::default(),
            table,
            &Style::default(),
        );
        let mv = report.best_move.unwrap_or(Move::NONE);
        assert!(legal.contains(&mv), "an illegal move at ply {ply}");
        seen.push((
            ply,
            pos.side_to_move(),
            report.score,
            report.proof.is_some(),
        ));
        pos.make(mv);
        ply += 1;
    };
    seen.into_iter()
        .map(|(ply, side, score, proven)| Sample {
            game,
            ply,
            score,
            proven,
            result: match winner {
                None => Result3::Draw,
                Some(w) if w == side => Result3::Win,
                Some(_) => Result3::Loss,
            },
        })
        .collect()
}

fn empty<G: ServedGame>(rows: usize, cols: usize) -> G {
    let grid = Grid::empty(rows, cols);
    G::from_grid(&grid, None, &G::Rules::default()).expect("an empty board is a position")
}

/// Plays `plies` uniformly random moves (stopping early at a finished game).
fn random_plies<G: ServedGame>(pos: &mut G, plies: u64, rng: &mut SplitMix64) {
    let mut legal = Vec::new();
    for _ in 0..plies {
        if pos.status() != Status::Ongoing {
            return;
        }
        legal.clear();
        pos.legal_moves(&mut legal);
        if legal.is_empty() {
            return;
        }
        pos.make(legal[(rng.next_u64() % legal.len() as u64) as usize]);
    }
}

fn play(args: &Args) -> Vec<Sample> {
    let budget = Duration::from_millis(args.ms);
    let mut rng = SplitMix64::new(0x0005_EED0_F3D1);
    let mut samples = Vec::new();
    let openings = parse_openings(
        include_str!("../tests/data/gomoku/openings-tuning-100-15x15.txt"),
        15,
    )
    .expect("the committed openings read");
    let table = TranspositionTable::with_megabytes(16);
    for game in 0..args.games {
        let got = match args.game {
            GameName::Tictactoe => {
                let mut pos = empty::<TicTacToe>(3, 3);
                random_plies(&mut pos, rng.next_u64() % 4, &mut rng);
                self_play(pos, game, &|| SearchLimits::with_depth(2), &table)
            }
            GameName::Connect4 => {
                let mut pos = empty::<Connect4>(6, 7);
                random_plies(&mut pos, 2 + rng.next_u64() % 9, &mut rng);
                self_play(pos, game, &|| SearchLimits::with_budget(budget), &table)
            }
            GameName::Gomoku => {
                let mut pos = empty::<Gomoku>(15, 15);
                let opening = &openings[game % openings.len()];
                play_moves(&mut pos, &opening.stones).expect("the opening plays");
                self_play(pos, game, &|| SearchLimits::with_budget(budget), &table)
            }
        };
        let last = got.last().map(|s| s.result.letter()).unwrap_or('-');
        eprintln!(
            "game {game}: {} positions, first mover's result {last}",
            got.len()
        );
        samples.extend(got);
    }
    samples
}

/// The samples of a `--samples` file, and its first line (how they were made).
fn read_samples(path: &str) -> (Vec<Sample>, String) {
    let text = std::fs::read_to_string(path).expect("the samples file reads");
    let header = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("# ")
        .to_owned();
    let samples = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Sample {
                game: f[0].parse().expect("game"),
                ply: f[1].parse().expect("ply"),
                score: f[2].parse().expect("score"),
                proven: f[3] == "1",
                result: Result3::from_letter(f[4]).expect("W, D or L"),
            }
        })
        .collect();
    (samples, header)
}

/// The first line of a samples file: the game and how its samples were made.
fn samples_header(args: &Args, name: &str) -> String {
    let how = match args.game {
        GameName::Tictactoe => "searches capped at depth 2".to_owned(),
        _ => format!("{} ms a move", args.ms),
    };
    format!(
        "{name}: wdl_fit self-play samples, {} games, {how}: game ply score proven result",
        args.games
    )
}

/// Mean negative log-likelihood of `model` on `samples`.
fn nll(model: &WdlModel, samples: &[&Sample]) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| {
            -model.probabilities(s.score)[s.result.index()]
                .max(1e-9)
                .ln()
        })
        .sum();
    total / samples.len() as f64
}

/// Maximum-likelihood `margin` and `scale`: a grid, then a pattern search around its best.
fn fit(samples: &[&Sample], version: &'static str) -> WdlModel {
    let at = |margin: f64, scale: f64| WdlModel {
        version,
        margin,
        scale,
    };
    let mut best = (f64::INFINITY, 0.0, 1.0);
    let mut scale = 0.5;
    while scale < 20_000.0 {
        for step in 0..=40 {
            let margin = scale * f64::from(step) / 10.0;
            let loss = nll(&at(margin, scale), samples);
            if loss < best.0 {
                best = (loss, margin, scale);
            }
        }
        scale *= 1.1;
    }
    let (mut loss, mut margin, mut scale) = best;
    let mut step = 0.05;
    while step > 1e-4 {
        let mut moved = false;
        for (dm, ds) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            let m = (margin + dm * step * scale).max(0.0);
            let s = scale * (1.0 + ds * step);
            let l = nll(&at(m, s), samples);
            if l < loss {
                (loss, margin, scale, moved) = (l, m, s, true);
            }
        }
        if !moved {
            step /= 2.0;
        }
    }
    at(
        (margin * 10.0).round() / 10.0,
        (scale * 10.0).round() / 10.0,
    )
}

/// Mean Brier score (summed over the three results) of `predict` on `samples`.
fn brier(samples: &[&Sample], predict: impl Fn(Score) -> [f64; 3]) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| {
            let p = predict(s.score);
            (0..3)
                .map(|k| {
                    let o = if k == s.result.index() { 1.0 } else { 0.0 };
                    (p[k] - o) * (p[k] - o)
                })
                .sum::<f64>()
        })
        .sum();
    total / samples.len() as f64
}

fn main() {
    let args = Args::parse();
    let (shipped, name) = match args.game {
        GameName::Tictactoe => (wdl::TICTACTOE, "tictactoe"),
        GameName::Connect4 => (wdl::CONNECT4, "connect4"),
        GameName::Gomoku => (wdl::GOMOKU, "gomoku"),
    };
    let (samples, header) = match &args.from {
        Some(path) => read_samples(path),
        None => (play(&args), samples_header(&args, name)),
    };
    if let Some(path) = &args.samples {
        let mut text = format!("# {header}\n");
        for s in &samples {
            let _ = writeln!(
                text,
                "{} {} {} {} {}",
                s.game,
                s.ply,
                s.score,
                u8::from(s.proven),
                s.result.letter()
            );
        }
        std::fs::write(path, text).expect("the samples file writes");
    }
    let games = samples.iter().map(|s| s.game).max().map_or(0, |g| g + 1);
    let heuristic = |held: bool| -> Vec<&Sample> {
        samples
            .iter()
            .filter(|s| !s.proven && (s.game % 3 == 2) == held)
            .collect()
    };
    let (train, held) = (heuristic(false), heuristic(true));
    let proven = samples.iter().filter(|s| s.proven).count();
    println!(
        "{name}: {games} games, {} positions ({proven} proven, left out); fit on {} positions, \
         held out {}",
        samples.len(),
        train.len(),
        held.len()
    );
    if train.is_empty() || held.is_empty() {
        println!("too few heuristic positions to fit");
        return;
    }
    let model = fit(&train, shipped.version);
    println!(
        "fitted: margin {:.1}, scale {:.1} (shipped: margin {:.1}, scale {:.1})",
        model.margin, model.scale, shipped.margin, shipped.scale
    );
    let mut freq = [0.0; 3];
    for s in &train {
        freq[s.result.index()] += 1.0 / train.len() as f64;
    }
    println!(
        "Brier on the {} held-out positions: fitted {:.4}, shipped {:.4}, constant {:.4} \
         (fit games' frequencies W {:.3} D {:.3} L {:.3})",
        held.len(),
        brier(&held, |s| model.probabilities(s)),
        brier(&held, |s| shipped.probabilities(s)),
        brier(&held, |_| freq),
        freq[0],
        freq[1],
        freq[2]
    );
    println!(
        "\nheld-out calibration of the shipped model ({}):\n",
        shipped.version
    );
    println!("| predicted expected score | positions | predicted W / D / L | observed W / D / L |");
    println!("|---|---|---|---|");
    for bin in 0..10 {
        let lo = f64::from(bin) / 10.0;
        let in_bin: Vec<&&Sample> = held
            .iter()
            .filter(|s| {
                let p = shipped.probabilities(s.score);
                let e = p[0] + p[1] / 2.0;
                e >= lo && (e < lo + 0.1 || bin == 9)
            })
            .collect();
        if in_bin.is_empty() {
            continue;
        }
        let n = in_bin.len() as f64;
        let mut predicted = [0.0; 3];
        let mut observed = [0.0; 3];
        for s in &in_bin {
            let p = shipped.probabilities(s.score);
            for k in 0..3 {
                predicted[k] += p[k] / n;
            }
            observed[s.result.index()] += 1.0 / n;
        }
        println!(
            "| {:.1}-{:.1} | {} | {:.2} / {:.2} / {:.2} | {:.2} / {:.2} / {:.2} |",
            lo,
            lo + 0.1,
            in_bin.len(),
            predicted[0],
            predicted[1],
            predicted[2],
            observed[0],
            observed[1],
            observed[2]
        );
    }
    if let Some(path) = &args.heldout {
        let every = held.len().div_ceil(args.heldout_max.max(1)).max(1);
        let mut text = format!(
            "# {name}: held-out wdl_fit samples, 1 in {every} of the {} heuristic positions of \
             the games numbered 2 mod 3 (never fitted on): `score result`, the result W/D/L for \
             the side to move. From {header}\n",
            held.len(),
        );
        for s in held.iter().step_by(every) {
            let _ = writeln!(text, "{} {}", s.score, s.result.letter());
        }
        std::fs::write(path, text).expect("the held-out file writes");
    }
}
