//! The defence check of a chosen move: after it, does the opponent have a five, a VCF or a VCT
//! (within caps)? If so, find a move that leaves none, trying first the cells of the
//! opponent's winning lines.
//!
//! The key idea: the main search is selective and may miss a long threat sequence; this check
//! runs the exact threat solvers on the one move about to be played, so no move is answered
//! that loses to continuous fours the solvers can see.

use super::*;
use crate::engine::RootFilter;

/// What the defence check found about the opponent's threats after one of our moves.
pub(super) enum Threat {
    /// A forced win: the cells its line plays (candidates for our defence).
    Found(Vec<Move>),
    /// No five, VCF or short VCT.
    None,
    /// A limit stopped the search before it could tell.
    Unknown,
}

/// The solvers and limits of the defence check (step 4 of [`Gomoku::think`]).
pub(super) struct ThreatCheck {
    pub(super) vcf: vcf::Vcf,
    pub(super) vct: vct::Vct,
    pub(super) vcf_limits: vcf::VcfLimits,
    pub(super) vct_limits: vct::VctLimits,
}

/// The VCT node cap of the defence's first pass over the alternatives (see
/// [`Gomoku::defend`]).
const QUICK_VCT_NODES: u64 = 6_000;

/// Threats (attacker moves) the opponent's VCT may use, in the defence check: the opponent's
/// wins that decided lost games ran 8 to 14 threats deep, so the check gets the full depth
/// (with the related-threat rule of [`vct`] a failing check rarely needs its node cap).
const DEFENCE_VCT_DEPTH: u32 = vct::MAX_THREATS;

impl Threat {
    /// The verdict in one word, for traces.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Threat::Found(_) => "found",
            Threat::None => "none",
            Threat::Unknown => "unknown",
        }
    }
}

impl Gomoku {
    /// After our `mv`: the opponent's five, VCF or short VCT, if it has one.
    pub(super) fn opponent_threat_after(&self, mv: Move, check: &mut ThreatCheck) -> Threat {
        let mut after = self.clone();
        after.make(mv);
        if after.status() != Status::Ongoing {
            return Threat::None;
        }
        if let Some(win) = after.immediate_win() {
            return Threat::Found(vec![win]);
        }
        // If we threaten five, the opponent must block first: both searches handle that.
        check.vcf.set_position(&after);
        if let Some(line) = check.vcf.solve(&check.vcf_limits) {
            return Threat::Found(line.into_iter().step_by(2).collect());
        }
        if check.vcf.stopped() {
            return Threat::Unknown;
        }
        check.vct.set_position(&after);
        match check.vct.solve(DEFENCE_VCT_DEPTH, &check.vct_limits) {
            Some((first, _)) => Threat::Found(vec![first]),
            None if check.vct.stopped() => Threat::Unknown,
            None => Threat::None,
        }
    }

    /// Step 4 of `think`: a replacement for `best`, whose check found an opponent's win by
    /// threats (`keys`, the cells its line plays) or, when `best_unknown`, was cut short.
    ///
    /// A move shown safe is what the defence is for, so the candidates are checked in two
    /// passes: first with a small VCT node cap ([`QUICK_VCT_NODES`]), which settles most moves
    /// (a losing move's threat win, or a safe move's failure, is usually found in a few
    /// thousand nodes), then the moves that pass left open with the full cap. Without the
    /// first pass one move whose opponent has many threats could eat the whole cap and the
    /// time, and the safe move behind it was never reached. A move whose check was cut short
    /// both times is played only when `best` is shown to lose (a move not shown to lose beats
    /// one that is), never in place of a `best` that was itself only unsure.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn defend(
        &self,
        best: Move,
        best_unknown: bool,
        keys: &[Move],
        report: &SearchReport,
        check: &mut ThreatCheck,
        deadline: Option<Instant>,
        within_cap: &dyn Fn(&ThreatCheck) -> bool,
        root: Option<&RootFilter>,
    ) -> Option<Move> {
        // Order: the opponent's key cells, then the moves the main search preferred at
        // its earlier depths (deepest first), then the rest by threat order.
        let mut moves = Vec::new();
        self.search_moves(&mut moves);
        let preferred: Vec<Move> = report
            .iterations
            .iter()
            .rev()
            .map(|it| it.best_move)
            .collect();
        let rank = |m: &Move| {
            if keys.contains(m) {
                0
            } else {
                preferred
                    .iter()
                    .position(|p| p == m)
                    .map_or(usize::MAX, |i| i + 1)
            }
        };
        moves.sort_by_key(|&m| std::cmp::Reverse(self.move_order_hint(m)));
        moves.sort_by_key(rank);
        // Only the moves the root may play (searchmoves, exclude) are alternatives.
        moves.retain(|&m| m != best && RootFilter::admits(root, m));
        let full_cap = check.vct_limits.max_nodes;
        let caps = [QUICK_VCT_NODES.min(full_cap), full_cap];
        // Moves whose last check was cut short, in order.
        let mut unsure: Vec<Move> = Vec::new();
        let mut safe = None;
        'passes: for (pass, &cap) in caps.iter().enumerate() {
            if pass > 0 && cap == caps[0] {
                break;
            }
            check.vct_limits.max_nodes = cap;
            let mut open = Vec::new();
            for &mv in &moves {
                if deadline.is_some_and(|d| Instant::now() >= d) || !within_cap(check) {
                    break 'passes;
                }
                match self.opponent_threat_after(mv, check) {
                    Threat::None => {
                        safe = Some(mv);
                        break 'passes;
                    }
                    Threat::Unknown => {
                        open.push(mv);
                        if !unsure.contains(&mv) {
                            unsure.push(mv);
                        }
                    }
                    Threat::Found(_) => unsure.retain(|&u| u != mv),
                }
            }
            moves = open;
        }
        check.vct_limits.max_nodes = full_cap;
        safe.or_else(|| unsure.first().copied().filter(|_| !best_unknown))
    }
}
