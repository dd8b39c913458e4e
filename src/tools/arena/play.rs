//! The match loop: one game from an opening to its end under the referee
//! ([`play_game`]), and a whole match, every opening with both colours, games run in parallel
//! up to `--parallel`, each record written as it ends ([`play_match`]).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::args::ArenaArgs;
use super::external::EngineFault;
use super::openings::{Opening, play_moves, read_openings};
use super::players::Player;
use super::record::{Ending, GameRecord, MoveRecord};
use super::referee::{Colour, Referee, Verdict};
use super::tally::{MatchReport, Tally, result_for_first};
use crate::engine::Game;
use crate::games::gomoku::Gomoku;

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
