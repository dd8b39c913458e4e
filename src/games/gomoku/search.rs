//! Gomoku's own search on big boards: a threat-aware alpha-beta with its own node function,
//! the way `connect4/solver.rs` is Connect-4's, used by [`Gomoku::think`](super::Gomoku).
//!
//! The generic engine searches every candidate the game offers and stops at a static
//! evaluation; strong gomoku engines instead prune hard where the position is quiet and look
//! further where it is forcing. The key ideas, each a numbered step of `MainSearch::node`:
//!
//! - **Won shapes are read, not searched.** Every node starts with the static win test
//!   ([`super::wincheck`]): a five to make, an open four or a double four to make (win in 3),
//!   a four-three with no four of the opponent's (win in 5), two fives of the opponent (loss in
//!   2), an open four of the opponent's to come that no cell stops, with no four of ours to
//!   make (loss in 4) end the node at once, with the line's length as the score.
//! - **Threats inside the tree.** A four of the opponent is answered by its block(s) only, and a
//!   single forced block is searched one ply deeper (it costs nothing: the tree does not
//!   widen). At the horizon the side to move stands pat on an evaluation that reaches beta
//!   (the node fails high whatever a VCF would add); below beta its continuous fours are
//!   searched ([`VcfSolver`], at most a dozen nodes, in place) instead of a quiescence search: a
//!   VCF there is a proven win, not a guess. It is run only where the mover's last stone may
//!   take part in it, or blocked a four (`MainSearch::vcf_may_be_new`). Razoring drops into the
//!   same horizon early.
//! - **Pruning in quiet positions** (no four and no open three of the opponent on the board):
//!   reverse futility (evaluation far above beta), razoring (far below alpha), move-count
//!   pruning of quiet moves by depth, and futility pruning of quiet children whose evaluation
//!   plus a margin cannot reach alpha. Threat moves (an open three or more of ours, a four of
//!   theirs blocked, a double threat) are never pruned.
//! - **An attack is reduced where it starts, not where it goes on.** At a quiet node the
//!   mover's fours and open threes are reduced like quiet moves when its previous move (two
//!   plies up) made no open three or more, and searched in full when it did. The reading (a
//!   guess the measurements fit, not a proof): the first threat of an attack is a guess like
//!   any move, its follow-ups are what finds the win. Rapfi too reduces a continued attack
//!   less (`CONTINUOUS_ATTACK_EXT` in its search).
//! - **Late-move reductions in fractions of a ply, driven by the move's rank** (the "policy":
//!   the cell's pattern codes for both sides, [`Gomoku::move_order_hint`], fitted to Rapfi's
//!   moves, ranks them; a strong shape by the hand-set [`Gomoku::shape_strength`] is reduced
//!   a ply less): depth counts quarter plies ([`PLY`]); the lower a move ranks and the deeper
//!   the node, the shallower it is searched first; a reduced move that beats alpha is searched
//!   again in full. At a node facing an open three every move after the first is reduced the
//!   same way: there the moves are the three's exact defence cells and the mover's own fours,
//!   none of them pruned.
//!
//! - **A second core** ([`run_main_search`]): helper threads run the same search, the
//!   first iteration one ply deeper, and share only the table (Lazy SMP).
//!
//! Its decisive scores are as sound as the pruning allows, not proofs: `think` confirms them
//! with the exact engine before it reports a proven outcome. The transposition table is the
//! service's shared one, keyed apart from the exact search's entries.

use std::time::{Duration, Instant};

use super::Gomoku;
use super::move_order;
use super::patterns::{FOUR, OPEN_FOUR, OPEN_THREE};
use super::vcf::{MAX_FOURS, VcfLimits, VcfSolver};
use super::wincheck::Verdict;
use crate::engine::clock::NodeClock;
use crate::engine::ordering::{MoveOrdering, best_remaining};
use crate::engine::pv::PvTable;
use crate::engine::table::{score_from_table, score_to_table};
use crate::engine::threads::{HelperWork, lazy_smp};
use crate::engine::{
    Bound, DepthUnit, Entry, Game, INFINITY, Iteration, MATE_BOUND, MAX_PLY, Move, Score,
    SearchLimits, SearchReport, Status, StopReason, TableStats, TranspositionTable, WIN,
};

/// Mixed into the hash: this search's scores are not the exact engine's, nor the old selective
/// view's, and must never be read as them.
const TABLE_SALT: u64 = 0x7EA7_5EA2_C400_0003;

/// Boards with more cells than this are searched by [`MainSearch`]; smaller ones, where the
/// exact engine reaches the end of the game or near it, by the engine.
pub const MAIN_SEARCH_MIN_CELLS: usize = 100;

/// Root moves searched (the best by ordering score).
const ROOT_WIDTH: usize = 20;
/// Most moves a quiet node below the root searches (the selective width).
const WIDTH: usize = 12;

/// Nodes one horizon VCF may visit: enough for the short combinations a quiescence search would
/// find, cheap enough to run at every leaf below beta where the mover has a four to make. 12
/// nodes and 6 fours (from 48 and 12) took the horizon's share of the nodes from 73 % to 63 %
/// at a node budget with no verdict lost (the gomoku journal, "Threat nodes reduced").
const HORIZON_VCF_NODES: u64 = 12;
/// Fours a horizon VCF may play.
const HORIZON_VCF_FOURS: u32 = 6;
/// A horizon VCF is run only when a four cell of the mover lies within this many cells of its
/// last stone on one of the stone's lines ([`MainSearch::vcf_may_be_new`]).
const HORIZON_VCF_REACH: usize = 4;

/// Reverse futility: at most this many plies left, a quiet null-window node whose evaluation
/// beats beta by `REVERSE_FUTILITY_MARGIN` a ply returns at once.
const REVERSE_FUTILITY_DEPTH: i32 = 3;
const REVERSE_FUTILITY_MARGIN: Score = 40;
/// Razoring: at most this many plies left, a quiet null-window node whose evaluation is
/// `RAZOR_MARGIN` a ply below alpha is judged by the horizon (VCF, else evaluation).
const RAZOR_DEPTH: i32 = 2;
const RAZOR_MARGIN: Score = 100;
/// Child futility: at most this many plies left, a quiet move is skipped when the node's
/// evaluation plus `FUTILITY_MARGIN` a ply (plus the move's own ordering value) is below alpha.
const FUTILITY_DEPTH: i32 = 3;
const FUTILITY_MARGIN: Score = 60;
/// Move-count pruning: with `d` plies left (d <= 3), quiet moves after the first
/// `LATE_MOVES[d]` are not searched.
const LATE_MOVES: [usize; 4] = [WIDTH, 5, 8, 11];
/// Forced-reply extensions are granted only this far from the root, in plies, beyond the
/// iteration's depth (a chain of fours can be long, but each is one move wide).
const EXTENSION_PLIES: usize = 24;

/// What a killer (a move that cut off at a sibling node) adds to its ordering score: a four's
/// weight in one line (the fitted order's, [`move_order::ORDER_ATTACK`]), so a killer ranks
/// among the single threes and fours: above quiet moves, below most double threats, an open
/// four or the block of one. Ranked above every score, killers were the first move at most
/// quiet cut-nodes and failed there almost half the time; ranked this way, depth 12 on the
/// refutation set takes a third fewer nodes and sees as many forced losses (the gomoku
/// journal, "Killers ranked by the ordering score"). Its value matters little: 20 and none at
/// all cost within 4 % of the same nodes (on the hand-set order's scale, where a four's line
/// weighed 60).
const KILLER_BONUS: i32 = move_order::ORDER_ATTACK[FOUR as usize];

/// Depth is counted in quarter plies: a late move's reduction is a fraction of a ply (the
/// logarithmic formula's value, not its whole part), and an iteration is still one whole ply.
pub const PLY: i32 = 4;
/// Late-move reductions, in plies: `LMR_BASE + ln(depth) x ln(move number) / LMR_DIVISOR`.
const LMR_BASE: f64 = 0.4;
const LMR_DIVISOR: f64 = 2.0;

/// Whether a late move at a quiet node is reduced: a quiet move always; a threat move
/// (`tactical`: an open three or more of the mover's, a four of the opponent's blocked, a
/// double threat) only when it is the mover's `attack` (a four or an open three) and does not
/// continue one (`continues_attack`: the mover's move two plies up made an open three or
/// more, or the node is too near the root to know). Blocks and double threats are not reduced.
fn reduced_at_quiet_node(tactical: bool, attack: bool, continues_attack: bool) -> bool {
    !tactical || (attack && !continues_attack)
}

/// The state of one search: a private copy of the position walked in place, per-ply buffers
/// allocated once, the ordering memory and the horizon's VCF solver.
pub struct MainSearch<'t> {
    pos: Gomoku,
    table: &'t TranspositionTable,
    /// The node count and the limits, polled with the horizon VCF's nodes included.
    clock: NodeClock,
    stats: TableStats,
    ordering: MoveOrdering,
    vcf: VcfSolver,
    vcf_limits: VcfLimits,
    /// Per ply: the moves, their ordering keys and their strength ([`Gomoku::shape_strength`]).
    moves: Vec<Vec<Move>>,
    keys: Vec<Vec<i64>>,
    strengths: Vec<Vec<i32>>,
    pv: PvTable,
    /// Per ply: the move made there (the root's at 0), and whether the node there had a four
    /// to block, for the horizon's test of the mover's last stone.
    path: Vec<Move>,
    forced: Vec<bool>,
    /// Per ply: whether the move made there made an open three or more for its side (an attack
    /// under way, for the reductions of step 8).
    attacked: Vec<bool>,
    /// Depth of the iteration under way (bounds the extensions).
    iteration_depth: i32,
    /// Late-move reductions by depth (whole plies) and move number, in depth units.
    reductions: Vec<[i16; 64]>,
    /// The first iteration's depth: 1 on the calling thread, 2 on a Lazy SMP helper (staggered
    /// depths make the threads fill the table with different subtrees).
    first_depth: u32,
    /// Where the nodes go, logged at debug level when the search ends (plain counters: they
    /// change nothing the search does).
    counts: NodeCounts,
    /// The parent's kind x 6 + the class of the move that led to the node being entered (for
    /// `counts.entered`).
    incoming: usize,
    /// Whether the counters' move classes are worth computing: only when their debug line
    /// will be logged (a class costs three line-level look-ups a move searched).
    classify: bool,
}

/// The kinds of node that reach the move loop: the opponent has a four, an open three, or
/// neither.
const KIND_FOUR: usize = 0;
const KIND_THREE: usize = 1;
const KIND_QUIET: usize = 2;
/// The classes of a move searched: the mover's four (or five), the mover's open three, a cell
/// where the opponent would make a four, another double-threat shape, anything else; and the
/// root's moves.
const MOVE_FOUR: usize = 0;
const MOVE_THREE: usize = 1;
const MOVE_BLOCK: usize = 2;
const MOVE_SHAPE: usize = 3;
const MOVE_QUIET: usize = 4;
const MOVE_ROOT: usize = 5;

/// Node counters by kind and by the move that led there.
#[derive(Debug, Default, Clone, Copy)]
struct NodeCounts {
    /// Nodes reaching the move loop, by kind.
    move_loop: [u64; 3],
    /// Nodes entered (every call of `node`), by the kind of the parent and the class of the
    /// move that led there (the root's children under `[KIND_QUIET][MOVE_ROOT]`).
    entered: [[u64; 6]; 3],
    /// Horizon calls, VCF runs there, and VCF wins.
    horizons: u64,
    vcf_runs: u64,
    vcf_wins: u64,
    /// Nodes ended by the static win test, by the table, and horizon nodes ended by the table.
    static_verdicts: u64,
    table_cuts: u64,
    horizon_table_cuts: u64,
    /// Moves searched at quiet nodes by class, and how many of them were reduced.
    quiet_searched: [u64; 5],
    quiet_reduced: [u64; 5],
    /// Null-window nodes that failed high, by kind and by which move cut: the first, second,
    /// third, or a later one (how well the moves are ordered: every move searched before the
    /// cut is a subtree spent for nothing).
    cuts: [[u64; 4]; 3],
}

/// Searches `pos` under `limits` with `helpers` extra threads (Lazy SMP, [`lazy_smp`]: the
/// same iterative deepening, depth-staggered, sharing only the table). The calling thread's
/// report is the answer, with the helpers' nodes added.
pub fn run_main_search(
    pos: &Gomoku,
    table: &TranspositionTable,
    limits: &SearchLimits,
    helpers: usize,
) -> SearchReport {
    let main = || MainSearch::new(pos.clone(), table, limits.clone()).run();
    if helpers == 0 {
        return main();
    }
    let helper = |limits: SearchLimits, first_depth: u32| {
        let mut helper = MainSearch::new(pos.clone(), table, limits);
        helper.first_depth = first_depth;
        let report = helper.run();
        HelperWork {
            nodes: report.nodes,
            table: report.table,
        }
    };
    lazy_smp(limits, helpers, helper, main)
}

impl<'t> MainSearch<'t> {
    pub fn new(pos: Gomoku, table: &'t TranspositionTable, limits: SearchLimits) -> Self {
        let cells = pos.board.cells.len();
        let reductions = (0..MAX_PLY)
            .map(|depth| {
                let mut row = [0i16; 64];
                for (i, r) in row.iter_mut().enumerate().skip(1) {
                    // The usual logarithmic shape: reductions grow with depth and move number.
                    let value =
                        LMR_BASE + (depth.max(1) as f64).ln() * (i as f64).ln() / LMR_DIVISOR;
                    *r = (value.clamp(0.0, 60.0) * PLY as f64) as i16;
                }
                row
            })
            .collect();
        MainSearch {
            pos,
            table,
            clock: NodeClock::new(limits),
            stats: TableStats::default(),
            ordering: MoveOrdering::new(cells),
            vcf: VcfSolver::new(cells),
            vcf_limits: VcfLimits {
                deadline: None,
                max_nodes: HORIZON_VCF_NODES,
                cancel: None,
                max_depth: HORIZON_VCF_FOURS.min(MAX_FOURS),
            },
            moves: (0..=MAX_PLY).map(|_| Vec::with_capacity(cells)).collect(),
            keys: (0..=MAX_PLY).map(|_| Vec::with_capacity(cells)).collect(),
            strengths: (0..=MAX_PLY).map(|_| Vec::with_capacity(cells)).collect(),
            pv: PvTable::default(),
            path: vec![Move::NONE; MAX_PLY + 1],
            forced: vec![false; MAX_PLY + 1],
            attacked: vec![false; MAX_PLY + 1],
            iteration_depth: 1,
            reductions,
            first_depth: 1,
            counts: NodeCounts::default(),
            incoming: KIND_QUIET * 6 + MOVE_ROOT,
            classify: tracing::enabled!(target: "kibitz::gomoku::search", tracing::Level::DEBUG),
        }
    }

    /// The class of a move (before it is made), for the counters.
    fn move_class(&self, mv: Move) -> usize {
        let cell = mv.index();
        let me = self.pos.side_to_move().index();
        let board = &self.pos.board;
        if board.best_level(cell, me) >= FOUR {
            MOVE_FOUR
        } else if board.best_level(cell, me) >= OPEN_THREE {
            MOVE_THREE
        } else if board.best_level(cell, 1 - me) >= FOUR {
            MOVE_BLOCK
        } else if self.pos.is_tactical(cell) {
            MOVE_SHAPE
        } else {
            MOVE_QUIET
        }
    }

    /// Iterative deepening to a limit. The position must be ongoing, with no five for the
    /// side to move (`think` plays that at once).
    pub fn run(&mut self) -> SearchReport {
        let start = Instant::now();
        self.table.new_search();
        let mut report = SearchReport::empty(StopReason::Depth);
        let mut root = self.root_moves();
        if root.is_empty() {
            return report;
        }
        report.best_move = Some(root[0].0);
        report.pv = vec![root[0].0];
        let max_depth = self
            .clock
            .limits()
            .max_depth
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_PLY as u32 / 2);
        // Each completed iteration's time, for the time log.
        let mut times: Vec<Duration> = Vec::new();
        // Why the iterations ended, for the time log: the limit that cut one short, or a
        // decisive score.
        let mut ended = "depth";
        for depth in self.first_depth.min(max_depth)..=max_depth {
            if let Some(reason) = self.clock.start_iteration(depth, self.vcf.nodes()) {
                report.stop_reason = reason;
                ended = reason.as_str();
                break;
            }
            let iteration_start = Instant::now();
            let nodes_before = self.clock.nodes();
            self.iteration_depth = depth as i32;
            let finished = self.search_root(&mut root, depth as i32 * PLY);
            if !finished {
                report.stop_reason = self.clock.stopped().unwrap_or(StopReason::Time);
                ended = report.stop_reason.as_str();
                // A move of the cut iteration that was searched in full and beat the last
                // best is the better answer; root[0] is the last iteration's best otherwise.
                if root[0].0 != report.best_move.unwrap_or(Move::NONE) {
                    report.best_move = Some(root[0].0);
                    report.score = root[0].1;
                    report.pv = vec![root[0].0];
                }
                break;
            }
            let (best, score) = root[0];
            report.complete_iteration(
                Iteration {
                    depth,
                    score,
                    best_move: best,
                    nodes: self.clock.nodes() - nodes_before,
                },
                self.pv.line(0),
                self.nodes(),
                self.clock.limits().progress.as_ref(),
            );
            times.push(iteration_start.elapsed());
            if score.abs() >= MATE_BOUND {
                // A decisive score: `think` confirms it, or says the search stopped at a depth.
                report.stop_reason = StopReason::Proven;
                ended = "proven";
                break;
            }
            // Every iteration the limits allow is started, even one that will most likely be
            // cut short by the hard limit: the moves it searches in full before the cut can
            // still overturn the last best (`search_root`), and the first of them is the last
            // best itself, searched a ply deeper. Not starting an iteration predicted (at 1.5
            // times the last) to overrun, as from 2026-12-04 to 2026-12-06, left a median 35
            // ms of a 175 ms turn unused and scored 41.5 % of 392 games of self-play against
            // starting every one (docs/journal/gomoku.md, "The turn's last iteration started
            // again").
            // A single root move (a forced block) is searched on too: deeper iterations change
            // no move, but they are what finds the outcome behind it (a forced win or loss,
            // which the answer reports), and one move wide they are cheap. Stopping there
            // left a fifth of the yardstick's decided positions without a verdict.
        }
        report.nodes = self.nodes();
        tracing::debug!(
            target: "kibitz::gomoku::search",
            depth = report.depth,
            main_nodes = self.clock.nodes(),
            horizon_vcf_nodes = self.vcf.nodes(),
            counts = ?self.counts,
            // Again on their own, for the benchmark scripts to read (`gomoku_yardstick.py`).
            cuts = ?self.counts.cuts,
            "main search finished"
        );
        report.table = self.stats;
        report.elapsed = start.elapsed();
        if self.first_depth == 1
            && tracing::enabled!(target: "kibitz::gomoku::time", tracing::Level::DEBUG)
        {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let window = |at: Option<Instant>| at.map(|at| ms(at.saturating_duration_since(start)));
            let iterations: Vec<String> = times.iter().map(|&t| format!("{:.1}", ms(t))).collect();
            tracing::debug!(
                target: "kibitz::gomoku::time",
                depth = report.depth,
                ended,
                elapsed_ms = ms(report.elapsed),
                hard_ms = window(self.clock.limits().deadline.map(|d| d.0)),
                iterations_ms = iterations.join("/"),
                "main search time"
            );
        }
        report
    }

    /// The root's candidates, best by ordering score first, at most [`ROOT_WIDTH`] unless the
    /// position is forcing, each with a score of -infinity.
    fn root_moves(&mut self) -> Vec<(Move, Score)> {
        let mut moves = Vec::new();
        if let Some(filter) = &self.clock.limits().root {
            // A restricted root searches the allowed legal moves, candidates or not.
            self.pos.legal_moves(&mut moves);
            moves.retain(|&mv| filter.allows(mv));
        } else {
            self.pos.search_moves(&mut moves);
        }
        let mut scored: Vec<(i32, Move)> = moves
            .iter()
            .map(|&mv| (self.pos.move_order_hint(mv), mv))
            .collect();
        // Stable: ties keep cell order (determinism).
        scored.sort_by_key(|&(hint, _)| std::cmp::Reverse(hint));
        if !self.forcing(self.pos.must_answer_threat()) {
            scored.truncate(ROOT_WIDTH);
        }
        scored.into_iter().map(|(_, mv)| (mv, -INFINITY)).collect()
    }

    /// One root iteration with PVS. The list ends sorted best first: the best move found moves
    /// to the front, the others keep their order. Returns false when a limit cut it short (the
    /// front move is then the better of the last best and any move this iteration proved
    /// better than it).
    fn search_root(&mut self, root: &mut [(Move, Score)], depth: i32) -> bool {
        self.clock.count();
        self.forced[0] = self.pos.must_answer_threat();
        let mut alpha = -INFINITY;
        let beta = INFINITY;
        let mut best_index = 0;
        let mut best_score = -INFINITY;
        for i in 0..root.len() {
            let mv = root[i].0;
            self.incoming = KIND_QUIET * 6 + MOVE_ROOT;
            self.path[0] = mv;
            self.attacked[0] = self.makes_attack(mv);
            self.pos.make(mv);
            let score = if i == 0 {
                -self.node(depth - PLY, 1, -beta, -alpha)
            } else {
                let s = -self.node(depth - PLY, 1, -alpha - 1, -alpha);
                if s > alpha && !self.clock.is_stopped() {
                    self.incoming = KIND_QUIET * 6 + MOVE_ROOT;
                    -self.node(depth - PLY, 1, -beta, -alpha)
                } else {
                    s
                }
            };
            self.pos.unmake(mv);
            if self.clock.is_stopped() {
                if best_index > 0 {
                    root[..=best_index].rotate_right(1);
                    root[0].1 = best_score;
                }
                return false;
            }
            root[i].1 = score;
            if score > best_score {
                best_score = score;
                best_index = i;
                self.pv.update(0, mv);
                alpha = alpha.max(score);
            }
        }
        root[..=best_index].rotate_right(1);
        // A restricted root's best is not the position's value: keep it out of the table.
        if self.clock.limits().root.is_some() {
            return true;
        }
        self.table.store_in(
            self.key(),
            Entry {
                score: score_to_table(best_score, 0),
                best_move: root[0].0,
                depth: depth.clamp(0, u8::MAX as i32) as u8,
                bound: Bound::Exact,
            },
            DepthUnit::QuarterPly,
        );
        true
    }

    fn key(&self) -> u64 {
        self.pos.hash() ^ TABLE_SALT
    }

    /// The opponent has a four (a five to block, counted as the threat rules count it: not a
    /// renju overline point of black's; the caller's `must_block`, from
    /// [`Gomoku::must_answer_threat`], which a node has asked already) or an open three: nothing
    /// may be pruned.
    fn forcing(&self, must_block: bool) -> bool {
        let opp = 1 - self.pos.side_to_move().index();
        must_block || self.pos.board.level_count[opp][OPEN_FOUR as usize] > 0
    }

    /// Every node of this search so far: its own and its horizon VCFs'.
    fn nodes(&self) -> u64 {
        self.clock.nodes() + self.vcf.nodes()
    }

    /// A node at the horizon (fewer than one ply left, no four to block): the table's score
    /// when it settles the null window, else [`Self::horizon`]'s, stored for the next time. The
    /// same stones are reached by many orders of the same moves, and a reduced move reaches
    /// the horizon plies above the others, where the node may have been searched deeper
    /// already; the table's answer spares the evaluation and the VCF (the gomoku journal,
    /// "The horizon reads the table").
    fn horizon_node(&mut self, ply: usize, alpha: Score, beta: Score) -> Score {
        let key = self.key();
        if beta - alpha == 1
            && let Some(entry) = self.table.probe(key)
        {
            let score = score_from_table(entry.score, ply);
            if entry.bound.settles(score, alpha, beta) {
                self.counts.horizon_table_cuts += 1;
                return score;
            }
        }
        let eval = self.pos.evaluate();
        let (score, bound) = self.horizon(ply, eval, beta);
        if let Some(bound) = bound {
            self.table.store_in(
                key,
                Entry {
                    score: score_to_table(score, ply),
                    best_move: Move::NONE,
                    depth: 0,
                    bound,
                },
                DepthUnit::QuarterPly,
            );
        }
        score
    }

    /// The horizon, given the node's static evaluation `eval`: that evaluation when it already
    /// reaches `beta` (the node fails high whatever a VCF would add), else a VCF of the side to
    /// move is a win (scored by its length), else the evaluation. Only called where the
    /// opponent has no four (a five to block). With the score, what the table may keep of it:
    /// a lower bound when the node stood pat, the score itself when a VCF was run or none was
    /// possible, nothing when a VCF was left out because the path had seen it already
    /// ([`Self::vcf_may_be_new`]: another path to the same stones may not have).
    fn horizon(&mut self, ply: usize, eval: Score, beta: Score) -> (Score, Option<Bound>) {
        self.counts.horizons += 1;
        if eval >= beta {
            return (eval, Some(Bound::Lower));
        }
        let me = self.pos.side_to_move().index();
        let count = &self.pos.board.level_count[me];
        if count[FOUR as usize] + count[OPEN_FOUR as usize] == 0 {
            return (eval, Some(Bound::Exact));
        }
        if !self.vcf_may_be_new(ply) {
            return (eval, None);
        }
        self.counts.vcf_runs += 1;
        if self.vcf.solve(&mut self.pos, &self.vcf_limits) {
            self.counts.vcf_wins += 1;
            return (
                WIN - (ply + self.vcf.line_len()) as Score,
                Some(Bound::Exact),
            );
        }
        (eval, Some(Bound::Exact))
    }

    /// Whether a VCF of the side to move at the horizon node `ply` may be one the search has
    /// not had the chance to find already: one its last stone (two plies up) may take part in,
    /// or any when that stone blocked a four. A VCF whose fours all lie away from the stone's
    /// lines was there when the mover played it, and that node, free to choose, searched the
    /// mover's fours (never pruned but by the selective width), each followed by its block and
    /// this same horizon, so the tree scores the line there. A guess, not a proof: a VCF whose
    /// first four is elsewhere and whose later ones use the stone is missed. Measured, it keeps
    /// the forced losses the search sees at a fixed depth with a sixth to a fifth fewer nodes
    /// (the gomoku journal, "The horizon's VCF near the last stone").
    fn vcf_may_be_new(&self, ply: usize) -> bool {
        if ply < 2 || self.forced[ply - 2] {
            // The root's side's last stone is not on the path; a block was not chosen.
            return true;
        }
        let me = self.pos.side_to_move().index();
        let stone = self.path[ply - 2].index();
        self.pos
            .board
            .four_cell_within(stone, me, HORIZON_VCF_REACH)
    }

    /// Whether `mv` makes an open three or more for the side to move (an attack).
    fn makes_attack(&self, mv: Move) -> bool {
        let me = self.pos.side_to_move().index();
        self.pos.board.best_level(mv.index(), me) >= OPEN_THREE
    }

    /// Alpha-beta negamax with PVS, fail-soft. Returns garbage (0) once `stopped` is set.
    fn node(&mut self, depth: i32, ply: usize, mut alpha: Score, beta: Score) -> Score {
        // Step 1. Count the node and poll the limits.
        if !self.clock.visit(self.vcf.nodes()) {
            return 0;
        }
        self.pv.clear(ply);
        self.counts.entered[self.incoming / 6][self.incoming % 6] += 1;

        // Step 2. Game over, or a five to play now.
        match self.pos.status() {
            Status::Lost => return -(WIN - ply as Score),
            Status::Draw => return 0,
            Status::Ongoing => {}
        }
        match self.pos.static_verdict() {
            Some(Verdict::WinIn(1)) => {
                self.counts.static_verdicts += 1;
                if let Some(mv) = self.pos.immediate_win() {
                    self.pv.set_single(ply, mv);
                }
                return WIN - (ply as Score + 1);
            }
            Some(Verdict::WinIn(plies)) => {
                self.counts.static_verdicts += 1;
                return WIN - (ply as Score + plies as Score);
            }
            Some(Verdict::LossIn(plies)) => {
                self.counts.static_verdicts += 1;
                return -(WIN - (ply as Score + plies as Score));
            }
            None => {}
        }
        let must_block = self.pos.must_answer_threat();
        self.forced[ply] = must_block;
        if ply >= MAX_PLY - 2 {
            return self.pos.evaluate();
        }

        // Step 3. Horizon: the table's score, else the evaluation if it reaches beta, else the
        // mover's continuous fours, else the evaluation. A four to block is answered first (its
        // block is searched past the horizon).
        if depth < PLY && !must_block {
            return self.horizon_node(ply, alpha, beta);
        }

        // Step 4. Mate-distance pruning.
        let alpha_floor = -(WIN - ply as Score - 1);
        let beta = beta.min(WIN - ply as Score - 1);
        alpha = alpha.max(alpha_floor);
        if alpha >= beta {
            return alpha;
        }
        let pv_node = beta - alpha > 1;

        // Step 5. Transposition table.
        let key = self.key();
        let mut table_move = Move::NONE;
        self.stats.probes += 1;
        if let Some(entry) = self.table.probe(key) {
            self.stats.hits += 1;
            table_move = entry.best_move;
            if !pv_node && entry.depth as i32 >= depth {
                let score = score_from_table(entry.score, ply);
                if entry.bound.settles(score, alpha, beta) {
                    self.counts.table_cuts += 1;
                    return score;
                }
            }
        }

        // Step 6. Quiet-node pruning: reverse futility, then razoring into the horizon.
        let quiet = !self.forcing(must_block);
        let eval = if quiet { self.pos.evaluate() } else { 0 };
        if quiet && !pv_node && beta.abs() < MATE_BOUND {
            let margin = REVERSE_FUTILITY_MARGIN * depth / PLY;
            if depth <= REVERSE_FUTILITY_DEPTH * PLY && eval - margin >= beta {
                return eval - margin;
            }
            if depth <= RAZOR_DEPTH * PLY && eval + RAZOR_MARGIN * depth / PLY <= alpha {
                // The evaluation is below alpha, so the horizon never stands pat here.
                let (score, _) = self.horizon(ply, eval, beta);
                if score <= alpha {
                    return score;
                }
            }
        }

        // Step 7. The moves: the threat rules' set (only blocks against a four, only what can
        // matter against an open three), ordered by table move, then ordering score (a
        // killer's raised by `KILLER_BONUS`) and history.
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut keys = std::mem::take(&mut self.keys[ply]);
        let mut strengths = std::mem::take(&mut self.strengths[ply]);
        moves.clear();
        keys.clear();
        strengths.clear();
        self.pos.search_moves(&mut moves);
        let side = self.pos.side_to_move();
        for &mv in &moves {
            // The fitted order ranks the moves; the hand-set strength is what the reductions
            // and futility below read (their thresholds are on its scale).
            let (order, strength) = self.pos.order_and_strength(mv);
            strengths.push(strength);
            keys.push(self.ordering.key_with_killer_bonus(
                mv,
                table_move,
                ply,
                side,
                order,
                KILLER_BONUS,
            ));
        }
        // A single forced block is searched one ply deeper, near enough to the root.
        // Rapfi extends it too, by 1.3 plies. Taking it away (a four and its block then cost
        // two plies) cut the nodes to depth 8 by half and lost 34.9 % of 96 games in self-play
        // (the gomoku journal, "Threat nodes reduced"); 1.25 and 1.5 plies played level (the
        // journal, "Rapfi extends the forced block too").
        let extension = PLY
            * i32::from(
                must_block
                    && moves.len() == 1
                    && ply < self.iteration_depth as usize + EXTENSION_PLIES,
            );
        let kind = if must_block {
            KIND_FOUR
        } else if quiet {
            KIND_QUIET
        } else {
            KIND_THREE
        };
        self.counts.move_loop[kind] += 1;

        // Step 8. Search them: prune and reduce quiet moves, PVS for the rest.
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = Move::NONE;
        let mut searched = 0usize;
        for i in 0..moves.len() {
            // The lazy sort's step, the strengths kept beside their moves.
            let next = best_remaining(&keys, i);
            moves.swap(i, next);
            keys.swap(i, next);
            strengths.swap(i, next);
            let mv = moves[i];
            if quiet && searched >= WIDTH {
                // The selective width: a quiet node searches its best few moves only.
                break;
            }
            // An attack is a threat move: `is_tactical` is asked only when it is not one.
            let attack = self.makes_attack(mv);
            let tactical = !quiet || attack || self.pos.is_tactical(mv.index());
            let class = if self.classify {
                self.move_class(mv)
            } else {
                MOVE_QUIET
            };
            // Quiet moves are pruned and reduced; threat moves are never pruned.
            let prunable = quiet && !tactical;
            if prunable && searched > 0 && best > -MATE_BOUND {
                // Move-count pruning.
                let late = LATE_MOVES[(depth / PLY).clamp(0, 3) as usize];
                if searched >= late {
                    continue;
                }
                // Child futility.
                if !pv_node
                    && depth <= FUTILITY_DEPTH * PLY
                    && eval + FUTILITY_MARGIN * depth / PLY + strengths[i] / 8 <= alpha
                {
                    continue;
                }
            }
            // Late-move reductions: quiet moves at quiet nodes, the mover's fours and open
            // threes there when they start an attack ([`reduced_at_quiet_node`]), and every
            // move after the first at a node facing an open three (its exact defences and the
            // mover's own fours, never pruned: a reduced one that beats alpha is searched again
            // in full). Reducing every threat of the mover lost sight and games (the journal,
            // "Own threats reduced" and "Threat nodes reduced"); sparing the attack's
            // follow-ups keeps the forced losses seen at a fixed depth (the journal, "An attack
            // reduced where it starts").
            let reducible = if quiet {
                let continues_attack = ply < 2 || self.attacked[ply - 2];
                reduced_at_quiet_node(tactical, attack, continues_attack)
            } else {
                !must_block
            };
            let reduction = if reducible && searched > 0 && depth >= 2 * PLY {
                let row = &self.reductions[(depth / PLY).min(MAX_PLY as i32 - 1) as usize];
                let mut r = i32::from(row[searched.min(63)]);
                r += PLY * i32::from(!pv_node);
                // Strong shapes (by the hand-set strength) are reduced less.
                if strengths[i] >= 150 {
                    r -= PLY;
                }
                // A reduced move may reach the horizon, never go below it.
                r.clamp(0, depth - PLY)
            } else {
                0
            };
            let child_depth = depth - PLY + extension;
            if quiet {
                self.counts.quiet_searched[class] += 1;
                self.counts.quiet_reduced[class] += u64::from(reduction > 0);
            }
            let incoming = kind * 6 + class;
            self.path[ply] = mv;
            self.attacked[ply] = attack;
            self.pos.make(mv);
            let mut score;
            self.incoming = incoming;
            if searched == 0 {
                score = -self.node(child_depth, ply + 1, -beta, -alpha);
            } else {
                score = -self.node(child_depth - reduction, ply + 1, -alpha - 1, -alpha);
                if reduction > 0 && score > alpha && !self.clock.is_stopped() {
                    self.incoming = incoming;
                    score = -self.node(child_depth, ply + 1, -alpha - 1, -alpha);
                }
                if pv_node && score > alpha && score < beta && !self.clock.is_stopped() {
                    self.incoming = incoming;
                    score = -self.node(child_depth, ply + 1, -beta, -alpha);
                }
            }
            self.pos.unmake(mv);
            searched += 1;
            if self.clock.is_stopped() {
                break;
            }
            if score > best {
                best = score;
                best_move = mv;
                if score > alpha {
                    alpha = score;
                    self.pv.update(ply, mv);
                    if alpha >= beta {
                        if !pv_node {
                            self.counts.cuts[kind][(searched - 1).min(3)] += 1;
                        }
                        self.ordering.record_cutoff(mv, ply, side, depth / PLY);
                        break;
                    }
                }
            }
        }
        self.moves[ply] = moves;
        self.keys[ply] = keys;
        self.strengths[ply] = strengths;
        if self.clock.is_stopped() || best_move.is_none() {
            return 0;
        }

        // Step 9. Store the result.
        self.table.store_in(
            key,
            Entry::of_node(best, best_move, ply, depth, original_alpha, beta),
            DepthUnit::QuarterPly,
        );
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CancelFlag;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    /// A 15x15 position from stones given as (row, col) lists, X to move unless the counts say O.
    fn position(xs: &[(usize, usize)], os: &[(usize, usize)]) -> Gomoku {
        let mut rows = vec![vec!['.'; 15]; 15];
        for &(r, c) in xs {
            rows[r][c] = 'X';
        }
        for &(r, c) in os {
            rows[r][c] = 'O';
        }
        let rows: Vec<String> = rows.into_iter().map(|r| r.into_iter().collect()).collect();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let grid = Grid::parse(&rows, 25).unwrap();
        Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap()
    }

    fn run(p: &Gomoku, limits: SearchLimits) -> SearchReport {
        let table = TranspositionTable::with_megabytes(4);
        MainSearch::new(p.clone(), &table, limits).run()
    }

    fn cell(p: &Gomoku, row: usize, col: usize) -> Move {
        p.move_at(row, col)
    }

    #[test]
    fn reductions_are_fractions_of_a_ply_that_grow_with_depth_and_move_number() {
        let p = position(&[(7, 7)], &[(8, 8)]);
        let table = TranspositionTable::with_megabytes(1);
        let search = MainSearch::new(p, &table, SearchLimits::with_depth(1));
        let r = &search.reductions;
        // The second move at depth 2: 0.4 + ln 2 x ln 1 / 2 = 0.4 plies, one unit (a quarter
        // ply truncated from 1.6); whole plies would have made it 0.
        assert_eq!(r[2][1], 1);
        // Some value is not a whole number of plies.
        assert!(r.iter().flatten().any(|&units| units % PLY as i16 != 0));
        for depth in 1..MAX_PLY {
            for i in 1..64 {
                assert!(r[depth][i] >= r[depth - 1][i], "depth {depth}, move {i}");
                assert!(
                    i == 1 || r[depth][i] >= r[depth][i - 1],
                    "depth {depth}, move {i}"
                );
            }
        }
        // Depth 10, move 20: 0.4 + ln 10 x ln 20 / 2 = 3.85 plies, 15 units.
        assert_eq!(r[10][20], 15);
    }

    #[test]
    fn a_threat_is_reduced_where_an_attack_starts_and_searched_in_full_where_it_goes_on() {
        // A quiet move: reduced whatever came before.
        assert!(reduced_at_quiet_node(false, false, false));
        assert!(reduced_at_quiet_node(false, false, true));
        // The mover's four or open three: reduced only when it starts the attack.
        assert!(reduced_at_quiet_node(true, true, false));
        assert!(!reduced_at_quiet_node(true, true, true));
        // A block of the opponent's four cell or a double threat: never.
        assert!(!reduced_at_quiet_node(true, false, false));
        assert!(!reduced_at_quiet_node(true, false, true));
    }

    #[test]
    fn the_mover_s_attack_is_recorded_on_the_path_for_the_reductions() {
        // X has two stones side by side on row 7, columns 2 and 3, both ends open: (7, 4) makes
        // an open three; a cell far from every stone makes nothing.
        let p = position(&[(7, 2), (7, 3), (0, 14)], &[(10, 10), (11, 11), (12, 0)]);
        let table = TranspositionTable::with_megabytes(1);
        let search = MainSearch::new(p.clone(), &table, SearchLimits::with_depth(1));
        assert!(search.makes_attack(cell(&p, 7, 4)));
        assert!(!search.makes_attack(cell(&p, 3, 9)));
        // A search fills `attacked` as it goes: after a depth-3 search from here the root's
        // entry is that of the last root move searched.
        let mut search = MainSearch::new(p.clone(), &table, SearchLimits::with_depth(3));
        let report = search.run();
        assert!(report.best_move.is_some());
        let last_root = search.path[0];
        assert_eq!(search.attacked[0], search.makes_attack(last_root));
    }

    #[test]
    fn a_four_of_the_opponent_is_blocked() {
        // O has four on row 3 (cols 3-6) closed on the left by X; X must take (3, 7).
        let p = position(
            &[(3, 2), (8, 8), (9, 9), (8, 9)],
            &[(3, 3), (3, 4), (3, 5), (3, 6)],
        );
        let report = run(&p, SearchLimits::with_depth(4));
        assert_eq!(report.best_move, Some(cell(&p, 3, 7)));
    }

    /// X's VCF by two fours: (5, 8) fours row 5 (O blocks at (5, 9)) and makes column 8 a
    /// closed three; (8, 8) then fours column 8 and row 8 at once. X's stones, then O's.
    const VCF_X: [(usize, usize); 8] = [
        (5, 5),
        (5, 6),
        (5, 7),
        (6, 8),
        (7, 8),
        (8, 5),
        (8, 6),
        (8, 7),
    ];
    const VCF_O: [(usize, usize); 8] = [
        (5, 4),
        (4, 8),
        (8, 4),
        (0, 0),
        (0, 2),
        (0, 14),
        (14, 0),
        (14, 14),
    ];

    #[test]
    fn a_vcf_beyond_the_horizon_is_seen_by_the_horizon_search() {
        // At depth 1 the root's four and its forced block leave X at the horizon, where only
        // a VCF sees the rest.
        let p = position(&VCF_X, &VCF_O);
        let report = run(&p, SearchLimits::with_depth(1));
        assert!(
            report.score >= MATE_BOUND,
            "depth 1 should see the VCF at its horizon: {report:?}"
        );
    }

    /// A search of `p` to call the horizon on, and `p`'s static evaluation.
    fn horizon_search(p: Gomoku, table: &TranspositionTable) -> (MainSearch<'_>, Score) {
        let search = MainSearch::new(p, table, SearchLimits::with_depth(1));
        let eval = search.pos.evaluate();
        (search, eval)
    }

    #[test]
    fn the_horizon_stands_pat_at_beta_and_runs_its_vcf_below_it() {
        // X to move has a VCF (the position of the test above). With the evaluation at or above
        // beta the node fails high whatever the VCF adds: the horizon returns the evaluation
        // and runs nothing; with beta above it, the VCF's win.
        let table = TranspositionTable::with_megabytes(1);
        let (mut search, eval) = horizon_search(position(&VCF_X, &VCF_O), &table);
        assert!(eval.abs() < MATE_BOUND, "{eval}");
        assert_eq!(search.horizon(0, eval, eval), (eval, Some(Bound::Lower)));
        assert_eq!(
            search.horizon(0, eval, -INFINITY),
            (eval, Some(Bound::Lower))
        );
        assert_eq!(search.vcf.nodes(), 0, "a stand-pat runs no VCF");
        let (won, bound) = search.horizon(0, eval, eval + 1);
        assert!(won >= MATE_BOUND, "{won}");
        assert_eq!(bound, Some(Bound::Exact));
        assert!(search.vcf.nodes() > 0);
    }

    #[test]
    fn a_horizon_node_reached_again_reads_the_table_and_runs_no_second_vcf() {
        // X to move has a VCF (the position above): the first visit of the horizon node runs it
        // and stores the win; the second, by another path to the same stones, reads the win
        // back and runs nothing. (Ply 1: the horizon's test of the mover's last stone reads
        // the path from ply 2 on, and this search has none.)
        let table = TranspositionTable::with_megabytes(1);
        let (mut search, eval) = horizon_search(position(&VCF_X, &VCF_O), &table);
        let won = search.horizon_node(1, eval, eval + 1);
        assert!(won >= MATE_BOUND, "{won}");
        let (runs, nodes) = (search.counts.vcf_runs, search.vcf.nodes());
        assert_eq!(runs, 1);
        assert_eq!(search.horizon_node(1, eval, eval + 1), won);
        assert_eq!(search.counts.horizon_table_cuts, 1);
        assert_eq!((search.counts.vcf_runs, search.vcf.nodes()), (runs, nodes));
        // A stand-pat's score is a lower bound: it settles no window above it. Below beta, with
        // no four to play, the evaluation is the node's whole score and settles any window.
        let (mut search, eval) = horizon_search(position(&[(7, 7), (8, 8)], &[(7, 8)]), &table);
        assert_eq!(search.horizon_node(1, eval - 1, eval), eval);
        assert_eq!(search.horizon_node(1, eval, eval + 1), eval);
        assert_eq!(search.counts.horizon_table_cuts, 0);
        assert_eq!(search.horizon_node(1, eval - 2, eval - 1), eval);
        assert_eq!(search.horizon_node(1, eval + 5, eval + 6), eval);
        assert_eq!(search.counts.horizon_table_cuts, 2);
        assert_eq!(search.counts.vcf_runs, 0);
    }

    #[test]
    fn a_vcf_away_from_the_last_stone_is_still_found_through_its_first_four() {
        // The same VCF two plies further: whatever X plays away from its fours, the horizon
        // two plies on does not run the VCF there (the stone is on none of its lines), but
        // the root's first four is searched, and its line ends in the win.
        let xs = [&VCF_X[..], &[(13, 2)]].concat();
        let os = [&VCF_O[..], &[(12, 12)]].concat();
        let p = position(&xs, &os);
        // The stone (13, 2) is on no line with a four cell of X's within reach.
        assert!(
            !p.board
                .four_cell_within(p.move_at(13, 2).index(), 0, HORIZON_VCF_REACH)
        );
        let report = run(&p, SearchLimits::with_depth(2));
        assert!(report.score >= MATE_BOUND, "{report:?}");
    }

    #[test]
    fn a_four_three_is_seen_as_a_win_at_depth_one_by_the_static_test() {
        // X's (7, 8) makes a four down column 8 and an open three on row 7; O has no four to
        // make. At depth 1 the four's block is searched past the horizon, where the static
        // win test reads X's open four to come: a win in five plies.
        let p = position(
            &[(4, 8), (5, 8), (6, 8), (7, 6), (7, 7)],
            &[(0, 0), (0, 14), (3, 8), (11, 3), (14, 0)],
        );
        let report = run(&p, SearchLimits::with_depth(1));
        assert_eq!(report.best_move, Some(cell(&p, 7, 8)));
        assert_eq!(report.score, WIN - 5);
    }

    #[test]
    fn a_four_three_of_the_opponent_is_defended() {
        // The same shape for X, O to move (X has one stone more): O must take a cell on the
        // point's lines (or make a four, which it cannot); whatever it plays, X's four-three
        // must no longer win at once. The position is lost all the same, later: X makes an
        // open three, O defends, X makes two open threes no cell stops, a five at ply 8
        // (Rapfi at 3 s: `Eval -M8`). The defence is the one that puts the loss off longest.
        let p = position(
            &[(4, 8), (5, 8), (6, 8), (7, 6), (7, 7), (13, 13)],
            &[(0, 0), (0, 14), (3, 8), (11, 3), (14, 0)],
        );
        let report = run(&p, SearchLimits::with_depth(4));
        let mv = report.best_move.expect("a move");
        let mut q = p.clone();
        q.make(mv);
        assert_eq!(q.static_verdict(), None, "{mv:?} leaves X its four-three");
        // Not the four-three's loss in 6 (O's move, then X's win in 5).
        assert!(report.score >= -(WIN - 8), "{report:?}");
    }

    #[test]
    fn a_single_forced_block_is_searched_to_the_limit_without_claiming_a_proof() {
        // X's four on row 7 leaves O one move; the search goes on to its depth limit behind
        // it (for a verdict, were there one), and claims none.
        let p = position(
            &[(7, 10), (7, 11), (7, 12), (7, 13), (3, 3)],
            &[(7, 9), (2, 2), (9, 9), (4, 12)],
        );
        let report = run(&p, SearchLimits::with_depth(8));
        assert_eq!(report.best_move, Some(cell(&p, 7, 14)));
        assert_eq!(report.stop_reason, StopReason::Depth);
        assert_eq!(report.depth, 8);
        assert!(report.score.abs() < MATE_BOUND);
    }

    #[test]
    fn a_forced_block_that_loses_is_searched_until_the_loss_is_seen() {
        // O has a four on row 7 (X must block at (7, 14)) and a double-three point at (6, 3)
        // (column 3, rows 4-6, and row 6's broken three 3.56): after the block O plays it, X
        // stops one three, the other becomes an open four. No four of O's is left after the
        // block, so the horizon's VCF cannot see it at depth 1, where the single root move
        // used to stop the search with no verdict.
        let p = position(
            &[
                (7, 9),
                (0, 0),
                (0, 14),
                (14, 0),
                (14, 14),
                (12, 12),
                (10, 1),
                (1, 7),
            ],
            &[
                (7, 10),
                (7, 11),
                (7, 12),
                (7, 13),
                (4, 3),
                (5, 3),
                (6, 5),
                (6, 6),
            ],
        );
        let shallow = run(&p, SearchLimits::with_depth(1));
        assert!(
            shallow.score > -MATE_BOUND,
            "depth 1 sees no loss: {shallow:?}"
        );
        let report = run(&p, SearchLimits::with_depth(8));
        assert_eq!(report.best_move, Some(cell(&p, 7, 14)));
        assert!(report.score <= -MATE_BOUND, "{report:?}");
    }

    #[test]
    fn the_same_node_limit_gives_the_same_answer() {
        let p = position(&[(7, 7), (8, 8), (6, 8)], &[(7, 8), (8, 7)]);
        let limits = SearchLimits {
            max_nodes: Some(30_000),
            ..Default::default()
        };
        let a = run(&p, limits.clone());
        let b = run(&p, limits);
        assert_eq!(
            (a.best_move, a.score, a.depth),
            (b.best_move, b.score, b.depth)
        );
        assert!(a.depth >= 2);
    }

    #[test]
    fn a_node_limit_of_one_still_answers_a_legal_move() {
        let p = position(&[(7, 7)], &[(8, 8)]);
        let limits = SearchLimits {
            max_nodes: Some(1),
            ..Default::default()
        };
        let report = run(&p, limits);
        let mv = report.best_move.expect("a move");
        assert!(p.is_legal(mv));
        assert_eq!(report.depth, 1);
    }

    #[test]
    fn with_a_helper_thread_the_four_is_still_blocked() {
        let p = position(
            &[(3, 2), (8, 8), (9, 9), (8, 9)],
            &[(3, 3), (3, 4), (3, 5), (3, 6)],
        );
        let table = TranspositionTable::with_megabytes(4);
        let report = run_main_search(&p, &table, &SearchLimits::with_depth(4), 1);
        assert_eq!(report.best_move, Some(cell(&p, 3, 7)));
    }

    #[test]
    fn a_cancelled_search_stops_its_helper_too() {
        // No deadline and no depth: only the cancellation ends the caller's search, and the
        // helper has no limit but the caller's end (the scope would wait for it for ever).
        let p = position(&[(7, 7), (8, 8), (6, 8)], &[(7, 8), (8, 7)]);
        let table = TranspositionTable::with_megabytes(4);
        let cancel = CancelFlag::new();
        let limits = SearchLimits {
            cancel: Some(cancel.clone()),
            ..Default::default()
        };
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            cancel.cancel();
        });
        let report = run_main_search(&p, &table, &limits, 1);
        canceller.join().expect("the canceller");
        assert!(p.is_legal(report.best_move.expect("a move")));
        assert_eq!(report.stop_reason, StopReason::Cancelled);
    }

    #[test]
    fn the_principal_variation_starts_with_the_best_move_and_is_legal() {
        let p = position(&[(7, 7), (7, 8), (9, 9)], &[(8, 8), (6, 6)]);
        let report = run(&p, SearchLimits::with_depth(5));
        assert_eq!(report.pv.first().copied(), report.best_move);
        let mut q = p.clone();
        for &mv in &report.pv {
            assert!(q.is_legal(mv), "{mv:?} in {:?}", report.pv);
            q.make(mv);
        }
        assert_eq!(report.iterations.len(), 5);
    }
}
