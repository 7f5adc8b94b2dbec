//! The facts a summary should keep of what it covers — the commands of its tool calls,
//! file paths, code identifiers, error lines — as found in a message's or a summary's
//! text (the retention check over a span is `retention.rs`).
use std::collections::BTreeSet;

use crate::message::{Message, Part};
use crate::tokenize::Counter;

use super::clip;

/// Characters of a command that identify it: the retention check looks for this much
/// of each command (whitespace collapsed), and summaries list at least this much.
pub const COMMAND_CHARS: usize = 60;

/// What a summary of a span should keep, by kind, to measure what it lost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// File paths anywhere in the span.
    pub paths: BTreeSet<String>,
    /// The commands of its tool calls (their first 60 characters).
    pub commands: BTreeSet<String>,
    /// Code identifiers (snake_case, camelCase, PascalCase, SCREAMING_CASE) the user, the
    /// assistant and its tool calls used (tool output is not counted: a summary cannot
    /// keep every name a file listing shows).
    pub identifiers: BTreeSet<String>,
    /// Error lines of tool output ([`error_lines`]).
    pub errors: BTreeSet<String>,
}

/// How many facts of each kind a span had, and how many of them its summary lost.
/// `total` and `lost` count paths, commands and identifiers (the figures a session's
/// summaries report); error lines are counted beside them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Retention {
    pub paths: i64,
    pub paths_lost: i64,
    pub commands: i64,
    pub commands_lost: i64,
    pub identifiers: i64,
    pub identifiers_lost: i64,
    pub errors: i64,
    pub errors_lost: i64,
}

impl Retention {
    pub fn total(&self) -> i64 {
        self.paths + self.commands + self.identifiers
    }

    pub fn lost(&self) -> i64 {
        self.paths_lost + self.commands_lost + self.identifiers_lost
    }
}

/// A message's text: its content and its text parts.
pub(super) fn text_of(message: &Message) -> String {
    let mut text = message.content.clone();
    for part in &message.parts {
        if let Part::Text { text: part } = part {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(part);
        }
    }
    text
}

/// The fact a command is counted by: its first [`COMMAND_CHARS`] characters,
/// whitespace collapsed.
pub fn command_fact(command: &str) -> String {
    clip(command, COMMAND_CHARS)
        .trim_end_matches(" …")
        .to_string()
}

/// Heading of the list a summary gets when its text lost too many facts of its span.
pub const ALSO_MENTIONED: &str = "Also in this span:";

/// `text` with the `lost` facts listed after it, as many as fit in `budget` tokens in
/// all; None when not even one fits.
pub fn with_facts(text: &str, lost: &[&str], budget: i64, counter: &Counter) -> Option<String> {
    let base = counter.text(text) + counter.text(ALSO_MENTIONED) + 2;
    let mut room = budget - base;
    let mut listed: Vec<&str> = Vec::new();
    for fact in lost {
        // A fact containing the list's separator would read as two.
        if fact.contains("; ") {
            continue;
        }
        let cost = counter.text(fact) + 1;
        if cost > room {
            continue;
        }
        room -= cost;
        listed.push(fact);
    }
    if listed.is_empty() {
        return None;
    }
    Some(format!(
        "{}\n{ALSO_MENTIONED} {}\n",
        text.trim_end(),
        listed.join("; ")
    ))
}

/// Words that look like code identifiers: snake_case or SCREAMING_CASE (an underscore
/// between letters or digits), camelCase or PascalCase (a lower-case letter followed by
/// an upper-case one); 4 to 64 characters.
pub fn identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|word| word.trim_matches('_'))
        .filter(|word| {
            (4..=64).contains(&word.len())
                && word.starts_with(|c: char| c.is_ascii_alphabetic())
                && (word.contains('_')
                    || word
                        .as_bytes()
                        .windows(2)
                        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase()))
        })
        .map(str::to_string)
        .collect()
}

/// A tool call's command (its `command` or `cmd` argument) when it has one, else its
/// arguments as compact JSON (as given when they are not a JSON object).
pub fn command(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => match map.get("command").or_else(|| map.get("cmd")) {
            Some(serde_json::Value::String(command)) => command.clone(),
            _ => serde_json::Value::Object(map).to_string(),
        },
        _ => arguments.to_string(),
    }
}

/// Words that look like file paths: a slash and a dot-extension, or a leading ./ or /.
/// The closing tags of markup (`</output>`, as mini-swe-agent wraps a command's output)
/// are not paths.
pub fn paths(text: &str) -> Vec<String> {
    let closing_tag = |word: &str| word.starts_with('/') && text.contains(&format!("<{word}>"));
    text.split(|c: char| c.is_whitespace() || "\"'`,;()[]{}<>=|".contains(c))
        .map(|word| word.trim_end_matches([':', '.']))
        .filter(|word| {
            word.len() > 2
                && word.len() < 200
                && word.contains('/')
                && !word.contains("://")
                && !closing_tag(word)
                && (word.starts_with("./")
                    || word.starts_with('/')
                    || word.rsplit('/').next().is_some_and(|name| {
                        name.contains('.') && !name.starts_with('.') && !name.ends_with('.')
                    }))
        })
        .map(str::to_string)
        .collect()
}

/// Error lines of a tool result: lines naming an error or exception (`…Error:`,
/// `…Exception:`, `error:`, `fatal:`) and the last line of each traceback, trimmed and
/// whitespace collapsed, 8 to 200 characters.
pub fn error_lines(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_traceback = false;
    for line in text.lines() {
        let trimmed = line.trim();
        let named = (trimmed.contains("Error:") || trimmed.contains("Exception:"))
            && !is_code_header(trimmed)
            || trimmed.starts_with("error:")
            || trimmed.starts_with("fatal:");
        let ends_traceback = in_traceback && !line.starts_with([' ', '\t']) && !trimmed.is_empty();
        if trimmed.starts_with("Traceback (most recent call last)") {
            in_traceback = true;
            continue;
        }
        if ends_traceback {
            in_traceback = false;
        }
        if (named || ends_traceback) && (8..=200).contains(&trimmed.chars().count()) {
            let line = clip(trimmed, usize::MAX);
            if !found.contains(&line) {
                found.push(line);
            }
        }
    }
    found
}

/// A line of source code that opens a block (`except KeyError:`, `if not found:`,
/// `class ParseError(Exception):`), as a file listing shows it: it names an error or a
/// failure without reporting one.
fn is_code_header(line: &str) -> bool {
    const OPENERS: [&str; 10] = [
        "if", "elif", "else", "while", "for", "def", "class", "except", "try", "with",
    ];
    let first = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    line.ends_with(':') && OPENERS.contains(&first)
}

/// Other lines of tool output that report a failure (a failed test, a panic, a missing
/// file), trimmed and whitespace collapsed, 8 to 200 characters; not those
/// [`error_lines`] finds.
pub(super) fn failure_lines(text: &str) -> Vec<String> {
    const WORDS: [&str; 5] = ["failed", "fatal", "panicked", "no such file", "not found"];
    text.lines()
        .map(str::trim)
        .filter(|line| (8..=200).contains(&line.chars().count()))
        .filter(|line| !line.starts_with("Traceback (most recent call last)"))
        .filter(|line| !is_code_header(line))
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            WORDS.iter().any(|word| lower.contains(word))
        })
        .map(|line| clip(line, usize::MAX))
        .collect()
}

/// The exit status a tool result reports, when it reports one: mini-swe-agent's
/// `<returncode>N</returncode>`, or a line `exit code: N` / `exit status N`.
pub(super) fn exit_status(text: &str) -> Option<i64> {
    if let Some(rest) = text.trim_start().strip_prefix("<returncode>") {
        return rest.split_once("</returncode>")?.0.trim().parse().ok();
    }
    let edges = text.lines().take(2).chain(text.lines().rev().take(2));
    edges.into_iter().find_map(|line| {
        let lower = line.trim().to_ascii_lowercase();
        let rest = lower
            .strip_prefix("exit code")
            .or_else(|| lower.strip_prefix("exit status"))?;
        rest.trim_start_matches([':', ' ', '='])
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests;
