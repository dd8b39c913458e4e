//! Fitting gomoku's evaluation to a strong engine's judgement, in two steps.
//!
//! `cargo run --release --example gomoku_eval_fit -- label GAMES.txt... --judge CMD [--ms 100]
//!  [--every 3] [--offset 0] [--until N] [--limit N] [--mates] > LABELS.txt`
//! samples positions from arena records (`kibitz arena --record`; every `--every`-th ply from
//! `--offset` plies after the opening to `--until` plies after it, each distinct position once)
//! and asks a piskvork engine for its score of each (the side to move's view, from its
//! `MESSAGE ... eval N` line, as `kibitz arena --judge` does). Positions the judge does not
//! score are left out, and so are those it calls a mate (`Eval +M9`) unless `--mates` keeps
//! them, written as 20,000 less the mate's plies (minus that when the side to move loses).
//! Output lines:
//! `score<TAB>x,y x,y ...<TAB>x,y` (the judge's score, the position, the judge's move).
//!
//! `cargo run --release --example gomoku_eval_fit -- outcomes GAMES.txt... [--every 1]
//!  [--skip-end 4] [--win 1000] > LABELS.txt`
//! labels positions by how their game ended instead (Texel's method): every `--every`-th
//! position from the opening to `--skip-end` plies before the end, scored `--win` when the side
//! to move went on to win, minus that when it lost, 0 for a draw. Meant for games between two
//! builds of kibitz (the result then says more of the position than of the players); `fit`
//! reads the output as any labels file, so the weights are fitted to predict results.
//!
//! `cargo run --release --example gomoku_eval_fit -- fit LABELS.txt... [--holdout 5]
//!  [--scale 200] [--l2 0.0001] [--transfer OTHER_LABELS.txt] [--quiet] [--min-stones N]
//!  [--max-stones N] [--mate-label S [--min-mate-plies P]]`
//! fits the evaluation's weights ([`kibitz::games::gomoku::eval`]) by least squares in
//! win-probability space: minimise the mean of (sigmoid(w.x / scale) - sigmoid(label / scale))^2
//! over the features x of each position, with every `--holdout`-th position kept out to report
//! the fit's error beside that of the weights in use, and, with `--transfer`, both errors on
//! positions of games from other openings (none of them fitted). Prints the weights as Rust.
//! `--quiet` keeps only the positions without a four or an open three on the board;
//! `--min-stones` and `--max-stones` the positions of one set of weights (each file's every
//! `--holdout`-th line is still counted among all its lines). A `--mates` mate is left out
//! (its score is beyond `--max-label`) unless `--mate-label` gives the score to read it as;
//! `--min-mate-plies` then keeps only the longer mates.
//!
//! `cargo run --release --example gomoku_eval_fit -- windows LABELS.txt... [--features
//!  eval|windows|both] [--l2 0.001] [--holdout 5] [--fold 0] [--max-train N] [--steps 1000]
//!  [--transfer OTHER_LABELS.txt] [--quiet]`
//! asks whether whole line patterns would judge positions better than the engine's counts of
//! pattern levels: `both` fits, beside the engine's features, a weight per line window and
//! role (the side to move's, its opponent's), a window being what one side sees along one line
//! from an empty cell up to four cells away until the first blocked one (about 725 of them
//! occur); `eval` fits the engine's features alone the same way. Whole games are held out
//! (every `--holdout`-th game, fold `--fold`), since neighbouring positions of one game share
//! most of their windows; `--max-train` takes the first N training positions (a learning
//! curve). Prints the errors of the fit and of the weights in use, on the held-out games and
//! on `--transfer`, and how widely the scores spread. The weights themselves are not printed:
//! the engine has no windows (what the experiment found is in docs/journal/gomoku.md).
//!
//! `cargo run --release --example gomoku_eval_fit -- blame GAMES.txt LABELS.txt`
//! says where kibitz's games went wrong by the judge's scores, from labels of every ply
//! (`label GAMES.txt --every 1`): how often kibitz played the judge's move, and in each lost
//! game the first position the judge calls forced (the first one the labels leave out), how
//! many plies after the opening it comes and the judge's score, kibitz's view, just before it.
//!
//! `cargo run --release --example gomoku_eval_fit -- compare A.txt B.txt [--scale 200]`
//! is the mean squared difference, in win-probability space, between two label files' scores
//! of the positions both label (the same games labelled at two budgets, or twice at one, show
//! how noisy the labels themselves are: the floor no evaluation fit can go below).
//!
//! `cargo run --release --example gomoku_eval_fit -- order LABELS.txt... [--holdout 5]
//!  [--l2 0.001] [--steps 600] [--from strength|in-use]`
//! fits the move order ([`kibitz::games::gomoku::move_order`]) to the judge's moves by softmax
//! regression over the moves the search would consider, from the hand-set strength (or the
//! order in use), at the temperature that suits the starting weights best, and prints how often
//! the hand-set strength, the order in use and the fit rank the judge's move first and among
//! the first 3, 8 and 12 on the held-out positions, then the fitted weights as Rust.
//!
//! Kept: `label` and `fit` make and refit the shipped weights, `order` the move order,
//! `windows` reproduces the figures on line windows, `blame` and `compare` reproduce the
//! figures on where games are lost and how noisy labels are. Two finished experiments were
//! removed once their findings were recorded in the benchmark figures: an older `order`
//! (2026-12-01: a move order fitted to the judge's moves in quiet positions, for the search of
//! then, played no better; the one above, for today's search, plays better) and `fit
//! --features cells|both|space` (richer evaluations: per-cell multisets of line levels, both
//! sets, each line's free room; none beat the engine's own features on unseen openings).
//! Their code is in the git history (`git log --
//! examples/gomoku_eval_fit.rs`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use kibitz::engine::{Game, Status};
use kibitz::games::gomoku::board::{self, Board, DIRECTIONS};
use kibitz::games::gomoku::eval;
use kibitz::games::gomoku::move_order;
use kibitz::games::gomoku::patterns::{FIVE, OPEN_FOUR};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::external::ExternalEngine;
use kibitz::tools::arena::openings::{parse_moves, play_moves};
use kibitz::tools::arena::record::{cells_text, read_records};
use kibitz::tools::arena::referee::Colour;

#[path = "shared/mate_label.rs"]
mod mate_label;
use mate_label::{MATE_LABEL, is_mate};

const SIZE: usize = 15;

#[derive(clap::Parser)]
#[command(
    about = "Fits gomoku's evaluation to a judge's scores or to game outcomes (see the module's documentation)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Labels positions of arena records with a piskvork judge's scores.
    Label(LabelArgs),
    /// Labels positions of arena records by how their game ended (Texel's method).
    Outcomes(OutcomesArgs),
    /// Fits the evaluation's weights to labels and prints them as Rust.
    Fit(FitArgs),
    /// Compares the engine's features with whole line windows (no weights printed).
    Windows(WindowsArgs),
    /// Says where kibitz's games went wrong by the judge's scores.
    Blame { games: String, labels: String },
    /// Fits the move order's weights (`gomoku::move_order`) to the judge's moves.
    Order(OrderArgs),
    /// The mean squared difference in win probability of two label files' common positions.
    Compare {
        first: String,
        second: String,
        #[arg(long, default_value_t = 200.0)]
        scale: f64,
    },
}

#[derive(clap::Args)]
struct LabelArgs {
    /// Arena records (`kibitz arena --record`).
    #[arg(required = true)]
    games: Vec<String>,
    /// The judge: a piskvork engine's command line.
    #[arg(long)]
    judge: String,
    /// The judge's time a position, in milliseconds.
    #[arg(long, default_value_t = 100)]
    ms: u64,
    /// Every this many plies after the opening.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Plies after the opening to start at (a second pass with `--offset 1` labels the plies a
    /// first `--every 2` pass skipped).
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Most positions labelled.
    #[arg(long, default_value_t = usize::MAX)]
    limit: usize,
    /// Plies after the opening to stop before (the first moves out of the opening only).
    #[arg(long, default_value_t = usize::MAX)]
    until: usize,
    /// Keep the positions the judge calls a mate, scored `MATE_LABEL` less the mate's plies
    /// (minus that for a loss): `fit` leaves them out unless `--mate-label` says what to read.
    #[arg(long)]
    mates: bool,
}

#[derive(clap::Args)]
struct OutcomesArgs {
    #[arg(required = true)]
    games: Vec<String>,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Plies before the game's end left out (the decided positions).
    #[arg(long, default_value_t = 4)]
    skip_end: usize,
    /// The label of a position whose mover went on to win.
    #[arg(long, default_value_t = 1000)]
    win: i32,
}

#[derive(clap::Args)]
struct FitArgs {
    #[arg(required = true)]
    labels: Vec<String>,
    /// Every this many positions are held out of the fit (0: none).
    #[arg(long, default_value_t = 5)]
    holdout: usize,
    #[arg(long, default_value_t = 200.0)]
    scale: f64,
    #[arg(long, default_value_t = 1e-4)]
    l2: f64,
    #[arg(long, default_value_t = 3000.0)]
    max_label: f64,
    /// Positions from other openings than the fitted ones: held-out lines are neighbours of
    /// fitted ones in the same games, so only these show how the fit transfers.
    #[arg(long)]
    transfer: Option<String>,
    /// Quiet positions only (no four or open three on the board for either side): the ones the
    /// search leaves to the evaluation alone.
    #[arg(long)]
    quiet: bool,
    /// Only positions with at least this many stones, and fewer than `--max-stones` (the
    /// evaluation has a set of weights for each side of `eval::EARLY_STONES`).
    #[arg(long, default_value_t = 0)]
    min_stones: u32,
    #[arg(long, default_value_t = u32::MAX)]
    max_stones: u32,
    /// Read a `label --mates` mate as this score (for the side to move, minus for a loss)
    /// instead of leaving it out.
    #[arg(long)]
    mate_label: Option<f64>,
    /// With `--mate-label`, only mates of at least this many plies (the short ones are the
    /// static win test's and the horizon's, not the evaluation's).
    #[arg(long, default_value_t = 0)]
    min_mate_plies: i32,
}

#[derive(clap::Args)]
struct OrderArgs {
    #[arg(required = true)]
    labels: Vec<String>,
    /// Every this many positions are held out of the fit.
    #[arg(long, default_value_t = 5)]
    holdout: usize,
    /// Pull of each weight towards its starting value (`--from`) (per squared unit of log-odds).
    #[arg(long, default_value_t = 1e-3)]
    l2: f64,
    #[arg(long, default_value_t = 600)]
    steps: i32,
    /// Where the fit starts, and what `--l2` pulls towards: the hand-set strength, or the
    /// fitted order the engine uses now (to refit it with more labels).
    #[arg(long, value_enum, default_value_t = OrderStart::Strength)]
    from: OrderStart,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OrderStart {
    Strength,
    InUse,
}

#[derive(clap::Args)]
struct WindowsArgs {
    #[arg(required = true)]
    labels: Vec<String>,
    #[arg(long, default_value_t = 5)]
    holdout: usize,
    /// Which of the `holdout` folds of games is held out (0 to holdout - 1): running all of
    /// them is a cross-validation, and shows how much the held-out error depends on the games.
    #[arg(long, default_value_t = 0)]
    fold: usize,
    #[arg(long, value_enum, default_value_t = WindowFeatures::Both)]
    features: WindowFeatures,
    #[arg(long, default_value_t = 1e-3)]
    l2: f64,
    #[arg(long, default_value_t = 1000)]
    steps: i32,
    #[arg(long, default_value_t = 200.0)]
    scale: f64,
    #[arg(long, default_value_t = usize::MAX)]
    max_train: usize,
    #[arg(long, default_value_t = 3000.0)]
    max_label: f64,
    #[arg(long)]
    transfer: Option<String>,
    #[arg(long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WindowFeatures {
    Eval,
    Windows,
    Both,
}

fn outcomes(args: &OutcomesArgs) -> anyhow::Result<()> {
    let (every, skip_end, win) = (args.every as usize, args.skip_end, args.win);
    for file in &args.games {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        for game in read_records(&text, SIZE)? {
            let last = game.stones.len().saturating_sub(skip_end);
            for plies in (game.opening.len()..last).step_by(every) {
                let mover = if plies % 2 == 0 {
                    Colour::Black
                } else {
                    Colour::White
                };
                let score = match game.winner {
                    Some(colour) if colour == mover => win,
                    Some(_) => -win,
                    None => 0,
                };
                println!("{score}\t{}", cells_text(&game.stones[..plies]));
            }
        }
    }
    Ok(())
}

fn label(args: &LabelArgs) -> anyhow::Result<()> {
    let (ms, every, offset, limit) = (args.ms, args.every as usize, args.offset, args.limit);
    let mut engine = ExternalEngine::start(&args.judge, Duration::from_millis(30))?;
    let mut seen = HashSet::new();
    let mut labelled = 0;
    for file in &args.games {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        for game in read_records(&text, SIZE)? {
            let moves = &game.stones;
            let end = moves
                .len()
                .min(game.opening.len().saturating_add(args.until));
            for plies in (game.opening.len() + offset..end).step_by(every) {
                if labelled >= limit {
                    return Ok(());
                }
                let stones = &moves[..plies];
                // A position is its two stone sets: the same stones in another order repeat it.
                let mut key: Vec<(bool, (usize, usize))> = stones
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| (i % 2 == 0, s))
                    .collect();
                key.sort_unstable();
                if !seen.insert(key) {
                    continue;
                }
                let mut position = Gomoku::new(SIZE, SIZE, GomokuRules::default())?;
                play_moves(&mut position, stones)?;
                if position.status() != Status::Ongoing {
                    continue;
                }
                let (chosen, score) = match engine.judge_with_move(SIZE, stones, ms) {
                    Ok(answer) => answer,
                    Err(fault) => {
                        eprintln!("judge failed ({fault}); restarting it");
                        engine = ExternalEngine::start(&args.judge, Duration::from_millis(30))?;
                        continue;
                    }
                };
                let mate = engine.reported_mate().filter(|_| args.mates);
                let score = score.or(mate.map(|plies| plies.signum() * (MATE_LABEL - plies.abs())));
                if let Some(score) = score {
                    let (x, y) = chosen;
                    println!("{score}\t{}\t{x},{y}", cells_text(stones));
                    labelled += 1;
                }
            }
        }
    }
    Ok(())
}

/// A label's score as `fit` reads it: a number as it is; a mate (`MATE_LABEL` less its
/// plies) as `--mate-label` if it is at least `--min-mate-plies` long, else left out (`None`);
/// without `--mate-label` a mate stays as written and `--max-label` leaves it out.
fn mate_as_label(score: f64, args: &FitArgs) -> Option<f64> {
    let Some(mate_label) = args.mate_label else {
        return Some(score);
    };
    if !is_mate(score) {
        return Some(score);
    }
    let plies = f64::from(MATE_LABEL) - score.abs();
    (plies >= f64::from(args.min_mate_plies)).then_some(score.signum() * mate_label)
}

/// One line of a labels file (`label`'s output).
struct Label {
    /// Line number in its file: every `--holdout`-th is held out.
    line: usize,
    score: f64,
    position: Gomoku,
}

/// Every labelled position of `file`.
fn read_labels(file: &str) -> anyhow::Result<Vec<Label>> {
    let mut labels = Vec::new();
    for (line, (score, moves, _)) in label_lines(file)?.into_iter().enumerate() {
        let mut position = Gomoku::new(SIZE, SIZE, GomokuRules::default())?;
        play_moves(&mut position, &parse_moves(&moves, SIZE)?)?;
        labels.push(Label {
            line,
            score,
            position,
        });
    }
    Ok(labels)
}

/// The lines of a labels file as text: (score, the position's moves, the judge's move).
/// Lines without a score and a position are skipped.
fn label_lines(file: &str) -> anyhow::Result<Vec<(f64, String, Option<String>)>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    let mut out = Vec::new();
    for text in text.lines() {
        let mut fields = text.split('\t');
        let (Some(score), Some(moves)) = (fields.next(), fields.next()) else {
            continue;
        };
        out.push((
            score.trim().parse()?,
            moves.to_string(),
            fields.next().map(str::to_string),
        ));
    }
    Ok(out)
}

/// Adam (Kingma and Ba), the fit's optimiser.
struct Adam {
    rate: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    steps: i32,
}

impl Adam {
    fn new(rate: f64, n: usize) -> Self {
        Adam {
            rate,
            m: vec![0.0; n],
            v: vec![0.0; n],
            steps: 0,
        }
    }

    /// One step against `grad` (already averaged), with an L2 penalty `l2` on `w`.
    fn step(&mut self, w: &mut [f64], grad: &[f64], l2: f64) {
        let (b1, b2) = (0.9f64, 0.999f64);
        self.steps += 1;
        for j in 0..w.len() {
            let g = grad[j] + l2 * w[j];
            self.m[j] = b1 * self.m[j] + (1.0 - b1) * g;
            self.v[j] = b2 * self.v[j] + (1.0 - b2) * g * g;
            let mh = self.m[j] / (1.0 - b1.powi(self.steps));
            let vh = self.v[j] / (1.0 - b2.powi(self.steps));
            w[j] -= self.rate * mh / (vh.sqrt() + 1e-9);
        }
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn fit(args: &FitArgs) -> anyhow::Result<()> {
    let (holdout, scale, l2, max_label) = (args.holdout, args.scale, args.l2, args.max_label);
    let quiet_only = args.quiet;
    let empty = Gomoku::new(SIZE, SIZE, GomokuRules::default())?;
    let n_features = features(&empty).len();
    let mut train = Vec::new();
    let mut test = Vec::new();
    let mut transfer = Vec::new();
    let mut sources: Vec<(String, bool)> = args.labels.iter().map(|f| (f.clone(), false)).collect();
    if let Some(transfer_file) = &args.transfer {
        sources.push((transfer_file.clone(), true));
    }
    for (file, is_transfer) in sources {
        for Label {
            line,
            score,
            position,
        } in read_labels(&file)?
        {
            let Some(score) = mate_as_label(score, args) else {
                continue;
            };
            let stones = position.board().stones;
            if score.abs() > max_label
                || (quiet_only && !is_quiet(&position))
                || !(args.min_stones..args.max_stones).contains(&stones)
            {
                continue;
            }
            let x = features(&position);
            let sample = (x, sigmoid(score / scale), position.evaluate() as f64);
            if is_transfer {
                transfer.push(sample);
            } else if holdout > 0 && line % holdout == 0 {
                test.push(sample);
            } else {
                train.push(sample);
            }
        }
    }
    if train.is_empty() {
        bail!("no labelled positions");
    }
    // Feature scales, so that one learning rate suits counts of very different sizes.
    let mut spread = vec![1.0f64; n_features];
    for (j, s) in spread.iter_mut().enumerate() {
        let mean_sq = train.iter().map(|(x, _, _)| x[j] * x[j]).sum::<f64>() / train.len() as f64;
        *s = mean_sq.sqrt().max(1e-3);
    }
    // Adam on the mean squared error in probability space, in scaled coordinates.
    let mut w = vec![0.0f64; n_features];
    let mut adam = Adam::new(0.01, n_features);
    let error = |w: &[f64], data: &[(Vec<f64>, f64, f64)]| {
        data.iter()
            .map(|(x, y, _)| {
                let z: f64 = x
                    .iter()
                    .zip(w)
                    .zip(&spread)
                    .map(|((a, b), s)| a / s * b)
                    .sum();
                (sigmoid(z) - y).powi(2)
            })
            .sum::<f64>()
            / data.len() as f64
    };
    for step in 1..=3000 {
        let mut grad = vec![0.0f64; n_features];
        for (x, y, _) in &train {
            let z: f64 = x
                .iter()
                .zip(&w)
                .zip(&spread)
                .map(|((a, b), s)| a / s * b)
                .sum();
            let p = sigmoid(z);
            let g = 2.0 * (p - y) * p * (1.0 - p);
            for j in 0..n_features {
                grad[j] += g * x[j] / spread[j];
            }
        }
        grad.iter_mut().for_each(|g| *g /= train.len() as f64);
        adam.step(&mut w, &grad, l2);
        if step % 500 == 0 {
            eprintln!(
                "step {step}: train {:.5} test {:.5}",
                error(&w, &train),
                error(&w, &test)
            );
        }
    }
    let weights: Vec<i32> = w
        .iter()
        .zip(&spread)
        .map(|(b, s)| (b / s * scale * eval::WEIGHT_UNIT as f64).round() as i32)
        .collect();
    let in_use = |data: &[(Vec<f64>, f64, f64)]| {
        data.iter()
            .map(|(_, y, e)| (sigmoid(e / scale) - y).powi(2))
            .sum::<f64>()
            / data.len().max(1) as f64
    };
    let constant = |data: &[(Vec<f64>, f64, f64)]| {
        let mean = train.iter().map(|(_, y, _)| y).sum::<f64>() / train.len() as f64;
        data.iter().map(|(_, y, _)| (mean - y).powi(2)).sum::<f64>() / data.len().max(1) as f64
    };
    let rounded: Vec<f64> = weights
        .iter()
        .zip(&spread)
        .map(|(&w, s)| w as f64 / (scale * eval::WEIGHT_UNIT as f64) * s)
        .collect();
    println!(
        "positions: {} train, {} held out; held-out error: fit {:.5} (rounded {:.5}), \
         weights in use {:.5} (full evaluation), constant {:.5}",
        train.len(),
        test.len(),
        error(&w, &test),
        error(&rounded, &test),
        in_use(&test),
        constant(&test)
    );
    if !transfer.is_empty() {
        println!(
            "transfer positions: {}; error: fit {:.5}, weights in use {:.5}, constant {:.5}",
            transfer.len(),
            error(&rounded, &transfer),
            in_use(&transfer),
            constant(&transfer)
        );
    }
    println!("{}", eval::describe(&weights));
    Ok(())
}

/// The hand-set strength's weights (the fit's usual starting point) in one vector, in the
/// order of [`order_features`]: the mover's level weights, its shape weights, then the
/// opponent's (the defence's).
fn order_strength() -> Vec<f64> {
    order_vector([
        &move_order::STRENGTH_ATTACK,
        &move_order::STRENGTH_SHAPE_ATTACK,
        &move_order::STRENGTH_DEFENCE,
        &move_order::STRENGTH_SHAPE_DEFENCE,
    ])
}

/// The fitted order the engine uses now, laid out as [`order_strength`].
fn order_in_use() -> Vec<f64> {
    order_vector([
        &move_order::ORDER_ATTACK,
        &move_order::ORDER_SHAPE_ATTACK,
        &move_order::ORDER_DEFENCE,
        &move_order::ORDER_SHAPE_DEFENCE,
    ])
}

/// Four weight tables of eight (attack levels, attack shapes, defence levels, defence shapes)
/// as one vector.
fn order_vector(parts: [&[i32; 8]; 4]) -> Vec<f64> {
    parts
        .into_iter()
        .flatten()
        .copied()
        .map(f64::from)
        .collect()
}

/// Which of [`order_strength`] the fit moves: the levels from two to four and the shapes but
/// the double four; none, open four, five and the double four are wins or nothing, kept.
fn order_free(j: usize) -> bool {
    let (part, i) = (j / 8, j % 8);
    if part % 2 == 0 {
        (1..=5).contains(&i)
    } else {
        i != 0 && i != board::DOUBLE_FOUR
    }
}

/// The move order's features of `cell` for `mover`: per side, the count of each level over
/// the four directions and the shape class, as [`order_strength`] reads them.
fn order_features(board: &Board, cell: usize, mover: usize) -> [f64; 32] {
    let mut x = [0.0; 32];
    for (part, side) in [mover, 1 - mover].into_iter().enumerate() {
        for level in board.levels(cell, side) {
            x[16 * part + usize::from(level)] += 1.0;
        }
        x[16 * part + 8 + usize::from(board.shape(cell, side))] += 1.0;
    }
    x
}

/// One position for `order`: the features of each move the search would order, which of them
/// the judge played, and the position's stones.
struct OrderChoice {
    moves: Vec<[f64; 32]>,
    chosen: usize,
    stones: u32,
}

/// Minus the log-probability of the judge's move when moves are drawn with probabilities
/// proportional to exp(hint / temperature), with its gradient added to `grad` if given.
fn order_loss(w: &[f64], temperature: f64, c: &OrderChoice, grad: Option<&mut [f64]>) -> f64 {
    let z: Vec<f64> = c
        .moves
        .iter()
        .map(|x| x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / temperature)
        .collect();
    let top = z.iter().cloned().fold(f64::MIN, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - top).exp()).collect();
    let sum: f64 = e.iter().sum();
    if let Some(grad) = grad {
        for (k, x) in c.moves.iter().enumerate() {
            let p = e[k] / sum - f64::from(u8::from(k == c.chosen));
            for (g, a) in grad.iter_mut().zip(x) {
                *g += p * a / temperature;
            }
        }
    }
    -(z[c.chosen] - top - sum.ln())
}

/// The judge's move's rank among the moves ordered by `w` (ties count against it).
fn order_rank(w: &[f64], c: &OrderChoice) -> usize {
    let hint = |x: &[f64; 32]| x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
    let chosen = hint(&c.moves[c.chosen]);
    c.moves
        .iter()
        .enumerate()
        .filter(|&(k, x)| k != c.chosen && hint(x) >= chosen)
        .count()
}

/// Fits the move order to the judge's moves by softmax regression, from the hand-set strength
/// or the order in use (`--from`), at the temperature that suits the starting weights best (so
/// the fitted hints stay on a scale near theirs), and prints the ranks of the judge's move by
/// the hand-set strength, the order in use and the fit on the held-out positions.
fn order(args: &OrderArgs) -> anyhow::Result<()> {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for file in &args.labels {
        for (line, (_, moves, chosen)) in label_lines(file)?.into_iter().enumerate() {
            let mut position = Gomoku::new(SIZE, SIZE, GomokuRules::default())?;
            play_moves(&mut position, &parse_moves(&moves, SIZE)?)?;
            let Some(&(x, y)) = parse_moves(chosen.as_deref().unwrap_or(""), SIZE)?.first() else {
                continue;
            };
            let mut candidates = Vec::new();
            position.search_moves(&mut candidates);
            let Some(chosen) = candidates.iter().position(|m| m.index() == y * SIZE + x) else {
                continue;
            };
            if candidates.len() < 2 {
                continue;
            }
            let (board, mover) = (position.board(), position.side_to_move().index());
            let choice = OrderChoice {
                moves: candidates
                    .iter()
                    .map(|m| order_features(board, m.index(), mover))
                    .collect(),
                chosen,
                stones: board.stones,
            };
            if line % args.holdout == 0 {
                test.push(choice);
            } else {
                train.push(choice);
            }
        }
    }
    if train.is_empty() {
        bail!("no labelled positions with a judge's move among the search's moves");
    }
    let (strength, in_use) = (order_strength(), order_in_use());
    let start = match args.from {
        OrderStart::Strength => strength.clone(),
        OrderStart::InUse => in_use.clone(),
    };
    let mean_loss = |w: &[f64], t: f64, data: &[OrderChoice]| {
        data.iter().map(|c| order_loss(w, t, c, None)).sum::<f64>() / data.len().max(1) as f64
    };
    let temperature = [
        10.0, 20.0, 40.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0, 640.0, 960.0, 1280.0,
    ]
    .into_iter()
    .min_by(|&a, &b| mean_loss(&start, a, &train).total_cmp(&mean_loss(&start, b, &train)))
    .unwrap_or(40.0);
    let mut w = start.clone();
    let mut adam = Adam::new(2.0, w.len());
    for step in 1..=args.steps {
        let mut grad = vec![0.0; w.len()];
        for c in &train {
            order_loss(&w, temperature, c, Some(&mut grad));
        }
        for (j, g) in grad.iter_mut().enumerate() {
            *g = if order_free(j) {
                *g / train.len() as f64
                    + 2.0 * args.l2 * (w[j] - start[j]) / (temperature * temperature)
            } else {
                0.0
            };
        }
        adam.step(&mut w, &grad, 0.0);
        if step % 100 == 0 {
            eprintln!(
                "step {step}: train {:.4} test {:.4}",
                mean_loss(&w, temperature, &train),
                mean_loss(&w, temperature, &test)
            );
        }
    }
    let fitted: Vec<f64> = w.iter().map(|v| v.round()).collect();
    println!(
        "positions: {} train, {} held out; from {:?}, temperature {temperature}; held-out loss: \
         start {:.4}, fitted {:.4}",
        train.len(),
        test.len(),
        args.from,
        mean_loss(&start, temperature, &test),
        mean_loss(&fitted, temperature, &test)
    );
    for (name, lo, hi) in [
        ("all", 0, u32::MAX),
        ("under 15 stones", 0, 15),
        ("15 to 23", 15, 24),
        ("24 or more", 24, u32::MAX),
    ] {
        let part: Vec<&OrderChoice> = test
            .iter()
            .filter(|c| (lo..hi).contains(&c.stones))
            .collect();
        for (label, weights) in [
            ("strength", &strength),
            ("in use", &in_use),
            ("fitted", &fitted),
        ] {
            let ranks: Vec<usize> = part.iter().map(|c| order_rank(weights, c)).collect();
            let share = |k: usize| {
                100.0 * ranks.iter().filter(|&&r| r < k).count() as f64 / ranks.len().max(1) as f64
            };
            println!(
                "{name:>16} ({:>5}) {label:>8}: the judge's move first {:.1} %, top 3 {:.1} %, top 8 {:.1} %, top 12 {:.1} %",
                part.len(),
                share(1),
                share(3),
                share(8),
                share(12)
            );
        }
    }
    let names = [
        "ORDER_ATTACK",
        "ORDER_SHAPE_ATTACK",
        "ORDER_DEFENCE",
        "ORDER_SHAPE_DEFENCE",
    ];
    for (name, part) in names.iter().zip(fitted.chunks(8)) {
        let values: Vec<String> = part.iter().map(|v| format!("{}", *v as i64)).collect();
        println!("{name}: [{}]", values.join(", "));
    }
    Ok(())
}

/// Whether neither side has a four or an open three on the board (`--quiet`: the positions
/// the search leaves to the evaluation alone).
fn is_quiet(position: &Gomoku) -> bool {
    let board = position.board();
    (0..2).all(|side| {
        board.level_count[side][FIVE as usize] + board.level_count[side][OPEN_FOUR as usize] == 0
    })
}

/// The evaluation's features of `position`, for its side to move ([`eval::features`]).
fn features(position: &Gomoku) -> Vec<f64> {
    eval::features(position.board(), position.side_to_move().index())
        .iter()
        .map(|&f| f as f64)
        .collect()
}

/// A labelled position for `windows`, its features as (index, count) pairs: the engine's
/// (indices below [`eval::FEATURES`]) and one per line window key ([`line_windows`]) and role
/// after them.
struct SparseSample {
    /// Its game's number among all the fitted files' games.
    game: usize,
    x: Vec<(usize, f64)>,
    y: f64,
    in_use: f64,
}

/// Window keys are below this: two half codes of 31 values, the smaller first.
const WINDOW_KEYS: usize = 32 * 32;

/// One half of a line window seen from an empty cell for one side: the cells up to four away
/// until the first blocked one (the other side's stone or the edge), as one of 31 codes,
/// `2^len - 1 + bits` (its open length, then which of those cells hold the side's stones).
fn half_window(board: &Board, cell: usize, (dr, dc): (i32, i32), own: u8) -> usize {
    let (rows, cols) = (board.geo.rows as i32, board.geo.cols as i32);
    let (r, c) = ((cell as i32) / cols, (cell as i32) % cols);
    let (mut bits, mut len) = (0, 0);
    for i in 1..=4 {
        let (rr, cc) = (r + i * dr, c + i * dc);
        if rr < 0 || cc < 0 || rr >= rows || cc >= cols {
            break;
        }
        let stone = board.cells[(rr * cols + cc) as usize];
        if stone != 0 && stone != own {
            break;
        }
        if stone == own {
            bits |= 1 << (i - 1);
        }
        len = i as usize;
    }
    (1 << len) - 1 + bits
}

/// Calls `count(role, key)` for every (empty cell, direction, side) window of `board` holding
/// a stone of that side: role 0 for the side to move's windows, 1 for the opponent's; the key
/// is both halves in increasing order, so a line and its mirror image share it. Stones past a
/// blocked cell cannot change what the line becomes, so they are not part of it.
fn line_windows(board: &Board, mover: usize, mut count: impl FnMut(usize, usize)) {
    let bare = |half: usize| (half + 1).is_power_of_two();
    for cell in 0..board.cells.len() {
        if board.cells[cell] != 0 {
            continue;
        }
        for &(dr, dc) in DIRECTIONS.iter() {
            for (role, side) in [(0, mover), (1, 1 - mover)] {
                let own = side as u8 + 1;
                let a = half_window(board, cell, (dr, dc), own);
                let b = half_window(board, cell, (-dr, -dc), own);
                if !(bare(a) && bare(b)) {
                    count(role, a.min(b) * 32 + a.max(b));
                }
            }
        }
    }
}

fn windows(args: &WindowsArgs) -> anyhow::Result<()> {
    let (holdout, fold, l2, steps, scale) =
        (args.holdout, args.fold, args.l2, args.steps, args.scale);
    let (max_train, max_label, quiet_only) = (args.max_train, args.max_label, args.quiet);
    let kind = args.features;
    if holdout > 0 && fold >= holdout {
        bail!("--fold {fold}: use 0 to {}", holdout - 1);
    }
    let read = |file: &str| -> anyhow::Result<Vec<SparseSample>> {
        let mut out = Vec::new();
        let (mut game, mut last) = (0, u32::MAX);
        for Label {
            score, position, ..
        } in read_labels(file)?
        {
            let board = position.board();
            // A label file lists each game's positions in order, so fewer stones start a game.
            if board.stones <= last {
                game += 1;
            }
            last = board.stones;
            if score.abs() > max_label || (quiet_only && !is_quiet(&position)) {
                continue;
            }
            let mover = position.side_to_move().index();
            // Ordered by index, so that every run sums the same terms in the same order.
            let mut x: BTreeMap<usize, f64> = BTreeMap::new();
            if kind == WindowFeatures::Windows {
                // The engine's first feature is the constant (tempo): windows alone keep it.
                x.insert(0, 1.0);
            } else {
                for (j, &f) in eval::features(board, mover).iter().enumerate() {
                    if f != 0 {
                        x.insert(j, f as f64);
                    }
                }
            }
            if kind != WindowFeatures::Eval {
                line_windows(board, mover, |role, key| {
                    *x.entry(eval::FEATURES + role * WINDOW_KEYS + key)
                        .or_default() += 1.0;
                });
            }
            out.push(SparseSample {
                game,
                x: x.into_iter().collect(),
                y: sigmoid(score / scale),
                in_use: sigmoid(position.evaluate() as f64 / scale),
            });
        }
        Ok(out)
    };
    let (mut train, mut test) = (Vec::new(), Vec::new());
    let mut games_before = 0;
    for file in &args.labels {
        let samples = read(file)?;
        let games = samples.last().map_or(0, |s| s.game);
        for mut sample in samples {
            sample.game += games_before;
            // Whole games are held out: a game's other positions share most of its shapes, so
            // holding out single positions rewards memorising games.
            if holdout > 0 && sample.game % holdout == fold {
                test.push(sample);
            } else if train.len() < max_train {
                train.push(sample);
            }
        }
        games_before += games;
    }
    let transfer = match &args.transfer {
        Some(file) => read(file)?,
        None => Vec::new(),
    };
    if train.is_empty() {
        bail!("no labelled positions");
    }
    let n = eval::FEATURES + 2 * WINDOW_KEYS;
    let mut spread = vec![0.0f64; n];
    let mut seen = vec![false; n];
    for sample in &train {
        for &(j, v) in &sample.x {
            spread[j] += v * v;
            seen[j] = true;
        }
    }
    spread
        .iter_mut()
        .for_each(|s| *s = (*s / train.len() as f64).sqrt().max(1e-3));
    let predict =
        |w: &[f64], s: &SparseSample| sigmoid(s.x.iter().map(|&(j, v)| v / spread[j] * w[j]).sum());
    let error = |w: &[f64], data: &[SparseSample]| {
        data.iter()
            .map(|s| (predict(w, s) - s.y).powi(2))
            .sum::<f64>()
            / data.len().max(1) as f64
    };
    let in_use = |data: &[SparseSample]| {
        data.iter().map(|s| (s.in_use - s.y).powi(2)).sum::<f64>() / data.len().max(1) as f64
    };
    let mut w = vec![0.0f64; n];
    let mut adam = Adam::new(0.01, n);
    for step in 1..=steps {
        let mut grad = vec![0.0f64; n];
        for s in &train {
            let p = predict(&w, s);
            let g = 2.0 * (p - s.y) * p * (1.0 - p);
            for &(j, v) in &s.x {
                grad[j] += g * v / spread[j];
            }
        }
        grad.iter_mut().for_each(|g| *g /= train.len() as f64);
        adam.step(&mut w, &grad, l2);
        if step % 250 == 0 {
            eprintln!(
                "step {step}: train {:.5} held-out games {:.5}",
                error(&w, &train),
                error(&w, &test)
            );
        }
    }
    let used = seen.iter().filter(|&&b| b).count();
    // How far from even the scores spread (root mean square, in score points), fitted and in
    // use: the search's margins and threat bonuses are set to the engine's spread, so a fit
    // that shrinks it plays differently for that alone.
    let logit = |p: f64| {
        let p = p.clamp(1e-9, 1.0 - 1e-9);
        (p / (1.0 - p)).ln() * scale
    };
    let rms = |scores: Vec<f64>| {
        (scores.iter().map(|x| x * x).sum::<f64>() / scores.len().max(1) as f64).sqrt()
    };
    let fitted_rms = rms(test.iter().map(|s| logit(predict(&w, s))).collect());
    let in_use_rms = rms(test.iter().map(|s| logit(s.in_use)).collect());
    println!(
        "features {}, {used} weights: {} train, {} in held-out games, {} transfer; held-out \
         error: fit {:.5}, weights in use {:.5}; transfer error: fit {:.5}, weights in use \
         {:.5}; score spread in held-out games: fit {fitted_rms:.0}, in use {in_use_rms:.0}",
        format!("{kind:?}").to_lowercase(),
        train.len(),
        test.len(),
        transfer.len(),
        error(&w, &test),
        in_use(&test),
        error(&w, &transfer),
        in_use(&transfer)
    );
    Ok(())
}

/// `compare A.txt B.txt`: see the module's documentation.
fn compare(first: &str, second: &str, scale: f64) -> anyhow::Result<()> {
    let scores = |file: &str| -> anyhow::Result<HashMap<String, f64>> {
        Ok(label_lines(file)?
            .into_iter()
            .map(|(score, moves, _)| (moves, score))
            .collect())
    };
    let (a, b) = (scores(first)?, scores(second)?);
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|(position, &x)| b.get(position).map(|&y| (x, y)))
        .collect();
    if pairs.is_empty() {
        bail!("no position is labelled in both files");
    }
    let error = pairs
        .iter()
        .map(|&(x, y)| (sigmoid(x / scale) - sigmoid(y / scale)).powi(2))
        .sum::<f64>()
        / pairs.len() as f64;
    println!(
        "positions in both: {}; mean squared difference in win probability: {error:.5}",
        pairs.len()
    );
    Ok(())
}

/// `blame`: see the module's documentation.
fn blame(games_file: &str, labels_file: &str) -> anyhow::Result<()> {
    // Labels by their position text: (judge's score, judge's move). A `--mates` mate counts as
    // left out: the first forced position is the first one without a score.
    let labels: HashMap<String, (f64, Option<String>)> = label_lines(labels_file)?
        .into_iter()
        .filter(|(score, _, _)| !is_mate(*score))
        .map(|(score, moves, chosen)| (moves, (score, chosen)))
        .collect();
    let text =
        std::fs::read_to_string(games_file).with_context(|| format!("reading {games_file}"))?;
    let (mut won, mut lost, mut drawn) = (0, 0, 0);
    let (mut agreed, mut judged) = (0, 0);
    // Per lost game: plies after the opening of the first forced position, and the score
    // before it (None when the first position after the opening is already forced).
    let mut forced: Vec<(usize, Option<i32>)> = Vec::new();
    for game in read_records(&text, SIZE)? {
        let kibitz = if game.black.starts_with("kibitz") {
            Colour::Black
        } else {
            Colour::White
        };
        match game.winner {
            Some(w) if w == kibitz => won += 1,
            Some(_) => lost += 1,
            None => drawn += 1,
        }
        let opening = game.opening.len();
        let mut before = None;
        for ply in opening..game.stones.len() {
            let Some((score, chosen)) = labels.get(&cells_text(&game.stones[..ply])) else {
                if game.winner == Some(kibitz.other()) {
                    forced.push((ply - opening, before));
                }
                break;
            };
            // Black plays the even plies (0-based).
            let kibitz_to_move = (ply % 2 == 0) == (kibitz == Colour::Black);
            if kibitz_to_move {
                judged += 1;
                let played = cells_text(&game.stones[ply..=ply]);
                agreed += usize::from(chosen.as_deref() == Some(played.as_str()));
            }
            let score = *score as i32;
            before = Some(if kibitz_to_move { score } else { -score });
        }
    }
    println!("games: {won} won, {lost} lost, {drawn} drawn");
    println!(
        "kibitz played the judge's move in {agreed} of {judged} labelled positions ({:.1} %)",
        100.0 * agreed as f64 / judged.max(1) as f64
    );
    let mut plies: Vec<usize> = forced.iter().map(|&(p, _)| p).collect();
    plies.sort_unstable();
    if let Some(median) = plies.get(plies.len() / 2) {
        println!(
            "lost games with a forced position: {}; plies after the opening: median {median}, all {plies:?}",
            plies.len()
        );
    }
    // Score bands, each `lowest..above`.
    let bands = [
        ("0 or better", 0, i32::MAX),
        ("-1 to -149", -149, 0),
        ("-150 to -299", -299, -149),
        ("-300 or worse", i32::MIN, -299),
    ];
    let scored: Vec<i32> = forced.iter().filter_map(|&(_, s)| s).collect();
    let counts: Vec<String> = bands
        .iter()
        .map(|&(name, lowest, above)| {
            let n = scored
                .iter()
                .filter(|&&s| (lowest..above).contains(&s))
                .count();
            format!("{name}: {n}")
        })
        .collect();
    println!(
        "the judge's score just before (kibitz's view): {}; none before: {}",
        counts.join(", "),
        forced.len() - scored.len()
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Label(args) => label(&args),
        Command::Outcomes(args) => outcomes(&args),
        Command::Fit(args) => fit(&args),
        Command::Windows(args) => windows(&args),
        Command::Order(args) => order(&args),
        Command::Blame { games, labels } => blame(&games, &labels),
        Command::Compare {
            first,
            second,
            scale,
        } => compare(&first, &second, scale),
    }
}
