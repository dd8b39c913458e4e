//! The move order's hints: what a stone on a cell would make for the side to move (attack) and
//! for its opponent (what the stone blocks), read from the cell's two pattern codes.
//!
//! Two sets of weights, each summed per cell code into one table at compile time, so a hint is
//! two lookups (it is asked of every move at every node):
//! - **the order** ([`ORDER_ATTACK`] and the others), fitted to Rapfi's moves: it picks and
//!   orders the moves of the main search, the root's, the VCT's and the defence check's;
//! - **the strength** ([`STRENGTH_ATTACK`] and the others), hand-set: double threats far above
//!   single-line shapes. The main search's reductions and futility read it (a strength of 150
//!   or more is a strong shape, reduced a ply less; an eighth of it widens futility's margin),
//!   so the fitted order changes which moves come first, not what those thresholds mean.
//!
//! The order was fitted by softmax regression (`examples/gomoku_eval_fit.rs`, `order`): the
//! probability of each move the search would consider taken as proportional to
//! exp(hint / temperature), the temperature the one that suits the hand-set weights best, the
//! hand-set weights the starting point, on the positions of the committed label files whose
//! judge's move is among those moves. First (2026-12-06) on the three files without forced
//! wins, 14,733 positions, temperature 320: on every fifth position, held out, Rapfi's move
//! came first in 33.1 % of them against 29.6 % for the hand-set weights; self-play at 200 ms
//! against the hand-set order 57.9 % of 392 games. The weights below are a second fit
//! (2026-12-07) on all six files, the three with Rapfi's forced wins (its winning and
//! defending moves) among them, 30,453 positions, temperature 480: on their 6,080 held-out
//! positions Rapfi's move comes first in 34.5 %, against 31.9 % for the hand-set weights and
//! 35.4 % for the first fit, so it is not a better ranker of Rapfi's first choice; it played
//! level with the first fit or a little better, within noise: self-play 52.8 % of 392 games;
//! against Rapfi 32.0 % of 976 games in three runs where the first fit scored 30.6 % of 1,368
//! the same day, level on the openings never fitted (docs/journal/gomoku.md, "A move order
//! fitted to Rapfi's moves" and "The move order refitted with the forced wins").

use super::board::{self, COMBO_CLASSES};

/// The strength of a cell by the level it makes in each direction, for the mover (attack) and
/// for the opponent (defence).
pub const STRENGTH_ATTACK: [i32; 8] = [0, 2, 6, 10, 40, 60, 2_000, 100_000];
pub const STRENGTH_DEFENCE: [i32; 8] = [0, 1, 4, 6, 30, 40, 800, 50_000];
/// The strength of a cell by the shape class (`board::DOUBLE_THREE` ... `DOUBLE_TWO`) it makes
/// for the mover and for the opponent: shapes across lines (double threats first) outrank
/// single-line ones; taking the cell of the opponent's double threat comes just after making
/// one of our own.
pub const STRENGTH_SHAPE_ATTACK: [i32; COMBO_CLASSES] = [0, 500, 1_200, 1_500, 80, 120, 20, 20];
pub const STRENGTH_SHAPE_DEFENCE: [i32; COMBO_CLASSES] = [0, 350, 900, 1_000, 50, 80, 10, 10];

/// The order's weights, laid out as the strength's. The fit moves the levels from two to four
/// and the shapes but the double four; none, open four, five and the double four keep the
/// hand-set values (wins, or nothing). Open twos, threes and open threes gain most against the
/// hand-set weights, and the double threats lose: a double three (its shape weight on top of
/// its two open threes) weighs about three single open threes, where the hand-set
/// weights made it fourteen. Rapfi plays the quiet building move more often than the hand-set
/// order thought.
pub const ORDER_ATTACK: [i32; 8] = [0, 55, 363, 435, 896, 860, 2_000, 100_000];
pub const ORDER_DEFENCE: [i32; 8] = [0, -18, 125, 241, 757, 770, 800, 50_000];
pub const ORDER_SHAPE_ATTACK: [i32; COMBO_CLASSES] = [0, 827, 1_433, 1_500, 526, 725, 329, 278];
pub const ORDER_SHAPE_DEFENCE: [i32; COMBO_CLASSES] = [0, 495, 954, 1_000, 575, 465, 115, 45];

/// Per cell code (one side's four levels, three bits each): the order's and the strength's
/// weights summed over the four directions and the code's shape, as the mover's and as the
/// opponent's: `[order attack, order defence, strength attack, strength defence]`.
static CODE_WEIGHTS: [[i32; 4]; 1 << 12] = {
    let mut table = [[0; 4]; 1 << 12];
    let mut code = 0;
    while code < table.len() {
        let shape = board::shape_of(code) as usize;
        let mut sums = [
            ORDER_SHAPE_ATTACK[shape],
            ORDER_SHAPE_DEFENCE[shape],
            STRENGTH_SHAPE_ATTACK[shape],
            STRENGTH_SHAPE_DEFENCE[shape],
        ];
        let mut d = 0;
        while d < 4 {
            let level = board::level_in(code as u16, d) as usize;
            sums[0] += ORDER_ATTACK[level];
            sums[1] += ORDER_DEFENCE[level];
            sums[2] += STRENGTH_ATTACK[level];
            sums[3] += STRENGTH_DEFENCE[level];
            d += 1;
        }
        table[code] = sums;
        code += 1;
    }
    table
};

/// The order's hint and the strength of a cell whose codes are `mine` (the mover's) and
/// `theirs`, from one read of each code's row (the main search asks both of every move).
#[inline]
pub fn order_and_strength(mine: u16, theirs: u16) -> (i32, i32) {
    // Codes have twelve bits: the mask only spares the index check.
    let mine = &CODE_WEIGHTS[usize::from(mine) & 0xfff];
    let theirs = &CODE_WEIGHTS[usize::from(theirs) & 0xfff];
    (mine[0] + theirs[1], mine[2] + theirs[3])
}

/// The order's hint of a cell whose codes are `mine` (the mover's) and `theirs`.
#[inline]
pub fn order(mine: u16, theirs: u16) -> i32 {
    order_and_strength(mine, theirs).0
}

/// The strength of a cell whose codes are `mine` (the mover's) and `theirs`.
#[inline]
pub fn strength(mine: u16, theirs: u16) -> i32 {
    order_and_strength(mine, theirs).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::gomoku::patterns::{FIVE, FOUR, OPEN_THREE, TWO};

    /// A code with `level` in the first direction only.
    fn one_line(level: u8) -> u16 {
        u16::from(level)
    }

    #[test]
    fn the_order_and_the_strength_sum_their_own_weights() {
        let three = one_line(OPEN_THREE);
        assert_eq!(order(three, 0), ORDER_ATTACK[OPEN_THREE as usize]);
        assert_eq!(strength(three, 0), STRENGTH_ATTACK[OPEN_THREE as usize]);
        assert_eq!(order(0, three), ORDER_DEFENCE[OPEN_THREE as usize]);
        assert_eq!(strength(0, three), STRENGTH_DEFENCE[OPEN_THREE as usize]);
        // A four and an open three across two lines: both levels and the four-three shape.
        let four_three = u16::from(FOUR) | u16::from(OPEN_THREE) << 3 | u16::from(TWO) << 6;
        assert_eq!(
            strength(four_three, 0),
            STRENGTH_ATTACK[FOUR as usize]
                + STRENGTH_ATTACK[OPEN_THREE as usize]
                + STRENGTH_ATTACK[TWO as usize]
                + STRENGTH_SHAPE_ATTACK[board::FOUR_THREE]
        );
    }

    #[test]
    fn a_five_outranks_blocking_one_and_blocking_one_outranks_a_four_with_two_open_threes() {
        let five = one_line(FIVE);
        let crowded = u16::from(OPEN_THREE) | u16::from(OPEN_THREE) << 3 | u16::from(FOUR) << 6;
        for (hint, name) in [
            (order as fn(u16, u16) -> i32, "order"),
            (strength, "strength"),
        ] {
            assert!(hint(five, 0) > hint(0, five), "{name}");
            assert!(hint(0, five) > hint(crowded, crowded), "{name}");
        }
    }
}
