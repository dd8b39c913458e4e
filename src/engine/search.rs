//! Iterative-deepening negamax: alpha-beta with principal-variation search, or plain minimax.
//!
//! One [`Searcher`] walks one position in place (make/unmake), with per-ply move buffers that
//! are allocated once and reused, so the node loop allocates nothing. Iterative deepening runs
//! depth 1, 2, ... until a limit hits or the result is proven: a decisive score (mate
//! convention), or an iteration at least as deep as the game can last, which never met its
//! horizon and so is exact (this is how draws are proven). An iteration cut short by a limit is
//! thrown away, except for a root move it already proved better than the previous best.

use std::time::Instant;

use super::clock::NodeClock;
use super::game::{Game, INFINITY, MAX_PLY, Move, Score, Status, WIN, is_decisive};
use super::limits::{SearchLimits, StopReason};
use super::ordering::{MoveOrdering, pick_best};
use super::pv::PvTable;
use super::report::{Iteration, Line, MoveScore, Proof, SearchReport};
use super::table::{
    Bound, Entry, TableStats, TranspositionTable, score_from_table, score_to_table,
};
use super::threads::{HelperWork, lazy_smp};

/// After an analysis proves a win, the other moves get this many times the nodes the proof
/// took, and at least [`ANALYSIS_AFTER_WIN_MIN_NODES`] (every tic-tac-toe alternative is
/// proven well within it: a forced win leaves at most 7 empty cells, whose whole iterative minimax analysis is under 60 k nodes).
const ANALYSIS_AFTER_WIN_FACTOR: u64 = 16;
const ANALYSIS_AFTER_WIN_MIN_NODES: u64 = 100_000;

/// An alpha-beta search of a position with at most this many plies left runs to the end
/// whatever the deadline says. Such a tree is small (nine cells hold at most 3^9 = 19,683
/// positions, which the table keeps from being searched twice in an iteration: the empty
/// tic-tac-toe board takes 639 nodes in all), so its exact answer costs less than a late start can: a request that waited in a
/// queue, or a machine that stalled the thread, would otherwise get a depth-1 guess where the
/// game is solved. Node limits and cancellation still stop it; plain minimax (up to 550 k nodes
/// on an empty tic-tac-toe board) keeps the deadline.
pub const SOLVED_WHATEVER_THE_CLOCK_PLIES: u32 = 9;

/// Which algorithm walks the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// Alpha-beta with PVS, transposition table, killers, history and the game's hooks.
    #[default]
    AlphaBeta,
    /// Plain minimax: every legal move, no pruning, no table, no hooks (for comparison).
    Minimax,
}

/// How to search, beside the limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchOptions {
    pub algorithm: Algorithm,
    /// Score every legal root move with a full window (slower; the scores are exact per move).
    pub analysis: bool,
    /// With `analysis`, score only the game's own root candidates ([`Game::search_moves`]: in
    /// gomoku the cells near the stones, or only the answers to a four) rather than every legal
    /// move. The weakened levels use it: they choose among moves worth considering, and do not
    /// spend their time on the far corners of a gomoku board.
    pub candidates_only: bool,
    /// Neither read nor write the transposition table (to check that it changes no result).
    pub without_table: bool,
    /// Extra threads that search the same position through the shared table (Lazy SMP);
    /// 0 searches on the calling thread only. Alpha-beta only.
    pub helper_threads: usize,
    /// How many best root moves to report, each with its own line (UCI's MultiPV); 0 and 1
    /// both mean the one best move, searched exactly as without this option. With k > 1 every
    /// legal root move is a candidate, each iteration searches the root k times (Stockfish's
    /// loop, see `Searcher::iterate_multipv`) and fills [`SearchReport::lines`].
    pub multipv: usize,
    /// The deadline binds from the first iteration (which otherwise ignores it, so that a
    /// search always has a move): for a caller that has a move already and asks only whether
    /// more can be proven in the time left, such as gomoku's check of a claimed win. On a big
    /// board whose nodes are slow, a depth 1 over every legal move is no handful of nodes.
    pub deadline_from_depth_one: bool,
}

/// Searches `root` under `limits` and reports the best move found.
///
/// Always returns a legal move when the game is not over: the depth-1 iteration ignores the
/// time and node limits (it is a handful of nodes), only cancellation stops it, and the
/// deadline when [`SearchOptions::deadline_from_depth_one`] asks (the move is then the first
/// candidate, unsearched: for a caller that has a move of its own).
pub fn search<G: Game>(
    root: &G,
    limits: &SearchLimits,
    options: SearchOptions,
    table: &TranspositionTable,
) -> SearchReport {
    let start = Instant::now();
    table.new_search();
    if options.helper_threads > 0 && options.algorithm == Algorithm::AlphaBeta {
        return search_lazy_smp(root, limits, options, table, start);
    }
    let mut searcher = Searcher::new(root.clone(), table, limits.clone(), options);
    let mut report = searcher.iterate();
    report.elapsed = start.elapsed();
    report.table = searcher.stats;
    report
}

/// Lazy SMP ([`super::threads`]): the helpers share what they find only through the table.
fn search_lazy_smp<G: Game>(
    root: &G,
    limits: &SearchLimits,
    options: SearchOptions,
    table: &TranspositionTable,
    start: Instant,
) -> SearchReport {
    let helper = |limits: SearchLimits, first_depth: u32| {
        let mut helper = Searcher::new(root.clone(), table, limits, options);
        helper.first_depth = first_depth;
        helper.iterate();
        HelperWork {
            nodes: helper.clock.nodes(),
            table: helper.stats,
        }
    };
    let mut report = lazy_smp(limits, options.helper_threads, helper, || {
        let mut main = Searcher::new(root.clone(), table, limits.clone(), options);
        let mut report = main.iterate();
        report.table = main.stats;
        report
    });
    report.elapsed = start.elapsed();
    report
}

/// A root move and what the current and last iterations found for it.
#[derive(Clone, Copy, Debug)]
struct RootMove {
    mv: Move,
    /// This iteration's score (a bound where not `exact`).
    score: Score,
    /// Whether `score` is exact (full window) rather than a bound.
    exact: bool,
    /// The score of the last completed iteration, and its depth (0: none completed yet).
    settled: Score,
    settled_depth: u32,
}

/// An unfinished iteration's root moves as analysis reports them (see
/// [`Searcher::partial_analysis`]).
struct PartialAnalysis {
    /// Index in the root moves of the move ranked first.
    index: usize,
    moves: Vec<MoveScore>,
}

/// The state of one search. Owns a private copy of the position.
pub struct Searcher<'t, G: Game> {
    pos: G,
    table: &'t TranspositionTable,
    options: SearchOptions,
    /// The node count and the limits; once a limit is hit every node returns at once and the
    /// iteration is discarded.
    clock: NodeClock,
    /// Depth of the first iteration (Lazy SMP helpers start deeper to spread the work).
    first_depth: u32,
    stats: TableStats,
    ordering: MoveOrdering,
    move_buffers: Vec<Vec<Move>>,
    key_buffers: Vec<Vec<i64>>,
    pv: PvTable,
}

impl<'t, G: Game> Searcher<'t, G> {
    fn new(
        pos: G,
        table: &'t TranspositionTable,
        limits: SearchLimits,
        options: SearchOptions,
    ) -> Self {
        let move_space = pos.move_space();
        Searcher {
            pos,
            table,
            options,
            clock: NodeClock::new(limits).deadline_from_depth_one(options.deadline_from_depth_one),
            first_depth: 1,
            stats: TableStats::default(),
            ordering: MoveOrdering::new(move_space),
            move_buffers: (0..=MAX_PLY)
                .map(|_| Vec::with_capacity(move_space))
                .collect(),
            key_buffers: (0..=MAX_PLY)
                .map(|_| Vec::with_capacity(move_space))
                .collect(),
            pv: PvTable::default(),
        }
    }

    fn iterate(&mut self) -> SearchReport {
        let mut report = SearchReport::empty(StopReason::Proven);
        match self.pos.status() {
            Status::Lost => {
                report.score = -WIN;
                report.proof = Some(Proof {
                    outcome: super::report::Outcome::Loss,
                    plies_to_end: 0,
                });
                return report;
            }
            Status::Draw => {
                report.proof = Some(Proof {
                    outcome: super::report::Outcome::Draw,
                    plies_to_end: 0,
                });
                return report;
            }
            Status::Ongoing => {}
        }

        let mut root_moves = self.root_moves();
        if root_moves.is_empty() {
            // Only a root filter allowing no legal move gets here (the service refuses one).
            report.stop_reason = StopReason::Depth;
            return report;
        }
        let exact_depth = self.pos.max_remaining_plies();
        if self.options.algorithm == Algorithm::AlphaBeta
            && exact_depth <= SOLVED_WHATEVER_THE_CLOCK_PLIES
        {
            self.clock.untimed_through(exact_depth);
        }
        let max_depth = self
            .clock
            .limits()
            .max_depth
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_PLY as u32 - 1);
        let mut best = root_moves[0];
        report.best_move = Some(best.mv);
        report.pv = vec![best.mv];
        report.stop_reason = StopReason::Depth;
        let k = self.options.multipv.min(root_moves.len());
        if k > 1 {
            return self.iterate_multipv(report, root_moves, k, exact_depth, max_depth);
        }

        for depth in self.first_depth.min(max_depth)..=max_depth {
            if let Some(reason) = self.clock.start_iteration(depth, 0) {
                report.stop_reason = reason;
                break;
            }
            let nodes_before = self.clock.nodes();
            let finished = self.search_root(&mut root_moves, depth as i32, true);
            if !finished && self.options.analysis && report.depth > 0 {
                // Every move this iteration scored in full is ranked by its deeper score above
                // every move still at the last depth, so the list, the move and its score agree.
                let partial = self.partial_analysis(&root_moves, depth, exact_depth);
                best = root_moves[partial.index];
                report.best_move = Some(best.mv);
                if partial.index != 0 {
                    report.pv = vec![best.mv];
                }
                report.score = partial.moves[0].score;
                report.proof = partial.moves[0].proof;
                report.root_moves = partial.moves;
                report.stop_reason = self.clock.stopped().unwrap_or(StopReason::Time);
                break;
            }
            if !finished {
                // A move other than the previous best that completed with a higher score beats
                // it on this deeper iteration; anything else of the unfinished iteration is dropped.
                if let Some(better) = root_moves[1..]
                    .iter()
                    .filter(|rm| rm.exact && rm.score > root_moves[0].score && root_moves[0].exact)
                    .max_by_key(|rm| rm.score)
                {
                    best = *better;
                    report.best_move = Some(best.mv);
                    report.score = best.score;
                    report.proof = Proof::from_decisive(best.score);
                    report.pv = vec![best.mv];
                }
                report.stop_reason = self.clock.stopped().unwrap_or(StopReason::Time);
                break;
            }
            // Best first; the stable sort keeps earlier order on ties (determinism).
            root_moves.sort_by_key(|rm| std::cmp::Reverse(rm.score));
            best = self.settle_iteration(
                &mut report,
                &mut root_moves,
                depth,
                nodes_before,
                self.pv.line(0),
            );
            if self.options.analysis {
                report.root_moves = self.scored(&root_moves, depth, exact_depth);
            }
            let exact = depth >= exact_depth;
            // The position's own result is known as soon as its best score is decisive. Analysis
            // goes on to prove the other moves' scores too, unless the best move is a proven
            // win: iterative deepening finds the shortest win first, so the move and its score
            // are final, and what is left (the losing or drawing alternatives' heuristic scores)
            // is not worth the rest of the budget (a game may never prove them).
            let proven = if self.options.analysis {
                exact || root_moves.iter().all(|rm| is_decisive(rm.score))
            } else {
                exact || is_decisive(best.score)
            };
            if self.options.analysis && !proven && is_decisive(best.score) && best.score > 0 {
                // The best move is a proven win, the shortest (iterative deepening finds it
                // first), so the move and its score are final; only the other moves' scores
                // can still improve, and a game may never prove them. They get a bounded
                // share more of the work, enough to prove every tic-tac-toe alternative,
                // not the rest of a long budget.
                let allowance = (self.clock.nodes() * ANALYSIS_AFTER_WIN_FACTOR)
                    .max(ANALYSIS_AFTER_WIN_MIN_NODES);
                self.clock.cap_nodes(self.clock.nodes() + allowance);
            }
            report.proof = self.proof_of(best.score, depth, exact_depth);
            if proven {
                report.stop_reason = StopReason::Proven;
                break;
            }
            if depth == max_depth {
                report.stop_reason = StopReason::Depth;
            }
        }
        if report.stop_reason == StopReason::Nodes && self.clock.capped() {
            // Stopped by the allowance after a proven win: the result is proven.
            report.stop_reason = StopReason::Proven;
        }
        report.nodes = self.clock.nodes();
        if self.options.multipv > 1 {
            // Several lines asked, one move to play: its line is the only one.
            report.lines = vec![Line {
                mv: best.mv,
                score: report.score,
                proof: report.proof,
                depth: report.depth,
                pv: report.pv.clone(),
            }];
        }
        report
    }

    /// The tail of a complete iteration at `depth`, shared by the single-line and the MultiPV
    /// loops: with `root_moves` already in their final order (best first), each move's score
    /// becomes its settled score of this depth (what a later, cut-short iteration falls back
    /// on), and the report takes the iteration (its best move, score, `line` and the nodes it
    /// cost since `nodes_before`) and tells the progress listener. Returns the best move.
    fn settle_iteration(
        &self,
        report: &mut SearchReport,
        root_moves: &mut [RootMove],
        depth: u32,
        nodes_before: u64,
        line: &[Move],
    ) -> RootMove {
        for rm in root_moves.iter_mut() {
            rm.settled = rm.score;
            rm.settled_depth = depth;
        }
        let best = root_moves[0];
        report.complete_iteration(
            Iteration {
                depth,
                score: best.score,
                best_move: best.mv,
                nodes: self.clock.nodes() - nodes_before,
            },
            line,
            self.clock.nodes(),
            self.clock.limits().progress.as_ref(),
        );
        best
    }

    /// The root moves of a complete iteration at `depth` as analysis reports them, each with
    /// its score and the proof that score carries.
    fn scored(&self, root_moves: &[RootMove], depth: u32, exact_depth: u32) -> Vec<MoveScore> {
        root_moves
            .iter()
            .map(|rm| MoveScore {
                mv: rm.mv,
                score: rm.score,
                proof: self.proof_of(rm.score, depth, exact_depth),
                depth,
            })
            .collect()
    }

    /// Iterative deepening with `k` > 1 lines (Stockfish's MultiPV): at each depth, pass
    /// `pv_idx` in `0..k` searches the root moves from `pv_idx` on (the better ones already
    /// have their line) and stable-sorts that slice, so its best becomes line `pv_idx` with an
    /// exact score and its own principal variation. Only the first pass, which sees every
    /// move, stores the root in the table. An iteration cut short by a limit is dropped whole,
    /// so that the lines all come from one depth and stay sorted; the result counts as proven
    /// only when every line is (or the depth reaches the game's end).
    fn iterate_multipv(
        &mut self,
        mut report: SearchReport,
        mut root_moves: Vec<RootMove>,
        k: usize,
        exact_depth: u32,
        max_depth: u32,
    ) -> SearchReport {
        // One line buffer per pass, reused across iterations (a handful of root allocations
        // per iteration, none per node).
        let mut pvs: Vec<Vec<Move>> = vec![Vec::new(); k];
        for depth in self.first_depth.min(max_depth)..=max_depth {
            if let Some(reason) = self.clock.start_iteration(depth, 0) {
                report.stop_reason = reason;
                break;
            }
            let nodes_before = self.clock.nodes();
            let mut finished = true;
            for pv_idx in 0..k {
                if !self.search_root(&mut root_moves[pv_idx..], depth as i32, pv_idx == 0) {
                    finished = false;
                    break;
                }
                root_moves[pv_idx..].sort_by_key(|rm| std::cmp::Reverse(rm.score));
                let mv = root_moves[pv_idx].mv;
                let line = self.pv.line(0);
                pvs[pv_idx].clear();
                if line.first() == Some(&mv) {
                    pvs[pv_idx].extend_from_slice(line);
                } else {
                    pvs[pv_idx].push(mv);
                }
            }
            if !finished {
                report.stop_reason = self.clock.stopped().unwrap_or(StopReason::Time);
                break;
            }
            // A later pass can score a move above an earlier one only through the table's
            // inexactness; keep the lines sorted all the same (stable: pass order on ties).
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(root_moves[i].score));
            let top: Vec<RootMove> = order.iter().map(|&i| root_moves[i]).collect();
            let top_pvs: Vec<Vec<Move>> = order.iter().map(|&i| pvs[i].clone()).collect();
            root_moves[..k].copy_from_slice(&top);
            let best = self.settle_iteration(
                &mut report,
                &mut root_moves,
                depth,
                nodes_before,
                &top_pvs[0],
            );
            report.lines = top
                .iter()
                .zip(top_pvs)
                .map(|(rm, pv)| Line {
                    mv: rm.mv,
                    score: rm.score,
                    proof: self.proof_of(rm.score, depth, exact_depth),
                    depth,
                    pv,
                })
                .collect();
            if self.options.analysis {
                // Every move was searched with a full window in the pass that saw it last.
                report.root_moves = self.scored(&root_moves, depth, exact_depth);
            }
            report.proof = self.proof_of(best.score, depth, exact_depth);
            let every_move_proven =
                !self.options.analysis || root_moves.iter().all(|rm| is_decisive(rm.score));
            let proven = depth >= exact_depth
                || (report.lines.iter().all(|l| l.proof.is_some()) && every_move_proven);
            if proven {
                report.stop_reason = StopReason::Proven;
                break;
            }
            if depth == max_depth {
                report.stop_reason = StopReason::Depth;
            }
        }
        report.nodes = self.clock.nodes();
        report
    }

    /// The analysis of an iteration at `depth` that a limit cut short, after at least one
    /// completed (the root moves are then in the last iteration's order, best first): the moves
    /// this iteration scored with a full window at `depth`, best first, then the others with
    /// their scores of the last iteration, best first. The stable sort keeps the last order on
    /// ties. `index` is the position in `root_moves` of the list's first move.
    fn partial_analysis(
        &self,
        root_moves: &[RootMove],
        depth: u32,
        exact_depth: u32,
    ) -> PartialAnalysis {
        let mut order: Vec<usize> = (0..root_moves.len()).collect();
        let scored = |rm: &RootMove| {
            if rm.exact {
                (depth, rm.score)
            } else {
                (rm.settled_depth, rm.settled)
            }
        };
        order.sort_by_key(|&i| std::cmp::Reverse(scored(&root_moves[i])));
        let moves = order
            .iter()
            .map(|&i| {
                let (depth, score) = scored(&root_moves[i]);
                MoveScore {
                    mv: root_moves[i].mv,
                    score,
                    proof: self.proof_of(score, depth, exact_depth),
                    depth,
                }
            })
            .collect();
        PartialAnalysis {
            index: order[0],
            moves,
        }
    }

    fn proof_of(&self, score: Score, depth: u32, exact_depth: u32) -> Option<Proof> {
        Proof::from_decisive(score).or_else(|| {
            (depth >= exact_depth && score == 0).then_some(Proof {
                outcome: super::report::Outcome::Draw,
                plies_to_end: exact_depth.min(depth),
            })
        })
    }

    fn root_moves(&mut self) -> Vec<RootMove> {
        let mut moves = Vec::new();
        if let Some(filter) = &self.clock.limits().root {
            // A restricted root searches every allowed legal move, candidate or not: the
            // client named them.
            self.pos.legal_moves(&mut moves);
            moves.retain(|&mv| filter.allows(mv));
        } else if (self.options.analysis && !self.options.candidates_only)
            || self.options.multipv > 1
            || self.options.algorithm == Algorithm::Minimax
        {
            self.pos.legal_moves(&mut moves);
        } else {
            self.pos.search_moves(&mut moves);
        }
        // Initial order: the game's hint, stable on ties.
        let pos = &self.pos;
        moves.sort_by_key(|&mv| std::cmp::Reverse(pos.move_order_hint(mv)));
        let probed = if self.options.without_table {
            None
        } else {
            self.table.probe(self.pos.hash())
        };
        if let Some(entry) = probed
            && let Some(i) = moves.iter().position(|&m| m == entry.best_move)
        {
            let mv = moves.remove(i);
            moves.insert(0, mv);
        }
        moves
            .into_iter()
            .map(|mv| RootMove {
                mv,
                score: -INFINITY,
                exact: false,
                settled: -INFINITY,
                settled_depth: 0,
            })
            .collect()
    }

    /// One iteration over the root moves; false when a limit cut it short.
    #[allow(clippy::needless_range_loop)] // `i` also picks the search window.
    /// `store`: whether the best of `root_moves` is the position's value, for the table (not
    /// when a MultiPV pass leaves the better moves out).
    fn search_root(&mut self, root_moves: &mut [RootMove], depth: i32, store: bool) -> bool {
        self.clock.count();
        let mut alpha = -INFINITY;
        let beta = INFINITY;
        let full_window = self.options.analysis || self.options.algorithm == Algorithm::Minimax;
        for rm in root_moves.iter_mut() {
            rm.exact = false;
        }
        let mut best_score = -INFINITY;
        let mut best_index = 0;
        for (i, root_move) in root_moves.iter_mut().enumerate() {
            let mv = root_move.mv;
            self.pos.make(mv);
            let (score, exact) = match self.options.algorithm {
                Algorithm::Minimax => (-self.minimax(depth - 1, 1), true),
                Algorithm::AlphaBeta if full_window || i == 0 => {
                    (-self.negamax(depth - 1, 1, -beta, -alpha), true)
                }
                Algorithm::AlphaBeta => {
                    let s = -self.negamax(depth - 1, 1, -alpha - 1, -alpha);
                    if s > alpha && !self.clock.is_stopped() {
                        (-self.negamax(depth - 1, 1, -beta, -alpha), true)
                    } else {
                        (s, false)
                    }
                }
            };
            self.pos.unmake(mv);
            if self.clock.is_stopped() {
                return false;
            }
            root_move.score = score;
            root_move.exact = exact;
            if score > best_score {
                best_score = score;
                best_index = i;
                self.pv.update(0, mv);
                if !full_window && score > alpha {
                    alpha = score;
                }
            }
        }
        // Moves searched with a null window only have bounds (<= alpha); keep them below the best.
        if !full_window {
            for (i, rm) in root_moves.iter_mut().enumerate() {
                if i != best_index && !rm.exact {
                    rm.score = rm.score.min(best_score - 1);
                }
            }
        }
        // A restricted root's best is not the position's value: the shared table must not
        // hold it for other searches.
        if !store || self.options.without_table || self.clock.limits().root.is_some() {
            return true;
        }
        self.table.store(
            self.pos.hash(),
            Entry {
                score: score_to_table(best_score, 0),
                best_move: root_moves[best_index].mv,
                depth: depth.min(u8::MAX as i32) as u8,
                bound: Bound::Exact,
            },
        );
        true
    }

    /// The score of a finished game at `ply` (a loss for the side to move, or a draw).
    #[inline]
    fn terminal_score(&self, ply: usize) -> Option<Score> {
        match self.pos.status() {
            Status::Lost => Some(-(WIN - ply as Score)),
            Status::Draw => Some(0),
            Status::Ongoing => None,
        }
    }

    /// Plain negamax minimax: no pruning, no table, no hooks. Counts every node it visits.
    fn minimax(&mut self, depth: i32, ply: usize) -> Score {
        if !self.clock.visit(0) {
            return 0;
        }
        self.pv.clear(ply);
        if let Some(score) = self.terminal_score(ply) {
            return score;
        }
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.pos.evaluate();
        }
        let mut moves = std::mem::take(&mut self.move_buffers[ply]);
        moves.clear();
        self.pos.legal_moves(&mut moves);
        let mut best = -INFINITY;
        for &mv in &moves {
            self.pos.make(mv);
            let score = -self.minimax(depth - 1, ply + 1);
            self.pos.unmake(mv);
            if self.clock.is_stopped() {
                break;
            }
            if score > best {
                best = score;
                self.pv.update(ply, mv);
            }
        }
        self.move_buffers[ply] = moves;
        best
    }

    /// Alpha-beta negamax with PVS, fail-soft. Returns garbage (0) once `stopped` is set; the
    /// caller checks `stopped` after every child.
    fn negamax(&mut self, depth: i32, ply: usize, mut alpha: Score, beta: Score) -> Score {
        // Step 1. Count the node and poll the limits.
        if !self.clock.visit(0) {
            return 0;
        }
        self.pv.clear(ply);

        // Step 2. Game over, or a win on the very next move.
        if let Some(score) = self.terminal_score(ply) {
            return score;
        }
        if let Some(mv) = self.pos.immediate_win() {
            self.pv.set_single(ply, mv);
            return WIN - (ply as Score + 1);
        }

        // Step 3. Horizon, unless the mover must answer a threat at once (then the answer is
        // searched too, so a forced reply is never cut off at the horizon).
        if (depth <= 0 && !self.pos.must_answer_threat()) || ply >= MAX_PLY - 1 {
            return self.pos.evaluate();
        }

        // Step 4. Mate-distance pruning: nothing here wins sooner than next ply or loses sooner
        // than the ply after.
        let alpha_floor = -(WIN - ply as Score - 1);
        let beta_ceiling = WIN - ply as Score - 1;
        alpha = alpha.max(alpha_floor);
        let beta = beta.min(beta_ceiling);
        if alpha >= beta {
            return alpha;
        }

        // Step 5. Transposition table lookup.
        let key = self.pos.hash();
        let mut table_move = Move::NONE;
        let probed = if self.options.without_table {
            None
        } else {
            self.table.probe(key)
        };
        self.stats.probes += u64::from(!self.options.without_table);
        if let Some(entry) = probed {
            self.stats.hits += 1;
            table_move = entry.best_move;
            if entry.depth as i32 >= depth {
                let score = score_from_table(entry.score, ply);
                if entry.bound.settles(score, alpha, beta) {
                    return score;
                }
            }
        }

        // Step 6. Generate and order the moves worth searching.
        let mut moves = std::mem::take(&mut self.move_buffers[ply]);
        let mut keys = std::mem::take(&mut self.key_buffers[ply]);
        moves.clear();
        keys.clear();
        self.pos.search_moves(&mut moves);
        let side = self.pos.side_to_move();
        for &mv in &moves {
            keys.push(
                self.ordering
                    .key(mv, table_move, ply, side, self.pos.move_order_hint(mv)),
            );
        }

        // Step 7. Search them: the first with the full window, the rest with a null window first.
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = Move::NONE;
        for i in 0..moves.len() {
            pick_best(&mut moves, &mut keys, i);
            let mv = moves[i];
            self.pos.make(mv);
            let mut score;
            if i == 0 {
                score = -self.negamax(depth - 1, ply + 1, -beta, -alpha);
            } else {
                score = -self.negamax(depth - 1, ply + 1, -alpha - 1, -alpha);
                if score > alpha && score < beta && !self.clock.is_stopped() {
                    score = -self.negamax(depth - 1, ply + 1, -beta, -alpha);
                }
            }
            self.pos.unmake(mv);
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
                        self.ordering.record_cutoff(mv, ply, side, depth);
                        break;
                    }
                }
            }
        }
        self.move_buffers[ply] = moves;
        self.key_buffers[ply] = keys;
        if self.clock.is_stopped() {
            return 0;
        }
        if best_move.is_none() {
            // An ongoing game with no move to search cannot happen for a sound `Game`; score it
            // as a draw rather than trust anything else.
            return 0;
        }

        // Step 8. Store the result.
        if self.options.without_table {
            return best;
        }
        self.table.store(
            key,
            Entry::of_node(best, best_move, ply, depth, original_alpha, beta),
        );
        best
    }
}
