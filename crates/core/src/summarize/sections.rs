//! What an extractive summary is made of, by kind — the task carried forward, user
//! requests, tool calls with their exit status, error lines, files, identifiers,
//! assistant notes — read from raw messages or back from a summary's text (the
//! extractive summarizer's own format, the format it had before, or free text a model
//! wrote), so that condensation merges lists instead of cutting text.
use std::collections::HashMap;

use crate::message::{Message, Role};

use super::facts::{
    COMMAND_CHARS, command, error_lines, exit_status, failure_lines, identifiers, paths, text_of,
};
use super::{ALSO_MENTIONED, CONTINUES, body, clip};

/// Characters of a request or a note kept when reading them (a summary shows less).
pub(super) const TEXT_CHARS: usize = 400;
/// Characters of an error line kept.
pub(super) const ERROR_CHARS: usize = 200;

/// One tool call: its tool, its command (or arguments) as a summary shows it (first
/// [`COMMAND_CHARS`] characters, whitespace collapsed, " …" when cut), and the exit
/// status its result reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Call {
    pub tool: String,
    pub text: String,
    pub exit: Option<i64>,
}

/// Headings of a summary's parts, as the extractive summarizer writes them.
pub(super) const REQUESTS: &str = "User requests:";
pub(super) const ERRORS: &str = "Errors seen:";
pub(super) const NOTES: &str = "Assistant notes:";
pub(super) const FILES: &str = "Files:";
pub(super) const SEEN_FILES: &str = "Files seen in output:";
pub(super) const IDENTIFIERS: &str = "Identifiers:";
pub(super) const OMITTED: &str = "Not listed for size (Expand shows them):";
const CALLS_OPEN: &str = "Tool calls (";
const CALLS_CLOSE: &str = "):";
/// Headings the summarizer wrote before tool calls had a section per tool.
const LEGACY_ACTIONS: &str = "Actions (tool calls):";
const LEGACY_EARLIER: &str = "Earlier steps (summarized before):";

pub(super) fn calls_heading(tool: &str) -> String {
    format!("{CALLS_OPEN}{tool}{CALLS_CLOSE}")
}

/// The parts of a span, each list oldest first without repeats (a repeated item is
/// where it last occurred).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Sections {
    /// The conversation's first request, carried forward from an earlier summary.
    pub task: Option<String>,
    pub requests: Vec<String>,
    pub calls: Vec<Call>,
    pub errors: Vec<String>,
    /// Paths the user, the assistant or a tool call named.
    pub paths: Vec<String>,
    /// Paths only tool output showed.
    pub seen_paths: Vec<String>,
    pub identifiers: Vec<String>,
    pub notes: Vec<String>,
}

/// Appends `item` to `list`, dropping an earlier equal one.
fn push(list: &mut Vec<String>, item: String) {
    if item.is_empty() {
        return;
    }
    list.retain(|other| *other != item);
    list.push(item);
}

fn push_call(list: &mut Vec<Call>, call: Call) {
    if call.text.is_empty() {
        return;
    }
    list.retain(|other| other.text != call.text || other.tool != call.tool);
    list.push(call);
}

/// Which part of a summary's text a line belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    None,
    Requests,
    Calls(String),
    LegacyActions,
    Errors,
    Notes,
    LegacyFiles,
    Earlier,
}

impl Sections {
    /// The parts of raw messages.
    pub fn from_messages(messages: &[Message]) -> Sections {
        let exits: HashMap<&str, i64> = messages
            .iter()
            .filter(|m| m.role == Role::Tool && !m.tool_call_id.is_empty())
            .filter_map(|m| Some((m.tool_call_id.as_str(), exit_status(&text_of(m))?)))
            .collect();
        let mut sections = Sections::default();
        for message in messages {
            let text = text_of(message);
            if message.role == Role::Tool {
                for line in error_lines(&text).into_iter().chain(failure_lines(&text)) {
                    push(&mut sections.errors, clip(&line, ERROR_CHARS));
                }
                for path in paths(&text) {
                    push(&mut sections.seen_paths, path);
                }
                continue;
            }
            sections.mention(&text);
            if !text.trim().is_empty() {
                let list = match message.role {
                    Role::Assistant => &mut sections.notes,
                    _ => &mut sections.requests,
                };
                push(list, clip(&text, TEXT_CHARS));
            }
            for call in &message.tool_calls {
                let command = command(&call.arguments);
                sections.mention(&command);
                for path in paths(&call.arguments) {
                    push(&mut sections.paths, path);
                }
                push_call(
                    &mut sections.calls,
                    Call {
                        tool: clip(&call.name, 64),
                        text: clip(&command, COMMAND_CHARS),
                        exit: exits.get(call.id.as_str()).copied(),
                    },
                );
            }
        }
        // A path only seen in output that was acted on later is listed once.
        let acted = sections.paths.clone();
        sections.seen_paths.retain(|path| !acted.contains(path));
        sections
    }

    /// Paths and identifiers of a text the user, the assistant or a tool call wrote.
    fn mention(&mut self, text: &str) {
        for path in paths(text) {
            push(&mut self.paths, path);
        }
        for name in identifiers(text) {
            push(&mut self.identifiers, name);
        }
    }

    /// The parts of a summary's text (its pinned messages aside).
    pub fn from_summary(summary: &str) -> Sections {
        let mut sections = Sections::default();
        let mut part = Part::None;
        let mut nested = Part::None;
        for line in body(summary).lines() {
            if part == Part::Earlier
                && let Some(inner) = line.strip_prefix("- ")
            {
                sections.read_line(inner, &mut nested);
                continue;
            }
            sections.read_line(line, &mut part);
        }
        let acted = sections.paths.clone();
        sections.seen_paths.retain(|path| !acted.contains(path));
        sections
    }

    fn read_line(&mut self, line: &str, part: &mut Part) {
        let line = line.trim_end();
        if line.is_empty()
            || line.starts_with("Summary of conversation messages")
            || line.starts_with("Emergency compaction (")
            || line.starts_with(OMITTED)
            || line.starts_with("- (")
        {
            return;
        }
        if let Some(task) = line.strip_prefix(CONTINUES) {
            if self.task.is_none() {
                self.task = Some(task.to_string());
            }
            return;
        }
        let heading = match line {
            REQUESTS => Some(Part::Requests),
            ERRORS => Some(Part::Errors),
            NOTES => Some(Part::Notes),
            FILES => Some(Part::LegacyFiles),
            LEGACY_ACTIONS => Some(Part::LegacyActions),
            LEGACY_EARLIER => Some(Part::Earlier),
            _ => line
                .strip_prefix(CALLS_OPEN)
                .and_then(|rest| rest.strip_suffix(CALLS_CLOSE))
                .map(|tool| Part::Calls(tool.to_string())),
        };
        if let Some(heading) = heading {
            *part = heading;
            return;
        }
        if let Some(list) = line.strip_prefix(SEEN_FILES) {
            *part = Part::None;
            for path in inline(list) {
                push(&mut self.seen_paths, path);
            }
            return;
        }
        if let Some(list) = line.strip_prefix(FILES) {
            *part = Part::None;
            for path in inline(list) {
                push(&mut self.paths, path);
            }
            return;
        }
        if let Some(list) = line.strip_prefix(IDENTIFIERS) {
            *part = Part::None;
            for name in inline(list) {
                push(&mut self.identifiers, name);
            }
            return;
        }
        if let Some(list) = line.strip_prefix(ALSO_MENTIONED) {
            *part = Part::None;
            for fact in list.split("; ").map(str::trim) {
                self.classify(fact);
            }
            return;
        }
        let item = line.strip_prefix("- ");
        match (&*part, item) {
            (Part::Requests, Some(item)) => {
                self.mention(item);
                push(&mut self.requests, item.to_string());
            }
            (Part::Notes, Some(item)) => {
                self.mention(item);
                push(&mut self.notes, item.to_string());
            }
            (Part::Errors, Some(item)) => push(&mut self.errors, item.to_string()),
            (Part::LegacyFiles, Some(item)) => push(&mut self.paths, item.to_string()),
            (Part::Calls(tool), Some(item)) => {
                let (text, exit) = split_exit(item);
                self.mention(text);
                let tool = tool.clone();
                self.add_call(tool, text, exit);
            }
            (Part::LegacyActions, Some(item)) => {
                let (tool, text) = item.split_once(": ").unwrap_or(("", item));
                self.mention(text);
                self.add_call(tool.to_string(), text, None);
            }
            _ => {
                // Free text (a model's summary): a note, its paths and names listed.
                self.mention(line);
                push(&mut self.notes, clip(line, TEXT_CHARS));
            }
        }
    }

    fn add_call(&mut self, tool: String, text: &str, exit: Option<i64>) {
        // A line this summarizer wrote is kept as it is; a longer one (an older format)
        // is cut as this summarizer cuts.
        let shown = text.ends_with(" …") && text.chars().count() <= COMMAND_CHARS + 2;
        let text = if shown {
            text.to_string()
        } else {
            clip(text, COMMAND_CHARS)
        };
        push_call(&mut self.calls, Call { tool, text, exit });
    }

    /// A fact of an "also in this span" list, by what it looks like.
    fn classify(&mut self, fact: &str) {
        if fact.is_empty() {
            return;
        }
        if paths(fact).first().is_some_and(|path| path == fact) {
            push(&mut self.paths, fact.to_string());
        } else if identifiers(fact).first().is_some_and(|name| name == fact) {
            push(&mut self.identifiers, fact.to_string());
        } else if !error_lines(fact).is_empty() {
            push(&mut self.errors, fact.to_string());
        } else {
            self.mention(fact);
            self.add_call(String::new(), fact, None);
        }
    }

    /// `other`'s parts after this one's (the task: the first one known).
    pub fn merge(&mut self, other: Sections) {
        if self.task.is_none() {
            self.task = other.task;
        }
        for item in other.requests {
            push(&mut self.requests, item);
        }
        for call in other.calls {
            push_call(&mut self.calls, call);
        }
        for item in other.errors {
            push(&mut self.errors, item);
        }
        for item in other.paths {
            push(&mut self.paths, item);
        }
        for item in other.seen_paths {
            push(&mut self.seen_paths, item);
        }
        for item in other.identifiers {
            push(&mut self.identifiers, item);
        }
        for item in other.notes {
            push(&mut self.notes, item);
        }
        let acted = self.paths.clone();
        self.seen_paths.retain(|path| !acted.contains(path));
    }
}

/// The items of an inline list ("a, b, c (3 more)").
fn inline(list: &str) -> Vec<String> {
    let list = list.trim();
    let list = match list.rfind(" (") {
        Some(at) if list.ends_with(" more)") => &list[..at],
        _ => list,
    };
    list.split(", ")
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_string)
        .collect()
}

/// Exit status suffix a tool-call line carries when its result reported a failure.
pub(super) fn exit_suffix(exit: Option<i64>) -> String {
    match exit {
        Some(status) if status != 0 => format!(" [exit {status}]"),
        _ => String::new(),
    }
}

/// A tool-call line's text and the exit status its suffix gives.
fn split_exit(item: &str) -> (&str, Option<i64>) {
    if let Some(open) = item.rfind(" [exit ")
        && let Some(status) = item[open + 7..].strip_suffix(']')
        && let Ok(status) = status.parse()
    {
        return (&item[..open], Some(status));
    }
    (item, None)
}
