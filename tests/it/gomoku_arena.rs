//! The arena: wins only on the board, forfeits apart, records that replay, repeats counted.
//! Matches run at a few milliseconds a move over the first Gomocup opening.

use kibitz::tools::arena::openings::{GOMOCUP_2026_FREESTYLE_15, parse_openings};
use kibitz::tools::arena::record::Ending;
use kibitz::tools::arena::referee::{Referee, RuleSet, Verdict};
use kibitz::tools::arena::{
    ArenaArgs, MatchReport, Tally, parse_moves, play_match, wilson_interval,
};

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

/// A judge engine (a shell loop) that reports `Eval -20`, `Eval 500` and `Eval +M9` in turn
/// for the positions it is shown, and moves 7,7.
const ROTATING_JUDGE: &str = "external:sh -c 'n=0; while read -r line; do case $line in START*) echo OK;; DONE*) n=$((n+1)); case $((n % 3)) in 1) echo \"MESSAGE Depth 9 | Eval -20\";; 2) echo \"MESSAGE Depth 9 | Eval 500\";; 0) echo \"MESSAGE Depth 9 | Eval +M9\";; esac; echo 7,7;; esac; done'";

fn judged_by(judge: &str, count: usize) -> Vec<String> {
    kibitz::tools::arena::make_openings(&ArenaArgs {
        make_openings: Some(count),
        judge: judge.into(),
        judge_ms: 5,
        max_score: 60,
        quiet_ms: 1,
        ..ArenaArgs::new("kibitz", "kibitz")
    })
    .expect("openings")
}

#[test]
fn an_engine_judge_keeps_only_the_openings_it_scores_within_the_limit() {
    let lines = judged_by(ROTATING_JUDGE, 2);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("# 2 balanced openings made by `kibitz arena --make-openings 2"));
    assert!(lines[0].contains("--judge external:sh -c"), "{}", lines[0]);
    // Candidates 1 and 4 were scored -20; 2 and 5 (+500) and 3 (a mate) were not balanced.
    assert!(
        lines[1].ends_with("(score -20 for the side to move, draw 1)"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with("(score -20 for the side to move, draw 4)"),
        "{}",
        lines[2]
    );
    let openings = parse_openings(&lines.join("\n"), 15).expect("the lines are an openings file");
    assert!(openings.iter().all(|o| o.stones.len() == 5));
}

/// A judge that talks like Rapfi: its score is in a `MESSAGE` line, and a `Bestline` line comes
/// after it, just before the move.
const BESTLINE_JUDGE: &str = "external:sh -c 'while read -r line; do case $line in START*) echo OK;; DONE*) echo \"MESSAGE Speed 383K | Depth 13-15 | Eval -51 | Node 26K\"; echo \"MESSAGE Bestline I5 I8 J6\"; echo 8,4;; esac; done'";

#[test]
fn an_engine_judge_is_read_from_its_last_message_with_a_score_not_its_last_message() {
    let lines = judged_by(BESTLINE_JUDGE, 1);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].ends_with("(score -51 for the side to move, draw 1)"),
        "{}",
        lines[1]
    );
}

#[test]
fn a_judge_that_fails_stops_the_openings_with_an_error() {
    let made = kibitz::tools::arena::make_openings(&ArenaArgs {
        make_openings: Some(1),
        judge: "external:true".into(),
        judge_ms: 5,
        quiet_ms: 1,
        ..ArenaArgs::new("kibitz", "kibitz")
    });
    let error = made
        .expect_err("an engine that exits is no judge")
        .to_string();
    assert!(error.contains("the judge failed"), "{error}");
}

#[test]
fn kibitz_judges_the_openings_by_default() {
    let lines = judged_by("kibitz", 1);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let score: i32 = lines[1]
        .split("(score ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("a score in the comment");
    assert!(score.abs() <= 60, "{}", lines[1]);
}

#[test]
fn an_unknown_judge_is_refused() {
    let made = kibitz::tools::arena::make_openings(&ArenaArgs {
        make_openings: Some(1),
        judge: "oracle".into(),
        ..ArenaArgs::new("kibitz", "kibitz")
    });
    assert!(
        made.expect_err("no such judge")
            .to_string()
            .contains("unknown judge 'oracle'")
    );
}
