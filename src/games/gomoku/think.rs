//! How gomoku chooses a move ([`Gomoku::choose_move`], behind `BoardGame::think`): a five or a
//! forced block first, then the threat searches (VCF, a capped VCT) at the root, then the main
//! search (gomoku's own [`super::search`] on big boards, the exact generic engine on small
//! ones), a decisive score confirmed by the exact engine before it is reported as a proof, and
//! last the defence check ([`super::defence`]) of the chosen move against the opponent's
//! threats.
//!
//! The key idea: every claim of a proven outcome comes from an exact search, the selective
//! searches only propose.

use std::time::{Duration, Instant};

use super::defence::{Threat, ThreatCheck};
use super::*;
use crate::engine::{RootFilter, SOLVED_WHATEVER_THE_CLOCK_PLIES, ThreatProof};

/// Most nodes the root VCT may visit.
const ROOT_VCT_NODES: u64 = 100_000;

/// The main search's hard limit, in percent of the time left after the root's threat
/// searches; the rest is kept for the defence check. 70 before 2026-12-04; 85 completes the
/// same depths (an iteration takes about 2 times the one before, so 20 % more time rarely
/// completes one more), and what it buys is the part of a last iteration that ends before the
/// limit.
const MAIN_SEARCH_PERCENT: u32 = 85;

impl Gomoku {
    /// The body of `BoardGame::think` for gomoku (its documentation is there).
    pub(super) fn choose_move(
        &self,
        limits: &SearchLimits,
        options: SearchOptions,
        table: &TranspositionTable,
    ) -> SearchReport {
        // Only the threat search takes a helper thread: the exact searches keep one thread, so
        // that their node counts are those of one search.
        let helpers = options.helper_threads;
        let options = SearchOptions {
            helper_threads: 0,
            ..options
        };
        // Several lines (multipv) come from the exact engine too, as analysis does: the threat
        // shortcuts and the defence swap answer one move, and would break "`lines[0]` is the
        // move". A position with so few cells left that the exact engine solves it whatever
        // the clock goes there as well: its answer is then exact even when the search starts
        // late.
        if options.algorithm == Algorithm::Minimax
            || options.analysis
            || options.multipv > 1
            || self.status() != Status::Ongoing
            || self.max_remaining_plies() <= SOLVED_WHATEVER_THE_CLOCK_PLIES
        {
            return exact_search(self, limits, options, table);
        }
        let start = Instant::now();
        // A restricted root (searchmoves, exclude) takes a threat search's move only when it
        // is allowed; otherwise the main search looks among the allowed moves.
        let root = limits.root.as_ref();
        let allowed = |mv: Move| RootFilter::admits(root, mv);
        if let Some(mv) = self.immediate_win().filter(|&mv| allowed(mv)) {
            return proven_win(mv, vec![mv], 1, 1, start, None);
        }
        let deadline = limits.deadline.map(|d| d.0);
        let share = |fraction: u32| {
            deadline
                .map(|d| Instant::now() + d.saturating_duration_since(Instant::now()) / fraction)
        };
        let mut solver = vcf::Vcf::new(self.clone());
        let mut vct_nodes = 0;
        // Under renju the threat solvers know black's forbidden points (never played, as a
        // threat or a block; a four or three completed only on one is no threat), so black
        // runs them too.
        if self.five_cells(self.to_move.other(), &mut [0; 1]) == 0 {
            // Step 2. Our own VCF, with up to a third of the budget (usually far less).
            let vcf_limits = vcf::VcfLimits {
                deadline: share(3),
                max_nodes: limits.max_nodes.map_or(u64::MAX, |n| n / 8),
                cancel: limits.cancel.clone(),
                max_depth: vcf::MAX_FOURS,
            };
            if let Some(line) = solver.solve(&vcf_limits).filter(|line| allowed(line[0])) {
                let plies = line.len() as u32;
                return proven_win(
                    line[0],
                    line,
                    plies,
                    solver.nodes(),
                    start,
                    Some(ThreatProof::Vcf),
                );
            }
            // Step 2b. Our own VCT (fours and threes), with up to a quarter of what is left and
            // a node cap: a VCT that exists is usually found fast, and the main search needs the
            // time.
            let vct_limits = vct::VctLimits {
                deadline: share(4),
                max_nodes: limits
                    .max_nodes
                    .map_or(ROOT_VCT_NODES, |n| (n / 8).min(ROOT_VCT_NODES)),
                cancel: limits.cancel.clone(),
            };
            let mut threats = vct::Vct::new(self.clone());
            let found = threats.solve(limits.max_depth.unwrap_or(vct::MAX_THREATS), &vct_limits);
            if let Some((mv, plies)) = found.filter(|&(mv, _)| allowed(mv)) {
                let nodes = solver.nodes() + threats.nodes();
                return proven_win(mv, vec![mv], plies, nodes, start, Some(ThreatProof::Vct));
            }
            vct_nodes = threats.nodes();
        }
        // Step 3. The engine, with a hard limit at 85 % of the time left (and all but an
        // eighth of the nodes), the rest kept for step 4: a clean check takes a few
        // milliseconds, but when the chosen move is threatened it takes 20-80 ms (each
        // alternative 2,000 to 25,000 threat nodes). The search starts every iteration the
        // hard limit allows and keeps what a cut one proved (see `MainSearch::run`;
        // docs/journal/gomoku.md, "Where a 200 ms turn goes" and "The turn's last iteration
        // started again").
        let threat_nodes = solver.nodes() + vct_nodes;
        let mut engine_limits = limits.clone();
        engine_limits.max_nodes = limits
            .max_nodes
            .map(|n| n.saturating_sub(threat_nodes + n / 8).max(1));
        let threats_end = Instant::now();
        if let Some(d) = deadline {
            let remaining = d.saturating_duration_since(threats_end);
            let hard = threats_end + remaining * MAIN_SEARCH_PERCENT / 100;
            engine_limits.deadline = Some(crate::engine::Deadline(hard));
        }
        let mut report = if self.board.cells.len() > search::MAIN_SEARCH_MIN_CELLS {
            let mut report = search::run_main_search(self, table, &engine_limits, helpers);
            // The threat search prunes, so it may miss the move that refutes a "forced" line:
            // its decisive scores are strong hints, not proofs, until the exact search
            // confirms them.
            if let Some(claim) = Proof::from_decisive(report.score) {
                match self.confirm(claim, &engine_limits, options, table) {
                    Some(exact) => {
                        report.nodes += exact.nodes;
                        report.score = exact.score;
                        report.proof = exact.proof;
                        report.best_move = exact.best_move;
                        report.pv = exact.pv;
                        report.stop_reason = StopReason::Proven;
                    }
                    None => {
                        report.score = report.score.clamp(-(MATE_BOUND - 1), MATE_BOUND - 1);
                        report.stop_reason = StopReason::Depth;
                    }
                }
            }
            report
        } else {
            exact_search(self, &engine_limits, options, table)
        };
        let main_end = Instant::now();
        // Step 4. Defence: if the chosen move lets the opponent win by continuous fours or
        // threats, or its check was cut short by the node cap (the opponent's threats are too
        // many to rule out), look for a candidate shown safe, trying the cells of the
        // opponent's winning line first, then the moves the main search preferred, then the
        // rest in threat order. See [`Gomoku::defend`].
        let proven = report.proof.is_some_and(|p| p.outcome == Outcome::Win);
        let used_before_check = report.nodes + threat_nodes;
        let mut check = ThreatCheck {
            vcf: solver,
            vct: vct::Vct::new(self.clone()),
            vcf_limits: vcf::VcfLimits {
                deadline,
                max_nodes: 20_000,
                cancel: limits.cancel.clone(),
                max_depth: vcf::MAX_FOURS,
            },
            vct_limits: vct::VctLimits {
                deadline,
                max_nodes: 25_000,
                cancel: limits.cancel.clone(),
            },
        };
        if let Some(cap) = limits.max_nodes {
            // What is left of the node cap, shared by the checks below.
            let left = cap.saturating_sub(used_before_check);
            check.vcf_limits.max_nodes = check.vcf_limits.max_nodes.min(left / 2);
            check.vct_limits.max_nodes = check.vct_limits.max_nodes.min(left / 4);
        }
        let node_cap = limits
            .max_nodes
            .map(|n| n.saturating_sub(used_before_check));
        let within_cap = |check: &ThreatCheck| {
            node_cap.is_none_or(|cap| check.vcf.nodes() + check.vct.nodes() < cap)
        };
        if let (Some(best), false) = (report.best_move, proven) {
            let check_start = Instant::now();
            let left = deadline.map(|d| d.saturating_duration_since(check_start));
            let verdict = self.opponent_threat_after(best, &mut check);
            // How often this check is cut short is what decides whether the defence can act
            // (docs/journal/gomoku.md, "Against Rapfi directly"); `gomoku_threats --trace` shows it.
            tracing::debug!(
                target: "kibitz::gomoku::defence",
                started_ms = (check_start - start).as_secs_f64() * 1e3,
                left_ms = left.map(|left| left.as_secs_f64() * 1e3),
                verdict = verdict.name(),
                vcf_nodes = check.vcf.nodes(),
                vct_nodes = check.vct.nodes(),
                took_ms = check_start.elapsed().as_secs_f64() * 1e3,
                "defence check of the chosen move"
            );
            let keys = match verdict {
                Threat::Found(keys) => Some((keys, false)),
                Threat::Unknown => Some((Vec::new(), true)),
                Threat::None => None,
            };
            if let Some((keys, best_unknown)) = keys
                && let Some(mv) = self.defend(
                    best,
                    best_unknown,
                    &keys,
                    &report,
                    &mut check,
                    deadline,
                    &within_cap,
                    root,
                )
            {
                report.best_move = Some(mv);
                report.pv = vec![mv];
            }
        }
        report.nodes += check.vcf.nodes() + check.vct.nodes() + vct_nodes;
        report.elapsed = start.elapsed();
        // Where the turn went (`kibitz pbrain` logs it at RUST_LOG=kibitz::gomoku::time=debug,
        // beside the main search's iterations): what the time split is judged by.
        let ms = |at: Instant| (at - start).as_secs_f64() * 1e3;
        tracing::debug!(
            target: "kibitz::gomoku::time",
            budget_ms = deadline.map(|d| (d.saturating_duration_since(start)).as_secs_f64() * 1e3),
            threats_ms = ms(threats_end),
            main_end_ms = ms(main_end),
            total_ms = report.elapsed.as_secs_f64() * 1e3,
            "turn timing"
        );
        report
    }

    /// Re-searches a decisive result of the selective search exactly (every candidate move, to
    /// the claimed length, with what is left of the time), and returns the exact report when it
    /// proves the same outcome. Short forced lines, the ones worth reporting, confirm in
    /// microseconds; long ones usually run out of time and stay unproven.
    fn confirm(
        &self,
        claim: Proof,
        limits: &SearchLimits,
        options: SearchOptions,
        table: &TranspositionTable,
    ) -> Option<SearchReport> {
        let mut exact_limits = limits.clone();
        exact_limits.max_depth = Some(claim.plies_to_end);
        // The main search has a move: the check may stop in its first iteration. Its depth 1
        // over every legal move of a 25x25 board of exactly six ran 33 ms past the turn.
        let options = SearchOptions {
            deadline_from_depth_one: true,
            ..options
        };
        let exact = exact_search(self, &exact_limits, options, table);
        exact
            .proof
            .is_some_and(|p| p.outcome == claim.outcome)
            .then_some(exact)
    }
}

/// The report of a win proven at the root: a five now (`by` `None`) or a threat search's line
/// (`by` its kind, carried to the answer so that it can say how the win was proven).
fn proven_win(
    mv: Move,
    pv: Vec<Move>,
    plies: u32,
    nodes: u64,
    start: Instant,
    by: Option<ThreatProof>,
) -> SearchReport {
    let score = WIN - plies as Score;
    SearchReport {
        best_move: Some(mv),
        score,
        proof: Some(Proof {
            outcome: Outcome::Win,
            plies_to_end: plies,
        }),
        depth: plies,
        nodes,
        table: TableStats::default(),
        elapsed: start.elapsed().max(Duration::from_nanos(1)),
        stop_reason: StopReason::Proven,
        pv,
        root_moves: Vec::new(),
        lines: Vec::new(),
        iterations: Vec::new(),
        threat_proof: by,
    }
}
