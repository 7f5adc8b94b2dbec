//! Small windows: the sizes a session applies are the ones GetSession reports, and a
//! large tool result's preview never outgrows them — nor the room a build has left.
use ctxd::message::{Message, Role};
use ctxd::pb;
use ctxd::policy::Policy;
use sqlx::PgPool;

use crate::harness::*;

/// A tool result for call `id` whose message counts between `tokens - 40` and
/// `tokens` tokens, as an o200k session counts it.
fn sized_result(id: &str, tokens: i64) -> pb::Message {
    let counter = Policy::default().counter();
    let count = |lines: usize| {
        let mut message = Message::text(Role::Tool, numbered(lines));
        message.tool_call_id = id.to_string();
        counter.message(&message)
    };
    let (mut low, mut high) = (1usize, 1_000_000);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if count(mid) <= tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    assert!((tokens - 40..=tokens).contains(&count(low)));
    result(id, &numbered(low))
}

fn numbered(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("{i:06} build step finished ok\n"))
        .collect()
}

/// Tokens of a built message as the session counts it.
fn tokens_of(message: &pb::Message) -> i64 {
    let mut counted = Message::text(Role::Tool, message.content.clone());
    counted.tool_call_id = message.tool_call_id.clone();
    Policy::default().counter().message(&counted)
}

fn user_of(tokens: usize) -> pb::Message {
    // "word " is one o200k token; the message framing adds a few.
    user(&"word ".repeat(tokens))
}

#[sqlx::test]
async fn get_session_reports_the_sizes_in_force_and_the_requested_ones(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(8_000, 1_000)).await;
    let got = session(&mut client, "s").await;
    let policy = got.policy.unwrap();
    let in_force = [
        policy.eviction_threshold_tokens,
        policy.fresh_tail_tokens,
        policy.tool_output_protect_tokens,
        policy.clear_min_savings_tokens,
        policy.leaf_target_tokens,
        policy.condensed_target_tokens,
    ];
    // A twenty-fourth of the 7 000-token prompt room; a quarter of it; a tenth of the
    // window; a twentieth and a twelfth of the prompt room.
    assert_eq!(
        in_force.map(Option::unwrap),
        [291, 1_750, 1_750, 800, 350, 583]
    );
    let requested = got.requested_policy.unwrap();
    assert_eq!(
        [
            requested.eviction_threshold_tokens,
            requested.fresh_tail_tokens,
            requested.tool_output_protect_tokens,
            requested.clear_min_savings_tokens,
            requested.leaf_target_tokens,
            requested.condensed_target_tokens,
        ]
        .map(Option::unwrap),
        [20_000, 20_000, 40_000, 20_000, 1_200, 2_000]
    );
    assert_eq!(requested.context_window_tokens, Some(8_000));
    assert_eq!(policy.context_window_tokens, Some(8_000));

    // What is reported is what applies: a result at the reported eviction size stays
    // whole, one just over it is evicted, and so is one of 5 256 tokens.
    let threshold = policy.eviction_threshold_tokens.unwrap();
    let mut seq = 0;
    for (id, tokens, evicted) in [
        ("c1", threshold, false),
        ("c2", threshold + 40, true),
        ("c3", 5_256, true),
    ] {
        let appended = append(
            &mut client,
            "s",
            vec![user("go on"), call(&[id]), sized_result(id, tokens)],
        )
        .await
        .unwrap();
        seq += 3;
        let expected: Vec<i64> = if evicted { vec![seq] } else { vec![] };
        assert_eq!(appended.evicted_seqs, expected, "{id}: {tokens} tokens");
    }
    // CreateSession answers with the same mapping.
    let created = create(&mut client, "t", window(8_000, 1_000)).await;
    assert_eq!(created.policy.unwrap().eviction_threshold_tokens, Some(291));
    assert_eq!(
        created.requested_policy.unwrap().eviction_threshold_tokens,
        Some(20_000)
    );
    server.stop().await;
}

/// The tool message of call `id` in a build, after checking that the call is there and
/// is answered right after it.
fn paired_result<'a>(built: &'a pb::BuildMessagesResponse, id: &str) -> &'a pb::Message {
    assert_provider_valid(&built.messages);
    let at = built
        .messages
        .iter()
        .position(|m| m.tool_calls.iter().any(|c| c.id == id))
        .expect("the tool call is sent");
    let answer = &built.messages[at + 1];
    assert_eq!(answer.tool_call_id, id);
    answer
}

#[sqlx::test]
async fn a_big_user_message_and_a_huge_result_fit_with_the_preview_shrunk(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    for (id, user_tokens) in [("exact", 5_000), ("tight", 6_000)] {
        create(&mut client, id, window(8_000, 1_000)).await;
        append(&mut client, id, vec![user_of(user_tokens), call(&["c1"])])
            .await
            .unwrap();
        let appended = append(&mut client, id, vec![sized_result("c1", 83_000)])
            .await
            .unwrap();
        assert_eq!(appended.evicted_seqs, [3]);
        let cap = session(&mut client, id)
            .await
            .policy
            .unwrap()
            .eviction_threshold_tokens
            .unwrap();

        let built = build(&mut client, id, pb::OutputFormat::Neutral)
            .await
            .unwrap_or_else(|status| panic!("{id}: {status:?}"));
        let budget = built.budget.unwrap().breakdown.unwrap();
        assert!(
            budget.total_tokens <= 7_000 && budget.headroom_tokens >= 0,
            "{id}: {budget:?}"
        );
        assert_eq!(
            built.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
            [1, 2, 3],
            "{id}: the user message, the call and its result"
        );
        let preview = paired_result(&built, "c1");
        assert!(
            preview.content.contains("Expand seq 3 to read it"),
            "{id}: {}",
            preview.content
        );
        let preview_tokens = tokens_of(preview);
        assert!(preview_tokens <= cap, "{id}: {preview_tokens} > {cap}");
        if id == "tight" {
            // 6 000 + the call + a 1 750-token preview is over: the preview shrank to
            // what was left, keeping the ends of the output.
            assert!(preview_tokens < 1_000, "{preview_tokens}");
            assert!(preview.content.starts_with("000000 build step"));
        }
        // Cache-stable: the next build renders the same preview.
        let again = build(&mut client, id, pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert_eq!(again.messages, built.messages, "{id}");
    }
    server.stop().await;
}
