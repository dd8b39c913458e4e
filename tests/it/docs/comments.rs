//! The code's comments kept true as the documents are: every `//`, `///` and `//!` line of
//! `src/`, `tests/`, `benches/` and `examples/`, read in runs of consecutive comment lines (a
//! reference may break across lines), must name
//!
//! - repository paths that exist (`src/...`, `tests/...`, `docs/...`, as in the documents);
//! - anchors (`docs/operations.md#memory`) whose page has that heading, and module paths of the
//!   crate (`engine::search`) that exist;
//! - sections in words (`docs/operations.md, "Memory"`) that their document has;
//! - no issue tracker a reader of the repository cannot see.
//!
//! Only whole comment lines are read (a `//` after code on its line is not), and code spans
//! with a double quote in them are examples, not references, for the sections (any code span,
//! for the tracker).

use super::{Parsed, references, repository_paths, root};

/// A run of consecutive comment lines: the line it starts on and the comments' text, one line
/// each, without the `//`, `///` or `//!`.
#[derive(Debug, PartialEq, Eq)]
struct CommentRun {
    line: usize,
    text: String,
}

/// The runs of whole comment lines in a Rust source.
fn comment_runs(source: &str) -> Vec<CommentRun> {
    let mut runs: Vec<CommentRun> = Vec::new();
    let mut previous_was_comment = false;
    for (index, line) in source.lines().enumerate() {
        let trimmed = line.trim_start();
        let Some(comment) = trimmed.strip_prefix("//") else {
            previous_was_comment = false;
            continue;
        };
        let comment = comment.strip_prefix(['/', '!']).unwrap_or(comment);
        let comment = comment.strip_prefix(' ').unwrap_or(comment);
        match runs.last_mut() {
            Some(run) if previous_was_comment => {
                run.text.push('\n');
                run.text.push_str(comment);
            }
            _ => runs.push(CommentRun {
                line: index + 1,
                text: comment.to_owned(),
            }),
        }
        previous_was_comment = true;
    }
    runs
}

/// `text` with its code spans blanked (line breaks kept), or only those that hold a double
/// quote (`only_quoted`), so that an example such as `` `docs/api.md, "X"` `` is not read as a
/// reference.
fn without_code(text: &str, only_quoted: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let mut inside = false;
    let rest: Vec<&str> = parts.collect();
    let pieces = rest.len();
    for (index, part) in rest.into_iter().enumerate() {
        inside = !inside;
        // An unclosed span at the end stays text.
        let closed = index + 1 < pieces || !inside;
        if inside && closed && (part.contains('"') || !only_quoted) {
            out.push('`');
            out.extend(part.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push('`');
            out.push_str(part);
        }
    }
    out
}

/// What is wrong in the comments of `source` (the file `name`), as `name:line: what`.
fn stale_in(name: &str, source: &str, documents: &[(String, Parsed)]) -> Vec<String> {
    let mut problems = Vec::new();
    for run in comment_runs(source) {
        let line_of = |text: &str, offset: usize| run.line + text[..offset].matches('\n').count();
        let mut offset = 0;
        for text_line in run.text.split('\n') {
            for path in repository_paths(text_line) {
                if !root().join(&path).exists() {
                    let line = line_of(&run.text, offset);
                    problems.push(format!("{name}:{line}: `{path}` does not exist"));
                }
            }
            offset += text_line.len() + 1;
        }
        let found = references::missing_anchors(&run.text, documents)
            .into_iter()
            .chain(references::missing_modules(&run.text));
        for (offset, what) in found {
            problems.push(format!("{name}:{}: {what}", line_of(&run.text, offset)));
        }
        let words = without_code(&run.text, true);
        for (offset, what) in references::missing_sections(&words, None, documents) {
            problems.push(format!("{name}:{}: {what}", line_of(&words, offset)));
        }
        let prose = without_code(&run.text, false);
        for (offset, what) in references::tracker_references(&prose) {
            problems.push(format!("{name}:{}: {what}", line_of(&prose, offset)));
        }
    }
    problems
}

fn parsed_documents() -> Vec<(String, Parsed)> {
    super::documents()
        .into_iter()
        .map(|(name, text)| {
            let parsed = super::parse_markdown(&text);
            (name, parsed)
        })
        .collect()
}

#[test]
fn every_path_anchor_and_section_the_code_comments_name_exists() {
    let documents = parsed_documents();
    let mut files = Vec::new();
    for folder in ["src", "tests", "benches", "examples"] {
        super::rust_files(&root().join(folder), &mut files);
    }
    let mut problems = Vec::new();
    let mut runs = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a source file");
        runs += comment_runs(&source).len();
        let name = file
            .strip_prefix(root())
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        problems.extend(stale_in(&name, &source, &documents));
    }
    assert!(
        files.len() > 120 && runs > 2000,
        "read only {} files and {runs} comment runs",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_planted_stale_path_anchor_section_or_issue_in_a_comment_is_found() {
    let documents = parsed_documents();
    // One string a line, so that the planted comments are not comments of this file.
    let source = [
        "//! The module, as in `src/lib.rs` and docs/architecture.md#layers.",
        "//! Checked by `tests/search_equivalence.rs` (moved to tests/it/), `engine::tree`.",
        "use std::fmt;",
        "/// Sized as docs/operations.md, \"Memory\" says; stale: (README,",
        "/// \"Reproducible answers\"), docs/architecture.md#engine-tree and",
        "/// docs/operations.md, \"The moon\".",
        "fn f() {",
        "    // The issue's value, from issue 26. An example, not a reference:",
        "    // `docs/api.md, \"Nothing\"`, `the issue`.",
        "    let _ = \"// tests/none.rs\"; // docs/none.md, \"X\" after code",
        "}",
    ]
    .join("\n");
    let problems = stale_in("src/planted.rs", &source, &documents);
    let joined = problems.join("\n");
    for expected in [
        "src/planted.rs:2: `tests/search_equivalence.rs` does not exist",
        "src/planted.rs:2: `engine::tree`: no module or item `tree` in src/engine",
        "src/planted.rs:5: no section \"Reproducible answers\" in README.md",
        "src/planted.rs:5: docs/architecture.md#engine-tree: no heading #engine-tree in docs/architecture.md",
        "src/planted.rs:6: no section \"The moon\" in docs/operations.md",
        "src/planted.rs:8: \"issue's value, from\" names an issue tracker",
        "src/planted.rs:8: \"issue 26.",
    ] {
        assert!(
            joined.contains(expected),
            "{expected} missing from:\n{joined}"
        );
    }
    assert_eq!(problems.len(), 7, "{joined}");
}

#[test]
fn comment_runs_join_consecutive_lines_only() {
    let runs = comment_runs("//! a\n//! b\nfn x() {}\n    /// c\n    // d\nlet s = 1; // e\n");
    assert_eq!(
        runs,
        [
            CommentRun {
                line: 1,
                text: "a\nb".into()
            },
            CommentRun {
                line: 4,
                text: "c\nd".into()
            },
        ]
    );
    assert_eq!(
        without_code("see `x, \"Y\"` and `z`", true),
        "see `      ` and `z`"
    );
}
