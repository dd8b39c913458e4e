//! Fitting gomoku's evaluation to a strong engine's judgement, in two steps.
//!
//! `cargo run --release --example gomoku_eval_fit -- label GAMES.txt... --judge CMD [--ms 100]
//!  [--every 3] [--offset 0] [--limit N] > LABELS.txt`
//! samples positions from arena records (`kibitz arena --record`; every `--every`-th ply from
//! `--offset` plies after the opening, each distinct position once) and asks a piskvork engine
//! for its score of each (the side to move's view, from its `MESSAGE ... eval N` line, as
//! `kibitz arena --judge` does). Positions the judge calls a mate, or does not score, are left out: forced wins belong
//! to the threat search, not to the evaluation. Output lines:
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
//! `cargo run --release --example gomoku_eval_fit -- fit LABELS.txt [--holdout 5]
//!  [--scale 200] [--l2 0.0001] [--transfer OTHER_LABELS.txt] [--quiet]`
//! fits the evaluation's weights ([`kibitz::games::gomoku::eval`]) by least squares in
//! win-probability space: minimise the mean of (sigmoid(w.x / scale) - sigmoid(label / scale))^2
//! over the features x of each position, with every `--holdout`-th position kept out to report
//! the fit's error beside that of the weights in use, and, with `--transfer`, both errors on
//! positions of games from other openings (none of them fitted). Prints the weights as Rust.
//! `--quiet` keeps only the positions without a four or an open three on the board.
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
//! Kept: `label` and `fit` make and refit the shipped weights, `blame` and `compare` reproduce
//! the figures on where games are lost and how noisy labels are. Two finished experiments were
//! removed once their findings were recorded in the benchmark figures: `order` (a move order
//! fitted to the judge's moves by softmax regression: it ranked Rapfi's move better and played
//! no better, so the engine keeps its hand-set order) and `fit --features cells|both|space`
//! (richer evaluations: per-cell multisets of line levels, both sets, each line's free room;
//! none beat the engine's own features on unseen openings). Their code is in the git history
//! (`git log -- examples/gomoku_eval_fit.rs`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use anyhow::{Context, bail};
use kibitz::engine::{Game, Status};
use kibitz::games::gomoku::eval;
use kibitz::games::gomoku::patterns::{FIVE, OPEN_FOUR};
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::external::ExternalEngine;
use kibitz::tools::arena::openings::{parse_moves, play_moves};
use kibitz::tools::arena::record::{cells_text, read_records};
use kibitz::tools::arena::referee::Colour;

const SIZE: usize = 15;

fn flag<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    match args.iter().position(|a| a == name) {
        Some(i) => {
            let text = args
                .get(i + 1)
                .with_context(|| format!("{name} needs a value"))?;
            text.parse()
                .map_err(|e| anyhow::anyhow!("{name} {text}: {e}"))
        }
        None => Ok(default),
    }
}

/// Flags without a value.
const SWITCHES: [&str; 1] = ["--quiet"];

/// The positional arguments: everything that is not a flag or a flag's value.
fn files(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if SWITCHES.contains(&args[i].as_str()) {
            i += 1;
        } else if args[i].starts_with("--") {
            i += 2;
        } else {
            out.push(args[i].clone());
            i += 1;
        }
    }
    out
}

fn outcomes(args: &[String]) -> anyhow::Result<()> {
    let every: usize = flag(args, "--every", 1)?;
    let skip_end: usize = flag(args, "--skip-end", 4)?;
    let win: i32 = flag(args, "--win", 1000)?;
    for file in files(args) {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {file}"))?;
        for game in read_records(&text, SIZE)? {
            let last = game.stones.len().saturating_sub(skip_end);
            for plies in (game.opening.len()..last).step_by(every.max(1)) {
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

fn label(args: &[String]) -> anyhow::Result<()> {
    let judge: String = flag(args, "--judge", String::new())?;
    if judge.is_empty() {
        bail!("label needs --judge CMD (a piskvork engine)");
    }
    let ms: u64 = flag(args, "--ms", 100)?;
    let every: usize = flag(args, "--every", 3)?;
    // A second pass with `--offset 1` labels the plies a first `--every 2` pass skipped.
    let offset: usize = flag(args, "--offset", 0)?;
    let limit: usize = flag(args, "--limit", usize::MAX)?;
    let mut engine = ExternalEngine::start(&judge, Duration::from_millis(30))?;
    let mut seen = HashSet::new();
    let mut labelled = 0;
    for file in files(args) {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {file}"))?;
        for game in read_records(&text, SIZE)? {
            let moves = &game.stones;
            for plies in (game.opening.len() + offset..moves.len()).step_by(every.max(1)) {
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
                        engine = ExternalEngine::start(&judge, Duration::from_millis(30))?;
                        continue;
                    }
                };
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

fn fit(args: &[String]) -> anyhow::Result<()> {
    let holdout: usize = flag(args, "--holdout", 5)?;
    let scale: f64 = flag(args, "--scale", 200.0)?;
    let l2: f64 = flag(args, "--l2", 1e-4)?;
    let max_label: f64 = flag(args, "--max-label", 3000.0)?;
    // Positions from other openings than the fitted ones: held-out lines are neighbours of
    // fitted ones in the same games, so only these show how the fit transfers.
    let transfer_file: String = flag(args, "--transfer", String::new())?;
    // Quiet positions only (no four or open three on the board for either side): the ones
    // the search leaves to the evaluation alone.
    let quiet_only = args.iter().any(|a| a == "--quiet");
    let empty = Gomoku::new(SIZE, SIZE, GomokuRules::default())?;
    let n_features = features(&empty).len();
    let mut train = Vec::new();
    let mut test = Vec::new();
    let mut transfer = Vec::new();
    let mut sources: Vec<(String, bool)> = files(args).into_iter().map(|f| (f, false)).collect();
    if !transfer_file.is_empty() {
        sources.push((transfer_file, true));
    }
    for (file, is_transfer) in sources {
        for Label {
            line,
            score,
            position,
        } in read_labels(&file)?
        {
            let board = position.board();
            let threats = |side: usize| {
                board.level_count[side][FIVE as usize] + board.level_count[side][OPEN_FOUR as usize]
            };
            if score.abs() > max_label || (quiet_only && threats(0) + threats(1) > 0) {
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

/// The evaluation's features of `position`, for its side to move ([`eval::features`]).
fn features(position: &Gomoku) -> Vec<f64> {
    eval::features(position.board(), position.side_to_move().index())
        .iter()
        .map(|&f| f as f64)
        .collect()
}

/// `compare A.txt B.txt`: see the module's documentation.
fn compare(args: &[String]) -> anyhow::Result<()> {
    let scale: f64 = flag(args, "--scale", 200.0)?;
    let [first, second] = &files(args)[..] else {
        bail!("usage: compare LABELS_A.txt LABELS_B.txt");
    };
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
fn blame(args: &[String]) -> anyhow::Result<()> {
    let [games_file, labels_file] = &files(args)[..] else {
        bail!("usage: blame GAMES.txt LABELS.txt");
    };
    // Labels by their position text: (judge's score, judge's move).
    let labels: HashMap<String, (f64, Option<String>)> = label_lines(labels_file)?
        .into_iter()
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("label") => label(&args[1..]),
        Some("outcomes") => outcomes(&args[1..]),
        Some("fit") => fit(&args[1..]),
        Some("blame") => blame(&args[1..]),
        Some("compare") => compare(&args[1..]),
        _ => bail!(
            "usage: gomoku_eval_fit label GAMES... --judge CMD | outcomes GAMES... | fit LABELS... \
             | blame GAMES LABELS | compare LABELS LABELS"
        ),
    }
}
