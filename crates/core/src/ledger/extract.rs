//! What the ledger keeps of appended messages: files from tool-call arguments and
//! command tokens (paths normalized), commands (first line, with the exit status a later
//! result shows), and errors in tool results (the last line of a Python traceback, an
//! `Error: …` or `error[E…]` line).
use std::collections::HashMap;

use super::{Kind, MAX_DERIVED_CHARS, MAX_ENTRY_RUNS, Run, merge_seqs};
use crate::message::{Message, Role};

/// Files one message may add (the first ones).
const MAX_FILES_PER_MESSAGE: usize = 32;
/// Errors one tool result may add (its last ones).
const MAX_ERRORS_PER_MESSAGE: usize = 3;
/// Bytes at each end of a tool result searched for an exit status.
const EXIT_SCAN_BYTES: usize = 2_000;
/// Longest path considered, in bytes.
const MAX_PATH_BYTES: usize = 400;

/// Argument keys whose values name files.
const PATH_KEYS: [&str; 9] = [
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "notebook_path",
    "pattern",
    "paths",
];

/// Extensions that make a bare command word (no slash) a file name.
const FILE_EXTENSIONS: [&str; 40] = [
    "py", "rs", "js", "ts", "tsx", "jsx", "mjs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp",
    "rb", "php", "swift", "md", "rst", "txt", "json", "yaml", "yml", "toml", "cfg", "ini", "sh",
    "sql", "html", "css", "xml", "lock", "log", "csv", "ipynb", "proto", "patch", "diff", "pyi",
];

/// An entry found in a batch of messages, merged by (kind, key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    pub key: String,
    pub text: String,
    /// Ascending.
    pub seqs: Vec<i64>,
    /// A command's runs whose result is in the batch.
    pub runs: Vec<Run>,
    /// A command: the id of the newest call that ran it (a result in a later append
    /// names it).
    pub call_id: Option<String>,
}

/// A result in the batch, of a call made by an earlier append, that shows an exit
/// status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub call_id: String,
    pub seq: i64,
    pub exit_code: i32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// In order of first appearance.
    pub entries: Vec<Found>,
    pub outcomes: Vec<Outcome>,
}

impl Extracted {
    fn add(
        &mut self,
        index: &mut HashMap<(Kind, String), usize>,
        kind: Kind,
        key: String,
        text: String,
        seq: i64,
    ) -> usize {
        match index.get(&(kind, key.clone())) {
            Some(&at) => {
                let found = &mut self.entries[at];
                found.seqs = merge_seqs(&found.seqs, &[seq]);
                found.text = text;
                at
            }
            None => {
                index.insert((kind, key.clone()), self.entries.len());
                self.entries.push(Found {
                    kind,
                    key,
                    text,
                    seqs: vec![seq],
                    runs: Vec::new(),
                    call_id: None,
                });
                self.entries.len() - 1
            }
        }
    }
}

/// The ledger's share of a batch of appended messages, each with its seq.
pub fn extract(messages: &[(i64, &Message)]) -> Extracted {
    let mut out = Extracted::default();
    let mut index: HashMap<(Kind, String), usize> = HashMap::new();
    // Calls of this batch that ran a command: id → its entry.
    let mut commands: HashMap<&str, usize> = HashMap::new();
    for &(seq, message) in messages {
        let mut files = 0;
        for call in &message.tool_calls {
            let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments).ok();
            let object = arguments.as_ref().and_then(|value| value.as_object());
            let mut paths: Vec<String> = Vec::new();
            if let Some(object) = object {
                for key in PATH_KEYS {
                    let values: Vec<&str> = match object.get(key) {
                        Some(serde_json::Value::String(value)) => vec![value.as_str()],
                        Some(serde_json::Value::Array(values)) => {
                            values.iter().filter_map(|v| v.as_str()).collect()
                        }
                        _ => Vec::new(),
                    };
                    // A search tool's pattern may be a regular expression: only a glob
                    // or a path names files.
                    paths.extend(
                        values
                            .into_iter()
                            .filter(|value| key != "pattern" || looks_like_file_pattern(value))
                            .map(str::to_string),
                    );
                }
            }
            let paths: Vec<String> = paths.iter().filter_map(|p| normalize_path(p)).collect();
            if let Some(command) = object.and_then(|object| command_of(object, !paths.is_empty())) {
                let first = first_line(&command);
                for word in command_paths(&first) {
                    if files < MAX_FILES_PER_MESSAGE {
                        files += 1;
                        out.add(&mut index, Kind::File, word.clone(), word, seq);
                    }
                }
                let key = clip(&collapse(&first), MAX_DERIVED_CHARS);
                if !key.is_empty() {
                    let more = command.trim().lines().count() > 1;
                    let text = if more {
                        format!("{key} …")
                    } else {
                        key.clone()
                    };
                    let at = out.add(&mut index, Kind::Command, key, text, seq);
                    out.entries[at].call_id = Some(call.id.clone());
                    commands.insert(call.id.as_str(), at);
                }
            }
            for path in paths {
                if files < MAX_FILES_PER_MESSAGE {
                    files += 1;
                    out.add(&mut index, Kind::File, path.clone(), path, seq);
                }
            }
        }
        if message.role != Role::Tool {
            continue;
        }
        let text = tool_text(message);
        if let Some(exit_code) = exit_status(&text) {
            match commands.get(message.tool_call_id.as_str()) {
                Some(&at) => {
                    let found = &mut out.entries[at];
                    found.seqs = merge_seqs(&found.seqs, &[seq]);
                    found.runs.push(Run {
                        result_seq: seq,
                        exit_code,
                    });
                    let excess = found.runs.len().saturating_sub(MAX_ENTRY_RUNS);
                    found.runs.drain(..excess);
                }
                None if !message.tool_call_id.is_empty() => out.outcomes.push(Outcome {
                    call_id: message.tool_call_id.clone(),
                    seq,
                    exit_code,
                }),
                None => {}
            }
        }
        for line in errors(&text) {
            out.add(&mut index, Kind::Error, line.clone(), line, seq);
        }
    }
    out
}

/// A tool result's text: its content and text parts.
fn tool_text(message: &Message) -> String {
    let mut text = message.content.clone();
    for part in &message.parts {
        if let crate::message::Part::Text { text: part } = part {
            text.push('\n');
            text.push_str(part);
        }
    }
    text
}

/// The shell command of a tool call's arguments (`command` or `cmd`, a string or an
/// argv list). An editor's sub-command (one word next to a path, as in
/// `{"command": "view", "path": …}`) is not one.
fn command_of(
    object: &serde_json::Map<String, serde_json::Value>,
    has_path: bool,
) -> Option<String> {
    let value = object.get("command").or_else(|| object.get("cmd"))?;
    let command = match value {
        serde_json::Value::String(command) => command.clone(),
        serde_json::Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(|v| v.as_str()).collect();
            // `["bash", "-lc", "script"]`: the script is the command.
            match words.as_slice() {
                [shell, flag, script]
                    if shell.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') =>
                {
                    script.to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => return None,
    };
    // Arguments may spell U+0000 as an escape; PostgreSQL stores no NUL in text.
    let command = command.replace('\0', "");
    let trimmed = command.trim();
    if trimmed.is_empty() || (has_path && !trimmed.contains(char::is_whitespace)) {
        return None;
    }
    Some(trimmed.to_string())
}

fn first_line(text: &str) -> String {
    text.trim()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Runs of whitespace as one space.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `chars` characters of `text`, with " …" when cut.
pub(super) fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_string(),
        Some((at, _)) => format!("{} …", text[..at].trim_end()),
    }
}

/// Words of a command line that name files: with a slash, or a name with a known
/// extension; not options, globs, variables or URLs.
fn command_paths(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || ";|&<>()".contains(c))
        .map(|word| word.trim_matches(|c| "\"'`".contains(c)))
        .filter(|word| {
            !word.starts_with('-')
                && !word.contains(['=', '*', '?', '$', '{', '}', '[', ']', '\\', '~'])
                && !word.contains("://")
                && (word.contains('/') || has_file_extension(word))
        })
        .filter_map(normalize_path)
        .collect()
}

fn looks_like_file_pattern(value: &str) -> bool {
    !value.contains(char::is_whitespace)
        && (value.contains('/') || value.starts_with("*.") || has_file_extension(value))
}

fn has_file_extension(word: &str) -> bool {
    let name = word.trim_end_matches([':', ',']);
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    stem.chars().any(|c| c.is_ascii_alphabetic())
        && FILE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
}

/// A path as the ledger keys it: quotes and trailing punctuation and `:line[:col]`
/// off, `.` and `..` segments resolved, no `./` prefix, no doubled or trailing slash.
/// `None` when nothing is left or it is too long to be a path.
pub fn normalize_path(raw: &str) -> Option<String> {
    let path = raw
        .trim()
        .trim_matches(|c| "\"'`".contains(c))
        .trim_end_matches([',', ';', ')', '.'])
        .trim_matches(|c| "\"'`".contains(c));
    if path.len() > MAX_PATH_BYTES || path.contains(['\n', '\0']) {
        return None;
    }
    // file.py:12 or file.py:12:4
    let mut path = path;
    for _ in 0..2 {
        if let Some((head, tail)) = path.rsplit_once(':')
            && !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
        {
            path = head;
        }
    }
    let path = path.trim_end_matches(':');
    let absolute = path.starts_with('/');
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|last| *last != "..") {
                    segments.pop();
                } else if !absolute {
                    segments.push("..");
                }
            }
            other => segments.push(other),
        }
    }
    if segments.is_empty()
        || !segments
            .iter()
            .any(|s| s.chars().any(char::is_alphanumeric))
    {
        return None;
    }
    let joined = segments.join("/");
    Some(if absolute {
        format!("/{joined}")
    } else {
        joined
    })
}

/// The exit status a tool result shows near its start or end: `<returncode>1`,
/// `returncode: 1`, `exit code 1`, `exit status 1`, `"exit_code": 1`, `exited with code 1`.
pub fn exit_status(text: &str) -> Option<i32> {
    let head_end = floor_boundary(text, EXIT_SCAN_BYTES);
    let tail_start = ceil_boundary(
        text,
        text.len().saturating_sub(EXIT_SCAN_BYTES).max(head_end),
    );
    [&text[..head_end], &text[tail_start..]]
        .into_iter()
        .find_map(exit_status_in)
}

fn exit_status_in(text: &str) -> Option<i32> {
    let lower = text.to_ascii_lowercase();
    const MARKERS: [&str; 6] = [
        "returncode",
        "exit code",
        "exit status",
        "exit_code",
        "exitcode",
        "exited with code",
    ];
    let mut best: Option<(usize, i32)> = None;
    for marker in MARKERS {
        let mut from = 0;
        while let Some(found) = lower[from..].find(marker) {
            let at = from + found;
            from = at + marker.len();
            let rest = lower[from..].trim_start_matches([' ', ':', '=', '"', '\'', '>', '\t']);
            let number: String = rest
                .char_indices()
                .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-'))
                .map(|(_, c)| c)
                .take(6)
                .collect();
            if let Ok(code) = number.parse::<i32>() {
                if best.is_none_or(|(earliest, _)| at < earliest) {
                    best = Some((at, code));
                }
                break;
            }
        }
    }
    best.map(|(_, code)| code)
}

fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The error lines of a tool result, its last ones, distinct, whitespace collapsed.
pub fn errors(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut in_traceback = false;
    for line in text.lines() {
        let starts_indented = line.starts_with([' ', '\t']);
        let trimmed = line.trim();
        if trimmed.starts_with("Traceback (most recent call last)") {
            in_traceback = true;
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        let error = if in_traceback && !starts_indented {
            in_traceback = false;
            // Chained exceptions announce the next traceback in prose.
            let prose = trimmed.starts_with("During handling")
                || trimmed.starts_with("The above exception");
            (!prose).then_some(trimmed)
        } else if starts_indented {
            None
        } else {
            error_line(trimmed)
        };
        if let Some(error) = error {
            let line = clip(&collapse(&error.replace('\0', "")), MAX_DERIVED_CHARS);
            found.retain(|seen| *seen != line);
            found.push(line);
        }
    }
    let skip = found.len().saturating_sub(MAX_ERRORS_PER_MESSAGE);
    found.split_off(skip)
}

/// `error: …`, `error[E0425]: …`, `fatal: …`, or an exception name (`ValueError: …`,
/// `pkg.module.SomeException`), also after pytest's `E   ` prefix (then without it).
fn error_line(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("error:") || lower.starts_with("error[") || lower.starts_with("fatal:") {
        return Some(line);
    }
    let line = match line.strip_prefix("E ") {
        Some(rest) => rest.trim_start(),
        None => line,
    };
    let name = line.split(':').next().unwrap_or_default();
    let is_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    let exception = is_name
        && (name.ends_with("Error") || name.ends_with("Exception"))
        && (line.len() == name.len() || line[name.len()..].starts_with(": "));
    exception.then_some(line)
}
