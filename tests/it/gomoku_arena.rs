//! Arena smoke test: a two-game match over the first Gomocup opening, kibitz against the random
//! mover at a few milliseconds a move, and the interval arithmetic.

use std::path::PathBuf;

use kibitz::arena::{ArenaArgs, Tally, play_match, wilson_interval};

fn args(player: &str, opponent: &str) -> ArenaArgs {
    let openings = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/gomoku/openings-freestyle-15x15.txt"
    ));
    assert!(
        openings.exists(),
        "the openings file is missing: {}",
        openings.display()
    );
    ArenaArgs {
        player: player.into(),
        opponent: opponent.into(),
        openings,
        ms: 5,
        limit: Some(1),
        parallel: 1,
        size: 15,
        exact_five: false,
        verbose: false,
    }
}

#[test]
fn kibitz_beats_the_random_mover_with_both_colours() {
    let tally = play_match(&args("kibitz", "random")).expect("match");
    assert_eq!(
        tally,
        Tally {
            wins: 2,
            losses: 0,
            draws: 0
        }
    );
}

#[test]
fn the_random_mover_loses_to_kibitz_when_listed_first() {
    let tally = play_match(&args("random", "kibitz:5")).expect("match");
    assert_eq!(tally.losses, 2);
}

#[test]
fn wilson_interval_brackets_the_score() {
    let (lo, hi) = wilson_interval(22.0, 24.0);
    assert!(lo > 0.70 && lo < 0.76, "{lo}");
    assert!(hi > 0.97 && hi < 0.99, "{hi}");
    assert_eq!(wilson_interval(0.0, 0.0), (0.0, 1.0));
}
