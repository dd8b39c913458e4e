//! The contract between the search and a game's rules.
//!
//! The search is generic over [`Game`] and monomorphised per game, so every call below inlines
//! into the node loop: no dynamic dispatch and no allocation per node. A game keeps its state
//! mutable and is walked with [`Game::make`]/[`Game::unmake`] in place; its hash is maintained
//! incrementally by those two calls. Moves are opaque 16-bit codes ([`Move`]) that only the game
//! interprets, which keeps transposition-table entries and history tables game-agnostic.

use std::fmt;

/// A search score, always from the point of view of the side to move.
///
/// Heuristic scores lie strictly inside `(-MATE_BOUND, MATE_BOUND)`. Proven results use the
/// mate convention: a win whose last move is `p` plies from the search root scores `WIN - p`,
/// a loss `-(WIN - p)`, a draw `0`. So a sooner win and a later loss are both larger.
pub type Score = i32;

/// Score of a win on the very next ply is `WIN - 1`; of a position already won, `WIN`.
pub const WIN: Score = 1_000_000;

/// Deepest ply the search ever reaches from its root; bounds every per-ply array.
pub const MAX_PLY: usize = 128;

/// Any score at or beyond this magnitude is a proven win or loss.
pub const MATE_BOUND: Score = WIN - MAX_PLY as Score;

/// Larger than every score; the initial window is `(-INFINITY, INFINITY)`.
pub const INFINITY: Score = WIN + 1;

/// True when `score` is a proven win or loss (mate convention).
#[inline]
pub fn is_decisive(score: Score) -> bool {
    score.abs() >= MATE_BOUND
}

/// A move as an opaque code chosen by the game (a cell index, a column, ...).
///
/// Codes must be below [`Game::move_space`]; `Move::NONE` is never a legal move.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Move(pub u16);

impl Move {
    /// The absent move (empty table slot, no best move yet).
    pub const NONE: Move = Move(u16::MAX);

    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self == Move::NONE
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "Move(none)")
        } else {
            write!(f, "Move({})", self.0)
        }
    }
}

/// The two players. `First` moves first (X, black).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    First,
    Second,
}

impl Side {
    #[inline]
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for the first player, 1 for the second: an index for per-side tables.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The conventional board letter: `X` for the first player, `O` for the second.
    pub fn letter(self) -> char {
        match self {
            Side::First => 'X',
            Side::Second => 'O',
        }
    }
}

/// Whether the game is over, judged after the last move made.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Ongoing,
    /// The side to move has lost: the previous move completed a winning line.
    Lost,
    Draw,
}

/// The rules of one game, as the search sees them.
///
/// Required methods are the rules; provided methods are hooks a game may override where it knows
/// better than brute force. Every hook must keep the game value unchanged: the search relies on
/// that to stay exact (`tests/it/search_equivalence.rs` checks it against plain minimax).
pub trait Game: Clone + Send + Sync + 'static {
    /// One more than the largest move code this position can produce (sizes history tables).
    fn move_space(&self) -> usize;

    /// Hash of the position including the side to move, updated incrementally by make/unmake.
    /// Positions of one game kind that differ must differ in hash with overwhelming probability.
    fn hash(&self) -> u64;

    fn side_to_move(&self) -> Side;

    /// Plies played since the game's empty board.
    fn plies_played(&self) -> u32;

    /// Appends every legal move to `out` (which the caller has cleared). Empty iff the game is
    /// over. Used by plain minimax and for validating moves.
    fn legal_moves(&self, out: &mut Vec<Move>);

    fn make(&mut self, mv: Move);

    /// Undoes `mv`, which must be the last move made.
    fn unmake(&mut self, mv: Move);

    /// Whether the game ended with the last move.
    fn status(&self) -> Status;

    /// Heuristic value for the side to move, inside `(-MATE_BOUND, MATE_BOUND)`; called only on
    /// ongoing positions at the search horizon.
    fn evaluate(&self) -> Score;

    /// An upper bound on the plies left before the game must end. A search at least this deep
    /// never reaches its horizon, so its result is exact (that is how draws are proven).
    fn max_remaining_plies(&self) -> u32;

    /// Moves worth searching: a non-empty subset of the legal moves (when there are any) that
    /// contains a best move, e.g. only the blocks when the opponent threatens to win at once.
    fn search_moves(&self, out: &mut Vec<Move>) {
        self.legal_moves(out);
    }

    /// A move that wins at once for the side to move, if the game can see one cheaply.
    fn immediate_win(&self) -> Option<Move> {
        None
    }

    /// Whether the side to move must answer a threat at once (a four in gomoku, a check in
    /// chess). The search does not stop at its horizon in such a position: it searches the
    /// answers one ply further, so a forced reply is never judged statically. Keep it rare and
    /// narrow (the answers come from [`Game::search_moves`]).
    fn must_answer_threat(&self) -> bool {
        false
    }

    /// Ordering hint: larger is searched first. Table move, killers and history come on top.
    fn move_order_hint(&self, _mv: Move) -> i32 {
        0
    }
}
