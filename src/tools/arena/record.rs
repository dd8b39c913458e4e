//! Game records: every game of a match, kept in a text file a person can read and replay.
//!
//! A record names the players and colours, the opening, every move after it with the time it
//! took and the depth the player reported, how the game ended and the final board. Its `replay`
//! line lists all the stones from the empty board in the openings format, so a finished game can
//! be fed back to `kibitz arena --openings` or pasted into a piskvork manager.
//! [`read_records`] reads the games back, for the analysis tools (`examples/gomoku_*`).

use std::fmt;

use super::openings::parse_moves;
use super::referee::Colour;
use crate::games::gomoku::renju::Forbidden;

/// One move after the opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveRecord {
    pub x: usize,
    pub y: usize,
    /// Time the move took: in-process players from the question to the answer, external
    /// engines from the last command sent (after the quiet gap) to the move.
    pub ms: u64,
    /// The depth the player reported (kibitz's completed depth, an engine's `MESSAGE`).
    pub depth: Option<String>,
}

/// How a game ended, as the referee saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The colour's winning line stands on the board.
    Five(Colour),
    /// Renju: black played a forbidden point; white wins on the board.
    Foul(Forbidden),
    /// The board filled up.
    Full,
    /// The colour's player broke the protocol, crashed, timed out or sent an illegal move:
    /// no result on the board.
    Forfeit(Colour, String),
}

impl Ending {
    /// The colour that won on the board, if any.
    pub fn winner_on_board(&self) -> Option<Colour> {
        match self {
            Ending::Five(colour) => Some(*colour),
            Ending::Foul(_) => Some(Colour::White),
            Ending::Full | Ending::Forfeit(..) => None,
        }
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Five(colour) => write!(f, "{} wins with a five", colour.name()),
            Ending::Foul(why) => write!(
                f,
                "white wins: black played a forbidden point ({})",
                why.name()
            ),
            Ending::Full => write!(f, "draw: the board is full"),
            Ending::Forfeit(colour, why) => write!(f, "{} forfeits: {why}", colour.name()),
        }
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// 1-based number of the game in the match.
    pub number: usize,
    pub opening_label: String,
    pub opening: Vec<(usize, usize)>,
    pub black: String,
    pub white: String,
    pub size: usize,
    pub rule: String,
    pub ms_per_move: u64,
    pub moves: Vec<MoveRecord>,
    pub ending: Ending,
}

impl GameRecord {
    /// All stones from the empty board: the opening, then the game.
    pub fn all_stones(&self) -> Vec<(usize, usize)> {
        self.opening
            .iter()
            .copied()
            .chain(self.moves.iter().map(|m| (m.x, m.y)))
            .collect()
    }
}

/// Cells in the openings format, `x,y x,y ...`: the record's `opening` and `replay` lines, and
/// the position column of a labels file (`examples/gomoku_eval_fit.rs`).
pub fn cells_text(cells: &[(usize, usize)]) -> String {
    let text: Vec<String> = cells.iter().map(|(x, y)| format!("{x},{y}")).collect();
    text.join(" ")
}

impl fmt::Display for GameRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "[game {}] {}x{} {}, {} ms a move, opening {}",
            self.number, self.size, self.size, self.rule, self.ms_per_move, self.opening_label
        )?;
        writeln!(f, "black: {}", self.black)?;
        writeln!(f, "white: {}", self.white)?;
        writeln!(f, "opening: {}", cells_text(&self.opening))?;
        for (i, m) in self.moves.iter().enumerate() {
            let ply = self.opening.len() + i + 1;
            let colour = if ply % 2 == 1 { "black" } else { "white" };
            writeln!(
                f,
                "  {ply:>3} {colour} {:>2},{:<2} {:>5} ms  depth {}",
                m.x,
                m.y,
                m.ms,
                m.depth.as_deref().unwrap_or("-")
            )?;
        }
        writeln!(f, "result: {}", self.ending)?;
        writeln!(f, "replay: {}", cells_text(&self.all_stones()))?;
        let mut board = vec![vec!['.'; self.size]; self.size];
        for (i, (x, y)) in self.all_stones().into_iter().enumerate() {
            board[y][x] = if i % 2 == 0 { 'X' } else { 'O' };
        }
        for row in board {
            writeln!(f, "  {}", row.into_iter().collect::<String>())?;
        }
        writeln!(f)
    }
}

/// A game read back from a record: what the analysis tools need of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedGame {
    /// The header, after `[game `.
    pub title: String,
    pub black: String,
    pub white: String,
    pub opening: Vec<(usize, usize)>,
    /// Every stone from the empty board (the `replay` line).
    pub stones: Vec<(usize, usize)>,
    /// The colour that won on the board (`None`: a draw or a forfeit).
    pub winner: Option<Colour>,
}

/// Every game of a record's text, as [`GameRecord`]'s `Display` writes it, on a `size` board.
/// A game without a `replay` line (a record cut short) is skipped.
pub fn read_records(text: &str, size: usize) -> anyhow::Result<Vec<RecordedGame>> {
    let mut games = Vec::new();
    for game in text.split("[game ").skip(1) {
        let field = |key: &str| game.lines().find_map(|l| l.strip_prefix(key));
        let Some(replay) = field("replay: ") else {
            continue;
        };
        // Every on-board win is written "<colour> wins ..." (a renju foul: "white wins: ...").
        let result = field("result: ").unwrap_or("");
        let winner = [Colour::Black, Colour::White]
            .into_iter()
            .find(|c| result.starts_with(&format!("{} wins", c.name())));
        games.push(RecordedGame {
            title: game.lines().next().unwrap_or("").to_string(),
            black: field("black: ").unwrap_or("").to_string(),
            white: field("white: ").unwrap_or("").to_string(),
            opening: parse_moves(field("opening: ").unwrap_or(""), size)?,
            stones: parse_moves(replay, size)?,
            winner,
        });
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ending: Ending) -> GameRecord {
        GameRecord {
            number: 3,
            opening_label: "balanced-02".into(),
            opening: vec![(7, 7), (8, 8)],
            black: "kibitz".into(),
            white: "external:/bin/engine".into(),
            size: 15,
            rule: "freestyle".into(),
            ms_per_move: 200,
            moves: vec![MoveRecord {
                x: 9,
                y: 6,
                ms: 12,
                depth: Some("7".into()),
            }],
            ending,
        }
    }

    #[test]
    fn a_written_record_reads_back_with_its_players_stones_and_winner() {
        let text = format!(
            "{}{}",
            record(Ending::Five(Colour::White)),
            record(Ending::Full)
        );
        let games = read_records(&text, 15).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].black, "kibitz");
        assert_eq!(games[0].white, "external:/bin/engine");
        assert_eq!(games[0].opening, vec![(7, 7), (8, 8)]);
        assert_eq!(games[0].stones, vec![(7, 7), (8, 8), (9, 6)]);
        assert_eq!(games[0].winner, Some(Colour::White));
        assert!(games[0].title.starts_with("3] 15x15"));
        assert_eq!(games[1].winner, None);
    }

    #[test]
    fn a_renju_foul_reads_back_as_a_white_win_and_a_forfeit_as_none() {
        let foul = record(Ending::Foul(Forbidden::DoubleThree));
        let forfeit = record(Ending::Forfeit(Colour::Black, "timed out".into()));
        let games = read_records(&format!("{foul}{forfeit}"), 15).unwrap();
        assert_eq!(games[0].winner, Some(Colour::White));
        assert_eq!(games[1].winner, None);
    }
}
