//! A fork's task ledger: the source's todos and notes as they stand; the entries of its
//! own traffic from the fork on; what either side does next stays its own.
use ctxd::pb;
use sqlx::PgPool;

use super::{keys, ledger, ledger_policy, todo, turn, update};
use crate::harness::*;

#[sqlx::test]
async fn a_fork_keeps_the_clients_todos_and_notes_and_ledgers_its_own_traffic(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "src", ledger_policy()).await;
    // Two turns (seqs 1-4 and 5-8), the second failing; a todo done and one pending.
    append(&mut client, "src", turn(0, false, 2)).await.unwrap();
    append(&mut client, "src", turn(1, true, 2)).await.unwrap();
    update(
        &mut client,
        "src",
        vec![
            todo("a", "read the module", pb::TodoStatus::Done),
            todo("b", "fix the failing step", pb::TodoStatus::Pending),
        ],
        vec![],
    )
    .await
    .unwrap();
    let source_before = ledger(&mut client, "src").await;

    // Forked after the first turn: the second turn's command, file and error are not
    // its history.
    client
        .fork_session(pb::ForkSessionRequest {
            source_session_id: "src".into(),
            at_seq: Some(4),
            session_id: "fork".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let forked = ledger(&mut client, "fork").await;
    let client_set = |e: &pb::LedgerEntry| {
        e.kind == pb::LedgerEntryKind::Todo as i32 || e.kind == pb::LedgerEntryKind::Note as i32
    };
    let expected: Vec<pb::LedgerEntry> = source_before
        .iter()
        .filter(|e| client_set(e))
        .cloned()
        .collect();
    assert_eq!(keys(&forked), keys(&expected));
    assert!(
        forked.iter().all(|e| e.seqs.iter().all(|&seq| seq <= 4)),
        "{forked:?}"
    );
    let status = |entries: &[pb::LedgerEntry], key: &str| {
        entries
            .iter()
            .find(|e| e.kind == pb::LedgerEntryKind::Todo as i32 && e.key == key)
            .map(|e| e.status)
    };
    assert_eq!(status(&forked, "a"), Some(pb::TodoStatus::Done as i32));
    assert_eq!(status(&forked, "b"), Some(pb::TodoStatus::Pending as i32));

    // Each side goes on alone: the fork finishes "b", the source runs a third turn.
    update(
        &mut client,
        "fork",
        vec![todo("b", "fix the failing step", pb::TodoStatus::Done)],
        vec![],
    )
    .await
    .unwrap();
    append(&mut client, "src", turn(2, false, 2)).await.unwrap();
    append(&mut client, "fork", turn(3, false, 2))
        .await
        .unwrap();
    let source_after = ledger(&mut client, "src").await;
    let fork_after = ledger(&mut client, "fork").await;
    assert_eq!(
        status(&source_after, "b"),
        Some(pb::TodoStatus::Pending as i32)
    );
    assert_eq!(status(&fork_after, "b"), Some(pb::TodoStatus::Done as i32));
    assert!(
        !fork_after
            .iter()
            .any(|e| e.text.contains("module_2") || e.key.contains("module_2"))
    );
    // The fork's own traffic is in its ledger (seqs 5 on), not in the source's.
    assert!(
        fork_after
            .iter()
            .any(|e| e.kind == pb::LedgerEntryKind::Command as i32
                && e.text == "python src/module_3.py --step 3"
                && e.seqs.iter().all(|&seq| seq > 4))
    );
    assert!(!source_after.iter().any(|e| e.key.contains("module_3")));
    server.stop().await;
}
