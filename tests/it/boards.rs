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
