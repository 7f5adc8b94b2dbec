//! The task ledger over whole sessions: Search finds its entries, real recorded sessions
//! yield commands with their exit status, and random sessions of turns, todo updates
//! and compactions of every kind keep it in every build.
use std::collections::BTreeSet;

use ctxd::pb;
use proptest::prelude::*;
use sqlx::PgPool;

use super::{assert_block_holds, keys, ledger, ledger_policy, run, todo, turn, update};
use crate::harness::*;
use crate::recorded::{corpus_files, load};

#[sqlx::test]
async fn search_finds_ledger_entries(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "q", ledger_policy()).await;
    append(&mut client, "q", turn(7, true, 2)).await.unwrap();
    update(
        &mut client,
        "q",
        vec![todo(
            "t",
            "Refactor the tokenizer cache",
            pb::TodoStatus::Pending,
        )],
        vec![],
    )
    .await
    .unwrap();
    let search = |query: &str, scope: pb::SearchScope| pb::SearchRequest {
        session_id: "q".into(),
        query: query.into(),
        scope: scope as i32,
        ..Default::default()
    };
    let hits = client
        .search(search("tokenizer", pb::SearchScope::Ledger))
        .await
        .unwrap()
        .into_inner()
        .hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].ledger_kind, pb::LedgerEntryKind::Todo as i32);
    assert_eq!(hits[0].ledger_key, "t");
    assert!(
        hits[0].snippet.contains("«tokenizer»"),
        "{}",
        hits[0].snippet
    );
    let hits = client
        .search(search("ValueError", pb::SearchScope::All))
        .await
        .unwrap()
        .into_inner()
        .hits;
    let ledger_hit = hits
        .iter()
        .find(|h| h.ledger_kind == pb::LedgerEntryKind::Error as i32)
        .expect("the error entry is found");
    assert_eq!((ledger_hit.first_seq, ledger_hit.last_seq), (3, 3));
    assert!(hits.iter().any(|h| h.seq == 3), "and the message too");
    let both = client
        .search(search("tokenizer", pb::SearchScope::Both))
        .await
        .unwrap()
        .into_inner()
        .hits;
    assert!(both.is_empty(), "BOTH stays messages and summaries");
    server.stop().await;
}

/// Real recorded sessions: the ledger keeps every command with the exit status its
/// result showed, and the files they named.
#[sqlx::test]
async fn recorded_sessions_yield_commands_with_exit_status_and_files(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    for (index, path) in corpus_files().into_iter().take(3).enumerate() {
        let recorded = load(&path);
        let id = format!("r{index}");
        create(&mut client, &id, window(1_000_000, 8_000)).await;
        let mut calls = 0;
        for (message, _) in &recorded.messages {
            calls += message.tool_calls.len();
            append(&mut client, &id, vec![message.clone()])
                .await
                .unwrap();
        }
        let entries = ledger(&mut client, &id).await;
        let commands: Vec<&pb::LedgerEntry> = entries
            .iter()
            .filter(|e| e.kind == pb::LedgerEntryKind::Command as i32)
            .collect();
        let files = entries
            .iter()
            .filter(|e| e.kind == pb::LedgerEntryKind::File as i32)
            .count();
        assert!(
            commands.len() >= calls / 3,
            "{} commands of {calls} calls",
            commands.len()
        );
        assert!(files >= 3, "{files} files");
        // mini-swe-agent shows every exit status: each command has its run, but the
        // session's last one (submitting), which no result answers.
        let without: Vec<&str> = commands
            .iter()
            .filter(|c| c.exit_codes.is_empty())
            .map(|c| c.text.as_str())
            .collect();
        assert!(
            without.len() <= 1 && without.iter().all(|t| t.contains("COMPLETE_TASK")),
            "{without:?}"
        );
        println!(
            "{}: {calls} calls, {} commands, {files} files, {} errors",
            path.file_name().unwrap().to_string_lossy(),
            commands.len(),
            entries
                .iter()
                .filter(|e| e.kind == pb::LedgerEntryKind::Error as i32)
                .count()
        );
    }
    server.stop().await;
}

#[derive(Debug, Clone)]
enum Op {
    Turn { fail: bool, lines: usize },
    Todo { id: u8, status: i32 },
    Compact(i32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), 1usize..400).prop_map(|(fail, lines)| Op::Turn { fail, lines }),
        2 => (0u8..4, 0i32..4).prop_map(|(id, status)| Op::Todo { id, status }),
        2 => prop_oneof![
            Just(pb::CompactMode::ClearToolResults as i32),
            Just(pb::CompactMode::Summarize as i32),
            Just(pb::CompactMode::Emergency as i32),
            Just(pb::CompactMode::Auto as i32),
        ]
        .prop_map(Op::Compact),
    ]
}

/// Random sessions of turns, todo updates and compactions of every kind: after each
/// step the build shows every todo and every entry its summaries cover, no entry is ever
/// lost, and a done todo stays done.
#[test]
fn every_build_keeps_the_ledger_whatever_the_compactions() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
        let pool = fresh_database("ctxd_ledger_prop").await;
        TestServer::start(pool).await
    });
    let counter = std::sync::atomic::AtomicU64::new(0);
    let config = ProptestConfig {
        cases: 10,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op(), 4..24))| {
        let id = format!("p{}", counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let mut client = server.client.clone();
        runtime.block_on(async {
            create(&mut client, &id, ledger_policy()).await;
            let mut next = 0;
            let mut seen: BTreeSet<(i32, String)> = BTreeSet::new();
            let mut done: BTreeSet<String> = BTreeSet::new();
            for op in &ops {
                match op {
                    Op::Turn { fail, lines } => {
                        append(&mut client, &id, turn(next, *fail, *lines)).await.unwrap();
                        next += 1;
                    }
                    Op::Todo { id: todo_id, status } => {
                        let todo = pb::LedgerTodo { id: format!("t{todo_id}"), text: format!("task {todo_id}"), status: *status };
                        update(&mut client, &id, vec![todo], vec![]).await.unwrap();
                    }
                    Op::Compact(mode) => {
                        client
                            .compact(pb::CompactRequest { session_id: id.clone(), mode: *mode, target_tokens: 1, wait: true, ..Default::default() })
                            .await
                            .unwrap();
                    }
                }
                let entries = ledger(&mut client, &id).await;
                let now = keys(&entries);
                prop_assert!(now.is_superset(&seen), "an entry vanished after {:?}", op);
                seen = now;
                for entry in &entries {
                    if done.contains(&entry.key) && entry.kind == pb::LedgerEntryKind::Todo as i32 {
                        prop_assert_eq!(entry.status, pb::TodoStatus::Done as i32);
                    }
                    if entry.status == pb::TodoStatus::Done as i32 {
                        done.insert(entry.key.clone());
                    }
                }
                if next > 0 {
                    let built = build(&mut client, &id, pb::OutputFormat::Neutral).await.unwrap();
                    let breakdown = built.budget.unwrap().breakdown.unwrap();
                    prop_assert!(breakdown.total_tokens <= 90_000);
                    assert_block_holds(&built, &entries);
                }
            }
            Ok(())
        })?;
    });
    runtime.block_on(server.stop());
}

/// A command rerun across many appends (its result in the append after its call): the
/// entry keeps its first seq, the newest others (32 in all) and its 8 newest runs.
#[sqlx::test]
async fn a_rerun_command_keeps_its_first_seq_and_newest_runs(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "m", ledger_policy()).await;
    append(&mut client, "m", vec![user("Run it until it passes.")])
        .await
        .unwrap();
    for n in 0..20 {
        let id = format!("c{n}");
        append(&mut client, "m", vec![run(&id, "make test")])
            .await
            .unwrap();
        let output = format!("<returncode>{}</returncode>", n % 3);
        append(&mut client, "m", vec![result(&id, &output)])
            .await
            .unwrap();
    }
    let entries = ledger(&mut client, "m").await;
    let command = entries
        .iter()
        .find(|e| e.kind == pb::LedgerEntryKind::Command as i32)
        .unwrap();
    assert_eq!(command.seqs.len(), 32);
    assert_eq!(command.seqs[0], 2, "the first call");
    assert_eq!(command.seqs.last(), Some(&41), "the newest result");
    assert!(command.seqs.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        command.exit_seqs,
        (27..=41).step_by(2).collect::<Vec<i64>>()
    );
    assert_eq!(
        command.exit_codes,
        (12..20).map(|n| n % 3).collect::<Vec<i32>>()
    );
    server.stop().await;
}
