//! The documents (`README.md` and every page under `docs/`) kept true where a machine can tell:
//!
//! - every relative link (`[text](path)`, `![alt](path)`, with or without `#anchor`) names a
//!   file or folder of the repository, and its anchor a heading of the document it names;
//! - every repository path written in code (inline or in a fenced block: `src/...`,
//!   `tests/...`, `benches/...`, `examples/...`, `docs/...`, `deploy/...`, `.ci/...`) exists,
//!   and every anchor written out there (`docs/api.md#seeds`) names a heading and every module path of the
//!   crate (`engine::search`) a module;
//! - every section named in words (`[operations, "Memory"]`, `docs/api.md, "Strength levels"`,
//!   `see "Openings"`) is a heading of its document, and no issue tracker a reader cannot see
//!   is named (`references`);
//! - the same for the comments of the code (`comments`): the paths, anchors and sections that
//!   `//`, `///` and `//!` lines of `src/`, `tests/`, `benches/` and `examples/` name;
//! - every "never" of docs/architecture.md's layers holds in `src/` (`layering`);
//! - every `curl` example in a `sh`/`bash` block aimed at the local server (`localhost:8080` or
//!   `127.0.0.1:8080`) is parsed here, in Rust (method, `-H` headers, `-d`/`--data` body, URL:
//!   no `curl` is needed), sent to a server on a free port, and must get no 5xx, and the status
//!   a `# => 422` comment after it shows, where it shows one.
//!
//! An example that cannot be run that way (a body from a pipe, a shell variable) says so on the
//! line before it, `# docs-test: skip (the reason)`, or the test fails. Paths are read from
//! `CARGO_MANIFEST_DIR`, so the test sees the repository as a clone has it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::service::common::*;
use kibitz::config::Config;

mod comments;
mod layering;
mod references;

/// The top-level folders whose paths the documents cite.
const REPOSITORY_FOLDERS: [&str; 7] = [
    "src/",
    "tests/",
    "benches/",
    "examples/",
    "docs/",
    "deploy/",
    ".ci/",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every markdown page under `docs/` (the journal's included), as (path from
/// the root, text).
fn documents() -> Vec<(String, String)> {
    fn pages(folder: &Path, into: &mut Vec<String>) {
        for entry in std::fs::read_dir(root().join(folder)).expect("a docs/ folder") {
            let name = folder.join(entry.expect("a docs/ entry").file_name());
            if root().join(&name).is_dir() {
                pages(&name, into);
            } else if name.extension().is_some_and(|e| e == "md") {
                into.push(name.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut names = Vec::new();
    pages(Path::new("docs"), &mut names);
    names.sort();
    names.insert(0, "README.md".to_owned());
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name))
                .unwrap_or_else(|e| panic!("reading {name}: {e}"));
            (name, text)
        })
        .collect()
}

/// A markdown document split into what the checks read.
#[derive(Debug, Default)]
struct Parsed {
    /// Link targets outside code, with the line they are on.
    links: Vec<(usize, String)>,
    /// Inline code spans and fenced blocks' lines, with the line they start on.
    code: Vec<(usize, String)>,
    /// Shell blocks (`sh`, `bash`, `shell`): the line after the fence, and the text.
    shell: Vec<(usize, String)>,
    /// The anchors of the headings, as GitHub makes them.
    anchors: HashSet<String>,
    /// The headings' texts, for sections named in words.
    headings: Vec<String>,
    /// The text outside code (fenced blocks and inline spans), with a line break where the
    /// document has one.
    prose: String,
    /// The document's line of each line of `prose`.
    prose_lines: Vec<usize>,
}

impl Parsed {
    /// The document's line of a byte offset in `prose`.
    fn line_of(&self, offset: usize) -> usize {
        let newlines = self.prose[..offset].matches('\n').count();
        self.prose_lines.get(newlines).copied().unwrap_or(0)
    }
}

fn parse_markdown(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut prose = String::new();
    let mut prose_lines = Vec::new();
    let mut fence: Option<(String, String, usize, String)> = None; // marker, language, line, text
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        if let Some((marker, language, start, body)) = &mut fence {
            if trimmed.starts_with(marker.as_str()) && trimmed.trim_matches('`').trim().is_empty() {
                parsed.code.push((*start, body.clone()));
                if ["sh", "bash", "shell"].contains(&language.as_str()) {
                    parsed.shell.push((*start, body.clone()));
                }
                fence = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if trimmed.starts_with("```") {
            let marker: String = trimmed.chars().take_while(|&c| c == '`').collect();
            let language = trimmed[marker.len()..].trim().to_owned();
            fence = Some((marker, language, number + 1, String::new()));
            continue;
        }
        if let Some(heading) = heading_text(trimmed) {
            parsed.headings.push(heading.to_owned());
            let slug = slug(heading);
            let count = seen.entry(slug.clone()).or_insert(0);
            parsed.anchors.insert(if *count == 0 {
                slug.clone()
            } else {
                format!("{slug}-{count}")
            });
            *count += 1;
        }
        prose.push_str(line);
        prose.push('\n');
        prose_lines.push(number);
    }
    // Inline code first (a span may cross a line break, never a blank line), then links in
    // what is left, so that a bracket inside code is never read as a link.
    let line_of = |offset: usize, text: &str| {
        let newlines = text[..offset].matches('\n').count();
        prose_lines.get(newlines).copied().unwrap_or(0)
    };
    let mut outside = String::with_capacity(prose.len());
    let bytes = prose.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            let next = prose[at..].find('`').map_or(prose.len(), |n| at + n);
            outside.push_str(&prose[at..next]);
            at = next;
            continue;
        }
        let ticks = prose[at..].bytes().take_while(|&b| b == b'`').count();
        let opener = &prose[at..at + ticks];
        let content_start = at + ticks;
        let close = find_closing_ticks(&prose[content_start..], ticks);
        match close {
            Some(length) => {
                let content = &prose[content_start..content_start + length];
                parsed.code.push((line_of(at, &prose), content.to_owned()));
                // Keep the line breaks so that link line numbers stay right.
                outside.extend(content.chars().filter(|&c| c == '\n'));
                outside.push(' ');
                at = content_start + length + ticks;
            }
            None => {
                outside.push_str(opener);
                at = content_start;
            }
        }
    }
    let mut search = 0;
    while let Some(found) = outside[search..].find("](") {
        let start = search + found + 2;
        let Some(end) = outside[start..].find([')', '\n']).map(|n| start + n) else {
            break;
        };
        let target = outside[start..end].split_whitespace().next().unwrap_or("");
        parsed
            .links
            .push((line_of(start, &outside), target.to_owned()));
        search = end;
    }
    parsed.prose = outside;
    parsed.prose_lines = prose_lines;
    parsed
}

/// The length of a code span's content: up to the next run of exactly `ticks` backticks,
/// before any blank line.
fn find_closing_ticks(text: &str, ticks: usize) -> Option<usize> {
    let limit = text.find("\n\n").unwrap_or(text.len());
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < limit {
        if bytes[at] == b'`' {
            let run = text[at..].bytes().take_while(|&b| b == b'`').count();
            if run == ticks {
                return Some(at);
            }
            at += run;
        } else {
            at += 1;
        }
    }
    None
}

/// The text of an ATX heading (`## Text`), if the line is one.
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some(line[hashes..].trim())
    } else {
        None
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Repository paths named in a piece of code: runs of path characters that start with one
/// of the repository's folders. A glob (`src/api/playground/*`) names its folder.
fn repository_paths(code: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./*-".contains(c);
    code.split(|c: char| !is_path_char(c))
        .filter(|run| {
            REPOSITORY_FOLDERS
                .iter()
                .any(|folder| run.starts_with(folder))
        })
        .map(|run| {
            // A glob names its folder: `examples/gomoku_*` names `examples/`.
            let run = match run.split_once('*') {
                Some((before, _)) => &before[..before.rfind('/').map_or(0, |i| i + 1)],
                None => run,
            };
            run.trim_end_matches(['.', '-']).to_owned()
        })
        .collect()
}

/// Every link or path in `document` (a path from the root) that does not resolve, as
/// `document:line: what`. `others` are the parsed documents, for anchors in other files.
fn unresolved(document: &str, parsed: &Parsed, others: &[(String, Parsed)]) -> Vec<String> {
    let mut problems = Vec::new();
    let folder = Path::new(document).parent().unwrap_or(Path::new(""));
    for (line, target) in &parsed.links {
        if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let named = if path.is_empty() {
            PathBuf::from(document)
        } else {
            normalise(&folder.join(path))
        };
        if !path.is_empty() && !root().join(&named).exists() {
            problems.push(format!("{document}:{line}: link to {target}: no such file"));
            continue;
        }
        if let Some(anchor) = anchor {
            let name = named.to_string_lossy().replace('\\', "/");
            let anchors = if name == document {
                Some(&parsed.anchors)
            } else {
                others
                    .iter()
                    .find(|(other, _)| *other == name)
                    .map(|(_, p)| &p.anchors)
            };
            match anchors {
                Some(anchors) if !anchors.contains(anchor) => problems.push(format!(
                    "{document}:{line}: link to {target}: no heading #{anchor} in {name}"
                )),
                Some(_) => {}
                None => problems.push(format!(
                    "{document}:{line}: link to {target}: anchors are checked in markdown documents only"
                )),
            }
        }
    }
    for (line, code) in &parsed.code {
        for path in repository_paths(code) {
            if !root().join(&path).exists() {
                problems.push(format!("{document}:{line}: `{path}` does not exist"));
            }
        }
        let found = references::missing_anchors(code, others)
            .into_iter()
            .chain(references::missing_modules(code));
        for (offset, what) in found {
            let line = line + code[..offset].matches('\n').count();
            problems.push(format!("{document}:{line}: {what}"));
        }
    }
    let in_words = references::missing_sections(&parsed.prose, Some(document), others)
        .into_iter()
        .chain(references::tracker_references(&parsed.prose));
    for (offset, what) in in_words {
        problems.push(format!("{document}:{}: {what}", parsed.line_of(offset)));
    }
    problems
}

/// Every `.rs` file under `folder` (none when it does not exist), in a stable order.
fn rust_files(folder: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// `a/b/../c` as `a/c`, so that a link out of `docs/` resolves against the root.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other.as_os_str()),
        }
    }
    parts.iter().collect()
}

/// One `curl` example aimed at the local server, as the test sends it.
#[derive(Debug, PartialEq, Eq)]
struct CurlExample {
    /// The line of the document it starts on.
    line: usize,
    method: String,
    /// Path and query on the server, e.g. `/move`.
    path: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    /// The status a `# => NNN` comment after it shows.
    expected: Option<u16>,
}

/// What a shell block's `curl` examples come to: those to send, and how many were skipped.
#[derive(Debug, Default)]
struct ShellExamples {
    examples: Vec<CurlExample>,
    skipped: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A word after quoting; `expands` when it holds a `$` the shell would expand.
    Word {
        text: String,
        expands: bool,
    },
    /// A newline (`newline`), `;`, `&&`, `||`, `&` or `|` (`piped`).
    End {
        piped: bool,
        newline: bool,
    },
    /// `<` or `>`.
    Redirect,
    Comment(String),
}

/// The word being read by [`shell_tokens`].
#[derive(Debug, Default)]
struct PendingWord {
    text: String,
    expands: bool,
    /// The block line it starts on.
    line: usize,
    open: bool,
}

impl PendingWord {
    fn push(&mut self, line: usize, c: char) {
        self.open_at(line);
        self.text.push(c);
    }

    fn open_at(&mut self, line: usize) {
        if !self.open {
            self.open = true;
            self.line = line;
        }
    }

    fn flush(&mut self, tokens: &mut Vec<(usize, Token)>) {
        if self.open {
            let text = std::mem::take(&mut self.text);
            tokens.push((
                self.line,
                Token::Word {
                    text,
                    expands: self.expands,
                },
            ));
            self.open = false;
            self.expands = false;
        }
    }
}

/// Splits shell text into words, command ends and comments, as sh quotes them: `'...'`
/// literal, `"..."` with backslash escapes, a backslash before a newline joins the lines.
fn shell_tokens(text: &str) -> Result<Vec<(usize, Token)>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 0;
    let mut word = PendingWord::default();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                word.flush(&mut tokens);
                tokens.push((
                    line,
                    Token::End {
                        piped: false,
                        newline: true,
                    },
                ));
                line += 1;
            }
            ' ' | '\t' => word.flush(&mut tokens),
            '#' if !word.open => {
                let comment: String =
                    std::iter::from_fn(|| chars.next_if(|&c| c != '\n')).collect();
                tokens.push((line, Token::Comment(comment.trim().to_owned())));
            }
            ';' | '&' | '|' => {
                word.flush(&mut tokens);
                let doubled = chars.next_if_eq(&c).is_some();
                tokens.push((
                    line,
                    Token::End {
                        piped: c == '|' && !doubled,
                        newline: false,
                    },
                ));
            }
            '<' | '>' => {
                word.flush(&mut tokens);
                tokens.push((line, Token::Redirect));
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some(escaped) => word.push(line, escaped),
                None => return Err("a backslash at the end".into()),
            },
            '\'' => {
                word.open_at(line);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => {
                            line += usize::from(inner == '\n');
                            word.text.push(inner);
                        }
                        None => return Err(format!("an unclosed ' from line {}", word.line)),
                    }
                }
            }
            '"' => {
                word.open_at(line);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => line += 1,
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => word.text.push(escaped),
                            Some(other) => {
                                word.text.push('\\');
                                word.text.push(other);
                            }
                            None => return Err(format!("an unclosed \" from line {}", word.line)),
                        },
                        Some(inner) => {
                            word.expands |= inner == '$' || inner == '`';
                            line += usize::from(inner == '\n');
                            word.text.push(inner);
                        }
                        None => return Err(format!("an unclosed \" from line {}", word.line)),
                    }
                }
            }
            other => {
                word.expands |= other == '$' || other == '`';
                word.push(line, other);
            }
        }
    }
    word.flush(&mut tokens);
    Ok(tokens)
}

/// The local server's path in a curl URL, or `None` for another host.
fn local_path(url: &str) -> Option<String> {
    let address = url.strip_prefix("http://").unwrap_or(url);
    let rest = ["localhost:8080", "127.0.0.1:8080"]
        .iter()
        .find_map(|host| address.strip_prefix(host))?;
    match rest {
        "" => Some("/".to_owned()),
        path if path.starts_with('/') => Some(path.to_owned()),
        _ => None,
    }
}

/// Reads one `curl` command's words (without `curl`) into an example; `None` when it is
/// aimed at another server.
fn curl_example(line: usize, words: &[(String, bool)]) -> Result<Option<CurlExample>, String> {
    let mut method = None;
    let mut headers = Vec::new();
    let mut body: Option<String> = None;
    let mut url = None;
    let mut words = words.iter();
    while let Some((word, expands)) = words.next() {
        if *expands {
            return Err(format!("`{word}` needs the shell to expand it"));
        }
        let mut value = |option: &str| match words.next() {
            Some((value, false)) => Ok(value.clone()),
            Some((value, true)) => Err(format!("`{value}` needs the shell to expand it")),
            None => Err(format!("{option} without a value")),
        };
        match word.as_str() {
            "-H" | "--header" => {
                let header = value(word)?;
                let (name, content) = header
                    .split_once(':')
                    .ok_or_else(|| format!("header `{header}` has no colon"))?;
                headers.push((name.trim().to_lowercase(), content.trim().to_owned()));
            }
            "-d" | "--data" | "--data-raw" | "--data-binary" => {
                let data = value(word)?;
                if data.starts_with('@') {
                    return Err(format!("the body `{data}` is read from a file or a pipe"));
                }
                if body.replace(data).is_some() {
                    return Err("two bodies: give one -d".into());
                }
            }
            "-X" | "--request" => method = Some(value(word)?),
            "--silent" | "--no-buffer" | "--show-error" | "--include" => {}
            flags
                if flags.starts_with('-')
                    && !flags.starts_with("--")
                    && flags.len() > 1
                    && flags[1..].chars().all(|c| "sSNi".contains(c)) => {}
            option if option.starts_with('-') => {
                return Err(format!(
                    "curl option {option} is not one the docs test reads (-s, -N, -i, -H, -d, -X)"
                ));
            }
            address => {
                if url.replace(address.to_owned()).is_some() {
                    return Err("two URLs in one curl".into());
                }
            }
        }
    }
    let url = url.ok_or("a curl without a URL")?;
    let Some(path) = local_path(&url) else {
        return Ok(None);
    };
    let method = method.unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.to_owned());
    Ok(Some(CurlExample {
        line,
        method,
        path,
        headers,
        body,
        expected: None,
    }))
}

/// One shell command being read: its words (with whether each needs expanding), the block
/// line it starts on, and what stands around it.
#[derive(Debug, Default)]
struct Command {
    words: Vec<(String, bool)>,
    start: usize,
    redirected: bool,
    after_pipe: bool,
    /// A `# => NNN` on the command's own line.
    status: Option<u16>,
}

/// Turns a finished command into an example if it is a `curl` to the local server; says
/// whether it did.
fn finish(
    first_line: usize,
    command: Command,
    skip: bool,
    found: &mut ShellExamples,
) -> Result<bool, String> {
    let line = first_line + command.start;
    let Some(((name, _), arguments)) = command.words.split_first() else {
        return Ok(false);
    };
    let no_example = || format!("line {line}: `# => NNN` follows no curl example of this server");
    if name != "curl" {
        return match command.status {
            Some(_) => Err(no_example()),
            None => Ok(false),
        };
    }
    if skip {
        found.skipped += 1;
        return Ok(false);
    }
    if command.redirected || command.after_pipe {
        return Err(format!(
            "line {line}: a curl fed by a pipe or redirected cannot be run here: \
             mark it `# docs-test: skip (why)` on the line before"
        ));
    }
    let example = curl_example(line, arguments).map_err(|e| {
        format!("line {line}: {e}; mark it `# docs-test: skip (why)` if it cannot be run")
    })?;
    match (example, command.status) {
        (Some(mut example), status) => {
            example.expected = status;
            found.examples.push(example);
            Ok(true)
        }
        (None, Some(_)) => Err(no_example()),
        (None, None) => Ok(false),
    }
}

/// The `curl` examples of one shell block whose first line is line `first_line` of its
/// document. A `# docs-test: skip (why)` comment skips the commands of the next line; a
/// `# => NNN` comment on a curl's line, or on the lines right after it, is its status.
fn shell_examples(first_line: usize, text: &str) -> Result<ShellExamples, String> {
    let tokens = shell_tokens(text).map_err(|e| format!("block at line {first_line}: {e}"))?;
    let mut found = ShellExamples::default();
    let mut command = Command::default();
    let mut after_pipe = false;
    let mut skip_from: Option<usize> = None;
    let mut skipped_on_line = false;
    // Whether the last command was an example that a `# => NNN` below it belongs to.
    let mut last_is_example = false;
    for (line, token) in tokens {
        match token {
            Token::Word { text, expands } => {
                if command.words.is_empty() {
                    command.start = line;
                    command.after_pipe = after_pipe;
                    last_is_example = false;
                }
                command.words.push((text, expands));
            }
            Token::Redirect => command.redirected = true,
            Token::End { piped, newline } => {
                if !command.words.is_empty() {
                    let skip = skip_from.is_some_and(|marked| marked < command.start);
                    skipped_on_line |= skip;
                    last_is_example =
                        finish(first_line, std::mem::take(&mut command), skip, &mut found)?;
                }
                after_pipe = piped;
                if newline && skipped_on_line {
                    skip_from = None;
                    skipped_on_line = false;
                }
            }
            Token::Comment(comment) => {
                if let Some(reason) = comment.strip_prefix("docs-test: skip") {
                    let reason = reason.trim();
                    if !(reason.starts_with('(') && reason.ends_with(')') && reason.len() > 2) {
                        return Err(format!(
                            "line {}: a skip says why: `# docs-test: skip (the reason)`",
                            first_line + line
                        ));
                    }
                    skip_from = Some(line);
                } else if let Some(status) = comment.strip_prefix("=>") {
                    let status = status.split_whitespace().next().unwrap_or("");
                    let status: u16 = status.parse().map_err(|_| {
                        format!(
                            "line {}: `# => {status}` is not a status",
                            first_line + line
                        )
                    })?;
                    if !command.words.is_empty() {
                        command.status = Some(status);
                    } else if let (true, Some(example)) =
                        (last_is_example, found.examples.last_mut())
                    {
                        example.expected = Some(status);
                    } else {
                        return Err(format!(
                            "line {}: `# => {status}` follows no curl example of this server",
                            first_line + line
                        ));
                    }
                }
            }
        }
    }
    if !command.words.is_empty() {
        let skip = skip_from.is_some_and(|marked| marked < command.start);
        finish(first_line, command, skip, &mut found)?;
    }
    Ok(found)
}

/// Sends `example` to the server at `base` (`http://127.0.0.1:port`) as curl would, and says
/// what is wrong with the answer, if anything.
async fn check_example(
    client: &reqwest::Client,
    base: &str,
    example: &CurlExample,
) -> Result<(), String> {
    let method = reqwest::Method::from_bytes(example.method.as_bytes())
        .map_err(|e| format!("method {}: {e}", example.method))?;
    let mut request = client.request(method, format!("{base}{}", example.path));
    let has = |name: &str| example.headers.iter().any(|(n, _)| n == name);
    // curl's defaults: any answer, and a body sent as a form unless told otherwise.
    if !has("accept") {
        request = request.header("accept", "*/*");
    }
    if example.body.is_some() && !has("content-type") {
        request = request.header("content-type", "application/x-www-form-urlencoded");
    }
    for (name, value) in &example.headers {
        request = request.header(name, value);
    }
    if let Some(body) = &example.body {
        request = request.body(body.clone());
    }
    let response = request
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let status = response.status().as_u16();
    // The whole body: a stream is read to its end.
    let text = response
        .text()
        .await
        .map_err(|e| format!("{status}, body not read: {e}"))?;
    let excerpt: String = text.chars().take(300).collect();
    if status >= 500 {
        return Err(format!("{status}: {excerpt}"));
    }
    match example.expected {
        Some(expected) if expected != status => Err(format!(
            "the document shows {expected}, the server answered {status}: {excerpt}"
        )),
        _ => Ok(()),
    }
}

#[test]
fn every_relative_link_and_repository_path_in_the_docs_resolves() {
    let parsed: Vec<(String, Parsed)> = documents()
        .into_iter()
        .map(|(name, text)| {
            let parsed = parse_markdown(&text);
            (name, parsed)
        })
        .collect();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (name, document) in &parsed {
        checked += document.links.len() + document.code.len();
        problems.extend(unresolved(name, document, &parsed));
    }
    assert!(
        parsed.len() >= 7 && checked > 300,
        "found only {} documents and {checked} links and code spans",
        parsed.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn every_curl_example_in_the_docs_answers_as_shown() {
    let mut examples = Vec::new();
    let mut problems = Vec::new();
    for (name, text) in documents() {
        for (line, block) in parse_markdown(&text).shell {
            match shell_examples(line, &block) {
                Ok(found) => examples.extend(found.examples.into_iter().map(|e| (name.clone(), e))),
                Err(e) => problems.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(examples.len() >= 25, "only {} examples", examples.len());
    let server = start_server(Config::for_tests()).await;
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    for (name, example) in &examples {
        if let Err(e) = check_example(&client, &base, example).await {
            problems.push(format!(
                "{name}:{}: {} {}: {e}",
                example.line, example.method, example.path
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_link_to_a_missing_file_or_heading_and_a_missing_path_in_code_are_found() {
    let text = "# Title\n\n## A section\n\nSee [the API](api.md), [nothing](nope.md), \
                [a section](#a-section), [no section](#elsewhere), [the lib](../src/lib.rs),\n\
                ![shot](screenshots/none.png) and [a site](https://example.org/x).\n\n\
                Code: `src/lib.rs`, `src/no_such_file.rs`, `cat src/api/playground/* | wc -c`,\n\
                a span over two lines `cargo bench -- tests/data/connect4/Test_L2_R2\n\
                --limit 5` and `[A, (B1,3)]` (not a link).\n\n\
                ```sh\nB=tests/data/gomoku/none.txt; cat benches/connect4.rs\n```\n";
    let parsed = parse_markdown(text);
    let problems = unresolved("docs/example.md", &parsed, &[]);
    let joined = problems.join("\n");
    assert_eq!(problems.len(), 5, "{joined}");
    for expected in [
        "docs/example.md:5: link to nope.md: no such file",
        "link to #elsewhere: no heading #elsewhere in docs/example.md",
        "docs/example.md:6: link to screenshots/none.png: no such file",
        "`src/no_such_file.rs` does not exist",
        "`tests/data/gomoku/none.txt` does not exist",
    ] {
        assert!(
            joined.contains(expected),
            "{expected} missing from:\n{joined}"
        );
    }
}

#[test]
fn headings_get_github_anchors() {
    let parsed = parse_markdown(
        "## Game review: `POST /review`\n### Deterministic mode's cost\n## Notes\n## Notes\n\
         ```sh\n# not a heading\n```\n",
    );
    let mut anchors: Vec<&str> = parsed.anchors.iter().map(String::as_str).collect();
    anchors.sort();
    assert_eq!(
        anchors,
        [
            "deterministic-modes-cost",
            "game-review-post-review",
            "notes",
            "notes-1"
        ]
    );
}

#[test]
fn curl_examples_are_read_as_curl_sends_them() {
    let block = "# a comment\n\
                 curl -s localhost:8080/move -H 'content-type: application/json' \\\n  \
                 -d '{\"game\": \"tictactoe\",\n  \"board\": [\"XX.\", \"OO.\", \"...\"]}'\n\
                 # => 200\n\
                 curl -s localhost:8080/move -d '{}'   # => 415\n\
                 curl -s http://127.0.0.1:8080/healthz; curl -sN localhost:8080/move\n\
                 curl -s https://example.org/elsewhere\n\
                 cargo run --release -- --addr 127.0.0.1:8080\n";
    let found = shell_examples(10, block).expect("parsed");
    assert_eq!(found.skipped, 0);
    let summary: Vec<(usize, &str, &str, Option<u16>)> = found
        .examples
        .iter()
        .map(|e| (e.line, e.method.as_str(), e.path.as_str(), e.expected))
        .collect();
    assert_eq!(
        summary,
        [
            (11, "POST", "/move", Some(200)),
            (15, "POST", "/move", Some(415)),
            (16, "GET", "/healthz", None),
            (16, "GET", "/move", None),
        ]
    );
    let first = &found.examples[0];
    assert_eq!(
        first.headers,
        [("content-type".to_owned(), "application/json".to_owned())]
    );
    assert_eq!(
        first.body.as_deref(),
        Some("{\"game\": \"tictactoe\",\n  \"board\": [\"XX.\", \"OO.\", \"...\"]}")
    );
    assert!(found.examples[1].headers.is_empty());
}

#[test]
fn a_curl_example_that_cannot_be_run_fails_unless_it_says_why() {
    let piped = "head -c 10 /dev/zero | curl -s localhost:8080/move --data-binary @-\n";
    let error = shell_examples(1, piped).expect_err("a piped curl");
    assert!(error.contains("docs-test: skip"), "{error}");
    let variable = "curl -s localhost:8080/move -d \"$body\"\n";
    assert!(shell_examples(1, variable).is_err());
    let unknown = "curl -s -o /dev/null localhost:8080/healthz\n";
    assert!(shell_examples(1, unknown).is_err());
    let stray = "# => 200\ncurl -s localhost:8080/healthz\n";
    assert!(
        shell_examples(1, stray).is_err(),
        "a status before any curl"
    );
    let no_reason = "# docs-test: skip\ncurl -s localhost:8080/healthz\n";
    assert!(
        shell_examples(1, no_reason).is_err(),
        "a skip without a reason"
    );
    let skipped = format!("# docs-test: skip (the body comes from a pipe)\n{piped}");
    let found = shell_examples(1, &skipped).expect("skipped");
    assert_eq!((found.examples.len(), found.skipped), (0, 1));
}

#[tokio::test]
async fn an_example_whose_answer_is_not_the_one_shown_is_reported() {
    let block = "curl -s localhost:8080/nope\n# => 200\n\
                 curl -s localhost:8080/move -H 'content-type: application/json' -d '{\"game\": \"tictactoe\", \"board\": [\"...\", \"...\", \"...\"]}'\n# => 200\n";
    let found = shell_examples(1, block).expect("parsed");
    let server = start_server(Config::for_tests()).await;
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    let wrong = check_example(&client, &base, &found.examples[0]).await;
    assert!(
        wrong
            .as_ref()
            .is_err_and(|e| e.contains("shows 200, the server answered 404")),
        "{wrong:?}"
    );
    assert_eq!(
        check_example(&client, &base, &found.examples[1]).await,
        Ok(())
    );
}
