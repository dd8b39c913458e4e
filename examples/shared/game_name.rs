//! The games an example can be told to play with `--game`, shared by the examples that take
//! one (`levels`, `wdl_fit`) so that the names on their command lines agree. Included with
//! `#[path]`: a folder without a `main.rs` is no example of its own.

/// A game as `--game` names it: `tictactoe`, `connect4` or `gomoku`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GameName {
    Tictactoe,
    Connect4,
    Gomoku,
}
