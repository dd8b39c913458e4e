//! Win/draw/loss: a score turned into the chances a UI can draw (an eval bar, "72 % to win"),
//! per mille and for the side to move, as Stockfish's `UCI_ShowWDL` and lichess give them.
//!
//! Exact where the outcome is proven (the Connect-4 book or solver, a proven search, a
//! game-ending move judged by the rules): `[1000, 0, 0]`, `[0, 1000, 0]` or `[0, 0, 1000]`. A
//! heuristic score goes through its game's [`WdlModel`], fitted on the outcomes of self-play
//! games (`examples/wdl_fit.rs`, docs/api.md "Win, draw, loss"): Stockfish's shape,
//!
//! ```text
//! win  = 1 / (1 + exp(-(score - margin) / scale))
//! loss = 1 / (1 + exp(-(-score - margin) / scale))
//! draw = 1 - win - loss
//! ```
//!
//! two logistic curves of the score, the draws the room between them (`margin >= 0` keeps it
//! non-negative). A heuristic score never claims certainty: its win and loss are capped at 999
//! per mille, so `[1000, 0, 0]` always means proven. The function is pure: the same game, score
//! and proof give the same triple, whoever asks (a move, an analysis entry, a line, a review
//! ply, an event), so the figures in one answer agree with each other.

use crate::engine::{Outcome, Proof, Score};

/// How one game's heuristic scores map to win/draw/loss chances (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WdlModel {
    /// Names the fit, returned as the answer's `wdl_model` so that a client can tell when the
    /// mapping changed: `<game>-<date of the fit>`.
    pub version: &'static str,
    /// Score, in engine units, by which a win must be ahead of an even position before it is
    /// more likely than a draw (the draws' half-width); 0 for a game without draws in practice.
    pub margin: f64,
    /// Engine units per logistic unit: how slowly the chances move with the score.
    pub scale: f64,
}

/// Chances per mille for the side to move, summing to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wdl {
    pub win: u16,
    pub draw: u16,
    pub loss: u16,
}

impl Wdl {
    pub const WIN: Wdl = Wdl {
        win: 1000,
        draw: 0,
        loss: 0,
    };
    pub const DRAW: Wdl = Wdl {
        win: 0,
        draw: 1000,
        loss: 0,
    };
    pub const LOSS: Wdl = Wdl {
        win: 0,
        draw: 0,
        loss: 1000,
    };

    /// `[win, draw, loss]`, the order of the JSON array.
    pub fn as_array(self) -> [u16; 3] {
        [self.win, self.draw, self.loss]
    }

    /// The expected score per mille (a win 1, a draw one half): lichess' "win percent" × 10.
    pub fn expected_permille(self) -> f64 {
        f64::from(self.win) + f64::from(self.draw) / 2.0
    }

    /// The same chances seen by the other player.
    pub fn flipped(self) -> Wdl {
        Wdl {
            win: self.loss,
            draw: self.draw,
            loss: self.win,
        }
    }

    /// The exact triple of a proven outcome.
    pub fn exact(outcome: Outcome) -> Wdl {
        match outcome {
            Outcome::Win => Wdl::WIN,
            Outcome::Draw => Wdl::DRAW,
            Outcome::Loss => Wdl::LOSS,
        }
    }
}

/// The most a heuristic score may claim for a win or a loss, per mille.
const UNPROVEN_CAP: u16 = 999;

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl WdlModel {
    /// The model's chances `[win, draw, loss]` for a heuristic `score`, unrounded (what the
    /// fit optimises and the calibration table compares).
    pub fn probabilities(&self, score: Score) -> [f64; 3] {
        let s = f64::from(score);
        let scale = self.scale.max(f64::MIN_POSITIVE);
        let margin = self.margin.max(0.0);
        let win = logistic((s - margin) / scale);
        let loss = logistic((-s - margin) / scale);
        [win, (1.0 - win - loss).max(0.0), loss]
    }

    /// The model's chances for a heuristic `score`, per mille: win and loss rounded (each
    /// monotone in the score), capped at 999, the draw the rest.
    pub fn permille(&self, score: Score) -> Wdl {
        let [win, _, loss] = self.probabilities(score);
        let round = |p: f64| ((p * 1000.0).round() as u16).min(UNPROVEN_CAP);
        let (win, loss) = (round(win), round(loss));
        // win + loss <= 1000 before rounding; rounding can overshoot by one, taken off the
        // smaller side (which keeps each monotone: the overshoot happens only near the ends).
        let (win, loss) = if win + loss > 1000 {
            if win >= loss {
                (win, 1000 - win)
            } else {
                (1000 - loss, loss)
            }
        } else {
            (win, loss)
        };
        Wdl {
            win,
            draw: 1000 - win - loss,
            loss,
        }
    }
}

/// The chances for the side to move of a position whose search gave `score` (side to move's
/// view, engine scale) and `proof`: exact when proven, else `model`'s. A decisive score always
/// comes with its proof from the engine; a score without one is read as heuristic.
pub fn wdl(model: &WdlModel, score: Score, proof: Option<Proof>) -> Wdl {
    match proof {
        Some(proof) => Wdl::exact(proof.outcome),
        None => model.permille(score),
    }
}

/// Tic-tac-toe. Every full-strength answer is proven; a heuristic score appears only under a
/// `max_depth`, `max_nodes` or a weak level. Fitted by `examples/wdl_fit.rs --game tictactoe`.
pub const TICTACTOE: WdlModel = WdlModel {
    version: "tictactoe-2026-12-04",
    margin: 21.1,
    scale: 5.4,
};

/// Connect-4 (any size; fitted on 7x6). Fitted by `examples/wdl_fit.rs --game connect4`.
pub const CONNECT4: WdlModel = WdlModel {
    version: "connect4-2026-12-04",
    margin: 12.3,
    scale: 44.7,
};

/// Gomoku (any size and rules; fitted on 15x15 free-style). Fitted by
/// `examples/wdl_fit.rs --game gomoku`.
pub const GOMOKU: WdlModel = WdlModel {
    version: "gomoku-2026-12-04",
    margin: 66.5,
    scale: 139.0,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MATE_BOUND, WIN};

    const MODELS: [WdlModel; 3] = [TICTACTOE, CONNECT4, GOMOKU];

    fn proof(outcome: Outcome) -> Option<Proof> {
        Some(Proof {
            outcome,
            plies_to_end: 3,
        })
    }

    #[test]
    fn a_proven_outcome_is_exact_whatever_the_score() {
        for model in MODELS {
            for score in [-WIN + 3, -500, 0, 500, WIN - 3] {
                assert_eq!(wdl(&model, score, proof(Outcome::Win)), Wdl::WIN);
                assert_eq!(wdl(&model, score, proof(Outcome::Draw)), Wdl::DRAW);
                assert_eq!(wdl(&model, score, proof(Outcome::Loss)), Wdl::LOSS);
            }
        }
    }

    #[test]
    fn every_triple_sums_to_1000_and_a_heuristic_one_is_never_certain() {
        for model in MODELS {
            for score in (-(MATE_BOUND - 1)..MATE_BOUND).step_by(997) {
                let w = wdl(&model, score, None);
                assert_eq!(w.win + w.draw + w.loss, 1000, "{model:?} at {score}");
                assert!(w.win < 1000 && w.loss < 1000, "{model:?} at {score}: {w:?}");
            }
        }
    }

    #[test]
    fn win_rises_and_loss_falls_with_the_score() {
        for model in MODELS {
            let mut last = model.permille(-(MATE_BOUND - 1));
            for score in -2000..=2000 {
                let now = model.permille(score);
                assert!(now.win >= last.win, "{model:?}: win fell at {score}");
                assert!(now.loss <= last.loss, "{model:?}: loss rose at {score}");
                last = now;
            }
            assert!(model.permille(-2000).win < model.permille(2000).win);
        }
    }

    /// Mean Brier score (summed over win, draw, loss) of `predict` on a committed held-out
    /// sample: `score result` lines, `#` a comment.
    fn brier(sample: &str, predict: impl Fn(Score) -> [f64; 3]) -> (f64, usize) {
        let mut total = 0.0;
        let mut n = 0;
        for line in sample.lines().filter(|l| !l.starts_with('#')) {
            let (score, result) = line.split_once(' ').expect("score result");
            let observed = match result {
                "W" => [1.0, 0.0, 0.0],
                "D" => [0.0, 1.0, 0.0],
                "L" => [0.0, 0.0, 1.0],
                other => panic!("result {other:?}"),
            };
            let p = predict(score.parse().expect("a score"));
            total += (0..3).map(|k| (p[k] - observed[k]).powi(2)).sum::<f64>();
            n += 1;
        }
        (total / n as f64, n)
    }

    /// The committed samples are real: positions of self-play games (`examples/wdl_fit.rs`)
    /// the fit never saw, with how each game ended. The constant is the best any constant can
    /// be on them (their own frequencies, known only afterwards).
    #[test]
    fn each_model_predicts_held_out_games_better_than_any_constant() {
        let samples = [
            (
                TICTACTOE,
                include_str!("../../tests/data/wdl/tictactoe-heldout.txt"),
            ),
            (
                CONNECT4,
                include_str!("../../tests/data/wdl/connect4-heldout.txt"),
            ),
            (
                GOMOKU,
                include_str!("../../tests/data/wdl/gomoku-heldout.txt"),
            ),
        ];
        for (model, sample) in samples {
            let mut freq = [0.0; 3];
            let mut n = 0.0;
            for line in sample.lines().filter(|l| !l.starts_with('#')) {
                let k = match line.rsplit(' ').next() {
                    Some("W") => 0,
                    Some("D") => 1,
                    _ => 2,
                };
                freq[k] += 1.0;
                n += 1.0;
            }
            let freq = freq.map(|f| f / n);
            let (fitted, positions) = brier(sample, |s| model.probabilities(s));
            let (constant, _) = brier(sample, |_| freq);
            assert!(positions >= 200, "{}: {positions} positions", model.version);
            assert!(
                fitted < constant - 0.03,
                "{}: Brier {fitted:.4} against the constant's {constant:.4}",
                model.version
            );
        }
    }

    #[test]
    fn an_even_score_is_symmetric() {
        for model in MODELS {
            let w = model.permille(0);
            assert_eq!(w.win, w.loss, "{model:?}");
            assert_eq!(
                model.permille(75).flipped(),
                model.permille(-75),
                "{model:?}"
            );
        }
    }
}
