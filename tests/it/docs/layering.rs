//! Every "never" of docs/architecture.md's layers, checked on the source as a clone has it:
//!
//! - the engine (`src/engine/`, `src/tree/`) and the games (`src/games/`) know nothing of HTTP,
//!   serde or tokio: no path of theirs starts with axum, hyper, http, tower, serde, tokio or
//!   their kin ([`SERVING_CRATES`]);
//! - the arrow points one way, `api` → `service` → `games` → `engine`: the engine names nothing
//!   of the games, the service or the API, the games nothing of the service or the API, and the
//!   service nothing of the API;
//! - nothing outside `src/tools/` and `src/main.rs` names the tools.
//!
//! Paths are read as the compiler reads them, not by a text search: comments, strings and
//! character literals are skipped, `use` groups (`use crate::{api::X, service}`) are expanded,
//! and `crate::`, `super::` and `self::` are resolved against the file's own module, so that
//! `super::super::api` from `src/service/metrics/` counts as the API.

use std::path::Path;

/// Crates that belong to serving: HTTP, JSON and the async runtime. The engine and the games
/// name none of them.
const SERVING_CRATES: [&str; 14] = [
    "axum",
    "hyper",
    "hyper_util",
    "http",
    "http_body_util",
    "tower",
    "tower_http",
    "serde",
    "serde_json",
    "serde_path_to_error",
    "serde_stacker",
    "tokio",
    "futures_util",
    "redis",
];

/// One rule of the layers: the files under `under` (top-level folders or files of `src/`; empty
/// for all but `exempt`) may not name the crate's top-level `modules`, nor, when `serving`, the
/// [`SERVING_CRATES`].
struct Rule {
    under: &'static [&'static str],
    exempt: &'static [&'static str],
    modules: &'static [&'static str],
    serving: bool,
    why: &'static str,
}

const RULES: [Rule; 4] = [
    Rule {
        under: &["engine", "tree"],
        exempt: &[],
        modules: &["games", "service", "api"],
        serving: true,
        why: "the engine knows nothing of the games above it, nor of HTTP, serde or tokio",
    },
    Rule {
        under: &["games"],
        exempt: &[],
        modules: &["service", "api"],
        serving: true,
        why: "the games know nothing of the service above them, nor of HTTP, serde or tokio",
    },
    Rule {
        under: &["service"],
        exempt: &[],
        modules: &["api"],
        serving: false,
        why: "the service imports nothing from the API",
    },
    Rule {
        under: &[],
        exempt: &["tools", "main.rs"],
        modules: &["tools"],
        serving: false,
        why: "nothing outside src/tools/ and main.rs imports the tools",
    },
];

impl Rule {
    fn applies_to(&self, top: &str) -> bool {
        (self.under.is_empty() || self.under.contains(&top)) && !self.exempt.contains(&top)
    }
}

/// A path named in Rust source: its segments as written, and the line it starts on.
#[derive(Debug, PartialEq, Eq)]
struct NamedPath {
    line: usize,
    segments: Vec<String>,
}

/// The tokens the path reader needs: identifiers, `::`, braces, commas; anything else is
/// `Other` (it ends a path).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

/// Splits Rust source into [`Token`]s with their lines, dropping comments, strings (raw ones
/// too), byte strings and character literals.
fn tokens(source: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut at = 0;
    let count_lines =
        |from: usize, to: usize| chars[from..to].iter().filter(|&&c| c == '\n').count();
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '\n' {
            line += 1;
            at += 1;
        } else if c.is_whitespace() {
            at += 1;
        } else if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = at;
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            line += count_lines(start, at);
        } else if let Some(end) = raw_string_end(&chars, at) {
            line += count_lines(at, end);
            at = end;
            out.push((line, Token::Other));
        } else if c == '"' || (c == 'b' && next == Some('"')) {
            let start = at;
            at += if c == 'b' { 2 } else { 1 };
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            line += count_lines(start, at.min(chars.len()));
            out.push((line, Token::Other));
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a): a literal closes
            // with a quote within a few characters.
            let close = if next == Some('\\') {
                chars
                    .get(at + 3..)
                    .and_then(|rest| rest.iter().position(|&c| c == '\''))
                    .map(|n| at + 3 + n)
            } else if chars.get(at + 2) == Some(&'\'') {
                Some(at + 2)
            } else {
                None
            };
            at = close.map_or(at + 1, |close| close + 1);
            out.push((line, Token::Other));
        } else if c.is_alphabetic() || c == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            let word: String = chars[start..at].iter().collect();
            out.push((line, Token::Ident(word)));
        } else if c == ':' && next == Some(':') {
            out.push((line, Token::Colons));
            at += 2;
        } else {
            out.push((
                line,
                match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ',' => Token::Comma,
                    '*' => Token::Star,
                    _ => Token::Other,
                },
            ));
            at += 1;
        }
    }
    out
}

/// Where a raw string (`r"..."`, `r#"..."#`, `br#"..."#`) starting at `at` ends, if one does.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut i = at;
    if chars.get(i) == Some(&'b') {
        i += 1;
    }
    if chars.get(i) != Some(&'r')
        || (at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_'))
    {
        return None;
    }
    i += 1;
    let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
    i += hashes;
    if chars.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"'
            && chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(chars.len())
}

/// Every path (two segments or more, or one segment followed by a `use` group) named in
/// `source`, `use` groups expanded.
fn named_paths(source: &str) -> Vec<NamedPath> {
    let tokens = tokens(source);
    let mut paths = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let starts_path = matches!(tokens[at].1, Token::Ident(_))
            && tokens.get(at + 1).is_some_and(|(_, t)| *t == Token::Colons)
            && (at == 0 || tokens[at - 1].1 != Token::Colons);
        if starts_path {
            let line = tokens[at].0;
            let (found, end) = read_path(&tokens, at, Vec::new());
            paths.extend(
                found
                    .into_iter()
                    .map(|segments| NamedPath { line, segments }),
            );
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    paths
}

/// Reads one path (or `use` tree) from `at`, under `prefix`: the paths it names and where it
/// ends.
fn read_path(
    tokens: &[(usize, Token)],
    mut at: usize,
    prefix: Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    let mut segments = prefix;
    loop {
        match tokens.get(at).map(|(_, t)| t) {
            Some(Token::Ident(name)) => {
                segments.push(name.clone());
                at += 1;
            }
            Some(Token::Star) => return (vec![segments], at + 1),
            Some(Token::Open) => {
                // A `use` group: each item under the same prefix.
                let mut found = Vec::new();
                at += 1;
                loop {
                    match tokens.get(at).map(|(_, t)| t) {
                        None => return (found, at),
                        Some(Token::Close) => return (found, at + 1),
                        Some(Token::Comma) => at += 1,
                        Some(_) => {
                            let (inner, end) = read_path(tokens, at, segments.clone());
                            found.extend(inner);
                            at = end.max(at + 1);
                        }
                    }
                }
            }
            _ => return (vec![segments], at),
        }
        if tokens.get(at).map(|(_, t)| t) == Some(&Token::Colons) {
            at += 1;
        } else {
            return (vec![segments], at);
        }
    }
}

/// The module path of a file under `src/`: `src/service/metrics/process.rs` is
/// `["service", "metrics", "process"]`, a `mod.rs` its folder, `lib.rs` and `main.rs` the root.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !["mod", "lib", "main"].contains(&stem) {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// `path` as a path from the crate's root, when it starts with `crate`, `kibitz` (the binary
/// naming its library), `super` or `self`; `None` for any other first segment (an external
/// crate, or a name in scope).
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" | "kibitz" => Some(rest.to_vec()),
        "self" => Some(module.iter().chain(rest).cloned().collect()),
        "super" => {
            let mut base = module.to_vec();
            base.pop();
            let mut rest = rest;
            while let Some(("super", tail)) = rest.split_first().map(|(s, t)| (s.as_str(), t)) {
                base.pop();
                rest = tail;
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }
        _ => None,
    }
}

/// What `source` (the file at `relative`, a path under `src/`) names against the rules, as
/// `src/...:line: path (why)`.
fn violations(relative: &Path, source: &str) -> Vec<String> {
    let name = format!("src/{}", relative.to_string_lossy().replace('\\', "/"));
    let top = relative
        .iter()
        .next()
        .map(|part| part.to_string_lossy().into_owned())
        .unwrap_or_default();
    let module = module_of(relative);
    let mut found = Vec::new();
    for rule in RULES.iter().filter(|rule| rule.applies_to(&top)) {
        for path in named_paths(source) {
            let crate_module =
                resolve(&module, &path.segments).and_then(|resolved| resolved.first().cloned());
            let bad = match &crate_module {
                Some(first) => rule.modules.contains(&first.as_str()),
                None => rule.serving && SERVING_CRATES.contains(&path.segments[0].as_str()),
            };
            if bad {
                found.push(format!(
                    "{name}:{}: {} ({})",
                    path.line,
                    path.segments.join("::"),
                    rule.why
                ));
            }
        }
    }
    found
}

#[test]
fn every_never_of_the_architecture_holds_in_src() {
    let src = super::root().join("src");
    let mut files = Vec::new();
    super::rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut paths = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a source file");
        paths += named_paths(&source).len();
        let relative = file.strip_prefix(&src).expect("under src/");
        problems.extend(violations(relative, &source));
    }
    assert!(
        files.len() > 80 && paths > 2000,
        "read only {} files and {paths} paths",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_planted_import_of_each_kind_is_found() {
    let planted = [
        ("engine/search.rs", "use axum::Json;\n", "axum::Json"),
        (
            "engine/table.rs",
            "fn f() { tokio::spawn(async {}); }\n",
            "tokio::spawn",
        ),
        (
            "tree/parse.rs",
            "#[derive(serde::Deserialize)]\nstruct A;\n",
            "serde::Deserialize",
        ),
        (
            "games/gomoku/eval.rs",
            "use hyper::StatusCode;\n",
            "hyper::StatusCode",
        ),
        (
            "games/mod.rs",
            "use serde_json::Value;\n",
            "serde_json::Value",
        ),
        (
            "engine/game.rs",
            "use crate::games::Grid;\n",
            "crate::games::Grid",
        ),
        (
            "games/connect4/book.rs",
            "use crate::service::Service;\n",
            "crate::service::Service",
        ),
        (
            "service/mod.rs",
            "use crate::{api::ApiError, engine::Score};\n",
            "crate::api::ApiError",
        ),
        (
            "service/metrics/process.rs",
            "fn f() { let _ = super::super::super::api::error::ApiError::Busy; }\n",
            "super::super::super::api::error::ApiError::Busy",
        ),
        (
            "service/pool.rs",
            "use crate::tools::arena;\n",
            "crate::tools::arena",
        ),
        (
            "api/moves.rs",
            "use crate::tools::pbrain::run;\n",
            "crate::tools::pbrain::run",
        ),
        (
            "server.rs",
            "fn f() { crate::tools::arena::run(); }\n",
            "crate::tools::arena::run",
        ),
    ];
    for (file, source, path) in planted {
        let found = violations(Path::new(file), source);
        assert_eq!(found.len(), 1, "{file}: {source:?} gave {found:?}");
        assert!(
            found[0].starts_with(&format!("src/{file}:")) && found[0].contains(path),
            "{file}: {found:?} does not name {path}"
        );
    }
}

#[test]
fn what_the_layers_allow_is_not_reported() {
    let allowed = [
        // Comments, strings, and the engine named from a game.
        (
            "games/gomoku/think.rs",
            "// tokio::spawn is never called here\nconst A: &str = \"axum::Json\";\n\
             /* serde::Serialize */ use crate::engine::Score;\nfn f() { tracing::debug!(\"x\"); }\n",
        ),
        // The service names the games and the engine; `super` inside the service stays there.
        (
            "service/metrics/process.rs",
            "use crate::{engine::Score, games::Grid};\nfn f() { super::super::Metrics::new(); }\n",
        ),
        // The API names the service, serde and axum.
        (
            "api/moves.rs",
            "use axum::Json;\nuse serde::Serialize;\nuse crate::service::Service;\n",
        ),
        // The binary and the tools name the tools.
        (
            "main.rs",
            "use kibitz::tools;\nfn f() { tools::arena::run(); }\n",
        ),
        (
            "tools/arena/mod.rs",
            "use crate::tools::pbrain;\nuse super::record;\n",
        ),
        // Lifetimes and character literals do not swallow the code after them.
        (
            "engine/search.rs",
            "fn f<'a>(x: &'a str) -> char { let _ = '\\''; 'x' }\n",
        ),
    ];
    for (file, source) in allowed {
        assert_eq!(
            violations(Path::new(file), source),
            Vec::<String>::new(),
            "{file}"
        );
    }
}

#[test]
fn paths_are_read_as_the_compiler_reads_them() {
    let source = "use crate::{api::{error::ApiError, json}, service::*};\n\
                  let s = r#\"engine::x\"#; // tokio::y\n\
                  let v = super::super::z::W;\n";
    let paths: Vec<(usize, String)> = named_paths(source)
        .into_iter()
        .map(|p| (p.line, p.segments.join("::")))
        .collect();
    assert_eq!(
        paths,
        [
            (1, "crate::api::error::ApiError".to_owned()),
            (1, "crate::api::json".to_owned()),
            (1, "crate::service".to_owned()),
            (3, "super::super::z::W".to_owned()),
        ]
    );
    let module = module_of(Path::new("service/metrics/process.rs"));
    assert_eq!(
        resolve(
            &module,
            &["super".into(), "super".into(), "super".into(), "api".into()]
        ),
        Some(vec!["api".to_owned()])
    );
}
