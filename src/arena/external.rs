//! An external piskvork engine driven as a subprocess over its stdin and stdout.
//!
//! A reader thread forwards the engine's lines into a channel so that every wait has a timeout:
//! an engine that hangs or dies loses the game instead of stalling the arena. Lines that are not
//! replies (`MESSAGE`, `DEBUG`, `SUGGEST`...) are skipped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

/// A running engine process.
pub struct ExternalEngine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl ExternalEngine {
    /// Starts `command` through `sh -c`, in its own directory when it names a path (engines
    /// often read their configuration from the working directory).
    pub fn start(command: &str) -> anyhow::Result<Self> {
        let mut process = Command::new("sh");
        process.arg("-c").arg(format!("exec {command}"));
        if let Some(program) = command.split_whitespace().next() {
            if let Some(dir) = std::path::Path::new(program).parent() {
                if !dir.as_os_str().is_empty() {
                    process.current_dir(dir);
                    let absolute = std::fs::canonicalize(program)
                        .with_context(|| format!("engine '{program}' not found"))?;
                    process = Command::new("sh");
                    let rest: Vec<&str> = command.split_whitespace().skip(1).collect();
                    process
                        .arg("-c")
                        .arg(format!("exec {} {}", absolute.display(), rest.join(" ")))
                        .current_dir(dir);
                }
            }
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
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(ExternalEngine {
            child,
            stdin,
            lines,
        })
    }

    pub fn send(&mut self, line: &str) -> anyhow::Result<()> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// The next reply line, skipping chatter, within `timeout`.
    pub fn reply(&mut self, timeout: Duration) -> anyhow::Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let upper = line.trim().to_ascii_uppercase();
                    if ["MESSAGE", "DEBUG", "SUGGEST", "INFO"]
                        .iter()
                        .any(|p| upper.starts_with(p))
                        || upper.is_empty()
                    {
                        continue;
                    }
                    if upper.starts_with("ERROR") {
                        bail!("engine error: {line}");
                    }
                    return Ok(line.trim().to_string());
                }
                Err(RecvTimeoutError::Timeout) => bail!("engine timed out"),
                Err(RecvTimeoutError::Disconnected) => bail!("engine exited"),
            }
        }
    }

    /// A reply that must be a move `x,y`.
    pub fn move_reply(&mut self, timeout: Duration) -> anyhow::Result<(usize, usize)> {
        let line = self.reply(timeout)?;
        let mut parts = line.split(',');
        let parse = |p: Option<&str>| p.and_then(|s| s.trim().parse::<usize>().ok());
        match (parse(parts.next()), parse(parts.next())) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => bail!("engine replied '{line}', not a move"),
        }
    }
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
