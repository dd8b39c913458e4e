//! An external piskvork engine driven as a subprocess over its stdin and stdout.
//!
//! A reader thread stamps each line the engine prints with the time it arrived and forwards it
//! into a channel, so every wait has a timeout: an engine that hangs or dies forfeits instead of
//! stalling the arena. Two courtesies keep the match fair to engines with timing quirks (Rapfi
//! drops a command that arrives within about 20 ms of its own move): nothing is sent within
//! the `quiet` gap ([`ExternalEngine::start`]) of the engine's last line, and after `START` the
//! arena waits for the engine to answer `ABOUT` before the first move. Chatter (`MESSAGE`,
//! `DEBUG`, ...) is skipped; the last `MESSAGE` before a move is kept for its reported depth and
//! score (the score is how an engine judges openings for `--make-openings --judge`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

/// Why an engine could not give a usable answer: each is a forfeit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineFault {
    #[error("timed out after {0} ms")]
    TimedOut(u128),
    #[error("exited (crash or END)")]
    Exited,
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// A running engine process.
pub struct ExternalEngine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<(Instant, String)>,
    /// When the engine last printed a line: the next command waits `quiet` past it.
    last_output: Instant,
    /// The least time between the engine's last line and our next command.
    quiet: Duration,
    /// The words after `depth` and after `eval`/`score` in the latest `MESSAGE` lines since the
    /// previous move that had them: engines report both there, but not always in their last
    /// line (Rapfi ends with a `Bestline` line).
    depth_word: Option<String>,
    score_word: Option<String>,
}

impl ExternalEngine {
    /// Starts `command` through `sh -c`, in its own directory when it names a path (engines
    /// often read their configuration from the working directory).
    pub fn start(command: &str, quiet: Duration) -> anyhow::Result<Self> {
        let mut process = Command::new("sh");
        process.arg("-c").arg(format!("exec {command}"));
        if let Some(program) = command.split_whitespace().next()
            && let Some(dir) = std::path::Path::new(program).parent()
            && !dir.as_os_str().is_empty()
        {
            let absolute = std::fs::canonicalize(program)
                .with_context(|| format!("engine '{program}' not found"))?;
            let rest: Vec<&str> = command.split_whitespace().skip(1).collect();
            process = Command::new("sh");
            process
                .arg("-c")
                .arg(format!("exec {} {}", absolute.display(), rest.join(" ")))
                .current_dir(dir);
        }
        let mut child = process
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start engine '{command}'"))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| anyhow!("engine has no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("engine has no stdout"))?;
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Ok(ExternalEngine {
            child,
            stdin,
            lines,
            last_output: Instant::now(),
            quiet,
            depth_word: None,
            score_word: None,
        })
    }

    /// Sends one command line, first waiting out the quiet gap after the engine's last line.
    pub fn send(&mut self, line: &str) -> Result<(), EngineFault> {
        let ready_at = self.last_output + self.quiet;
        let now = Instant::now();
        if ready_at > now {
            std::thread::sleep(ready_at - now);
        }
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|_| EngineFault::Exited)
    }

    /// The next reply line, skipping chatter, within `timeout`.
    pub fn reply(&mut self, timeout: Duration) -> Result<String, EngineFault> {
        let started = Instant::now();
        let deadline = started + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    self.last_output = at;
                    let text = line.trim();
                    let upper = text.to_ascii_uppercase();
                    if upper.starts_with("MESSAGE") {
                        if let Some(word) = word_after(text, &["depth"]) {
                            self.depth_word = Some(word.to_string());
                        }
                        if let Some(word) = word_after(text, &["eval", "score"]) {
                            self.score_word = Some(word.to_string());
                        }
                        continue;
                    }
                    if upper.is_empty()
                        || ["DEBUG", "SUGGEST", "INFO"]
                            .iter()
                            .any(|p| upper.starts_with(p))
                    {
                        continue;
                    }
                    return Ok(text.to_string());
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineFault::TimedOut(started.elapsed().as_millis()));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(EngineFault::Exited),
            }
        }
    }

    /// A reply that must be a move `x,y`; anything else (including `ERROR ...`) is a fault.
    pub fn move_reply(&mut self, timeout: Duration) -> Result<(usize, usize), EngineFault> {
        self.depth_word = None;
        self.score_word = None;
        let line = self.reply(timeout)?;
        parse_move(&line).ok_or(EngineFault::Protocol(format!(
            "replied '{line}', not a move"
        )))
    }

    /// The depth the engine reported in its latest `MESSAGE` with one before the move, if
    /// any: the token after the word `depth` (as in `depth 12` or Rapfi's `depth 9-17`).
    pub fn reported_depth(&self) -> Option<String> {
        let word = self.depth_word.as_deref()?;
        word.starts_with(|c: char| c.is_ascii_digit())
            .then(|| word.to_string())
    }

    /// `START size`, answered `OK`: a new game on an empty board.
    pub fn new_game(&mut self, size: usize) -> Result<(), EngineFault> {
        self.send(&format!("START {size}"))?;
        let ok = self.reply(Duration::from_secs(30))?;
        if !ok.eq_ignore_ascii_case("OK") {
            return Err(EngineFault::Protocol(format!("answered '{ok}' to START")));
        }
        Ok(())
    }

    /// The score the engine reported in its latest `MESSAGE` with one before the move, for the
    /// side it moved for: the whole number after the word `eval` (Rapfi's `Eval 43`) or
    /// `score` (kibitz's `score -24`). A mate notation (`+M9`) or no number is `None`, whatever
    /// an earlier line said.
    pub fn reported_score(&self) -> Option<i32> {
        self.score_word.as_deref()?.parse().ok()
    }

    /// The mate the engine reported in its latest `MESSAGE` with one before the move, in
    /// Rapfi's notation (`Eval +M9`: the side it moved for wins in 9 plies; `-M12`: loses in
    /// 12): the plies, negative for a loss. `None` when the score was a number or absent.
    pub fn reported_mate(&self) -> Option<i32> {
        mate_plies(self.score_word.as_deref()?)
    }

    /// Asks the engine, freshly started with `START`, for its score of the position reached by
    /// `stones` (black first) after `ms` of thought: the judge of
    /// [`make_balanced_openings`](super::make_balanced_openings) when the judge is an engine.
    pub fn judge(
        &mut self,
        size: usize,
        stones: &[(usize, usize)],
        ms: u64,
    ) -> Result<Option<i32>, EngineFault> {
        Ok(self.judge_with_move(size, stones, ms)?.1)
    }

    /// [`ExternalEngine::judge`] with the move the engine chose, `(x, y)`.
    pub fn judge_with_move(
        &mut self,
        size: usize,
        stones: &[(usize, usize)],
        ms: u64,
    ) -> Result<((usize, usize), Option<i32>), EngineFault> {
        self.new_game(size)?;
        self.send(&format!("INFO timeout_turn {ms}"))?;
        self.send("INFO max_memory 134217728")?;
        self.send("BOARD")?;
        // 1 marks the stones of the side to move (the engine's own).
        let mine = stones.len() % 2;
        for (i, (x, y)) in stones.iter().enumerate() {
            let who = if i % 2 == mine { 1 } else { 2 };
            self.send(&format!("{x},{y},{who}"))?;
        }
        self.send("DONE")?;
        let chosen = self.move_reply(Duration::from_millis(ms * 5 + 5_000))?;
        Ok((chosen, self.reported_score()))
    }
}

/// The word after the first of `keys` (any case) in an engine's `MESSAGE` line, without a
/// trailing comma.
fn word_after<'m>(message: &'m str, keys: &[&str]) -> Option<&'m str> {
    let mut words = message.split(|c: char| c.is_whitespace() || c == ':' || c == '=');
    words.find(|w| keys.iter().any(|k| w.eq_ignore_ascii_case(k)))?;
    words
        .find(|w| !w.is_empty())
        .map(|w| w.trim_end_matches(','))
}

/// A score word in mate notation (`+M9`, `M9`, `-M12`) as plies, negative for a loss.
fn mate_plies(word: &str) -> Option<i32> {
    let (sign, rest) = match word.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, word.strip_prefix('+').unwrap_or(word)),
    };
    let plies: i32 = rest.strip_prefix(['M', 'm'])?.parse().ok()?;
    Some(sign * plies)
}

/// Parses a move line `x,y`.
pub fn parse_move(line: &str) -> Option<(usize, usize)> {
    let (x, y) = line.split_once(',')?;
    Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
}

impl Drop for ExternalEngine {
    fn drop(&mut self) {
        let _ = self.send("END");
        // Give it a moment to exit cleanly, then make sure it is gone.
        let until = Instant::now() + Duration::from_millis(200);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mate_word_reads_as_plies_signed_for_the_side_that_moved() {
        assert_eq!(mate_plies("+M9"), Some(9));
        assert_eq!(mate_plies("M9"), Some(9));
        assert_eq!(mate_plies("-M12"), Some(-12));
        assert_eq!(mate_plies("43"), None);
        assert_eq!(mate_plies("-M"), None);
        assert_eq!(mate_plies("Mx"), None);
    }
}
