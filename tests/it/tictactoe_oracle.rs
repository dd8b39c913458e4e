//! Tic-tac-toe solved by brute force, the oracle of the tests that check the engine and the
//! service against the game's true values: the exact value of a position and of each move
//! (mate convention: a win in n plies is `WIN - n`, for the side to move), and every reachable
//! unfinished position.

use std::collections::HashMap;

use kibitz::engine::{Game, Move, Status, WIN};
use kibitz::games::tictactoe::TicTacToe;

/// Exact values already computed, by position key.
pub type Memo = HashMap<u64, i32>;

/// The exact value of `position` for its side to move, memoised by its key.
pub fn exact(position: &mut TicTacToe, memo: &mut Memo) -> i32 {
    match position.status() {
        Status::Lost => return -WIN,
        Status::Draw => return 0,
        Status::Ongoing => {}
    }
    if let Some(&v) = memo.get(&position.hash()) {
        return v;
    }
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    let best = moves
        .into_iter()
        .map(|mv| move_value(position, mv, memo))
        .max()
        .unwrap_or(0);
    memo.insert(position.hash(), best);
    best
}

/// The exact value of playing `mv` in `position`, for the side that plays it.
pub fn move_value(position: &mut TicTacToe, mv: Move, memo: &mut Memo) -> i32 {
    position.make(mv);
    let child = -exact(position, memo);
    position.unmake(mv);
    // One ply further from the end: a win gets one ply later, a loss too.
    child - child.signum()
}

/// Every position reachable from the empty board that is not over (4,520), in key order.
pub fn unfinished_positions() -> Vec<TicTacToe> {
    fn walk(position: &mut TicTacToe, seen: &mut HashMap<u64, TicTacToe>) {
        if position.status() != Status::Ongoing || seen.contains_key(&position.hash()) {
            return;
        }
        seen.insert(position.hash(), position.clone());
        let mut moves = Vec::new();
        position.legal_moves(&mut moves);
        for mv in moves {
            position.make(mv);
            walk(position, seen);
            position.unmake(mv);
        }
    }
    let mut seen = HashMap::new();
    walk(&mut TicTacToe::new(), &mut seen);
    let mut positions: Vec<_> = seen.into_values().collect();
    positions.sort_by_key(|p| p.hash());
    positions
}
