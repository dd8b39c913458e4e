//! Plain minimax over the whole tree: every node's exact value, the best child and the
//! principal line.
//!
//! No recursion: players are set parents-first and values children-first, which the
//! breadth-first arena makes two loops.

use super::arena::{Kind, NodeId, Tree};

/// Who moves at a node: the root's player, alternating by depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Player {
    #[default]
    Max,
    Min,
}

impl Player {
    pub fn other(self) -> Player {
        match self {
            Player::Max => Player::Min,
            Player::Min => Player::Max,
        }
    }
}

/// Plain minimax: every node's exact value.
#[derive(Clone, Debug, PartialEq)]
pub struct Minimax {
    /// Indexed by [`NodeId::index`].
    pub values: Vec<f64>,
    /// Nodes visited: all of them.
    pub nodes: usize,
    /// Leaves evaluated: all of them.
    pub leaves: usize,
}

impl Minimax {
    pub fn value(&self) -> f64 {
        self.values[0]
    }

    /// The first child of `node` achieving its value (`None` for a leaf).
    pub fn best_child(&self, tree: &Tree, node: NodeId) -> Option<NodeId> {
        let target = self.values[node.index()];
        tree.children(node)
            .find(|child| self.values[child.index()] == target)
    }

    /// The principal line from the root to a leaf, first child on ties.
    pub fn principal_line(&self, tree: &Tree) -> Vec<NodeId> {
        let mut line = vec![tree.root()];
        let mut node = tree.root();
        while let Some(child) = self.best_child(tree, node) {
            line.push(child);
            node = child;
        }
        line
    }
}

/// Minimax over the whole tree. No recursion: players are set parents-first and values
/// children-first, which the breadth-first arena makes two loops.
pub fn minimax(tree: &Tree, root: Player) -> Minimax {
    let n = tree.nodes.len();
    let mut players = vec![root; n];
    for (i, node) in tree.nodes.iter().enumerate() {
        if let Kind::Inner { first, end } = node.kind {
            let child_player = players[i].other();
            players[first as usize..end as usize].fill(child_player);
        }
    }
    let mut values = vec![0.0; n];
    let mut leaves = 0;
    for i in (0..n).rev() {
        values[i] = match tree.nodes[i].kind {
            Kind::Leaf(value) => {
                leaves += 1;
                value
            }
            Kind::Inner { first, end } => {
                let children = values[first as usize..end as usize].iter().copied();
                match players[i] {
                    Player::Max => children.fold(f64::NEG_INFINITY, f64::max),
                    Player::Min => children.fold(f64::INFINITY, f64::min),
                }
            }
        };
    }
    Minimax {
        values,
        nodes: n,
        leaves,
    }
}

#[cfg(test)]
mod tests {
    use crate::tree::test_trees::*;
    use crate::tree::{Player, evaluate};

    #[test]
    fn ties_go_to_the_first_child_in_order() {
        let tree = parse("[A, [B, (E,4), (F,4)], [C, (G,4)], [D, (H,1)]]");
        let eval = evaluate(&tree, Player::Max, false);
        assert_eq!(eval.best.map(|b| tree.name(b)), Some("B"));
        assert_eq!(names(&tree, &eval.path), ["A", "B", "E"]);
    }

    #[test]
    fn decimals_and_negatives_are_values() {
        let tree = parse("[A, [B, (E,-1.5), (F,2)], [C, (G,-0.25)]]");
        let eval = evaluate(&tree, Player::Max, false);
        assert_eq!(eval.value, -0.25);
        assert_eq!(eval.best.map(|b| tree.name(b)), Some("C"));
    }
}
