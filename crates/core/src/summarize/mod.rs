//! Summaries: choosing the chunk of the log a leaf summary covers, and the summarizer
//! that writes it. The default summarizer is extractive and deterministic (no model, no
//! network): it keeps what an agent needs to carry on — the user's requests, the
//! commands it ran with their exit status, the files it touched, the names it used, the
//! errors it saw, what it concluded — as many of them as its token target allows, at one
//! of three levels so a summary can always be made smaller. A condensed summary merges
//! its parts' lists (without repeats) rather than cutting their text.
mod block;
mod compose;
mod facts;
mod retention;
mod sections;

pub use block::{
    BLOCK_HEADER, SUMMARY_FRAMING_TOKENS, appended_block_tokens, block, block_tokens, framed_tokens,
};
pub use facts::{
    ALSO_MENTIONED, COMMAND_CHARS, Facts, Retention, command, command_fact, error_lines,
    identifiers, paths, with_facts,
};
pub use retention::{facts, retention};

use crate::message::Message;
use crate::tokenize::Counter;
use sections::Sections;

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
        let header = format!(
            "Summary of conversation messages {}-{} (extractive; the originals stay readable with Expand):",
            input.first_seq, input.last_seq
        );
        let mut sections = Sections::default();
        if !input.messages.is_empty() {
            // Continuity: the task as the conversation first stated it, carried forward
            // from the summary before this span.
            sections.task = input.previous.and_then(first_request);
        }
        // Summaries of this span come first: they are its older part (a condensed
        // summary has nothing else).
        for summary in input.summaries {
            sections.merge(Sections::from_summary(summary));
        }
        sections.merge(Sections::from_messages(input.messages));
        compose::compose(&sections, &header, level, input.target_tokens, counter)
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
    const MARKER: &str = "\n[... cut to fit ...]";
    // A target too small for the marker gets the text cut without it.
    let marker = if counter.text(MARKER) < target {
        MARKER
    } else {
        ""
    };
    let mut room = target - counter.text(marker);
    loop {
        let end = prefix_within(&text, room, counter);
        let cut = format!("{}{marker}", &text[..end]);
        // Tokens counted apart may merge differently together: checked whole.
        if counter.text(&cut) <= target || room <= 0 {
            return if counter.text(&cut) <= target {
                cut
            } else {
                String::new()
            };
        }
        room -= 1;
    }
}

/// The end of the longest prefix of `text` within `room` tokens, at a line end when
/// that keeps at least half of it.
fn prefix_within(text: &str, room: i64, counter: &Counter) -> usize {
    let mut low = 0;
    let mut high = text.len();
    // Binary search on the byte length (at char boundaries).
    while low < high {
        let mid = (low + high).div_ceil(2);
        let mid = floor_boundary(text, mid);
        if mid <= low {
            break;
        }
        if counter.text(&text[..mid]) <= room {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut end = floor_boundary(text, low);
    if let Some(line_end) = text[..end].rfind('\n')
        && line_end > end / 2
    {
        end = line_end;
    }
    end
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests;
