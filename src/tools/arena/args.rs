//! `kibitz arena`'s options: the players, the time a move, the openings, the rules, the
//! forfeit and quiet-gap timings, and the openings maker's judge; and what they imply (the
//! players' names, when a silent player forfeits).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;

use super::referee::RuleSet;

/// Options of `kibitz arena`.
#[derive(clap::Args, Debug, Clone)]
pub struct ArenaArgs {
    /// The first player: `kibitz[:ms]`, `random`, `classic[:depth]` or `external:<command>`.
    #[arg(required_unless_present = "make_openings")]
    pub player: Option<String>,
    /// The opponent, same forms.
    #[arg(required_unless_present = "make_openings")]
    pub opponent: Option<String>,
    /// Openings file: one opening a line, `x,y` (column,row) stones, black first. Default: the
    /// 12 Gomocup 2026 free-style openings built into the binary.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Time per move in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub ms: u64,
    /// A player that takes longer than this for one move forfeits the game (default: five
    /// times `--ms` plus two seconds, lenient for a loaded machine; every move's time is
    /// recorded).
    #[arg(long)]
    pub forfeit_ms: Option<u64>,
    /// Least time between an external engine's last output line and the next command (ms).
    #[arg(long, default_value_t = 30)]
    pub quiet_ms: u64,
    /// Play only the first N openings (each with both colours).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Play every opening this many times with each colour.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Games played at the same time (1 or 2).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub parallel: u8,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    pub size: usize,
    /// Rule set (sent to engines as `INFO rule` 0, 1 or 4).
    #[arg(long, value_enum, default_value_t = RuleSet::Freestyle)]
    pub rule: RuleSet,
    /// File the game records are written to (default: `arena-<unix time>-<process id>.games.txt`).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Print every game's moves on the terminal too.
    #[arg(long)]
    pub verbose: bool,
    /// Instead of a match: print N balanced openings of your own (see `--seed`) and exit.
    #[arg(long)]
    pub make_openings: Option<usize>,
    /// Seed of `--make-openings`.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Who judges `--make-openings`' candidates: `kibitz` or `external:<command>` (a piskvork
    /// engine whose `MESSAGE` lines report `eval N` or `score N`, as Rapfi's and kibitz's do).
    /// Choose a judge stronger than the engines the set will measure.
    #[arg(long, default_value = "kibitz")]
    pub judge: String,
    /// Thinking time of the judge per candidate (ms).
    #[arg(long, default_value_t = 300)]
    pub judge_ms: u64,
    /// Largest absolute score, in the judge's units, of a balanced opening.
    #[arg(long, default_value_t = 150)]
    pub max_score: i32,
}

impl ArenaArgs {
    /// A match of `player` against `opponent` with every other option at its default.
    pub fn new(player: &str, opponent: &str) -> Self {
        ArenaArgs {
            player: Some(player.into()),
            opponent: Some(opponent.into()),
            openings: None,
            ms: 200,
            forfeit_ms: None,
            quiet_ms: 30,
            limit: None,
            rounds: 1,
            parallel: 1,
            size: 15,
            rule: RuleSet::Freestyle,
            record: None,
            verbose: false,
            make_openings: None,
            seed: 2026,
            judge: "kibitz".into(),
            judge_ms: 300,
            max_score: 150,
        }
    }

    pub(super) fn names(&self) -> anyhow::Result<[&str; 2]> {
        match (&self.player, &self.opponent) {
            (Some(p), Some(o)) => Ok([p, o]),
            _ => bail!("a match needs two players"),
        }
    }

    pub(super) fn forfeit_after(&self) -> Duration {
        Duration::from_millis(self.forfeit_ms.unwrap_or(self.ms * 5 + 2_000))
    }
}
