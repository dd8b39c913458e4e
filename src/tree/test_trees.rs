//! Trees the tests of every part share (and `api::tree`'s, the small stack): the lecture example,
//! deep chains, a small stack to run on, and random shapes for the property tests.

use proptest::prelude::*;

use super::{NodeId, Tree, TreeBuilder};

pub const LECTURE: &str = "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], \
                       [D, (D1,14), (D2,5), (D3,2)]]";

pub fn parse(text: &str) -> Tree {
    Tree::parse(text).unwrap()
}

pub fn names(tree: &Tree, ids: &[NodeId]) -> Vec<String> {
    ids.iter().map(|&id| tree.name(id).to_string()).collect()
}

/// A chain `[n, [n, ... (n,1) ...]]` whose leaf is at `depth`.
pub fn bracket_chain(depth: usize) -> String {
    let mut text = "[n, ".repeat(depth);
    text.push_str("(n,1)");
    text.push_str(&"]".repeat(depth));
    text
}

pub fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// A tree for property tests, fed to the builder by recursion (it is small).
#[derive(Clone, Debug)]
pub enum Shape {
    Leaf(i8),
    Inner(Vec<Shape>),
}

pub fn shape() -> impl Strategy<Value = Shape> {
    // Few distinct values so that ties and cuts at equality are common.
    let leaf = (-4i8..=4).prop_map(Shape::Leaf);
    leaf.prop_recursive(6, 200, 4, |inner| {
        prop::collection::vec(inner, 1..=4).prop_map(Shape::Inner)
    })
}

pub fn build(shape: &Shape) -> Tree {
    fn feed(shape: &Shape, builder: &mut TreeBuilder, counter: &mut usize) {
        *counter += 1;
        let name = format!("n{counter}");
        match shape {
            Shape::Leaf(v) => builder.leaf(&name, f64::from(*v)).unwrap(),
            Shape::Inner(children) => {
                builder.open(&name).unwrap();
                for child in children {
                    feed(child, builder, counter);
                }
                builder.close().unwrap();
            }
        }
    }
    let mut builder = TreeBuilder::new();
    feed(shape, &mut builder, &mut 0);
    builder.finish().unwrap()
}
