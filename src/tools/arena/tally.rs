//! A match's tally for its first player: each game's result from its record, the counts
//! (forfeits apart from the score), the score with its 95 % Wilson interval, and the summary
//! line. The interval is the one the project's match tools share (`examples/levels.rs` too).

use super::args::ArenaArgs;
use super::record::{Ending, GameRecord};
use super::referee::Colour;

/// One game's outcome for the match's first player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// Won on the board (a five, or the opponent's renju foul).
    Win,
    /// Lost on the board.
    Loss,
    /// The board filled up.
    Draw,
    /// The opponent forfeited: not a win.
    OpponentForfeit,
    /// The first player forfeited: not a loss on the board.
    PlayerForfeit,
}

pub fn result_for_first(record: &GameRecord, first_is_black: bool) -> GameResult {
    let first = if first_is_black {
        Colour::Black
    } else {
        Colour::White
    };
    match &record.ending {
        Ending::Forfeit(colour, _) if *colour == first => GameResult::PlayerForfeit,
        Ending::Forfeit(..) => GameResult::OpponentForfeit,
        Ending::Full => GameResult::Draw,
        ending => match ending.winner_on_board() {
            Some(colour) if colour == first => GameResult::Win,
            _ => GameResult::Loss,
        },
    }
}

/// Wilson score interval at 95 % for `score` successes out of `n` trials. A match's score
/// goes through [`score_interval`], which gives `n` as the games' effective number.
pub fn wilson_interval(score: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96;
    let p = score / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The score of `wins`, `draws` and `losses` (a draw half a point) and its 95 % Wilson
/// interval, as (score, low, high). A draw varies less than a win or a loss, so a pairing of
/// many draws is surer of its score than one of wins and losses alone: the interval is taken
/// over the effective number of games, `n * p(1-p) / variance` (the plain `n` when every game
/// had the same result), so that 128 wins, 3,806 draws and 66 losses are told apart from an
/// even score. Where draws are rare, as in gomoku, it is the plain interval.
pub fn score_interval(wins: u64, draws: u64, losses: u64) -> (f64, f64, f64) {
    let games = (wins + draws + losses) as f64;
    if games == 0.0 {
        return (0.0, 0.0, 1.0);
    }
    let (w, d) = (wins as f64 / games, draws as f64 / games);
    let l = 1.0 - w - d;
    let p = w + d / 2.0;
    let variance = w * (1.0 - p).powi(2) + d * (0.5 - p).powi(2) + l * p.powi(2);
    let n = if variance > 0.0 && p > 0.0 && p < 1.0 {
        games * p * (1.0 - p) / variance
    } else {
        games
    };
    let (lo, hi) = wilson_interval(p * n, n);
    (p, lo, hi)
}

/// The tally of a match, for its first player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Games won on the board.
    pub wins: u32,
    /// Games lost on the board.
    pub losses: u32,
    pub draws: u32,
    /// Games the opponent forfeited (not wins).
    pub opponent_forfeits: u32,
    /// Games the first player forfeited (not losses).
    pub player_forfeits: u32,
    /// Games whose moves repeated an earlier game's, move for move.
    pub repeats: u32,
}

impl Tally {
    /// Games decided on the board: the ones the score is computed over.
    pub fn scored_games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    pub fn add(&mut self, result: GameResult) {
        match result {
            GameResult::Win => self.wins += 1,
            GameResult::Loss => self.losses += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::OpponentForfeit => self.opponent_forfeits += 1,
            GameResult::PlayerForfeit => self.player_forfeits += 1,
        }
    }

    /// Score fraction over the games decided on the board (a draw is half a win) and its 95 %
    /// Wilson interval ([`score_interval`]); forfeits are left out.
    pub fn score(&self) -> (f64, f64, f64) {
        score_interval(self.wins.into(), self.draws.into(), self.losses.into())
    }
}

/// A finished match: the tally and every game's record, in game order.
pub struct MatchReport {
    pub tally: Tally,
    pub games: Vec<GameRecord>,
}

/// The summary line of a match.
pub fn summary(args: &ArenaArgs, report: &MatchReport) -> String {
    let t = &report.tally;
    let (score, lo, hi) = t.score();
    let names = args.names().unwrap_or(["?", "?"]);
    let slowest = |of_first: bool| {
        report
            .games
            .iter()
            .flat_map(|g| {
                let first_black = g.black == names[0];
                let parity = usize::from(first_black != of_first);
                let start = g.opening.len();
                g.moves
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| (start + i) % 2 == parity)
                    .map(|(_, m)| m.ms)
            })
            .max()
            .unwrap_or(0)
    };
    format!(
        "{} vs {}: {} games ({:?}, {} ms/move): on the board W {} L {} D {}, score {:.1}% \
         (95% CI {:.1}-{:.1}%) over {} games; forfeits (not scored): {} {}, {} {}; \
         repeated games {}; slowest move {} ms / {} ms",
        names[0],
        names[1],
        report.games.len(),
        args.rule,
        args.ms,
        t.wins,
        t.losses,
        t.draws,
        100.0 * score,
        100.0 * lo,
        100.0 * hi,
        t.scored_games(),
        names[0],
        t.player_forfeits,
        names[1],
        t.opponent_forfeits,
        t.repeats,
        slowest(true),
        slowest(false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_draws_the_interval_is_the_plain_wilson_interval() {
        let (p, lo, hi) = score_interval(22, 0, 2);
        assert_eq!(p, 22.0 / 24.0);
        assert_eq!((lo, hi), wilson_interval(22.0, 24.0));
        assert!(lo < p && p < hi);
    }

    #[test]
    fn draws_narrow_the_interval_and_one_result_everywhere_keeps_the_plain_n() {
        let (p, lo, hi) = score_interval(128, 3806, 66);
        let (plain_lo, plain_hi) = wilson_interval(128.0 + 1903.0, 4000.0);
        assert!((p - 0.50775).abs() < 1e-9);
        assert!(
            lo > plain_lo && hi < plain_hi,
            "{lo}-{hi} against {plain_lo}-{plain_hi}"
        );
        assert!(
            lo > 0.5,
            "128 wins to 66 losses is told apart from even: {lo}"
        );
        assert_eq!(score_interval(0, 10, 0).1, wilson_interval(5.0, 10.0).0);
        assert_eq!(score_interval(0, 0, 0), (0.0, 0.0, 1.0));
    }
}
