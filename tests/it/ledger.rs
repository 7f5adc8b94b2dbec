//! The task ledger through the real server: it survives every compaction kind
//! (clearing, leaf and condensed summaries, emergency) in every build, done todos never
//! revert, entries Expand to the messages they came from, bad UpdateLedger input is
//! refused naming the field with nothing changed, Search finds entries, and deleting a
//! session deletes its ledger. `ledger/sessions.rs`: search, real recorded sessions and
//! a property over random sessions; `ledger/batch.rs`: ledger rows in the append batch;
//! `ledger/fork.rs`: a fork's ledger.
mod batch;
mod fork;
mod sessions;

use std::collections::{BTreeMap, BTreeSet};

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

/// An assistant step running `command` in bash.
fn run(id: &str, command: &str) -> pb::Message {
    pb::Message {
        role: pb::Role::Assistant as i32,
        tool_calls: vec![pb::ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments_json: serde_json::json!({ "command": command }).to_string(),
        }],
        ..Default::default()
    }
}

/// A turn as mini-swe-agent's recorded sessions have them: a command on a file, its
/// result with a return code (a traceback when it fails), an answer.
fn turn(n: usize, fail: bool, lines: usize) -> Vec<pb::Message> {
    let id = format!("call_{n}");
    let code = i32::from(fail);
    let mut output = format!("<returncode>{code}</returncode>\n<output>\n");
    for line in 0..lines {
        output.push_str(&format!("line {line:04} of module_{n} lorem ipsum dolor\n"));
    }
    if fail {
        output.push_str(&format!(
            "Traceback (most recent call last):\n  File \"/testbed/src/module_{n}.py\", line 3, in <module>\n    check()\nValueError: bad value in step {n}\n"
        ));
    }
    output.push_str("</output>");
    vec![
        user(&format!("Step {n}: look at src/module_{n}.py")),
        run(&id, &format!("python src/module_{n}.py --step {n}")),
        result(&id, &output),
        assistant(&format!("Step {n} looked at.")),
    ]
}

fn todo(id: &str, text: &str, status: pb::TodoStatus) -> pb::LedgerTodo {
    pb::LedgerTodo {
        id: id.into(),
        text: text.into(),
        status: status as i32,
    }
}

async fn update(
    client: &mut Client,
    id: &str,
    todos: Vec<pb::LedgerTodo>,
    notes: Vec<pb::LedgerNote>,
) -> Result<pb::UpdateLedgerResponse, tonic::Status> {
    client
        .update_ledger(pb::UpdateLedgerRequest {
            session_id: id.into(),
            todos,
            notes,
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn ledger(client: &mut Client, id: &str) -> Vec<pb::LedgerEntry> {
    get_session(client, id, false).await.ledger
}

async fn compact(client: &mut Client, id: &str, mode: pb::CompactMode) -> pb::CompactResponse {
    client
        .compact(pb::CompactRequest {
            session_id: id.into(),
            mode: mode as i32,
            target_tokens: 1,
            wait: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

/// What a build must show of the ledger: every todo with its status, every note, and
/// every derived entry whose messages are all covered by the build's summaries or
/// cleared (with a cap large enough that nothing folds). Returns the number of derived
/// entries checked.
fn assert_block_holds(built: &pb::BuildMessagesResponse, entries: &[pb::LedgerEntry]) -> usize {
    let covered = built
        .summaries
        .iter()
        .map(|s| s.last_seq)
        .max()
        .unwrap_or(0);
    let cleared: BTreeSet<i64> = built
        .messages
        .iter()
        .filter(|m| m.view_state == pb::ViewState::Cleared as i32)
        .map(|m| m.seq)
        .collect();
    let hidden = |seq: i64| seq <= covered || cleared.contains(&seq);
    let prompt = &block_text(built);
    let mut derived = 0;
    for entry in entries {
        let kind = pb::LedgerEntryKind::try_from(entry.kind).unwrap();
        match kind {
            pb::LedgerEntryKind::Todo => {
                let label = match pb::TodoStatus::try_from(entry.status).unwrap() {
                    pb::TodoStatus::Done => "done",
                    pb::TodoStatus::InProgress => "in progress",
                    _ => "pending",
                };
                let line = format!("[{label}] {}: {}", entry.key, entry.text);
                assert!(prompt.contains(&line), "{line:?} not in {prompt}");
            }
            pb::LedgerEntryKind::Note => assert!(prompt.contains(&entry.text), "{prompt}"),
            _ if !entry.seqs.is_empty() && entry.seqs.iter().all(|&s| hidden(s)) => {
                derived += 1;
                assert!(
                    prompt.contains(&entry.text),
                    "{kind:?} {:?} (seqs {:?}, covered through {covered}) not in {prompt}",
                    entry.text,
                    entry.seqs
                );
            }
            _ => {}
        }
    }
    derived
}

/// Where the block can be: the system prompt, and the synthetic message (seq 0) the
/// placement puts it in (after a long task's user message by default).
pub fn block_text(built: &pb::BuildMessagesResponse) -> String {
    let mut text = built.system_prompt.clone();
    for message in built.messages.iter().filter(|m| m.seq == 0) {
        text.push('\n');
        text.push_str(&message.content);
    }
    text
}

/// The keys of the ledger by kind, to check nothing is ever lost.
fn keys(entries: &[pb::LedgerEntry]) -> BTreeSet<(i32, String)> {
    entries.iter().map(|e| (e.kind, e.key.clone())).collect()
}

fn ledger_policy() -> pb::Policy {
    pb::Policy {
        leaf_chunk_messages: Some(4),
        condense_fanin: Some(2),
        fresh_tail_messages: Some(4),
        fresh_tail_tokens: Some(2_000),
        tool_output_protect_tokens: Some(4_000),
        clear_min_savings_tokens: Some(1_000),
        ledger_fraction: Some(0.25),
        ..window(100_000, 10_000)
    }
}

#[sqlx::test]
async fn the_ledger_survives_clearing_leaf_condensed_and_emergency_compaction(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", ledger_policy()).await;
    update(
        &mut client,
        "s",
        vec![
            todo("t1", "Reproduce the bug", pb::TodoStatus::InProgress),
            todo("t2", "Write the fix", pb::TodoStatus::Pending),
        ],
        vec![pb::LedgerNote {
            id: "plan".into(),
            text: "The validators live in django/contrib/auth.".into(),
        }],
    )
    .await
    .unwrap();
    let mut next = 0;
    let mut seen: BTreeSet<(i32, String)> = BTreeSet::new();
    let mut kinds_seen = BTreeMap::new();
    for stage in [
        pb::CompactMode::Summarize,
        pb::CompactMode::Summarize,
        pb::CompactMode::Summarize,
        pb::CompactMode::ClearToolResults,
        pb::CompactMode::Emergency,
    ] {
        for _ in 0..4 {
            append(&mut client, "s", turn(next, next % 2 == 1, 300))
                .await
                .unwrap();
            next += 1;
        }
        let done = compact(&mut client, "s", stage).await;
        assert!(done.applied, "{stage:?} applied: {done:?}");
        let built = build(&mut client, "s", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        let entries = ledger(&mut client, "s").await;
        let now = keys(&entries);
        assert!(now.is_superset(&seen), "an entry vanished after {stage:?}");
        seen = now;
        let derived = assert_block_holds(&built, &entries);
        let cleared = built
            .messages
            .iter()
            .any(|m| m.view_state == pb::ViewState::Cleared as i32);
        let depth = built.summaries.iter().map(|s| s.depth).max();
        *kinds_seen.entry(format!("{stage:?}")).or_insert(0) += derived;
        match stage {
            pb::CompactMode::ClearToolResults => {
                assert!(cleared, "clearing cleared");
                // The errors of cleared results are shown: their text is gone.
                assert!(block_text(&built).contains("ValueError: bad value in step 1"));
            }
            // The emergency note may be condensed with the leaves before it at once.
            pb::CompactMode::Emergency => assert!(done.summarized_last_seq > 0),
            _ => assert!(depth.is_some()),
        }
        let breakdown = built.budget.unwrap().breakdown.unwrap();
        assert!(breakdown.total_tokens <= 90_000);
        assert!(breakdown.summary_tokens > 0, "the block is counted");
    }
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(
        built.summaries.iter().any(|s| s.depth >= 1),
        "a condensed summary was written: {:?}",
        built.summaries.iter().map(|s| s.depth).collect::<Vec<_>>()
    );
    assert!(
        kinds_seen["Summarize"] > 0 && kinds_seen["Emergency"] > 0,
        "{kinds_seen:?}"
    );
    // Expected content of the block once everything before the tail is summarized.
    // A command the summaries name is theirs to show; one whose run failed stays in the
    // block for its exit status.
    let block = block_text(&built);
    let summaries: String = built.summaries.iter().map(|s| s.content.as_str()).collect();
    assert!(
        block.contains("python src/module_0.py --step 0 (exit 0)")
            || summaries.contains("python src/module_0.py --step 0")
    );
    assert!(block.contains("python src/module_1.py --step 1 (exit 1)"));
    assert!(block.contains("src/module_0.py") || summaries.contains("src/module_0.py"));
    server.stop().await;
}

#[sqlx::test]
async fn the_block_follows_the_placement_and_does_not_change_on_append(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(
        &mut client,
        "u",
        pb::Policy {
            summary_placement: Some(pb::SummaryPlacement::User as i32),
            ..ledger_policy()
        },
    )
    .await;
    for n in 0..8 {
        append(&mut client, "u", turn(n, false, 20)).await.unwrap();
    }
    update(
        &mut client,
        "u",
        vec![todo("t", "Ship it", pb::TodoStatus::Pending)],
        vec![],
    )
    .await
    .unwrap();
    compact(&mut client, "u", pb::CompactMode::Summarize).await;
    let first = build(&mut client, "u", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let leading = &first.messages[0];
    assert_eq!(leading.role, pb::Role::User as i32);
    assert!(leading.content.contains("[pending] t: Ship it"));
    // The summaries and the block lead together: the command is named (by the summary,
    // which makes the block leave it out).
    assert!(leading.content.contains("python src/module_0.py --step 0"));
    assert_eq!(first.system_prompt, "You are a careful coding agent.");
    // Appending the same command and file again (visible now) changes nothing before.
    let mut again = turn(0, true, 20);
    again[1].tool_calls[0].id = "again".into();
    again[2].tool_call_id = "again".into();
    append(&mut client, "u", again).await.unwrap();
    let second = build(&mut client, "u", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(second.messages[0].content, leading.content);
    assert_eq!(second.messages[..first.messages.len()], first.messages[..]);
    server.stop().await;
}

#[sqlx::test]
async fn done_todos_never_revert(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "d", ledger_policy()).await;
    append(&mut client, "d", turn(0, false, 3)).await.unwrap();
    update(
        &mut client,
        "d",
        vec![todo("a", "Fix it", pb::TodoStatus::Done)],
        vec![],
    )
    .await
    .unwrap();
    let again = update(
        &mut client,
        "d",
        vec![
            todo("a", "Fix it again", pb::TodoStatus::Pending),
            todo("b", "Test it", pb::TodoStatus::InProgress),
        ],
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(again.kept_done_todo_ids, ["a"]);
    let a = again.entries.iter().find(|e| e.key == "a").unwrap();
    assert_eq!(a.status, pb::TodoStatus::Done as i32);
    assert_eq!(
        a.text, "Fix it again",
        "the text may change, the status not"
    );
    assert_eq!(a.seqs, [4], "set after seq 4");
    let in_progress = update(
        &mut client,
        "d",
        vec![todo("a", "", pb::TodoStatus::InProgress)],
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(in_progress.kept_done_todo_ids, ["a"]);
    let stored = ledger(&mut client, "d").await;
    let a = stored.iter().find(|e| e.key == "a").unwrap();
    assert_eq!(a.status, pb::TodoStatus::Done as i32);
    server.stop().await;
}

#[sqlx::test]
async fn entries_expand_to_the_messages_they_came_from(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "e", ledger_policy()).await;
    // The call in one append, its result in the next (the exit status finds the entry).
    let mut first = turn(0, true, 2);
    let answered = first.remove(2);
    let answer = first.remove(2);
    append(&mut client, "e", first).await.unwrap();
    append(&mut client, "e", vec![answered, answer])
        .await
        .unwrap();
    let entries = ledger(&mut client, "e").await;
    let by_kind = |kind: pb::LedgerEntryKind| {
        entries
            .iter()
            .filter(|e| e.kind == kind as i32)
            .collect::<Vec<_>>()
    };
    let commands = by_kind(pb::LedgerEntryKind::Command);
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].text, "python src/module_0.py --step 0");
    assert_eq!(commands[0].seqs, [2, 3]);
    assert_eq!(
        (
            commands[0].exit_codes.as_slice(),
            commands[0].exit_seqs.as_slice()
        ),
        (&[1][..], &[3][..])
    );
    let files: Vec<&str> = by_kind(pb::LedgerEntryKind::File)
        .iter()
        .map(|e| e.key.as_str())
        .collect();
    assert_eq!(files, ["src/module_0.py"]);
    let errors = by_kind(pb::LedgerEntryKind::Error);
    assert_eq!(errors[0].text, "ValueError: bad value in step 0");
    for entry in &entries {
        let expanded = client
            .expand(pb::ExpandRequest {
                session_id: "e".into(),
                target: Some(pb::expand_request::Target::List(pb::SeqList {
                    seqs: entry.seqs.clone(),
                })),
                max_tokens: 0,
            })
            .await
            .unwrap()
            .into_inner()
            .messages;
        assert_eq!(expanded.len(), entry.seqs.len());
        let text: String = expanded
            .iter()
            .map(|m| {
                format!(
                    "{} {}",
                    m.content,
                    m.tool_calls
                        .iter()
                        .map(|c| c.arguments_json.as_str())
                        .collect::<String>()
                )
            })
            .collect();
        assert!(
            text.contains(&entry.key),
            "{:?} not in its sources {text}",
            entry.key
        );
        for (code, seq) in entry.exit_codes.iter().zip(&entry.exit_seqs) {
            let source = expanded.iter().find(|m| m.seq == *seq).unwrap();
            assert!(
                source
                    .content
                    .contains(&format!("<returncode>{code}</returncode>"))
            );
        }
    }
    server.stop().await;
}

#[sqlx::test]
async fn bad_updates_are_refused_naming_the_field_and_change_nothing(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "b", ledger_policy()).await;
    update(
        &mut client,
        "b",
        vec![todo("keep", "Keep me", pb::TodoStatus::Pending)],
        vec![],
    )
    .await
    .unwrap();
    let before = ledger(&mut client, "b").await;
    let version = session(&mut client, "b").await.version;
    let note = |id: &str, text: &str| pb::LedgerNote {
        id: id.into(),
        text: text.into(),
    };
    let long = "x".repeat(2_001);
    let many: Vec<pb::LedgerTodo> = (0..101)
        .map(|i| todo(&format!("t{i}"), "x", pb::TodoStatus::Pending))
        .collect();
    let cases: Vec<(Vec<pb::LedgerTodo>, Vec<pb::LedgerNote>, &str)> = vec![
        (
            vec![
                todo("ok", "fine", pb::TodoStatus::Done),
                todo("", "x", pb::TodoStatus::Pending),
            ],
            vec![],
            "todos[1].id",
        ),
        (
            vec![todo("new", "", pb::TodoStatus::Pending)],
            vec![],
            "todos[0].text",
        ),
        (
            vec![todo("a", &long, pb::TodoStatus::Pending)],
            vec![],
            "todos[0].text",
        ),
        (
            vec![todo(&"i".repeat(129), "x", pb::TodoStatus::Pending)],
            vec![],
            "todos[0].id",
        ),
        (
            vec![
                todo("a", "x", pb::TodoStatus::Pending),
                todo("a", "y", pb::TodoStatus::Done),
            ],
            vec![],
            "todos[1].id",
        ),
        (
            vec![pb::LedgerTodo {
                id: "a".into(),
                text: "x".into(),
                status: 9,
            }],
            vec![],
            "todos[0].status",
        ),
        (many, vec![], "todos"),
        (
            vec![todo("keep", "", pb::TodoStatus::Done)],
            vec![note("n", "a\0b")],
            "notes[0].text",
        ),
        (vec![], vec![note("n", "x"), note("n", "y")], "notes[1].id"),
    ];
    for (todos, notes, field) in cases {
        let status = update(&mut client, "b", todos, notes).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{field}: {status:?}");
        assert_eq!(violated_fields(&status), [field], "{}", status.message());
    }
    assert_eq!(ledger(&mut client, "b").await, before, "nothing changed");
    assert_eq!(session(&mut client, "b").await.version, version);
    // An update with nothing to change keeps the version.
    let empty = update(&mut client, "b", vec![], vec![]).await.unwrap();
    assert_eq!((empty.version, empty.entries.len()), (version, 1));
    let missing = update(&mut client, "nope", vec![], vec![])
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    // A session holds at most 500 todos.
    for chunk in 0..5 {
        let todos = (0..100)
            .map(|i| todo(&format!("c{chunk}-{i}"), "x", pb::TodoStatus::Pending))
            .collect();
        let outcome = update(&mut client, "b", todos, vec![]).await;
        if chunk < 4 {
            outcome.unwrap();
        } else {
            assert_eq!(violated_fields(&outcome.unwrap_err()), ["todos"]);
        }
    }
    // A bad ledger_fraction is refused like every policy field.
    let status = client
        .create_session(pb::CreateSessionRequest {
            session_id: "f".into(),
            policy: Some(pb::Policy {
                ledger_fraction: Some(0.5),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&status), ["policy.ledger_fraction"]);
    // Deleting the session deletes its ledger.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "b".into(),
        })
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar("select count(*) from ledger_entries")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    server.stop().await;
}
