//! The cheap compaction layers, as pure functions: eviction of a large tool result to a
//! head + tail preview, and clearing of old tool results to placeholders. Neither touches
//! the log: they decide how a message is rendered in the model's view, and the original
//! stays readable with Expand.
use crate::message::{Message, Part, Role, ViewState};
use crate::policy::Policy;

/// Characters of a large tool result kept at each end of its preview (about 1 000
/// tokens each in English text or code).
pub const PREVIEW_EDGE_CHARS: usize = 4_000;

/// Eviction size for this policy: the configured one, but never more than a quarter of
/// the prompt room, so one tool result cannot fill a small window.
pub fn eviction_threshold(policy: &Policy) -> i64 {
    policy
        .eviction_threshold_tokens
        .min(policy.available_tokens() / 4)
        .max(1)
}

/// Newest tool output kept whole when clearing: the configured amount, at most a quarter
/// of the prompt room.
pub fn protected_tool_tokens(policy: &Policy) -> i64 {
    policy
        .tool_output_protect_tokens
        .min(policy.available_tokens() / 4)
}

/// Least saving that justifies clearing while the request still fits: the configured
/// amount, at most a tenth of the window (every clearing costs the provider's cached
/// prefix, so it must buy a lot at once).
pub fn clear_min_savings(policy: &Policy) -> i64 {
    policy
        .clear_min_savings_tokens
        .min(policy.context_window_tokens / 10)
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
/// line saying how much was left out and how to read it.
pub fn evicted_preview(text: &str, seq: i64, token_count: i64) -> String {
    let chars = text.chars().count();
    if chars <= 2 * PREVIEW_EDGE_CHARS {
        return text.to_string();
    }
    let head_end = text
        .char_indices()
        .nth(PREVIEW_EDGE_CHARS)
        .map_or(text.len(), |(at, _)| at);
    let tail_start = text
        .char_indices()
        .nth(chars - PREVIEW_EDGE_CHARS)
        .map_or(text.len(), |(at, _)| at);
    // Cut at line ends when one is near, so the preview shows whole lines.
    let head_end = text[..head_end]
        .rfind('\n')
        .filter(|&at| at > head_end / 2)
        .map_or(head_end, |at| at + 1);
    let tail_start = text[tail_start..]
        .find('\n')
        .filter(|&at| at < PREVIEW_EDGE_CHARS / 2)
        .map_or(tail_start, |at| tail_start + at + 1);
    let omitted = &text[head_end..tail_start];
    format!(
        "{}\n[... {} lines ({} characters) of this output left out by ctxd to save context; \
         the whole output is {token_count} tokens: Expand seq {seq} to read it ...]\n{}",
        &text[..head_end],
        omitted.lines().count(),
        omitted.chars().count(),
        &text[tail_start..]
    )
}

/// The placeholder of a cleared tool result.
pub fn cleared_placeholder(tool_name: &str, token_count: i64, seq: i64) -> String {
    format!(
        "[Output of tool {tool_name:?} ({token_count} tokens) cleared by ctxd to save context; \
         Expand seq {seq} to read it.]"
    )
}

/// The message as the model sees it in a given view state.
pub fn rendered(
    message: &Message,
    state: ViewState,
    seq: i64,
    token_count: i64,
    tool_name: &str,
) -> Message {
    match state {
        // A summarized message is not in the view; rendered alone it is itself.
        ViewState::Full | ViewState::Summarized => message.clone(),
        ViewState::Evicted => Message {
            content: evicted_preview(&text_of(message), seq, token_count),
            parts: Vec::new(),
            ..message.clone()
        },
        ViewState::Cleared => Message {
            content: cleared_placeholder(tool_name, token_count, seq),
            parts: Vec::new(),
            ..message.clone()
        },
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
}

/// Which tool results to clear, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClearPlan {
    /// Indices into the view.
    pub indices: Vec<usize>,
    pub tokens_saved: i64,
}

/// Plans clearing: tool results older than the newest `protect_tokens` of tool output
/// (the newest result is always kept), not pinned and not cleared yet, oldest first,
/// until `to_shed` tokens are saved or none are left. A plan that saves less than
/// `min_savings` is no plan (empty).
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
    let candidates = &results[..results.len() - kept];
    let mut plan = ClearPlan::default();
    for &index in candidates {
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
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(tokens: i64) -> ViewItem {
        ViewItem {
            role: Role::Tool,
            view_state: ViewState::Full,
            pinned: false,
            view_tokens: tokens,
            cleared_tokens: 20,
        }
    }

    fn other(role: Role, tokens: i64) -> ViewItem {
        ViewItem {
            role,
            ..tool(tokens)
        }
    }

    #[test]
    fn clears_oldest_results_outside_the_protected_tail() {
        let items = [
            other(Role::User, 100),
            tool(1_000),
            tool(1_000),
            other(Role::Assistant, 50),
            tool(1_000),
            tool(1_000),
        ];
        // Protect 2 000: the two newest results stay.
        let plan = plan_clearing(&items, 2_000, 1_500, 0);
        assert_eq!(plan.indices, [1, 2]);
        assert_eq!(plan.tokens_saved, 2 * 980);
        // Shed only a little: one result is enough.
        assert_eq!(plan_clearing(&items, 2_000, 500, 0).indices, [1]);
        // Nothing to shed: nothing cleared.
        assert!(plan_clearing(&items, 2_000, 0, 0).indices.is_empty());
    }

    #[test]
    fn too_small_a_saving_is_no_plan_and_pinned_or_cleared_are_skipped() {
        let mut items = [tool(500), tool(500), tool(500), tool(500)];
        assert!(plan_clearing(&items, 0, 10_000, 2_000).indices.is_empty());
        items[0].pinned = true;
        items[1].view_state = ViewState::Cleared;
        let plan = plan_clearing(&items, 0, 10_000, 0);
        // The newest is always protected.
        assert_eq!(plan.indices, [2]);
    }

    #[test]
    fn preview_keeps_head_and_tail_and_points_to_expand() {
        let text: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let preview = evicted_preview(&text, 42, 30_000);
        assert!(preview.starts_with("line 0\nline 1\n"));
        assert!(preview.ends_with("line 4999\n"));
        assert!(preview.contains("Expand seq 42"));
        assert!(preview.contains("30000 tokens"));
        assert!(preview.len() < 2 * PREVIEW_EDGE_CHARS + 300);
        // Short text is its own preview.
        assert_eq!(evicted_preview("short", 1, 2), "short");
        // Multi-byte text is cut at character boundaries.
        let wide = "é".repeat(20_000);
        assert!(evicted_preview(&wide, 3, 9).contains("Expand seq 3"));
    }
}
