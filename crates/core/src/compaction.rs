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
/// quarter of the prompt room, so one tool result cannot fill a small window.
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

    fn counter() -> Counter {
        Counter::new(crate::tokenize::Tokenizer::O200kBase, 0)
    }

    #[test]
    fn preview_keeps_head_and_tail_and_points_to_expand() {
        let text: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let preview = evicted_preview(&text, 42, 30_000, 20_000, &counter());
        assert!(preview.starts_with("line 0\nline 1\n"));
        assert!(preview.ends_with("line 4999\n"));
        assert!(preview.contains("Expand seq 42"));
        assert!(preview.contains("30000 tokens"));
        assert!(preview.len() < 2 * PREVIEW_EDGE_CHARS + 300);
        // What is left out is counted as it is: whole lines.
        let kept = preview.lines().filter(|l| l.starts_with("line ")).count();
        assert!(
            preview.contains(&format!("[... {} lines (", 5_000 - kept)),
            "{preview}"
        );
        // Multi-byte text is cut at character boundaries.
        let wide = "é".repeat(20_000);
        assert!(evicted_preview(&wide, 3, 9, 20_000, &counter()).contains("Expand seq 3"));
    }

    #[test]
    fn preview_fits_its_token_cap_down_to_the_pointer_alone() {
        let text: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let wide = evicted_preview(&text, 7, 30_000, 20_000, &counter());
        let capped = evicted_preview(&text, 7, 30_000, 300, &counter());
        assert!(
            counter().text(&capped) <= 300,
            "{}",
            counter().text(&capped)
        );
        assert!(counter().text(&wide) > 300);
        assert!(capped.starts_with("line 0\n") && capped.ends_with("line 4999\n"));
        // Below the pointer line's own size: the line alone.
        let minimal = evicted_preview(&text, 7, 30_000, 1, &counter());
        assert!(
            minimal.starts_with("[... 5000 lines (")
                && minimal.ends_with("Expand seq 7 to read it ...]")
        );
        // Deterministic: a view renders the same preview every build.
        assert_eq!(capped, evicted_preview(&text, 7, 30_000, 300, &counter()));
    }

    fn stored(seq: i64, message: Message, state: ViewState, render: &Render) -> StoredMessage {
        let token_count = render.counter.message(&message);
        let view_tokens =
            render
                .counter
                .message(&render.message(&message, state, seq, token_count, ""));
        StoredMessage {
            seq,
            turn: 1,
            token_count,
            view_tokens,
            view_state: state,
            created_at: chrono::Utc::now(),
            message,
        }
    }

    #[test]
    fn previews_of_the_newest_turn_shrink_to_shed_the_excess() {
        let render = Render {
            counter: counter(),
            preview_tokens: 1_500,
        };
        let big = |n: usize| -> String { (0..n).map(|i| format!("row {i}: value\n")).collect() };
        let mut result = Message::text(Role::Tool, big(20_000));
        result.tool_call_id = "c1".into();
        let mut other = Message::text(Role::Tool, big(9_000));
        other.tool_call_id = "c2".into();
        let view = [
            stored(
                1,
                Message::text(Role::User, "hello"),
                ViewState::Full,
                &render,
            ),
            stored(2, result, ViewState::Evicted, &render),
            stored(3, other, ViewState::Evicted, &render),
        ];
        let refs: Vec<&StoredMessage> = view.iter().collect();
        let before: Vec<i64> = view.iter().map(|m| m.view_tokens).collect();
        assert!(before[1] <= 1_500 && before[2] <= 1_500, "{before:?}");
        let mut tokens = before.clone();
        let shrunk = render.shrink_previews(&refs, 0, &mut tokens, 1_000);
        let shed: i64 = before.iter().sum::<i64>() - tokens.iter().sum::<i64>();
        assert!(shed >= 1_000, "shed {shed}");
        assert_eq!(tokens[0], before[0]);
        for (&i, preview) in &shrunk {
            assert_eq!(render.counter.message(preview), tokens[i]);
            assert!(preview.content.contains(&format!("Expand seq {}", i + 1)));
        }
        // More than even minimal previews can shed: nothing changes.
        let mut untouched = before.clone();
        assert!(
            render
                .shrink_previews(&refs, 0, &mut untouched, 10_000)
                .is_empty()
        );
        assert_eq!(untouched, before);
    }

    fn view_item() -> impl proptest::strategy::Strategy<Value = ViewItem> {
        use proptest::prelude::*;
        (
            prop_oneof![
                Just(Role::User),
                Just(Role::Assistant),
                Just(Role::Tool),
                Just(Role::Tool),
                Just(Role::Tool)
            ],
            prop_oneof![
                3 => Just(ViewState::Full),
                1 => Just(ViewState::Evicted),
                1 => Just(ViewState::Cleared)
            ],
            proptest::bool::weighted(0.15),
            0i64..3_000,
            0i64..60,
        )
            .prop_map(
                |(role, view_state, pinned, view_tokens, cleared_tokens)| ViewItem {
                    role,
                    view_state,
                    pinned,
                    view_tokens,
                    cleared_tokens,
                },
            )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1_000))]
        /// A clearing plan selects, oldest first, only tool results that are not pinned,
        /// not cleared yet, not the newest, and outside the protected newest tool output
        /// (the newest results up to `protect_tokens`, the newest always); its saving is
        /// the sum of theirs; it stops once `to_shed` is reached, takes every eligible
        /// result before giving up short of it, and saves at least `min_savings` or is
        /// empty.
        #[test]
        fn clearing_plans_touch_only_old_unprotected_results(
            items in proptest::collection::vec(view_item(), 0..40),
            protect in 0i64..10_000,
            to_shed in -100i64..20_000,
            min_savings in 0i64..5_000,
        ) {
            let plan = plan_clearing(&items, protect, to_shed, min_savings);
            let live: Vec<usize> = (0..items.len())
                .filter(|&i| items[i].role == Role::Tool && items[i].view_state != ViewState::Cleared)
                .collect();
            let saving = |i: usize| items[i].view_tokens - items[i].cleared_tokens;
            // Newest tool output from i on, i included.
            let output_from = |i: usize| -> i64 {
                live.iter().filter(|&&j| j >= i).map(|&j| items[j].view_tokens).sum()
            };
            proptest::prop_assert!(plan.indices.windows(2).all(|w| w[0] < w[1]));
            for &i in &plan.indices {
                let item = items[i];
                proptest::prop_assert_eq!(item.role, Role::Tool, "{} is not a tool result", i);
                proptest::prop_assert!(!item.pinned, "{} is pinned", i);
                proptest::prop_assert_ne!(item.view_state, ViewState::Cleared, "{} was cleared", i);
                proptest::prop_assert_ne!(Some(&i), live.last(), "{} is the newest result", i);
                proptest::prop_assert!(
                    output_from(i) > protect,
                    "{} is inside the protected newest {} tokens of output", i, protect
                );
                proptest::prop_assert!(saving(i) > 0, "{} saves nothing", i);
            }
            let saved: i64 = plan.indices.iter().map(|&i| saving(i)).sum();
            proptest::prop_assert_eq!(plan.tokens_saved, saved);
            if plan.indices.is_empty() {
                proptest::prop_assert_eq!(plan.tokens_saved, 0);
                return Ok(());
            }
            proptest::prop_assert!(to_shed > 0 && plan.tokens_saved >= min_savings);
            // It stops as soon as enough is saved: without its newest pick it was short.
            proptest::prop_assert!(saved - saving(*plan.indices.last().unwrap()) < to_shed);
            // Short of the goal, it took every result it was allowed to take.
            if saved < to_shed {
                for &i in &live[..live.len() - 1] {
                    let eligible = !items[i].pinned && saving(i) > 0 && output_from(i) > protect;
                    proptest::prop_assert!(
                        !eligible || plan.indices.contains(&i),
                        "{} left though the plan is short", i
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever the text and the cap, the preview stays within the cap (or is the
        /// pointer line alone, when the cap is smaller than it) and points to Expand.
        #[test]
        fn preview_never_exceeds_its_cap_and_always_points_to_expand(
            lines in proptest::collection::vec("[a-zé0-9 _/.{}:;-]{0,120}", 0..400),
            seq in 1i64..1_000_000,
            cap in 1i64..3_000,
        ) {
            let text = lines.join("\n");
            let preview = evicted_preview(&text, seq, 123_456, cap, &counter());
            let pointer = format!("the whole output is 123456 tokens: Expand seq {seq} to read it ...]");
            proptest::prop_assert!(preview.contains(&pointer), "{}", preview);
            let minimal = evicted_preview(&text, seq, 123_456, 0, &counter());
            let tokens = counter().text(&preview);
            proptest::prop_assert!(
                tokens <= cap.max(counter().text(&minimal)),
                "{} tokens over the cap {}", tokens, cap
            );
            if tokens > cap {
                proptest::prop_assert_eq!(&preview, &minimal);
                proptest::prop_assert!(!minimal.contains('\n'));
            }
        }
    }
}
