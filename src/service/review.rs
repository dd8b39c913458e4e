//! Game review: every ply of a finished (or unfinished) game judged by the engine.
//!
//! The moves are replayed first, all of them, before any search: an illegal list is refused
//! whole, naming the ply and why (out of the board, occupied, column full, game already over,
//! renju forbidden point). Then each position of the game is searched once, as `POST /move`
//! searches it (the answer cache, the shared cache and the shared tables apply), but on one
//! worker held for the whole review: the review is admitted once, with its first search, for
//! its whole budget, so requests arriving between its plies cannot take the workers and shed
//! it part-way. If a search still fails after a ply was judged, or the server stops, the
//! review answers with the plies judged and says why it is `incomplete`; it is never thrown
//! away. The position before ply `i` gives the best move and its score; the
//! position after it, searched for the opponent and negated, gives the played move's score.
//! One search per position, not two per ply, so a game of `n` plies costs `n + 1` searches at
//! most (a position after a game-ending move is scored by the rules, not searched).
//!
//! Budget: the review's total `budget_ms` (capped by the server's `KIBITZ_MAX_BUDGET_MS`) is
//! shared fairly: each search gets what is left divided by the searches left, capped by
//! `ply_budget_ms`; time a search does not use (a proven or cached position) goes to the rest.
//!
//! Marks, from the mover's point of view, `loss` = best score − played score (never below 0):
//! - `best`: the played move is the best move, or loses nothing;
//! - both scores proven: a worse proven outcome is a `blunder` and names the change ("threw
//!   away a win in 5: now a draw"); the same outcome, slower won or sooner lost, is `good`;
//! - the played move walks into a proven loss the best move did not: `blunder`, named;
//! - otherwise the heuristic loss against the game's [`Thresholds`].
//!
//! Summary, per player: how many of their moves got each mark, and an accuracy figure from the
//! chances each move gave away, lichess' formula on win percentages: a move's accuracy is
//! `103.1668 × exp(−0.04354 × (before − after)) − 3.1669`, clamped to 0..100, where `before`
//! and `after` are the mover's expected score in percent (win + draw / 2 of [`Wdl`]) with the
//! best move and with the played one (a move that gives nothing away, or is marked `best`, scores
//! 100); a player's
//! accuracy is the plain mean over their moves (lichess weights its mean by the position's
//! volatility; kibitz does not), rounded to a tenth.
//!
//! Everything game-specific comes from [`ServedGame`]: the default board (its `GET /games`
//! description), whether a move is a column (a game with gravity), the points the rules forbid,
//! the thresholds; so every served game that answers `/move` answers `/review`.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::games::{GameTask, ServedGame, Thresholds, with_game};
use super::latency::JobTimes;
use super::replay::{MoveList, Replay, replay};
use super::wdl::{Wdl, wdl};
use super::{MoveQuery, Runner, Service, ServiceError};
use crate::engine::{Algorithm, Outcome, Proof, Score, Side, Status, WIN, is_decisive};
use crate::games::Cell;

pub use super::replay::PlayedMove;

/// Default per-ply search budget, in ms.
pub const DEFAULT_PLY_BUDGET_MS: u64 = 250;
/// The least a position's search may be given, in ms: a review whose total budget cannot give
/// every position this much is refused (422) rather than answered with noise.
pub const MIN_PLY_BUDGET_MS: u64 = 5;

/// A review request, parsed but not yet checked against the game.
#[derive(Clone, Debug)]
pub struct ReviewQuery {
    pub game: String,
    /// The starting position; `None` = the game's empty default board.
    pub board: Option<Vec<String>>,
    pub to_move: Option<Side>,
    pub rules: Option<Value>,
    pub moves: MoveList,
    pub budget_ms: Option<u64>,
    pub ply_budget_ms: Option<u64>,
    pub arrival: Instant,
    /// Who asked, and whether the review yields its worker (a batch item).
    pub caller: super::caller::Caller,
}

/// Why a review cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// A field out of range: its JSON pointer and what is allowed.
    #[error("{message}")]
    OutOfRange { pointer: String, message: String },
}

/// What the review says about one ply.
#[derive(Clone, Debug, PartialEq)]
pub struct PlyReview {
    /// 1-based: ply 1 is the first move of the list.
    pub ply: usize,
    pub player: Side,
    pub played: Cell,
    pub best: Cell,
    /// Mover's view, engine scale.
    pub best_score: Score,
    pub played_score: Score,
    pub loss: Score,
    pub mark: Mark,
    /// The proven result with the best move, and with the played one, when proven.
    pub best_proof: Option<Proof>,
    pub played_proof: Option<Proof>,
    /// When the played move made the proven outcome worse, in words.
    pub outcome_change: Option<String>,
    /// The mover's chances with the best move and with the played one ([`super::wdl`]): exact
    /// when proven, else the game's model.
    pub best_wdl: Wdl,
    pub played_wdl: Wdl,
    /// This move's accuracy, 0 to 100 (see the module doc).
    pub accuracy: f64,
    /// Depth of the search of the position before the move, and whether it came from a cache.
    pub depth: u32,
    pub cached: bool,
}

/// A ply's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Best,
    Good,
    Inaccuracy,
    Mistake,
    Blunder,
}

impl Mark {
    /// Every mark, best first (the order of [`PlayerSummary::marks`]).
    pub const ALL: [Mark; 5] = [
        Mark::Best,
        Mark::Good,
        Mark::Inaccuracy,
        Mark::Mistake,
        Mark::Blunder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Best => "best",
            Mark::Good => "good",
            Mark::Inaccuracy => "inaccuracy",
            Mark::Mistake => "mistake",
            Mark::Blunder => "blunder",
        }
    }
}

/// Why a review stopped before judging every ply.
#[derive(Clone, Debug, PartialEq)]
pub struct Incomplete {
    /// `shutdown` (the server is stopping) or `search_failed` (a search could not be run: its
    /// worker failed or could not be had).
    pub reason: &'static str,
    /// In words.
    pub detail: String,
}

/// A whole review.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub game: &'static str,
    /// The version of the win/draw/loss model behind the plies' heuristic chances.
    pub wdl_model: &'static str,
    /// The plies judged, in order: every ply of the list, unless `incomplete`.
    pub plies: Vec<PlyReview>,
    /// Set when the review stopped early; `plies` then holds the plies judged before.
    pub incomplete: Option<Incomplete>,
    /// Moves in the list (the plies a complete review judges).
    pub moves: usize,
    /// Index into `plies` of the first ply whose move changed the proven outcome.
    pub first_outcome_change: Option<usize>,
    /// How the game stands after the last move.
    pub status: GameStatus,
    /// Per player, first then second: their marks and accuracy over the plies judged.
    pub summary: [PlayerSummary; 2],
    pub elapsed: Duration,
}

/// One player's review: how many of their moves got each mark, and their accuracy.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerSummary {
    /// Moves of this player judged.
    pub moves: usize,
    /// Moves per mark, in [`Mark::ALL`] order.
    pub marks: [usize; 5],
    /// The mean of the moves' accuracies, to a tenth; `None` without a move.
    pub accuracy: Option<f64>,
}

/// One move's accuracy, 0 to 100: lichess' curve of the expected score (percent) given away
/// (see the module doc). A move marked `best` gives nothing away, whatever two searches of two
/// positions said of it.
pub fn move_accuracy(best: Wdl, played: Wdl, mark: Mark) -> f64 {
    let lost = if mark == Mark::Best {
        0.0
    } else {
        ((best.expected_permille() - played.expected_permille()) / 10.0).max(0.0)
    };
    if lost == 0.0 {
        // The curve's constants make 99.9999 of it: the 100 it stands for.
        return 100.0;
    }
    (103.1668 * (-0.04354 * lost).exp() - 3.1669).clamp(0.0, 100.0)
}

/// The summary of `plies`, per player (first, second).
pub fn summarize(plies: &[PlyReview]) -> [PlayerSummary; 2] {
    let mut summary = [PlayerSummary::default(); 2];
    let mut sums = [0.0; 2];
    for ply in plies {
        let side = ply.player.index();
        summary[side].moves += 1;
        summary[side].marks[ply.mark as usize] += 1;
        sums[side] += ply.accuracy;
    }
    for (player, sum) in summary.iter_mut().zip(sums) {
        player.accuracy =
            (player.moves > 0).then(|| ((sum / player.moves as f64) * 10.0).round() / 10.0);
    }
    summary
}

/// How the game stands after the last move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameStatus {
    Ongoing,
    Won(Side),
    Draw,
}

/// A position's search result, mover's view.
#[derive(Clone, Copy, Debug)]
struct Judged {
    best: Cell,
    score: Score,
    proof: Option<Proof>,
    depth: u32,
    cached: bool,
}

/// The proof seen from the other side, one ply earlier.
fn flip(proof: Proof) -> Proof {
    Proof {
        outcome: match proof.outcome {
            Outcome::Win => Outcome::Loss,
            Outcome::Loss => Outcome::Win,
            Outcome::Draw => Outcome::Draw,
        },
        plies_to_end: proof.plies_to_end + 1,
    }
}

/// A child position's score seen from its parent: negated, and a proven result one ply
/// further away (mate convention).
fn parent_score(child: Score) -> Score {
    if is_decisive(child) {
        -child + child.signum()
    } else {
        -child
    }
}

fn rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Loss => 0,
        Outcome::Draw => 1,
        Outcome::Win => 2,
    }
}

fn describe(proof: Proof) -> String {
    match proof.outcome {
        Outcome::Win => format!("a win in {}", proof.plies_to_end),
        Outcome::Loss => format!("a loss in {}", proof.plies_to_end),
        Outcome::Draw => "a draw".into(),
    }
}

/// Marks one ply (see the module doc).
fn judge(
    before: &Judged,
    played: Cell,
    played_score: Score,
    played_proof: Option<Proof>,
    limits: Thresholds,
) -> (Score, Mark, Option<String>) {
    let loss = (before.score - played_score).max(0);
    if played == before.best || loss == 0 {
        return (0, Mark::Best, None);
    }
    match (before.proof, played_proof) {
        (Some(best), Some(got)) if rank(got.outcome) < rank(best.outcome) => {
            let change = match best.outcome {
                Outcome::Win => format!("threw away {}: now {}", describe(best), describe(got)),
                _ => format!("turned {} into {}", describe(best), describe(got)),
            };
            return (loss, Mark::Blunder, Some(change));
        }
        (Some(best), Some(got)) if rank(got.outcome) >= rank(best.outcome) => {
            return (loss, Mark::Good, None);
        }
        (best, Some(got)) if got.outcome == Outcome::Loss => {
            let from = best.map_or("a position not proven lost".to_owned(), describe);
            return (
                loss,
                Mark::Blunder,
                Some(format!("walked into {} (best was {from})", describe(got))),
            );
        }
        _ => {}
    }
    let mark = if loss <= limits.good {
        Mark::Good
    } else if loss <= limits.inaccuracy {
        Mark::Inaccuracy
    } else if loss <= limits.mistake {
        Mark::Mistake
    } else {
        Mark::Blunder
    };
    (loss, mark, None)
}

impl Service {
    /// Reviews a game; sends each ply's review to `sink` as soon as it is known, if given.
    pub async fn review(
        &self,
        query: ReviewQuery,
        sink: Option<mpsc::Sender<PlyReview>>,
    ) -> Result<Review, ReviewError> {
        with_game(Reviewing {
            service: self,
            query,
            sink,
        })
        .await
    }

    /// Checks the review's budgets: (total, per ply), both in ms.
    fn review_budgets(
        &self,
        query: &ReviewQuery,
        searches: usize,
    ) -> Result<(u64, u64), ReviewError> {
        let max = self.max_budget_ms();
        let searches = searches.max(1) as u64;
        let ply = query.ply_budget_ms.unwrap_or(DEFAULT_PLY_BUDGET_MS);
        if !(MIN_PLY_BUDGET_MS..=max).contains(&ply) {
            return Err(ReviewError::OutOfRange {
                pointer: "/ply_budget_ms".into(),
                message: format!(
                    "ply_budget_ms is {ply}; it must be between {MIN_PLY_BUDGET_MS} and {max}"
                ),
            });
        }
        let total = query
            .budget_ms
            .unwrap_or_else(|| ply.saturating_mul(searches).min(max));
        let least = MIN_PLY_BUDGET_MS * searches;
        if total > max || total < least.min(max) {
            return Err(ReviewError::OutOfRange {
                pointer: "/budget_ms".into(),
                message: format!(
                    "budget_ms is {total}; it must be between {} ({MIN_PLY_BUDGET_MS} ms for each \
                     of the {searches} positions to search) and {max}",
                    least.min(max)
                ),
            });
        }
        if least > max {
            return Err(ReviewError::OutOfRange {
                pointer: "/moves".into(),
                message: format!(
                    "{searches} positions to search need at least {least} ms, more than the \
                     server's cap of {max} ms: review the game in parts"
                ),
            });
        }
        Ok((total, ply))
    }

    /// The review `query` asks for game `G`, checked: rules, every move replayed, budgets.
    fn plan<G: ServedGame>(&self, query: &ReviewQuery) -> Result<Plan<G>, ReviewError> {
        let rules = G::parse_rules(query.rules.as_ref()).map_err(ServiceError::from)?;
        let replay = replay::<G>(
            query.board.as_deref(),
            query.to_move,
            &rules,
            &query.moves,
            true,
        )?;
        let searched = if replay.played.is_empty() {
            0
        } else {
            replay
                .positions
                .iter()
                .filter(|p| p.status == Status::Ongoing)
                .count()
        };
        let (total, ply_budget) = self.review_budgets(query, searched)?;
        Ok(Plan {
            replay,
            searched,
            total,
            ply_budget,
        })
    }

    /// Checks a review for the game it names without searching (a batch's games are checked
    /// before any is queued, each refused as a lone `/review` would be); its whole budget in ms.
    pub async fn check_review(&self, query: &ReviewQuery) -> Result<u64, ReviewError> {
        with_game(CheckReview {
            service: self,
            query,
        })
        .await
    }

    async fn review_game<G: ServedGame>(
        &self,
        query: ReviewQuery,
        sink: Option<mpsc::Sender<PlyReview>>,
    ) -> Result<Review, ReviewError> {
        let Plan {
            replay,
            searched,
            total,
            ply_budget,
        } = self.plan::<G>(&query)?;
        // Positions to search: every ongoing one (the last only when it scores a move).
        // No move, nothing to judge: no search either.
        let positions = if replay.played.is_empty() {
            &replay.positions[..0]
        } else {
            &replay.positions[..]
        };
        let deadline = query.arrival + Duration::from_millis(total);
        // One worker for the whole review, admitted with its first search and held to its
        // deadline: other requests cannot take it between plies and shed the rest.
        let mut worker = self.pool().reserve_as(
            JobTimes::for_budget(query.arrival, Duration::from_millis(total)),
            query.caller.claim(),
        );
        let mut incomplete = None;
        let thresholds = G::REVIEW_THRESHOLDS;
        let mut searches_left = searched as u64;
        let mut plies = Vec::with_capacity(replay.played.len());
        let mut first_outcome_change = None;
        let mut before: Option<Judged> = None;
        let plies_judged = self.metrics().review_plies_of(G::NAME);
        for (index, position) in positions.iter().enumerate() {
            if position.status == Status::Ongoing && self.stopping() {
                incomplete = Some(Incomplete {
                    reason: "shutdown",
                    detail: format!(
                        "the server is shutting down: {} of {} plies judged",
                        plies.len(),
                        replay.played.len()
                    ),
                });
                break;
            }
            let judged = if position.status == Status::Ongoing {
                // A fair share of what is left, capped by the per-ply budget.
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .as_millis() as u64;
                let share = (left / searches_left.max(1)).min(ply_budget);
                searches_left = searches_left.saturating_sub(1);
                let served = self
                    .play_on::<G>(
                        MoveQuery {
                            game: G::NAME.to_owned(),
                            board: position.rows.clone(),
                            moves: None,
                            to_move: Some(position.to_move),
                            budget_ms: Some(share.max(1)),
                            max_depth: None,
                            max_nodes: None,
                            algorithm: Algorithm::AlphaBeta,
                            analysis: false,
                            rules: query.rules.clone(),
                            arrival: Instant::now(),
                            progress: None,
                            // A review judges with full strength, whatever level played the game.
                            style: Default::default(),
                            caller: query.caller.clone(),
                            root: Default::default(),
                            multipv: None,
                        },
                        Runner::Held(&mut worker),
                    )
                    .await;
                let served = match served {
                    Ok(served) => served,
                    // Nothing judged yet: the request fails as a whole (a 503 can still be
                    // retried elsewhere). Afterwards the plies judged are kept and marked.
                    Err(error) if plies.is_empty() => return Err(error.into()),
                    // Background work that gave its worker back is run again whole later: a
                    // partial review is not its answer.
                    Err(error @ ServiceError::Pool(super::pool::PoolError::Preempted))
                        if query.caller.yielding.is_some() =>
                    {
                        return Err(error.into());
                    }
                    Err(error) => {
                        incomplete = Some(Incomplete {
                            reason: "search_failed",
                            detail: format!(
                                "{error}: {} of {} plies judged",
                                plies.len(),
                                replay.played.len()
                            ),
                        });
                        break;
                    }
                };
                Some(Judged {
                    best: served.answer.best,
                    score: served.answer.score,
                    proof: served.answer.proof,
                    depth: served.answer.depth,
                    cached: served.cached,
                })
            } else {
                None
            };
            if let (Some(prev), Some(&played)) =
                (before, index.checked_sub(1).map(|i| &replay.played[i]))
            {
                // The played move's score: the next position's, negated; a game-ending move is
                // scored by the rules.
                let (played_score, played_proof) = match (&judged, position.status) {
                    (Some(next), _) => (parent_score(next.score), next.proof.map(flip)),
                    (None, Status::Lost) => (
                        WIN - 1,
                        Some(Proof {
                            outcome: Outcome::Win,
                            plies_to_end: 1,
                        }),
                    ),
                    (None, _) => (
                        0,
                        Some(Proof {
                            outcome: Outcome::Draw,
                            plies_to_end: 1,
                        }),
                    ),
                };
                let (loss, mark, outcome_change) =
                    judge(&prev, played, played_score, played_proof, thresholds);
                let best_wdl = wdl(&G::WDL_MODEL, prev.score, prev.proof);
                let played_wdl = wdl(&G::WDL_MODEL, played_score, played_proof);
                if outcome_change.is_some() && first_outcome_change.is_none() {
                    first_outcome_change = Some(plies.len());
                }
                let review = PlyReview {
                    ply: index,
                    player: replay.positions[index - 1].to_move,
                    played,
                    best: prev.best,
                    best_score: prev.score,
                    played_score,
                    loss,
                    mark,
                    best_proof: prev.proof,
                    played_proof,
                    outcome_change,
                    best_wdl,
                    played_wdl,
                    accuracy: move_accuracy(best_wdl, played_wdl, mark),
                    depth: prev.depth,
                    cached: prev.cached,
                };
                plies_judged.inc();
                if let Some(sink) = &sink {
                    // The receiver went away only if the client did; the review is dropped then.
                    let _ = sink.send(review.clone()).await;
                }
                plies.push(review);
            }
            before = judged;
        }
        let last = replay.positions.last().map(|p| (p.status, p.to_move));
        let status = match last {
            Some((Status::Lost, to_move)) => GameStatus::Won(to_move.other()),
            Some((Status::Draw, _)) => GameStatus::Draw,
            _ => GameStatus::Ongoing,
        };
        let summary = summarize(&plies);
        Ok(Review {
            game: G::NAME,
            wdl_model: G::WDL_MODEL.version,
            moves: replay.played.len(),
            plies,
            incomplete,
            first_outcome_change,
            status,
            summary,
            elapsed: query.arrival.elapsed(),
        })
    }
}

/// A review as a [`GameTask`]: [`Service::review`] for the game it names.
/// A review checked for game `G` ([`Service::plan`]): what it will search, and with what time.
struct Plan<G> {
    replay: Replay<G>,
    /// Positions to search.
    searched: usize,
    /// The whole budget and the per-ply cap, in ms.
    total: u64,
    ply_budget: u64,
}

/// [`Service::check_review`] as a [`GameTask`].
struct CheckReview<'a> {
    service: &'a Service,
    query: &'a ReviewQuery,
}

impl GameTask for CheckReview<'_> {
    type Output = Result<u64, ReviewError>;

    fn game(&self) -> &str {
        &self.query.game
    }

    fn run<G: ServedGame>(self) -> impl Future<Output = Self::Output> + Send {
        std::future::ready(self.service.plan::<G>(self.query).map(|plan| plan.total))
    }

    fn unknown(self) -> Self::Output {
        Err(ServiceError::UnknownGame(self.query.game.clone()).into())
    }
}

struct Reviewing<'a> {
    service: &'a Service,
    query: ReviewQuery,
    sink: Option<mpsc::Sender<PlyReview>>,
}

impl GameTask for Reviewing<'_> {
    type Output = Result<Review, ReviewError>;

    fn game(&self) -> &str {
        &self.query.game
    }

    fn run<G: ServedGame>(self) -> impl Future<Output = Self::Output> + Send {
        self.service.review_game::<G>(self.query, self.sink)
    }

    fn unknown(self) -> Self::Output {
        Err(ServiceError::UnknownGame(self.query.game).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ply(player: Side, mark: Mark, best: Wdl, played: Wdl) -> PlyReview {
        let cell = Cell { row: 0, col: 0 };
        PlyReview {
            ply: 1,
            player,
            played: cell,
            best: cell,
            best_score: 0,
            played_score: 0,
            loss: 0,
            mark,
            best_proof: None,
            played_proof: None,
            outcome_change: None,
            best_wdl: best,
            played_wdl: played,
            accuracy: move_accuracy(best, played, mark),
            depth: 1,
            cached: false,
        }
    }

    const EVEN: Wdl = Wdl {
        win: 400,
        draw: 200,
        loss: 400,
    };

    #[test]
    fn a_move_that_gives_nothing_away_is_100_and_the_curve_is_lichess() {
        assert_eq!(move_accuracy(Wdl::WIN, Wdl::LOSS, Mark::Best), 100.0);
        assert_eq!(move_accuracy(EVEN, EVEN, Mark::Good), 100.0);
        // From a certain win to a certain loss: 100 points of win percentage lost, below the
        // curve's zero (at about 86 points), so clamped to 0.
        assert!(103.1668 * (-4.354f64).exp() - 3.1669 < 0.0);
        assert_eq!(move_accuracy(Wdl::WIN, Wdl::LOSS, Mark::Blunder), 0.0);
        // Half a point given away (a win to a draw): 50 percentage points.
        let half = 103.1668 * (-0.04354f64 * 50.0).exp() - 3.1669;
        assert!((move_accuracy(Wdl::WIN, Wdl::DRAW, Mark::Blunder) - half).abs() < 1e-9);
        // A played move better than the best one's estimate is not rewarded above 100.
        assert_eq!(move_accuracy(Wdl::LOSS, Wdl::WIN, Mark::Good), 100.0);
    }

    #[test]
    fn the_summary_counts_each_players_marks_and_averages_their_accuracy() {
        use Side::{First, Second};
        let plies = [
            ply(First, Mark::Best, EVEN, EVEN),
            ply(Second, Mark::Inaccuracy, EVEN, Wdl::DRAW),
            ply(First, Mark::Blunder, Wdl::WIN, Wdl::LOSS),
            ply(Second, Mark::Best, EVEN, EVEN),
            ply(First, Mark::Best, EVEN, EVEN),
            ply(Second, Mark::Mistake, Wdl::DRAW, Wdl::LOSS),
        ];
        let [x, o] = summarize(&plies);
        assert_eq!((x.moves, x.marks), (3, [2, 0, 0, 0, 1]));
        assert_eq!((o.moves, o.marks), (3, [1, 0, 1, 1, 0]));
        let mean = |side: Side| {
            let own: Vec<f64> = plies
                .iter()
                .filter(|p| p.player == side)
                .map(|p| p.accuracy)
                .collect();
            (own.iter().sum::<f64>() / own.len() as f64 * 10.0).round() / 10.0
        };
        assert_eq!(x.accuracy, Some(mean(First)));
        assert_eq!(o.accuracy, Some(mean(Second)));
        assert!(x.accuracy.unwrap() < 100.0 && o.accuracy.unwrap() < 100.0);
        let [only, none] = summarize(&plies[..1]);
        assert_eq!(
            (only.accuracy, none.accuracy, none.moves),
            (Some(100.0), None, 0)
        );
    }
}
