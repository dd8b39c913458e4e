//! Pons' score units, which the solver and the opening book both speak: a win for the side to
//! move on the very next move is worth `(cells + 1 - plies_played) / 2`, one less for every
//! two plies later; losses are the negatives; a draw is 0.
//!
//! Every score maps to an exact distance to the end and back, so the engine's `WIN - plies`
//! convention is recovered without loss. Kept apart from both users, so that neither reaches
//! into the other for it.

/// Exact plies to the end of a game whose value (Pons' units) is `score` for the side to move,
/// with `moves` plies played on a board of `cells` cells. A win ends on an odd ply (the side to
/// move plays last), a loss on an even one, a draw when the board is full.
pub fn distance_to_end(score: i32, moves: u32, cells: u32) -> u32 {
    let empty = (cells - moves) as i32;
    if score == 0 {
        return empty as u32;
    }
    // |score| = (empty + 2 - plies) / 2, rounded down: two candidate ply counts, one of each
    // parity; the outcome fixes the parity.
    let plies = empty + 2 - 2 * score.abs();
    let wants_odd = score > 0;
    let plies = if (plies % 2 == 1) == wants_odd {
        plies
    } else {
        plies - 1
    };
    plies as u32
}

/// Pons' score of a game that ends `plies` from now (inverse of [`distance_to_end`]).
pub fn score_from_distance(win: bool, plies: u32, moves: u32, cells: u32) -> i32 {
    let magnitude = (cells as i32 + 2 - moves as i32 - plies as i32) / 2;
    if win { magnitude } else { -magnitude }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_and_score_convert_both_ways() {
        // 7 x 6, 10 stones played: a win next ply is (42 + 1 - 10) / 2 = 16.
        assert_eq!(distance_to_end(16, 10, 42), 1);
        assert_eq!(distance_to_end(15, 10, 42), 3);
        assert_eq!(distance_to_end(-16, 10, 42), 2);
        assert_eq!(distance_to_end(0, 10, 42), 32);
        // Odd number of stones: a win next ply is (42 + 1 - 11) / 2 = 16 too.
        assert_eq!(distance_to_end(16, 11, 42), 1);
        assert_eq!(distance_to_end(-15, 11, 42), 2);
        for moves in 0..40 {
            for plies in 1..=(42 - moves) {
                let win = plies % 2 == 1;
                let score = score_from_distance(win, plies, moves, 42);
                assert_eq!(distance_to_end(score, moves, 42), plies, "{moves} {plies}");
            }
        }
    }
}
