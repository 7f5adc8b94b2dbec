//! A recall answer as the text of its tool result: what was found or read, within a cap
//! in tokens as the session's counter counts them, saying where to go on. Rendered in a
//! character budget (three per token of the cap to start with), tightened until the
//! count fits, so the answer keeps to its cap whatever text it holds (code, CJK, digits).
use crate::message::{Part, Role, StoredMessage, ViewState};
use crate::tokenize::Counter;

/// Characters of the answer per token of its cap.
const CHARS_PER_TOKEN: usize = 3;
/// Characters of one search snippet.
const SNIPPET_CHARS: usize = 300;

/// One search hit: a message (`seq`), or a summary (`summary_id`, covering
/// `first_seq..=last_seq`), with the matching snippet.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub seq: i64,
    pub summary_id: i64,
    pub first_seq: i64,
    pub last_seq: i64,
    pub role: Option<Role>,
    /// Whether the request no longer shows it whole (cleared, evicted or summarized).
    pub hidden: bool,
    pub snippet: String,
}

/// A search answer within `cap_tokens`: the best hits that fit (at least the header).
pub fn search_answer(query: &str, found: &[Found], cap_tokens: i64, counter: &Counter) -> String {
    let mut kept = found.len();
    loop {
        let answer = search_text(query, &found[..kept]);
        if kept <= 1 || fits(&answer, cap_tokens, counter) {
            return answer;
        }
        kept -= 1;
    }
}

fn fits(text: &str, cap_tokens: i64, counter: &Counter) -> bool {
    counter.text_at_most(text) <= cap_tokens || counter.text(text) <= cap_tokens
}

fn search_text(query: &str, found: &[Found]) -> String {
    if found.is_empty() {
        return format!(
            "No match for {} in this conversation's history. Try other words, or fewer.",
            crate::error::quoted(query)
        );
    }
    let mut out = format!(
        "{} match(es) for {}; read one whole with ctxd_recall_expand:\n",
        found.len(),
        crate::error::quoted(query)
    );
    for hit in found {
        let place = if hit.summary_id > 0 {
            format!(
                "summary_id {} (seqs {}-{})",
                hit.summary_id, hit.first_seq, hit.last_seq
            )
        } else {
            let role = hit.role.map(role_name).unwrap_or("message");
            let hidden = if hit.hidden { ", not shown above" } else { "" };
            format!("seq {} ({role}{hidden})", hit.seq)
        };
        out.push_str(&format!(
            "- {place}: {}\n",
            clip(&hit.snippet, SNIPPET_CHARS)
        ));
    }
    out
}

/// The messages read, in seq order, within `cap_tokens` as `counter` counts them, the
/// first from byte `offset` of its text on (where an earlier answer stopped inside it);
/// `next_seq` is the first message the store's own cap left out (0: none).
pub fn expand_answer(
    messages: &[StoredMessage],
    next_seq: i64,
    cap_tokens: i64,
    offset: usize,
    counter: &Counter,
) -> String {
    let mut budget = usize::try_from(cap_tokens).unwrap_or(0) * CHARS_PER_TOKEN;
    loop {
        let answer = expand_text(messages, next_seq, budget, offset);
        if budget <= MIN_BUDGET || fits(&answer, cap_tokens, counter) {
            return answer;
        }
        // Tighter, in proportion to how far over it is.
        let counted = usize::try_from(counter.text(&answer))
            .unwrap_or(usize::MAX)
            .max(1);
        let cap = usize::try_from(cap_tokens).unwrap_or(0);
        budget = (budget * cap / counted * 9 / 10).clamp(MIN_BUDGET, budget - 1);
    }
}

/// The smallest character budget an expand answer is tightened to: its head, a little
/// text and where to go on.
const MIN_BUDGET: usize = 400;

fn expand_text(messages: &[StoredMessage], next_seq: i64, budget: usize, offset: usize) -> String {
    if messages.is_empty() {
        return "Nothing to read there: no message has those seq numbers.".into();
    }
    let mut out = String::new();
    for (index, stored) in messages.iter().enumerate() {
        let (head, text, start) = block(stored, if index == 0 { offset } else { 0 });
        let whole = format!("{head}{text}\n");
        if out.len() + whole.len() <= budget {
            out.push_str(&whole);
            continue;
        }
        let room = budget.saturating_sub(out.len());
        let mut shown = 0;
        if index == 0 || room > 200 {
            let part = clip(&whole, room.saturating_sub(120));
            shown = part.len().saturating_sub(head.len() + "…".len());
            out.push_str(&part);
            out.push('\n');
        }
        return format!(
            "{out}[stopped at max_tokens: continue with first_seq {} and offset {}]",
            stored.seq,
            start + shown
        );
    }
    if next_seq > 0 {
        out.push_str(&format!(
            "[stopped at max_tokens: continue with first_seq {next_seq}]"
        ));
    }
    out
}

/// A message as an answer shows it: a head line naming it, and its text from byte
/// `offset` on (at a character boundary, returned as the third value).
fn block(stored: &StoredMessage, offset: usize) -> (String, String, usize) {
    let message = &stored.message;
    let text = text(stored);
    let mut start = offset.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut head = format!("[seq {} · {}", stored.seq, role_name(message.role));
    if !message.name.is_empty() {
        head.push_str(&format!(" · {}", message.name));
    }
    if stored.view_state != ViewState::Full {
        head.push_str(" · not shown above");
    }
    if start > 0 {
        head.push_str(&format!(" · from offset {start}"));
    }
    head.push_str("]\n");
    (head, text[start..].to_string(), start)
}

/// All a message says: its content, its parts, its tool calls.
fn text(stored: &StoredMessage) -> String {
    let message = &stored.message;
    let mut out = message.content.clone();
    for part in &message.parts {
        match part {
            Part::Text { text } => out.push_str(text),
            Part::Media { uri, mime_type, .. } => out.push_str(&format!("[{mime_type}: {uri}]")),
            Part::Native { json, .. } => out.push_str(json),
        }
    }
    for call in &message.tool_calls {
        out.push_str(&format!("\n(calls {} {})", call.name, call.arguments));
    }
    out
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool result",
    }
}

/// At most `max` bytes of `text`, cut at a character boundary, marked when cut.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
