//! Whether an answer read from Redis may be served: anyone who can write to Redis can put any
//! value under a key, so a decoded answer is checked against the position the key names before
//! a client sees it, and refused (then searched as a miss) unless every part of it is one a
//! search of that position could have given.
//!
//! The checks replay what a client is told: the best move is a legal move now; the line (PV)
//! starts with it and is legal when walked (a Connect-4 move's cell depends on the moves
//! before it); the iterations' and the analysis' moves are legal at the root, the analysis'
//! distinct, best first and including the best move; forbidden points are exactly the ones the
//! rules forbid now (renju), and none under other rules; every score lies within the engine's
//! range, and a proof goes with its score as the engine writes them (a decisive score iff a
//! win or a loss at that distance, a win on an odd ply and a loss on an even one, a draw only
//! with 0), no further off than the cells left allow, and the line agrees with it as far as
//! it goes (a "win in 3" whose line is 3 plies long must end the game there, a line that ends
//! the game must end it as the proof says). Counters and times are bounded as a search bounds
//! them, and a full-strength search stops for time only at the end of its window. A position
//! small enough to solve at once (at most `EXACT_PLIES`, 9, plies left: every tic-tac-toe
//! position) is solved, and a full-strength answer must play a best move and prove the
//! position's value; where the game knows a position's result from a table (Connect-4's
//! opening book: the standard board's positions of at most 8 discs), a full-strength answer
//! must prove that result and its move must keep it. Elsewhere what cannot be checked without searching again is the quality
//! of a legal move: a forged answer can still be a poor one, which is why Redis also wants a
//! password and a network policy (docs/operations.md, "A cache shared by replicas").

use std::collections::HashMap;
use std::time::Duration;

use crate::engine::skill::FULL_STRENGTH;
use crate::engine::{
    MATE_BOUND, Move, Outcome, Proof, SOLVED_WHATEVER_THE_CLOCK_PLIES, Score, Status, StopReason,
    WIN,
};
use crate::games::Cell;
use crate::service::cache::CacheKey;
use crate::service::games::ServedGame;
use crate::service::{Answer, ForbiddenCell, MAX_DEPTH, ScoredCell};

/// How far a search's own time may run past its window (a search notices its deadline between
/// nodes, and a threat search between its own steps).
const ELAPSED_SLACK: Duration = Duration::from_secs(1);

/// How far inside its window a full-strength "time" stop may be: the window is measured a
/// little before the search starts (a deterministic search's table is made in between).
const EARLY_TIME_STOP: Duration = Duration::from_millis(250);

/// Why a decoded answer is not served. `reason` is the metric label.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the answer is for {found}, the key for {expected}")]
    Game {
        expected: &'static str,
        found: &'static str,
    },
    #[error("the answer is for the other side to move")]
    SideToMove,
    #[error("the best move, row {}, column {}, is not a legal move", .0.row, .0.col)]
    BestMove(Cell),
    #[error("the score: {0}")]
    Score(String),
    #[error("the line: {0}")]
    Pv(String),
    #[error("depth {0} is beyond {MAX_DEPTH}")]
    Depth(u32),
    #[error("the iterations: {0}")]
    Iterations(String),
    #[error("the analysis: {0}")]
    Analysis(String),
    #[error("the forbidden points are not the ones the rules forbid here")]
    Forbidden,
    #[error("the search's counters: {0}")]
    Counters(String),
    #[error("solved exactly: {0}")]
    Exact(String),
}

impl Refusal {
    /// The label of `kibitz_shared_cache_refused_total`.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Game { .. } => "game",
            Refusal::SideToMove => "side_to_move",
            Refusal::BestMove(_) => "best_move",
            Refusal::Score(_) => "score",
            Refusal::Pv(_) => "pv",
            Refusal::Depth(_) => "depth",
            Refusal::Iterations(_) => "iterations",
            Refusal::Analysis(_) => "analysis",
            Refusal::Forbidden => "forbidden",
            Refusal::Counters(_) => "counters",
            Refusal::Exact(_) => "exact",
        }
    }
}

/// What the checks need besides the position: the longest window a search of this service
/// gets (its largest `budget_ms`).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub max_window: Duration,
}

/// `Ok` if `answer`, read under `key`, may be served for `position` (the position the key's
/// board and rules describe).
pub fn check<G: ServedGame>(
    answer: &Answer,
    key: &CacheKey,
    position: &G,
    bounds: &Bounds,
) -> Result<(), Refusal> {
    if answer.game != G::NAME || key.game != G::NAME {
        return Err(Refusal::Game {
            expected: G::NAME,
            found: answer.game,
        });
    }
    if answer.to_move != position.side_to_move() || key.to_move != answer.to_move {
        return Err(Refusal::SideToMove);
    }
    let root = LegalCells::of(position);
    let remaining = position.max_remaining_plies();
    root.get(answer.best)
        .ok_or(Refusal::BestMove(answer.best))?;
    score_with_proof(answer.score, answer.proof, remaining).map_err(Refusal::Score)?;
    if answer.threat_proof.is_some() && !answer.proof.is_some_and(|p| p.outcome == Outcome::Win) {
        return Err(Refusal::Score(
            "a threat search's proof without a proven win".into(),
        ));
    }
    if answer.depth > MAX_DEPTH {
        return Err(Refusal::Depth(answer.depth));
    }
    line(answer, position).map_err(Refusal::Pv)?;
    iterations(answer, &root).map_err(Refusal::Iterations)?;
    analysis(answer, key, position, &root, remaining).map_err(Refusal::Analysis)?;
    if answer.forbidden != forbidden_now(key, position) {
        return Err(Refusal::Forbidden);
    }
    counters(answer, key, bounds).map_err(Refusal::Counters)?;
    exact(answer, key, position, &root).map_err(Refusal::Exact)?;
    known(answer, key, position, &root).map_err(Refusal::Exact)?;
    Ok(())
}

/// Whether `key` asks for a full-strength search that may run to the end of the game: one
/// held to the position's true value (a weaker level, or a depth or node limit short of the
/// end, may honestly play worse).
fn held_to_the_truth<G: ServedGame>(key: &CacheKey, position: &G) -> bool {
    key.style.level == FULL_STRENGTH
        && key.max_nodes.is_none()
        && key
            .max_depth
            .is_none_or(|depth| depth >= position.max_remaining_plies())
}

/// Where the game knows the position's result without a search (Connect-4's opening book:
/// a look-up), a full-strength answer must prove exactly that result, and its move must keep
/// it wherever the book knows the position after the move too.
fn known<G: ServedGame>(
    answer: &Answer,
    key: &CacheKey,
    position: &G,
    root: &LegalCells,
) -> Result<(), String> {
    let Some(truth) = position.known_result() else {
        return Ok(());
    };
    if !held_to_the_truth(key, position) {
        return Ok(());
    }
    if answer.proof != Some(truth) {
        return Err(format!(
            "it proves {:?} where the book knows a {} in {}",
            answer.proof.map(|p| (p.outcome.as_str(), p.plies_to_end)),
            truth.outcome.as_str(),
            truth.plies_to_end
        ));
    }
    let Some(best) = root.get(answer.best) else {
        return Err("the best move is not legal".into());
    };
    let mut after = position.clone();
    after.make(best);
    if let Some(reply) = after.known_result() {
        let kept = reply.outcome == truth.outcome.flipped()
            && reply.plies_to_end + 1 == truth.plies_to_end;
        if !kept {
            return Err(format!(
                "its move leads to a {} in {} for the opponent, where the book knows a {} in {}",
                reply.outcome.as_str(),
                reply.plies_to_end,
                truth.outcome.as_str(),
                truth.plies_to_end
            ));
        }
    }
    Ok(())
}

/// Positions with at most this many plies left are solved exactly before their answer is
/// served, however late the search starts (the engine runs them to the end whatever the
/// clock: [`SOLVED_WHATEVER_THE_CLOCK_PLIES`]): every tic-tac-toe position (a few thousand
/// nodes at most, well under a millisecond), and Connect-4 or gomoku positions as near their
/// end.
const EXACT_PLIES: u32 = SOLVED_WHATEVER_THE_CLOCK_PLIES;

/// A full-strength answer to a position small enough to solve ([`EXACT_PLIES`]) must play a
/// best move (win, draw or loss, by plain alpha-beta over those three values), and a proof it
/// gives must be the position's value. A limited search (a depth or node limit short of the
/// end, a weaker level) may honestly play worse, so it is not held to this.
fn exact<G: ServedGame>(
    answer: &Answer,
    key: &CacheKey,
    position: &G,
    root: &LegalCells,
) -> Result<(), String> {
    let remaining = position.max_remaining_plies();
    if remaining > EXACT_PLIES || !held_to_the_truth(key, position) {
        return Ok(());
    }
    let Some(best) = root.get(answer.best) else {
        return Err("the best move is not legal".into());
    };
    let mut walk = position.clone();
    let mut buffers: Vec<Vec<Move>> = (0..=remaining).map(|_| Vec::new()).collect();
    walk.make(best);
    let played = -win_draw_loss(&mut walk, -1, 1, &mut buffers);
    walk.unmake(best);
    // Is any move better than the one played? A null window above its value says.
    let mut moves = Vec::new();
    walk.legal_moves(&mut moves);
    for mv in moves.into_iter().filter(|&mv| mv != best) {
        walk.make(mv);
        let value = -win_draw_loss(&mut walk, -played - 1, -played, &mut buffers);
        walk.unmake(mv);
        if value > played {
            return Err(format!(
                "it plays for a {} where a {} is forced",
                wdl_name(played),
                wdl_name(value)
            ));
        }
    }
    if let Some(proof) = answer.proof {
        let proven = match proof.outcome {
            Outcome::Win => 1,
            Outcome::Draw => 0,
            Outcome::Loss => -1,
        };
        if proven != played {
            return Err(format!(
                "it proves a {} where the position is a {}",
                wdl_name(proven),
                wdl_name(played)
            ));
        }
    }
    Ok(())
}

/// The value of `position` for its side to move, 1 win, 0 draw, -1 loss, within
/// `(alpha, beta)` (fail-hard). `buffers` holds one move list per ply left.
fn win_draw_loss<G: ServedGame>(
    position: &mut G,
    mut alpha: i8,
    beta: i8,
    buffers: &mut [Vec<Move>],
) -> i8 {
    match position.status() {
        Status::Lost => return -1,
        Status::Draw => return 0,
        Status::Ongoing => {}
    }
    let Some((moves, rest)) = buffers.split_first_mut() else {
        return 0;
    };
    moves.clear();
    position.legal_moves(moves);
    if moves.is_empty() {
        return 0;
    }
    let mut best = -1;
    for &mv in moves.iter() {
        position.make(mv);
        let value = -win_draw_loss(position, -beta, -alpha, rest);
        position.unmake(mv);
        if value > best {
            best = value;
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
    }
    best
}

fn wdl_name(value: i8) -> &'static str {
    match value {
        1 => "win",
        0 => "draw",
        _ => "loss",
    }
}

/// The legal moves of a position by their cells.
struct LegalCells(HashMap<Cell, Move>);

impl LegalCells {
    fn of<G: ServedGame>(position: &G) -> Self {
        let mut moves = Vec::new();
        position.legal_moves(&mut moves);
        LegalCells(
            moves
                .into_iter()
                .map(|mv| (position.cell_of(mv), mv))
                .collect(),
        )
    }

    fn get(&self, cell: Cell) -> Option<Move> {
        self.0.get(&cell).copied()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A score and its proof as the engine writes them, for a position with `remaining` plies
/// left at most: within `±WIN`; a decisive score iff a win or loss proof at its distance; a
/// win ends on an odd ply (the mover's), a loss on an even one; a draw scores 0; no proof
/// reaches past the cells left.
fn score_with_proof(score: Score, proof: Option<Proof>, remaining: u32) -> Result<(), String> {
    if score.unsigned_abs() > WIN.unsigned_abs() {
        return Err(format!("{score} is beyond ±{WIN}"));
    }
    let decisive = score.abs() >= MATE_BOUND;
    let Some(proof) = proof else {
        return if decisive {
            Err(format!(
                "{score} is a proven result, and no proof comes with it"
            ))
        } else {
            Ok(())
        };
    };
    let plies = proof.plies_to_end;
    if plies == 0 || plies > remaining {
        return Err(format!(
            "the game ends in {plies} plies, and {remaining} are left at most"
        ));
    }
    let consistent = match proof.outcome {
        Outcome::Win => plies % 2 == 1 && Proof::from_decisive(score) == Some(proof),
        Outcome::Loss => plies % 2 == 0 && Proof::from_decisive(score) == Some(proof),
        Outcome::Draw => score == 0,
    };
    if consistent {
        Ok(())
    } else {
        Err(format!(
            "a {} in {plies} plies does not score {score}",
            proof.outcome.as_str()
        ))
    }
}

/// The line is legal when walked from the position, starts with the best move, and agrees
/// with the proof: a line that ends the game ends it as the proof says, and a line as long as
/// a proven win or loss ends the game on its last ply.
fn line<G: ServedGame>(answer: &Answer, position: &G) -> Result<(), String> {
    if answer.pv.first() != Some(&answer.best) {
        return Err("it does not start with the best move".into());
    }
    let mut walk = position.clone();
    let mut ended = None;
    for (ply, &cell) in answer.pv.iter().enumerate() {
        let mv = legal_move_at(&walk, cell).ok_or_else(|| {
            format!(
                "move {} (row {}, column {}) is not legal there",
                ply + 1,
                cell.row,
                cell.col
            )
        })?;
        walk.make(mv);
        if ended.is_none() && walk.status() != Status::Ongoing {
            ended = Some((ply as u32 + 1, walk.status()));
        }
    }
    let Some(proof) = answer.proof else {
        // Gomoku's threat search reports a line it believes forced without a proof.
        return Ok(());
    };
    match (proof.outcome, ended) {
        (Outcome::Win | Outcome::Loss, Some((plies, Status::Lost)))
            if plies == proof.plies_to_end =>
        {
            Ok(())
        }
        (Outcome::Win | Outcome::Loss, None) if (answer.pv.len() as u32) < proof.plies_to_end => {
            Ok(())
        }
        (Outcome::Draw, None | Some((_, Status::Draw))) => Ok(()),
        _ => Err(format!(
            "it does not end the game as a {} in {} plies does",
            proof.outcome.as_str(),
            proof.plies_to_end
        )),
    }
}

/// The legal move of `position` that plays into `cell`.
fn legal_move_at<G: ServedGame>(position: &G, cell: Cell) -> Option<Move> {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    moves.into_iter().find(|&mv| position.cell_of(mv) == cell)
}

/// Iterations deepen one after another within the depth range, their moves are legal at the
/// root, their scores in range, their nodes within the search's; the last one is the answer's
/// depth.
fn iterations(answer: &Answer, root: &LegalCells) -> Result<(), String> {
    let mut previous = 0;
    let mut nodes: u64 = 0;
    for it in &answer.iterations {
        if it.depth <= previous || it.depth > MAX_DEPTH {
            return Err(format!("depth {} follows depth {previous}", it.depth));
        }
        previous = it.depth;
        if root.get(it.best).is_none() {
            return Err(format!(
                "the move of depth {}, row {}, column {}, is not legal",
                it.depth, it.best.row, it.best.col
            ));
        }
        if it.score.unsigned_abs() > WIN.unsigned_abs() {
            return Err(format!("depth {} scores {}", it.depth, it.score));
        }
        nodes = nodes.saturating_add(it.nodes);
    }
    if nodes > answer.nodes {
        return Err(format!(
            "they count {nodes} nodes, the search {}",
            answer.nodes
        ));
    }
    match answer.iterations.last() {
        Some(last) if last.depth != answer.depth => Err(format!(
            "the last is depth {}, the answer's {}",
            last.depth, answer.depth
        )),
        _ => Ok(()),
    }
}

/// An analysis exactly when asked; then its moves legal and distinct, deepest first and best
/// first within a depth, each at the answer's depth or one deeper (an iteration cut short),
/// the best move among them with the answer's score and proof (first, at full strength), each
/// score with its proof as the engine writes them, and a claimed win on the spot really
/// winning on the spot.
fn analysis<G: ServedGame>(
    answer: &Answer,
    key: &CacheKey,
    position: &G,
    root: &LegalCells,
    remaining: u32,
) -> Result<(), String> {
    let moves = match (&answer.analysis, key.analysis) {
        (None, false) => return Ok(()),
        (Some(moves), true) => moves,
        (Some(_), false) => return Err("there is one, and none was asked".into()),
        (None, true) => return Err("there is none, and one was asked".into()),
    };
    if moves.is_empty() {
        return Err("it scores no move".into());
    }
    if moves.len() > root.len() {
        return Err(format!(
            "it scores {} moves, and {} are legal",
            moves.len(),
            root.len()
        ));
    }
    let mut seen = HashMap::with_capacity(moves.len());
    for (i, scored) in moves.iter().enumerate() {
        let ScoredCell {
            cell,
            score,
            proof,
            depth,
        } = *scored;
        if depth < answer.depth || depth > answer.depth.saturating_add(1) || depth > MAX_DEPTH {
            return Err(format!(
                "row {}, column {} is scored at depth {depth}, the answer at {}",
                cell.row, cell.col, answer.depth
            ));
        }
        let mv = root
            .get(cell)
            .ok_or_else(|| format!("row {}, column {} is not a legal move", cell.row, cell.col))?;
        if seen.insert(cell, ()).is_some() {
            return Err(format!("row {}, column {} comes twice", cell.row, cell.col));
        }
        if i > 0 && (depth, score) > (moves[i - 1].depth, moves[i - 1].score) {
            return Err("it is not deepest, then best, first".into());
        }
        score_with_proof(score, proof, remaining)
            .map_err(|why| format!("row {}, column {}: {why}", cell.row, cell.col))?;
        if proof.is_some_and(|p| p.outcome == Outcome::Win && p.plies_to_end == 1) {
            let mut after = position.clone();
            after.make(mv);
            if after.status() != Status::Lost {
                return Err(format!(
                    "row {}, column {} does not win at once",
                    cell.row, cell.col
                ));
            }
        }
    }
    let Some(listed) = moves.iter().find(|m| m.cell == answer.best) else {
        return Err("it does not score the best move".into());
    };
    if (listed.score, listed.proof) != (answer.score, answer.proof) {
        return Err("it scores the best move otherwise than the answer".into());
    }
    if key.style.level == FULL_STRENGTH && moves[0].cell != answer.best {
        return Err("at full strength the best move is not its first".into());
    }
    Ok(())
}

/// The forbidden points an answer to `key` lists: with analysis, under rules that forbid
/// (renju), the position's own; otherwise none.
fn forbidden_now<G: ServedGame>(key: &CacheKey, position: &G) -> Option<Vec<ForbiddenCell>> {
    if !key.analysis {
        return None;
    }
    position.forbidden_cells().map(|points| {
        points
            .into_iter()
            .map(|(mv, reason)| ForbiddenCell {
                cell: position.cell_of(mv),
                reason,
            })
            .collect()
    })
}

/// Table counters and times as a search has them: hits among probes, a table at most full, a
/// window no longer than the longest budget, a search no longer than its window (give or take
/// [`ELAPSED_SLACK`]); a proven or book answer carries its proof; only a node limit stops a
/// search for nodes.
fn counters(answer: &Answer, key: &CacheKey, bounds: &Bounds) -> Result<(), String> {
    if answer.table.hits > answer.table.probes {
        return Err(format!(
            "{} table hits in {} probes",
            answer.table.hits, answer.table.probes
        ));
    }
    if answer.fill_permille > 1000 {
        return Err(format!("the table is {} ‰ full", answer.fill_permille));
    }
    if answer.window > bounds.max_window {
        return Err(format!(
            "a window of {} ms, longer than any budget",
            answer.window.as_millis()
        ));
    }
    if answer.elapsed > answer.window + ELAPSED_SLACK {
        return Err(format!(
            "{} ms spent in a window of {} ms",
            answer.elapsed.as_millis(),
            answer.window.as_millis()
        ));
    }
    match answer.stop_reason {
        StopReason::Proven | StopReason::Book if answer.proof.is_none() => {
            Err(format!("{} without a proof", answer.stop_reason.as_str()))
        }
        StopReason::Nodes if key.max_nodes.is_none() => {
            Err("stopped by a node limit nobody set".into())
        }
        // A full-strength search stops for time only once its deadline, the end of its
        // window, has passed (a weaker level stops early by design).
        StopReason::Time
            if key.style.level == FULL_STRENGTH
                && answer.elapsed < answer.window / 2
                && answer.window - answer.elapsed > EARLY_TIME_STOP =>
        {
            Err(format!(
                "stopped for time after {} us of a {} ms window",
                answer.elapsed.as_micros(),
                answer.window.as_millis()
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::skill::SplitMix64;
    use crate::engine::{
        Algorithm, Deadline, Game, SearchLimits, SearchOptions, Side, TranspositionTable,
    };
    use crate::games::connect4::Connect4;
    use crate::games::gomoku::{Gomoku, GomokuRules};
    use crate::games::tictactoe::TicTacToe;
    use crate::games::{BoardGame, Grid, Stone};
    use crate::service::levels::Style;
    use crate::service::shared_cache::wire::{decode, encode};
    use crate::service::{IterationCell, think};

    const BOUNDS: Bounds = Bounds {
        max_window: Duration::from_secs(60),
    };

    /// One way of asking: what the key holds besides the position.
    #[derive(Clone, Copy, Debug)]
    struct Asking {
        analysis: bool,
        minimax: bool,
        max_depth: Option<u32>,
        max_nodes: Option<u64>,
        level: u8,
        budget_ms: u64,
    }

    const FULL: Asking = Asking {
        analysis: false,
        minimax: false,
        max_depth: None,
        max_nodes: None,
        level: 10,
        budget_ms: 20,
    };

    fn ways_of_asking() -> Vec<Asking> {
        vec![
            FULL,
            Asking {
                analysis: true,
                ..FULL
            },
            Asking { level: 3, ..FULL },
            Asking {
                level: 6,
                analysis: true,
                ..FULL
            },
            Asking {
                max_depth: Some(3),
                ..FULL
            },
            Asking {
                max_nodes: Some(3_000),
                budget_ms: 1_000,
                ..FULL
            },
            Asking {
                budget_ms: 2,
                ..FULL
            },
            // Spent before the search starts, as when a request waited in a queue: positions
            // small enough to solve are still solved.
            Asking {
                budget_ms: 0,
                ..FULL
            },
        ]
    }

    fn key_for<G: ServedGame>(position: &G, rules: &G::Rules, asking: Asking) -> CacheKey {
        CacheKey {
            rules: G::rules_key(rules),
            minimax: asking.minimax,
            analysis: asking.analysis,
            max_depth: asking.max_depth,
            max_nodes: asking.max_nodes,
            style: style_of(asking),
            ..CacheKey::plain(G::NAME, "", position.side_to_move())
        }
    }

    fn style_of(asking: Asking) -> Style {
        Style {
            level: asking.level,
            seed: (asking.level < 10).then_some(7),
            deterministic: false,
        }
    }

    /// What this service would store for `position` asked `asking`, read back from its value.
    fn stored_answer<G: ServedGame>(position: &G, asking: Asking) -> Answer {
        let budget = Duration::from_millis(asking.budget_ms);
        let limits = SearchLimits {
            deadline: Some(Deadline::after(budget)),
            max_depth: asking.max_depth,
            max_nodes: asking.max_nodes,
            ..SearchLimits::default()
        };
        let options = SearchOptions {
            algorithm: if asking.minimax {
                Algorithm::Minimax
            } else {
                Algorithm::AlphaBeta
            },
            analysis: asking.analysis,
            ..SearchOptions::default()
        };
        let table = TranspositionTable::with_megabytes(4);
        think(position, &limits, options, &table, budget, style_of(asking)).expect("a move")
    }

    /// Positions after random legal plies from `start` (never a finished game).
    fn random_positions<G: ServedGame>(
        start: &G,
        count: usize,
        max_plies: u64,
        seed: u64,
    ) -> Vec<G> {
        let mut rng = SplitMix64::new(seed);
        let mut positions = Vec::new();
        while positions.len() < count {
            let mut position = start.clone();
            let plies = rng.next_u64() % (max_plies + 1);
            let mut moves = Vec::new();
            for _ in 0..plies {
                moves.clear();
                position.legal_moves(&mut moves);
                let mv = moves[(rng.next_u64() % moves.len() as u64) as usize];
                position.make(mv);
                if position.status() != Status::Ongoing {
                    position.unmake(mv);
                    break;
                }
            }
            positions.push(position);
        }
        positions
    }

    /// Every answer a search gives for `positions`, through the wire and back, is trusted.
    fn assert_trusted<G: ServedGame>(
        positions: &[G],
        rules: &G::Rules,
        asking: &[Asking],
    ) -> usize {
        let mut checked = 0;
        for position in positions {
            for &asking in asking {
                let answer = stored_answer(position, asking);
                let key = key_for(position, rules, asking);
                let read = decode(&key, &encode(&answer)).expect("decodes");
                assert_eq!(read.pv, answer.pv);
                if let Err(refusal) = check(&read, &key, position, &BOUNDS) {
                    panic!("{refusal} ({asking:?})\n{position:?}\n{answer:#?}");
                }
                checked += 1;
            }
        }
        checked
    }

    #[test]
    fn every_answer_a_search_gives_is_trusted_in_every_game() {
        let mut asking = ways_of_asking();
        assert_trusted(&random_positions(&TicTacToe::new(), 40, 7, 1), &(), &asking);
        // Plain minimax keeps its deadline (the engine runs only alpha-beta past it), so it
        // gets a budget it ends well inside, proven, on a machine however busy.
        asking.push(Asking {
            minimax: true,
            analysis: true,
            budget_ms: 10_000,
            ..FULL
        });
        assert_trusted(&random_positions(&TicTacToe::new(), 10, 7, 2), &(), &asking);
        asking.pop();
        // Book, solver (with its line to the end) and the engine behind them.
        assert_trusted(&random_positions(&Connect4::new(), 24, 36, 3), &(), &asking);
        // Threat searches and gomoku's own search (15x15), the exact engine (9x9), renju.
        let freestyle = GomokuRules::default();
        let board = Gomoku::new(15, 15, freestyle).unwrap();
        assert_trusted(&random_positions(&board, 6, 40, 4), &freestyle, &asking);
        let small = Gomoku::new(9, 9, freestyle).unwrap();
        assert_trusted(&random_positions(&small, 6, 30, 5), &freestyle, &asking);
        let renju = GomokuRules {
            renju: true,
            ..GomokuRules::default()
        };
        let board = Gomoku::new(15, 15, renju).unwrap();
        assert_trusted(&random_positions(&board, 6, 40, 6), &renju, &asking);
    }

    /// Black (X) to move under renju, where row 7, column 8 would make a double three.
    fn renju_case() -> (Gomoku, GomokuRules) {
        let mut grid = Grid::empty(15, 15);
        for (row, col) in [(5, 8), (6, 8), (7, 6), (7, 7)] {
            grid.set(row, col, Stone::Player(Side::First));
        }
        for (row, col) in [(9, 2), (12, 0), (14, 0), (14, 14)] {
            grid.set(row, col, Stone::Player(Side::Second));
        }
        let renju = GomokuRules {
            renju: true,
            ..GomokuRules::default()
        };
        (Gomoku::from_grid(&grid, None, &renju).unwrap(), renju)
    }

    #[test]
    fn a_renju_analysis_with_its_forbidden_points_is_trusted() {
        let (position, renju) = renju_case();
        let asking = Asking {
            analysis: true,
            ..FULL
        };
        let answer = stored_answer(&position, asking);
        assert!(
            answer.forbidden.as_ref().is_some_and(|f| !f.is_empty()),
            "{:?}",
            answer.forbidden
        );
        assert_trusted(&[position], &renju, &[asking]);
    }

    /// A Connect-4 position with a real stored answer: X (first) to move, columns 0-2 hold a
    /// disc each on the bottom row, so the bottom cell of column 2 is occupied.
    fn connect4_case(analysis: bool) -> (Connect4, CacheKey, Answer) {
        let rows = [
            ".......", ".......", ".......", ".......", ".......", "XOX.O..",
        ];
        let grid = Grid::parse(&rows, 15).unwrap();
        let position = Connect4::from_grid(&grid, None, &()).unwrap();
        let asking = Asking {
            analysis,
            max_depth: Some(6),
            ..FULL
        };
        let answer = stored_answer(&position, asking);
        let key = key_for(&position, &(), asking);
        (position, key, answer)
    }

    fn refused(answer: &Answer, key: &CacheKey, position: &Connect4) -> &'static str {
        match check(answer, key, position, &BOUNDS) {
            Ok(()) => panic!("trusted: {answer:#?}"),
            Err(refusal) => refusal.reason(),
        }
    }

    const OCCUPIED: Cell = Cell { row: 5, col: 2 };

    /// Connect-4's opening book knows the empty board's value (a first-player win in 41) and
    /// every child's: a well-formed forgery that plays a losing column, or proves the wrong
    /// result with the right one, is refused without a search.
    #[test]
    fn a_connect4_answer_the_opening_book_contradicts_is_refused() {
        let position = Connect4::new();
        let key = key_for(&position, &(), FULL);
        let honest = stored_answer(&position, FULL);
        assert_eq!(honest.best, Cell { row: 5, col: 3 });
        assert_eq!(check(&honest, &key, &position, &BOUNDS), Ok(()));
        let edge = Cell { row: 5, col: 0 };
        let losing_move = Answer {
            best: edge,
            pv: vec![edge],
            iterations: Vec::new(),
            ..honest.clone()
        };
        let refusal = check(&losing_move, &key, &position, &BOUNDS).unwrap_err();
        assert_eq!(refusal.reason(), "exact", "{refusal}");
        assert!(refusal.to_string().contains("book"), "{refusal}");
        let drawn = Answer {
            score: 0,
            proof: Some(Proof {
                outcome: Outcome::Draw,
                plies_to_end: 42,
            }),
            pv: vec![honest.best],
            iterations: Vec::new(),
            ..honest.clone()
        };
        let refusal = check(&drawn, &key, &position, &BOUNDS).unwrap_err();
        assert_eq!(refusal.reason(), "exact", "{refusal}");
        // A weaker level may play the edge honestly: not held to the book.
        let weak = Asking { level: 3, ..FULL };
        let weak_key = key_for(&position, &(), weak);
        let weak_losing = Answer {
            style: style_of(weak),
            ..losing_move
        };
        assert_ne!(
            check(&weak_losing, &weak_key, &position, &BOUNDS).map_err(|r| r.reason()),
            Err("exact")
        );
    }

    /// A forgery the seven other checks let through: a tic-tac-toe answer that misses a win in one, stopped
    /// "for time" 22 us into a 1 s window. Each lie is refused on its own.
    #[test]
    fn a_tictactoe_answer_missing_a_win_or_stopped_for_time_too_soon_is_refused() {
        let position =
            TicTacToe::from_grid(&Grid::parse(&["XX.", "OO.", "..."], 3).unwrap(), None, &())
                .unwrap();
        let key = key_for(&position, &(), FULL);
        let honest = stored_answer(&position, FULL);
        assert_eq!(honest.best, Cell { row: 0, col: 2 });
        assert_eq!(check(&honest, &key, &position, &BOUNDS), Ok(()));
        // A legal move, well formed, that lets O win: only solving the position tells.
        let corner = Cell { row: 2, col: 2 };
        let missed = Answer {
            best: corner,
            score: 0,
            proof: None,
            pv: vec![corner],
            iterations: Vec::new(),
            depth: 0,
            stop_reason: StopReason::Time,
            elapsed: honest.window,
            ..honest.clone()
        };
        let refusal = check(&missed, &key, &position, &BOUNDS).unwrap_err();
        assert_eq!(refusal.reason(), "exact", "{refusal}");
        assert!(refusal.to_string().contains("a win is forced"), "{refusal}");
        // The winning move, with a proof of a draw.
        let wrong_proof = Answer {
            score: 0,
            proof: Some(Proof {
                outcome: Outcome::Draw,
                plies_to_end: 5,
            }),
            ..honest.clone()
        };
        assert!(check(&wrong_proof, &key, &position, &BOUNDS).is_err());
        // The right move, but "stopped for time" after 22 us of a 1 s window.
        let too_soon = Answer {
            stop_reason: StopReason::Time,
            elapsed: Duration::from_micros(22),
            window: Duration::from_secs(1),
            ..honest.clone()
        };
        let refusal = check(&too_soon, &key, &position, &BOUNDS).unwrap_err();
        assert_eq!(refusal.reason(), "counters", "{refusal}");
        assert!(refusal.to_string().contains("22 us"), "{refusal}");
        // A weaker level may miss the win honestly: not held to the exact value.
        let weak = Asking { level: 3, ..FULL };
        let weak_key = key_for(&position, &(), weak);
        assert_eq!(check(&missed, &weak_key, &position, &BOUNDS), Ok(()));
    }

    #[test]
    fn the_issues_forgery_an_occupied_cell_winning_at_once_is_refused() {
        let (position, key, answer) = connect4_case(false);
        assert_eq!(check(&answer, &key, &position, &BOUNDS), Ok(()));
        let forged = Answer {
            best: OCCUPIED,
            score: 999_999,
            proof: Some(Proof {
                outcome: Outcome::Win,
                plies_to_end: 1,
            }),
            pv: vec![OCCUPIED],
            ..answer.clone()
        };
        assert_eq!(refused(&forged, &key, &position), "best_move");
        // The same claim on a legal move that does not win.
        let legal = answer.best;
        let claim = Answer {
            best: legal,
            score: 999_999,
            proof: Some(Proof {
                outcome: Outcome::Win,
                plies_to_end: 1,
            }),
            pv: vec![legal],
            ..answer
        };
        assert_eq!(refused(&claim, &key, &position), "pv");
    }

    #[test]
    fn forged_lines_are_refused() {
        let (position, key, answer) = connect4_case(false);
        let with_pv = |pv: Vec<Cell>| Answer {
            pv,
            ..answer.clone()
        };
        let best = answer.best;
        assert_eq!(refused(&with_pv(vec![]), &key, &position), "pv");
        // Column 3 is empty: its landing cell is the bottom one, not row 4.
        let d = |row| Cell { row, col: 3 };
        assert_eq!(
            refused(&with_pv(vec![d(4)]), &key, &position),
            "pv",
            "not the best"
        );
        let after_best = if best == d(5) { d(4) } else { d(5) };
        let floating = Cell {
            row: 2,
            col: (best.col + 1) % 7,
        };
        assert_eq!(
            refused(&with_pv(vec![best, floating]), &key, &position),
            "pv",
            "a disc that floats"
        );
        assert_eq!(
            refused(&with_pv(vec![best, best]), &key, &position),
            "pv",
            "the same cell twice"
        );
        let good = with_pv(vec![best, after_best]);
        assert_eq!(check(&good, &key, &position, &BOUNDS), Ok(()));
    }

    #[test]
    fn forged_scores_and_proofs_are_refused() {
        let (position, key, answer) = connect4_case(false);
        let scored = |score: Score, proof: Option<(Outcome, u32)>| Answer {
            score,
            proof: proof.map(|(outcome, plies_to_end)| Proof {
                outcome,
                plies_to_end,
            }),
            pv: vec![answer.best],
            iterations: Vec::new(),
            stop_reason: StopReason::Depth,
            ..answer.clone()
        };
        let cases = [
            ("beyond the range", scored(WIN + 1, None)),
            ("beyond the range, negative", scored(-WIN - 5, None)),
            ("decisive without a proof", scored(WIN - 9, None)),
            (
                "a win with a heuristic score",
                scored(40, Some((Outcome::Win, 9))),
            ),
            (
                "a win at another distance",
                scored(WIN - 9, Some((Outcome::Win, 7))),
            ),
            (
                "a win on an even ply",
                scored(WIN - 8, Some((Outcome::Win, 8))),
            ),
            (
                "a loss on an odd ply",
                scored(-(WIN - 9), Some((Outcome::Loss, 9))),
            ),
            (
                "a loss scored as a win",
                scored(WIN - 8, Some((Outcome::Loss, 8))),
            ),
            ("a draw that scores", scored(12, Some((Outcome::Draw, 37)))),
            (
                "further than the cells left",
                scored(WIN - 41, Some((Outcome::Win, 41))),
            ),
            ("an ended game", scored(WIN, Some((Outcome::Win, 0)))),
        ];
        for (case, forged) in cases {
            assert_eq!(refused(&forged, &key, &position), "score", "{case}");
        }
        let fine = scored(WIN - 9, Some((Outcome::Win, 9)));
        assert_eq!(check(&fine, &key, &position, &BOUNDS), Ok(()));
    }

    #[test]
    fn forged_analyses_are_refused() {
        let (position, key, answer) = connect4_case(true);
        assert_eq!(check(&answer, &key, &position, &BOUNDS), Ok(()));
        let moves = answer.analysis.clone().unwrap();
        let with = |analysis: Option<Vec<ScoredCell>>| Answer {
            analysis,
            ..answer.clone()
        };
        let mut occupied = moves.clone();
        occupied.last_mut().unwrap().cell = OCCUPIED;
        assert_eq!(refused(&with(Some(occupied)), &key, &position), "analysis");
        let mut twice = moves.clone();
        twice.push(moves[0].clone());
        assert_eq!(refused(&with(Some(twice)), &key, &position), "analysis");
        let mut unsorted = moves.clone();
        unsorted.last_mut().unwrap().score = moves[0].score + 1;
        assert_eq!(refused(&with(Some(unsorted)), &key, &position), "analysis");
        let without_best: Vec<_> = moves
            .iter()
            .filter(|m| m.cell != answer.best)
            .cloned()
            .collect();
        assert_eq!(
            refused(&with(Some(without_best)), &key, &position),
            "analysis"
        );
        assert_eq!(
            refused(&with(Some(Vec::new())), &key, &position),
            "analysis"
        );
        assert_eq!(refused(&with(None), &key, &position), "analysis");
        let mut bad_proof = moves.clone();
        bad_proof[0].proof = Some(Proof {
            outcome: Outcome::Win,
            plies_to_end: 1,
        });
        bad_proof[0].score = WIN - 1;
        assert_eq!(refused(&with(Some(bad_proof)), &key, &position), "analysis");
        let not_asked = CacheKey {
            analysis: false,
            ..key.clone()
        };
        assert_eq!(refused(&answer, &not_asked, &position), "analysis");
        // Depths: one deeper than the answer is an iteration cut short; two deeper is not.
        let mut too_deep = moves.clone();
        too_deep[0].depth = answer.depth + 2;
        assert_eq!(refused(&with(Some(too_deep)), &key, &position), "analysis");
        let mut shallower_first = moves.clone();
        shallower_first[1].depth = answer.depth + 1;
        assert_eq!(
            refused(&with(Some(shallower_first)), &key, &position),
            "analysis"
        );
        // At full strength the answer's move is the first, with the answer's own score.
        let mut best_second = moves.clone();
        best_second.swap(0, 1);
        best_second[0].score = best_second[1].score;
        assert_eq!(
            refused(&with(Some(best_second)), &key, &position),
            "analysis"
        );
        let mut rescored = moves.clone();
        rescored[0].score -= 1;
        rescored[0].proof = None;
        assert_eq!(refused(&with(Some(rescored)), &key, &position), "analysis");
    }

    #[test]
    fn forged_iterations_forbidden_points_and_counters_are_refused() {
        let (position, key, answer) = connect4_case(false);
        let last = answer.iterations.last().cloned().unwrap();
        let with_iterations = |iterations: Vec<IterationCell>| Answer {
            iterations,
            ..answer.clone()
        };
        let illegal = IterationCell {
            best: OCCUPIED,
            ..last.clone()
        };
        assert_eq!(
            refused(&with_iterations(vec![illegal]), &key, &position),
            "iterations"
        );
        let again = vec![last.clone(), last.clone()];
        assert_eq!(
            refused(&with_iterations(again), &key, &position),
            "iterations"
        );
        let out_of_range = IterationCell {
            score: -WIN - 1,
            ..last.clone()
        };
        assert_eq!(
            refused(&with_iterations(vec![out_of_range]), &key, &position),
            "iterations"
        );
        let too_many_nodes = IterationCell {
            nodes: answer.nodes + 1,
            ..last
        };
        assert_eq!(
            refused(&with_iterations(vec![too_many_nodes]), &key, &position),
            "iterations"
        );
        let deep = Answer {
            depth: MAX_DEPTH + 1,
            ..answer.clone()
        };
        assert_eq!(refused(&deep, &key, &position), "depth");
        let forbidden = Answer {
            forbidden: Some(vec![ForbiddenCell {
                cell: Cell { row: 5, col: 3 },
                reason: "overline",
            }]),
            ..answer.clone()
        };
        assert_eq!(refused(&forbidden, &key, &position), "forbidden");
        let mut table = answer.table;
        table.hits = table.probes + 1;
        let hits = Answer {
            table,
            ..answer.clone()
        };
        assert_eq!(refused(&hits, &key, &position), "counters");
        let full = Answer {
            fill_permille: 1001,
            ..answer.clone()
        };
        assert_eq!(refused(&full, &key, &position), "counters");
        let long = Answer {
            window: Duration::from_secs(61),
            elapsed: Duration::from_secs(61),
            ..answer.clone()
        };
        assert_eq!(refused(&long, &key, &position), "counters");
        let slow = Answer {
            elapsed: answer.window + Duration::from_secs(5),
            ..answer.clone()
        };
        assert_eq!(refused(&slow, &key, &position), "counters");
        let nodes = Answer {
            stop_reason: StopReason::Nodes,
            ..answer.clone()
        };
        assert_eq!(refused(&nodes, &key, &position), "counters");
        let proven = Answer {
            stop_reason: StopReason::Proven,
            proof: None,
            ..answer.clone()
        };
        assert_eq!(refused(&proven, &key, &position), "counters");
    }

    #[test]
    fn an_answer_for_another_game_or_side_is_refused() {
        let (position, key, answer) = connect4_case(false);
        let other_side = Answer {
            to_move: position.side_to_move().other(),
            ..answer.clone()
        };
        assert_eq!(refused(&other_side, &key, &position), "side_to_move");
        let other_game = Answer {
            game: "tictactoe",
            ..answer
        };
        assert_eq!(refused(&other_game, &key, &position), "game");
    }

    #[test]
    fn renju_forbidden_points_must_be_the_rules_own() {
        let (position, renju) = renju_case();
        let asking = Asking {
            analysis: true,
            max_depth: Some(1),
            ..FULL
        };
        let key = key_for(&position, &renju, asking);
        let answer = stored_answer(&position, asking);
        assert_eq!(check(&answer, &key, &position, &BOUNDS), Ok(()));
        let mut points = answer.forbidden.clone().unwrap();
        let reason = |a: &Answer| check(a, &key, &position, &BOUNDS).unwrap_err().reason();
        points[0].cell = Cell { row: 0, col: 0 };
        let moved = Answer {
            forbidden: Some(points),
            ..answer.clone()
        };
        assert_eq!(reason(&moved), "forbidden");
        let hidden = Answer {
            forbidden: Some(Vec::new()),
            ..answer.clone()
        };
        assert_eq!(reason(&hidden), "forbidden");
        let forbidden = answer.forbidden.clone().unwrap()[0].cell;
        let on_forbidden = Answer {
            best: forbidden,
            pv: vec![forbidden],
            ..answer
        };
        assert_eq!(reason(&on_forbidden), "best_move");
    }
}
