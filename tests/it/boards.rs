//! Boards for tests, written as the stones on them: a test shows only its position, not rows
//! of empty cells.

use kibitz::games::{Grid, Stone};

/// The text rows (top to bottom, as `board` in a request) of a `rows` x `cols` board holding
/// only `stones`, each `(row, col, 'X' or 'O')`, 0-based from the top-left.
pub fn board(rows: usize, cols: usize, stones: &[(usize, usize, char)]) -> Vec<String> {
    let mut grid = Grid::empty(rows, cols);
    for &(row, col, letter) in stones {
        let stone = Stone::from_letter(letter)
            .filter(|&stone| stone != Stone::Empty)
            .unwrap_or_else(|| panic!("{letter:?} is not a stone: write 'X' or 'O'"));
        grid.set(row, col, stone);
    }
    grid.to_rows()
}

/// A 15x15 board (gomoku's standard one) holding only `stones`.
pub fn board15(stones: &[(usize, usize, char)]) -> Vec<String> {
    board(15, 15, stones)
}

/// A quiet 15x15 gomoku opening (X in the centre, O diagonally beside it): no threat to find,
/// so a search spends its whole budget deepening.
pub fn quiet_opening() -> Vec<String> {
    board15(&[(7, 7, 'X'), (8, 8, 'O')])
}

/// The rows of a `size` x `size` board that is empty but for `window`: its lines (blank ones and
/// the indentation skipped) are rows `top`, `top + 1`, ... written from the left edge, each
/// padded with empty cells on the right. A test writes the rows that hold its position and says
/// where they stand, not the empty rows around them; a string rather than an array, so that the
/// rows stay one under the other whatever the formatter does. Any character is kept (a test may
/// mark a cell with `*`).
pub fn window(size: usize, top: usize, window: &str) -> Vec<String> {
    let lines: Vec<&str> = window
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    assert!(
        top + lines.len() <= size && lines.iter().all(|row| row.chars().count() <= size),
        "a window of {} rows from row {top} does not fit a {size}x{size} board",
        lines.len()
    );
    let mut rows = vec![".".repeat(size); size];
    for (row, text) in rows[top..].iter_mut().zip(lines) {
        *row = format!("{text:.<size$}");
    }
    rows
}

/// Tic-tac-toe's eight lines, cells numbered 0..9 row by row.
pub const TICTACTOE_LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// Whether `stone` (`b'X'` or `b'O'`) holds a line of the tic-tac-toe board `cells` (row by
/// row, `b'.'` empty).
pub fn tictactoe_won(cells: &[u8; 9], stone: u8) -> bool {
    TICTACTOE_LINES
        .iter()
        .any(|line| line.iter().all(|&c| cells[c] == stone))
}

/// Every tic-tac-toe position a game can reach that is not over, with the side to move
/// (`b'X'` or `b'O'`): the boards (cells row by row, `b'.'` empty) with as many Xs as Os (X to
/// move, X starts) or one more, a cell free and no line of three; each is reached by playing
/// its stones in turn, as no line can stand before the last stone. In a fixed order: the board
/// read as a number in base 3, cell 0 the lowest digit, `.` `X` `O` the digits 0 1 2.
pub fn open_tictactoe_positions() -> Vec<([u8; 9], u8)> {
    (0..3u32.pow(9))
        .filter_map(|code| {
            let mut cells = [b'.'; 9];
            for (i, cell) in (0u32..).zip(cells.iter_mut()) {
                *cell = [b'.', b'X', b'O'][(code / 3u32.pow(i) % 3) as usize];
            }
            let count = |stone| cells.iter().filter(|&&c| c == stone).count();
            let (x, o) = (count(b'X'), count(b'O'));
            let to_move = match x.checked_sub(o) {
                Some(0) => b'X',
                Some(1) => b'O',
                _ => return None,
            };
            let over = x + o == 9 || tictactoe_won(&cells, b'X') || tictactoe_won(&cells, b'O');
            (!over).then_some((cells, to_move))
        })
        .collect()
}

/// The text rows (top to bottom, as `board` in a request) of the tic-tac-toe board `cells`.
pub fn tictactoe_rows(cells: &[u8; 9]) -> Vec<String> {
    cells
        .chunks(3)
        .map(|row| row.iter().map(|&c| char::from(c)).collect())
        .collect()
}

#[test]
fn a_window_stands_where_it_is_told_and_the_rest_is_empty() {
    let rows = window(
        5,
        2,
        "
        X.O
        ..*.X
        ",
    );
    assert_eq!(rows, [".....", ".....", "X.O..", "..*.X", "....."]);
    assert_eq!(window(3, 0, ""), ["...", "...", "..."]);
}

#[test]
#[should_panic(expected = "does not fit")]
fn a_window_that_does_not_fit_is_refused() {
    window(3, 2, "X\nO");
}

#[test]
fn the_open_tictactoe_positions_are_the_ones_play_from_the_empty_board_reaches() {
    use std::collections::BTreeMap;
    // Every position play reaches before the game is over, by walking the game tree.
    fn walk(cells: &mut [u8; 9], stone: u8, out: &mut BTreeMap<[u8; 9], u8>) {
        let other = if stone == b'X' { b'O' } else { b'X' };
        if tictactoe_won(cells, other) || !cells.contains(&b'.') || out.contains_key(cells) {
            return;
        }
        out.insert(*cells, stone);
        for i in 0..9 {
            if cells[i] == b'.' {
                cells[i] = stone;
                walk(cells, other, out);
                cells[i] = b'.';
            }
        }
    }
    let mut reached = BTreeMap::new();
    walk(&mut [b'.'; 9], b'X', &mut reached);
    let open: BTreeMap<[u8; 9], u8> = open_tictactoe_positions().into_iter().collect();
    assert_eq!(open.len(), 4520);
    assert_eq!(open, reached);
    assert_eq!(tictactoe_rows(b"X.O.X...O"), ["X.O", ".X.", "..O"]);
}
