//! Explicit game trees for teaching: a user writes a small tree, kibitz shows its minimax value
//! and exactly what textbook alpha-beta visits and prunes.
//!
//! The key idea is that nothing here recurses on the user's input. A [`Tree`] lives in an arena
//! laid out breadth-first, so every node's children are one contiguous index range and every
//! child has a larger index than its parent: minimax is then two plain loops (players forward,
//! values backward). The bracket parser and alpha-beta keep their own explicit stacks, and the
//! [`TreeBuilder`] both of them (and the JSON layer) feed refuses a node beyond [`MAX_DEPTH`] or
//! [`MAX_NODES`] the moment it is opened, so a 50,000-deep chain costs a clean error, never the
//! stack. Bracket syntax: an inner node is `[name, child, child, ...]`, a leaf `(name, value)`.
//!
//! - [`arena`]: the [`Tree`] (breadth-first arena), its limits and the [`TreeBuilder`].
//! - [`parse`]: bracket text to a tree.
//! - [`minimax`](mod@minimax): every node's exact value.
//! - [`alphabeta`](mod@alphabeta): textbook alpha-beta and its trace (visits, windows, cuts).
//! - [`evaluate`](mod@evaluate): both together, as `POST /tree` answers.
//!
//! Nothing here knows the engine or HTTP: the teaching trees are their own product, which
//! `api::tree` serves.

pub mod alphabeta;
pub mod arena;
pub mod evaluate;
pub mod minimax;
pub mod parse;
#[cfg(test)]
pub(crate) mod test_trees;

pub use alphabeta::{AlphaBeta, Cut, CutKind, Visit, alphabeta};
pub use arena::{
    Found, MAX_DEPTH, MAX_NAME_CHARS, MAX_NODES, NodeId, Tree, TreeBuilder, TreeError, check_name,
};
pub use evaluate::{Evaluation, evaluate};
pub use minimax::{Minimax, Player, minimax};
pub use parse::ParseError;
