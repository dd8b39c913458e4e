//! What `POST /tree` shows about a tree: both searches run, the answer read from minimax.

use super::alphabeta::{AlphaBeta, alphabeta};
use super::arena::{NodeId, Tree};
use super::minimax::{Minimax, Player, minimax};

/// Everything `POST /tree` shows about a tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The root's minimax value.
    pub value: f64,
    /// The root child achieving it, first on ties; `None` when the root is a leaf.
    pub best: Option<NodeId>,
    /// The principal line from the root, first child on ties.
    pub path: Vec<NodeId>,
    pub minimax: Minimax,
    pub alphabeta: AlphaBeta,
}

/// Runs both searches. Their root values agree (alpha-beta's root window is infinite, so its
/// root value is exact); the answer is taken from minimax, which knows every node's value.
pub fn evaluate(tree: &Tree, root: Player, trace: bool) -> Evaluation {
    let minimax = minimax(tree, root);
    let alphabeta = alphabeta(tree, root, trace);
    debug_assert_eq!(minimax.value(), alphabeta.value);
    Evaluation {
        value: minimax.value(),
        best: minimax.best_child(tree, tree.root()),
        path: minimax.principal_line(tree),
        minimax,
        alphabeta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::test_trees::*;
    use crate::tree::{CutKind, MAX_DEPTH};

    #[test]
    fn the_issue_bracket_example_is_worth_3_through_b() {
        let tree = parse("[A, [B, (E,3), (F,12)], [C, (H,2)]]");
        let eval = evaluate(&tree, Player::Max, false);
        assert_eq!(eval.value, 3.0);
        assert_eq!(eval.best.map(|b| tree.name(b)), Some("B"));
        assert_eq!(names(&tree, &eval.path), ["A", "B", "E"]);
    }

    #[test]
    fn the_lecture_tree_matches_the_textbook_numbers() {
        let tree = parse(LECTURE);
        let eval = evaluate(&tree, Player::Max, false);
        assert_eq!(eval.value, 3.0);
        assert_eq!(eval.best.map(|b| tree.name(b)), Some("B"));
        assert_eq!(names(&tree, &eval.path), ["A", "B", "B1"]);
        assert_eq!((eval.minimax.nodes, eval.minimax.leaves), (13, 9));
        assert_eq!((eval.alphabeta.nodes, eval.alphabeta.leaves), (11, 7));
        let cuts: Vec<_> = eval
            .alphabeta
            .pruned
            .iter()
            .map(|cut| {
                (
                    tree.name(cut.node),
                    tree.name(cut.parent),
                    cut.alpha,
                    cut.beta,
                    cut.kind,
                )
            })
            .collect();
        assert_eq!(cuts, [("C2", "C", 3.0, 2.0, CutKind::Alpha)]);
    }

    #[test]
    fn a_min_root_takes_the_smallest_max_child() {
        let tree = parse("[A, [B, (E,3), (F,12)], [C, (H,2), (I,1)]]");
        let eval = evaluate(&tree, Player::Min, false);
        assert_eq!(eval.value, 2.0);
        assert_eq!(names(&tree, &eval.path), ["A", "C", "H"]);
        // C: H raises alpha to 2 under beta 12 from B, no cut; alpha 2 < 12.
        assert!(eval.alphabeta.pruned.is_empty());
    }

    #[test]
    fn a_leaf_root_is_its_own_value_with_no_best_move() {
        let tree = parse("(A, 7)");
        let eval = evaluate(&tree, Player::Max, true);
        assert_eq!(eval.value, 7.0);
        assert_eq!(eval.best, None);
        assert_eq!(names(&tree, &eval.path), ["A"]);
        assert_eq!((eval.minimax.nodes, eval.minimax.leaves), (1, 1));
        assert_eq!((eval.alphabeta.nodes, eval.alphabeta.leaves), (1, 1));
        assert_eq!(eval.alphabeta.trace.unwrap().len(), 1);
    }

    #[test]
    fn depth_1000_evaluates_on_a_2_mib_stack() {
        let eval = on_small_stack(|| {
            let tree = Tree::parse(&bracket_chain(MAX_DEPTH)).unwrap();
            evaluate(&tree, Player::Max, true)
        });
        assert_eq!(eval.value, 1.0);
        assert_eq!(eval.path.len(), MAX_DEPTH + 1);
        assert_eq!(eval.alphabeta.nodes, MAX_DEPTH + 1);
    }
}
