//! The heuristic evaluation used when a position cannot be solved within the budget.
//!
//! Two things decide most Connect-4 games that are not yet tactical: threats (empty cells that
//! would complete four) and central discs (they take part in the most lines). Threats are worth
//! more on the rows their owner can eventually claim by zugzwang: the first player wants odd rows
//! (1, 3, 5 counted from the bottom), the second even rows (Allis, "A knowledge-based approach of
//! Connect-Four", 1988). A threat directly playable by the side to move is a win the search has
//! already seen (immediate wins are checked before evaluating), so only the quiet ones count.

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
    let first_to_move = pos.moves % 2 == 0;
    let (my_rows, their_rows) = if first_to_move {
        (g.odd_rows, g.board ^ g.odd_rows)
    } else {
        (g.board ^ g.odd_rows, g.odd_rows)
    };
    let mine = g.winning_cells(me, pos.mask);
    let theirs = g.winning_cells(them, pos.mask);
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
