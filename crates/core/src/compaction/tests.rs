use super::*;

fn tool(tokens: i64) -> ViewItem {
    ViewItem {
        role: Role::Tool,
        view_state: ViewState::Full,
        pinned: false,
        view_tokens: tokens,
        cleared_tokens: 20,
        recall: false,
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
        proptest::bool::weighted(0.2),
    )
        .prop_map(
            |(role, view_state, pinned, view_tokens, cleared_tokens, recall)| ViewItem {
                role,
                view_state,
                pinned,
                view_tokens,
                cleared_tokens,
                recall,
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
        // Recall answers are picked first, then the others, each oldest first; it stops
        // as soon as enough is saved: without its last pick it was short.
        let mut picks = plan.indices.clone();
        picks.sort_by_key(|&i| (!items[i].recall, i));
        proptest::prop_assert!(saved - saving(*picks.last().unwrap()) < to_shed);
        // No other result is cleared while a recall answer it could clear is left.
        if plan.indices.iter().any(|&i| !items[i].recall) {
            for &i in &live[..live.len() - 1] {
                let eligible = !items[i].pinned && saving(i) > 0 && output_from(i) > protect;
                proptest::prop_assert!(
                    !(eligible && items[i].recall) || plan.indices.contains(&i),
                    "{} is a recall answer left while another result was cleared", i
                );
            }
        }
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
