//! The arena: plays two gomoku players against each other over a file of balanced openings,
//! each opening twice with colours swapped, at a fixed time per move, and prints the result with
//! a 95 % Wilson score interval.
//!
//! Players are given as text: `kibitz[:ms]` (the engine; `ms` overrides the match's time per
//! move), `random` (a uniformly random legal move), `classic[:depth]` (the textbook baseline in
//! [`classic`]) and `external:<command>` (any piskvork engine, see [`external`]). Free-style
//! gomoku from an empty board is a first-player win, so only balanced openings make the
//! percentages meaningful. A player that makes an illegal move, crashes or times out loses.

pub mod classic;
pub mod external;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::engine::{Game, Move, Side, Status, TranspositionTable};
use crate::games::gomoku::{Gomoku, GomokuRules, Overline, pbrain::choose_move};
use external::ExternalEngine;

/// Options of `kibitz arena`.
#[derive(clap::Args, Debug, Clone)]
pub struct ArenaArgs {
    /// The first player: `kibitz[:ms]`, `random`, `classic[:depth]` or `external:<command>`.
    pub player: String,
    /// The opponent, same forms.
    pub opponent: String,
    /// Openings file: one opening a line, `x,y` (column,row) stones, black first.
    #[arg(long, default_value = "tests/data/gomoku/openings-freestyle-15x15.txt")]
    pub openings: PathBuf,
    /// Time per move in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub ms: u64,
    /// Play only the first N openings (each twice).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Games played at the same time (1 or 2).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub parallel: u8,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    pub size: usize,
    /// Standard rule (exactly five wins) instead of free-style.
    #[arg(long)]
    pub exact_five: bool,
    /// Print every game's moves.
    #[arg(long)]
    pub verbose: bool,
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
        engine: ExternalEngine,
        /// Whether the engine has been sent the position (then only `TURN` follows).
        synced: bool,
    },
}

impl Player {
    fn new(spec: &str, seed: u64) -> anyhow::Result<Player> {
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
                    engine: ExternalEngine::start(command)?,
                    synced: false,
                }
            }
            _ => bail!(
                "unknown player '{spec}': use kibitz[:ms], random, classic[:depth] or external:<command>"
            ),
        })
    }

    /// Prepares an external engine for a new game.
    fn start(&mut self, size: usize, ms: u64, exact_five: bool) -> anyhow::Result<()> {
        if let Player::External { engine, .. } = self {
            engine.send(&format!("START {size}"))?;
            let ok = engine.reply(Duration::from_secs(30))?;
            if !ok.eq_ignore_ascii_case("OK") {
                bail!("engine answered '{ok}' to START");
            }
            engine.send(&format!("INFO timeout_turn {ms}"))?;
            engine.send("INFO timeout_match 100000000")?;
            engine.send("INFO time_left 100000000")?;
            engine.send("INFO max_memory 134217728")?;
            engine.send(&format!("INFO rule {}", u8::from(exact_five)))?;
        }
        Ok(())
    }

    /// The player's move in `position`; `history` is every move so far, `ms` the budget.
    fn choose(&mut self, position: &Gomoku, history: &[Move], ms: u64) -> anyhow::Result<Move> {
        match self {
            Player::Kibitz { ms: own, table } => {
                let budget = Duration::from_millis(own.unwrap_or(ms));
                choose_move(position, budget, table).context("kibitz found no move")
            }
            Player::Random { state } => {
                let mut moves = Vec::new();
                position.legal_moves(&mut moves);
                // xorshift64*: plenty for picking moves.
                *state ^= *state >> 12;
                *state ^= *state << 25;
                *state ^= *state >> 27;
                let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
                moves
                    .get((r % moves.len().max(1) as u64) as usize)
                    .copied()
                    .context("no legal move")
            }
            Player::Classic { depth } => {
                classic::classic_move(position, *depth).context("classic found no move")
            }
            Player::External { engine, synced } => {
                let timeout = Duration::from_millis(ms * 5 + 2_000);
                let cols = position.cols();
                let xy = |mv: Move| (mv.index() % cols, mv.index() / cols);
                if !*synced || history.is_empty() {
                    if history.is_empty() {
                        engine.send("BEGIN")?;
                    } else {
                        engine.send("BOARD")?;
                        let me = position.side_to_move();
                        // History alternates from black; 1 marks the engine's own stones.
                        for (i, &mv) in history.iter().enumerate() {
                            let side = if i % 2 == 0 {
                                Side::First
                            } else {
                                Side::Second
                            };
                            let (x, y) = xy(mv);
                            engine.send(&format!("{x},{y},{}", if side == me { 1 } else { 2 }))?;
                        }
                        engine.send("DONE")?;
                    }
                    *synced = true;
                } else if let Some(&last) = history.last() {
                    let (x, y) = xy(last);
                    engine.send(&format!("TURN {x},{y}"))?;
                }
                let (x, y) = engine.move_reply(timeout)?;
                if x >= cols || y >= position.rows() {
                    bail!("engine played {x},{y}, off the board");
                }
                Ok(position.move_at(y, x))
            }
        }
    }
}

/// How one game ended, for the first player of the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    Win,
    Loss,
    Draw,
}

/// Reads openings: each a list of cells, black first.
pub fn read_openings(
    path: &std::path::Path,
    size: usize,
) -> anyhow::Result<Vec<Vec<(usize, usize)>>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read openings file {}", path.display()))?;
    let mut openings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let stones = parse_moves(line, size).with_context(|| format!("line {}", n + 1))?;
        if !stones.is_empty() {
            openings.push(stones);
        }
    }
    if openings.is_empty() {
        bail!("no openings in {}", path.display());
    }
    Ok(openings)
}

/// Parses one opening or game record: `x,y` cells (column,row, 0-based), black first,
/// separated by spaces; `#` starts a comment.
pub fn parse_moves(line: &str, size: usize) -> anyhow::Result<Vec<(usize, usize)>> {
    let line = line.split('#').next().unwrap_or("").trim();
    let mut stones = Vec::new();
    for token in line.split_whitespace() {
        let (x, y) = token
            .split_once(',')
            .with_context(|| format!("'{token}' is not x,y"))?;
        let (x, y): (usize, usize) = (x.parse()?, y.parse()?);
        if x >= size || y >= size {
            bail!("{x},{y} is off a {size}x{size} board");
        }
        stones.push((x, y));
    }
    Ok(stones)
}

/// Plays `moves` (`(x, y)` = column,row) on `position`; every cell must be empty and the game
/// still on when it is played. Returns the moves played.
pub fn play_moves(position: &mut Gomoku, moves: &[(usize, usize)]) -> anyhow::Result<Vec<Move>> {
    let mut played = Vec::with_capacity(moves.len());
    for &(x, y) in moves {
        let mv = position.move_at(y, x);
        if !position.is_legal(mv) {
            bail!("{x},{y} is taken");
        }
        if position.status() != Status::Ongoing {
            bail!("{x},{y} is played after the game ended");
        }
        position.make(mv);
        played.push(mv);
    }
    Ok(played)
}

/// Plays one game from `opening`; `first_is_black` says which colour the match's first player
/// has. Returns the result for the match's first player and the moves.
pub fn play_game(
    args: &ArenaArgs,
    opening: &[(usize, usize)],
    first_is_black: bool,
    seed: u64,
) -> anyhow::Result<(GameResult, Vec<Move>, String)> {
    let rules = GomokuRules {
        win_length: 5,
        overline: if args.exact_five {
            Overline::NoWin
        } else {
            Overline::Win
        },
    };
    let mut position = Gomoku::new(args.size, args.size, rules)?;
    let mut history = play_moves(&mut position, opening).context("opening")?;
    let mut players = [
        Player::new(&args.player, seed)?,
        Player::new(&args.opponent, seed ^ 0xA5A5)?,
    ];
    for p in &mut players {
        p.start(args.size, args.ms, args.exact_five)?;
    }
    // players[0] is the match's first player; which stone colour it has this game:
    let first_side = if first_is_black {
        Side::First
    } else {
        Side::Second
    };
    let for_first = |winner: Side| {
        if winner == first_side {
            GameResult::Win
        } else {
            GameResult::Loss
        }
    };
    loop {
        match position.status() {
            Status::Lost => {
                let winner = position.side_to_move().other();
                return Ok((for_first(winner), history, "five".into()));
            }
            Status::Draw => return Ok((GameResult::Draw, history, "board full".into())),
            Status::Ongoing => {}
        }
        let mover = position.side_to_move();
        let index = usize::from(mover != first_side);
        let choice = players[index].choose(&position, &history, args.ms);
        match choice {
            Ok(mv) if position.is_legal(mv) => {
                position.make(mv);
                history.push(mv);
            }
            Ok(mv) => {
                let why = format!(
                    "illegal move {mv:?} by {}",
                    [&args.player, &args.opponent][index]
                );
                return Ok((for_first(mover.other()), history, why));
            }
            Err(e) => {
                let why = format!("{} failed: {e:#}", [&args.player, &args.opponent][index]);
                return Ok((for_first(mover.other()), history, why));
            }
        }
    }
}

/// Wilson score interval at 95 % for `score` successes out of `n`.
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

/// The tally of a match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

impl Tally {
    pub fn games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    /// Score fraction (a draw is half a win) and its 95 % interval.
    pub fn score(&self) -> (f64, f64, f64) {
        let n = self.games() as f64;
        let s = self.wins as f64 + 0.5 * self.draws as f64;
        let (lo, hi) = wilson_interval(s, n);
        (if n > 0.0 { s / n } else { 0.0 }, lo, hi)
    }
}

/// Plays a whole match and returns the tally for the first player, printing as it goes.
pub fn play_match(args: &ArenaArgs) -> anyhow::Result<Tally> {
    let mut openings = read_openings(&args.openings, args.size)?;
    if let Some(limit) = args.limit {
        openings.truncate(limit.max(1));
    }
    let games = openings.len() * 2;
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let cols = args.size;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let mut workers = Vec::new();
        for _ in 0..args.parallel.clamp(1, 2) {
            workers.push(scope.spawn(|| -> anyhow::Result<()> {
                loop {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    if game >= games {
                        return Ok(());
                    }
                    let first_is_black = game % 2 == 0;
                    let (result, moves, why) =
                        play_game(args, &openings[game / 2], first_is_black, game as u64 + 1)?;
                    let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                    match result {
                        GameResult::Win => t.wins += 1,
                        GameResult::Loss => t.losses += 1,
                        GameResult::Draw => t.draws += 1,
                    }
                    let colour = if first_is_black { "black" } else { "white" };
                    println!(
                        "game {:>2} opening {:>2} {} as {colour}: {:?} after {} moves ({why})",
                        game + 1,
                        game / 2 + 1,
                        args.player,
                        result,
                        moves.len()
                    );
                    if args.verbose {
                        let text: Vec<String> = moves
                            .iter()
                            .map(|m| format!("{},{}", m.index() % cols, m.index() / cols))
                            .collect();
                        println!("  moves: {}", text.join(" "));
                    }
                }
            }));
        }
        for w in workers {
            w.join()
                .map_err(|_| anyhow::anyhow!("a game thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(tally.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// `kibitz arena`: plays the match and prints the summary line.
pub fn run_arena(args: &ArenaArgs) -> anyhow::Result<()> {
    let tally = play_match(args)?;
    let (score, lo, hi) = tally.score();
    println!(
        "{} vs {}: {} games at {} ms/move: W {} L {} D {}, score {:.1}% (95% CI {:.1}-{:.1}%)",
        args.player,
        args.opponent,
        tally.games(),
        args.ms,
        tally.wins,
        tally.losses,
        tally.draws,
        100.0 * score,
        100.0 * lo,
        100.0 * hi
    );
    Ok(())
}
