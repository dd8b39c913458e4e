//! Move ordering: which move to try first, so alpha-beta cuts off as early as possible.
//!
//! Priority: the transposition table's move, then the two killer moves of this ply (moves that
//! cut off at a sibling node), then the game's own hint combined with the history heuristic
//! (how often a move caused a cutoff anywhere, weighted by depth squared). A game whose hint
//! reads threats well ranks killers by the hint instead, raised by a bonus
//! ([`MoveOrdering::key_with_killer_bonus`]). Moves are picked lazily, best remaining first,
//! because a cutoff usually comes before the list is half done.

use super::game::{MAX_PLY, Move, Side};

const TABLE_MOVE_KEY: i64 = i64::MAX;
const KILLER_KEY: i64 = i64::MAX - 2;
/// History values are kept below this so they never outrank a game hint step.
const HISTORY_CAP: i32 = 1 << 20;

/// Per-search ordering memory: killers per ply and history per side and move.
pub struct MoveOrdering {
    killers: [[Move; 2]; MAX_PLY],
    history: Vec<i32>,
    move_space: usize,
}

impl MoveOrdering {
    pub fn new(move_space: usize) -> Self {
        MoveOrdering {
            killers: [[Move::NONE; 2]; MAX_PLY],
            history: vec![0; 2 * move_space],
            move_space,
        }
    }

    /// The sort key of `mv` at `ply`; `hint` is the game's own ordering hint.
    #[inline]
    pub fn key(&self, mv: Move, table_move: Move, ply: usize, side: Side, hint: i32) -> i64 {
        if mv == table_move {
            TABLE_MOVE_KEY
        } else if mv == self.killers[ply][0] {
            KILLER_KEY
        } else if mv == self.killers[ply][1] {
            KILLER_KEY - 1
        } else {
            self.hinted_key(mv, side, hint)
        }
    }

    /// The sort key of `mv` at `ply` for a game whose hints rank moves well: the table's move
    /// first, then the hint, a killer's raised by `killer_bonus`, then history. A killer is a
    /// guess from a sibling's position; where the hint already reads the cell's threats, a
    /// killer that outranks every hint is tried first and fails about half the time (gomoku's
    /// journal, "Killers ranked by the ordering score").
    #[inline]
    pub fn key_with_killer_bonus(
        &self,
        mv: Move,
        table_move: Move,
        ply: usize,
        side: Side,
        hint: i32,
        killer_bonus: i32,
    ) -> i64 {
        if mv == table_move {
            return TABLE_MOVE_KEY;
        }
        let killer = mv == self.killers[ply][0] || mv == self.killers[ply][1];
        self.hinted_key(mv, side, hint + if killer { killer_bonus } else { 0 })
    }

    /// The hint, with history below it to break ties.
    #[inline]
    fn hinted_key(&self, mv: Move, side: Side, hint: i32) -> i64 {
        ((hint as i64) << 21) + self.history[side.index() * self.move_space + mv.index()] as i64
    }

    /// Records that `mv` caused a beta cutoff at `ply` with `depth` plies left.
    #[inline]
    pub fn record_cutoff(&mut self, mv: Move, ply: usize, side: Side, depth: i32) {
        let killers = &mut self.killers[ply];
        if killers[0] != mv {
            killers[1] = killers[0];
            killers[0] = mv;
        }
        let slot = &mut self.history[side.index() * self.move_space + mv.index()];
        *slot += depth * depth;
        if *slot >= HISTORY_CAP {
            // Halve everything: keeps relative order, makes room for new information.
            for h in &mut self.history {
                *h /= 2;
            }
        }
    }
}

/// The index in `i..` of the best-keyed move (ties: the first, which keeps generation order
/// and so keeps searches deterministic). A searcher that keeps more beside its moves (gomoku's
/// ordering scores) swaps them with this.
#[inline]
pub fn best_remaining(keys: &[i64], i: usize) -> usize {
    // The best key so far is kept beside its index, not read again at every step.
    let (mut best, mut best_key) = (i, keys[i]);
    for (j, &key) in keys.iter().enumerate().skip(i + 1) {
        if key > best_key {
            (best, best_key) = (j, key);
        }
    }
    best
}

/// Moves `moves[i..]`'s best-keyed move to position `i` (selection step of a lazy sort).
#[inline]
pub fn pick_best(moves: &mut [Move], keys: &mut [i64], i: usize) {
    let best = best_remaining(keys, i);
    moves.swap(i, best);
    keys.swap(i, best);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_move_then_killers_then_hints() {
        let mut ordering = MoveOrdering::new(10);
        ordering.record_cutoff(Move(3), 0, Side::First, 1);
        let key = |mv, hint| ordering.key(Move(mv), Move(5), 0, Side::First, hint);
        assert!(key(5, 0) > key(3, 0));
        assert!(key(3, 0) > key(1, 1000));
        assert!(key(1, 2) > key(2, 1));
    }

    #[test]
    fn a_killer_bonus_raises_a_killer_among_hints_and_not_above_the_table_move() {
        let mut ordering = MoveOrdering::new(10);
        ordering.record_cutoff(Move(3), 0, Side::First, 1);
        let key =
            |mv, hint| ordering.key_with_killer_bonus(Move(mv), Move(5), 0, Side::First, hint, 60);
        assert!(key(5, 0) > key(3, 1_000));
        // The killer (hint 10 + 60) passes a hint of 69 and not one of 71.
        assert!(key(3, 10) > key(1, 69));
        assert!(key(3, 10) < key(1, 71));
        // Not a killer at another ply.
        let other_ply = ordering.key_with_killer_bonus(Move(3), Move(5), 1, Side::First, 10, 60);
        assert!(other_ply < key(1, 69));
    }

    #[test]
    fn pick_best_is_stable_on_ties() {
        let mut moves = vec![Move(0), Move(1), Move(2)];
        let mut keys = vec![1, 5, 5];
        pick_best(&mut moves, &mut keys, 0);
        assert_eq!(moves[0], Move(1));
    }
}
