//! The HTTP layer.
//!
//! - [`tree`]: `POST /tree`, the teaching tree evaluator's JSON side.

pub mod tree;
