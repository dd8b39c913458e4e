//! The heuristic evaluation used when a position cannot be solved within the budget.
//!
//! Two things decide most Connect-4 games that are not yet tactical: threats (empty cells that
//! would complete four) and central discs (they take part in the most lines). Threats are worth
//! more on the rows their owner can eventually claim by zugzwang: the first player wants odd rows
//! (1, 3, 5 counted from the bottom), the second even rows (Allis, "A knowledge-based approach of
//! Connect-Four", 1988). A threat directly playable by the side to move is a win the search has
//! already seen (immediate wins are checked before evaluating), so only the quiet ones count.
//!
//! A threat right above an opponent's threat is dead and counts for nothing: once the cell
//! below becomes playable, the opponent either wins there or the owner must block there, after
//! which the opponent blocks the cell above. Counting dead threats made the depth-16 and deeper
//! iterations on the empty board prefer column 2 (a draw) to the centre (the only win): lines
//! that stack threats on threats looked good when they were worth nothing.

use crate::engine::Score;

use super::position::{Geometry, Position};

/// A threat on a row its owner can claim by zugzwang.
const GOOD_THREAT: Score = 40;
/// Any other threat.
const THREAT: Score = 16;
/// A disc, per step closer to the centre column.
const CENTRALITY: Score = 3;

/// Heuristic value for the side to move, well inside `(-MATE_BOUND, MATE_BOUND)`: at most 64
/// threats and 64 discs, so `|score| < 64 * (40 + 3 * 6) < 4000`.
pub fn evaluate(g: &Geometry, pos: &Position) -> Score {
    let me = pos.current;
    let them = pos.opponent();
    let first_to_move = pos.moves.is_multiple_of(2);
    let (my_rows, their_rows) = if first_to_move {
        (g.odd_rows, g.board ^ g.odd_rows)
    } else {
        (g.board ^ g.odd_rows, g.odd_rows)
    };
    let (mine, theirs) = live_threats(
        g.winning_cells(me, pos.mask),
        g.winning_cells(them, pos.mask),
    );
    let threat_score = |threats: u64, good_rows: u64| {
        GOOD_THREAT * (threats & good_rows).count_ones() as Score
            + THREAT * (threats & !good_rows).count_ones() as Score
    };
    let mut score = threat_score(mine, my_rows) - threat_score(theirs, their_rows);
    for col in 0..g.width {
        // Distance from the centre in half-columns, so even widths weigh both middle columns.
        let off_centre = (2 * col as i32 - (g.width as i32 - 1)).abs();
        let weight = (g.width as i32 - off_centre) / 2 * CENTRALITY;
        let column = g.column_mask(col);
        score +=
            weight * ((me & column).count_ones() as Score - (them & column).count_ones() as Score);
    }
    score
}

/// Both sides' threats without the dead ones: a cell right above an opponent's threat (one bit
/// higher in the same column; the spare bit above each column keeps this from wrapping into the
/// next column) can never be claimed.
#[inline]
fn live_threats(mine: u64, theirs: u64) -> (u64, u64) {
    (mine & !(theirs << 1), theirs & !(mine << 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_central_disc_is_worth_more_than_an_edge_disc() {
        let g = Geometry::standard();
        let mut centre = Position::default();
        centre.play_column(&g, 3);
        let mut edge = Position::default();
        edge.play_column(&g, 0);
        // The side to move is the second player: a central opponent disc is worse for it.
        assert!(evaluate(&g, &centre) < evaluate(&g, &edge));
    }

    #[test]
    fn a_threat_right_above_an_opponent_threat_is_dead() {
        let g = Geometry::standard();
        // Column 0: an X threat on row 1 with an O threat on row 0 below it is dead; an X
        // threat on row 3 of column 1 with nothing of O's below it stays.
        let x_threats = g.bottom_of(0) << 1 | g.bottom_of(1) << 3;
        let o_threats = g.bottom_of(0);
        let (x_live, o_live) = live_threats(x_threats, o_threats);
        assert_eq!(x_live, g.bottom_of(1) << 3);
        assert_eq!(o_live, o_threats);
    }

    #[test]
    fn own_threats_count_for_the_side_to_move() {
        let g = Geometry::standard();
        let mut p = Position::default();
        // X: 1, 2, 3 on the bottom row (columns 1..=3); O stacks on column 6.
        for col in [1, 6, 2, 6, 3] {
            p.play_column(&g, col);
        }
        // O to move faces two X threats (columns 0 and 4).
        assert!(evaluate(&g, &p) < -2 * THREAT);
    }
}
