//! The exact Connect-4 solver: negamax on bitboards with null-window score bisection, after
//! Pascal Pons' solver, with bounded table entries, enhanced transposition cutoffs, mirrored
//! positions and early double-threat detection on top.
//!
//! Scores here are in Pons' units, from the side to move: `(cells + 1 - plies_played) / 2` for a
//! win on the very next move, one less for every two plies later; losses are the negatives; a
//! draw is 0. Every score maps to an exact distance to the end
//! ([`distance_to_end`](super::score::distance_to_end)), so the engine's `WIN - plies`
//! convention is recovered without loss.
//!
//! Key ideas:
//! - The root value is found by bisection with null windows `(med, med + 1)`, each probe only
//!   answering "above or below `med`", which prunes far more than one wide window. The window
//!   is first clamped by the moves left: nobody can win sooner than their next stone or later
//!   than the board fills.
//! - Only non-losing moves are generated (the single block when the opponent threatens, never
//!   the cell under an opponent's winning cell), and a position where the side to move can win
//!   at once is never searched (the parent scores it), so the tree is mostly quiet positions.
//! - A move leaving two playable threats (or one with another right above it) wins in three
//!   plies, the fastest win left: the node returns at once, without searching it.
//! - Moves are ordered by the table's best move, then threats created, then whether they
//!   leave our own threats standing (not played right under one), then centre first. The
//!   table's move is searched before the other moves' threats are even computed: it usually
//!   cuts off again, and their threats are most of a node's work.
//! - One transposition table (the engine's, shared by all requests) carries results across the
//!   null-window probes. Each solver entry holds both a lower and an upper bound (Pons keeps only
//!   one), packed in the entry's score field; a probe narrows the window from both sides. The
//!   table is used at one parity of plies only (after BitBully; `TABLE_PARITY`); nodes of the
//!   other parity look up their children instead (enhanced transposition cutoff), cutting off
//!   on a child's upper bound and skipping moves whose child's lower bound shows they cannot
//!   raise alpha. Solver keys are tagged before mixing so they never meet the generic search's
//!   keys ([`solver_key`]). Early in the game a position and its mirror share one entry.
//! - On the standard 7 x 6 board the node loop is compiled with the board's shape as constants
//!   ([`super::position::Shape`]), and on CPUs with AVX2 a second time with a move's threats
//!   in the four directions computed side by side in one vector register.
//!
//! - With an opening book attached, a node of a disc count the book covers (12, or at most 8)
//!   takes its exact value from the book ([`super::book`]): a search from fewer discs then ends
//!   at the book's 12-disc layer, or at once.
//!
//! The node loop allocates nothing and walks by copy-make of a 20-byte [`Position`]. Limits
//! (deadline, node count, cancel flag) are polled every [`POLL_INTERVAL`] nodes; once one hits,
//! every frame returns at once without storing anything.

use crate::engine::{Bound, Entry, Move, SearchLimits, StopReason, TableStats, TranspositionTable};

use super::book::OpeningBook;
use super::order::MoveSorter;
use super::position::{ColumnOrder, Geometry, MAX_WIDTH, Position, Shape, Standard};

/// Nodes between two polls of the clock and the cancel flag.
pub const POLL_INTERVAL: u64 = 1024;

/// Up to this many plies, a position and its mirror share one table entry: early positions are
/// the most expensive and symmetric transpositions among them are common.
const MIRROR_PLIES: u32 = 12;

/// The table is read and written only at nodes with this many plies played, modulo 2 (after
/// BitBully): the other half of the nodes look up their children instead (enhanced
/// transposition cutoffs), which sit at the stored parity. Half the stores and about half the
/// probes cost more nodes (+5 to +17 % on Pons' L2_R2 and L1_R2 sets) but much less time: the
/// table is the solver's memory traffic (CPU time per position on L2_R2, 200 positions, 8 MiB
/// table: 4.8-5.7 ms with the table at every node, 3.5-3.8 ms like this; `cargo bench --bench
/// connect4 -- --score-only`, machine under load, interleaved runs).
const TABLE_PARITY: i32 = 0;

/// Nodes with fewer empty cells than this neither use the table nor look up their children:
/// near the very end a subtree is cheaper than the lookups.
const TABLE_MIN_EMPTY: i32 = 4;

/// Bit 63 is never part of a key on boards of at most 63 bits, so tagging it keeps solver and
/// generic-search keys apart.
const SOLVER_TAG: u64 = 1 << 63;

/// A bijective mix of a position key, so table buckets are spread evenly. Multiplying by an odd
/// constant and xor-shifting right are both invertible, so distinct keys stay distinct.
#[inline]
pub fn mix(key: u64) -> u64 {
    let k = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    k ^ (k >> 29)
}

/// The table key of a solver entry. Positions fit in `width * (height + 1)` bits; when that is
/// at most 63 the tag bit makes solver keys disjoint from the generic search's `mix(key)`
/// (mix is a bijection). On the two 64-bit shapes (8 x 7, 4 x 15) the tag still flips a bit
/// before mixing, so a clash needs a 64-bit coincidence.
#[inline]
pub fn solver_key(key: u64) -> u64 {
    mix(key ^ SOLVER_TAG)
}

// Table entry layout: the score field packs lower bound (low byte) and upper bound (next byte),
// each an i8; the depth field holds the empty cells (bigger subtrees are kept longer).
#[inline]
fn pack_bounds(lower: i32, upper: i32) -> i32 {
    (lower as i8 as u8 as i32) | ((upper as i8 as u8 as i32) << 8)
}

#[inline]
fn unpack_bounds(packed: i32) -> (i32, i32) {
    (packed as u8 as i8 as i32, (packed >> 8) as u8 as i8 as i32)
}

/// Marks "no table move" in ordering; never a column.
const NO_COLUMN: u32 = u32::MAX;

/// One solve (one request): the geometry, the shared table, the limits and the counters.
pub struct Solver<'a> {
    g: Geometry,
    /// The centre-first column order of `g`.
    order: ColumnOrder,
    table: &'a TranspositionTable,
    limits: SearchLimits,
    /// Nodes visited: every call of the node function, Pons' count.
    pub nodes: u64,
    next_poll: u64,
    /// Set once a limit is hit; the search then unwinds without storing anything.
    pub stopped: Option<StopReason>,
    pub stats: TableStats,
    /// Exact values at the book's depth, when attached ([`Solver::with_book`]).
    book: Option<&'static OpeningBook>,
    /// Nodes answered by the book.
    pub book_hits: u64,
    /// The instructions the CPU has beyond the baseline: which node function runs
    /// ([`BASELINE`], [`POPCNT`] or [`AVX2`]).
    level: u8,
}

/// Node function levels, by the instructions the CPU has: the baseline x86-64 (or another
/// architecture) ...
const BASELINE: u8 = 0;
/// ... `popcnt` (nearly every x86-64 CPU since 2008) ...
const POPCNT: u8 = 1;
/// ... and AVX2 with `popcnt` (since 2013-2015), where a move's threats take one vector
/// computation ([`Geometry::winning_cells_avx2`]).
const AVX2: u8 = 2;

/// The best node function level this CPU runs.
fn cpu_level() -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return AVX2;
        }
        if std::arch::is_x86_feature_detected!("popcnt") {
            return POPCNT;
        }
    }
    BASELINE
}

impl<'a> Solver<'a> {
    pub fn new(g: Geometry, table: &'a TranspositionTable, limits: SearchLimits) -> Self {
        Solver {
            g,
            order: ColumnOrder::of(&g),
            table,
            limits,
            nodes: 0,
            next_poll: POLL_INTERVAL,
            stopped: None,
            stats: TableStats::default(),
            book: None,
            book_hits: 0,
            level: cpu_level(),
        }
    }

    /// Answers every node the book covers from `book` instead of searching it (a book only
    /// answers the board shape it was made for; other shapes are searched as before).
    pub fn with_book(mut self, book: &'static OpeningBook) -> Self {
        self.book = Some(book);
        self
    }

    /// Lets the solver visit at most `extra` more nodes (besides its other limits).
    pub fn allow_more_nodes(&mut self, extra: u64) {
        let cap = self.nodes.saturating_add(extra);
        self.limits.max_nodes = Some(self.limits.max_nodes.map_or(cap, |m| m.min(cap)));
    }

    /// Checks the limits; true once one has been hit.
    #[cold]
    fn poll(&mut self) -> bool {
        self.next_poll = self.nodes + POLL_INTERVAL;
        if let Some(reason) = self.limits.reached(self.nodes) {
            self.stopped = Some(reason);
        }
        self.stopped.is_some()
    }

    /// The exact value of `pos` (Pons' units), or `None` when a limit stopped the search.
    /// `pos` must be an unfinished game.
    pub fn solve(&mut self, pos: &Position) -> Option<i32> {
        let cells = self.g.cells() as i32;
        let moves = pos.moves as i32;
        if pos.winning_moves(&self.g) != 0 {
            return Some((cells + 1 - moves) / 2);
        }
        let mut min = -(cells - moves) / 2;
        let mut max = (cells + 1 - moves) / 2;
        while min < max {
            // Bisect, but probe near 0 first: most positions are close to a draw, and a probe
            // at `med` costs more the farther the true value lies beyond it.
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.search(pos, med, med + 1);
            if self.stopped.is_some() {
                return None;
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        Some(min)
    }

    /// A column reaching `value`, the exact value of `pos`: a fastest win, a longest loss, or a
    /// drawing move. Ties go to the best-ordered column. `None` when a limit stopped it.
    pub fn best_column(&mut self, pos: &Position, value: i32) -> Option<u32> {
        let g = self.g;
        let winning = pos.winning_moves(&g);
        if winning != 0 {
            return self.first_in_order(winning);
        }
        let candidates = pos.non_losing_moves(&g);
        if candidates == 0 {
            // Every move loses on the next ply: all are equally long.
            return self.first_in_order(pos.playable(&g));
        }
        let mut sorter = self.sorted_moves(pos, candidates);
        let mut fallback = None;
        while let Some(slot) = sorter.pop() {
            let cell = candidates & self.order.masks[slot];
            let col = self.order.columns[slot];
            fallback = fallback.or(Some(col));
            let mut child = *pos;
            child.play(cell);
            // The move reaches `value` iff the child is worth at most `-value`.
            let r = self.search(&child, -value, -value + 1);
            if self.stopped.is_some() {
                return None;
            }
            if r <= -value {
                return Some(col);
            }
        }
        // Unreachable when `value` is exact; keep a legal move rather than trust anything else.
        fallback
    }

    /// The exact value (Pons' units) of every legal column, in column order.
    pub fn analyse(&mut self, pos: &Position) -> Option<Vec<(u32, i32)>> {
        self.analyse_columns(pos, |_| true)
    }

    /// The exact value (Pons' units) of every legal column that `allowed` admits, in column
    /// order: a root restricted to some moves is solved as the best of its children.
    pub fn analyse_columns(
        &mut self,
        pos: &Position,
        allowed: impl Fn(u32) -> bool,
    ) -> Option<Vec<(u32, i32)>> {
        let g = self.g;
        let cells = g.cells() as i32;
        let winning = pos.winning_moves(&g);
        let mut scores = Vec::with_capacity(g.width as usize);
        for col in 0..g.width {
            if !pos.can_play(&g, col) || !allowed(col) {
                continue;
            }
            let cell = pos.landing_cell(&g, col);
            let score = if winning & cell != 0 {
                (cells + 1 - pos.moves as i32) / 2
            } else {
                let mut child = *pos;
                child.play(cell);
                -self.solve(&child)?
            };
            scores.push((col, score));
        }
        Some(scores)
    }

    fn first_in_order(&self, cells: u64) -> Option<u32> {
        let width = self.g.width as usize;
        (0..width)
            .find(|&slot| cells & self.order.masks[slot] != 0)
            .map(|slot| self.order.columns[slot])
    }

    /// The moves in `candidates` (one cell per column) by threats created, centre first on
    /// ties.
    fn sorted_moves(&self, pos: &Position, candidates: u64) -> MoveSorter {
        let mut sorter = MoveSorter::new();
        for slot in 0..self.g.width as usize {
            let cell = candidates & self.order.masks[slot];
            if cell != 0 {
                sorter.add(slot, pos.threats_after(&self.g, cell));
            }
        }
        sorter
    }

    /// [`Solver::negamax`] compiled for the board at hand: the standard board's constants, or
    /// this solver's run-time geometry; with the CPU's `popcnt` and AVX2 instructions where it
    /// has them.
    fn search(&mut self, pos: &Position, alpha: i32, beta: i32) -> i32 {
        let threats = pos.opponent_winning_cells(&self.g);
        let own = pos.own_winning_cells(&self.g);
        #[cfg(target_arch = "x86_64")]
        if self.level == AVX2 {
            // SAFETY: the level is AVX2 only when the CPU reports AVX2 and `popcnt`.
            return unsafe {
                if self.g == Geometry::STANDARD {
                    self.negamax_avx2(Standard, pos, own, threats, alpha, beta)
                } else {
                    let g = self.g;
                    self.negamax_avx2(g, pos, own, threats, alpha, beta)
                }
            };
        }
        #[cfg(target_arch = "x86_64")]
        if self.level == POPCNT {
            // SAFETY: the level is POPCNT only when the CPU reports the instruction.
            return unsafe {
                if self.g == Geometry::STANDARD {
                    self.negamax_popcnt(Standard, pos, own, threats, alpha, beta)
                } else {
                    let g = self.g;
                    self.negamax_popcnt(g, pos, own, threats, alpha, beta)
                }
            };
        }
        if self.g == Geometry::STANDARD {
            self.negamax(Standard, pos, own, threats, alpha, beta)
        } else {
            let g = self.g;
            self.negamax(g, pos, own, threats, alpha, beta)
        }
    }

    /// The node function for any x86-64 CPU. Without `popcnt` the compiler counts bits with a
    /// dozen shifts and masks, and the solver counts the threats of every move at every node.
    fn negamax<S: Shape>(
        &mut self,
        shape: S,
        pos: &Position,
        own: u64,
        threats: u64,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        self.node::<S, BASELINE>(shape, pos, own, threats, alpha, beta)
    }

    /// The node function compiled with the `popcnt` instruction (nearly every x86-64 CPU since
    /// 2008, but not the baseline target the release is built for): one instruction instead of
    /// about a dozen for each threat count.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn negamax_popcnt<S: Shape>(
        &mut self,
        shape: S,
        pos: &Position,
        own: u64,
        threats: u64,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        self.node::<S, POPCNT>(shape, pos, own, threats, alpha, beta)
    }

    /// The node function compiled with AVX2 (and `popcnt`): a move's threats in the four
    /// directions are computed side by side in one vector register
    /// ([`Geometry::winning_cells_avx2`]), about a third of the scalar instructions.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt")]
    fn negamax_avx2<S: Shape>(
        &mut self,
        shape: S,
        pos: &Position,
        own: u64,
        threats: u64,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        self.node::<S, AVX2>(shape, pos, own, threats, alpha, beta)
    }

    /// A child's value, by the same node function as this node's.
    #[inline(always)]
    fn child<S: Shape, const LEVEL: u8>(
        &mut self,
        shape: S,
        pos: &Position,
        own: u64,
        threats: u64,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        #[cfg(target_arch = "x86_64")]
        if LEVEL == AVX2 {
            // SAFETY: `node::<_, AVX2>` only runs inside `negamax_avx2`, which `search` enters
            // only when the CPU has AVX2 and `popcnt`.
            return unsafe { self.negamax_avx2(shape, pos, own, threats, alpha, beta) };
        }
        #[cfg(target_arch = "x86_64")]
        if LEVEL == POPCNT {
            // SAFETY: `node::<_, POPCNT>` only runs inside `negamax_popcnt`, which `search`
            // enters only when the CPU has `popcnt`.
            return unsafe { self.negamax_popcnt(shape, pos, own, threats, alpha, beta) };
        }
        self.negamax(shape, pos, own, threats, alpha, beta)
    }

    /// The cells `stones` would win at on a board filled as `mask`, by the node function's
    /// level: [`Geometry::winning_cells`], or its AVX2 form.
    #[inline(always)]
    fn winning_cells<const LEVEL: u8>(g: &Geometry, stones: u64, mask: u64) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if LEVEL == AVX2 {
            // SAFETY: as in `child`: with this level the caller runs inside `negamax_avx2`.
            return unsafe { g.winning_cells_avx2(stones, mask) };
        }
        g.winning_cells(stones, mask)
    }

    /// Negamax alpha-beta, fail-soft, on a position where the side to move cannot win at once
    /// and nobody has won. Returns the exact value when it lies inside `(alpha, beta)`, else a
    /// bound on the same side of the window as the value. `shape` is `self.g`, possibly as
    /// compile-time constants; `own_wins` and `opponent_wins` are `pos.own_winning_cells()`
    /// and `pos.opponent_winning_cells()`, which the parent knows already (the opponent's are
    /// the threats its move left, ours were its opponent's); `LEVEL` says which node function
    /// searches the children (always the one this body is inlined into).
    #[inline(always)]
    fn node<S: Shape, const LEVEL: u8>(
        &mut self,
        shape: S,
        pos: &Position,
        own_wins: u64,
        opponent_wins: u64,
        mut alpha: i32,
        mut beta: i32,
    ) -> i32 {
        // Step 1. Count the node and poll the limits now and then.
        self.nodes += 1;
        if self.nodes >= self.next_poll && self.poll() {
            return 0;
        }
        let g = shape.geometry();
        let cells = g.cells() as i32;
        let moves = pos.moves as i32;

        // Step 2. Forced results: every move loses at once, or the board is all but full (the
        // last two plies cannot make a four: neither side can win next, see the precondition).
        let candidates = pos.non_losing_moves_against(&g, opponent_wins);
        if candidates == 0 {
            return -(cells - moves) / 2;
        }
        if moves >= cells - 2 {
            return 0;
        }
        if let Some(book) = self.book
            && book.covers(pos.moves)
            && let Some(value) = book.value(&g, pos)
        {
            self.book_hits += 1;
            return value;
        }

        // Step 3. Bounds from the moves left: the opponent cannot win on the next ply, and we
        // cannot win on this one.
        let mut lower = -(cells - 2 - moves) / 2;
        let mut upper = (cells - 1 - moves) / 2;

        // Step 4. Transposition table, at one parity of plies (see [`TABLE_PARITY`]): both
        // bounds narrow the window.
        let empty = cells - moves;
        let stored_here = moves % 2 == TABLE_PARITY && empty >= TABLE_MIN_EMPTY;
        let (key, mirrored) = if stored_here {
            table_key(&g, pos)
        } else {
            (0, false)
        };
        let mut table_column = NO_COLUMN;
        if stored_here
            && let Some((stored_lower, stored_upper, column)) = self.probe(&g, key, mirrored)
        {
            lower = lower.max(stored_lower);
            upper = upper.min(stored_upper);
            table_column = column;
        }
        if alpha < lower {
            alpha = lower;
            if alpha >= beta {
                return alpha;
            }
        }
        if beta > upper {
            beta = upper;
            if alpha >= beta {
                return beta;
            }
        }

        // Step 5. Generate the non-losing moves. Where the children are at the stored parity,
        // also look up each child (enhanced transposition cutoff): a child already known to be
        // at most `-beta` cuts off here without a search, and a move whose child is known to be
        // worth at least `-alpha` cannot raise alpha, so it is not searched at all (dropping it
        // keeps the fail-low result, alpha, a true upper bound). The lookups of all children are
        // independent loads, so their cache misses overlap, and the child searched next finds
        // its entry already in cache. With a single move there is nothing to look up: the
        // child reads the same entry itself on entry.
        let etc = !stored_here
            && moves % 2 != TABLE_PARITY
            && empty > TABLE_MIN_EMPTY
            && candidates & (candidates - 1) != 0;
        let order = shape.order(&self.order);
        let mut best_column = NO_COLUMN;
        // The moves not searched yet.
        let mut remaining = candidates;

        // Step 5a. The table's move first, before the other moves' threats are computed: it
        // usually cuts off again, and then their threats (most of a node's work) are not needed.
        if table_column != NO_COLUMN {
            debug_assert!(stored_here, "only stored nodes read a move from the table");
            let cell = candidates & g.column_mask(table_column);
            if cell != 0 {
                let col = table_column;
                let after = pos.mask | cell;
                let threats = Self::winning_cells::<LEVEL>(&g, pos.current | cell, after);
                if wins_in_three(&g, threats, after) {
                    let win_in_three = (cells - 1 - moves) / 2;
                    self.store(&g, key, win_in_three, win_in_three, col, mirrored, empty);
                    return win_in_three;
                }
                let mut child = *pos;
                child.play(cell);
                let score = -self.child::<S, LEVEL>(
                    shape,
                    &child,
                    opponent_wins & !cell,
                    threats,
                    -beta,
                    -alpha,
                );
                if self.stopped.is_some() {
                    return 0;
                }
                if score >= beta {
                    self.store(&g, key, score, upper, col, mirrored, empty);
                    return score;
                }
                if score > alpha {
                    alpha = score;
                    best_column = col;
                }
                remaining &= !cell;
            }
        }

        // Step 5b. The other moves.
        let mut sorter = MoveSorter::new();
        // Each move's threats, by slot: the child's `opponent_wins`, so no node computes them twice.
        let mut threats_after = [0u64; MAX_WIDTH];
        // Only the moves' cells are visited (lowest bit first); the sorter restores the
        // centre-first order among equals.
        let mut unvisited = remaining;
        while unvisited != 0 {
            let cell = unvisited & unvisited.wrapping_neg();
            unvisited ^= cell;
            let slot = order.slot_of_bit[cell.trailing_zeros() as usize & 63] as usize;
            let col = order.columns[slot];
            // The threats the move leaves: its ordering score, and a win-in-three test.
            let after = pos.mask | cell;
            let threats = Self::winning_cells::<LEVEL>(&g, pos.current | cell, after);
            if wins_in_three(&g, threats, after) {
                let win_in_three = (cells - 1 - moves) / 2;
                if stored_here {
                    self.store(&g, key, win_in_three, win_in_three, col, mirrored, empty);
                }
                return win_in_three;
            }
            if etc {
                let mut child = *pos;
                child.play(cell);
                let (child_key, child_mirrored) = table_key(&g, &child);
                if let Some((child_lower, child_upper, _)) =
                    self.probe(&g, child_key, child_mirrored)
                {
                    if -child_lower <= alpha {
                        continue;
                    }
                    let through_child = -child_upper;
                    if through_child >= beta {
                        // Nothing to store: only nodes at the other parity look up children.
                        return through_child;
                    }
                    if through_child > lower {
                        lower = through_child;
                        alpha = alpha.max(lower);
                    }
                }
            }
            // Threats first; among equals, not under one of our own threats, which the
            // opponent's reply would kill (after BitBully: 9-14 % fewer nodes on Pons' sets).
            let score = 2 * threats.count_ones() + (own_wins & (cell << 1) == 0) as u32;
            threats_after[slot] = threats;
            sorter.add(slot, score);
        }

        // Step 6. Search them, best-ordered first.
        while let Some(slot) = sorter.pop() {
            let cell = remaining & order.masks[slot];
            let col = order.columns[slot];
            let mut child = *pos;
            child.play(cell);
            let score = -self.child::<S, LEVEL>(
                shape,
                &child,
                opponent_wins & !cell,
                threats_after[slot],
                -beta,
                -alpha,
            );
            if self.stopped.is_some() {
                return 0;
            }
            if score >= beta {
                // Step 7a. Fail high: `score` is a lower bound.
                if stored_here {
                    self.store(&g, key, score, upper, col, mirrored, empty);
                }
                return score;
            }
            if score > alpha {
                alpha = score;
                best_column = col;
            }
        }

        // Step 7b. Every move is at most `alpha`; if one raised alpha (or a bound said so
        // before the search), it is also at least that.
        if !stored_here {
            return alpha;
        }
        let proven_lower = if best_column != NO_COLUMN {
            alpha
        } else {
            lower
        };
        self.store(&g, key, proven_lower, alpha, best_column, mirrored, empty);
        alpha
    }

    /// The bounds and best column stored for `key` (the column seen from `pos`'s side of the
    /// mirror).
    #[inline]
    fn probe(&mut self, g: &Geometry, key: u64, mirrored: bool) -> Option<(i32, i32, u32)> {
        self.stats.probes += 1;
        let entry = self.table.probe(key)?;
        self.stats.hits += 1;
        let (lower, upper) = unpack_bounds(entry.score);
        let column = if entry.best_move.is_none() {
            NO_COLUMN
        } else if mirrored {
            g.width - 1 - entry.best_move.0 as u32
        } else {
            entry.best_move.0 as u32
        };
        Some((lower, upper, column))
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        g: &Geometry,
        key: u64,
        lower: i32,
        upper: i32,
        col: u32,
        mirrored: bool,
        empty: i32,
    ) {
        debug_assert!(lower <= upper, "{lower} > {upper}");
        let best_move = if col == NO_COLUMN {
            Move::NONE
        } else if mirrored {
            Move((g.width - 1 - col) as u16)
        } else {
            Move(col as u16)
        };
        self.table.store(
            key,
            Entry {
                score: pack_bounds(lower, upper),
                best_move,
                depth: empty as u8,
                bound: Bound::Exact,
            },
        );
    }
}

/// Whether a move leaving `threats` (its player's winning cells, the board filled as `after`)
/// wins in three plies: two playable threats, or a playable threat with another right above
/// it. The opponent cannot stop both, and cannot win first (the move is non-losing): the
/// fastest win still possible, so the value is exact.
#[inline(always)]
fn wins_in_three(g: &Geometry, threats: u64, after: u64) -> bool {
    let playable_threats = threats & ((after + g.bottom) & g.board);
    playable_threats & playable_threats.wrapping_sub(1) != 0
        || playable_threats & (threats >> 1) != 0
}

/// The table key of `pos`, and whether it is its mirror image's key. Early in the game a
/// position and its mirror share the entry under the smaller key.
#[inline]
fn table_key(g: &Geometry, pos: &Position) -> (u64, bool) {
    let own_key = pos.key();
    if pos.moves < MIRROR_PLIES {
        let mirror_key = pos.mirrored_key(g);
        if mirror_key < own_key {
            return (solver_key(mirror_key), true);
        }
    }
    (solver_key(own_key), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_survive_packing() {
        for (lo, hi) in [(-21, 21), (0, 0), (-3, 5), (-32, 32)] {
            assert_eq!(unpack_bounds(pack_bounds(lo, hi)), (lo, hi));
        }
    }

    fn solve_at_level(
        g: Geometry,
        moves: &str,
        level: u8,
        table: &TranspositionTable,
    ) -> (i32, u64) {
        let mut pos = Position::default();
        for ch in moves.bytes() {
            pos.play_column(&g, u32::from(ch - b'1'));
        }
        table.clear();
        let mut solver = Solver::new(g, table, SearchLimits::default());
        solver.level = level;
        let value = solver.solve(&pos).expect("no limits");
        (value, solver.nodes)
    }

    /// The node function levels differ in instructions only: same values, same node counts.
    /// On a CPU with AVX2 the service never runs the baseline and `popcnt` levels, so this is
    /// where they are exercised, on the standard board and on a run-time geometry.
    #[test]
    fn every_node_function_level_the_cpu_runs_solves_alike() {
        let table = TranspositionTable::with_megabytes(4);
        let levels: Vec<u8> = [BASELINE, POPCNT, AVX2]
            .into_iter()
            .filter(|&level| level <= cpu_level())
            .collect();
        let standard = include_str!("../../../tests/data/connect4/Test_L2_R2");
        for line in standard.lines().take(25) {
            let (moves, score) = line.split_once(' ').expect("moves, then the score");
            let expected: i32 = score.parse().expect("a score");
            let results: Vec<(i32, u64)> = levels
                .iter()
                .map(|&level| solve_at_level(Geometry::standard(), moves, level, &table))
                .collect();
            assert!(
                results.iter().all(|&(value, _)| value == expected),
                "{line}: {results:?}"
            );
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "{line}: {results:?}"
            );
        }
        let small = Geometry::new(5, 4).expect("5 x 4 fits");
        for moves in ["", "3", "33", "2345", "1155"] {
            let results: Vec<(i32, u64)> = levels
                .iter()
                .map(|&level| solve_at_level(small, moves, level, &table))
                .collect();
            assert!(
                results.windows(2).all(|w| w[0] == w[1]),
                "{moves}: {results:?}"
            );
        }
    }
}
