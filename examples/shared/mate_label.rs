//! How a labels file (`gomoku_eval_fit label --mates`) writes a forced win, shared by the fit
//! tool and the evaluation tests so that both read a mate alike. Included with `#[path]`: a
//! folder without a `main.rs` is no example of its own.

/// A forced win for the side to move is written as this less its plies, a loss as minus that:
/// far beyond any evaluation's score.
pub const MATE_LABEL: i32 = 20_000;

/// Whether a label's score is a mate rather than a judge's number.
pub fn is_mate(score: f64) -> bool {
    score.abs() >= f64::from(MATE_LABEL / 2)
}
