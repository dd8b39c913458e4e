//! Standard move notation, read and written: what other tools call a move.
//!
//! - Cells (tic-tac-toe, gomoku, renju): RIF notation, a column letter from `a` on the left and a
//!   row number from `1` at the **bottom** (`h8` is the centre of 15x15; `b2` the centre of
//!   tic-tac-toe). One letter is enough: no board is wider than 25 columns (`a`..`y`). A game
//!   reads as the names one after the other, with or without separators (`"h8 h9 i8"`,
//!   `"h8h9i8"`): a name is a letter and the digits after it.
//! - Columns (Connect-4): Pascal Pons' solver writes a game as its 1-based column digits
//!   (`"4455"`); letters (`"d d e e"`) are read too. A column is written as its 1-based number.
//!   A run of digits with no separator in the whole text is one column per digit (Pons'
//!   strings); with separators (space, comma, semicolon) each run is one number, so a board
//!   wider than 9 columns is written `"10 11 4"`.
//!
//! The grid the service reads counts rows from the top ([`Cell`]); only the names here count
//! from the bottom, as boards are drawn and as the playground labels its edges.

use super::Cell;

/// How a board's moves are named: its size and whether a move is a column (gravity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notation {
    pub rows: usize,
    pub cols: usize,
    /// A move is a column (Connect-4): its name is the 1-based column number.
    pub columns: bool,
}

/// A move as a name gives it: a cell, or a column (0-based) whose landing cell the position
/// decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Cell(Cell),
    Column(usize),
}

/// A name that cannot be read: which move of the text (0-based) and why, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    pub index: usize,
    pub reason: String,
}

/// A move's name, held inline (at most `y25` or `12`): copied with the cell, no allocation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; 4],
    len: u8,
}

impl Name {
    fn new(text: &str) -> Name {
        let mut bytes = [0; 4];
        let len = text.len().min(4);
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        Name {
            bytes,
            len: len as u8,
        }
    }

    pub fn as_str(&self) -> &str {
        // Built only from ASCII letters and digits.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Most columns a letter can name (`a`..`z`).
const LETTERS: usize = 26;

fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | ';')
}

impl Notation {
    /// The name of `cell` (0-based from the top-left) on this board.
    pub fn name(&self, cell: Cell) -> Name {
        if self.columns {
            return Name::new(&(cell.col + 1).to_string());
        }
        let letter = (b'a' + (cell.col % LETTERS) as u8) as char;
        let row = self.rows.saturating_sub(cell.row);
        Name::new(&format!("{letter}{row}"))
    }

    /// The letter naming column `col` (0-based), for messages.
    fn letter(col: usize) -> char {
        (b'a' + (col % LETTERS) as u8) as char
    }

    /// Reads one move's name (a JSON list's string element).
    pub fn parse_one(&self, text: &str) -> Result<Spot, String> {
        // One name alone: a column's digits are one number (`"10"` on a wide board).
        let spots = if self.columns && text.bytes().all(|b| b.is_ascii_digit()) {
            self.parse_columns_separated(text, true)
        } else {
            self.parse(text)
        }
        .map_err(|e| e.reason)?;
        match spots.as_slice() {
            [spot] => Ok(*spot),
            [] => Err("an empty name names no move".into()),
            _ => Err(format!(
                "\"{}\" names {} moves, not one",
                clip(text),
                spots.len()
            )),
        }
    }

    /// Reads a game written as names, in order.
    pub fn parse(&self, text: &str) -> Result<Vec<Spot>, NotationError> {
        if self.columns {
            self.parse_columns(text)
        } else {
            self.parse_cells(text)
        }
    }

    fn parse_cells(&self, text: &str) -> Result<Vec<Spot>, NotationError> {
        let mut spots = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if is_separator(c) {
                continue;
            }
            let index = spots.len();
            let fail = |reason: String| NotationError { index, reason };
            if !c.is_ascii_alphabetic() {
                return Err(fail(format!(
                    "'{c}' is not a cell name: a cell is a column letter and a row number, \
                     such as {}",
                    self.example()
                )));
            }
            let col = usize::from(c.to_ascii_lowercase() as u8 - b'a');
            let mut digits = String::new();
            while let Some(&d) = chars.peek() {
                if !d.is_ascii_digit() || digits.len() >= 3 {
                    break;
                }
                digits.push(d);
                chars.next();
            }
            if digits.is_empty() {
                return Err(fail(format!(
                    "'{c}' lacks its row number: a cell is a column letter and a row number, \
                     such as {}",
                    self.example()
                )));
            }
            let row: usize = digits.parse().unwrap_or(0);
            if col >= self.cols {
                return Err(fail(format!(
                    "{c}{digits}: column '{c}' is off the board (columns a to {} on a board {} \
                     wide)",
                    Self::letter(self.cols - 1),
                    self.cols
                )));
            }
            if row == 0 || row > self.rows {
                return Err(fail(format!(
                    "{c}{digits}: row {row} is off the board (rows 1 to {} from the bottom)",
                    self.rows
                )));
            }
            spots.push(Spot::Cell(Cell {
                row: self.rows - row,
                col,
            }));
        }
        Ok(spots)
    }

    fn parse_columns(&self, text: &str) -> Result<Vec<Spot>, NotationError> {
        self.parse_columns_separated(text, text.chars().any(is_separator))
    }

    /// Columns; `separated`: a run of digits is one number, else one column per digit.
    fn parse_columns_separated(
        &self,
        text: &str,
        separated: bool,
    ) -> Result<Vec<Spot>, NotationError> {
        let mut spots = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if is_separator(c) {
                continue;
            }
            let index = spots.len();
            let fail = |reason: String| NotationError { index, reason };
            let (col, written) = if c.is_ascii_alphabetic() {
                (
                    usize::from(c.to_ascii_lowercase() as u8 - b'a'),
                    c.to_string(),
                )
            } else if c.is_ascii_digit() {
                let mut digits = c.to_string();
                while separated
                    && let Some(&d) = chars.peek()
                    && d.is_ascii_digit()
                    && digits.len() < 3
                {
                    digits.push(d);
                    chars.next();
                }
                let number: usize = digits.parse().unwrap_or(0);
                if number == 0 {
                    return Err(fail(format!(
                        "column {digits}: columns are numbered from 1 on the left"
                    )));
                }
                (number - 1, digits)
            } else {
                return Err(fail(format!(
                    "'{c}' is not a column: write its number from 1 on the left (\"4455\") or \
                     its letter from a (\"d d e e\")"
                )));
            };
            if col >= self.cols {
                return Err(fail(format!(
                    "column {written} is off the board ({} columns: 1 to {}, a to {})",
                    self.cols,
                    self.cols,
                    Self::letter(self.cols - 1)
                )));
            }
            spots.push(Spot::Column(col));
        }
        Ok(spots)
    }

    fn example(&self) -> String {
        let centre = Cell {
            row: self.rows / 2,
            col: self.cols / 2,
        };
        self.name(centre).to_string()
    }
}

/// Shortens client text echoed in a message.
fn clip(text: &str) -> String {
    text.chars().take(20).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(rows: usize, cols: usize) -> Notation {
        Notation {
            rows,
            cols,
            columns: false,
        }
    }

    #[test]
    fn every_cell_of_every_size_reads_back_from_its_name() {
        for (rows, cols) in [
            (3, 3),
            (5, 5),
            (15, 15),
            (19, 19),
            (25, 25),
            (7, 12),
            (20, 6),
        ] {
            let notation = cells(rows, cols);
            let mut all = Vec::new();
            let mut text = String::new();
            for row in 0..rows {
                for col in 0..cols {
                    let cell = Cell { row, col };
                    let name = notation.name(cell);
                    assert_eq!(notation.parse_one(name.as_str()), Ok(Spot::Cell(cell)));
                    all.push(Spot::Cell(cell));
                    text.push_str(name.as_str());
                }
            }
            // Unseparated, as gomoku records are written.
            assert_eq!(notation.parse(&text), Ok(all));
        }
    }

    #[test]
    fn rows_count_from_the_bottom_and_columns_from_the_left() {
        let board = cells(15, 15);
        assert_eq!(board.name(Cell { row: 7, col: 7 }).as_str(), "h8");
        assert_eq!(board.name(Cell { row: 14, col: 0 }).as_str(), "a1");
        assert_eq!(board.name(Cell { row: 0, col: 14 }).as_str(), "o15");
        assert_eq!(cells(3, 3).name(Cell { row: 1, col: 1 }).as_str(), "b2");
        let game = board.parse("h8 H9, i8").unwrap();
        assert_eq!(
            game,
            [
                Spot::Cell(Cell { row: 7, col: 7 }),
                Spot::Cell(Cell { row: 6, col: 7 }),
                Spot::Cell(Cell { row: 7, col: 8 }),
            ]
        );
        assert_eq!(board.parse("h8h9i8").unwrap(), game);
    }

    #[test]
    fn bad_names_say_which_move_and_why() {
        let board = cells(15, 15);
        let err = board.parse("h8 h9 p3").unwrap_err();
        assert_eq!(err.index, 2);
        assert!(
            err.reason.contains("column 'p' is off the board"),
            "{err:?}"
        );
        let err = board.parse("h8 h16").unwrap_err();
        assert_eq!(err.index, 1);
        assert!(err.reason.contains("row 16"), "{err:?}");
        let err = board.parse("h8 h").unwrap_err();
        assert_eq!(err.index, 1);
        assert!(err.reason.contains("lacks its row"), "{err:?}");
        assert_eq!(board.parse("h0").unwrap_err().index, 0);
        assert!(board.parse("8h").is_err());
        assert!(board.parse_one("h8h9").is_err());
    }

    #[test]
    fn connect4_reads_pons_digits_letters_and_wide_numbers() {
        let c4 = Notation {
            rows: 6,
            cols: 7,
            columns: true,
        };
        let game: Vec<Spot> = [3, 3, 4, 4].map(Spot::Column).to_vec();
        assert_eq!(c4.parse("4455").unwrap(), game);
        assert_eq!(c4.parse("d d e e").unwrap(), game);
        assert_eq!(c4.parse("ddee").unwrap(), game);
        assert_eq!(c4.parse("4, 4, 5, 5").unwrap(), game);
        for col in 0..7 {
            let name = c4.name(Cell { row: 5, col });
            assert_eq!(c4.parse_one(name.as_str()), Ok(Spot::Column(col)));
        }
        let err = c4.parse("44805").unwrap_err();
        assert_eq!(err.index, 2);
        assert!(err.reason.contains("column 8 is off"), "{err:?}");
        assert_eq!(c4.parse("440").unwrap_err().index, 2);
        let wide = Notation {
            rows: 4,
            cols: 12,
            columns: true,
        };
        assert_eq!(
            wide.parse("10 12 1").unwrap(),
            [9, 11, 0].map(Spot::Column).to_vec()
        );
        for col in 0..12 {
            let name = wide.name(Cell { row: 0, col });
            assert_eq!(wide.parse_one(name.as_str()), Ok(Spot::Column(col)));
        }
    }
}
