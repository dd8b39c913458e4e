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
//!
//! Outside renju the solver walks `LineStones` (line_stones.rs), the stones alone, instead of
//! making moves on the full board: a VCF asks only where fours and fives are, and those change
//! only on the lines through the last two stones, so each node re-reads the levels of those few
//! cells (the parent's fours, kept or re-ranked, plus the new ones along the attacker's stone).
//! It visits the same nodes in the same order as the board walk, which renju keeps (its
//! forbidden points need the whole board), and a property test holds the two to the same
//! answers.

use std::time::Instant;

use super::Gomoku;
use super::board::zobrist;
use super::line_stones::LineStones;
use super::patterns::{FIVE, FOUR, OPEN_FOUR};
use crate::engine::{CancelFlag, Game, Move};

/// Most fours one VCF line may contain.
pub const MAX_FOURS: u32 = 40;

/// Slots of the failure table (a power of two).
const TABLE_SLOTS: usize = 1 << 16;

/// Nodes between two reads of the clock: a read costs tens of nanoseconds, a node from under a
/// microsecond (a VCF on 15x15, five in a row) to most of a millisecond (a VCT node of exactly
/// six, whose patterns are computed, tries its defences): 256 let a defence check that started
/// at its deadline run 23 ms past it, 16 still 13 ms. Only the root's and the defence check's
/// searches have a deadline to read; the horizon's VCF has none.
const CHECK_INTERVAL: u64 = 4;

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
    /// The stones the line walk plays on (made at the first solve, reloaded at each).
    view: Option<LineStones>,
    /// Per cell: the generation of the node whose four list last took it (a dedup mark).
    stamp: Vec<u32>,
    generation: u32,
}

/// The order key of a cell where the attacker makes a four, from its four levels (`None` if
/// it makes none): the sum of the levels, plus 100 for an open four or two fours at once.
#[inline]
fn four_rank(levels: [u8; 4]) -> Option<i32> {
    let fours = levels.iter().filter(|&&l| l >= FOUR).count();
    if fours == 0 {
        return None;
    }
    let open = levels.contains(&OPEN_FOUR);
    let sum: i32 = levels.iter().map(|&l| i32::from(l)).sum();
    Some(sum + if open || fours > 1 { 100 } else { 0 })
}

/// Pushes every cell where the side to move makes a four on `pos`'s board, with its
/// [`four_rank`], unsorted; renju's black skips its forbidden points, even to make a four.
fn board_fours(pos: &Gomoku, fours: &mut Vec<(i32, u16)>) {
    let me = pos.to_move;
    let (a, board) = (me.index(), &pos.board);
    if board.level_count[a][FOUR as usize] + board.level_count[a][OPEN_FOUR as usize] == 0 {
        return;
    }
    for cell in board.threat_cells(a, FOUR).iter() {
        if board.near[cell] > 0
            && let Some(rank) = four_rank(board.levels(cell, a))
            && pos.allowed(cell, me)
        {
            fours.push((rank, cell as u16));
        }
    }
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
            view: None,
            stamp: vec![0; cells],
            generation: 0,
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
        if pos.rules().renju {
            return self.attack(pos, depth, 0, limits);
        }
        let mut view = match self.view.take() {
            Some(mut view) => {
                view.load(&pos.board);
                view
            }
            None => LineStones::new(&pos.board),
        };
        if self.stamp.len() < pos.board.cells.len() {
            self.stamp.resize(pos.board.cells.len(), 0);
        }
        let won = self.attack_lines(pos, &mut view, depth, 0, limits, None, &[], pos.hash());
        self.view = Some(view);
        won
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

    /// Whether the failure table holds `hash` as failing within `depth` fours or more. A slot
    /// keeps the hash's high bits and the depth in its low byte.
    #[inline]
    fn known_to_fail(&self, hash: u64, depth: u32) -> bool {
        let stored = self.failed[(hash as usize >> 8) & (TABLE_SLOTS - 1)];
        stored & !0xFF == hash & !0xFF && (stored & 0xFF) as u32 >= depth
    }

    /// Records that `hash` fails within `depth` fours (always replacing the slot).
    #[inline]
    fn remember_failure(&mut self, hash: u64, depth: u32) {
        self.failed[(hash as usize >> 8) & (TABLE_SLOTS - 1)] =
            hash & !0xFF | u64::from(depth.min(0xFF));
    }

    /// Whether the side to move wins by continuous fours within `depth` fours, made and
    /// unmade on the full board (renju's walk, and the reference the stones walk is tested
    /// against). On success the line is in `self.line`, reversed.
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
        if self.known_to_fail(pos.hash(), depth) {
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
        } else {
            board_fours(pos, &mut fours);
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
            self.remember_failure(pos.hash(), depth);
        }
        won
    }

    /// [`VcfSolver::attack`] on the stones alone (every rule set but renju), `pos` being the
    /// root position, untouched. Below the root `last` holds the attacker's four and its block
    /// that led here, `parent` every four the attacker had at the node before, and `hash` the
    /// position's hash as the board would have it.
    ///
    /// What the board walk reads from the whole board, this reads from the last two stones,
    /// by three invariants of a VCF line below the root: the attacker has no five to make (its
    /// four had one completion, now blocked); the defender's fives are the ones its block made
    /// (any before were blocked by the attacker's four, or there would be no move); and the
    /// attacker's fours are the parent's, less those the two stones took or spoiled, plus those
    /// the attacker's stone made on its lines (a defender stone never makes one).
    #[allow(clippy::too_many_arguments)]
    fn attack_lines(
        &mut self,
        pos: &Gomoku,
        view: &mut LineStones,
        depth: u32,
        ply: usize,
        limits: &VcfLimits,
        last: Option<(usize, usize)>,
        parent: &[(i32, u16)],
        hash: u64,
    ) -> bool {
        if !self.check_limits(limits) {
            return false;
        }
        let me = pos.to_move;
        let (a, d) = (me.index(), me.other().index());
        if last.is_none()
            && let Some(cell) = pos.first_five_cell(me)
        {
            self.line.push(Move(cell as u16));
            return true;
        }
        if depth == 0 {
            return false;
        }
        if self.known_to_fail(hash, depth) {
            return false;
        }
        // Every four of the attacker here (the children need them all), ranked.
        let mut fours = std::mem::take(&mut self.buffers[ply]);
        fours.clear();
        let mut counter = [0usize; 2];
        let counter_fives = match last {
            None => {
                board_fours(pos, &mut fours);
                if pos.board.level_count[d][FIVE as usize] > 0 {
                    pos.five_cells(me.other(), &mut counter)
                } else {
                    0
                }
            }
            Some((attack, block)) => {
                self.generation = self.generation.wrapping_add(1);
                if self.generation == 0 {
                    self.stamp.fill(0);
                    self.generation = 1;
                }
                let generation = self.generation;
                for &(rank, cell) in parent {
                    let c = cell as usize;
                    if c == attack || c == block {
                        continue;
                    }
                    self.stamp[c] = generation;
                    if !view.related(c, attack) && !view.related(c, block) {
                        // Neither stone is on its lines: its levels did not move.
                        fours.push((rank, cell));
                    } else if let Some(rank) = four_rank(view.levels(c, a)) {
                        fours.push((rank, cell));
                    }
                }
                let k = view.geo().rules.win_length;
                let stamp = &mut self.stamp;
                view.for_each_near(attack, a, k - 2, |c, dir| {
                    if stamp[c] != generation && view.level(c, dir, a) >= FOUR {
                        stamp[c] = generation;
                        if let Some(rank) = four_rank(view.levels(c, a)) {
                            fours.push((rank, c as u16));
                        }
                    }
                });
                view.fives_through(block, d, &mut counter)
            }
        };
        fours.sort_unstable_by(|x, y| y.cmp(x));
        // Against a five to block only the block may be played, and only if it is a four.
        let forced;
        let tries: &[(i32, u16)] = if counter_fives == 0 {
            &fours
        } else if counter_fives == 1 && fours.iter().any(|&(_, c)| c as usize == counter[0]) {
            forced = [(0, counter[0] as u16)];
            &forced
        } else {
            &[]
        };
        let cells = pos.board.cells.len() as u32;
        let mut won = false;
        for &(_, cell) in tries {
            let cell = cell as usize;
            view.put(cell, a);
            let mut blocks = [0usize; 2];
            let n = view.fives_through(cell, a, &mut blocks);
            if n >= 2 {
                // Two fives to block: the defender blocks one, we complete the other.
                self.line.push(Move(blocks[1] as u16));
                self.line.push(Move(blocks[0] as u16));
                self.line.push(Move(cell as u16));
                won = true;
            } else if n == 1 {
                let block = blocks[0];
                view.put(block, d);
                // A full board after the block is a draw, not a node.
                let child = view.stones < cells
                    && self.attack_lines(
                        pos,
                        view,
                        depth - 1,
                        ply + 1,
                        limits,
                        Some((cell, block)),
                        &fours,
                        hash ^ zobrist(a, cell) ^ zobrist(d, block),
                    );
                view.take(block, d);
                if child {
                    self.line.push(Move(block as u16));
                    self.line.push(Move(cell as u16));
                    won = true;
                }
            }
            view.take(cell, a);
            if won || self.stopped {
                break;
            }
        }
        self.buffers[ply] = fours;
        if !won && !self.stopped {
            self.remember_failure(hash, depth);
        }
        won
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    /// A crowded position: `stones` stones dropped in the middle `span` x `span` square by a
    /// seeded generator, sides alternating, skipping any that would make five (so the game is
    /// on and fours abound).
    fn crowded(
        rows: usize,
        cols: usize,
        rules: GomokuRules,
        span: usize,
        stones: usize,
        seed: u64,
    ) -> Gomoku {
        let mut pos = Gomoku::new(rows, cols, rules).unwrap();
        let mut state = seed;
        let (r0, c0) = ((rows - span) / 2, (cols - span) / 2);
        let mut placed = 0;
        for _ in 0..stones * 4 {
            if placed == stones {
                break;
            }
            state = crate::games::gomoku::board::splitmix(state);
            let cell = (r0 + (state % span as u64) as usize) * cols
                + c0
                + ((state >> 32) % span as u64) as usize;
            let side = pos.side_to_move().index();
            if pos.board.cells[cell] != 0 || pos.board.makes_five(cell, side) {
                continue;
            }
            pos.make(Move(cell as u16));
            placed += 1;
        }
        pos
    }

    #[test]
    fn the_stones_walk_finds_what_the_board_walk_finds_node_for_node() {
        // Both walks must visit the same nodes in the same order: same verdict, same line, same
        // node count, with and without a node limit cutting them short.
        let geometries = [
            (15, 15, GomokuRules::default()),
            (
                15,
                15,
                GomokuRules::new(5, crate::games::gomoku::Overline::NoWin).unwrap(),
            ),
            (
                9,
                11,
                GomokuRules::new(4, crate::games::gomoku::Overline::Win).unwrap(),
            ),
            (
                19,
                19,
                GomokuRules::new(6, crate::games::gomoku::Overline::NoWin).unwrap(),
            ),
            (
                20,
                20,
                GomokuRules::new(8, crate::games::gomoku::Overline::Win).unwrap(),
            ),
        ];
        let mut wins = 0;
        let mut cut = 0;
        for (g, &(rows, cols, rules)) in geometries.iter().enumerate() {
            let span = (rules.win_length as usize + 4).min(rows);
            for seed in 0..150u64 {
                let stones = 8 + (seed as usize * 7) % (span * span / 2);
                let pos = crowded(rows, cols, rules, span, stones, seed * 31 + g as u64);
                for (max_nodes, max_depth) in [(u64::MAX, MAX_FOURS), (3, 12), (u64::MAX, 2)] {
                    let limits = VcfLimits {
                        max_nodes,
                        max_depth,
                        ..VcfLimits::default()
                    };
                    let mut board_walk = VcfSolver::new(pos.board.cells.len());
                    board_walk.node_limit = max_nodes;
                    let mut p = pos.clone();
                    let by_board = board_walk.attack(&mut p, max_depth, 0, &limits);
                    let mut stones_walk = VcfSolver::new(pos.board.cells.len());
                    let mut q = pos.clone();
                    let by_stones = stones_walk.solve(&mut q, &limits);
                    let what =
                        format!("{rows}x{cols} {rules:?} seed {seed} limit {max_nodes}\n{pos:?}");
                    assert_eq!(by_board, by_stones, "{what}");
                    assert_eq!(board_walk.line, stones_walk.line, "{what}");
                    assert_eq!(board_walk.nodes, stones_walk.nodes, "{what}");
                    assert_eq!(board_walk.stopped, stones_walk.stopped, "{what}");
                    wins += usize::from(by_board);
                    cut += usize::from(board_walk.stopped);
                }
            }
        }
        // The positions must exercise both answers and the limit, or the test proves little.
        assert!(wins > 100, "only {wins} wins");
        assert!(cut > 20, "only {cut} searches cut short");
    }

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
