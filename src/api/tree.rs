//! `POST /tree`, the JSON side of the teaching tree evaluator: a user sends a small game tree,
//! as nested node objects or as bracket text, and gets its minimax value, best move, principal
//! line and what textbook alpha-beta pruned (see [`crate::tree`]).
//!
//! The key idea is that a deep request must cost a clean 422, never the stack. serde_json's
//! own recursion limit (128) would refuse honest 1,000-level trees with an unhelpful message,
//! and no limit at all would let a 50,000-deep body overflow a 2 MiB tokio worker stack. So
//! [`evaluate_tree_body`] first scans the raw bytes for nesting depth and refuses anything
//! deeper than a [`MAX_DEPTH`]-level tree can be; only then does it deserialise, with the
//! recursion limit off and `serde_stacker` growing the stack on the heap if it runs low; the
//! tree is then built and evaluated without recursion.

use std::fmt;

use axum::http::StatusCode;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::tree::{
    self, CutKind, Evaluation, MAX_DEPTH, NodeId, Player, Tree, TreeBuilder, TreeError,
};

/// Deepest JSON nesting a request may have: the request object, then per tree level a node
/// object and its `children` array, so the deepest leaf of a [`MAX_DEPTH`] tree sits at this
/// level.
pub const MAX_JSON_DEPTH: usize = 2 * MAX_DEPTH + 2;

/// The body of `POST /tree`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeRequest {
    pub tree: TreeInput,
    /// Who moves at the root; `max` when absent (null is refused, as for every field).
    #[serde(default)]
    pub root: RootPlayer,
    /// Whether to include alpha-beta's visit order.
    #[serde(default)]
    pub trace: bool,
}

/// A tree as JSON nodes or as bracket text (`"[A, [B, (E,3), (F,12)], [C, (H,2)]]"`).
#[derive(Debug)]
pub enum TreeInput {
    Node(JsonNode),
    Text(String),
}

/// One node: `{"name": "A", "children": [...]}` or a leaf `{"name": "E", "value": 3}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonNode {
    pub name: String,
    #[serde(default)]
    pub children: Option<Vec<JsonNode>>,
    #[serde(default)]
    pub value: Option<f64>,
}

/// Written by hand rather than `#[serde(untagged)]`: untagged enums buffer the whole subtree
/// and then walk the buffer recursively, outside `serde_stacker`'s protection.
impl<'de> Deserialize<'de> for TreeInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TreeInput, D::Error> {
        struct InputVisitor;

        impl<'de> de::Visitor<'de> for InputVisitor {
            type Value = TreeInput;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a node object such as {\"name\": \"A\", \"children\": [...]} or bracket \
                     text such as \"[A, (B,1), (C,2)]\"",
                )
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<TreeInput, E> {
                Ok(TreeInput::Text(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<TreeInput, E> {
                Ok(TreeInput::Text(text))
            }

            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<TreeInput, A::Error> {
                JsonNode::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(TreeInput::Node)
            }
        }

        deserializer.deserialize_any(InputVisitor)
    }
}

/// Who moves at the root.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootPlayer {
    #[default]
    Max,
    Min,
}

impl From<RootPlayer> for Player {
    fn from(root: RootPlayer) -> Player {
        match root {
            RootPlayer::Max => Player::Max,
            RootPlayer::Min => Player::Min,
        }
    }
}

/// The 200 answer. Also `Deserialize`, so clients and HTTP tests can read it back typed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeResponse {
    /// Minimax value of the root.
    pub value: TreeNumber,
    /// The root child achieving it, first in order on ties; `null` when the root is a leaf.
    pub best: Option<String>,
    /// The principal line of names from the root.
    pub path: Vec<String>,
    pub minimax: MinimaxSummary,
    pub alphabeta: AlphaBetaSummary,
    /// Alpha-beta's visit order, only when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TraceStep>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MinimaxSummary {
    pub nodes: usize,
    pub leaves: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlphaBetaSummary {
    pub nodes: usize,
    pub leaves: usize,
    pub pruned: Vec<PrunedChild>,
}

/// The first child skipped by a cut, and the window at the cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrunedChild {
    pub node: String,
    pub parent: String,
    /// Always finite at a cut; `null` would mean infinite, as in the trace.
    pub alpha: Option<TreeNumber>,
    pub beta: Option<TreeNumber>,
    pub cut: CutName,
}

/// Which bound caused a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CutName {
    /// A MIN node's beta fell to alpha or below.
    Alpha,
    /// A MAX node's alpha rose to beta or above.
    Beta,
}

/// A node entered by alpha-beta: the window on entry (`null` for infinite) and what it returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    pub node: String,
    pub alpha: Option<TreeNumber>,
    pub beta: Option<TreeNumber>,
    pub value: TreeNumber,
}

/// A leaf value or bound, written as a JSON integer when it is one (`3`, not `3.0`), so
/// answers read like the trees users write.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct TreeNumber(pub f64);

impl Serialize for TreeNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Below 2^53 every integral f64 is exactly an i64, so the cast loses nothing.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < EXACT {
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

fn bound(value: f64) -> Option<TreeNumber> {
    value.is_finite().then_some(TreeNumber(value))
}

impl TreeResponse {
    pub fn new(tree: &Tree, eval: &Evaluation) -> TreeResponse {
        let name = |id: NodeId| tree.name(id).to_owned();
        let ab = &eval.alphabeta;
        TreeResponse {
            value: TreeNumber(eval.value),
            best: eval.best.map(name),
            path: eval.path.iter().copied().map(name).collect(),
            minimax: MinimaxSummary {
                nodes: eval.minimax.nodes,
                leaves: eval.minimax.leaves,
            },
            alphabeta: AlphaBetaSummary {
                nodes: ab.nodes,
                leaves: ab.leaves,
                pruned: ab
                    .pruned
                    .iter()
                    .map(|cut| PrunedChild {
                        node: name(cut.node),
                        parent: name(cut.parent),
                        alpha: bound(cut.alpha),
                        beta: bound(cut.beta),
                        cut: match cut.kind {
                            CutKind::Alpha => CutName::Alpha,
                            CutKind::Beta => CutName::Beta,
                        },
                    })
                    .collect(),
            },
            trace: ab.trace.as_ref().map(|trace| {
                trace
                    .iter()
                    .map(|visit| TraceStep {
                        node: name(visit.node),
                        alpha: bound(visit.alpha),
                        beta: bound(visit.beta),
                        value: TreeNumber(visit.value),
                    })
                    .collect()
            }),
        }
    }
}

/// Why a `POST /tree` body was refused. The message is for the user and already names the
/// position; `pointer` is a JSON pointer into the request where one is known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeRequestError {
    /// Not a well-formed request: invalid JSON, wrong types, missing or unknown fields, a node
    /// that is neither a leaf nor an inner node. HTTP 400.
    #[error("{message}")]
    Malformed {
        message: String,
        pointer: Option<String>,
    },
    /// Well-formed but breaks a rule of trees: bracket syntax, names, node or depth limits, an
    /// inner node without children. HTTP 422.
    #[error("{message}")]
    Invalid {
        message: String,
        pointer: Option<String>,
    },
}

impl TreeRequestError {
    pub fn status(&self) -> StatusCode {
        match self {
            TreeRequestError::Malformed { .. } => StatusCode::BAD_REQUEST,
            TreeRequestError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            TreeRequestError::Malformed { message, .. }
            | TreeRequestError::Invalid { message, .. } => message,
        }
    }

    pub fn pointer(&self) -> Option<&str> {
        match self {
            TreeRequestError::Malformed { pointer, .. }
            | TreeRequestError::Invalid { pointer, .. } => pointer.as_deref(),
        }
    }
}

/// Reads, checks and evaluates a raw `POST /tree` body. Safe on any body and any stack of at
/// least 2 MiB: nesting is bounded before parsing and nothing after it recurses on the input.
pub fn evaluate_tree_body(body: &[u8]) -> Result<TreeResponse, TreeRequestError> {
    check_nesting(body, MAX_JSON_DEPTH)?;
    evaluate_tree_request(parse_request(body)?)
}

/// Deserialises a body already known to nest at most [`MAX_JSON_DEPTH`] levels.
fn parse_request(body: &[u8]) -> Result<TreeRequest, TreeRequestError> {
    let malformed = |error: serde_json::Error| TreeRequestError::Malformed {
        message: format!("invalid request: {error}"),
        pointer: None,
    };
    let mut json = serde_json::Deserializer::from_slice(body);
    json.disable_recursion_limit();
    let request =
        TreeRequest::deserialize(serde_stacker::Deserializer::new(&mut json)).map_err(malformed)?;
    json.end().map_err(malformed)?;
    Ok(request)
}

/// Evaluates a request that was deserialised elsewhere (for a router with its own extractor;
/// such a caller must bound the JSON nesting itself, as [`evaluate_tree_body`] does).
pub fn evaluate_tree_request(request: TreeRequest) -> Result<TreeResponse, TreeRequestError> {
    let tree = match request.tree {
        TreeInput::Text(text) => Tree::parse(&text).map_err(|e| TreeRequestError::Invalid {
            message: format!("tree text {e}"),
            pointer: Some("/tree".into()),
        })?,
        TreeInput::Node(root) => build_json_tree(root)?,
    };
    let root = Player::from(request.root);
    let eval = tree::evaluate(&tree, root, request.trace);
    Ok(TreeResponse::new(&tree, &eval))
}

/// Refuses a body nesting objects and arrays deeper than `limit`, counting only brackets outside
/// strings (escapes honoured). Unbalanced brackets are left for the JSON parser to report.
fn check_nesting(body: &[u8], limit: usize) -> Result<(), TreeRequestError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (at, &byte) in body.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return Err(TreeRequestError::Invalid {
                        message: format!(
                            "the JSON nests deeper than {limit} levels (at byte {at}): a tree \
                             may be at most {MAX_DEPTH} levels deep, and each level is a node \
                             object plus its \"children\" array"
                        ),
                        pointer: None,
                    });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// An inner node being built: its children not yet visited, and how many were taken.
struct Open {
    children: std::vec::IntoIter<JsonNode>,
    taken: usize,
}

fn pointer_to(open: &[Open]) -> String {
    let mut pointer = String::from("/tree");
    for node in open {
        pointer.push_str(&format!("/children/{}", node.taken.saturating_sub(1)));
    }
    pointer
}

fn invalid(error: TreeError, pointer: String) -> TreeRequestError {
    TreeRequestError::Invalid {
        message: format!("{pointer}: {error}"),
        pointer: Some(pointer),
    }
}

/// Feeds JSON nodes to the builder in pre-order with an explicit stack. Children are moved out
/// of each node as it is visited, so no deep structure is left to drop recursively.
fn build_json_tree(root: JsonNode) -> Result<Tree, TreeRequestError> {
    let mut builder = TreeBuilder::new();
    let mut open: Vec<Open> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(node) = next.take() {
            let pointer = || pointer_to(&open);
            let name_error = |error: TreeError| match error {
                TreeError::EmptyName
                | TreeError::NameTooLong { .. }
                | TreeError::BadNameChar { .. } => invalid(error, format!("{}/name", pointer())),
                other => invalid(other, pointer()),
            };
            match (node.children, node.value) {
                (Some(children), None) => {
                    builder.open(&node.name).map_err(name_error)?;
                    open.push(Open {
                        children: children.into_iter(),
                        taken: 0,
                    });
                }
                (None, Some(value)) => builder.leaf(&node.name, value).map_err(name_error)?,
                (children, _) => {
                    let problem = if children.is_some() {
                        "has both \"children\" and \"value\""
                    } else {
                        "has neither \"children\" nor \"value\""
                    };
                    let pointer = pointer();
                    return Err(TreeRequestError::Malformed {
                        message: format!(
                            "{pointer}: node {problem}; an inner node has \"children\", a leaf a \"value\""
                        ),
                        pointer: Some(pointer),
                    });
                }
            }
        }
        let Some(top) = open.last_mut() else {
            break;
        };
        match top.children.next() {
            Some(child) => {
                top.taken += 1;
                next = Some(child);
            }
            None => {
                let pointer = pointer_to(&open[..open.len() - 1]);
                builder.close().map_err(|e| invalid(e, pointer))?;
                open.pop();
            }
        }
    }
    builder
        .finish()
        .map_err(|e| invalid(e, String::from("/tree")))
}

/// `POST /tree`: takes one of the service's evaluation slots for the request's client (503
/// when all stay busy; shared fairly between clients), reads the body (415, 413 as for every
/// route, with the tree's own size limit) and has the service evaluate it off the async
/// threads ([`crate::service::tree`]). The answer carries the client's standing against its
/// share of the slots in `RateLimit` headers.
pub async fn evaluate(
    axum::extract::State(state): axum::extract::State<super::AppState>,
    request: axum::extract::Request,
) -> super::ApiResult<axum::response::Response> {
    // The slot first, the body after (see `service::tree`): waiting for a slot counts
    // against the body's deadline.
    let limit = super::json::BodyLimit {
        bytes: state.config.tree_max_body_bytes,
        setting: "KIBITZ_TREE_MAX_BODY_BYTES",
    };
    super::json::check_json(&request, limit)?;
    let deadline = super::json::body_deadline(&request, &state);
    let client = super::identity::client_of(
        request
            .extensions()
            .get::<crate::service::caller::ClientId>()
            .cloned()
            .map(axum::Extension),
    );
    let slot = state.service.tree_slot(&client, deadline).await?;
    let standing = slot.standing();
    let body = super::json::read_json_body(request, limit, deadline).await?;
    let answer = state
        .service
        .evaluate_tree(slot, move || {
            evaluate_tree_body(super::json::without_bom(&body))
        })
        .await?;
    let mut response = axum::response::IntoResponse::into_response(axum::Json(answer?));
    // `"trees"`: the client's share of the slots; a slot comes back when one of its trees
    // ends, well within a second.
    let limit = super::error::RateLimit {
        policy: "trees",
        quota: standing.quota as u64,
        remaining: standing.remaining as u64,
    };
    response
        .headers_mut()
        .extend(limit.headers(Some(std::time::Duration::from_secs(1))));
    Ok(response)
}

impl From<TreeRequestError> for super::ApiError {
    fn from(error: TreeRequestError) -> Self {
        // Without a pointer, a malformed body is wrong as a whole; an invalid one, in its tree.
        match error {
            TreeRequestError::Malformed { message, pointer } => {
                super::ApiError::bad_request(pointer.unwrap_or_default(), message)
            }
            TreeRequestError::Invalid { message, pointer } => {
                super::ApiError::unplayable(pointer.unwrap_or_else(|| "/tree".into()), message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::test_trees::on_small_stack;
    use serde_json::json;

    const LECTURE_TEXT: &str = "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], \
                                [D, (D1,14), (D2,5), (D3,2)]]";

    fn lecture_json() -> serde_json::Value {
        let min_node = |name: &str, values: [i32; 3]| {
            let children: Vec<_> = values
                .iter()
                .enumerate()
                .map(|(i, v)| json!({"name": format!("{name}{}", i + 1), "value": v}))
                .collect();
            json!({"name": name, "children": children})
        };
        json!({
            "name": "A",
            "children": [
                min_node("B", [3, 12, 8]),
                min_node("C", [2, 4, 6]),
                min_node("D", [14, 5, 2]),
            ]
        })
    }

    fn body(request: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&request).unwrap()
    }

    fn evaluate(request: serde_json::Value) -> Result<TreeResponse, TreeRequestError> {
        evaluate_tree_body(&body(request))
    }

    /// A JSON chain whose single leaf is at `depth`, written as text (serde_json's own
    /// `Value` would recurse building or dropping it).
    fn json_chain(depth: usize) -> Vec<u8> {
        let mut text = String::from(r#"{"tree": "#);
        text.push_str(&r#"{"name": "n", "children": ["#.repeat(depth));
        text.push_str(r#"{"name": "leaf", "value": 1}"#);
        text.push_str(&"]}".repeat(depth));
        text.push('}');
        text.into_bytes()
    }

    fn bracket_chain(depth: usize) -> Vec<u8> {
        let text = format!("{}(n,1){}", "[n, ".repeat(depth), "]".repeat(depth));
        body(json!({ "tree": text }))
    }

    #[test]
    fn the_lecture_tree_serialises_exactly_as_the_issue_shows() {
        let response = evaluate(json!({"tree": lecture_json()})).unwrap();
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "value": 3,
                "best": "B",
                "path": ["A", "B", "B1"],
                "minimax": {"nodes": 13, "leaves": 9},
                "alphabeta": {"nodes": 11, "leaves": 7,
                              "pruned": [{"node": "C2", "parent": "C", "alpha": 3, "beta": 2,
                                          "cut": "alpha"}]},
            })
        );
    }

    #[test]
    fn json_and_bracket_forms_give_identical_results() {
        for root in ["max", "min"] {
            let from_json =
                evaluate(json!({"tree": lecture_json(), "root": root, "trace": true})).unwrap();
            let from_text =
                evaluate(json!({"tree": LECTURE_TEXT, "root": root, "trace": true})).unwrap();
            assert_eq!(from_json, from_text, "root {root}");
        }
    }

    #[test]
    fn a_response_reads_back_as_itself() {
        let response = evaluate(json!({"tree": LECTURE_TEXT, "trace": true})).unwrap();
        let text = serde_json::to_string(&response).unwrap();
        assert_eq!(
            serde_json::from_str::<TreeResponse>(&text).unwrap(),
            response
        );
    }

    #[test]
    fn the_trace_shows_infinite_bounds_as_null() {
        let response = evaluate(json!({"tree": LECTURE_TEXT, "trace": true})).unwrap();
        let trace = serde_json::to_value(response.trace.unwrap()).unwrap();
        assert_eq!(
            trace[0],
            json!({"node": "A", "alpha": null, "beta": null, "value": 3})
        );
        assert_eq!(
            trace[3],
            json!({"node": "B2", "alpha": null, "beta": 3, "value": 12})
        );
        assert_eq!(trace.as_array().unwrap().len(), 11);
    }

    #[test]
    fn the_issue_bracket_example_is_worth_3_through_b() {
        let response = evaluate(json!({"tree": "[A, [B, (E,3), (F,12)], [C, (H,2)]]"})).unwrap();
        assert_eq!(response.value, TreeNumber(3.0));
        assert_eq!(response.best.as_deref(), Some("B"));
    }

    #[test]
    fn a_min_root_is_honoured() {
        let response = evaluate(json!({"tree": lecture_json(), "root": "min"})).unwrap();
        // MAX nodes B, C, D are worth 12, 6, 14; MIN takes C.
        assert_eq!(response.value, TreeNumber(6.0));
        assert_eq!(response.path, ["A", "C", "C3"]);
    }

    #[test]
    fn a_leaf_root_has_a_null_best_move() {
        let response = evaluate(json!({"tree": {"name": "A", "value": -2.5}})).unwrap();
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "value": -2.5,
                "best": null,
                "path": ["A"],
                "minimax": {"nodes": 1, "leaves": 1},
                "alphabeta": {"nodes": 1, "leaves": 1, "pruned": []},
            })
        );
    }

    #[test]
    fn integral_values_serialise_as_integers_and_others_as_decimals() {
        let write = |v: f64| serde_json::to_string(&TreeNumber(v)).unwrap();
        assert_eq!(write(3.0), "3");
        assert_eq!(write(-0.0), "0");
        assert_eq!(write(-12.0), "-12");
        assert_eq!(write(0.5), "0.5");
        assert_eq!(write(1e300), "1e+300");
    }

    #[test]
    fn a_50000_deep_json_chain_is_refused_cleanly_on_a_2_mib_stack() {
        let err = on_small_stack(|| evaluate_tree_body(&json_chain(50_000)).unwrap_err());
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            err.message().contains("nests deeper than 2002 levels"),
            "{err}"
        );
    }

    #[test]
    fn a_50000_deep_bracket_chain_is_refused_cleanly_on_a_2_mib_stack() {
        let err = on_small_stack(|| evaluate_tree_body(&bracket_chain(50_000)).unwrap_err());
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err.pointer(), Some("/tree"));
        assert!(
            err.message()
                .starts_with("tree text at 4004 (line 1, column 4005): the tree is deeper"),
            "{err}"
        );
    }

    #[test]
    fn depth_1000_is_accepted_in_both_forms_on_a_2_mib_stack() {
        let (json, text) = on_small_stack(|| {
            (
                evaluate_tree_body(&json_chain(MAX_DEPTH)),
                evaluate_tree_body(&bracket_chain(MAX_DEPTH)),
            )
        });
        let json = json.unwrap();
        assert_eq!(json.path.len(), MAX_DEPTH + 1);
        assert_eq!(json.value, TreeNumber(1.0));
        assert_eq!(text.unwrap().alphabeta, json.alphabeta);
    }

    #[test]
    fn depth_1001_is_refused_in_both_forms() {
        let json = evaluate_tree_body(&json_chain(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(json.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let text = evaluate_tree_body(&bracket_chain(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(text.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }

    #[test]
    fn unknown_fields_are_malformed() {
        for request in [
            json!({"tree": "(A,1)", "depth": 3}),
            json!({"tree": {"name": "A", "value": 1, "colour": "red"}}),
        ] {
            let err = evaluate(request).unwrap_err();
            assert_eq!(err.status(), StatusCode::BAD_REQUEST);
            assert!(err.message().contains("unknown field"), "{err}");
        }
    }

    #[test]
    fn invalid_json_and_wrong_types_are_malformed() {
        for bad in [
            &b"{\"tree\": "[..],
            b"{\"tree\": \"(A,1)\"} trailing",
            b"{}",
            br#"{"tree": 3}"#,
            br#"{"tree": {"name": "A", "value": "3"}}"#,
            br#"{"tree": "(A,1)", "root": "middle"}"#,
            br#"{"tree": "(A,1)", "trace": "yes"}"#,
        ] {
            let err = evaluate_tree_body(bad).unwrap_err();
            assert_eq!(
                err.status(),
                StatusCode::BAD_REQUEST,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_node_must_be_either_a_leaf_or_an_inner_node() {
        let both = json!({"tree": {"name": "A", "children": [{"name": "B", "value": 1}],
                                   "value": 2}});
        let neither = json!({"tree": {"name": "A", "children": [{"name": "B"}]}});
        let err = evaluate(both).unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        assert_eq!(err.pointer(), Some("/tree"));
        let err = evaluate(neither).unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        assert_eq!(err.pointer(), Some("/tree/children/0"));
    }

    #[test]
    fn a_bracket_syntax_error_is_invalid_and_names_the_position() {
        let err = evaluate(json!({"tree": "[A, [B, (E,3), (F,12))]"})).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            err.message(),
            "tree text at 21 (line 1, column 22): expected ',' or ']', found ')'"
        );
    }

    #[test]
    fn a_bad_json_name_is_invalid_with_a_pointer_to_it() {
        let request = json!({"tree": {"name": "A", "children": [
            {"name": "B", "value": 1},
            {"name": "C", "children": [{"name": "bad name", "value": 2}]},
        ]}});
        let err = evaluate(request).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err.pointer(), Some("/tree/children/1/children/0/name"));
        assert!(
            err.message().contains("' ' cannot appear in a name"),
            "{err}"
        );
        let long = "x".repeat(65);
        let err = evaluate(json!({"tree": {"name": long, "value": 1}})).unwrap_err();
        assert_eq!(err.pointer(), Some("/tree/name"));
    }

    #[test]
    fn an_inner_json_node_without_children_is_invalid() {
        let request = json!({"tree": {"name": "A", "children": [
            {"name": "B", "value": 1},
            {"name": "C", "children": []},
        ]}});
        let err = evaluate(request).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err.pointer(), Some("/tree/children/1"));
    }

    #[test]
    fn more_than_100000_json_nodes_are_invalid() {
        let leaves: Vec<_> = (0..tree::MAX_NODES)
            .map(|i| json!({"name": format!("x{i}"), "value": 1}))
            .collect();
        let err = evaluate(json!({"tree": {"name": "A", "children": leaves}})).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err.pointer(), Some("/tree/children/99999"));
    }

    #[test]
    fn the_nesting_scan_ignores_brackets_inside_strings_and_escapes() {
        assert!(check_nesting(br#"{"a": "[[[[\"[[[[", "b": [1]}"#, 2).is_ok());
        assert!(check_nesting(br#"{"a": "\\", "b": [[1]]}"#, 2).is_err());
        assert!(check_nesting(b"[[]]", 2).is_ok());
        assert!(check_nesting(b"[[[]]]", 2).is_err());
    }
}
