//! What a strength level means on a rating scale: each game's self-play ladder, measured by
//! `examples/levels.rs --ladder` (each level against the one below it, level 1 against a
//! uniformly random mover, which is rating 0) and published in `GET /games`.
//!
//! A pairing's score `p` (a draw half a point) is an Elo difference `400 × log10(p / (1 − p))`;
//! a pairing won or lost in every game would be infinite, so the point estimate takes the score
//! with half a game added to each side, `(points + 0.5) / (games + 1)`. The 95 % interval of a
//! step is its score's Wilson interval (`tools::arena::score_interval`, which counts draws'
//! smaller variance) turned into Elo; a bound at a score of 1 is unbounded. A level's rating is
//! the sum of the steps below it; its interval adds the steps' half-widths in quadrature (the
//! pairings are independent matches), so the ladder's uncertainty grows as it climbs.

/// One level's place on its game's ladder, Elo above the random mover.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelRating {
    pub level: u8,
    pub rating: f64,
    /// The 95 % interval of `rating`; `high` is `None` when unbounded (a step below it was won
    /// in every game).
    pub low: f64,
    pub high: Option<f64>,
}

/// One measured step of a ladder: a level against the one below it (or the random mover).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// The score's 95 % interval (from `score_interval`).
    pub score_low: f64,
    pub score_high: f64,
}

/// The Elo difference of a score; infinite at 0 and 1.
pub fn elo_of_score(score: f64) -> f64 {
    400.0 * (score / (1.0 - score)).log10()
}

impl Step {
    /// The step's Elo difference: `(points + 0.5) / (games + 1)` (see the module doc).
    pub fn elo(&self) -> f64 {
        let games = f64::from(self.wins + self.draws + self.losses);
        let points = f64::from(self.wins) + f64::from(self.draws) / 2.0;
        elo_of_score((points + 0.5) / (games + 1.0))
    }

    /// The Elo of the interval's bounds: (low, high), `None` for an unbounded high.
    pub fn elo_interval(&self) -> (f64, Option<f64>) {
        let high = elo_of_score(self.score_high);
        (
            elo_of_score(self.score_low).max(-10_000.0),
            high.is_finite().then_some(high),
        )
    }
}

/// The ladder of `steps` (level 1 against the random mover first, then each level against the
/// one below), levels numbered from 1.
pub fn ladder(steps: &[Step]) -> Vec<LevelRating> {
    let (mut rating, mut low_sq, mut high_sq, mut bounded) = (0.0, 0.0, 0.0, true);
    let mut out = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let elo = step.elo();
        let (low, high) = step.elo_interval();
        rating += elo;
        low_sq += (elo - low).max(0.0).powi(2);
        match high {
            Some(high) => high_sq += (high - elo).max(0.0).powi(2),
            None => bounded = false,
        }
        out.push(LevelRating {
            level: i as u8 + 1,
            rating: rating.round(),
            low: (rating - low_sq.sqrt()).round(),
            high: bounded.then(|| (rating + high_sq.sqrt()).round()),
        });
    }
    out
}

/// A ladder as published: the measured steps, written by `examples/levels.rs --ladder`.
macro_rules! steps {
    ($(($w:expr, $d:expr, $l:expr, $lo:expr, $hi:expr)),+ $(,)?) => {
        &[$(Step { wins: $w, draws: $d, losses: $l, score_low: $lo, score_high: $hi }),+]
    };
}

/// Tic-tac-toe's ladder: 2,000 games a step, 20 ms a move (measured 2026-12-04).
pub const TICTACTOE: &[Step] = steps![
    (1259, 206, 535, 0.662, 0.700),
    (1112, 264, 624, 0.602, 0.641),
    (896, 458, 646, 0.543, 0.581),
    (799, 579, 622, 0.526, 0.563),
    (814, 694, 492, 0.563, 0.598),
    (722, 781, 497, 0.539, 0.573),
    (615, 1182, 203, 0.590, 0.616),
    (202, 1727, 71, 0.525, 0.541),
    (57, 1916, 27, 0.503, 0.512),
    (26, 1974, 0, 0.504, 0.509),
];

/// Connect-4 7x6's ladder: 160 games a step, 20 ms a move (measured 2026-12-04).
pub const CONNECT4: &[Step] = steps![
    (158, 0, 2, 0.956, 0.997),
    (86, 18, 56, 0.521, 0.663),
    (77, 10, 73, 0.438, 0.586),
    (107, 6, 47, 0.614, 0.753),
    (95, 9, 56, 0.547, 0.691),
    (106, 12, 42, 0.629, 0.763),
    (108, 13, 39, 0.645, 0.777),
    (117, 9, 34, 0.691, 0.817),
    (91, 21, 48, 0.563, 0.700),
    (131, 1, 28, 0.756, 0.873),
];

/// Gomoku 15x15 free-style's ladder: 40 games a step, 20 ms a move (measured 2026-12-04).
pub const GOMOKU: &[Step] = steps![
    (40, 0, 0, 0.912, 1.000),
    (26, 0, 14, 0.495, 0.779),
    (23, 0, 17, 0.422, 0.715),
    (23, 0, 17, 0.422, 0.715),
    (34, 0, 6, 0.709, 0.929),
    (28, 0, 12, 0.546, 0.819),
    (29, 0, 11, 0.572, 0.839),
    (20, 0, 20, 0.352, 0.648),
    (20, 0, 20, 0.352, 0.648),
    (35, 0, 5, 0.739, 0.945),
];

#[cfg(test)]
mod tests {
    use super::*;

    const LADDERS: [(&str, &[Step]); 3] = [
        ("tic-tac-toe", TICTACTOE),
        ("Connect-4", CONNECT4),
        ("gomoku", GOMOKU),
    ];

    #[test]
    fn every_published_ladder_has_ten_levels_and_consistent_steps() {
        for (game, steps) in LADDERS {
            assert_eq!(steps.len(), 10, "{game}");
            for step in steps {
                let games = f64::from(step.wins + step.draws + step.losses);
                let score = (f64::from(step.wins) + f64::from(step.draws) / 2.0) / games;
                assert!(
                    step.score_low <= score && score <= step.score_high,
                    "{game}: {step:?}"
                );
            }
        }
    }

    /// The published ladders, not a re-measurement: no level is measured weaker than the one
    /// below it beyond its interval, and the top is above the bottom and the random mover.
    #[test]
    fn every_published_ladder_is_monotone_within_its_intervals() {
        for (game, steps) in LADDERS {
            let ladder = ladder(steps);
            assert!(
                ladder[0].low > 0.0,
                "{game}: level 1 above the random mover"
            );
            for pair in ladder.windows(2) {
                let (below, above) = (pair[0], pair[1]);
                assert!(
                    above.high.is_none_or(|high| high >= below.low) && above.rating >= below.low,
                    "{game}: level {} ({above:?}) below level {} ({below:?})",
                    above.level,
                    below.level
                );
            }
            for step in steps {
                assert!(
                    step.score_high >= 0.5,
                    "{game}: a step measured a loss: {step:?}"
                );
            }
            assert!(ladder[9].rating > ladder[0].rating, "{game}");
        }
    }

    #[test]
    fn scores_turn_into_elo_and_a_clean_sweep_stays_finite() {
        assert_eq!(elo_of_score(0.5), 0.0);
        assert!((elo_of_score(0.75) - 190.85).abs() < 0.01);
        let sweep = Step {
            wins: 40,
            draws: 0,
            losses: 0,
            score_low: 0.912,
            score_high: 1.0,
        };
        assert!((sweep.elo() - elo_of_score(40.5 / 41.0)).abs() < 1e-9);
        assert_eq!(sweep.elo_interval().1, None);
        let ladder = ladder(&[sweep, sweep]);
        assert_eq!(ladder[1].high, None);
        assert!(ladder[1].rating > ladder[0].rating && ladder[1].low < ladder[1].rating);
    }
}
