//! Properties of a build's fit (`fit::fit`) over random views: whatever it sends is
//! within the limit; it starts at a turn start (or sends every message); the newest turn
//! is always sent; summaries and the ledger's block stay out only when the newest turn
//! does not fit beside them, the oldest summaries first; and when it refuses, not even
//! the newest turn fits alone.
use ctxd_core::budget;
use ctxd_core::fit::{Fit, Frame, fit};
use ctxd_core::message::{Message, Role, StoredMessage, ToolCall, ViewState};
use ctxd_core::policy::Policy;
use ctxd_core::session::Summary;
use ctxd_core::turns;
use proptest::prelude::*;

/// A view of `turns` turns: a user message, then steps of a call and its result, each
/// with the tokens given.
fn view(turns: &[(i64, Vec<(i64, i64)>)]) -> Vec<StoredMessage> {
    let mut out = Vec::new();
    let mut push = |message: Message, tokens: i64, turn: i64| {
        let seq = out.len() as i64 + 1;
        out.push(StoredMessage {
            seq,
            turn,
            token_count: tokens,
            view_tokens: tokens,
            view_state: ViewState::Full,
            created_at: chrono::DateTime::UNIX_EPOCH,
            message,
        });
    };
    for (turn, (user, steps)) in turns.iter().enumerate() {
        let turn = turn as i64 + 1;
        push(Message::text(Role::User, "task"), *user, turn);
        for (step, (call, result)) in steps.iter().enumerate() {
            let id = format!("c{turn}-{step}");
            let mut calling = Message::text(Role::Assistant, "");
            calling.tool_calls.push(ToolCall {
                id: id.clone(),
                name: "bash".into(),
                arguments: "{}".into(),
            });
            push(calling, *call, turn);
            let mut answer = Message::text(Role::Tool, "ok");
            answer.tool_call_id = id;
            push(answer, *result, turn);
        }
    }
    out
}

fn summary(id: i64, tokens: i32) -> Summary {
    Summary {
        id,
        depth: 0,
        first_seq: 0,
        last_seq: 0,
        content: String::new(),
        token_count: tokens,
        level: 1,
        source_tokens: 0,
        facts: 0,
        facts_lost: 0,
        retention: Default::default(),
    }
}

fn turns_strategy() -> impl Strategy<Value = Vec<(i64, Vec<(i64, i64)>)>> {
    prop::collection::vec(
        (
            1i64..400,
            prop::collection::vec((1i64..200, 1i64..2_000), 0..4),
        ),
        1..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_fit_is_within_the_limit_and_keeps_the_newest_turn(
        turns in turns_strategy(),
        limit in 200i64..12_000,
        system in 0i64..600,
        tools in 0i64..300,
        summaries in prop::collection::vec(1i32..800, 0..4),
        ledger in prop::option::of(1i64..400),
    ) {
        let policy = Policy::default();
        let stored = view(&turns);
        let kept = turns::provider_valid(&stored);
        let messages: Vec<&StoredMessage> = kept.iter().map(|&i| &stored[i]).collect();
        let summaries: Vec<Summary> =
            summaries.iter().enumerate().map(|(i, t)| summary(i as i64 + 1, *t)).collect();
        let frame = Frame {
            policy: &policy,
            limit,
            system_tokens: system,
            tool_tokens: tools,
            summaries: &summaries,
            ledger_tokens: ledger.map(|t| [t, t + 5]),
            anchor: None,
            view_epoch: 0,
        };
        let starts = turns::turn_starts(&messages);
        let newest = starts.last().copied().unwrap_or(0);
        match fit(&frame, &messages) {
            Ok(Fit { cut, tokens, omitted_summaries, ledger_kept, .. }) => {
                // Within the limit, as the estimate counts it.
                let fixed = frame.fixed(omitted_summaries, ledger_kept);
                let history: i64 = tokens[cut..].iter().sum();
                let total = frame.estimate(&messages, fixed, cut, history).total_tokens;
                prop_assert!(total <= limit, "{total} > {limit}");
                // From a turn start (or everything), never after the newest turn's start.
                prop_assert!(cut == 0 || starts.contains(&cut), "cut {cut} of {starts:?}");
                prop_assert!(cut <= newest);
                // Something of the frame stays out only when the newest turn would not
                // fit beside all of it.
                if omitted_summaries > 0 || !ledger_kept && ledger.is_some() {
                    let whole: i64 = messages[newest..].iter().map(|m| m.view_tokens).sum();
                    let all = frame.fixed(0, ledger.is_some());
                    let with_all = frame.estimate(&messages, all, newest, whole).total_tokens;
                    prop_assert!(with_all > limit);
                }
                // The ledger's block goes only after every summary went.
                if ledger.is_some() && !ledger_kept {
                    prop_assert_eq!(omitted_summaries, summaries.len());
                }
            }
            Err(too_big) => {
                // Refused: the newest turn (its previews shrunk as far as they go) does
                // not fit even with the whole frame left out.
                let bare = frame.fixed(summaries.len(), false);
                let alone = budget::estimate(None, 0, 0, 0, bare, too_big.newest_turn_tokens);
                prop_assert!(alone.total_tokens > limit);
            }
        }
    }
}
