//! Openings: the lists of stones a match starts its games from, their text format, the
//! Gomocup set built into the binary, and a maker of further balanced sets.
//!
//! Free-style gomoku from the empty board is a first-player win, so strength is only measured
//! from balanced openings, each played twice with colours swapped. One opening a line: `x,y`
//! cells (column,row, 0-based from the top-left), black first, separated by spaces; `#` starts
//! a comment. The same format is what the arena's game records print, so a finished game can
//! be replayed as an "opening".

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::engine::{Game, Move, SearchLimits, SearchOptions, Status, TranspositionTable};
use crate::games::BoardGame;
use crate::games::gomoku::{Gomoku, GomokuRules};

/// The 12 Gomocup 2026 free-style 15x15 tournament openings, built in so that `kibitz arena`
/// works from any directory. The same text is `tests/data/gomoku/openings-freestyle-15x15.txt`
/// (a test keeps the two equal).
pub const GOMOCUP_2026_FREESTYLE_15: &str = "\
11,1 8,2 7,4   # gomocup-2026-f15-01 (3 stones)
6,1 6,4 4,6 1,6 3,2   # gomocup-2026-f15-02 (5 stones)
7,7 8,8 10,5 6,8 10,8   # gomocup-2026-f15-03 (5 stones)
7,7 7,8 8,10 9,8 9,6   # gomocup-2026-f15-04 (5 stones)
7,7 7,8 7,10 8,10 9,8   # gomocup-2026-f15-05 (5 stones)
7,7 7,8 10,10 9,9 7,9   # gomocup-2026-f15-06 (5 stones)
13,1 11,3 13,5 9,3 10,5 12,3 10,3   # gomocup-2026-f15-07 (7 stones)
7,7 7,8 10,8 8,6 5,8   # gomocup-2026-f15-08 (5 stones)
12,2 13,3 14,4 14,5 13,6 12,7 11,6 10,4 10,3 10,6 8,5   # gomocup-2026-f15-09 (11 stones)
7,7 8,8 10,9 10,8 11,5   # gomocup-2026-f15-10 (5 stones)
7,7 8,8 10,6 8,6 5,7   # gomocup-2026-f15-11 (5 stones)
7,7 8,8 10,7 9,6 6,5   # gomocup-2026-f15-12 (5 stones)
";

/// One opening: its stones (black first) and its label (the line's comment, or its number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    pub stones: Vec<(usize, usize)>,
    pub label: String,
}

/// Parses an openings text; blank and comment-only lines are skipped.
pub fn parse_openings(text: &str, size: usize) -> anyhow::Result<Vec<Opening>> {
    let mut openings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let stones = parse_moves(line, size).with_context(|| format!("line {}", n + 1))?;
        if stones.is_empty() {
            continue;
        }
        let label = line
            .split_once('#')
            .map(|(_, comment)| comment.trim().to_string())
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| format!("line {}", n + 1));
        openings.push(Opening { stones, label });
    }
    if openings.is_empty() {
        bail!("no openings");
    }
    Ok(openings)
}

/// Reads an openings file, or the built-in Gomocup set when `path` is `None`.
pub fn read_openings(path: Option<&Path>, size: usize) -> anyhow::Result<Vec<Opening>> {
    match path {
        None => parse_openings(GOMOCUP_2026_FREESTYLE_15, size),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read openings file {}", path.display()))?;
            parse_openings(&text, size).with_context(|| format!("in {}", path.display()))
        }
    }
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

/// How [`make_balanced_openings`] draws and judges candidates.
#[derive(Clone, Copy, Debug)]
pub struct BalanceTest {
    /// Stones in an opening (black first; odd leaves white to move).
    pub stones: usize,
    /// Side of the central square the stones are drawn from.
    pub square: usize,
    /// Search time for judging a candidate.
    pub judge_ms: u64,
    /// Largest absolute score (side to move's view) a balanced opening may have.
    pub max_score: i32,
}

impl Default for BalanceTest {
    fn default() -> Self {
        BalanceTest {
            stones: 5,
            square: 7,
            judge_ms: 300,
            max_score: 150,
        }
    }
}

/// A judge of candidate openings: the score of `position` (reached by `stones`, black first)
/// for the side to move after `ms` of thought, or `None` when it found a forced win for either
/// side or gave no score (the candidate is then not balanced).
pub type Judge<'a> = dyn FnMut(&Gomoku, &[(usize, usize)], u64) -> anyhow::Result<Option<i32>> + 'a;

/// kibitz's own search as the judge: its score, or `None` when it proved a result.
pub fn kibitz_judge(
    position: &Gomoku,
    _: &[(usize, usize)],
    ms: u64,
) -> anyhow::Result<Option<i32>> {
    let table = TranspositionTable::with_megabytes(16);
    let limits = SearchLimits::with_budget(Duration::from_millis(ms));
    let report = position.think(&limits, SearchOptions::default(), &table);
    Ok(report.proof.is_none().then_some(report.score))
}

/// Draws random openings (stones uniformly on the empty cells of the central square, colours
/// alternating from black) and keeps those `judge` finds balanced: a score within `max_score`
/// for the side to move and no forced win. Deterministic for a seed up to the judge's timing.
/// Each line carries its score as a comment.
///
/// The judge decides what "balanced" means, so it should be stronger than the engines measured
/// on the set: kibitz judging itself kept openings that Rapfi scores +500 to +800 for white
/// (and white won them with either engine), which caps a paired-colour score near 75 %.
pub fn make_balanced_openings(
    count: usize,
    seed: u64,
    size: usize,
    test: BalanceTest,
    judge: &mut Judge<'_>,
) -> anyhow::Result<Vec<String>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let low = (size - test.square.min(size)) / 2;
    let mut lines = Vec::new();
    let mut drawn = 0u32;
    while lines.len() < count {
        drawn += 1;
        if drawn > 1_000 * count.max(1) as u32 {
            bail!("could not find {count} balanced openings");
        }
        let mut stones: Vec<(usize, usize)> = Vec::new();
        while stones.len() < test.stones {
            let x = low + (next() % test.square as u64) as usize;
            let y = low + (next() % test.square as u64) as usize;
            if !stones.contains(&(x, y)) {
                stones.push((x, y));
            }
        }
        let mut position = Gomoku::new(size, size, GomokuRules::default())?;
        play_moves(&mut position, &stones)?;
        if position.status() != Status::Ongoing {
            continue;
        }
        let Some(score) = judge(&position, &stones, test.judge_ms)? else {
            continue;
        };
        if score.abs() > test.max_score {
            continue;
        }
        let text: Vec<String> = stones.iter().map(|(x, y)| format!("{x},{y}")).collect();
        lines.push(format!(
            "{}   # balanced-{:02} (score {score} for the side to move, draw {drawn})",
            text.join(" "),
            lines.len() + 1,
        ));
    }
    Ok(lines)
}
