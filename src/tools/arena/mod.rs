//! The arena: plays two gomoku players against each other over a set of balanced openings,
//! each opening with both colours, at a fixed time per move, and reports a score that cannot
//! flatter.
//!
//! Its key idea is that only the board decides. The [`referee`] keeps its own board and
//! declares a win only for the rule set's winning line standing on it (or, under renju, a
//! black move on a forbidden point). A player that breaks the protocol, crashes, times out or
//! sends an illegal move forfeits: the game is reported in its own column and left out of the
//! headline score and its interval, so an opponent's fault is never counted as a win. External
//! engines are treated with care ([`external`]): a quiet gap after their every answer and a
//! readiness probe after `START`. Every game is written to a record file ([`record`]), and the
//! summary counts games that repeated another move for move (a deterministic pair of players
//! replays the same game from the same opening, which adds games but no information).
//!
//! Players are given as text: `kibitz[:ms]` (the engine; `ms` overrides the match's time per
//! move), `random` (a uniformly random legal move), `classic[:depth]` (the textbook baseline in
//! [`classic`]) and `external:<command>` (any piskvork engine).
//!
//! One job a file: the options (`args.rs`), the players (`players.rs`), the match loop
//! (`play.rs`), the tally, its score and interval and the summary line (`tally.rs`); here, the
//! command itself and the openings maker's entry.

pub mod classic;
pub mod external;
pub mod openings;
pub mod record;
pub mod referee;

mod args;
mod play;
mod players;
mod tally;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::games::gomoku::Gomoku;
use external::ExternalEngine;

pub use args::ArenaArgs;
pub use openings::{
    BalanceTest, Judge, kibitz_judge, make_balanced_openings, parse_moves, play_moves,
};
pub use play::{play_game, play_match};
pub use tally::{
    GameResult, MatchReport, Tally, result_for_first, score_interval, summary, wilson_interval,
};

/// `kibitz arena --make-openings N`: the openings file's lines, a header naming the command
/// first (the judge is part of what "balanced" means).
pub fn make_openings(args: &ArenaArgs) -> anyhow::Result<Vec<String>> {
    let count = args.make_openings.unwrap_or(0);
    let test = BalanceTest {
        judge_ms: args.judge_ms,
        max_score: args.max_score,
        ..BalanceTest::default()
    };
    let openings = match args.judge.split_once(':') {
        Some(("external", command)) => {
            let mut engine = ExternalEngine::start(command, Duration::from_millis(args.quiet_ms))?;
            let mut judge = |_: &Gomoku, stones: &[(usize, usize)], ms: u64| {
                engine
                    .judge(args.size, stones, ms)
                    .map_err(|fault| anyhow::anyhow!("the judge failed: {fault}"))
            };
            make_balanced_openings(count, args.seed, args.size, test, &mut judge)?
        }
        _ if args.judge == "kibitz" => {
            make_balanced_openings(count, args.seed, args.size, test, &mut kibitz_judge)?
        }
        _ => bail!(
            "unknown judge '{}': use kibitz or external:<command>",
            args.judge
        ),
    };
    let header = format!(
        "# {count} balanced openings made by `kibitz arena --make-openings {count} --seed {} --judge {} --judge-ms {} --max-score {}`",
        args.seed, args.judge, args.judge_ms, args.max_score
    );
    Ok(std::iter::once(header).chain(openings).collect())
}

/// `kibitz arena`: plays the match (or makes openings), writes the records and prints the
/// summary.
pub fn run_arena(args: &ArenaArgs) -> anyhow::Result<()> {
    if args.make_openings.is_some() {
        for line in make_openings(args)? {
            println!("{line}");
        }
        return Ok(());
    }
    let path = args.record.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // The process id too: two arenas started in the same second (one a core) wrote their
        // games into one file before.
        PathBuf::from(format!("arena-{now}-{}.games.txt", std::process::id()))
    });
    let mut file = std::fs::File::create(&path)
        .with_context(|| format!("cannot write the game records to {}", path.display()))?;
    let report = play_match(args, Some(&mut file))?;
    let line = summary(args, &report);
    writeln!(file, "{line}")?;
    println!("{line}");
    println!("game records: {}", path.display());
    Ok(())
}
