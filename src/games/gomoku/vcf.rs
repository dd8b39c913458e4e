//! Victory by continuous fours (VCF): a forced win made only of fours, each of which leaves the
//! defender exactly one reply (the block), until a four cannot be blocked (an open four, a double
//! four) or the defender's block leaves a five.
//!
//! Because every defender move is forced, the tree is narrow and deep: the attacker tries each
//! four in order of promise, the defender's reply is computed, not searched. A defender block
//! that makes a four of its own forces the attacker to block it in turn, which continues the VCF
//! only when that block is itself a four. Positions proven to fail (at a given depth) are
//! remembered in a small direct-mapped table private to one solve, so transpositions of the
//! same fours (very common) are searched once.

use std::time::Instant;

use super::Gomoku;
use super::patterns::{FIVE, FOUR, OPEN_FOUR};
use crate::engine::{CancelFlag, Game, Move};

/// Most fours one VCF line may contain.
pub const MAX_FOURS: u32 = 40;

/// Slots of the failure table (a power of two).
const TABLE_SLOTS: usize = 1 << 16;

/// Nodes between two reads of the clock.
const CHECK_INTERVAL: u64 = 256;

/// Whether a threat search (VCF or VCT) that has visited `nodes` must stop: at its node limit,
/// or, polled every [`CHECK_INTERVAL`] nodes, at the deadline or on cancellation.
pub(super) fn must_stop(
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    cancel: Option<&CancelFlag>,
) -> bool {
    nodes >= node_limit
        || (nodes.is_multiple_of(CHECK_INTERVAL)
            && (deadline.is_some_and(|d| Instant::now() >= d)
                || cancel.is_some_and(CancelFlag::is_cancelled)))
}

/// What may stop a VCF search before it finishes.
#[derive(Clone, Debug)]
pub struct VcfLimits {
    pub deadline: Option<Instant>,
    pub max_nodes: u64,
    pub cancel: Option<CancelFlag>,
    /// Most attacker fours in the line.
    pub max_depth: u32,
}

impl Default for VcfLimits {
    fn default() -> Self {
        VcfLimits {
            deadline: None,
            max_nodes: u64::MAX,
            cancel: None,
            max_depth: MAX_FOURS,
        }
    }
}

/// One VCF search over a private copy of the position.
pub struct Vcf {
    pos: Gomoku,
    solver: VcfSolver,
}

impl Vcf {
    pub fn new(pos: Gomoku) -> Self {
        let solver = VcfSolver::new(pos.board.cells.len());
        Vcf { pos, solver }
    }

    /// Points the solver at another position, keeping its failure table (entries are keyed by
    /// the full hash, so they stay valid).
    pub fn set_position(&mut self, pos: &Gomoku) {
        self.pos = pos.clone();
        self.solver.stopped = false;
    }

    /// Whether the last solve was cut short by a limit.
    pub fn stopped(&self) -> bool {
        self.solver.stopped
    }

    pub fn nodes(&self) -> u64 {
        self.solver.nodes
    }

    /// Searches a VCF for the side to move. Returns the winning line (ending with the five) or
    /// `None` when there is none within the limits (or a limit stopped the search).
    pub fn solve(&mut self, limits: &VcfLimits) -> Option<Vec<Move>> {
        self.solver
            .solve(&mut self.pos, limits)
            .then(|| self.solver.line())
    }
}

/// The memory of VCF searches (failure table, buffers, counters), run on a position the caller
/// owns, in place: the main search ([`super::search`]) asks it at its horizon without copying
/// the board. The position is left as it was.
pub struct VcfSolver {
    nodes: u64,
    /// Node count at which the current solve stops (limits are per solve).
    node_limit: u64,
    stopped: bool,
    /// Failed positions: `hash` with the low byte replaced by the depth it failed at.
    failed: Vec<u64>,
    /// Per-depth buffers of four moves (no allocation per node).
    buffers: Vec<Vec<(i32, u16)>>,
    /// The winning line found, attacker and defender moves alternating, last move first.
    line: Vec<Move>,
}

impl VcfSolver {
    /// A solver for boards of `cells` cells.
    pub fn new(cells: usize) -> Self {
        VcfSolver {
            nodes: 0,
            node_limit: u64::MAX,
            stopped: false,
            failed: vec![0; TABLE_SLOTS],
            buffers: (0..=MAX_FOURS as usize + 1)
                .map(|_| Vec::with_capacity(cells))
                .collect(),
            line: Vec::with_capacity(2 * MAX_FOURS as usize + 2),
        }
    }

    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Whether the side to move in `pos` wins by continuous fours within the limits; the line
    /// is then [`VcfSolver::line`].
    pub fn solve(&mut self, pos: &mut Gomoku, limits: &VcfLimits) -> bool {
        self.line.clear();
        self.stopped = false;
        self.node_limit = self.nodes.saturating_add(limits.max_nodes);
        let depth = limits.max_depth.min(MAX_FOURS);
        self.attack(pos, depth, 0, limits)
    }

    /// The last winning line found, in playing order (ending with the five).
    pub fn line(&self) -> Vec<Move> {
        self.line.iter().rev().copied().collect()
    }

    /// Plies of the last winning line found (attacker's and defender's moves).
    pub fn line_len(&self) -> usize {
        self.line.len()
    }

    fn check_limits(&mut self, limits: &VcfLimits) -> bool {
        self.nodes += 1;
        self.stopped |= must_stop(
            self.nodes,
            self.node_limit,
            limits.deadline,
            limits.cancel.as_ref(),
        );
        !self.stopped
    }

    /// Whether the side to move wins by continuous fours within `depth` fours. On success the
    /// line is in `self.line`, reversed.
    fn attack(&mut self, pos: &mut Gomoku, depth: u32, ply: usize, limits: &VcfLimits) -> bool {
        if !self.check_limits(limits) {
            return false;
        }
        let me = pos.to_move;
        let (a, d) = (me.index(), me.other().index());
        let board = &pos.board;
        if let Some(cell) = pos.first_five_cell(me) {
            self.line.push(Move(cell as u16));
            return true;
        }
        if depth == 0 {
            return false;
        }
        let key = pos.hash() & !0xFF;
        let slot = (pos.hash() as usize >> 8) & (TABLE_SLOTS - 1);
        let stored = self.failed[slot];
        if stored & !0xFF == key && (stored & 0xFF) as u32 >= depth {
            return false;
        }
        // Gather the fours (forced to the single block when the defender has a five threat).
        let mut fours = std::mem::take(&mut self.buffers[ply]);
        fours.clear();
        // Under renju black's overline points count as fives in the patterns but win nothing,
        // so the defender's fives are counted exactly.
        let mut counter = [0usize; 2];
        let counter_fives = if board.level_count[d][FIVE as usize] > 0 {
            pos.five_cells(me.other(), &mut counter)
        } else {
            0
        };
        if counter_fives > 0 {
            if counter_fives == 1
                && board.best_level(counter[0], a) >= FOUR
                && pos.allowed(counter[0], me)
            {
                fours.push((0, counter[0] as u16));
            }
        } else if board.level_count[a][FOUR as usize] + board.level_count[a][OPEN_FOUR as usize] > 0
        {
            for cell in board.threat_cells(a, FOUR).iter() {
                if board.near[cell] == 0 {
                    continue;
                }
                let mut fours_here = 0;
                let mut open = false;
                let mut rank = 0;
                for dir in 0..4 {
                    let level = board.level(cell, a, dir);
                    fours_here += i32::from(level >= FOUR);
                    open |= level == OPEN_FOUR;
                    rank += level as i32;
                }
                // Renju: black never plays a forbidden point, not even to make a four.
                if fours_here > 0 && pos.allowed(cell, me) {
                    let rank = rank + if open || fours_here > 1 { 100 } else { 0 };
                    fours.push((rank, cell as u16));
                }
            }
            fours.sort_unstable_by(|x, y| y.cmp(x));
        }
        let mut won = false;
        for &(_, cell) in &fours {
            let attack_move = Move(cell);
            pos.make(attack_move);
            let mut blocks = [0usize; 2];
            let n = pos.five_cells(me, &mut blocks);
            // The defender may now have a five of its own only if it had a four we ignored,
            // which the forced-block rule above excludes.
            let defender_wins = pos.first_five_cell(me.other()).is_some();
            if !defender_wins && n >= 2 {
                // Two fives to block: the defender blocks one, we complete the other.
                let other = if blocks[0] == blocks[1] {
                    blocks[0]
                } else {
                    blocks[1]
                };
                self.line.push(Move(other as u16));
                self.line.push(Move(blocks[0] as u16));
                self.line.push(attack_move);
                won = true;
            } else if !defender_wins && n == 1 && !pos.allowed(blocks[0], me.other()) {
                // Renju: black's only block is forbidden, so the four cannot be stopped; black
                // plays anything else and the five follows.
                if let Some(other) = pos.any_allowed_move(blocks[0]) {
                    self.line.push(Move(blocks[0] as u16));
                    self.line.push(other);
                    self.line.push(attack_move);
                    won = true;
                }
            } else if !defender_wins && n == 1 {
                let block = Move(blocks[0] as u16);
                pos.make(block);
                let child = if pos.status() == crate::engine::Status::Ongoing {
                    self.attack(pos, depth - 1, ply + 1, limits)
                } else {
                    false
                };
                pos.unmake(block);
                if child {
                    self.line.push(block);
                    self.line.push(attack_move);
                    won = true;
                }
            }
            pos.unmake(attack_move);
            if won || self.stopped {
                break;
            }
        }
        self.buffers[ply] = fours;
        if !won && !self.stopped {
            self.failed[slot] = key | u64::from(depth.min(0xFF));
        }
        won
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    #[test]
    fn an_open_three_plus_a_four_is_a_vcf() {
        let rows = [
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            ".....XXX.......",
            "...............",
            "........X......",
            "........X......",
            "........X......",
            "...............",
            "...............",
            "...O.O.O.O.O...",
            "...........O...",
            "...............",
        ];
        let grid = Grid::parse(&rows, 25).unwrap();
        let pos = Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap();
        let line = Vcf::new(pos).solve(&VcfLimits::default()).unwrap();
        assert_eq!(line.len() % 2, 1);
    }
}
