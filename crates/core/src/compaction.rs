//! The cheap compaction layers, as pure functions: eviction of a large tool result to a
//! head + tail preview, and clearing of old tool results to placeholders. Neither touches
//! the log: they decide how a message is rendered in the model's view, and the original
//! stays readable with Expand.
use std::collections::HashMap;

use crate::message::{Message, Part, Role, StoredMessage, ViewState};
use crate::policy::Policy;
use crate::tokenize::Counter;

/// Most characters of a large tool result kept at each end of its preview (about 1 000
/// tokens each in English text or code); fewer when its token cap requires.
pub const PREVIEW_EDGE_CHARS: usize = 4_000;

/// Eviction size for this policy, as in force ([`Policy::effective`]): never more than a
/// twenty-fourth of the prompt room, so one tool result cannot fill a small window.
pub fn eviction_threshold(policy: &Policy) -> i64 {
    policy.effective().eviction_threshold_tokens
}

/// Newest tool output kept whole when clearing, as in force ([`Policy::effective`]).
pub fn protected_tool_tokens(policy: &Policy) -> i64 {
    policy.effective().tool_output_protect_tokens
}

/// Least saving that justifies clearing while the request still fits, as in force
/// ([`Policy::effective`]).
pub fn clear_min_savings(policy: &Policy) -> i64 {
    policy.effective().clear_min_savings_tokens
}

/// Whether a new message enters the view as its preview: a tool result over the
/// eviction size, unless pinned or a recall answer (sized by its own cap, and asked for
/// to be read whole).
pub fn evicts_on_append(policy: &Policy, message: &Message, tokens: i64) -> bool {
    message.role == Role::Tool
        && !message.pinned
        && !message.metadata.contains_key(crate::recall::ANSWER)
        && tokens > eviction_threshold(policy)
}

/// The text a tool result's view is made from: its content and text parts.
pub fn text_of(message: &Message) -> String {
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

/// A tool result as its evicted preview: the head and the tail of its text around a
/// line saying how much was left out and how to Expand it, at most `max_tokens` tokens
/// as `counter` counts text. The ends keep up to [`PREVIEW_EDGE_CHARS`] characters each,
/// fewer when the cap requires, down to the minimal preview: the line alone (returned
/// even when it is over a cap smaller than itself). Deterministic: the same arguments
/// give the same preview, so a view renders identically across builds.
pub fn evicted_preview(
    text: &str,
    seq: i64,
    token_count: i64,
    max_tokens: i64,
    counter: &Counter,
) -> String {
    let whole = Whole {
        text,
        chars: text.chars().count(),
        newlines: text.bytes().filter(|&b| b == b'\n').count(),
        seq,
        token_count,
    };
    // Something is always left out, so the preview always points to Expand.
    let most = PREVIEW_EDGE_CHARS.min(whole.chars.saturating_sub(1) / 2);
    // A preview short enough in bytes surely fits: no need to tokenize it on each build.
    let fits = |edge: usize| {
        let preview = whole.preview(edge);
        counter.text_at_most(&preview) <= max_tokens || counter.text(&preview) <= max_tokens
    };
    if fits(most) {
        return whole.preview(most);
    }
    // The longest ends that fit; 0 is the minimal preview.
    let (mut low, mut high) = (0, most);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    whole.preview(low)
}

/// A tool result's text, measured once for its previews.
struct Whole<'a> {
    text: &'a str,
    chars: usize,
    newlines: usize,
    seq: i64,
    token_count: i64,
}

impl Whole<'_> {
    /// The preview keeping `edge` characters at each end (`2 x edge < chars`), cut at
    /// line ends when one is near so it shows whole lines.
    fn preview(&self, edge: usize) -> String {
        let text = self.text;
        let head_end = text
            .char_indices()
            .nth(edge)
            .map_or(text.len(), |(at, _)| at);
        let tail_start = match edge {
            0 => text.len(),
            _ => text
                .char_indices()
                .rev()
                .nth(edge - 1)
                .map_or(0, |(at, _)| at),
        };
        let head_end = text[..head_end]
            .rfind('\n')
            .filter(|&at| at > head_end / 2)
            .map_or(head_end, |at| at + 1);
        let tail_start = text[tail_start..]
            .find('\n')
            .filter(|&at| at < edge / 2)
            .map_or(tail_start, |at| tail_start + at + 1);
        let (head, tail) = (&text[..head_end], &text[tail_start..]);
        let newlines = |part: &str| part.bytes().filter(|&b| b == b'\n').count();
        let omitted_newlines = self.newlines - newlines(head) - newlines(tail);
        // As str::lines counts them: a last line without its line end counts too.
        let omitted_lines = omitted_newlines + usize::from(!text[..tail_start].ends_with('\n'));
        let omitted_chars = self.chars - head.chars().count() - tail.chars().count();
        let line = format!(
            "[... {omitted_lines} lines ({omitted_chars} characters) of this output left out by \
             ctxd to save context; the whole output is {} tokens: Expand seq {} to read it ...]",
            self.token_count, self.seq
        );
        match (head.is_empty(), tail.is_empty()) {
            (true, true) => line,
            (true, false) => format!("{line}\n{tail}"),
            (false, true) => format!("{head}\n{line}"),
            (false, false) => format!("{head}\n{line}\n{tail}"),
        }
    }
}

/// The placeholder of a cleared tool result.
pub fn cleared_placeholder(tool_name: &str, token_count: i64, seq: i64) -> String {
    format!(
        "[Output of tool {tool_name:?} ({token_count} tokens) cleared by ctxd to save context; \
         Expand seq {seq} to read it.]"
    )
}

/// How a session's view renders its messages: with the session's counter, evicted tool
/// results as previews of at most `preview_tokens` tokens (whole message).
#[derive(Debug, Clone, Copy)]
pub struct Render {
    pub counter: Counter,
    pub preview_tokens: i64,
}

impl Render {
    /// As the policy renders: previews at most the eviction size in force.
    pub fn new(policy: &Policy) -> Render {
        Render {
            counter: policy.counter(),
            preview_tokens: eviction_threshold(policy),
        }
    }

    /// The message as the model sees it in a given view state.
    pub fn message(
        &self,
        message: &Message,
        state: ViewState,
        seq: i64,
        token_count: i64,
        tool_name: &str,
    ) -> Message {
        let bare = || Message {
            content: String::new(),
            parts: Vec::new(),
            ..message.clone()
        };
        match state {
            // A summarized message is not in the view; rendered alone it is itself.
            ViewState::Full | ViewState::Summarized => message.clone(),
            ViewState::Evicted => {
                let bare = bare();
                // The message's own tokens (role, call id, framing) come off the cap.
                let room = self.preview_tokens - self.counter.message(&bare);
                let text = text_of(message);
                Message {
                    content: evicted_preview(&text, seq, token_count, room, &self.counter),
                    ..bare
                }
            }
            ViewState::Cleared => Message {
                content: cleared_placeholder(tool_name, token_count, seq),
                ..bare()
            },
        }
    }

    /// When even the newest turn (`view[from..]`, with `tokens` the view's token counts)
    /// is `excess` tokens over budget: its evicted results rendered smaller so that it
    /// sheds at least that much, the largest previews first cut down to a common size,
    /// none below the minimal preview. Updates `tokens` and returns the shrunk previews
    /// by index into `view`; empty (and `tokens` untouched) when even minimal previews
    /// would not shed enough.
    pub fn shrink_previews(
        &self,
        view: &[&StoredMessage],
        from: usize,
        tokens: &mut [i64],
        excess: i64,
    ) -> HashMap<usize, Message> {
        if excess <= 0 {
            return HashMap::new();
        }
        let evicted: Vec<usize> = (from..view.len())
            .filter(|&i| view[i].view_state == ViewState::Evicted)
            .collect();
        let render = |i: usize, cap: i64| {
            let m = view[i];
            let preview = Render {
                preview_tokens: cap,
                ..*self
            }
            .message(&m.message, m.view_state, m.seq, m.token_count, "");
            let counted = self.counter.message(&preview);
            (preview, counted)
        };
        // (index, tokens now, tokens as a minimal preview)
        let sizes: Vec<(usize, i64, i64)> = evicted
            .iter()
            .map(|&i| (i, tokens[i], render(i, 0).1.min(tokens[i])))
            .collect();
        let shed = |level: i64| -> i64 {
            sizes
                .iter()
                .map(|&(_, now, least)| now - now.min(level).max(least))
                .sum()
        };
        if shed(0) < excess {
            return HashMap::new();
        }
        // The highest common size that sheds enough.
        let (mut low, mut high) = (0, sizes.iter().map(|s| s.1).max().unwrap_or(0));
        while low < high {
            let mid = (low + high + 1) / 2;
            if shed(mid) >= excess {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let mut shrunk = HashMap::new();
        for &(i, now, least) in &sizes {
            if now > low {
                let (preview, counted) = render(i, low.max(least));
                tokens[i] = counted.min(now);
                shrunk.insert(i, preview);
            }
        }
        shrunk
    }
}

/// One message of the view, as clearing sees it.
#[derive(Debug, Clone, Copy)]
pub struct ViewItem {
    pub role: Role,
    pub view_state: ViewState,
    pub pinned: bool,
    /// Tokens in the view now.
    pub view_tokens: i64,
    /// Tokens it would cost as a placeholder.
    pub cleared_tokens: i64,
    /// A recall answer (metadata `ctxd.recall`): made again from the log at will, so
    /// cleared before any other result.
    pub recall: bool,
}

/// Which tool results to clear, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClearPlan {
    /// Indices into the view.
    pub indices: Vec<usize>,
    pub tokens_saved: i64,
}

/// Plans clearing: tool results older than the newest `protect_tokens` of tool output
/// (the newest result is always kept), not pinned and not cleared yet — recall answers
/// first, then the others, each oldest first — until `to_shed` tokens are saved or none
/// are left. A plan that saves less than `min_savings` is no plan (empty). Its indices
/// are in view order.
pub fn plan_clearing(
    items: &[ViewItem],
    protect_tokens: i64,
    to_shed: i64,
    min_savings: i64,
) -> ClearPlan {
    if to_shed <= 0 {
        return ClearPlan::default();
    }
    let results: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.role == Role::Tool && item.view_state != ViewState::Cleared)
        .map(|(index, _)| index)
        .collect();
    // The protected newest results: the newest always, then while the total holds.
    let mut protected = 0;
    let mut kept = 0;
    for (rank, &index) in results.iter().rev().enumerate() {
        let tokens = items[index].view_tokens;
        if rank > 0 && protected + tokens > protect_tokens {
            break;
        }
        protected += tokens;
        kept += 1;
    }
    let mut candidates = results[..results.len() - kept].to_vec();
    // Stable: recall answers first, each group oldest first.
    candidates.sort_by_key(|&index| !items[index].recall);
    let mut plan = ClearPlan::default();
    for index in candidates {
        if plan.tokens_saved >= to_shed {
            break;
        }
        let item = items[index];
        let saving = item.view_tokens - item.cleared_tokens;
        if item.pinned || saving <= 0 {
            continue;
        }
        plan.indices.push(index);
        plan.tokens_saved += saving;
    }
    if plan.tokens_saved < min_savings {
        return ClearPlan::default();
    }
    plan.indices.sort_unstable();
    plan
}

#[cfg(test)]
mod tests;
