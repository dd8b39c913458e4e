//! The arena: wins only on the board, forfeits apart, records that replay, repeats counted.
//! Matches run at a few milliseconds a move over the first Gomocup opening.

use kibitz::arena::openings::{GOMOCUP_2026_FREESTYLE_15, parse_openings};
use kibitz::arena::record::Ending;
use kibitz::arena::referee::{Referee, RuleSet, Verdict};
use kibitz::arena::{ArenaArgs, MatchReport, Tally, parse_moves, play_match, wilson_interval};

fn args(player: &str, opponent: &str) -> ArenaArgs {
    ArenaArgs {
        ms: 5,
        limit: Some(1),
        ..ArenaArgs::new(player, opponent)
    }
}

fn play(args: &ArenaArgs) -> MatchReport {
    play_match(args, None).expect("match")
}

/// An engine (a shell loop) that answers START and ABOUT, then `reply` to every move request.
fn scripted_engine(reply: &str) -> String {
    format!(
        "external:sh -c 'while read -r line; do case $line in START*) echo OK;; ABOUT*) echo name=script;; BEGIN*|TURN*|DONE*) echo {reply};; esac; done'"
    )
}

#[test]
fn kibitz_beats_the_random_mover_with_both_colours() {
    let report = play(&args("kibitz", "random"));
    assert_eq!(
        report.tally,
        Tally {
            wins: 2,
            ..Tally::default()
        }
    );
    for game in &report.games {
        assert!(matches!(game.ending, Ending::Five(_)), "{}", game.ending);
    }
}

#[test]
fn the_random_mover_loses_to_kibitz_when_listed_first() {
    let report = play(&args("random", "kibitz:5"));
    assert_eq!(report.tally.losses, 2);
}

#[test]
fn an_engine_that_answers_garbage_forfeits_and_that_is_not_a_win() {
    let report = play(&args("kibitz", &scripted_engine("pass")));
    assert_eq!(
        report.tally,
        Tally {
            opponent_forfeits: 2,
            ..Tally::default()
        }
    );
    assert_eq!(report.tally.scored_games(), 0);
}

#[test]
fn an_engine_that_plays_a_taken_cell_forfeits() {
    // 7,7 is free after the first opening, so the engine's first 7,7 stands and its second is
    // on a taken cell.
    let report = play(&args(&scripted_engine("7,7"), "kibitz"));
    assert_eq!(report.tally.player_forfeits, 2);
    assert_eq!(report.tally.wins + report.tally.losses, 0);
    assert!(
        report
            .games
            .iter()
            .all(|g| matches!(&g.ending, Ending::Forfeit(_, why) if why.contains("taken"))),
        "{:?}",
        report
            .games
            .iter()
            .map(|g| g.ending.to_string())
            .collect::<Vec<_>>()
    );
}

#[test]
fn an_engine_that_exits_at_once_forfeits() {
    let report = play(&args("kibitz", "external:true"));
    assert_eq!(report.tally.opponent_forfeits, 2);
    assert_eq!(report.tally.wins, 0);
}

#[test]
fn forfeits_are_left_out_of_the_score() {
    let tally = Tally {
        wins: 1,
        losses: 1,
        opponent_forfeits: 10,
        ..Tally::default()
    };
    let (score, _, _) = tally.score();
    assert_eq!(score, 0.5);
    assert_eq!(tally.scored_games(), 2);
}

#[test]
fn a_record_replays_to_the_same_ending() {
    let report = play(&args("kibitz", "random"));
    for game in &report.games {
        let text = game.to_string();
        let replay = text
            .lines()
            .find_map(|l| l.strip_prefix("replay: "))
            .expect("a replay line");
        let stones = parse_moves(replay, 15).expect("replay parses");
        let mut referee = Referee::new(15, RuleSet::Freestyle);
        let mut last = Verdict::Continue;
        for (x, y) in stones {
            assert_eq!(last, Verdict::Continue);
            last = referee.play(x, y).expect("legal");
        }
        assert_eq!(last, Verdict::Win, "{text}");
        assert!(text.contains("wins with a five"));
    }
}

#[test]
fn deterministic_players_repeat_games_and_the_repeats_are_counted() {
    let report = play(&ArenaArgs {
        rounds: 2,
        ..args("classic:2", "classic:1")
    });
    assert_eq!(report.games.len(), 4);
    assert_eq!(report.tally.repeats, 2);
}

#[test]
fn renju_games_have_no_foul_by_kibitz() {
    let report = play(&ArenaArgs {
        rule: RuleSet::Renju,
        ..args("kibitz", "random")
    });
    assert_eq!(report.tally.wins, 2);
    assert!(
        report
            .games
            .iter()
            .all(|g| !matches!(g.ending, Ending::Foul(_)))
    );
}

#[test]
fn the_built_in_openings_are_the_test_data_file() {
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/gomoku/openings-freestyle-15x15.txt"
    ))
    .expect("openings file");
    assert_eq!(
        parse_openings(&file, 15).expect("file parses"),
        parse_openings(GOMOCUP_2026_FREESTYLE_15, 15).expect("built-in parses")
    );
}

#[test]
fn wilson_interval_brackets_the_score() {
    let (lo, hi) = wilson_interval(22.0, 24.0);
    assert!(lo > 0.70 && lo < 0.76, "{lo}");
    assert!(hi > 0.97 && hi < 0.99, "{hi}");
    assert_eq!(wilson_interval(0.0, 0.0), (0.0, 1.0));
}
