//! The Gomocup "piskvork" engine protocol, so kibitz can play in any piskvork manager.
//!
//! One command a line on the input, replies on the output, coordinates `x,y` = column,row from
//! the top-left. Supported: `START n`, `RECTSTART w,h`, `RESTART`, `BEGIN`, `TURN x,y`,
//! `BOARD` ... `DONE` (`x,y,1` our stone, `x,y,2` the opponent's), `TAKEBACK x,y`,
//! `INFO key value` (`timeout_turn`, `timeout_match`, `time_left`, `max_memory`, `rule` with bit 0
//! = exactly five, bit 2 = renju, `thread_num`), `ABOUT` and `END`. Anything else gets `UNKNOWN`, bad input `ERROR`. The
//! transposition table lives for the whole session, so each move starts from what the previous
//! search left.

use std::io::{BufRead, Write};
use std::time::Duration;

use crate::engine::{
    Game, Move, SearchLimits, SearchOptions, SearchReport, Side, TranspositionTable,
};
use crate::games::BoardGame;
use crate::games::gomoku::{Gomoku, GomokuRules, Overline};

/// Budget used when the manager sends no time information (ms).
const DEFAULT_TURN_MS: u64 = 1_000;
/// Kept back from every turn for protocol and process overheads (ms).
const SAFETY_MS: u64 = 25;
/// Largest table a session allocates, whatever `max_memory` allows (MiB).
const MAX_TABLE_MB: usize = 64;
/// With a node budget (`kibitz pbrain --nodes`), the turn's time no longer stops the search;
/// this does, so that a budget too large for the machine still ends (seconds).
const NODE_BUDGET_TIME_CAP: Duration = Duration::from_secs(60);
/// Most search threads a session runs, whatever `thread_num` asks (a bound on what a manager
/// can make it spawn; only one helper has been measured, docs/journal/search.md).
pub const MAX_THREADS: usize = 8;

/// Session state of one piskvork conversation.
struct Session {
    position: Option<Gomoku>,
    rules: GomokuRules,
    timeout_turn_ms: u64,
    time_left_ms: Option<u64>,
    table: TranspositionTable,
    /// Search threads: the threat search runs `threads - 1` helpers (Lazy SMP, as the service
    /// does when a second core is idle). One unless `--threads` or `INFO thread_num` says more.
    threads: usize,
    /// A node budget a move instead of the clock (`--nodes`): with one thread the same
    /// conversation then gets the same moves on any machine, however loaded, which is what
    /// paired self-play between two builds needs.
    max_nodes: Option<u64>,
    /// Stones collected between `BOARD` and `DONE`: (col, row, who).
    board_stones: Option<Vec<(usize, usize, u8)>>,
}

/// Chooses a move for `position` within `budget`, reusing `table`.
pub fn choose_move(
    position: &Gomoku,
    budget: Duration,
    table: &TranspositionTable,
) -> Option<Move> {
    think(position, budget, table, 1, None).best_move
}

fn think(
    position: &Gomoku,
    budget: Duration,
    table: &TranspositionTable,
    threads: usize,
    max_nodes: Option<u64>,
) -> SearchReport {
    let limits = match max_nodes {
        Some(nodes) => SearchLimits {
            max_nodes: Some(nodes),
            ..SearchLimits::with_budget(NODE_BUDGET_TIME_CAP)
        },
        None => SearchLimits::with_budget(budget),
    };
    let options = SearchOptions {
        helper_threads: threads.saturating_sub(1),
        ..SearchOptions::default()
    };
    position.think(&limits, options, table)
}

/// The `MESSAGE` line a manager shows beside the move: depth, score, nodes, time and the line.
fn message(position: &Gomoku, report: &SearchReport, threads: usize) -> String {
    let pv: Vec<String> = report
        .pv
        .iter()
        .map(|&mv| {
            let cell = position.cell_of(mv);
            format!("{},{}", cell.col, cell.row)
        })
        .collect();
    let outcome = match report.proof {
        Some(proof) => format!(" {:?} in {}", proof.outcome, proof.plies_to_end),
        None => String::new(),
    };
    format!(
        "MESSAGE depth {} score {}{} nodes {} time {} ms threads {threads} pv {}",
        report.depth,
        report.score,
        outcome,
        report.nodes,
        report.elapsed.as_millis(),
        pv.join(" ")
    )
}

impl Session {
    fn new(threads: usize, max_nodes: Option<u64>) -> Self {
        let mut session = Session {
            threads: 1,
            position: None,
            rules: GomokuRules::default(),
            timeout_turn_ms: DEFAULT_TURN_MS,
            time_left_ms: None,
            table: TranspositionTable::with_megabytes(16),
            board_stones: None,
            max_nodes,
        };
        session.set_threads(threads);
        session
    }

    /// The one place the thread count is bounded, whether `--threads` or `thread_num` set it.
    fn set_threads(&mut self, threads: usize) {
        self.threads = threads.clamp(1, MAX_THREADS);
    }

    fn budget(&self) -> Duration {
        let mut ms = self.timeout_turn_ms.max(1);
        if let Some(left) = self.time_left_ms {
            // Never spend more than a tenth of what is left of the match.
            ms = ms.min(left / 10);
        }
        let ms = if ms > 4 * SAFETY_MS {
            ms - SAFETY_MS
        } else {
            ms * 3 / 4
        };
        Duration::from_millis(ms.max(1))
    }

    fn start(&mut self, cols: usize, rows: usize) -> String {
        match Gomoku::new(rows, cols, self.rules) {
            Ok(p) => {
                self.position = Some(p);
                "OK".into()
            }
            Err(e) => format!("ERROR {e}"),
        }
    }

    fn parse_xy(text: &str) -> Option<(usize, usize)> {
        let mut parts = text.trim().split(',');
        let x = parts.next()?.trim().parse().ok()?;
        let y = parts.next()?.trim().parse().ok()?;
        Some((x, y))
    }

    fn play_own_move(&mut self) -> String {
        let budget = self.budget();
        let Some(position) = self.position.as_mut() else {
            return "ERROR no game started (send START first)".into();
        };
        let report = think(position, budget, &self.table, self.threads, self.max_nodes);
        match report.best_move {
            Some(mv) => {
                let message = message(position, &report, self.threads);
                position.make(mv);
                let cell = position.cell_of(mv);
                format!("{message}\n{},{}", cell.col, cell.row)
            }
            None => "ERROR the game is over".into(),
        }
    }

    fn opponent_move(&mut self, text: &str) -> String {
        let Some((x, y)) = Self::parse_xy(text) else {
            return format!("ERROR bad coordinates '{}'", text.trim());
        };
        let Some(position) = self.position.as_mut() else {
            return "ERROR no game started (send START first)".into();
        };
        if x >= position.cols() || y >= position.rows() {
            return format!("ERROR {x},{y} is off the board");
        }
        let mv = position.move_at(y, x);
        if !position.is_legal(mv) {
            return format!("ERROR {x},{y} is not a legal move");
        }
        position.make(mv);
        self.play_own_move()
    }

    /// Rebuilds the position from a `BOARD` listing; we are to move.
    fn finish_board(&mut self, stones: Vec<(usize, usize, u8)>) -> String {
        let Some(old) = self.position.as_ref() else {
            return "ERROR no game started (send START first)".into();
        };
        let (rows, cols) = (old.rows(), old.cols());
        let own = stones.iter().filter(|s| s.2 == 1).count();
        let theirs = stones.len() - own;
        // We move now: with as many stones as the opponent we are the first player.
        let we = if own == theirs {
            Side::First
        } else {
            Side::Second
        };
        let mut text = vec![vec!['.'; cols]; rows];
        for &(x, y, who) in &stones {
            if x >= cols || y >= rows {
                return format!("ERROR {x},{y} is off the board");
            }
            let side = if who == 1 { we } else { we.other() };
            text[y][x] = side.letter();
        }
        let rows_text: Vec<String> = text.into_iter().map(|r| r.into_iter().collect()).collect();
        let position = crate::games::Grid::parse(&rows_text, crate::games::gomoku::MAX_SIDE)
            .and_then(|grid| Gomoku::from_grid(&grid, Some(we), &self.rules));
        match position {
            Ok(p) => {
                self.position = Some(p);
                self.play_own_move()
            }
            Err(e) => format!("ERROR {e}"),
        }
    }

    fn info(&mut self, rest: &str) {
        let mut parts = rest.split_whitespace();
        let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
            return;
        };
        let Ok(value) = value.parse::<u64>() else {
            return;
        };
        match key.to_ascii_lowercase().as_str() {
            "timeout_turn" if value > 0 => self.timeout_turn_ms = value,
            "thread_num" => self.set_threads(usize::try_from(value).unwrap_or(usize::MAX)),
            "time_left" => self.time_left_ms = Some(value),
            "max_memory" if value > 0 => {
                let mb = ((value / 2) >> 20).clamp(1, MAX_TABLE_MB as u64) as usize;
                self.table = TranspositionTable::with_megabytes(mb);
            }
            "rule" => {
                // Bit 0: exactly five; bit 2: renju (which has its own overline rule).
                self.rules.renju = value & 4 == 4;
                self.rules.overline = if value & 1 == 1 && !self.rules.renju {
                    Overline::NoWin
                } else {
                    Overline::Win
                };
                if let Some(p) = &self.position {
                    // Rules change the patterns, so rebuild the (normally still empty) board.
                    if p.plies_played() == 0 {
                        self.position = Gomoku::new(p.rows(), p.cols(), self.rules).ok();
                    }
                }
            }
            _ => {}
        }
    }

    /// Handles one input line; returns the reply, if any, and whether to stop.
    fn handle(&mut self, line: &str) -> (Option<String>, bool) {
        let line = line.trim();
        if let Some(stones) = self.board_stones.as_mut() {
            if line.eq_ignore_ascii_case("DONE") {
                let stones = self.board_stones.take().unwrap_or_default();
                return (Some(self.finish_board(stones)), false);
            }
            let mut parts = line.split(',');
            let parsed = (|| {
                let x = parts.next()?.trim().parse().ok()?;
                let y = parts.next()?.trim().parse().ok()?;
                let who = parts.next()?.trim().parse().ok()?;
                Some((x, y, who))
            })();
            return match parsed {
                Some(stone) => {
                    stones.push(stone);
                    (None, false)
                }
                None => (Some(format!("ERROR bad BOARD line '{line}'")), false),
            };
        }
        if line.is_empty() {
            return (None, false);
        }
        let (command, rest) = match line.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim()),
            None => (line, ""),
        };
        let reply = match command.to_ascii_uppercase().as_str() {
            "START" => match rest.parse::<usize>() {
                Ok(n) => self.start(n, n),
                Err(_) => format!("ERROR bad board size '{rest}'"),
            },
            "RECTSTART" => match Self::parse_xy(rest) {
                Some((w, h)) => self.start(w, h),
                None => format!("ERROR bad board size '{rest}'"),
            },
            "RESTART" => match self.position.as_ref().map(|p| (p.cols(), p.rows())) {
                Some((w, h)) => self.start(w, h),
                None => "ERROR no game started (send START first)".into(),
            },
            "BEGIN" => self.play_own_move(),
            "TURN" => self.opponent_move(rest),
            "BOARD" => {
                self.board_stones = Some(Vec::new());
                return (None, false);
            }
            "TAKEBACK" => match (Self::parse_xy(rest), self.position.as_mut()) {
                (Some((x, y)), Some(p)) if x < p.cols() && y < p.rows() => {
                    let mv = p.move_at(y, x);
                    if p.stone(y, x) == crate::games::Stone::Empty {
                        format!("ERROR {x},{y} is empty")
                    } else {
                        // Rebuild without that stone: a takeback may not be the last move.
                        let stones: Vec<_> = (0..p.rows() * p.cols())
                            .filter(|&c| c != mv.index())
                            .filter_map(|c| match p.stone(c / p.cols(), c % p.cols()) {
                                crate::games::Stone::Player(s) => Some((c, s)),
                                crate::games::Stone::Empty => None,
                            })
                            .collect();
                        let to_move = match p.stone(y, x) {
                            crate::games::Stone::Player(s) => s,
                            crate::games::Stone::Empty => p.side_to_move(),
                        };
                        match Gomoku::new(p.rows(), p.cols(), self.rules) {
                            Ok(mut fresh) => {
                                fresh.set_up(stones, to_move);
                                *p = fresh;
                                "OK".into()
                            }
                            Err(e) => format!("ERROR {e}"),
                        }
                    }
                }
                _ => format!("ERROR bad TAKEBACK '{rest}'"),
            },
            "INFO" => {
                self.info(rest);
                return (None, false);
            }
            "ABOUT" => {
                "name=\"kibitz\", version=\"0.1\", author=\"kibitz authors\", country=\"-\"".into()
            }
            "END" => return (None, true),
            _ => format!("UNKNOWN command '{command}'"),
        };
        (Some(reply), false)
    }
}

/// Runs a piskvork session until `END` or the end of the input, on one search thread until
/// `INFO thread_num` says otherwise.
pub fn run_pbrain<R: BufRead, W: Write>(input: R, output: W) -> std::io::Result<()> {
    run_pbrain_with(input, output, 1, None)
}

/// [`run_pbrain`] starting with `threads` search threads (at most [`MAX_THREADS`]), and with
/// `max_nodes` a node budget a move in place of the manager's time control.
pub fn run_pbrain_with<R: BufRead, W: Write>(
    input: R,
    mut output: W,
    threads: usize,
    max_nodes: Option<u64>,
) -> std::io::Result<()> {
    let mut session = Session::new(threads, max_nodes);
    for line in input.lines() {
        let line = line?;
        let (reply, stop) = session.handle(&line);
        if let Some(reply) = reply {
            writeln!(output, "{reply}")?;
            output.flush()?;
        }
        if stop {
            break;
        }
    }
    Ok(())
}
