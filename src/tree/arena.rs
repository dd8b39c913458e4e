//! The tree itself: an arena of named nodes laid out breadth-first, and the builder every
//! input (bracket text, JSON nodes) feeds.
//!
//! Breadth-first means every node's children are one contiguous index range and every child
//! has a larger index than its parent, so the searches over it are plain loops. The
//! [`TreeBuilder`] checks each node against [`MAX_DEPTH`], [`MAX_NODES`] and the name rules the
//! moment it is opened, so a caller walking hostile input stops at the first error with bounded
//! memory.

use std::fmt;

/// Most nodes a tree may have.
pub const MAX_NODES: usize = 100_000;

/// Deepest a tree may be: edges on its longest root-to-leaf path (a lone leaf has depth 0).
pub const MAX_DEPTH: usize = 1_000;

/// Longest name, in characters (names are ASCII, so also in bytes).
pub const MAX_NAME_CHARS: usize = 64;

/// A node of one [`Tree`]; the root is always [`Tree::root`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub(super) u32);

impl NodeId {
    /// Position in the arena (breadth-first order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Node {
    pub(super) name: Box<str>,
    pub(super) kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Leaf(f64),
    /// Children are the arena slots `first..end`, never empty.
    Inner {
        first: u32,
        end: u32,
    },
}

/// A validated game tree: finite leaf values, every inner node with at least one child, names
/// checked, within [`MAX_NODES`] and [`MAX_DEPTH`]. Built only by [`TreeBuilder`] or
/// [`Tree::parse`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// Breadth-first: the root at 0, each node's children contiguous and after it.
    pub(super) nodes: Vec<Node>,
    pub(super) depth: usize,
}

impl Tree {
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Edges on the longest root-to-leaf path.
    pub fn depth(&self) -> usize {
        self.depth
    }

    pub fn name(&self, id: NodeId) -> &str {
        &self.nodes[id.index()].name
    }

    /// The leaf's value, or `None` for an inner node.
    pub fn value(&self, id: NodeId) -> Option<f64> {
        match self.nodes[id.index()].kind {
            Kind::Leaf(value) => Some(value),
            Kind::Inner { .. } => None,
        }
    }

    pub fn is_leaf(&self, id: NodeId) -> bool {
        self.value(id).is_some()
    }

    /// Children left to right (empty for a leaf).
    pub fn children(&self, id: NodeId) -> impl DoubleEndedIterator<Item = NodeId> + use<> {
        let range = match self.nodes[id.index()].kind {
            Kind::Leaf(_) => 0..0,
            Kind::Inner { first, end } => first..end,
        };
        range.map(NodeId)
    }
}

/// Why a tree cannot be built. The bracket parser wraps these in a
/// [`ParseError`](super::ParseError) with the position; the JSON layer adds a pointer to the
/// node.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TreeError {
    #[error("expected {expected}, found {found}")]
    Expected {
        expected: &'static str,
        found: Found,
    },
    #[error("a name cannot be empty")]
    EmptyName,
    #[error("the name has {chars} characters; at most {MAX_NAME_CHARS} are allowed")]
    NameTooLong { chars: usize },
    #[error("{found:?} cannot appear in a name; names are letters, digits and '_'")]
    BadNameChar { found: char },
    #[error("'{text}' is not a number; write an integer or a decimal such as 3, -2 or 0.5")]
    BadNumber { text: String },
    #[error("'{text}' is too large for a leaf value")]
    NumberOutOfRange { text: String },
    #[error("a leaf value must be a finite number")]
    NotFinite,
    #[error("the tree is deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("the tree has more than {MAX_NODES} nodes")]
    TooManyNodes,
    #[error(
        "inner node '{name}' has no children; give it at least one child or make it a leaf with a value"
    )]
    NoChildren { name: String },
    #[error("tree builder misuse: {0}")]
    Misuse(&'static str),
}

/// What the parser met where it expected something else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Char(char),
    End,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Debug quotes and escapes, so a newline shows as '\n'.
            Found::Char(c) => write!(f, "{c:?}"),
            Found::End => f.write_str("end of input"),
        }
    }
}

/// Checks a name: 1 to [`MAX_NAME_CHARS`] ASCII letters, digits or `_`.
pub fn check_name(name: &str) -> Result<(), TreeError> {
    name_problem(name).map_or(Ok(()), |(_, error)| Err(error))
}

/// The first problem with a name and its byte index in the name.
pub(super) fn name_problem(name: &str) -> Option<(usize, TreeError)> {
    if name.is_empty() {
        return Some((0, TreeError::EmptyName));
    }
    if let Some((at, found)) = name.char_indices().find(|&(_, c)| !is_name_char(c)) {
        return Some((at, TreeError::BadNameChar { found }));
    }
    // All ASCII from here, so bytes are characters.
    if name.len() > MAX_NAME_CHARS {
        return Some((0, TreeError::NameTooLong { chars: name.len() }));
    }
    None
}

pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Builds a [`Tree`] from a pre-order walk: [`open`](Self::open) an inner node, add its
/// children, [`close`](Self::close) it; [`leaf`](Self::leaf) adds a leaf. Every call checks the
/// limits before storing anything, so a caller walking hostile input can stop at the first
/// error with bounded memory.
#[derive(Debug, Default)]
pub struct TreeBuilder {
    /// Nodes in pre-order, each knowing its parent; laid out breadth-first by `finish`.
    pending: Vec<Pending>,
    /// Indices into `pending` of the inner nodes opened and not yet closed, outermost first.
    open: Vec<u32>,
    /// Whether the root is complete (a leaf, or its `close` was called).
    complete: bool,
    depth: usize,
}

#[derive(Debug)]
struct Pending {
    name: Box<str>,
    /// `u32::MAX` for the root.
    parent: u32,
    /// `None` for an inner node.
    value: Option<f64>,
    children: u32,
}

impl TreeBuilder {
    pub fn new() -> TreeBuilder {
        TreeBuilder::default()
    }

    /// Depth the next node would have: the number of inner nodes currently open.
    pub fn open_depth(&self) -> usize {
        self.open.len()
    }

    /// Starts an inner node; its children follow, then [`close`](Self::close).
    pub fn open(&mut self, name: &str) -> Result<(), TreeError> {
        let index = self.push(name, None)?;
        self.open.push(index);
        Ok(())
    }

    /// Adds a leaf to the innermost open node (or as the whole tree).
    pub fn leaf(&mut self, name: &str, value: f64) -> Result<(), TreeError> {
        if !value.is_finite() {
            return Err(TreeError::NotFinite);
        }
        self.push(name, Some(value))?;
        if self.open.is_empty() {
            self.complete = true;
        }
        Ok(())
    }

    /// Ends the innermost open node, which must have at least one child.
    pub fn close(&mut self) -> Result<(), TreeError> {
        let index = self
            .open
            .pop()
            .ok_or(TreeError::Misuse("close without an open node"))?;
        let node = &self.pending[index as usize];
        if node.children == 0 {
            return Err(TreeError::NoChildren {
                name: node.name.to_string(),
            });
        }
        if self.open.is_empty() {
            self.complete = true;
        }
        Ok(())
    }

    fn push(&mut self, name: &str, value: Option<f64>) -> Result<u32, TreeError> {
        if self.complete {
            return Err(TreeError::Misuse("the tree already has its root"));
        }
        let depth = self.open.len();
        if depth > MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        if self.pending.len() >= MAX_NODES {
            return Err(TreeError::TooManyNodes);
        }
        check_name(name)?;
        let parent = match self.open.last() {
            Some(&parent) => {
                self.pending[parent as usize].children += 1;
                parent
            }
            None => u32::MAX,
        };
        self.depth = self.depth.max(depth);
        // Fits: MAX_NODES is far below u32::MAX.
        let index = self.pending.len() as u32;
        self.pending.push(Pending {
            name: name.into(),
            parent,
            value,
            children: 0,
        });
        Ok(index)
    }

    /// The finished tree, laid out breadth-first.
    pub fn finish(self) -> Result<Tree, TreeError> {
        if self.pending.is_empty() {
            return Err(TreeError::Misuse("the tree is empty"));
        }
        if !self.complete {
            return Err(TreeError::Misuse("an inner node is still open"));
        }
        let mut pending = self.pending;
        let n = pending.len();
        // Children of each node in order, as one array sliced by `start` (pre-order visits
        // siblings left to right, so a stable fill keeps their order).
        let mut start = vec![0usize; n + 1];
        for node in &pending[1..] {
            start[node.parent as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; n - 1];
        for (i, node) in pending.iter().enumerate().skip(1) {
            let slot = &mut fill[node.parent as usize];
            kids[*slot] = i as u32;
            *slot += 1;
        }
        // Breadth-first: a node's children are appended to `order` together, so they get
        // consecutive new indices, all larger than their parent's.
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut nodes = Vec::with_capacity(n);
        order.push(0);
        let mut k = 0;
        while k < order.len() {
            let old = order[k] as usize;
            let node = &mut pending[old];
            let kind = match node.value {
                Some(value) => Kind::Leaf(value),
                None => {
                    let first = order.len() as u32;
                    order.extend_from_slice(&kids[start[old]..start[old + 1]]);
                    Kind::Inner {
                        first,
                        end: order.len() as u32,
                    }
                }
            };
            nodes.push(Node {
                name: std::mem::take(&mut node.name),
                kind,
            });
            k += 1;
        }
        Ok(Tree {
            nodes,
            depth: self.depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::test_trees::*;

    #[test]
    fn the_arena_keeps_children_in_order_and_reports_depth() {
        let tree = parse("[A, [B, [C, (D,1)]], (E,2), [F, (G,3), (H,4)]]");
        assert_eq!(tree.depth(), 3);
        assert_eq!(tree.node_count(), 8);
        let root_children: Vec<_> = tree.children(tree.root()).map(|c| tree.name(c)).collect();
        assert_eq!(root_children, ["B", "E", "F"]);
        let f = tree.children(tree.root()).nth(2).unwrap();
        let f_children: Vec<_> = tree.children(f).map(|c| tree.value(c)).collect();
        assert_eq!(f_children, [Some(3.0), Some(4.0)]);
    }

    #[test]
    fn the_builder_refuses_misuse_and_non_finite_values() {
        let mut builder = TreeBuilder::new();
        assert_eq!(builder.leaf("A", f64::NAN), Err(TreeError::NotFinite));
        assert!(matches!(builder.close(), Err(TreeError::Misuse(_))));
        builder.open("A").unwrap();
        assert_eq!(
            builder.close(),
            Err(TreeError::NoChildren { name: "A".into() })
        );
        let mut builder = TreeBuilder::new();
        builder.leaf("A", 1.0).unwrap();
        assert!(matches!(builder.leaf("B", 2.0), Err(TreeError::Misuse(_))));
        let mut builder = TreeBuilder::new();
        builder.open("A").unwrap();
        builder.leaf("B", 2.0).unwrap();
        assert!(matches!(builder.finish(), Err(TreeError::Misuse(_))));
        assert!(matches!(
            TreeBuilder::new().finish(),
            Err(TreeError::Misuse(_))
        ));
    }
}
