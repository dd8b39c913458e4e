//! The players of a game: the engine itself (with its own table, as `POST /move` runs it), a
//! uniformly random mover, the textbook baseline of [`super::classic`] and any piskvork engine
//! ([`super::external`]), each asked for its move in the same way.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::args::ArenaArgs;
use super::classic;
use super::external::{EngineFault, ExternalEngine};
use crate::engine::{Game, Move, SearchLimits, SearchOptions, TranspositionTable};
use crate::games::BoardGame;
use crate::games::gomoku::Gomoku;

/// A player's answer: the move and the depth it reported.
pub(super) struct Answer {
    pub(super) x: usize,
    pub(super) y: usize,
    pub(super) depth: Option<String>,
    /// External engines: the time from the last command sent (after the quiet gap) to the
    /// move, which is the engine's own thinking time.
    pub(super) thinking: Option<Duration>,
}

/// A player in one game.
pub(super) enum Player {
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
    pub(super) fn new(spec: &str, seed: u64, quiet: Duration) -> anyhow::Result<Player> {
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
    pub(super) fn start(&mut self, args: &ArenaArgs) -> Result<(), EngineFault> {
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
    pub(super) fn choose(
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
