//! Summaries: choosing the chunk of the log a leaf summary covers, and the summarizer
//! that writes it. The default summarizer is extractive and deterministic (no model, no
//! network): it keeps what an agent needs to carry on — the user's requests, the
//! commands it ran, the files it touched, the errors it saw, what it concluded — within
//! a token target, at one of three levels so a summary can always be made smaller.
use std::collections::BTreeSet;

use crate::message::{Message, Role};
use crate::tokenize::Counter;

/// How hard a summarizer squeezes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Normal = 1,
    Aggressive = 2,
    /// No summarizing: the text cut to the target.
    Truncation = 3,
}

impl Level {
    pub fn from_i16(value: i16) -> Level {
        match value {
            2 => Level::Aggressive,
            3 => Level::Truncation,
            _ => Level::Normal,
        }
    }
}

/// What a summarizer is asked to summarize.
pub struct Input<'a> {
    /// The raw messages (leaf) or nothing (condensed).
    pub messages: &'a [Message],
    /// The summaries being condensed (condensed) or nothing (leaf).
    pub summaries: &'a [String],
    /// The summary just before this span, for continuity.
    pub previous: Option<&'a str>,
    pub first_seq: i64,
    pub last_seq: i64,
    pub target_tokens: i64,
}

/// Writes summaries. Implementations must be deterministic for Level::Truncation.
pub trait Summarizer: Send + Sync {
    fn summarize(&self, input: &Input<'_>, level: Level, counter: &Counter) -> String;
}

/// The built-in extractive summarizer.
pub struct Extractive;

/// Opens the line a leaf summary carries the conversation's first request on.
pub const CONTINUES: &str = "Continues earlier messages; the task as first asked: ";

/// The conversation's first request as a summary has it: the request it carries forward,
/// else the first of its user requests.
fn first_request(summary: &str) -> Option<String> {
    let body = body(summary);
    if let Some(carried) = body.lines().find_map(|line| line.strip_prefix(CONTINUES)) {
        return Some(carried.to_string());
    }
    let mut in_requests = false;
    for line in body.lines() {
        match line.strip_prefix("- ") {
            Some(item) if in_requests => return Some(item.to_string()),
            Some(_) => {}
            None => in_requests = line.trim_end() == "User requests:",
        }
    }
    None
}

/// Per-level caps: (characters kept per item, items kept per section).
fn caps(level: Level) -> (usize, usize) {
    match level {
        Level::Normal => (400, 24),
        Level::Aggressive => (160, 8),
        Level::Truncation => (160, 8),
    }
}

/// Marks the part of a summary that carries pinned messages verbatim: summarizers never
/// shorten it, condensation carries it over whole.
pub const PINNED_MARKER: &str = "\nPinned messages (verbatim):\n";

/// A summary's text with the pinned messages it covers appended verbatim, so they stay
/// in every request (pinned messages are never summarized away).
pub fn with_pinned(summary: String, messages: &[Message], children: &[String]) -> String {
    let mut pinned: Vec<String> = children
        .iter()
        .filter_map(|child| {
            child
                .split_once(PINNED_MARKER)
                .map(|(_, part)| part.trim_end().to_string())
        })
        .collect();
    for message in messages.iter().filter(|m| m.pinned) {
        pinned.push(format!("[{}] {}", message.role.as_str(), message.content));
    }
    if pinned.is_empty() {
        return summary;
    }
    format!(
        "{}{PINNED_MARKER}{}\n",
        summary.trim_end(),
        pinned.join("\n")
    )
}

/// A summary without its pinned part.
fn body(summary: &str) -> &str {
    summary
        .split_once(PINNED_MARKER)
        .map_or(summary, |(body, _)| body)
}

impl Summarizer for Extractive {
    fn summarize(&self, input: &Input<'_>, level: Level, counter: &Counter) -> String {
        let (chars, items) = caps(level);
        let mut text = format!(
            "Summary of conversation messages {}-{} (extractive; the originals stay readable with Expand):\n",
            input.first_seq, input.last_seq
        );
        if input.messages.is_empty() {
            let mut continued = false;
            for summary in input.summaries {
                // A condensed summary keeps each part's lines, shortened (the task carried
                // forward once, as its first part has it).
                for line in body(summary).lines().skip(1) {
                    if line.starts_with(CONTINUES) && std::mem::replace(&mut continued, true) {
                        continue;
                    }
                    text.push_str(&clip(line, chars));
                    text.push('\n');
                }
            }
        } else {
            // Continuity: the task as the conversation first stated it, carried forward
            // from the summary before this span.
            if let Some(request) = input.previous.and_then(first_request) {
                text.push_str(CONTINUES);
                text.push_str(&clip(&request, chars));
                text.push('\n');
            }
            // Step summaries of this span come first: they are its older part.
            let earlier: Vec<String> = input
                .summaries
                .iter()
                .flat_map(|summary| body(summary).lines().skip(1).map(|line| clip(line, chars)))
                .collect();
            section(
                &mut text,
                "Earlier steps (summarized before)",
                &earlier,
                items * 2,
            );
            extract(&mut text, input.messages, chars, items);
        }
        fit(text, input.target_tokens, counter)
    }
}

fn extract(text: &mut String, messages: &[Message], chars: usize, items: usize) {
    let mut requests = Vec::new();
    let mut actions = Vec::new();
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    let mut files = BTreeSet::new();
    let mut names = BTreeSet::new();
    for message in messages {
        let content = message.content.as_str();
        if message.role != Role::Tool {
            names.extend(identifiers(content));
        }
        match message.role {
            Role::User | Role::System => requests.push(clip(content, chars)),
            Role::Assistant => {
                if !content.trim().is_empty() {
                    notes.push(clip(content, chars));
                }
                for call in &message.tool_calls {
                    actions.push(clip(
                        &format!("{}: {}", call.name, arguments(&call.arguments)),
                        chars,
                    ));
                    files.extend(paths(&call.arguments));
                    names.extend(identifiers(&arguments(&call.arguments)));
                }
            }
            Role::Tool => {
                for line in content.lines().filter(|line| is_error(line)) {
                    errors.push(clip(line.trim(), chars));
                }
            }
        }
        files.extend(paths(content));
    }
    section(text, "User requests", &requests, items);
    section(text, "Actions (tool calls)", &actions, items);
    section(text, "Errors seen", &errors, items);
    section(text, "Assistant notes", &notes, items);
    let files: Vec<String> = files.into_iter().collect();
    section(text, "Files", &files, items * 2);
    // Names already in the text above need no line of their own.
    let names: Vec<String> = names
        .into_iter()
        .filter(|name| !text.contains(name.as_str()))
        .collect();
    if !names.is_empty() {
        let shown = names.len().min(items * 2);
        text.push_str(&format!("Identifiers: {}", names[..shown].join(", ")));
        if shown < names.len() {
            text.push_str(&format!(" ({} more)", names.len() - shown));
        }
        text.push('\n');
    }
}

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
}

/// How many facts of each kind a span had, and how many of them its summary lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Retention {
    pub paths: i64,
    pub paths_lost: i64,
    pub commands: i64,
    pub commands_lost: i64,
    pub identifiers: i64,
    pub identifiers_lost: i64,
}

impl Retention {
    pub fn total(&self) -> i64 {
        self.paths + self.commands + self.identifiers
    }

    pub fn lost(&self) -> i64 {
        self.paths_lost + self.commands_lost + self.identifiers_lost
    }
}

/// The facts of a span: its messages (leaf) or the summaries it condenses (condensed:
/// their paths and identifiers; their commands are in their text as written).
pub fn facts(messages: &[Message], children: &[String]) -> Facts {
    let mut facts = Facts::default();
    for message in messages {
        facts.paths.extend(paths(&message.content));
        if message.role != Role::Tool {
            facts.identifiers.extend(identifiers(&message.content));
        }
        for call in &message.tool_calls {
            facts.paths.extend(paths(&call.arguments));
            let command = arguments(&call.arguments);
            facts.identifiers.extend(identifiers(&command));
            let command = clip(&command, 60);
            facts
                .commands
                .insert(command.trim_end_matches(" …").to_string());
        }
    }
    for child in children {
        facts.paths.extend(paths(child));
        facts.identifiers.extend(identifiers(child));
        facts.commands.extend(child_commands(child));
    }
    facts.commands.remove("");
    facts
}

/// The commands a summary lists under its actions (first 60 characters, as counted for
/// the messages it covered).
fn child_commands(summary: &str) -> Vec<String> {
    let mut in_actions = false;
    let mut commands = Vec::new();
    for line in body(summary).lines() {
        match line.strip_prefix("- ") {
            Some(item) if in_actions => {
                if let Some((_, command)) = item.split_once(": ") {
                    let command = clip(command, 60);
                    commands.push(command.trim_end_matches(" …").to_string());
                }
            }
            Some(_) => {}
            None => in_actions = line.trim_end() == "Actions (tool calls):",
        }
    }
    commands
}

/// What `summary` keeps of `facts`, and the facts it lost (paths, commands, then
/// identifiers).
pub fn retention<'a>(facts: &'a Facts, summary: &str) -> (Retention, Vec<&'a str>) {
    let mut lost = Vec::new();
    let mut count = |set: &'a BTreeSet<String>| {
        let before = lost.len();
        lost.extend(
            set.iter()
                .map(String::as_str)
                .filter(|fact| !summary.contains(fact)),
        );
        (set.len() as i64, (lost.len() - before) as i64)
    };
    let (paths, paths_lost) = count(&facts.paths);
    let (commands, commands_lost) = count(&facts.commands);
    let (identifiers, identifiers_lost) = count(&facts.identifiers);
    (
        Retention {
            paths,
            paths_lost,
            commands,
            commands_lost,
            identifiers,
            identifiers_lost,
        },
        lost,
    )
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
fn identifiers(text: &str) -> Vec<String> {
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

/// Tool-call arguments as the command when there is one, else compact JSON.
fn arguments(json: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => match map.get("command").or_else(|| map.get("cmd")) {
            Some(serde_json::Value::String(command)) => command.clone(),
            _ => serde_json::Value::Object(map).to_string(),
        },
        _ => json.to_string(),
    }
}

fn is_error(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "error",
        "traceback",
        "exception",
        "failed",
        "fatal",
        "panicked",
        "no such file",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// Words that look like file paths: a slash and a dot-extension, or a leading ./ or /.
fn paths(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "\"'`,;()[]{}<>=|".contains(c))
        .map(|word| word.trim_end_matches([':', '.']))
        .filter(|word| {
            word.len() > 2
                && word.len() < 200
                && word.contains('/')
                && !word.contains("://")
                && (word.starts_with("./")
                    || word.starts_with('/')
                    || word.rsplit('/').next().is_some_and(|name| {
                        name.contains('.') && !name.starts_with('.') && !name.ends_with('.')
                    }))
        })
        .map(str::to_string)
        .collect()
}

fn section(text: &mut String, title: &str, lines: &[String], items: usize) {
    if lines.is_empty() {
        return;
    }
    text.push_str(title);
    text.push_str(":\n");
    // Keep the first and the last ones: how it started and where it ended.
    let shown: Vec<&String> = if lines.len() <= items {
        lines.iter().collect()
    } else {
        let head = items / 2;
        lines[..head]
            .iter()
            .chain(&lines[lines.len() - (items - head)..])
            .collect()
    };
    for line in &shown {
        text.push_str("- ");
        text.push_str(line);
        text.push('\n');
    }
    if shown.len() < lines.len() {
        text.push_str(&format!("- ({} more)\n", lines.len() - shown.len()));
    }
}

/// One line: whitespace collapsed, at most `chars` characters.
fn clip(text: &str, chars: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= chars {
        return line;
    }
    let cut: String = line.chars().take(chars).collect();
    format!("{cut} …")
}

/// Cuts `text` to at most `target` tokens, at a line end when possible.
pub fn fit(text: String, target: i64, counter: &Counter) -> String {
    if counter.text(&text) <= target {
        return text;
    }
    let mut low = 0;
    let mut high = text.len();
    // Binary search on the byte length (at char boundaries) for the longest prefix
    // that fits with the marker.
    const MARKER: &str = "\n[... cut to fit ...]";
    while low < high {
        let mid = (low + high).div_ceil(2);
        let mid = floor_boundary(&text, mid);
        if mid <= low {
            break;
        }
        if counter.text(&text[..mid]) + counter.text(MARKER) <= target {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut end = floor_boundary(&text, low);
    if let Some(line_end) = text[..end].rfind('\n')
        && line_end > end / 2
    {
        end = line_end;
    }
    format!("{}{MARKER}", &text[..end])
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use crate::tokenize::Tokenizer;

    fn counter() -> Counter {
        Counter::new(Tokenizer::O200kBase, 0)
    }

    fn session() -> Vec<Message> {
        let mut call = Message::text(Role::Assistant, "I will run the tests.");
        call.tool_calls = vec![ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"cd /repo && pytest tests/test_models.py"}"#.into(),
        }];
        let mut result = Message::text(
            Role::Tool,
            "collected 3 items\nFAILED tests/test_models.py::test_save - AssertionError: 1 != 2\n",
        );
        result.tool_call_id = "c1".into();
        vec![
            Message::text(
                Role::User,
                "Fix the failing test in django/db/models/base.py please.",
            ),
            call,
            result,
            Message::text(
                Role::Assistant,
                "The save() override drops the pk; fixing base.py.",
            ),
        ]
    }

    #[test]
    fn extractive_keeps_requests_commands_files_and_errors() {
        let messages = session();
        let input = Input {
            messages: &messages,
            summaries: &[],
            previous: None,
            first_seq: 1,
            last_seq: 4,
            target_tokens: 1_000,
        };
        let summary = Extractive.summarize(&input, Level::Normal, &counter());
        for kept in [
            "messages 1-4",
            "Fix the failing test",
            "bash: cd /repo && pytest tests/test_models.py",
            "AssertionError: 1 != 2",
            "django/db/models/base.py",
            "tests/test_models.py",
            "drops the pk",
        ] {
            assert!(summary.contains(kept), "{kept:?} missing from:\n{summary}");
        }
        // Deterministic.
        assert_eq!(
            summary,
            Extractive.summarize(&input, Level::Normal, &counter())
        );
    }

    #[test]
    fn facts_by_kind_and_what_a_summary_lost() {
        let mut messages = session();
        messages.push(Message::text(
            Role::Assistant,
            "Renamed get_pk_value to pkValue in QuerySet; set DJANGO_SETTINGS_MODULE.",
        ));
        let facts = facts(&messages, &[]);
        assert_eq!(
            facts.paths.iter().collect::<Vec<_>>(),
            [
                "/repo",
                "django/db/models/base.py",
                "tests/test_models.py",
                "tests/test_models.py::test_save"
            ]
        );
        assert_eq!(
            facts.commands.iter().collect::<Vec<_>>(),
            ["cd /repo && pytest tests/test_models.py"]
        );
        assert_eq!(
            facts.identifiers.iter().collect::<Vec<_>>(),
            [
                "DJANGO_SETTINGS_MODULE",
                "QuerySet",
                "get_pk_value",
                "pkValue",
                "test_models"
            ]
        );
        // The extract names the identifiers it has no other line for.
        let input = Input {
            messages: &messages,
            summaries: &[],
            previous: None,
            first_seq: 1,
            last_seq: 5,
            target_tokens: 1_000,
        };
        let summary = Extractive.summarize(&input, Level::Normal, &counter());
        let (kept, lost) = retention(&facts, &summary);
        assert_eq!(kept.lost(), 0, "lost {lost:?} in:\n{summary}");
        // A summary being condensed brings its commands, paths and identifiers along.
        let condensed = super::facts(&[], std::slice::from_ref(&summary));
        assert_eq!(condensed.commands, facts.commands);
        assert!(condensed.paths.is_superset(&facts.paths));
        let (partial, lost) = retention(&facts, "tests/test_models.py and QuerySet");
        assert_eq!(
            (
                partial.paths,
                partial.paths_lost,
                partial.commands_lost,
                partial.identifiers_lost
            ),
            (4, 3, 1, 3)
        );
        assert_eq!(lost[..2], ["/repo", "django/db/models/base.py"]);
        // The lost facts listed after a text, within the budget.
        let wider = with_facts("short text", &lost, 40, &counter()).unwrap();
        assert!(counter().text(&wider) <= 40, "{wider}");
        assert!(wider.contains(ALSO_MENTIONED) && wider.contains("django/db/models/base.py"));
        assert_eq!(with_facts("short text", &lost, 3, &counter()), None);
    }

    #[test]
    fn a_leaf_carries_the_first_request_forward() {
        let messages = session();
        let first = Extractive.summarize(
            &Input {
                messages: &messages[..2],
                summaries: &[],
                previous: None,
                first_seq: 1,
                last_seq: 2,
                target_tokens: 1_000,
            },
            Level::Normal,
            &counter(),
        );
        assert!(!first.contains(CONTINUES));
        let later = |previous: &str| {
            Extractive.summarize(
                &Input {
                    messages: &messages[2..],
                    summaries: &[],
                    previous: Some(previous),
                    first_seq: 3,
                    last_seq: 4,
                    target_tokens: 1_000,
                },
                Level::Normal,
                &counter(),
            )
        };
        let second = later(&first);
        let carried =
            format!("{CONTINUES}Fix the failing test in django/db/models/base.py please.");
        assert!(second.contains(&carried), "{second}");
        // And on through a summary that itself carries it.
        assert!(later(&second).contains(&carried));
    }

    #[test]
    fn every_level_fits_the_target() {
        let long: Vec<Message> = (0..200)
            .map(|i| Message::text(Role::User, format!("request {i}: {}", "detail ".repeat(80))))
            .collect();
        for level in [Level::Normal, Level::Aggressive, Level::Truncation] {
            let input = Input {
                messages: &long,
                summaries: &[],
                previous: None,
                first_seq: 1,
                last_seq: 200,
                target_tokens: 300,
            };
            let summary = Extractive.summarize(&input, level, &counter());
            assert!(counter().text(&summary) <= 300, "{level:?}");
            assert!(summary.starts_with("Summary of conversation messages 1-200"));
        }
    }
}
