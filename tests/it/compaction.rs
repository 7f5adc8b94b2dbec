//! The cheap compaction layers end to end: eviction at append, clearing of old tool
//! results in BuildMessages and by Compact, and the prompt-cache counters.
use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

/// A tool output of `lines` numbered lines (about 9 tokens each).
fn output(label: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("{label} {i:05} lorem ipsum dolor sit amet\n"))
        .collect()
}

async fn expand_one(client: &mut Client, id: &str, seq: i64) -> pb::Message {
    client
        .expand(pb::ExpandRequest {
            session_id: id.into(),
            target: Some(pb::expand_request::Target::List(pb::SeqList {
                seqs: vec![seq],
            })),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .messages
        .remove(0)
}

fn compact(id: &str, target_tokens: i64, dry_run: bool) -> pb::CompactRequest {
    pb::CompactRequest {
        session_id: id.into(),
        mode: pb::CompactMode::ClearToolResults as i32,
        target_tokens,
        dry_run,
        ..Default::default()
    }
}

#[sqlx::test]
async fn large_tool_results_enter_the_view_as_a_preview(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    // Prompt room 28 000: the eviction size is capped at a quarter of it, 7 000.
    create(&mut client, "s", window(32_000, 4_000)).await;
    let big = output("big", 1_500);
    let mut pinned = result("c2", &big);
    pinned.pinned = true;
    let appended = append(
        &mut client,
        "s",
        vec![
            user("Read the log."),
            call(&["c1", "c2"]),
            result("c1", &big),
            pinned,
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        appended.evicted_seqs,
        [3],
        "pinned results are never evicted"
    );

    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let evicted = &built.messages[2];
    assert_eq!(evicted.view_state, pb::ViewState::Evicted as i32);
    assert!(evicted.content.starts_with("big 00000 lorem"));
    assert!(
        evicted
            .content
            .trim_end()
            .ends_with("big 01499 lorem ipsum dolor sit amet")
    );
    assert!(
        evicted.content.contains("Expand seq 3"),
        "{}",
        evicted.content
    );
    assert!(evicted.view_token_count * 3 < evicted.token_count);
    assert_eq!(built.messages[3].view_state, pb::ViewState::Full as i32);
    assert_eq!(built.messages[3].content, big);
    let breakdown = built.budget.unwrap().breakdown.unwrap();
    assert_eq!(
        breakdown.history_tokens,
        built
            .messages
            .iter()
            .map(|m| m.view_token_count)
            .sum::<i64>()
    );

    // The log keeps the whole output.
    assert_eq!(expand_one(&mut client, "s", 3).await.content, big);
    let info = session(&mut client, "s").await;
    assert_eq!(info.compaction.unwrap().evicted_messages, 1);
    assert_eq!(
        info.log_tokens - info.view_tokens,
        evicted.token_count - evicted.view_token_count
    );
    server.stop().await;
}

#[sqlx::test]
async fn build_clears_old_tool_results_past_the_threshold(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    // Window 20 000, reserve 2 000: clearing past 12 000 down to 9 000; the newest
    // 4 500 tokens of tool output are protected, a clearing must save 2 000, results
    // above 750 tokens are evicted at append.
    let policy = pb::Policy {
        clear_target: Some(0.45),
        ..window(20_000, 2_000)
    };
    create(&mut client, "s", policy).await;
    let mut turn = 0;
    let add_turn = |turn: usize| {
        let id = format!("c{turn}");
        vec![
            user(&format!("Step {turn}: show the next file.")),
            call(&[&id]),
            // About 600 tokens: under the eviction size (750), so results stay whole.
            result(&id, &output(&format!("file{turn}"), 60)),
            assistant(&format!("Read file {turn}.")),
        ]
    };
    let mut built;
    loop {
        append(&mut client, "s", add_turn(turn)).await.unwrap();
        turn += 1;
        built = build(&mut client, "s", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        if built
            .messages
            .iter()
            .any(|m| m.view_state == pb::ViewState::Cleared as i32)
        {
            break;
        }
        assert!(turn < 40, "clearing never happened");
    }
    let breakdown = built.budget.unwrap().breakdown.unwrap();
    assert!(
        breakdown.total_tokens <= 9_500,
        "cleared down to about the target: {breakdown:?}"
    );
    assert_eq!(
        built.trimmed.unwrap().messages,
        0,
        "nothing had to be left out"
    );
    let cleared: Vec<&pb::Message> = built
        .messages
        .iter()
        .filter(|m| m.view_state == pb::ViewState::Cleared as i32)
        .collect();
    assert!(cleared.len() >= 2, "one large clearing, not a nibble");
    for message in &cleared {
        assert_eq!(message.role, pb::Role::Tool as i32);
        assert!(message.content.contains("\"bash\""), "{}", message.content);
        assert!(
            message
                .content
                .contains(&format!("Expand seq {}", message.seq))
        );
        let original = expand_one(&mut client, "s", message.seq).await;
        assert!(
            original.content.len() > 1_000,
            "Expand returns the original"
        );
    }
    // The newest tool output stays whole, and the view is still provider-valid.
    let last_result = built
        .messages
        .iter()
        .rev()
        .find(|m| m.role == pb::Role::Tool as i32)
        .unwrap();
    assert_eq!(last_result.view_state, pb::ViewState::Full as i32);
    assert_provider_valid(&built.messages);
    let info = session(&mut client, "s").await;
    let stats = info.compaction.unwrap();
    assert_eq!(stats.cleared_messages, cleared.len() as i64);

    // The next turn extends the cleared view: no clearing again right away.
    for _ in 0..1 {
        append(&mut client, "s", add_turn(turn)).await.unwrap();
        turn += 1;
        let next = build(&mut client, "s", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        assert_eq!(
            next.messages
                .iter()
                .filter(|m| m.view_state == pb::ViewState::Cleared as i32)
                .count(),
            cleared.len(),
            "hysteresis: no new clearing on the next turns"
        );
    }
    let stats = session(&mut client, "s").await.compaction.unwrap();
    assert_eq!(stats.builds, turn as i64);
    // Every build extended the previous one except the one that cleared.
    assert_eq!(stats.extending_builds, turn as i64 - 2);
    assert!(stats.cache_stable_pct > 80.0, "{stats:?}");
    server.stop().await;
}

#[sqlx::test]
async fn compact_clears_to_a_target_and_dry_run_changes_nothing(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    // Prompt room 27 000: the newest 6 750 tokens of tool output are protected.
    create(&mut client, "s", window(30_000, 3_000)).await;
    for turn in 0..10 {
        let id = format!("c{turn}");
        let mut tool_output = result(&id, &output(&format!("f{turn}"), 150));
        tool_output.pinned = turn == 0;
        append(
            &mut client,
            "s",
            vec![
                user(&format!("Step {turn}.")),
                call(&[&id]),
                tool_output,
                assistant("ok"),
            ],
        )
        .await
        .unwrap();
    }
    build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let before = session(&mut client, "s").await;

    let dry = client
        .compact(compact("s", 3_000, true))
        .await
        .unwrap()
        .into_inner();
    assert!(!dry.applied && !dry.no_progress);
    assert!(dry.tokens_after < dry.tokens_before);
    assert!(!dry.cleared_seqs.contains(&3), "the pinned result stays");
    assert!(!dry.cleared_seqs.contains(&39), "the newest result stays");
    let unchanged = session(&mut client, "s").await;
    assert_eq!(unchanged.version, before.version);
    assert_eq!(unchanged.view_tokens, before.view_tokens);

    let done = client
        .compact(compact("s", 3_000, false))
        .await
        .unwrap()
        .into_inner();
    assert!(done.applied);
    assert_eq!(
        done.cleared_seqs, dry.cleared_seqs,
        "the dry run said what would happen"
    );
    assert_eq!(done.tokens_after, dry.tokens_after);
    assert_eq!(done.version, before.version + 1);
    let after = session(&mut client, "s").await;
    assert_eq!(
        after.view_tokens,
        before.view_tokens - (done.tokens_before - done.tokens_after)
    );
    assert_eq!(after.log_tokens, before.log_tokens, "the log is untouched");

    // Nothing left that may be cleared: no progress, nothing changed.
    let again = client
        .compact(compact("s", 3_000, false))
        .await
        .unwrap()
        .into_inner();
    assert!(again.no_progress && !again.applied);
    assert_eq!(session(&mut client, "s").await.version, done.version);

    for (request, field) in [
        (compact("s", -1, false), "target_tokens"),
        (
            pb::CompactRequest {
                mode: 99,
                ..compact("s", 0, false)
            },
            "mode",
        ),
    ] {
        let status = client.compact(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().starts_with(field), "{}", status.message());
    }
    let missing = client.compact(compact("nope", 0, true)).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    server.stop().await;
}

#[sqlx::test]
async fn compact_summarizes_whole_turns_and_condenses(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(
        &mut client,
        "s",
        pb::Policy {
            leaf_chunk_messages: Some(4),
            condense_fanin: Some(2),
            fresh_tail_messages: Some(4),
            ..window(100_000, 10_000)
        },
    )
    .await;
    for turn in 0..6 {
        let id = format!("c{turn}");
        append(
            &mut client,
            "s",
            vec![
                user(&format!("Step {turn}: check src/module_{turn}.rs")),
                call(&[&id]),
                result(
                    &id,
                    &output(&format!("error[E0{turn}] in src/module_{turn}.rs"), 40),
                ),
                assistant(&format!("Fixed module {turn}.")),
            ],
        )
        .await
        .unwrap();
    }
    let summarize = |dry_run| pb::CompactRequest {
        session_id: "s".into(),
        mode: pb::CompactMode::Summarize as i32,
        target_tokens: 1,
        dry_run,
        wait: true,
        ..Default::default()
    };
    let before = session(&mut client, "s").await;
    let dry = client.compact(summarize(true)).await.unwrap().into_inner();
    // Every whole turn but the newest, then the older steps of the newest one.
    assert_eq!((dry.summarized_first_seq, dry.summarized_last_seq), (1, 23));
    assert!(!dry.applied && dry.tokens_after < dry.tokens_before);
    assert_eq!(session(&mut client, "s").await.version, before.version);

    let done = client.compact(summarize(false)).await.unwrap().into_inner();
    assert!(done.applied);
    assert_eq!(
        (done.summarized_first_seq, done.summarized_last_seq),
        (1, 23)
    );
    assert_eq!(
        done.tokens_after, dry.tokens_after,
        "the dry run said what would happen"
    );

    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    // The newest turn keeps its user message and its newest step.
    // (With the summaries of its steps after the user message: seq 0.)
    assert_eq!(
        built.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [21, 0, 24]
    );
    let (prefix, steps): (Vec<&pb::Summary>, Vec<&pb::Summary>) =
        built.summaries.iter().partition(|s| s.last_seq <= 20);
    let mut next = 1;
    for summary in &prefix {
        assert_eq!(summary.first_seq, next, "{:?}", built.summaries);
        next = summary.last_seq + 1;
    }
    assert_eq!(next, 21, "the summaries cover the prefix exactly once");
    assert_eq!(
        steps
            .iter()
            .map(|s| (s.first_seq, s.last_seq))
            .collect::<Vec<_>>(),
        [(22, 23)],
        "the older steps of the newest turn"
    );
    let condensed = built
        .summaries
        .iter()
        .find(|s| s.depth >= 1)
        .expect("runs of two summaries were condensed");
    assert!(
        condensed.content.contains("src/module_0.rs"),
        "{}",
        condensed.content
    );
    let stats = session(&mut client, "s").await.compaction.unwrap();
    assert!(stats.summaries_written > built.summaries.len() as i64);
    let covered = client
        .expand(pb::ExpandRequest {
            session_id: "s".into(),
            target: Some(pb::expand_request::Target::SummaryId(condensed.summary_id)),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        covered.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (condensed.first_seq..=condensed.last_seq).collect::<Vec<_>>()
    );

    // `ctxd inspect` shows the same view, read-only.
    let version = session(&mut client, "s").await.version;
    let addr = server.addr.to_string();
    let report = ctxd::inspect::run(&addr, &Default::default(), None, "s", false)
        .await
        .unwrap();
    assert!(
        report.contains(&format!("summaries ({} active)", built.summaries.len())),
        "{report}"
    );
    assert!(
        report.contains(&format!("#{}", condensed.summary_id)),
        "{report}"
    );
    assert!(
        report.contains(&format!("depth {}  seqs", condensed.depth)),
        "{report}"
    );
    assert!(report.contains("prompt total"), "{report}");
    assert!(
        report.contains(&format!("{} summaries written", stats.summaries_written)),
        "{report}"
    );
    // And as JSON: the same summaries and budget.
    let json = ctxd::inspect::run(&addr, &Default::default(), None, "s", true)
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        json["summaries"].as_array().unwrap().len(),
        built.summaries.len()
    );
    assert!(
        json["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == condensed.summary_id && s["depth"] == condensed.depth)
    );
    assert_eq!(json["session"]["id"], "s");
    assert!(
        json["budget"]["total_tokens"].as_i64().unwrap() > 0,
        "{json}"
    );
    assert_eq!(session(&mut client, "s").await.version, version);
    server.stop().await;
}

#[sqlx::test]
async fn emergency_reduces_the_oldest_half_or_the_steps_of_one_long_turn(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let emergency = |id: &str| pb::CompactRequest {
        session_id: id.into(),
        mode: pb::CompactMode::Emergency as i32,
        ..Default::default()
    };
    create(&mut client, "turns", window(100_000, 10_000)).await;
    for turn in 0..6 {
        append(
            &mut client,
            "turns",
            vec![
                user(&format!("Question {turn}: {}", "why ".repeat(60))),
                assistant(&format!("Answer {turn}: {}", "because ".repeat(60))),
            ],
        )
        .await
        .unwrap();
    }
    let done = client
        .compact(emergency("turns"))
        .await
        .unwrap()
        .into_inner();
    assert!(done.applied);
    assert_eq!(
        (done.summarized_first_seq, done.summarized_last_seq),
        (1, 6),
        "the oldest half of the turns, in one pass"
    );
    let built = build(&mut client, "turns", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(built.first_seq, 7);
    assert!(
        built.summaries[0]
            .content
            .starts_with("Emergency compaction")
    );

    // One long turn: its user message and newest step stay.
    create(&mut client, "long", window(100_000, 10_000)).await;
    let mut turn = vec![user("Fix the build.")];
    for step in 0..4 {
        let id = format!("c{step}");
        turn.push(call(&[&id]));
        turn.push(result(&id, &output(&format!("step {step}"), 30)));
    }
    append(&mut client, "long", turn).await.unwrap();
    let done = client
        .compact(emergency("long"))
        .await
        .unwrap()
        .into_inner();
    assert!(done.applied);
    let built = build(&mut client, "long", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(built.messages[0].seq, 1, "the user message stays");
    assert_eq!(
        built.messages.iter().map(|m| m.seq).collect::<Vec<_>>()[1..],
        [0, 8, 9],
        "the summaries after the user message, the newest step stays"
    );
    assert!(built.summaries[0].content.contains("one long turn"));
    assert_summaries_cover_once(&built, 9);
    server.stop().await;
}

#[sqlx::test]
async fn automatic_compaction_pauses_after_repeated_failures(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(10_000, 2_500)).await;
    // One turn whose only step is an answer larger than the window: nothing can be
    // compacted, every build fails to fit.
    append(
        &mut client,
        "s",
        vec![user("Write it all."), assistant(&"word ".repeat(9_000))],
    )
    .await
    .unwrap();
    for attempt in 1..=4 {
        let status = build(&mut client, "s", pb::OutputFormat::Neutral)
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::FailedPrecondition);
        let stats = session(&mut client, "s").await.compaction.unwrap();
        // The default limit is 3: counting stops once paused.
        assert_eq!(stats.consecutive_failures, attempt.min(3), "{stats:?}");
        assert_eq!(stats.paused, attempt >= 3);
    }
    // A new user message lifts the pause.
    append(&mut client, "s", vec![user("Shorter, please.")])
        .await
        .unwrap();
    let stats = session(&mut client, "s").await.compaction.unwrap();
    assert_eq!((stats.consecutive_failures, stats.paused), (0, false));
    server.stop().await;
}
