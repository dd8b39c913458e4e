//! Iterative-deepening negamax: alpha-beta with principal-variation search, or plain minimax.
//!
//! One [`Searcher`] walks one position in place (make/unmake), with per-ply move buffers that
//! are allocated once and reused, so the node loop allocates nothing. Iterative deepening runs
//! depth 1, 2, ... until a limit hits or the result is proven: a decisive score (mate
//! convention), or an iteration at least as deep as the game can last, which never met its
//! horizon and so is exact (this is how draws are proven). An iteration cut short by a limit is
//! thrown away, except for a root move it already proved better than the previous best.

use std::time::Instant;

use super::game::{Game, INFINITY, MAX_PLY, Move, Score, Status, WIN, is_decisive};
use super::limits::{CHECK_INTERVAL, SearchLimits, StopReason};
use super::ordering::{MoveOrdering, pick_best};
use super::progress::IterationInfo;
use super::report::{Iteration, MoveScore, Proof, SearchReport};
use super::table::{
    Bound, Entry, TableStats, TranspositionTable, score_from_table, score_to_table,
};

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
}

/// Searches `root` under `limits` and reports the best move found.
///
/// Always returns a legal move when the game is not over: the depth-1 iteration ignores the
/// time and node limits (it is a handful of nodes), only cancellation stops it.
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

/// Lazy SMP: helpers run the same iterative deepening, staggered by depth, and share what they
/// find only through the table. The main thread's report is the answer; its stop stops them.
fn search_lazy_smp<G: Game>(
    root: &G,
    limits: &SearchLimits,
    options: SearchOptions,
    table: &TranspositionTable,
    start: Instant,
) -> SearchReport {
    let stop = super::limits::CancelFlag::new();
    let helper_limits = limits.for_helper(&stop);
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..=options.helper_threads)
            .map(|i| {
                let helper_limits = helper_limits.clone();
                scope.spawn(move || {
                    let mut helper = Searcher::new(root.clone(), table, helper_limits, options);
                    helper.first_depth = 1 + (i as u32 % 2);
                    helper.iterate();
                    (helper.nodes, helper.stats)
                })
            })
            .collect();
        let mut main = Searcher::new(root.clone(), table, limits.clone(), options);
        let mut report = main.iterate();
        stop.cancel();
        report.table = main.stats;
        for helper in helpers {
            // A helper that panicked only loses its node count: the answer is the main thread's.
            if let Ok((nodes, stats)) = helper.join() {
                report.nodes += nodes;
                report.table.probes += stats.probes;
                report.table.hits += stats.hits;
            }
        }
        report.elapsed = start.elapsed();
        report
    })
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
    limits: SearchLimits,
    options: SearchOptions,
    nodes: u64,
    next_check: u64,
    /// Set once a limit is hit; every node then returns at once and the iteration is discarded.
    stopped: Option<StopReason>,
    /// Whether time and node limits apply (not during the depth-1 iteration).
    limits_armed: bool,
    /// Depth of the first iteration (Lazy SMP helpers start deeper to spread the work).
    first_depth: u32,
    stats: TableStats,
    ordering: MoveOrdering,
    move_buffers: Vec<Vec<Move>>,
    key_buffers: Vec<Vec<i64>>,
    /// Triangular principal-variation table: `pv[ply][..pv_len[ply]]` is the line from `ply`.
    pv: Vec<[Move; MAX_PLY]>,
    pv_len: [usize; MAX_PLY + 1],
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
            limits,
            options,
            nodes: 0,
            next_check: CHECK_INTERVAL,
            stopped: None,
            limits_armed: false,
            first_depth: 1,
            stats: TableStats::default(),
            ordering: MoveOrdering::new(move_space),
            move_buffers: (0..=MAX_PLY)
                .map(|_| Vec::with_capacity(move_space))
                .collect(),
            key_buffers: (0..=MAX_PLY)
                .map(|_| Vec::with_capacity(move_space))
                .collect(),
            pv: vec![[Move::NONE; MAX_PLY]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
        }
    }

    fn iterate(&mut self) -> SearchReport {
        let mut report = SearchReport {
            best_move: None,
            score: 0,
            proof: None,
            depth: 0,
            nodes: 0,
            table: TableStats::default(),
            elapsed: Default::default(),
            stop_reason: StopReason::Proven,
            pv: Vec::new(),
            root_moves: Vec::new(),
            iterations: Vec::new(),
        };
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
        let max_depth = self
            .limits
            .max_depth
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_PLY as u32 - 1);
        let mut best = root_moves[0];
        report.best_move = Some(best.mv);
        report.pv = vec![best.mv];
        report.stop_reason = StopReason::Depth;

        for depth in self.first_depth.min(max_depth)..=max_depth {
            self.limits_armed = depth > 1;
            if self.limits_armed
                && let Some(reason) = self.limits.reached(self.nodes)
            {
                report.stop_reason = reason;
                break;
            }
            let nodes_before = self.nodes;
            let finished = self.search_root(&mut root_moves, depth as i32);
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
                report.stop_reason = self.stopped.unwrap_or(StopReason::Time);
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
                report.stop_reason = self.stopped.unwrap_or(StopReason::Time);
                break;
            }
            // Best first; the stable sort keeps earlier order on ties (determinism).
            root_moves.sort_by_key(|rm| std::cmp::Reverse(rm.score));
            for rm in root_moves.iter_mut() {
                rm.settled = rm.score;
                rm.settled_depth = depth;
            }
            best = root_moves[0];
            report.best_move = Some(best.mv);
            report.score = best.score;
            report.depth = depth;
            report.pv = self.pv[0][..self.pv_len[0]].to_vec();
            if report.pv.first() != Some(&best.mv) {
                report.pv = vec![best.mv];
            }
            report.iterations.push(Iteration {
                depth,
                score: best.score,
                best_move: best.mv,
                nodes: self.nodes - nodes_before,
            });
            if let Some(progress) = &self.limits.progress {
                progress.report(&IterationInfo {
                    depth,
                    score: best.score,
                    best_move: best.mv,
                    pv: &report.pv,
                    nodes: self.nodes,
                });
            }
            if self.options.analysis {
                report.root_moves = root_moves
                    .iter()
                    .map(|rm| MoveScore {
                        mv: rm.mv,
                        score: rm.score,
                        proof: self.proof_of(rm.score, depth, exact_depth),
                        depth,
                    })
                    .collect();
            }
            let exact = depth >= exact_depth;
            let proven = if self.options.analysis {
                exact || root_moves.iter().all(|rm| is_decisive(rm.score))
            } else {
                exact || is_decisive(best.score)
            };
            // The position's own result is known as soon as its best score is; analysis goes
            // on to prove the other moves' scores too.
            report.proof = self.proof_of(best.score, depth, exact_depth);
            if proven {
                report.stop_reason = StopReason::Proven;
                break;
            }
            if depth == max_depth {
                report.stop_reason = StopReason::Depth;
            }
        }
        report.nodes = self.nodes;
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
        if let Some(filter) = &self.limits.root {
            // A restricted root searches every allowed legal move, candidate or not: the
            // client named them.
            self.pos.legal_moves(&mut moves);
            moves.retain(|&mv| filter.allows(mv));
        } else if (self.options.analysis && !self.options.candidates_only)
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
    fn search_root(&mut self, root_moves: &mut [RootMove], depth: i32) -> bool {
        self.nodes += 1;
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
                    if s > alpha && self.stopped.is_none() {
                        (-self.negamax(depth - 1, 1, -beta, -alpha), true)
                    } else {
                        (s, false)
                    }
                }
            };
            self.pos.unmake(mv);
            if self.stopped.is_some() {
                return false;
            }
            root_move.score = score;
            root_move.exact = exact;
            if score > best_score {
                best_score = score;
                best_index = i;
                self.update_pv(0, mv);
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
        if self.options.without_table || self.limits.root.is_some() {
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

    #[inline]
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.next_check {
            self.next_check = self.nodes + CHECK_INTERVAL;
            let reached = if self.limits_armed {
                self.limits.reached(self.nodes)
            } else {
                self.limits
                    .cancel
                    .as_ref()
                    .filter(|c| c.is_cancelled())
                    .map(|_| StopReason::Cancelled)
            };
            if reached.is_some() {
                self.stopped = reached;
            }
        }
        self.stopped.is_none()
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let child_len = self.pv_len[ply + 1].min(MAX_PLY - 1);
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply][0] = mv;
        head[ply][1..=child_len].copy_from_slice(&tail[0][..child_len]);
        self.pv_len[ply] = child_len + 1;
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
        if !self.visit() {
            return 0;
        }
        self.pv_len[ply] = 0;
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
            if self.stopped.is_some() {
                break;
            }
            if score > best {
                best = score;
                self.update_pv(ply, mv);
            }
        }
        self.move_buffers[ply] = moves;
        best
    }

    /// Alpha-beta negamax with PVS, fail-soft. Returns garbage (0) once `stopped` is set; the
    /// caller checks `stopped` after every child.
    fn negamax(&mut self, depth: i32, ply: usize, mut alpha: Score, beta: Score) -> Score {
        // Step 1. Count the node and poll the limits.
        if !self.visit() {
            return 0;
        }
        self.pv_len[ply] = 0;

        // Step 2. Game over, or a win on the very next move.
        if let Some(score) = self.terminal_score(ply) {
            return score;
        }
        if let Some(mv) = self.pos.immediate_win() {
            self.pv[ply][0] = mv;
            self.pv_len[ply] = 1;
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
                let cutoff = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cutoff {
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
                if score > alpha && score < beta && self.stopped.is_none() {
                    score = -self.negamax(depth - 1, ply + 1, -beta, -alpha);
                }
            }
            self.pos.unmake(mv);
            if self.stopped.is_some() {
                break;
            }
            if score > best {
                best = score;
                best_move = mv;
                if score > alpha {
                    alpha = score;
                    self.update_pv(ply, mv);
                    if alpha >= beta {
                        self.ordering.record_cutoff(mv, ply, side, depth);
                        break;
                    }
                }
            }
        }
        self.move_buffers[ply] = moves;
        self.key_buffers[ply] = keys;
        if self.stopped.is_some() {
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
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.table.store(
            key,
            Entry {
                score: score_to_table(best, ply),
                best_move,
                // An extended node past the horizon has a negative depth: store it as 0.
                depth: depth.clamp(0, u8::MAX as i32) as u8,
                bound,
            },
        );
        best
    }
}
