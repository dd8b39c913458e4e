//! The gomoku evaluation against the judge it was fitted to: Rapfi's scores at 100 ms in
//! positions of arena games (`tests/data/gomoku/rapfi-labels-15x15.txt`, made by
//! `examples/gomoku_eval_fit.rs label`), and at 50 ms in the first moves out of the opening
//! (`tests/data/gomoku/rapfi-labels-early-15x15.txt`, the early weights') and in positions of 24
//! stones or more (`tests/data/gomoku/rapfi-labels-late-15x15.txt`, the late weights' with the
//! first file's); and at 50 ms in the first moves out of the opening with the forced wins kept
//! (`tests/data/gomoku/rapfi-labels-early-mates-15x15.txt`, fitted with the early file); and at
//! 50 ms 10 to 30 plies after the opening with the forced wins kept
//! (`tests/data/gomoku/rapfi-labels-late-mates-15x15.txt`, fitted by none of the weights in use);
//! and at 50 ms in the first moves out of 200 openings of no other set, the forced wins kept
//! (`tests/data/gomoku/rapfi-labels-new-openings-mates-15x15.txt`, fitted by the move order
//! only, so that the early weights are judged on openings they never saw). Every fifth position
//! was held out of each fit; the tests read only those.

use std::ops::Range;

use kibitz::engine::Game;
use kibitz::games::gomoku::eval::EARLY_STONES;
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use kibitz::tools::arena::{parse_moves, play_moves};

pub(crate) const LABELS: &str = include_str!("../data/gomoku/rapfi-labels-15x15.txt");
pub(crate) const EARLY_LABELS: &str = include_str!("../data/gomoku/rapfi-labels-early-15x15.txt");
pub(crate) const LATE_LABELS: &str = include_str!("../data/gomoku/rapfi-labels-late-15x15.txt");
pub(crate) const EARLY_MATE_LABELS: &str =
    include_str!("../data/gomoku/rapfi-labels-early-mates-15x15.txt");
pub(crate) const LATE_MATE_LABELS: &str =
    include_str!("../data/gomoku/rapfi-labels-late-mates-15x15.txt");
pub(crate) const NEW_OPENINGS_MATE_LABELS: &str =
    include_str!("../data/gomoku/rapfi-labels-new-openings-mates-15x15.txt");

/// How `gomoku_eval_fit label --mates` writes a forced win (the fit tool's own reading of it).
#[path = "../../examples/shared/mate_label.rs"]
mod mate_label;

/// The score a mate was fitted as (`gomoku_eval_fit fit --mate-label 1000`).
const MATE_AS: f64 = 1_000.0;

/// The held-out labelled positions of `labels`: (judge's score, position, judge's move as
/// (column, row)). `#` lines are the file's description, not counted (as the fits do not count
/// them).
pub(crate) fn held_out(labels: &str) -> Vec<(f64, Gomoku, (usize, usize))> {
    labels
        .lines()
        .filter(|line| !line.starts_with('#'))
        .enumerate()
        .filter(|(n, _)| n % 5 == 0)
        .filter_map(|(_, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            let [score, moves, chosen] = fields[..] else {
                return None;
            };
            let mut position = Gomoku::new(15, 15, GomokuRules::default()).unwrap();
            play_moves(&mut position, &parse_moves(moves, 15).unwrap()).unwrap();
            let chosen = parse_moves(chosen, 15).unwrap()[0];
            Some((score.parse().unwrap(), position, chosen))
        })
        .collect()
}

fn win_probability(score: f64) -> f64 {
    1.0 / (1.0 + (-score / 200.0).exp())
}

/// The evaluation's squared error in win probability over `labels`' held-out positions of
/// `stones_in` stones, and a constant's (their mean). A mate (`label --mates`) counts as
/// [`MATE_AS`].
fn errors(labels: &str, stones_in: Range<u32>) -> (usize, f64, f64) {
    let data: Vec<(f64, f64)> = held_out(labels)
        .into_iter()
        .filter(|(_, p, _)| stones_in.contains(&p.board().stones))
        .map(|(score, p, chosen)| {
            if mate_label::is_mate(score) {
                (score.signum() * MATE_AS, p, chosen)
            } else {
                (score, p, chosen)
            }
        })
        .filter(|(score, _, _)| score.abs() <= 3000.0)
        .map(|(score, p, _)| (win_probability(score), win_probability(p.evaluate() as f64)))
        .collect();
    let mean = data.iter().map(|(y, _)| y).sum::<f64>() / data.len() as f64;
    let constant = data.iter().map(|(y, _)| (y - mean).powi(2)).sum::<f64>();
    let ours = data.iter().map(|(y, e)| (y - e).powi(2)).sum::<f64>();
    (data.len(), ours, constant)
}

/// Asserts that `labels` hold more than `least` held-out positions and that the evaluation's
/// error on them is below `share` of a constant's.
fn assert_error_below(labels: &str, least: usize, share: f64) {
    assert_error_below_in(labels, 0..u32::MAX, least, share);
}

/// [`assert_error_below`] on the positions of `stones_in` stones alone.
fn assert_error_below_in(labels: &str, stones_in: Range<u32>, least: usize, share: f64) {
    let (positions, ours, constant) = errors(labels, stones_in);
    assert!(positions > least, "{positions} held-out positions");
    assert!(
        ours < share * constant,
        "error {ours:.2} against a constant's {constant:.2} (share {:.3})",
        ours / constant
    );
}

#[test]
fn the_evaluation_predicts_the_judges_win_probability_far_better_than_a_constant() {
    // Measured when fitted: 0.0192 against 0.0463; the weights before scored 0.0244 (0.53 of
    // the constant's), which this bound refuses. With the early weights judging the boards of
    // fewer than 24 stones (2026-12-06): 0.42 of the constant's, as before them; with the late
    // weights refitted on today's games as well as these (2026-12-06 night): 0.455; with the
    // early weights refitted with the forced wins in view (2026-12-07): 0.467.
    assert_error_below(LABELS, 500, 0.48);
}

#[test]
fn the_first_moves_out_of_the_opening_are_judged_by_their_own_weights() {
    // Measured when fitted: 0.0196 against the constant's 0.0366 (0.54 of it); the late
    // weights of then alone scored 0.0236 there (0.64), which this bound refuses. Refitted with
    // the forced wins in view (2026-12-07): 0.603, the price of the test below.
    assert_error_below(EARLY_LABELS, 1800, 0.62);
}

#[test]
fn the_positions_of_24_stones_or_more_are_judged_by_weights_fitted_on_them() {
    // Measured when fitted: 0.41 of the constant's error (the fit's own figures: 0.0175
    // against 0.0439); the weights before scored 0.0253 there (0.58), which this bound refuses.
    assert_error_below(LATE_LABELS, 800, 0.48);
}

#[test]
fn the_first_moves_out_of_the_opening_are_judged_with_the_forced_wins_in_view() {
    // A forced win read as a score of 1,000 for the side that wins, as fitted: 0.837 of the
    // constant's error when fitted; the weights before, fitted without the forced wins, scored
    // 0.986 (hardly better than the constant), which this bound refuses.
    assert_error_below(EARLY_MATE_LABELS, 1100, 0.9);
}

#[test]
fn the_middle_games_boards_of_fewer_than_24_stones_are_judged_with_the_forced_wins_in_view() {
    // The boards of 15 to 23 stones of the middle-game file (10 to 18 plies after the opening),
    // which the early weights judge though no fit of theirs read one, a forced win read as a
    // score of 1,000: 0.705 of the constant's error for the early weights fitted with the
    // forced wins in view (2026-12-07), which carry over to these boards; the early weights
    // fitted without them scored 0.862, which this bound refuses. Fits that read these boards
    // erred less and played worse (docs/journal/gomoku.md, "The middle game's forced wins").
    assert_error_below_in(LATE_MATE_LABELS, 0..EARLY_STONES, 600, 0.78);
}

#[test]
fn openings_no_weights_were_fitted_on_are_judged_with_the_forced_wins_in_view() {
    // The early weights on the first moves out of 200 openings of no other set (2026-12-07), a
    // forced win read as a score of 1,000: 0.879 of the constant's error (the fit tool's
    // figures: 0.0643 against 0.0731), near the 0.837 they score on the openings they were
    // fitted on; a fit of these positions alone reaches 0.79. The early weights fitted without
    // the forced wins scored 0.986 on the file of the same kind two tests above (not measured
    // on this one); this bound refuses a score like that.
    assert_error_below(NEW_OPENINGS_MATE_LABELS, 900, 0.92);
}
