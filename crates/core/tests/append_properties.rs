//! Properties of an append's plan (`append::plan`) over random batches and sessions:
//! seqs follow the session's last one without a gap; a turn starts at each user
//! message; the row's aggregates grow by exactly what the batch brings; the evicted
//! results are the batch's evicted ones, each announced once; summarization is due
//! exactly when the next request's estimate passes the summarize threshold (and
//! automatic compaction is neither paused nor held).
use ctxd_core::append::{Batch, plan};
use ctxd_core::message::{Message, Role, ToolCall, Usage, ViewState};
use ctxd_core::policy::Policy;
use ctxd_core::session::Session;
use proptest::prelude::*;

/// A batch: user messages, and calls each followed by its result (evicted or not).
fn batch(shape: &[(u8, i64, bool)]) -> (Vec<Message>, Vec<i64>, Vec<(ViewState, i64)>) {
    let (mut messages, mut counts, mut views) = (Vec::new(), Vec::new(), Vec::new());
    for (index, (kind, tokens, evicted)) in shape.iter().enumerate() {
        if kind % 2 == 0 {
            messages.push(Message::text(Role::User, "go on"));
            counts.push(*tokens);
            views.push((ViewState::Full, *tokens));
            continue;
        }
        let id = format!("call-{index}");
        let mut call = Message::text(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: id.clone(),
            name: "bash".into(),
            arguments: "{}".into(),
        });
        messages.push(call);
        counts.push(20);
        views.push((ViewState::Full, 20));
        let mut result = Message::text(Role::Tool, "output");
        result.tool_call_id = id;
        messages.push(result);
        counts.push(*tokens);
        views.push(if *evicted {
            (ViewState::Evicted, (*tokens / 10).max(1))
        } else {
            (ViewState::Full, *tokens)
        });
    }
    (messages, counts, views)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_plan_numbers_counts_and_announces_what_the_batch_brings(
        shape in prop::collection::vec((0u8..4, 1i64..5_000, any::<bool>()), 1..8),
        message_count in 0i64..500,
        turn_count in 0i64..50,
        view_tokens in 0i64..60_000,
        window in 8_000i64..200_000,
        usage in prop::option::of(1i64..100_000),
        held in any::<bool>(),
    ) {
        let policy = Policy {
            context_window_tokens: window,
            max_output_tokens: window / 8,
            ..Policy::default()
        };
        let session = Session {
            message_count,
            turn_count,
            view_tokens,
            log_tokens: view_tokens,
            version: 7,
            compaction_resume_log_tokens: if held { view_tokens + 1 } else { 0 },
            policy: policy.clone(),
            ..Session::default()
        };
        let (messages, counts, views) = batch(&shape);
        let usage_at = messages.iter().position(|m| m.role == Role::Assistant);
        let batch = Batch {
            messages: &messages,
            counts: &counts,
            views: &views,
            usage: usage_at.zip(usage).map(|(at, input)| {
                (at, Usage { input_tokens: input, output_tokens: 10, cached_input_tokens: 0 })
            }),
            content_bytes: 0,
        };
        let planned = plan(&policy, &session, &batch);

        let seqs: Vec<i64> = planned.new_messages.iter().map(|m| m.seq).collect();
        let expected: Vec<i64> = (1..=messages.len() as i64).map(|i| message_count + i).collect();
        prop_assert_eq!(seqs, expected);
        let users = messages.iter().filter(|m| m.role == Role::User).count() as i64;
        prop_assert_eq!(planned.update.turn_count, turn_count + users);
        for (new, message) in planned.new_messages.iter().zip(&messages) {
            prop_assert!(std::ptr::eq(new.message, message));
        }
        let update = &planned.update;
        prop_assert_eq!(update.version, 8);
        prop_assert_eq!(update.message_count, message_count + messages.len() as i64);
        prop_assert_eq!(update.log_tokens, view_tokens + counts.iter().sum::<i64>());
        prop_assert_eq!(update.view_tokens, view_tokens + views.iter().map(|v| v.1).sum::<i64>());
        let evicted: Vec<i64> = planned
            .new_messages
            .iter()
            .filter(|m| m.view_state == ViewState::Evicted)
            .map(|m| m.seq)
            .collect();
        prop_assert_eq!(update.evicted, evicted.len() as i64);
        let announced: Vec<i64> = planned.evictions.iter().map(|e| e.seq).collect();
        prop_assert_eq!(&announced, &evicted);
        for eviction in &planned.evictions {
            // The call is in the batch: its tool is named without a lookup.
            prop_assert_eq!(eviction.tool_name.as_deref(), Some("bash"));
        }
        prop_assert_eq!(update.anchor.is_some(), batch.usage.is_some());
        let due = planned.report.estimate.total_tokens > policy.summarize_threshold_tokens()
            && !held;
        prop_assert_eq!(planned.summarize_due, due);
        // The status moves off OK only when the report says so, and is then announced.
        prop_assert_eq!(
            planned.budget.map(|(status, _)| status),
            (planned.report.status != session.budget_status).then_some(planned.report.status)
        );
    }
}
