//! Bracket text: an inner node is `[name, child, child, ...]`, a leaf `(name, value)`.
//!
//! The parser is an iterative recursive descent: its only stack is the builder's list of open
//! nodes, which the builder bounds by [`MAX_DEPTH`](super::MAX_DEPTH), so a 50,000-deep chain
//! costs a clean error, never the stack. Errors give the character offset, line and column,
//! and what was expected.

use super::arena::{Found, Tree, TreeBuilder, TreeError, check_name, is_name_char, name_problem};

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

/// Iterative recursive-descent over the bracket grammar: the only stack is the builder's list
/// of open nodes, which it bounds by [`MAX_DEPTH`](super::MAX_DEPTH).
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tree::test_trees::*;
    use crate::tree::{MAX_DEPTH, MAX_NAME_CHARS, MAX_NODES, Player, evaluate};

    fn parse_error(text: &str) -> ParseError {
        Tree::parse(text).unwrap_err()
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

    proptest! {
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
