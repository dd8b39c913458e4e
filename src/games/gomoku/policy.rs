//! Move ordering: how promising a move is, from the patterns it makes and blocks.
//!
//! A cell's score is a sum of table values: per direction, the level the mover would make there
//! (attack) and the level the opponent would (what playing there blocks, defence), plus the
//! cell's shape class and level pair for each side ([`super::board`]) and how crowded its
//! neighbourhood is. [`THREAT_ORDER`], set by hand so that fives, fours and double threats come
//! first, orders every gomoku search and picks the few moves the selective search looks at.
//! The same form can be fitted to a strong engine's moves (`examples/gomoku_eval_fit.rs
//! order`, which reports how often that engine's move ranks in the top 12 under each table);
//! a fitted order ranked Rapfi's move better (74.5 % in the top 12 against 69.5 %) but did not
//! play better, so the hand tables stay (README, "Benchmark figures").

use super::board::{Board, COMBO_CLASSES, PAIR_CLASSES};
use super::patterns::LEVELS;

/// Tables of the move-ordering score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderWeights {
    /// Per level the mover would make in one direction (summed over the four).
    pub attack_level: [i32; LEVELS],
    /// Per level the opponent would make there in one direction.
    pub defence_level: [i32; LEVELS],
    /// Per shape class of the cell, for the mover and for the opponent.
    pub attack_shape: [i32; COMBO_CLASSES],
    pub defence_shape: [i32; COMBO_CLASSES],
    /// Per level pair of the cell, for the mover and for the opponent.
    pub attack_pair: [i32; PAIR_CLASSES],
    pub defence_pair: [i32; PAIR_CLASSES],
    /// Per count of stones within two cells (both sides; 8 or more share the last entry): how
    /// crowded the cell's neighbourhood is.
    pub crowd: [i32; CROWD_CLASSES],
}

/// Entries of [`OrderWeights::crowd`].
pub const CROWD_CLASSES: usize = 9;

/// Length of [`OrderWeights::flat`].
pub const ORDER_FEATURES: usize = 2 * LEVELS + 2 * COMBO_CLASSES + 2 * PAIR_CLASSES + CROWD_CLASSES;

/// Offsets of the tables in the flat layout.
const DEFENCE_LEVEL: usize = LEVELS;
const ATTACK_SHAPE: usize = 2 * LEVELS;
const DEFENCE_SHAPE: usize = ATTACK_SHAPE + COMBO_CLASSES;
const ATTACK_PAIR: usize = DEFENCE_SHAPE + COMBO_CLASSES;
const DEFENCE_PAIR: usize = ATTACK_PAIR + PAIR_CLASSES;
const CROWD: usize = DEFENCE_PAIR + PAIR_CLASSES;

/// Hand-set ordering for tactics: a five first, then blocking one, open fours, blocks of
/// fours, double threats (making one just before taking the opponent's), then single-line
/// shapes.
pub const THREAT_ORDER: OrderWeights = OrderWeights {
    attack_level: [0, 2, 6, 10, 40, 60, 2_000, 100_000],
    defence_level: [0, 1, 4, 6, 30, 40, 800, 50_000],
    attack_shape: [0, 500, 1_200, 1_500, 80, 120, 20, 20],
    defence_shape: [0, 350, 900, 1_000, 50, 80, 10, 10],
    attack_pair: [0; PAIR_CLASSES],
    defence_pair: [0; PAIR_CLASSES],
    crowd: [0; CROWD_CLASSES],
};

impl OrderWeights {
    /// The tables in one vector: attack levels, defence levels, attack shapes, defence shapes,
    /// attack pairs, defence pairs.
    pub fn flat(&self) -> [i32; ORDER_FEATURES] {
        let mut out = [0; ORDER_FEATURES];
        out[..LEVELS].copy_from_slice(&self.attack_level);
        out[DEFENCE_LEVEL..ATTACK_SHAPE].copy_from_slice(&self.defence_level);
        out[ATTACK_SHAPE..DEFENCE_SHAPE].copy_from_slice(&self.attack_shape);
        out[DEFENCE_SHAPE..ATTACK_PAIR].copy_from_slice(&self.defence_shape);
        out[ATTACK_PAIR..DEFENCE_PAIR].copy_from_slice(&self.attack_pair);
        out[DEFENCE_PAIR..CROWD].copy_from_slice(&self.defence_pair);
        out[CROWD..].copy_from_slice(&self.crowd);
        out
    }

    /// The inverse of [`OrderWeights::flat`] (missing values are 0).
    pub fn from_flat(flat: &[i32]) -> OrderWeights {
        let mut full = [0; ORDER_FEATURES];
        for (slot, &v) in full.iter_mut().zip(flat) {
            *slot = v;
        }
        let mut w = OrderWeights {
            attack_level: [0; LEVELS],
            defence_level: [0; LEVELS],
            attack_shape: [0; COMBO_CLASSES],
            defence_shape: [0; COMBO_CLASSES],
            attack_pair: [0; PAIR_CLASSES],
            defence_pair: [0; PAIR_CLASSES],
            crowd: [0; CROWD_CLASSES],
        };
        w.attack_level.copy_from_slice(&full[..LEVELS]);
        w.defence_level
            .copy_from_slice(&full[DEFENCE_LEVEL..ATTACK_SHAPE]);
        w.attack_shape
            .copy_from_slice(&full[ATTACK_SHAPE..DEFENCE_SHAPE]);
        w.defence_shape
            .copy_from_slice(&full[DEFENCE_SHAPE..ATTACK_PAIR]);
        w.attack_pair
            .copy_from_slice(&full[ATTACK_PAIR..DEFENCE_PAIR]);
        w.defence_pair.copy_from_slice(&full[DEFENCE_PAIR..CROWD]);
        w.crowd.copy_from_slice(&full[CROWD..]);
        w
    }

    /// The score of empty `cell` for `mover` (0 or 1).
    #[inline]
    pub fn score(&self, board: &Board, cell: usize, mover: usize) -> i32 {
        let other = 1 - mover;
        let pattern = &board.pattern[cell];
        let mut score = 0;
        for d in 0..4 {
            score += self.attack_level[pattern[mover * 4 + d] as usize]
                + self.defence_level[pattern[other * 4 + d] as usize];
        }
        let (shape, pair) = (board.combo[cell], board.pair[cell]);
        score
            + self.attack_shape[shape[mover] as usize]
            + self.defence_shape[shape[other] as usize]
            + self.attack_pair[pair[mover] as usize]
            + self.defence_pair[pair[other] as usize]
            + self.crowd[crowd_class(board, cell)]
    }

    /// Rust source of the tables, for pasting into this file.
    pub fn describe(&self, name: &str) -> String {
        format!(
            "pub const {name}: OrderWeights = OrderWeights {{\n    attack_level: {:?},\n    \
             defence_level: {:?},\n    attack_shape: {:?},\n    defence_shape: {:?},\n    \
             attack_pair: {:?},\n    defence_pair: {:?},\n    crowd: {:?},\n}};",
            self.attack_level,
            self.defence_level,
            self.attack_shape,
            self.defence_shape,
            self.attack_pair,
            self.defence_pair,
            self.crowd
        )
    }
}

/// The features of empty `cell` for `mover` whose dot product with [`OrderWeights::flat`] is
/// [`OrderWeights::score`]: (index, count) pairs, at most 13, written to `out`; returns how many.
pub fn cell_features(
    board: &Board,
    cell: usize,
    mover: usize,
    out: &mut [(usize, i32); 13],
) -> usize {
    let other = 1 - mover;
    let pattern = &board.pattern[cell];
    let mut n = 0;
    let mut add = |index: usize, out: &mut [(usize, i32); 13]| {
        if let Some(slot) = out[..n].iter_mut().find(|(i, _)| *i == index) {
            slot.1 += 1;
        } else {
            out[n] = (index, 1);
            n += 1;
        }
    };
    for d in 0..4 {
        add(pattern[mover * 4 + d] as usize, out);
        add(DEFENCE_LEVEL + pattern[other * 4 + d] as usize, out);
    }
    let (shape, pair) = (board.combo[cell], board.pair[cell]);
    add(ATTACK_SHAPE + shape[mover] as usize, out);
    add(DEFENCE_SHAPE + shape[other] as usize, out);
    add(ATTACK_PAIR + pair[mover] as usize, out);
    add(DEFENCE_PAIR + pair[other] as usize, out);
    add(CROWD + crowd_class(board, cell), out);
    n
}

#[inline]
fn crowd_class(board: &Board, cell: usize) -> usize {
    (board.near[cell] as usize).min(CROWD_CLASSES - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::{Game, Move};
    use crate::games::gomoku::{Gomoku, GomokuRules};

    #[test]
    fn cell_features_reproduce_the_score() {
        let flat: Vec<i32> = (0..ORDER_FEATURES as i32)
            .map(|i| i * 7 % 23 - 11)
            .collect();
        let weights = OrderWeights::from_flat(&flat);
        let mut p = Gomoku::new(15, 15, GomokuRules::default()).unwrap();
        for cell in [112, 113, 97, 128, 98, 127, 126, 96, 111, 144] {
            p.make(Move(cell));
            let board = p.board();
            let mover = p.side_to_move().index();
            let mut buffer = [(0, 0); 13];
            for c in (0..225).filter(|&c| board.cells[c] == 0 && board.near[c] > 0) {
                let n = cell_features(board, c, mover, &mut buffer);
                let dot: i32 = buffer[..n].iter().map(|&(i, k)| flat[i] * k).sum();
                assert_eq!(dot, weights.score(board, c, mover), "cell {c}");
            }
        }
    }

    #[test]
    fn flat_tables_round_trip() {
        let flat: Vec<i32> = (0..ORDER_FEATURES as i32).collect();
        assert_eq!(OrderWeights::from_flat(&flat).flat().to_vec(), flat);
    }
}
