//! Textbook alpha-beta over the tree, and its trace: what it visits, with which window, and
//! what it prunes.
//!
//! AIMA's MAX-VALUE/MIN-VALUE, fail-soft, children left to right from the window (-inf, +inf),
//! but iterative: one frame per open inner node on an explicit stack, so a deep tree costs
//! heap, never the thread's stack.

use super::arena::{Kind, NodeId, Tree};
use super::minimax::Player;

/// Which bound caused a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutKind {
    /// At a MIN node: its beta dropped to alpha or below.
    Alpha,
    /// At a MAX node: its alpha rose to beta or above.
    Beta,
}

impl CutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CutKind::Alpha => "alpha",
            CutKind::Beta => "beta",
        }
    }
}

/// One cut: the first child skipped and the window at the moment of the cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    pub node: NodeId,
    pub parent: NodeId,
    pub alpha: f64,
    pub beta: f64,
    pub kind: CutKind,
}

/// One node entered by alpha-beta, in visit order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Visit {
    pub node: NodeId,
    /// The window on entry; infinite at the start.
    pub alpha: f64,
    pub beta: f64,
    /// What the node returned (fail-soft: may lie outside the entry window).
    pub value: f64,
}

/// What alpha-beta did.
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaBeta {
    pub value: f64,
    /// Nodes entered.
    pub nodes: usize,
    /// Leaves evaluated.
    pub leaves: usize,
    pub pruned: Vec<Cut>,
    pub trace: Option<Vec<Visit>>,
}

/// An inner node alpha-beta is searching.
struct Frame {
    node: u32,
    player: Player,
    alpha: f64,
    beta: f64,
    /// Best child value so far (fail-soft).
    value: f64,
    /// Next child to search; `end` when done or cut.
    next: u32,
    end: u32,
    /// This node's entry in the trace, if tracing.
    visit: usize,
}

/// Textbook alpha-beta (AIMA's MAX-VALUE/MIN-VALUE, fail-soft): children left to right from the
/// window (-inf, +inf); after each child the node's bound is tightened, and once alpha >= beta
/// its remaining children are skipped. Iterative, with one frame per open inner node.
pub fn alphabeta(tree: &Tree, root: Player, trace: bool) -> AlphaBeta {
    let mut report = AlphaBeta {
        value: 0.0,
        nodes: 0,
        leaves: 0,
        pruned: Vec::new(),
        trace: trace.then(Vec::new),
    };
    let mut stack: Vec<Frame> = Vec::with_capacity(tree.depth + 1);
    let mut returned = enter(
        tree,
        &mut report,
        &mut stack,
        0,
        root,
        f64::NEG_INFINITY,
        f64::INFINITY,
    );
    loop {
        if let Some(value) = returned.take() {
            // Step 1. Hand the child's value to its parent, or finish at the root.
            let Some(top) = stack.last_mut() else {
                report.value = value;
                return report;
            };
            match top.player {
                Player::Max => {
                    top.value = top.value.max(value);
                    top.alpha = top.alpha.max(top.value);
                }
                Player::Min => {
                    top.value = top.value.min(value);
                    top.beta = top.beta.min(top.value);
                }
            }
            // Step 2. Cut: the rest of this node cannot matter to the line above it.
            if top.alpha >= top.beta && top.next < top.end {
                report.pruned.push(Cut {
                    node: NodeId(top.next),
                    parent: NodeId(top.node),
                    alpha: top.alpha,
                    beta: top.beta,
                    kind: match top.player {
                        Player::Max => CutKind::Beta,
                        Player::Min => CutKind::Alpha,
                    },
                });
                top.next = top.end;
            }
            // Step 3. A finished node returns its value in turn.
            if top.next == top.end {
                if let Some(trace) = report.trace.as_mut() {
                    trace[top.visit].value = top.value;
                }
                returned = Some(top.value);
                stack.pop();
                continue;
            }
        }
        // Step 4. Search the next child with the node's current window.
        let Some(top) = stack.last_mut() else {
            // Unreachable: the root either returned above or is on the stack.
            return report;
        };
        let (child, player, alpha, beta) = (top.next, top.player.other(), top.alpha, top.beta);
        top.next += 1;
        returned = enter(tree, &mut report, &mut stack, child, player, alpha, beta);
    }
}

/// Enters a node: a leaf returns its value at once, an inner node pushes a frame.
fn enter(
    tree: &Tree,
    report: &mut AlphaBeta,
    stack: &mut Vec<Frame>,
    node: u32,
    player: Player,
    alpha: f64,
    beta: f64,
) -> Option<f64> {
    report.nodes += 1;
    let leaf = tree.value(NodeId(node));
    let visit = report.trace.as_mut().map_or(0, |trace| {
        trace.push(Visit {
            node: NodeId(node),
            alpha,
            beta,
            value: leaf.unwrap_or(f64::NAN),
        });
        trace.len() - 1
    });
    match tree.nodes[node as usize].kind {
        Kind::Leaf(value) => {
            report.leaves += 1;
            Some(value)
        }
        Kind::Inner { first, end } => {
            stack.push(Frame {
                node,
                player,
                alpha,
                beta,
                value: match player {
                    Player::Max => f64::NEG_INFINITY,
                    Player::Min => f64::INFINITY,
                },
                next: first,
                end,
                visit,
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tree::test_trees::*;
    use crate::tree::{evaluate, minimax};

    #[test]
    fn the_lecture_trace_lists_entries_in_visit_order_with_entry_windows() {
        let tree = parse(LECTURE);
        let trace = alphabeta(&tree, Player::Max, true).trace.unwrap();
        let order: Vec<_> = trace.iter().map(|v| tree.name(v.node)).collect();
        assert_eq!(
            order,
            ["A", "B", "B1", "B2", "B3", "C", "C1", "D", "D1", "D2", "D3"]
        );
        let inf = f64::INFINITY;
        let row = |i: usize| (trace[i].alpha, trace[i].beta, trace[i].value);
        assert_eq!(row(0), (-inf, inf, 3.0)); // A
        assert_eq!(row(1), (-inf, inf, 3.0)); // B
        assert_eq!(row(3), (-inf, 3.0, 12.0)); // B2 under B's beta 3
        assert_eq!(row(5), (3.0, inf, 2.0)); // C, cut after C1
        assert_eq!(row(9), (3.0, 14.0, 5.0)); // D2
        assert_eq!(row(7), (3.0, inf, 2.0)); // D
    }

    #[test]
    fn a_min_root_cuts_with_beta() {
        let tree = parse("[A, [B, (E,3)], [C, (H,5), (I,1)]]");
        let eval = evaluate(&tree, Player::Min, false);
        assert_eq!(eval.value, 3.0);
        let cut = eval.alphabeta.pruned[0];
        assert_eq!((tree.name(cut.node), tree.name(cut.parent)), ("I", "C"));
        assert_eq!((cut.alpha, cut.beta, cut.kind), (5.0, 3.0, CutKind::Beta));
    }

    /// Reference minimax straight from the definition.
    fn reference(shape: &Shape, player: Player) -> f64 {
        match shape {
            Shape::Leaf(v) => f64::from(*v),
            Shape::Inner(children) => {
                let values = children.iter().map(|c| reference(c, player.other()));
                match player {
                    Player::Max => values.fold(f64::NEG_INFINITY, f64::max),
                    Player::Min => values.fold(f64::INFINITY, f64::min),
                }
            }
        }
    }

    fn size(shape: &Shape) -> usize {
        match shape {
            Shape::Leaf(_) => 1,
            Shape::Inner(children) => 1 + children.iter().map(size).sum::<usize>(),
        }
    }

    /// Reference alpha-beta, recursive as in the textbook (AIMA's MAX-VALUE/MIN-VALUE). Records
    /// each node entered as (its name, alpha, beta at entry, value returned), in visit order;
    /// `id` is the node's pre-order number, which `build` uses for its name.
    fn reference_alphabeta(
        shape: &Shape,
        id: usize,
        player: Player,
        mut alpha: f64,
        mut beta: f64,
        visits: &mut Vec<(String, f64, f64, f64)>,
    ) -> f64 {
        let entry = visits.len();
        visits.push((format!("n{id}"), alpha, beta, f64::NAN));
        let value = match shape {
            Shape::Leaf(v) => f64::from(*v),
            Shape::Inner(children) => {
                let mut v = match player {
                    Player::Max => f64::NEG_INFINITY,
                    Player::Min => f64::INFINITY,
                };
                let mut child_id = id + 1;
                for child in children {
                    let w =
                        reference_alphabeta(child, child_id, player.other(), alpha, beta, visits);
                    child_id += size(child);
                    match player {
                        Player::Max => {
                            v = v.max(w);
                            if v >= beta {
                                break;
                            }
                            alpha = alpha.max(v);
                        }
                        Player::Min => {
                            v = v.min(w);
                            if v <= alpha {
                                break;
                            }
                            beta = beta.min(v);
                        }
                    }
                }
                v
            }
        };
        visits[entry].3 = value;
        value
    }

    proptest! {
        #[test]
        fn alphabeta_visits_exactly_what_the_textbook_recursion_visits(
            shape in shape(),
            min_root in any::<bool>(),
        ) {
            let root = if min_root { Player::Min } else { Player::Max };
            let tree = build(&shape);
            let ab = alphabeta(&tree, root, true);
            let mut expected = Vec::new();
            reference_alphabeta(&shape, 1, root, f64::NEG_INFINITY, f64::INFINITY, &mut expected);
            let actual: Vec<_> = ab
                .trace
                .unwrap_or_default()
                .iter()
                .map(|v| (tree.name(v.node).to_string(), v.alpha, v.beta, v.value))
                .collect();
            prop_assert_eq!(actual, expected);
        }

        #[test]
        fn every_node_is_either_visited_or_inside_a_pruned_subtree(
            shape in shape(),
            min_root in any::<bool>(),
        ) {
            let root = if min_root { Player::Min } else { Player::Max };
            let tree = build(&shape);
            let ab = alphabeta(&tree, root, false);
            // Subtree sizes, children first (they have larger arena indices).
            let mut sizes = vec![1usize; tree.node_count()];
            for i in (0..tree.node_count()).rev() {
                let id = NodeId(i as u32);
                sizes[i] += tree.children(id).map(|c| sizes[c.index()]).sum::<usize>();
            }
            let skipped: usize = ab
                .pruned
                .iter()
                .map(|cut| {
                    tree.children(cut.parent)
                        .filter(|&c| c >= cut.node)
                        .map(|c| sizes[c.index()])
                        .sum::<usize>()
                })
                .sum();
            prop_assert_eq!(ab.nodes + skipped, tree.node_count());
        }

        #[test]
        fn alphabeta_agrees_with_minimax_and_never_evaluates_more_leaves(
            shape in shape(),
            min_root in any::<bool>(),
        ) {
            let root = if min_root { Player::Min } else { Player::Max };
            let tree = build(&shape);
            let mm = minimax(&tree, root);
            let ab = alphabeta(&tree, root, true);
            prop_assert_eq!(mm.value(), reference(&shape, root));
            prop_assert_eq!(ab.value, mm.value());
            prop_assert!(ab.leaves <= mm.leaves);
            prop_assert!(ab.nodes <= mm.nodes);
            prop_assert_eq!(ab.trace.map(|t| t.len()), Some(ab.nodes));
            for cut in &ab.pruned {
                prop_assert!(cut.alpha >= cut.beta);
            }
        }
    }
}
