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
