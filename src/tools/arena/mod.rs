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

pub mod classic;
pub mod external;
pub mod openings;
pub mod record;
pub mod referee;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::engine::{Game, Move, SearchLimits, SearchOptions, TranspositionTable};
use crate::games::BoardGame;
use crate::games::gomoku::Gomoku;
use external::{EngineFault, ExternalEngine};
use openings::{Opening, read_openings};
use record::{Ending, GameRecord, MoveRecord};
use referee::{Colour, Referee, RuleSet, Verdict};

pub use openings::{
    BalanceTest, Judge, kibitz_judge, make_balanced_openings, parse_moves, play_moves,
};

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
    /// File the game records are written to (default: `arena-<unix time>.games.txt`).
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

    fn names(&self) -> anyhow::Result<[&str; 2]> {
        match (&self.player, &self.opponent) {
            (Some(p), Some(o)) => Ok([p, o]),
            _ => bail!("a match needs two players"),
        }
    }

    fn forfeit_after(&self) -> Duration {
        Duration::from_millis(self.forfeit_ms.unwrap_or(self.ms * 5 + 2_000))
    }
}

/// A player's answer: the move and the depth it reported.
struct Answer {
    x: usize,
    y: usize,
    depth: Option<String>,
    /// External engines: the time from the last command sent (after the quiet gap) to the
    /// move, which is the engine's own thinking time.
    thinking: Option<Duration>,
}

/// A player in one game.
enum Player {
    Kibitz {
        ms: Option<u64>,
        table: TranspositionTable,
    },
    Random {
        state: u64,
    },
    Classic {
        depth: u32,
    },
    External {
        engine: Box<ExternalEngine>,
        /// Whether the engine has been sent the position (then only `TURN` follows).
        synced: bool,
    },
}

impl Player {
    fn new(spec: &str, seed: u64, quiet: Duration) -> anyhow::Result<Player> {
        let (kind, arg) = match spec.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (spec, None),
        };
        Ok(match kind {
            "kibitz" => Player::Kibitz {
                ms: arg.map(str::parse).transpose().context("kibitz:<ms>")?,
                table: TranspositionTable::with_megabytes(32),
            },
            "random" => Player::Random { state: seed | 1 },
            "classic" => Player::Classic {
                depth: arg
                    .map(str::parse)
                    .transpose()
                    .context("classic:<depth>")?
                    .unwrap_or(2),
            },
            "external" => {
                let command = arg.context("external:<command>")?;
                Player::External {
                    engine: Box::new(ExternalEngine::start(command, quiet)?),
                    synced: false,
                }
            }
            _ => bail!(
                "unknown player '{spec}': use kibitz[:ms], random, classic[:depth] or external:<command>"
            ),
        })
    }

    /// Prepares an external engine for a new game and waits until it answers.
    fn start(&mut self, args: &ArenaArgs) -> Result<(), EngineFault> {
        if let Player::External { engine, .. } = self {
            engine.new_game(args.size)?;
            engine.send(&format!("INFO timeout_turn {}", args.ms))?;
            engine.send("INFO timeout_match 100000000")?;
            engine.send("INFO time_left 100000000")?;
            engine.send("INFO max_memory 134217728")?;
            engine.send(&format!("INFO rule {}", args.rule.piskvork_code()))?;
            // Readiness: any answer to ABOUT shows the engine has read everything before it.
            engine.send("ABOUT")?;
            engine.reply(Duration::from_secs(30))?;
        }
        Ok(())
    }

    /// The player's move in `position`; `history` is every move so far, `ms` the budget.
    fn choose(
        &mut self,
        position: &Gomoku,
        history: &[Move],
        ms: u64,
        forfeit_after: Duration,
    ) -> Result<Answer, EngineFault> {
        let cols = position.cols();
        let xy = |mv: Move| (mv.index() % cols, mv.index() / cols);
        let answer = |mv: Move, depth: Option<String>| {
            let (x, y) = xy(mv);
            Answer {
                x,
                y,
                depth,
                thinking: None,
            }
        };
        let no_move = || EngineFault::Protocol("found no move".into());
        match self {
            Player::Kibitz { ms: own, table } => {
                let limits = SearchLimits::with_budget(Duration::from_millis(own.unwrap_or(ms)));
                // A panic in the engine is its crash: a forfeit, not the end of the match.
                let table = &*table;
                let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    position.think(&limits, SearchOptions::default(), table)
                }))
                .map_err(|_| EngineFault::Protocol("the engine panicked".into()))?;
                let mv = report.best_move.ok_or_else(no_move)?;
                Ok(answer(mv, Some(report.depth.to_string())))
            }
            Player::Random { state } => {
                let mut moves = Vec::new();
                position.legal_moves(&mut moves);
                // xorshift64*: plenty for picking moves.
                *state ^= *state >> 12;
                *state ^= *state << 25;
                *state ^= *state >> 27;
                let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
                let mv = moves
                    .get((r % moves.len().max(1) as u64) as usize)
                    .copied()
                    .ok_or_else(no_move)?;
                Ok(answer(mv, None))
            }
            Player::Classic { depth } => {
                let mv = classic::classic_move(position, *depth).ok_or_else(no_move)?;
                Ok(answer(mv, Some(depth.to_string())))
            }
            Player::External { engine, synced } => {
                if !*synced || history.is_empty() {
                    if history.is_empty() {
                        engine.send("BEGIN")?;
                    } else {
                        engine.send("BOARD")?;
                        // History alternates from black; 1 marks the engine's own stones.
                        let mine = history.len() % 2;
                        for (i, &mv) in history.iter().enumerate() {
                            let (x, y) = xy(mv);
                            let who = if i % 2 == mine { 1 } else { 2 };
                            engine.send(&format!("{x},{y},{who}"))?;
                        }
                        engine.send("DONE")?;
                    }
                    *synced = true;
                } else if let Some(&last) = history.last() {
                    let (x, y) = xy(last);
                    engine.send(&format!("TURN {x},{y}"))?;
                }
                let sent = Instant::now();
                let (x, y) = engine.move_reply(forfeit_after)?;
                Ok(Answer {
                    x,
                    y,
                    depth: engine.reported_depth(),
                    thinking: Some(sent.elapsed()),
                })
            }
        }
    }
}

/// One game's outcome for the match's first player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// Won on the board (a five, or the opponent's renju foul).
    Win,
    /// Lost on the board.
    Loss,
    /// The board filled up.
    Draw,
    /// The opponent forfeited: not a win.
    OpponentForfeit,
    /// The first player forfeited: not a loss on the board.
    PlayerForfeit,
}

/// Plays one game from `opening`; `first_is_black` says which colour the match's first player
/// has. Returns its record (with `number` 0; the match numbers the games).
pub fn play_game(
    args: &ArenaArgs,
    opening: &Opening,
    first_is_black: bool,
    seed: u64,
) -> anyhow::Result<GameRecord> {
    let names = args.names()?;
    let quiet = Duration::from_millis(args.quiet_ms);
    let rules = args.rule.engine_rules();
    let mut position = Gomoku::new(args.size, args.size, rules)?;
    let mut referee = Referee::new(args.size, args.rule);
    let mut history = play_moves(&mut position, &opening.stones).context("opening")?;
    for &(x, y) in &opening.stones {
        if referee.play(x, y).context("opening")? != Verdict::Continue {
            bail!("the opening {} ends the game", opening.label);
        }
    }
    // seat[0] plays black this game.
    let (black, white) = if first_is_black {
        (names[0], names[1])
    } else {
        (names[1], names[0])
    };
    let mut record = GameRecord {
        number: 0,
        opening_label: opening.label.clone(),
        opening: opening.stones.clone(),
        black: black.to_string(),
        white: white.to_string(),
        size: args.size,
        rule: format!("{:?}", args.rule).to_lowercase(),
        ms_per_move: args.ms,
        moves: Vec::new(),
        ending: Ending::Full,
    };
    let mut seats = Vec::with_capacity(2);
    for (colour, spec, salt) in [(Colour::Black, black, 0), (Colour::White, white, 0xA5A5)] {
        let started = Player::new(spec, seed ^ salt, quiet).and_then(|mut p| {
            p.start(args)?;
            Ok(p)
        });
        match started {
            Ok(player) => seats.push(player),
            Err(e) => {
                record.ending = Ending::Forfeit(colour, format!("could not start: {e:#}"));
                return Ok(record);
            }
        }
    }
    loop {
        let mover = referee.to_move();
        let seat = usize::from(mover == Colour::White);
        let asked = Instant::now();
        let choice = seats[seat].choose(&position, &history, args.ms, args.forfeit_after());
        let mut ms = asked.elapsed().as_millis() as u64;
        let answer = match choice {
            Ok(answer) if asked.elapsed() <= args.forfeit_after() => answer,
            Ok(_) => {
                let why = EngineFault::TimedOut(u128::from(ms)).to_string();
                record.ending = Ending::Forfeit(mover, why);
                return Ok(record);
            }
            Err(fault) => {
                record.ending = Ending::Forfeit(mover, fault.to_string());
                return Ok(record);
            }
        };
        if let Some(thinking) = answer.thinking {
            ms = thinking.as_millis() as u64;
        }
        let verdict = match referee.play(answer.x, answer.y) {
            Ok(verdict) => verdict,
            Err(illegal) => {
                record.ending = Ending::Forfeit(mover, format!("illegal move: {illegal}"));
                return Ok(record);
            }
        };
        record.moves.push(MoveRecord {
            x: answer.x,
            y: answer.y,
            ms,
            depth: answer.depth,
        });
        match verdict {
            Verdict::Continue => {}
            Verdict::Win => {
                record.ending = Ending::Five(mover);
                return Ok(record);
            }
            Verdict::Foul(why) => {
                record.ending = Ending::Foul(why);
                return Ok(record);
            }
            Verdict::Full => {
                record.ending = Ending::Full;
                return Ok(record);
            }
        }
        // The referee accepted the move, so the cell is empty on the engine's board too.
        let mv = position.move_at(answer.y, answer.x);
        position.make(mv);
        history.push(mv);
    }
}

/// The result of a game for the match's first player, from its record.
pub fn result_for_first(record: &GameRecord, first_is_black: bool) -> GameResult {
    let first = if first_is_black {
        Colour::Black
    } else {
        Colour::White
    };
    match &record.ending {
        Ending::Forfeit(colour, _) if *colour == first => GameResult::PlayerForfeit,
        Ending::Forfeit(..) => GameResult::OpponentForfeit,
        Ending::Full => GameResult::Draw,
        ending => match ending.winner_on_board() {
            Some(colour) if colour == first => GameResult::Win,
            _ => GameResult::Loss,
        },
    }
}

/// Wilson score interval at 95 % for `score` successes out of `n` trials (a match: `n` games,
/// a draw half a success). Counting each game as one trial overstates the spread of a score
/// with many draws (a draw varies less than a win or a loss), so the interval is a little wide
/// then, which errs on the safe side; `examples/levels.rs`, whose pairings draw a lot, passes
/// an effective number of games instead.
pub fn wilson_interval(score: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96;
    let p = score / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The tally of a match, for its first player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Games won on the board.
    pub wins: u32,
    /// Games lost on the board.
    pub losses: u32,
    pub draws: u32,
    /// Games the opponent forfeited (not wins).
    pub opponent_forfeits: u32,
    /// Games the first player forfeited (not losses).
    pub player_forfeits: u32,
    /// Games whose moves repeated an earlier game's, move for move.
    pub repeats: u32,
}

impl Tally {
    /// Games decided on the board: the ones the score is computed over.
    pub fn scored_games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    pub fn add(&mut self, result: GameResult) {
        match result {
            GameResult::Win => self.wins += 1,
            GameResult::Loss => self.losses += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::OpponentForfeit => self.opponent_forfeits += 1,
            GameResult::PlayerForfeit => self.player_forfeits += 1,
        }
    }

    /// Score fraction over the games decided on the board (a draw is half a win) and its 95 %
    /// Wilson interval; forfeits are left out.
    pub fn score(&self) -> (f64, f64, f64) {
        let n = self.scored_games() as f64;
        let s = self.wins as f64 + 0.5 * self.draws as f64;
        let (lo, hi) = wilson_interval(s, n);
        (if n > 0.0 { s / n } else { 0.0 }, lo, hi)
    }
}

/// A finished match: the tally and every game's record, in game order.
pub struct MatchReport {
    pub tally: Tally,
    pub games: Vec<GameRecord>,
}

/// Plays a whole match, printing a line per game and appending each record to `record_to`.
pub fn play_match(
    args: &ArenaArgs,
    record_to: Option<&mut (dyn Write + Send)>,
) -> anyhow::Result<MatchReport> {
    let names = args.names()?;
    let mut openings = read_openings(args.openings.as_deref(), args.size)?;
    if let Some(limit) = args.limit {
        openings.truncate(limit.max(1));
    }
    let per_round = openings.len() * 2;
    let games = per_round * args.rounds.max(1);
    let next = AtomicUsize::new(0);
    let finished: Mutex<Vec<(GameRecord, bool)>> = Mutex::new(Vec::new());
    let sink = Mutex::new(record_to);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let mut workers = Vec::new();
        for _ in 0..args.parallel.clamp(1, 2) {
            workers.push(scope.spawn(|| -> anyhow::Result<()> {
                loop {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    if game >= games {
                        return Ok(());
                    }
                    let in_round = game % per_round;
                    let first_is_black = in_round.is_multiple_of(2);
                    let opening = &openings[in_round / 2];
                    let mut record = play_game(args, opening, first_is_black, game as u64 + 1)?;
                    record.number = game + 1;
                    let result = result_for_first(&record, first_is_black);
                    let colour = if first_is_black { "black" } else { "white" };
                    println!(
                        "game {:>3} opening {:>2} {} as {colour}: {result:?} after {} moves ({})",
                        record.number,
                        in_round / 2 + 1,
                        names[0],
                        record.moves.len(),
                        record.ending
                    );
                    if args.verbose {
                        println!("{record}");
                    }
                    let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(out) = sink.as_mut() {
                        write!(out, "{record}")?;
                        out.flush()?;
                    }
                    drop(sink);
                    finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((record, first_is_black));
                }
            }));
        }
        for w in workers {
            w.join()
                .map_err(|_| anyhow::anyhow!("a game thread panicked"))??;
        }
        Ok(())
    })?;
    let mut finished = finished.into_inner().unwrap_or_else(|e| e.into_inner());
    finished.sort_by_key(|(r, _)| r.number);
    let mut tally = Tally::default();
    let mut seen: HashMap<Vec<(usize, usize)>, usize> = HashMap::new();
    for (record, first_is_black) in &finished {
        tally.add(result_for_first(record, *first_is_black));
        let count = seen.entry(record.all_stones()).or_insert(0);
        if *count > 0 {
            tally.repeats += 1;
        }
        *count += 1;
    }
    Ok(MatchReport {
        tally,
        games: finished.into_iter().map(|(r, _)| r).collect(),
    })
}

/// The summary line of a match.
pub fn summary(args: &ArenaArgs, report: &MatchReport) -> String {
    let t = &report.tally;
    let (score, lo, hi) = t.score();
    let names = args.names().unwrap_or(["?", "?"]);
    let slowest = |of_first: bool| {
        report
            .games
            .iter()
            .flat_map(|g| {
                let first_black = g.black == names[0];
                let parity = usize::from(first_black != of_first);
                let start = g.opening.len();
                g.moves
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| (start + i) % 2 == parity)
                    .map(|(_, m)| m.ms)
            })
            .max()
            .unwrap_or(0)
    };
    format!(
        "{} vs {}: {} games ({:?}, {} ms/move): on the board W {} L {} D {}, score {:.1}% \
         (95% CI {:.1}-{:.1}%) over {} games; forfeits (not scored): {} {}, {} {}; \
         repeated games {}; slowest move {} ms / {} ms",
        names[0],
        names[1],
        report.games.len(),
        args.rule,
        args.ms,
        t.wins,
        t.losses,
        t.draws,
        100.0 * score,
        100.0 * lo,
        100.0 * hi,
        t.scored_games(),
        names[0],
        t.player_forfeits,
        names[1],
        t.opponent_forfeits,
        t.repeats,
        slowest(true),
        slowest(false),
    )
}

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
        PathBuf::from(format!("arena-{now}.games.txt"))
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
