//! References written in words rather than as links, in the documents and in code comments:
//!
//! - a section named after its document, `docs/operations.md, "Memory"`, `(README, "Set-up")`,
//!   `[operations, "CI"](...)`, or in the same document, `see "Openings"`, `"More labels" below`:
//!   the document must have a heading that is, or begins with, those words;
//! - an anchor written out, `docs/operations.md#memory`: the document must have that heading;
//! - a module path of the crate written in code, `engine::search` or `crate::tree::parse`:
//!   each module in it must exist under `src/`, and a last lowercase segment that is no module
//!   must be a name its module's code uses (a function, a macro);
//! - an issue tracker the reader of the repository cannot see (`issue 26`, `the issue's`,
//!   `the service issue`): never; say what was decided instead.

use super::Parsed;

/// What a reference is checked against: every document, as (path from the root, parsed).
pub(super) type Documents<'a> = &'a [(String, Parsed)];

/// The document a name in words stands for: `README`, `README.md`, `docs/api.md`, `api.md`,
/// `journal/gomoku.md`, or a page's bare name (`operations`, `adding-a-game`).
fn document_named<'a>(name: &str, documents: Documents<'a>) -> Option<&'a (String, Parsed)> {
    let name = name.trim_matches(|c: char| c == '(' || c == '[' || c == '`');
    let candidates = match name {
        "README" | "README.md" => vec!["README.md".to_owned()],
        _ if name.starts_with("docs/") => vec![name.to_owned()],
        _ if name.ends_with(".md") => vec![format!("docs/{name}"), name.to_owned()],
        _ => vec![format!("docs/{name}.md")],
    };
    candidates
        .iter()
        .find_map(|candidate| documents.iter().find(|(path, _)| path == candidate))
}

/// Whether `document` has a heading that is `section`, or begins with it followed by
/// punctuation or a space (`"Against Rapfi directly"` names `Against Rapfi directly: ...`).
fn has_section(document: &Parsed, section: &str) -> bool {
    let wanted = normalise_heading(section);
    document.headings.iter().any(|heading| {
        let heading = normalise_heading(heading);
        heading == wanted
            || heading
                .strip_prefix(wanted.as_str())
                .is_some_and(|rest| rest.starts_with(|c: char| !c.is_alphanumeric()))
    })
}

fn normalise_heading(text: &str) -> String {
    text.replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The characters of a document's name written in words.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./-`([".contains(c)
}

/// Every section named in words in `text` that its document lacks, and every document named
/// that does not exist, as (byte offset in `text`, what). `current` is the document the text is
/// in, for `see "X"` and `"X" below`; comments have none.
pub(super) fn missing_sections(
    text: &str,
    current: Option<&str>,
    documents: Documents,
) -> Vec<(usize, String)> {
    let mut problems = Vec::new();
    let quotes: Vec<usize> = text.match_indices('"').map(|(at, _)| at).collect();
    for pair in quotes.chunks_exact(2) {
        let (open, close) = (pair[0], pair[1]);
        let section = &text[open + 1..close];
        if section.is_empty()
            || section.contains("\n\n")
            || !section.starts_with(char::is_uppercase)
        {
            continue;
        }
        let before = text[..open].trim_end();
        let after = text[close + 1..].trim_start();
        let named_before = before.strip_suffix(',').and_then(|before_comma| {
            let start = before_comma
                .char_indices()
                .rev()
                .find(|&(_, c)| !is_name_char(c))
                .map_or(0, |(at, c)| at + c.len_utf8());
            let name = &before_comma[start..];
            let looks_like_a_document = name.ends_with(".md")
                || name.trim_start_matches(['(', '[']).starts_with("README")
                || document_named(name, documents).is_some();
            looks_like_a_document.then_some(name)
        });
        let named = if let Some(name) = named_before {
            match document_named(name, documents) {
                Some(document) => document,
                None => {
                    problems.push((open, format!("{name}: no such document")));
                    continue;
                }
            }
        } else {
            let in_this_one = before.to_lowercase().ends_with(" see")
                || after.starts_with("below")
                || after.starts_with("above");
            match current {
                Some(current) if in_this_one => {
                    match documents.iter().find(|(path, _)| path == current) {
                        Some(document) => document,
                        None => continue,
                    }
                }
                _ => continue,
            }
        };
        if !has_section(&named.1, section) {
            problems.push((open, format!("no section \"{section}\" in {}", named.0)));
        }
    }
    problems
}

/// Every anchor written out in `text` (`docs/api.md#seeds`) whose page or heading is missing, as (byte offset,
/// what).
pub(super) fn missing_anchors(text: &str, documents: Documents) -> Vec<(usize, String)> {
    let mut problems = Vec::new();
    for (at, _) in text.match_indices(".md#") {
        let start = text[..at]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let anchor_start = at + 4;
        let anchor_end = text[anchor_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(text.len(), |n| anchor_start + n);
        let page = &text[start..at + 3];
        let anchor = &text[anchor_start..anchor_end];
        let page_name = page.trim_start_matches("../");
        match document_named(page_name, documents) {
            None => problems.push((start, format!("{page}#{anchor}: no such document"))),
            Some((name, parsed)) if !parsed.anchors.contains(anchor) => problems.push((
                start,
                format!("{page}#{anchor}: no heading #{anchor} in {name}"),
            )),
            Some(_) => {}
        }
    }
    problems
}

/// Every module path of the crate in `text` (`engine::search`, `crate::service::pool::Pool`)
/// that names a module `src/` lacks (`engine` with `::tree` after it), as (byte offset, what). Paths that start elsewhere
/// (`std::`, `axum::`) are not the crate's and are not read.
pub(super) fn missing_modules(text: &str) -> Vec<(usize, String)> {
    let src = super::root().join("src");
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut problems = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let Some(found) = text[at..].find("::") else {
            break;
        };
        let colons = at + found;
        let start = text[..colons]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(is_ident(c) || c == ':'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let end = text[colons..]
            .find(|c: char| !(is_ident(c) || c == ':'))
            .map_or(text.len(), |n| colons + n);
        at = end.max(colons + 2);
        let path = &text[start..end];
        let mut segments: Vec<&str> = path.split("::").collect();
        if matches!(segments.first(), Some(&"crate" | &"kibitz")) {
            segments.remove(0);
        }
        if segments.iter().any(|s| s.is_empty()) || segments.len() < 2 {
            continue;
        }
        let top = segments[0];
        let mut module = if src.join(top).is_dir() {
            src.join(top)
        } else if src.join(format!("{top}.rs")).is_file() && top != "main" && top != "lib" {
            src.join(format!("{top}.rs"))
        } else {
            continue;
        };
        for (index, segment) in segments.iter().enumerate().skip(1) {
            let as_file = module.join(format!("{segment}.rs"));
            let as_folder = module.join(segment);
            if module.is_dir() && as_file.is_file() {
                module = as_file;
                continue;
            }
            if module.is_dir() && as_folder.is_dir() {
                module = as_folder;
                continue;
            }
            // Not a module: an item of `module`. A type or constant (capitalised) is left to
            // rustdoc; a lowercase name must be a module or appear in the module's code.
            let last = index + 1 == segments.len();
            if segment.starts_with(char::is_uppercase) {
                break;
            }
            let code = module_code(&module);
            let used = code
                .split(|c: char| !is_ident(c))
                .any(|word| word == *segment);
            if !(last && used) {
                problems.push((
                    start,
                    format!(
                        "`{path}`: no module or item `{segment}` in {}",
                        shown(&module)
                    ),
                ));
            }
            break;
        }
    }
    problems
}

/// The code (comment lines left out) of the module at `path`, a file or a folder's `mod.rs`.
fn module_code(path: &std::path::Path) -> String {
    let file = if path.is_dir() {
        path.join("mod.rs")
    } else {
        path.to_owned()
    };
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn shown(path: &std::path::Path) -> String {
    path.strip_prefix(super::root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every reference to an issue tracker in `text`, as (byte offset, what).
pub(super) fn tracker_references(text: &str) -> Vec<(usize, String)> {
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for (at, _) in lower.match_indices("issue") {
        let word_start = at == 0 || !lower[..at].ends_with(|c: char| c.is_alphanumeric());
        let rest = &lower[at + 5..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        if !word_start || rest.starts_with(|c: char| c.is_alphanumeric()) {
            continue;
        }
        let numbered = rest
            .trim_start()
            .trim_start_matches('#')
            .starts_with(|c: char| c.is_ascii_digit());
        let words: Vec<&str> = lower[..at].split_whitespace().rev().take(2).collect();
        let determined = words
            .iter()
            .any(|word| ["the", "this", "that", "our"].contains(word));
        if numbered || determined {
            let end = (at + 20).min(text.len());
            let end = (end..=text.len())
                .find(|&e| text.is_char_boundary(e))
                .unwrap_or(text.len());
            found.push((
                at,
                format!(
                    "\"{}\" names an issue tracker a reader of the repository cannot see",
                    text[at..end].trim().replace('\n', " ")
                ),
            ));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::parse_markdown;
    use super::*;

    fn documents() -> Vec<(String, Parsed)> {
        vec![
            (
                "README.md".to_owned(),
                parse_markdown("# kibitz\n## Set-up\n## Reproducible answers\n"),
            ),
            (
                "docs/operations.md".to_owned(),
                parse_markdown("# Operations\n## Memory\n## A cache shared by replicas\n"),
            ),
            (
                "docs/journal/gomoku.md".to_owned(),
                parse_markdown(
                    "# Gomoku journal\n## Against Rapfi directly: singular extension, 2026-12-03\n",
                ),
            ),
        ]
    }

    fn whats(found: Vec<(usize, String)>) -> Vec<String> {
        found.into_iter().map(|(_, what)| what).collect()
    }

    #[test]
    fn sections_named_in_words_are_found_or_reported() {
        let documents = documents();
        let text = "(README, \"Reproducible answers\"), docs/operations.md, \"Memory\", \
                    [operations, \"A cache shared by replicas\"](operations.md#x), \
                    docs/journal/gomoku.md, \"Against Rapfi directly\"; see \"Memory\".\n\
                    Stale: (README, \"Adding a game\"), docs/operations.md, \"Metrics\", \
                    docs/gone.md, \"Anything\", see \"Set-up\", \"Nothing\" below.\n\
                    Not references: {\"Game\": \"X\"}, gomoku, \"Free\" (no such page).";
        let found = whats(missing_sections(
            text,
            Some("docs/operations.md"),
            &documents,
        ));
        assert_eq!(
            found,
            [
                "no section \"Adding a game\" in README.md",
                "no section \"Metrics\" in docs/operations.md",
                "docs/gone.md: no such document",
                "no section \"Set-up\" in docs/operations.md",
                "no section \"Nothing\" in docs/operations.md",
            ]
        );
        assert!(missing_sections(text, None, &documents).len() == 3);
    }

    #[test]
    fn anchors_written_out_are_checked() {
        let documents = documents();
        let text = "docs/operations.md#memory and operations.md#a-cache-shared-by-replicas hold; \
                    docs/operations.md#metrics, docs/benchmarks.md#lazy-smp and \
                    ../README.md#set-up-1 do not.";
        assert_eq!(
            whats(missing_anchors(text, &documents)),
            [
                "docs/operations.md#metrics: no heading #metrics in docs/operations.md",
                "docs/benchmarks.md#lazy-smp: no such document",
                "../README.md#set-up-1: no heading #set-up-1 in README.md",
            ]
        );
    }

    #[test]
    fn module_paths_of_the_crate_are_checked() {
        let text = "`engine::search`, `crate::tree::parse`, `engine::Progress`, \
                    `service::pool::Pool`, `std::sync::Arc`, `Vec::new` hold; \
                    `engine::tree` and `kibitz::service::nowhere::X` do not.";
        let found = whats(missing_modules(text));
        assert_eq!(
            found,
            [
                "`engine::tree`: no module or item `tree` in src/engine",
                "`kibitz::service::nowhere::X`: no module or item `nowhere` in src/service",
            ]
        );
    }

    #[test]
    fn an_issue_tracker_named_is_reported() {
        let text = "Short of the issue's targets; the note of issue 26; issues #3 and 4; \
                    the service issue's \"API\" section. Fine: tissue, issued, an issue of style.";
        let found = whats(tracker_references(text));
        assert_eq!(found.len(), 4, "{found:?}");
    }
}
