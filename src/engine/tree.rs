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

use std::fmt;

/// Most nodes a tree may have.
pub const MAX_NODES: usize = 100_000;

/// Deepest a tree may be: edges on its longest root-to-leaf path (a lone leaf has depth 0).
pub const MAX_DEPTH: usize = 1_000;

/// Longest name, in characters (names are ASCII, so also in bytes).
pub const MAX_NAME_CHARS: usize = 64;

/// A node of one [`Tree`]; the root is always [`Tree::root`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(u32);

impl NodeId {
    /// Position in the arena (breadth-first order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Node {
    name: Box<str>,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
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
    nodes: Vec<Node>,
    depth: usize,
}

impl Tree {
    /// Parses bracket text such as `[A, [B, (E,3), (F,12)], [C, (H,2)]]`.
    ///
    /// Names may be quoted with `'` or `"`; values are integers or decimals, optionally
    /// negative; whitespace is free. Errors give the character offset and what was expected.
    pub fn parse(text: &str) -> Result<Tree, ParseError> {
        Parser {
            text,
            pos: 0,
            builder: TreeBuilder::new(),
        }
        .run()
    }

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

/// Why a tree cannot be built. The bracket parser wraps these in a [`ParseError`] with the
/// position; the JSON layer adds a pointer to the node.
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

/// A bracket-text error and where it is.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("at {offset} (line {line}, column {column}): {error}")]
pub struct ParseError {
    /// Characters before the error, 0-based.
    pub offset: usize,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub error: TreeError,
}

/// Checks a name: 1 to [`MAX_NAME_CHARS`] ASCII letters, digits or `_`.
pub fn check_name(name: &str) -> Result<(), TreeError> {
    name_problem(name).map_or(Ok(()), |(_, error)| Err(error))
}

/// The first problem with a name and its byte index in the name.
fn name_problem(name: &str) -> Option<(usize, TreeError)> {
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

fn is_name_char(c: char) -> bool {
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

/// Iterative recursive-descent over the bracket grammar: the only stack is the builder's list
/// of open nodes, which it bounds by [`MAX_DEPTH`].
struct Parser<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    builder: TreeBuilder,
}

impl<'a> Parser<'a> {
    fn run(mut self) -> Result<Tree, ParseError> {
        loop {
            // One node: an inner node's head, or a whole leaf.
            self.skip_whitespace();
            let start = self.pos;
            match self.peek() {
                Some('[') => {
                    self.bump();
                    self.skip_whitespace();
                    let name = self.name()?;
                    self.builder
                        .open(name)
                        .map_err(|e| self.error_at(start, e))?;
                    self.skip_whitespace();
                    if self.peek() != Some(',') {
                        return Err(self.expected("',' and a child (an inner node needs one)"));
                    }
                    self.bump();
                    continue;
                }
                Some('(') => {
                    self.bump();
                    self.skip_whitespace();
                    let name = self.name()?;
                    self.skip_whitespace();
                    self.expect(',', "','")?;
                    self.skip_whitespace();
                    let value = self.number()?;
                    self.skip_whitespace();
                    self.expect(')', "')'")?;
                    self.builder
                        .leaf(name, value)
                        .map_err(|e| self.error_at(start, e))?;
                }
                _ if self.builder.open_depth() == 0 => {
                    return Err(self.expected("'[' (an inner node) or '(' (a leaf)"));
                }
                _ => return Err(self.expected("'[' or '('")),
            }
            // After a complete node: close parents until a sibling follows or the tree ends.
            loop {
                self.skip_whitespace();
                if self.builder.open_depth() == 0 {
                    if self.peek().is_some() {
                        return Err(self.expected("end of input"));
                    }
                    let end = self.pos;
                    return self.builder.finish().map_err(|e| {
                        // Unreachable with a complete root; kept as an error, not a panic.
                        error_at(self.text, end, e)
                    });
                }
                match self.peek() {
                    Some(',') => {
                        self.bump();
                        break;
                    }
                    Some(']') => {
                        let at = self.pos;
                        self.bump();
                        self.builder.close().map_err(|e| self.error_at(at, e))?;
                    }
                    _ => return Err(self.expected("',' or ']'")),
                }
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn found(&self) -> Found {
        self.peek().map_or(Found::End, Found::Char)
    }

    fn expected(&self, expected: &'static str) -> ParseError {
        self.error_at(
            self.pos,
            TreeError::Expected {
                expected,
                found: self.found(),
            },
        )
    }

    fn expect(&mut self, c: char, expected: &'static str) -> Result<(), ParseError> {
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(expected))
        }
    }

    fn error_at(&self, byte: usize, error: TreeError) -> ParseError {
        error_at(self.text, byte, error)
    }

    /// A name, bare or quoted with `'` or `"`; the quotes are not part of it.
    fn name(&mut self) -> Result<&'a str, ParseError> {
        let start = self.pos;
        let text = self.text;
        match self.peek() {
            Some(quote @ ('\'' | '"')) => {
                self.bump();
                let inner = self.pos;
                loop {
                    match self.peek() {
                        None if quote == '\'' => return Err(self.expected("a closing '\\''")),
                        None => return Err(self.expected("a closing '\"'")),
                        Some(c) if c == quote => break,
                        Some(_) => self.bump(),
                    }
                }
                let name = &text[inner..self.pos];
                self.bump();
                match name_problem(name) {
                    None => Ok(name),
                    Some((at, error @ TreeError::BadNameChar { .. })) => {
                        Err(self.error_at(inner + at, error))
                    }
                    Some((_, error)) => Err(self.error_at(start, error)),
                }
            }
            _ => {
                while self.peek().is_some_and(is_name_char) {
                    self.bump();
                }
                let name = &text[start..self.pos];
                // A character that can neither continue a name nor follow one is reported as
                // not allowed in names, which is what the user most likely meant.
                if let Some(c) = self.peek()
                    && !c.is_whitespace()
                    && !"[](),'\"".contains(c)
                {
                    return Err(self.error_at(self.pos, TreeError::BadNameChar { found: c }));
                }
                if name.is_empty() {
                    return Err(self.expected("a name"));
                }
                check_name(name).map_err(|e| self.error_at(start, e))?;
                Ok(name)
            }
        }
    }

    /// `-?digits(.digits)?`, read as the whole run of number-like characters so that `3x` or
    /// `1e5` is reported as one bad number rather than a stray letter.
    fn number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || "._+-".contains(c))
        {
            self.bump();
        }
        let text = &self.text[start..self.pos];
        if text.is_empty() {
            return Err(self.expected("a number"));
        }
        let shown: String = text.chars().take(40).collect();
        if !is_plain_number(text) {
            return Err(self.error_at(start, TreeError::BadNumber { text: shown }));
        }
        // `is_plain_number` admits only what `f64::from_str` reads exactly (no "inf", "NaN").
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(self.error_at(start, TreeError::NumberOutOfRange { text: shown })),
        }
    }
}

fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && fraction.is_none_or(all_digits)
}

fn error_at(text: &str, byte: usize, error: TreeError) -> ParseError {
    let before = &text[..byte];
    let offset = before.chars().count();
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    ParseError {
        offset,
        line,
        column,
        error,
    }
}

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
    use proptest::prelude::*;

    const LECTURE: &str = "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], \
                           [D, (D1,14), (D2,5), (D3,2)]]";

    fn parse(text: &str) -> Tree {
        Tree::parse(text).unwrap()
    }

    fn names(tree: &Tree, ids: &[NodeId]) -> Vec<String> {
        ids.iter().map(|&id| tree.name(id).to_string()).collect()
    }

    fn parse_error(text: &str) -> ParseError {
        Tree::parse(text).unwrap_err()
    }

    /// A chain `[n, [n, ... (n,1) ...]]` whose leaf is at `depth`.
    fn bracket_chain(depth: usize) -> String {
        let mut text = "[n, ".repeat(depth);
        text.push_str("(n,1)");
        text.push_str(&"]".repeat(depth));
        text
    }

    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

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
    fn a_min_root_takes_the_smallest_max_child() {
        let tree = parse("[A, [B, (E,3), (F,12)], [C, (H,2), (I,1)]]");
        let eval = evaluate(&tree, Player::Min, false);
        assert_eq!(eval.value, 2.0);
        assert_eq!(names(&tree, &eval.path), ["A", "C", "H"]);
        // C: H raises alpha to 2 under beta 12 from B, no cut; alpha 2 < 12.
        assert!(eval.alphabeta.pruned.is_empty());
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

    #[test]
    fn quoted_names_drop_their_quotes() {
        let tree = parse(r#"['A', ["B_1", ('e', 3)], [C2, ("f",1)]]"#);
        assert_eq!(tree.name(tree.root()), "A");
        let children: Vec<_> = tree.children(tree.root()).map(|c| tree.name(c)).collect();
        assert_eq!(children, ["B_1", "C2"]);
    }

    #[test]
    fn whitespace_is_free_including_newlines() {
        let tree = parse("\n  [ A ,\n\t( E , 3 ) ,( F,4 ) ]  \n");
        assert_eq!(tree.node_count(), 3);
        assert_eq!(evaluate(&tree, Player::Max, false).value, 4.0);
    }

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
    fn an_unclosed_bracket_is_reported_at_the_end() {
        let err = parse_error("[A, (E,3)");
        assert_eq!(err.offset, 9);
        assert_eq!(
            err.error,
            TreeError::Expected {
                expected: "',' or ']'",
                found: Found::End
            }
        );
        assert_eq!(
            err.to_string(),
            "at 9 (line 1, column 10): expected ',' or ']', found end of input"
        );
    }

    #[test]
    fn a_wrong_closer_names_what_was_expected() {
        let err = parse_error("[A, [B, (E,3), (F,12))]");
        assert_eq!(
            err.to_string(),
            "at 21 (line 1, column 22): expected ',' or ']', found ')'"
        );
    }

    #[test]
    fn a_missing_value_is_reported_where_the_number_should_be() {
        let err = parse_error("[A, (E, )]");
        assert_eq!(err.offset, 8);
        assert!(matches!(
            err.error,
            TreeError::Expected {
                expected: "a number",
                found: Found::Char(')')
            }
        ));
        let err = parse_error("[A, (E)]");
        assert_eq!(err.offset, 6);
        assert!(matches!(
            err.error,
            TreeError::Expected {
                expected: "','",
                ..
            }
        ));
    }

    #[test]
    fn bad_numbers_are_reported_whole() {
        for (text, bad) in [
            ("(E, 3x)", "3x"),
            ("(E, 1e5)", "1e5"),
            ("(E, inf)", "inf"),
            ("(E, 1.)", "1."),
            ("(E, --1)", "--1"),
            ("(E, 1.2.3)", "1.2.3"),
        ] {
            let err = parse_error(text);
            assert_eq!(err.offset, 4, "{text}");
            assert_eq!(
                err.error,
                TreeError::BadNumber { text: bad.into() },
                "{text}"
            );
        }
    }

    #[test]
    fn a_number_too_large_for_f64_is_out_of_range() {
        let huge = format!("(E, {})", "9".repeat(400));
        assert!(matches!(
            parse_error(&huge).error,
            TreeError::NumberOutOfRange { .. }
        ));
    }

    #[test]
    fn a_bad_name_character_is_pointed_at() {
        let err = parse_error("[A, (E-1, 3)]");
        assert_eq!(err.offset, 6);
        assert_eq!(err.error, TreeError::BadNameChar { found: '-' });
        let err = parse_error("[A, ('E 1', 3)]");
        assert_eq!(err.offset, 7);
        assert_eq!(err.error, TreeError::BadNameChar { found: ' ' });
        let err = parse_error("[Ä, (E, 3)]");
        assert_eq!(err.offset, 1);
        assert_eq!(err.error, TreeError::BadNameChar { found: 'Ä' });
    }

    #[test]
    fn a_missing_or_empty_name_is_refused() {
        let err = parse_error("[, (E,3)]");
        assert_eq!(err.offset, 1);
        assert!(matches!(
            err.error,
            TreeError::Expected {
                expected: "a name",
                ..
            }
        ));
        assert_eq!(parse_error("['', (E,3)]").error, TreeError::EmptyName);
        let err = parse_error("['A, (E,3)]");
        assert!(matches!(
            err.error,
            TreeError::Expected {
                found: Found::End,
                ..
            }
        ));
    }

    #[test]
    fn a_name_longer_than_64_characters_is_refused_at_its_start() {
        let ok = format!("({}, 1)", "a".repeat(MAX_NAME_CHARS));
        assert!(Tree::parse(&ok).is_ok());
        let err = parse_error(&format!("[A, ({}, 1)]", "a".repeat(MAX_NAME_CHARS + 1)));
        assert_eq!(err.offset, 5);
        assert_eq!(err.error, TreeError::NameTooLong { chars: 65 });
    }

    #[test]
    fn trailing_garbage_is_refused() {
        let err = parse_error("[A, (E,3)] x");
        assert_eq!(
            err.to_string(),
            "at 11 (line 1, column 12): expected end of input, found 'x'"
        );
        assert_eq!(parse_error("(A,1)(B,2)").offset, 5);
    }

    #[test]
    fn empty_input_is_refused() {
        for text in ["", "   \n "] {
            let err = parse_error(text);
            assert!(matches!(
                err.error,
                TreeError::Expected {
                    found: Found::End,
                    ..
                }
            ));
        }
    }

    #[test]
    fn an_inner_node_needs_a_child() {
        let err = parse_error("[A, [B], (C,1)]");
        assert_eq!(err.offset, 6);
        assert!(matches!(
            err.error,
            TreeError::Expected {
                found: Found::Char(']'),
                ..
            }
        ));
    }

    #[test]
    fn errors_give_line_and_column() {
        let err = parse_error("[A,\n  (E,3),\n  (F,?)]");
        assert_eq!((err.line, err.column), (3, 6));
    }

    #[test]
    fn depth_1000_is_accepted_and_1001_refused_at_the_deepest_node() {
        let tree = parse(&bracket_chain(MAX_DEPTH));
        assert_eq!(tree.depth(), MAX_DEPTH);
        let err = parse_error(&bracket_chain(MAX_DEPTH + 1));
        assert_eq!(err.error, TreeError::TooDeep);
        assert_eq!(err.offset, 4 * (MAX_DEPTH + 1));
    }

    #[test]
    fn a_50000_deep_chain_is_refused_cleanly_on_a_2_mib_stack() {
        let err = on_small_stack(|| Tree::parse(&bracket_chain(50_000)).unwrap_err());
        assert_eq!(err.error, TreeError::TooDeep);
        let err = on_small_stack(|| Tree::parse(&"[".repeat(50_000)).unwrap_err());
        assert_eq!(err.offset, 1);
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

    #[test]
    fn more_than_100000_nodes_are_refused_at_the_extra_node() {
        let leaves = |n: usize| {
            let mut text = String::from("[A");
            for _ in 0..n {
                text.push_str(",(x,1)");
            }
            text.push(']');
            text
        };
        assert_eq!(parse(&leaves(MAX_NODES - 1)).node_count(), MAX_NODES);
        let err = parse_error(&leaves(MAX_NODES));
        assert_eq!(err.error, TreeError::TooManyNodes);
        assert_eq!(err.offset, 2 + 6 * (MAX_NODES - 1) + 1);
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

    /// A tree for property tests, fed to the builder by recursion (it is small).
    #[derive(Clone, Debug)]
    enum Shape {
        Leaf(i8),
        Inner(Vec<Shape>),
    }

    fn shape() -> impl Strategy<Value = Shape> {
        // Few distinct values so that ties and cuts at equality are common.
        let leaf = (-4i8..=4).prop_map(Shape::Leaf);
        leaf.prop_recursive(6, 200, 4, |inner| {
            prop::collection::vec(inner, 1..=4).prop_map(Shape::Inner)
        })
    }

    fn build(shape: &Shape) -> Tree {
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

        #[test]
        fn bracket_text_round_trips_through_the_parser(shape in shape()) {
            fn write(shape: &Shape, out: &mut String, counter: &mut usize) {
                *counter += 1;
                match shape {
                    Shape::Leaf(v) => out.push_str(&format!("(n{counter}, {v})")),
                    Shape::Inner(children) => {
                        out.push_str(&format!("[n{counter}"));
                        for child in children {
                            out.push_str(", ");
                            write(child, out, counter);
                        }
                        out.push(']');
                    }
                }
            }
            let mut text = String::new();
            write(&shape, &mut text, &mut 0);
            prop_assert_eq!(Tree::parse(&text).unwrap(), build(&shape));
        }
    }
}
