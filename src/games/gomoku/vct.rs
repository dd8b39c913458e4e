//! Victory by continuous threats (VCT): a forced win where every attacker move is a four or an
//! open three, so the defender must answer each one.
//!
//! An AND/OR search. At attacker (OR) nodes the moves are the cells where the attacker makes a
//! four or an open three, fours first; after the first threat, only threats on a line through
//! the previous one, within four cells of it (a threat independent of the last one could have
//! come before it, so it mostly repeats a line tried in another order). At defender (AND) nodes
//! every real answer must lose for the attacker to win: the block of a four; against an open
//! three, the cells that leave the attacker no open four, and the defender's own fours, best
//! first. If the attacker ever stops threatening, the defender gets a free move and the line
//! fails. Depth counts attacker moves; the caller deepens it step by step, so short wins are
//! found first. Failures and wins are kept in private tables keyed by hash and depth.
//!
//! The attacker rule gives up completeness for speed (on 436 positions from lost games, 100,000
//! nodes each: 217 wins found against 219 with the rule for threes only, in 3.6 s instead of
//! 10.5 s); every win found is still a proof.

use std::time::Instant;

use super::Gomoku;
use super::patterns::{FIVE, FOUR, OPEN_FOUR, OPEN_THREE};
use crate::engine::{CancelFlag, Game, Move, Side, Status};

/// Slots of the failure table (a power of two).
const TABLE_SLOTS: usize = 1 << 16;
/// Slots of the win table: wins are stored only along winning lines, far fewer than failures,
/// and each solver allocates its tables afresh, so this one stays small (256 KiB).
const WON_SLOTS: usize = 1 << 14;
/// Attacker threes tried per node, best first (fours are all tried).
const MAX_THREES: usize = 12;
/// Deepest VCT (attacker moves).
pub const MAX_THREATS: u32 = 12;

/// What may stop a VCT search.
#[derive(Clone, Debug)]
pub struct VctLimits {
    pub deadline: Option<Instant>,
    pub max_nodes: u64,
    pub cancel: Option<CancelFlag>,
}

/// One VCT search over a private copy of the position.
pub struct Vct {
    pos: Gomoku,
    nodes: u64,
    /// Node count at which the current solve stops (limits are per solve).
    node_limit: u64,
    stopped: bool,
    failed: Vec<u64>,
    /// Proven wins: (hash, first move | plies << 16 | threats used << 32), indexed by the
    /// hash's low bits. A win with d threats is a win with any budget of d or more; without this a
    /// position reached again through another defence is proven again from scratch.
    won: Vec<(u64, u64)>,
    buffers: Vec<Vec<(i32, u16)>>,
    /// Per-ply buffers of defender replies, and of the same replies with their ordering hints
    /// (computed once a reply: a sort keyed by the hint itself recomputed it at every
    /// comparison, a tenth of the solver's instructions).
    replies: Vec<Vec<Move>>,
    ranked: Vec<Vec<(i32, Move)>>,
    /// The attacker's threats on the current line, last on top.
    attacks: Vec<Move>,
}

impl Vct {
    pub fn new(pos: Gomoku) -> Self {
        Vct {
            pos,
            nodes: 0,
            node_limit: u64::MAX,
            stopped: false,
            failed: vec![0; TABLE_SLOTS],
            won: vec![(0, 0); WON_SLOTS],
            buffers: (0..4 * MAX_THREATS as usize).map(|_| Vec::new()).collect(),
            replies: (0..4 * MAX_THREATS as usize).map(|_| Vec::new()).collect(),
            ranked: (0..4 * MAX_THREATS as usize).map(|_| Vec::new()).collect(),
            attacks: Vec::with_capacity(4 * MAX_THREATS as usize),
        }
    }

    /// Points the solver at another position, keeping its failure table.
    pub fn set_position(&mut self, pos: &Gomoku) {
        self.pos = pos.clone();
    }

    /// Whether the last solve was cut short by a limit.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Deepens the threat count from 2 to `max_depth`; returns the first attacker move and the
    /// number of plies to the five in the longest defence, or `None`.
    pub fn solve(&mut self, max_depth: u32, limits: &VctLimits) -> Option<(Move, u32)> {
        self.stopped = false;
        self.node_limit = self.nodes.saturating_add(limits.max_nodes);
        for depth in 2..=max_depth.min(MAX_THREATS) {
            if let Some(found) = self.or_node(depth, 0, limits) {
                return Some(found);
            }
            if self.stopped {
                break;
            }
        }
        None
    }

    /// Whether a threat (four or three) on `cell` may follow the attacker's last threat: it
    /// must share a line with it within four cells, i.e. lie where that stone changed the
    /// patterns. A threat independent of the last one could have been played before it, so
    /// deep in the search such moves mostly repeat lines already tried in another order.
    /// (Anchoring on the last two attacker stones, or on counter-four blocks too, found fewer
    /// wins within a node cap: the wider tree costs more than the wins it adds.)
    fn related(&self, cell: usize) -> bool {
        let Some(&last) = self.attacks.last() else {
            return true;
        };
        let cols = self.pos.cols() as i32;
        let (r0, c0) = ((cell as i32) / cols, (cell as i32) % cols);
        let (r1, c1) = ((last.index() as i32) / cols, (last.index() as i32) % cols);
        let (dr, dc) = ((r0 - r1).abs(), (c0 - c1).abs());
        (dr == 0 || dc == 0 || dr == dc) && dr.max(dc) <= 4
    }

    fn check_limits(&mut self, limits: &VctLimits) -> bool {
        self.nodes += 1;
        self.stopped |= super::vcf::must_stop(
            self.nodes,
            self.node_limit,
            limits.deadline,
            limits.cancel.as_ref(),
        );
        !self.stopped
    }

    fn slot(&self, depth: u32) -> (usize, u64) {
        let hash = self.pos.hash();
        (
            (hash as usize >> 8) & (TABLE_SLOTS - 1),
            (hash & !0xFF) | u64::from(depth.min(0xFF)),
        )
    }

    /// Attacker to move: some threat wins. Returns the move and the plies to the five.
    fn or_node(&mut self, depth: u32, ply: usize, limits: &VctLimits) -> Option<(Move, u32)> {
        if !self.check_limits(limits) {
            return None;
        }
        let me = self.pos.side_to_move();
        if let Some(win) = self.pos.immediate_win() {
            return Some((win, 1));
        }
        // Counted exactly: under renju black's overline points are fives in the patterns only.
        let counter_four = self.pos.board.level_count[me.other().index()][FIVE as usize] > 0
            && self.pos.five_cells(me.other(), &mut [0usize; 1]) > 0;
        if depth == 0 && !counter_four {
            return None;
        }
        // Looked up before the forced block too: the defender's counter-fours reach the same
        // positions in every order, and without the tables each order is searched again.
        let (slot, key) = self.slot(depth);
        let stored = self.failed[slot];
        if stored & !0xFF == key & !0xFF && stored & 0xFF >= key & 0xFF {
            return None;
        }
        let hash = self.pos.hash();
        let won_slot = hash as usize & (WON_SLOTS - 1);
        let (won_hash, won) = self.won[won_slot];
        if won_hash == hash && (won >> 32) as u32 <= depth {
            return Some((Move(won as u16), (won >> 16) as u16 as u32));
        }
        let found = if counter_four {
            self.block_counter_four(depth, ply, limits)
        } else {
            self.threaten(depth, ply, limits)
        };
        match found {
            Some((mv, plies)) => {
                let data = u64::from(mv.0) | u64::from(plies.min(0xFFFF)) << 16;
                self.won[won_slot] = (hash, data | u64::from(depth) << 32);
            }
            None if !self.stopped => self.failed[slot] = key,
            None => {}
        }
        found
    }

    /// The defender's counter-four must be blocked; the block must keep us threatening.
    fn block_counter_four(
        &mut self,
        depth: u32,
        ply: usize,
        limits: &VctLimits,
    ) -> Option<(Move, u32)> {
        let mut cells = [0usize; 2];
        if self
            .pos
            .five_cells(self.pos.side_to_move().other(), &mut cells)
            != 1
        {
            return None;
        }
        if !self.pos.allowed(cells[0], self.pos.side_to_move()) {
            return None;
        }
        let block = Move(cells[0] as u16);
        self.pos.make(block);
        let result = self.and_node(depth, ply + 1, limits);
        self.pos.unmake(block);
        result.map(|plies| (block, plies + 1))
    }

    /// Tries the attacker's fours, then its best open threes.
    fn threaten(&mut self, depth: u32, ply: usize, limits: &VctLimits) -> Option<(Move, u32)> {
        let me = self.pos.side_to_move();
        let a = me.index();
        let board = &self.pos.board;
        let mut moves = std::mem::take(&mut self.buffers[ply]);
        moves.clear();
        for cell in board.threat_cells(a, OPEN_THREE).iter() {
            if board.near[cell] == 0 {
                continue;
            }
            // Renju: black never plays a forbidden point (the test runs only on threat cells).
            if board.best_level(cell, a) >= OPEN_THREE && !self.pos.allowed(cell, me) {
                continue;
            }
            let best = board.best_level(cell, a);
            if best >= FOUR && self.related(cell) {
                let open = u8::from(best == OPEN_FOUR);
                moves.push((1_000_000 + i32::from(open), cell as u16));
            } else if best == OPEN_THREE && self.related(cell) {
                moves.push((self.pos.move_order_hint(Move(cell as u16)), cell as u16));
            }
        }
        moves.sort_unstable_by(|x, y| y.cmp(x));
        let fours = moves.iter().filter(|m| m.0 >= 1_000_000).count();
        moves.truncate(fours + MAX_THREES);
        let mut found = None;
        for &(_, cell) in &moves {
            let mv = Move(cell);
            self.pos.make(mv);
            self.attacks.push(mv);
            let result = self.and_node(depth - 1, ply + 1, limits);
            self.attacks.pop();
            self.pos.unmake(mv);
            if let Some(plies) = result {
                found = Some((mv, plies + 1));
                break;
            }
            if self.stopped {
                break;
            }
        }
        self.buffers[ply] = moves;
        found
    }

    /// Renju, black the attacker, white to move: whether black has a point it may play that
    /// makes a four with two exact-five completions (a straight four, which wins). A black
    /// three whose straight-four points are all forbidden, or would make overlines, is no
    /// threat. Only cells whose patterns show an open four are tried.
    fn black_has_straight_four_point(&mut self) -> bool {
        let black = Side::First;
        for cell in 0..self.pos.board.cells.len() {
            if self.pos.board.cells[cell] != 0
                || self.pos.board.best_level(cell, black.index()) != OPEN_FOUR
                || self.pos.forbidden(cell).is_some()
            {
                continue;
            }
            // Seen from black's side: the pass is only a way to put the stone down.
            self.pos.board.place(cell, black.index());
            let fives = self.pos.five_cells(black, &mut [0; 2]);
            self.pos.board.remove(cell);
            if fives >= 2 {
                return true;
            }
        }
        false
    }

    /// Defender to move after a threat: every answer must still lose. Returns the plies to the
    /// five in the longest defence.
    fn and_node(&mut self, depth: u32, ply: usize, limits: &VctLimits) -> Option<u32> {
        if self.pos.status() != Status::Ongoing || ply + 2 >= self.buffers.len() {
            return None;
        }
        let me = self.pos.side_to_move();
        let (def, att) = (me.index(), me.other().index());
        let board = &self.pos.board;
        if board.level_count[def][FIVE as usize] > 0 && self.pos.five_cells(me, &mut [0; 1]) > 0 {
            return None;
        }
        let restricted_attacker = self.pos.black_is_restricted(me.other());
        let attacker_fives = if board.level_count[att][FIVE as usize] > 0 {
            self.pos.five_cells(me.other(), &mut [0; 1])
        } else {
            0
        };
        let threatened = attacker_fives > 0
            || (board.level_count[att][OPEN_FOUR as usize] > 0
                && (!restricted_attacker || self.black_has_straight_four_point()));
        if !threatened {
            return None;
        }
        let mut replies = std::mem::take(&mut self.replies[ply]);
        replies.clear();
        // Against a four: its blocks (the threat rules of `search_moves`). Against an open
        // three, those rules allow every cell where either side makes a four; of the
        // attacker's four cells only those that leave it no open four are defences here (a
        // closed four elsewhere does not stop the three), beside all the defender's own fours.
        // If nothing defends, every rule move is searched: all lose, the longest defence counts.
        // (The main search keeps the wider set: narrowing it there lost games in the old
        // arena, for reasons not understood; not re-measured since.)
        self.pos.search_moves(&mut replies);
        // Against a renju black three the narrowing below is not exact (a straight-four point
        // may be forbidden, or make an overline): the wider threat-rule set stays.
        if attacker_fives == 0 && !restricted_attacker {
            let board = &self.pos.board;
            replies.retain(|mv| {
                board.best_level(mv.index(), def) >= FOUR || board.stops_open_fours(mv.index(), att)
            });
            if replies.is_empty() {
                self.pos.search_moves(&mut replies);
            }
        }
        // Best first by the defender's hint: one refutation ends the node, and moves with good
        // shape tend to refute.
        let mut ranked = std::mem::take(&mut self.ranked[ply]);
        ranked.clear();
        ranked.extend(replies.iter().map(|&mv| (self.pos.move_order_hint(mv), mv)));
        ranked.sort_unstable_by_key(|&(hint, _)| std::cmp::Reverse(hint));
        let mut longest = Some(0);
        for &(_, mv) in &ranked {
            self.pos.make(mv);
            let result = self.or_node(depth, ply + 1, limits);
            self.pos.unmake(mv);
            match result {
                Some((_, plies)) => longest = longest.map(|l: u32| l.max(plies + 1)),
                None => {
                    longest = None;
                    break;
                }
            }
        }
        self.replies[ply] = replies;
        self.ranked[ply] = ranked;
        longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::GomokuRules;
    use crate::games::{BoardGame, Grid};

    /// Row 7 of an otherwise empty 15x15 board, white to move, under renju.
    fn renju_row(row: &str) -> Vct {
        let mut pos = Gomoku::new(15, 15, GomokuRules::renju()).unwrap();
        let stones = row.chars().enumerate().filter_map(|(c, ch)| match ch {
            'X' => Some((7 * 15 + c, Side::First)),
            'O' => Some((7 * 15 + c, Side::Second)),
            _ => None,
        });
        pos.set_up(stones, Side::Second);
        Vct::new(pos)
    }

    #[test]
    fn a_renju_black_three_is_a_threat_only_with_a_straight_four_point() {
        // `O.XXX..X`: (7,4) or (7,8) makes a four whose other end is an overline: no straight
        // four, so white need not answer. Without the far stone the three is real.
        assert!(!renju_row("...O.XXX..X....").black_has_straight_four_point());
        assert!(renju_row("...O.XXX.......").black_has_straight_four_point());
        assert!(renju_row(".....XXX.......").black_has_straight_four_point());
    }

    #[test]
    fn two_open_threes_in_one_move_win_by_threats() {
        // (7,7) makes open threes on row 7 and column 7: no four is needed to start.
        let rows = [
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            ".......X.......",
            ".......X.......",
            ".....XX........",
            "...............",
            "...............",
            "...............",
            "..O..O.........",
            "...............",
            "..O..O.........",
            "...............",
        ];
        let grid = Grid::parse(&rows, 25).unwrap();
        let pos = Gomoku::from_grid(&grid, None, &GomokuRules::default()).unwrap();
        let limits = VctLimits {
            deadline: None,
            max_nodes: 1_000_000,
            cancel: None,
        };
        let (mv, plies) = Vct::new(pos.clone()).solve(6, &limits).expect("a VCT");
        assert_eq!(plies % 2, 1);
        assert!(plies >= 5);
        let _ = mv;
    }
}
