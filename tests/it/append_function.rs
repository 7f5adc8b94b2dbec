//! Appends written by `ctxd_append` (migration 0030), as ctxd writes them on a Citus
//! cluster, write what the set-based statement writes on one PostgreSQL — the check CI
//! keeps of the cluster's write path (`scripts/citus/run` runs it on the cluster).
use sqlx::PgPool;

use crate::fork::fork;
use crate::harness::*;
use crate::replicas::{SESSION_TABLES, play_mixed_appends, rows_by_session};

/// Two servers on one database, one writing appends by the statement and one by the
/// function, take the same appends: with idempotency keys (each append alone under its
/// key), without (in batches), and in a fork answering a call it inherited. Every row
/// the appends write is equal, column by column.
#[sqlx::test]
async fn appends_by_the_function_write_what_the_statement_writes(pool: PgPool) {
    let by_statement = TestServer::start(pool.clone()).await;
    let by_function = TestServer::start_by_function(pool.clone()).await;
    for (server, writer) in [(&by_statement, "statement"), (&by_function, "function")] {
        let mut client = server.client.clone();
        play_mixed_appends(&mut client, &format!("batched:{writer}"), false).await;
        play_mixed_appends(&mut client, &format!("keyed:{writer}"), true).await;
        let source = format!("source:{writer}");
        create(&mut client, &source, window(100_000, 10_000)).await;
        append(&mut client, &source, vec![user("list it"), call(&["c7"])])
            .await
            .unwrap();
        let forked = format!("t-fork:{writer}");
        fork(&mut client, &source, None, &forked).await.unwrap();
        append(&mut client, &forked, vec![result("c7", "a\nb")])
            .await
            .unwrap();
    }
    let tables = SESSION_TABLES
        .into_iter()
        .chain([("idempotency_keys", "t.key")]);
    for (table, order) in tables {
        let rows = rows_by_session(&pool, table, order).await;
        let names: Vec<&str> = rows.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names.len(), 8, "{names:?}");
        for pair in rows.chunks(2) {
            let [(function, by_function), (statement, by_statement)] = pair else {
                unreachable!("sessions come in pairs");
            };
            // Events name the sessions they are about.
            assert_eq!(
                by_function.replace(":function", ":"),
                by_statement.replace(":statement", ":"),
                "{table}: {function} / {statement}"
            );
        }
    }
    let answered: Vec<(String, i64)> = sqlx::query_as(
        "select s.external_id, t.result_seq from tool_calls t
         join sessions s on s.id = t.session_id
         where s.external_id like 't-fork:%' and t.call_id = 'c7' order by 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        answered,
        [
            ("t-fork:function".into(), 3),
            ("t-fork:statement".into(), 3)
        ],
        "each fork's answer to the call it inherited, in a row of its own"
    );
    // The key kept by the function replays the append it answered.
    let mut client = by_function.client.clone();
    let again = client
        .append_turn(ctxd::pb::AppendTurnRequest {
            session_id: "keyed:function".into(),
            messages: vec![user("fix the failing test")],
            idempotency_key: "step-0".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(again.replayed, "{again:?}");
    by_statement.stop().await;
    by_function.stop().await;
}
