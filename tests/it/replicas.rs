//! Writers and readers of one session racing each other, through two replicas on one
//! database: appends (optimistic, with the row-lock fallback) lose nothing and never
//! write twice, and a replica's cached view is always what a replica without a cache
//! reads from the table, whatever another replica did to the session meanwhile.
use std::collections::BTreeSet;

use ctxd::pb;
use sqlx::PgPool;

use crate::harness::*;

/// 12 tasks append to one session at once (tool calls with their results, user
/// messages, retries under an idempotency key racing each other) while another task
/// builds: every append lands exactly once, as one contiguous run of seqs, and the log
/// is gap-free.
#[sqlx::test]
async fn racing_appends_to_one_session_all_land_once(pool: PgPool) {
    let server = TestServer::start(pool).await;
    racing_appends_land_once(&server, "s").await;
    server.stop().await;
}

/// The racing appends of the test above on session `id` of `server` (also run on a
/// Citus cluster, tests/it/citus.rs).
pub(crate) async fn racing_appends_land_once(server: &TestServer, id: &str) {
    let mut client = server.client.clone();
    create(&mut client, id, window(1_000_000, 10_000)).await;
    const TASKS: usize = 12;
    const APPENDS: usize = 10;
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let mut client = server.client.clone();
        let session = id.to_string();
        tasks.push(tokio::spawn(async move {
            let mut landed = Vec::new();
            for round in 0..APPENDS {
                let id = format!("t{task}-r{round}");
                let batch = if round % 3 == 0 {
                    vec![user(&format!("task {task} round {round}"))]
                } else {
                    vec![call(&[&id]), result(&id, &format!("output of {id}"))]
                };
                let response = append(&mut client, &session, batch.clone()).await.unwrap();
                landed.push((response.seqs, batch.len()));
            }
            landed
        }));
    }
    // Two requests under one key at the same time: one appends, the other replays it.
    let keyed = |mut client: Client| async move {
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: id.into(),
                messages: vec![user("keyed")],
                idempotency_key: "once".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
    };
    let (first, second) = tokio::join!(keyed(server.client.clone()), keyed(server.client.clone()));
    let builder = {
        let mut client = server.client.clone();
        let session = id.to_string();
        tokio::spawn(async move {
            for _ in 0..20 {
                let built = build(&mut client, &session, pb::OutputFormat::Neutral)
                    .await
                    .unwrap();
                assert_provider_valid(&built.messages);
            }
        })
    };
    let mut seqs = BTreeSet::new();
    for task in tasks {
        for (landed, len) in task.await.unwrap() {
            assert_eq!(landed.len(), len);
            assert!(
                landed.windows(2).all(|pair| pair[1] == pair[0] + 1),
                "one append's seqs are contiguous: {landed:?}"
            );
            for seq in landed {
                assert!(seqs.insert(seq), "seq {seq} given out twice");
            }
        }
    }
    builder.await.unwrap();
    assert_eq!(first.seqs, second.seqs, "the keyed retry replays the first");
    assert_ne!(
        first.replayed, second.replayed,
        "exactly one of them appended"
    );
    seqs.extend(first.seqs.iter().copied());

    let total = (TASKS * APPENDS) as i64 + (TASKS * (APPENDS - APPENDS.div_ceil(3))) as i64 + 1;
    assert_eq!(seqs.len() as i64, total);
    assert_eq!(
        seqs.iter().copied().collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );
    let session = session(&mut client, id).await;
    assert_eq!(session.message_count, total);
    // One version per append that landed.
    assert_eq!(session.version, (TASKS * APPENDS) as i64 + 1);
    let built = build(&mut client, id, pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert_eq!(built.messages.len() as i64, total);
    assert_provider_valid(&built.messages);
    let sum: i64 = built.messages.iter().map(|m| m.token_count).sum();
    assert_eq!(session.log_tokens, sum, "aggregates match the log");
}

/// Replica A builds (its cache follows the session), replica B appends and compacts;
/// after every step A's build equals the build of replica C, which has no cache.
#[sqlx::test]
async fn a_cached_view_follows_what_other_replicas_do(pool: PgPool) {
    // Each replica with a pool of its own, as separate processes would have.
    let own = || async {
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(8)
            .connect_with((*pool.connect_options()).clone())
            .await
            .unwrap()
    };
    let a = TestServer::start(own().await).await;
    let b = TestServer::start(own().await).await;
    let c = TestServer::start_uncached(own().await).await;
    let (mut a_client, mut b_client, mut c_client) =
        (a.client.clone(), b.client.clone(), c.client.clone());
    // A small window, so builds clear and summarize as the session grows.
    create(&mut b_client, "s", window(6_000, 1_000)).await;
    let mut call_index = 0;
    for step in 0..40 {
        let batch = if step % 4 == 0 {
            vec![user(&format!("step {step}: look at the next file"))]
        } else {
            call_index += 1;
            let id = format!("c{call_index}");
            vec![
                call(&[&id]),
                result(&id, &"line of a long tool output\n".repeat(20 + step * 3)),
            ]
        };
        append(&mut b_client, "s", batch).await.unwrap();
        if step % 10 == 9 {
            let mode = if step == 19 {
                pb::CompactMode::Emergency
            } else {
                pb::CompactMode::ClearToolResults
            };
            b_client
                .compact(pb::CompactRequest {
                    session_id: "s".into(),
                    mode: mode as i32,
                    ..Default::default()
                })
                .await
                .unwrap();
        }
        let cached = build(&mut a_client, "s", pb::OutputFormat::OpenaiChat)
            .await
            .unwrap();
        // C builds the same version, reading the table (A's build may have compacted).
        let fresh = build(&mut c_client, "s", pb::OutputFormat::OpenaiChat)
            .await
            .unwrap();
        assert_eq!(cached.version, fresh.version, "step {step}");
        assert_eq!(cached.json, fresh.json, "step {step}: the requests differ");
        assert_eq!(cached.messages, fresh.messages, "step {step}");
        assert_eq!(cached.budget, fresh.budget, "step {step}");
    }
    let compaction = session(&mut c_client, "s").await.compaction.unwrap();
    assert!(
        compaction.summaries_written > 0 && compaction.cleared_messages > 0,
        "the replay compacted both ways: {compaction:?}"
    );
    a.stop().await;
    b.stop().await;
    c.stop().await;
}

/// The store's guard itself: a write decided on a read the session has moved past
/// writes nothing; one read under the row lock always lands.
#[sqlx::test]
async fn a_write_on_a_stale_read_writes_nothing(pool: PgPool) {
    use ctxd::message::{Message, Role};
    use ctxd::store::Appended;

    let (server, mut client, store, tenant) = guarded_session(&pool, vec![user("first")]).await;
    let message = Message::text(Role::User, "decided on an old read");
    let stale = store
        .append_state(tenant, "s", &[], None, false)
        .await
        .unwrap()
        .unwrap();
    // Another writer moves the session on.
    append(&mut client, "s", vec![user("second")])
        .await
        .unwrap();
    assert_eq!(write_one(&store, stale, &message).await, Appended::Raced);
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    let contents: Vec<&str> = built.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        ["first", "second"],
        "nothing of the stale write landed"
    );
    assert_eq!(session(&mut client, "s").await.version, 2);

    // Under the row lock the read cannot go stale: the write lands.
    let locked = store
        .append_state(tenant, "s", &[], None, true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        write_one(&store, locked, &message).await,
        Appended::Applied { job_id: None }
    );
    let session = session(&mut client, "s").await;
    assert_eq!((session.message_count, session.version), (3, 3));
    server.stop().await;
}

/// A replica writes without reading first from the row its own last write left, only
/// while that row is current and the tool-call references it could not read hold; any
/// other case writes nothing (the engine then reads and decides again).
#[sqlx::test]
async fn a_write_from_the_cached_row_lands_only_while_the_row_is_current(pool: PgPool) {
    use ctxd::message::{Message, Role};
    use ctxd::store::Appended;

    let (server, mut client, store, tenant) =
        guarded_session(&pool, vec![user("run it"), call(&["x"])]).await;
    // This store has written nothing yet: it has no row to write from.
    assert!(store.cached_append_state(tenant, "s", &[]).is_none());
    let read = store
        .append_state(tenant, "s", &[], None, false)
        .await
        .unwrap()
        .unwrap();
    let note = Message::text(Role::Assistant, "working on it");
    assert_eq!(
        write_one(&store, read, &note).await,
        Appended::Applied { job_id: None }
    );
    // Its write left the row in its cache, at the version the write made.
    let cached = store.cached_append_state(tenant, "s", &["x"]).unwrap();
    assert!(cached.assumed);
    assert_eq!(
        (cached.session.version, cached.session.message_count),
        (2, 3)
    );
    assert_eq!(cached.known_calls.get("x"), Some(&None));

    // Answering x, which exists unanswered: lands without a read.
    let answer = Message {
        tool_call_id: "x".into(),
        ..Message::text(Role::Tool, "output of x")
    };
    assert_eq!(
        write_touching_x(&store, cached, &answer).await,
        Appended::Applied { job_id: None }
    );

    // Making a call x, which the session already has, from the (current) cached row:
    // the guard refuses it, nothing is written, and the row is forgotten.
    let cached = store.cached_append_state(tenant, "s", &[]).unwrap();
    assert_eq!(cached.session.version, 3);
    let remake = Message {
        tool_calls: vec![ctxd::message::ToolCall {
            id: "x".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }],
        ..Message::text(Role::Assistant, "")
    };
    assert_eq!(
        write_touching_x(&store, cached, &remake).await,
        Appended::Raced
    );
    assert!(store.cached_append_state(tenant, "s", &[]).is_none());
    // Answering x again: the guard finds it answered.
    write_after_a_read(&store, tenant, &note).await;
    let cached = store.cached_append_state(tenant, "s", &["x"]).unwrap();
    assert_eq!(
        write_touching_x(&store, cached, &answer).await,
        Appended::Raced
    );

    // Another replica moves the session on: the row this one cached is stale.
    write_after_a_read(&store, tenant, &note).await;
    let stale = store.cached_append_state(tenant, "s", &[]).unwrap();
    append(&mut client, "s", vec![user("from elsewhere")])
        .await
        .unwrap();
    assert_eq!(write_one(&store, stale, &note).await, Appended::Raced);

    // The log, in order (a build would leave out the step whose call is not followed
    // by its result).
    let contents: Vec<String> = sqlx::query_scalar(
        "select m.content from messages m join sessions s on s.id = m.session_id
         where s.external_id = 's' order by m.seq",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        contents,
        [
            "run it",
            "",
            "working on it",
            "output of x",
            "working on it",
            "working on it",
            "from elsewhere"
        ],
        "what the guard refused never landed"
    );
    let session = session(&mut client, "s").await;
    assert_eq!((session.message_count, session.version), (7, 6));
    server.stop().await;
}

/// The row-lock read, when it had to wait for another writer, sees what that writer
/// committed: the call it answered, the key it used (so the waiting append is refused
/// or replayed, never written twice).
#[sqlx::test]
async fn a_locked_read_that_waited_sees_the_writer_before_it(pool: PgPool) {
    use ctxd::message::{Message, Role};
    use ctxd::store::{AppendWrite, Appended};

    let (server, mut client, store, tenant) =
        guarded_session(&pool, vec![user("run it"), call(&["x"])]).await;
    let ids = vec!["x".to_string()];

    let first = store
        .append_state(tenant, "s", &ids, Some("k"), true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        first.known_calls.get("x"),
        Some(&None),
        "x is not answered yet"
    );
    assert!(first.idempotent.is_none());
    let waiting = tokio::spawn({
        let store = store.clone();
        let ids = ids.clone();
        async move {
            store
                .append_state(tenant, "s", &ids, Some("k"), true)
                .await
                .unwrap()
                .unwrap()
        }
    });
    // The second read is queued behind the first's row lock before the first writes.
    wait_for_a_lock_waiter(&pool).await;

    let answer = Message {
        tool_call_id: "x".into(),
        ..Message::text(Role::Tool, "output of x")
    };
    let (batch, update) = one_more(&first.session, &answer, 5);
    let seq = batch[0].seq;
    let written = store
        .append(
            first,
            AppendWrite {
                answers: &[("x".to_string(), seq)],
                idempotency: Some(("k", b"hash".as_slice(), serde_json::json!({"seqs": [seq]}))),
                ..only_messages(&batch, update)
            },
        )
        .await
        .unwrap();
    assert_eq!(written, Appended::Applied { job_id: None });

    let second = waiting.await.unwrap();
    assert_eq!(second.session.message_count, seq);
    assert_eq!(
        second.known_calls.get("x"),
        Some(&Some(seq)),
        "x is answered"
    );
    let (hash, response) = second.idempotent.as_ref().expect("the key is taken");
    assert_eq!(hash.as_slice(), b"hash");
    assert_eq!(response["seqs"][0], seq);
    drop(second);
    // Through the API: answering x again is refused, nothing is written.
    let again = append(&mut client, "s", vec![result("x", "again")])
        .await
        .unwrap_err();
    assert_eq!(again.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        crate::harness::session(&mut client, "s")
            .await
            .message_count,
        seq
    );
    server.stop().await;
}

/// Appends to different sessions that queue while the replica's writer is busy go out
/// together, in one statement and one commit (their rows share a transaction id), each
/// under its own guard and with its own rows: a stale one writes nothing while the others
/// land. When the database refuses a batch, each of its appends is written alone, so
/// only the bad one fails. An append whose session row another transaction holds does
/// not hold up the others.
#[sqlx::test]
async fn appends_queued_behind_a_busy_writer_share_one_commit_each_with_its_own_guard(
    pool: PgPool,
) {
    use ctxd::store::Appended;

    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    for id in ["a", "b", "c", "d", "e"] {
        create(&mut client, id, window(100_000, 10_000)).await;
        append(&mut client, id, vec![user("start")]).await.unwrap();
    }
    // One writer: while its statement waits, every other append queues.
    let store = ctxd::store::Store::new(pool.clone()).append_writers(1);
    let tenant = store.default_tenant().await.unwrap();
    let read = |id: &'static str| read_state(&store, tenant, id);
    let notes: Vec<ctxd::message::Message> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|id| ctxd::message::Message::text(ctxd::message::Role::Assistant, format!("{id} 1")))
        .collect();

    // e's row as this store's own write left it (no read next time).
    assert_eq!(
        write_one(&store, read("e").await, &notes[4]).await,
        Appended::Applied { job_id: None }
    );
    let e_cached = store.cached_append_state(tenant, "e", &[]).unwrap();
    let e_next = ctxd::message::Message::text(ctxd::message::Role::Assistant, "e 2");

    let (holder, busy) = occupy_the_writer(&pool, &store, read("a").await, &notes[0]).await;
    // c's row changes after its append read it.
    let (b, c, d) = (read("b").await, read("c").await, read("d").await);
    sqlx::query("update sessions set updated_at = now() where external_id = 'c'")
        .execute(&pool)
        .await
        .unwrap();
    let mut queued = Box::pin(futures::future::join4(
        try_write_one(&store, b, &notes[1]),
        try_write_one(&store, c, &notes[2]),
        try_write_one(&store, d, &notes[3]),
        try_write_one(&store, e_cached, &e_next),
    ));
    // Polled once: all four are queued behind the busy writer.
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let (b, c, d, e) = queued.await;
    assert_eq!(b.unwrap(), Appended::Applied { job_id: None });
    assert_eq!(c.unwrap(), Appended::Raced, "c's guard refused it");
    assert_eq!(d.unwrap(), Appended::Applied { job_id: None });
    assert_eq!(
        e.unwrap(),
        Appended::Applied { job_id: None },
        "from the cached row"
    );
    let written = writers_of(&pool, 2).await;
    assert_eq!(
        contents(&written),
        [("a", "a 1"), ("b", "b 1"), ("d", "d 1"), ("e", "e 1")],
        "each session got its own message; c's append wrote nothing"
    );
    let at_3 = writers_of(&pool, 3).await;
    assert_eq!(contents(&at_3), [("e", "e 2")]);
    assert_eq!(written[1].1, written[2].1, "b and d committed together");
    assert_eq!(written[1].1, at_3[0].1, "and e with them");
    assert_ne!(written[0].1, written[1].1, "a was written before them");
    for (id, version) in [("a", 2), ("b", 2), ("c", 1), ("d", 2), ("e", 3)] {
        assert_eq!(session(&mut client, id).await.version, version, "{id}");
    }

    // b's next seq is taken behind the sessions' back: the batch of b and d fails in
    // the database, then d lands alone and b fails alone, with its own error.
    sqlx::query(
        "insert into messages (session_id, seq, turn, role, content, token_count, view_tokens,
             tenant_id)
         select id, 3, 1, 3, 'planted', 1, 1, tenant_id from sessions where external_id = 'b'",
    )
    .execute(&pool)
    .await
    .unwrap();
    let (holder, busy) = occupy_the_writer(&pool, &store, read("a").await, &notes[0]).await;
    let mut queued = Box::pin(futures::future::join(
        try_write_one(&store, read("b").await, &notes[1]),
        try_write_one(&store, read("d").await, &notes[3]),
    ));
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let (b, d) = queued.await;
    let b = b.unwrap_err();
    assert!(
        b.is_unique_violation(),
        "b's write collides with the planted row: {b}"
    );
    assert_eq!(d.unwrap(), Appended::Applied { job_id: None });
    let written = writers_of(&pool, 3).await;
    assert_eq!(
        contents(&written),
        [("a", "a 1"), ("b", "planted"), ("d", "d 1"), ("e", "e 2")]
    );
    assert_eq!(session(&mut client, "b").await.version, 2, "b did not move");
    assert_eq!(session(&mut client, "d").await.version, 3);

    // Another transaction holds d's row: d's append waits for it alone, while b's lands.
    let holder = hold_row_lock(&pool, "d").await;
    let mut waiting = Box::pin(try_write_one(&store, read("d").await, &notes[3]));
    assert!(futures::poll!(&mut waiting).is_pending());
    let b = read("b").await;
    sqlx::query("delete from messages where content = 'planted'")
        .execute(&pool)
        .await
        .unwrap();
    let landed = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        try_write_one(&store, b, &notes[1]),
    )
    .await
    .expect("b's append does not wait for d's row lock");
    assert_eq!(landed.unwrap(), Appended::Applied { job_id: None });
    holder.commit().await.unwrap();
    assert_eq!(waiting.await.unwrap(), Appended::Applied { job_id: None });
    assert_eq!(session(&mut client, "d").await.version, 4);
    server.stop().await;
}

/// The batch statement and the single statement write the same thing: two sessions take
/// the same appends (tool calls answered across appends and within one, usage reports
/// after builds, task-ledger entries and a result's exit status for a call of an earlier
/// append, a result evicted and announced), one with an idempotency key on each append —
/// which the single statement writes — and one without, which goes in batches. Their
/// session rows, messages, tool calls, ledger entries and events are then equal, column
/// by column.
#[sqlx::test]
async fn batched_and_single_appends_write_the_same_rows(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    // The single statement writes an append with an idempotency key.
    play_mixed_appends(&mut client, "single", true).await;
    play_mixed_appends(&mut client, "batched", false).await;
    for (table, order) in SESSION_TABLES {
        let rows = rows_by_session(&pool, table, order).await;
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0].1, rows[1].1,
            "{table}: batched {} / single {}",
            rows[0].0, rows[1].0
        );
        assert_ne!(rows[0].1, "[]", "{table} has rows");
    }
    assert_eq!(session(&mut client, "batched").await.message_count, 8);
    let evicted: i64 = sqlx::query_scalar(
        "select count(*) from events e join sessions s on s.id = e.session_id
         where s.external_id = 'batched' and e.kind = 5",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(evicted, 1, "the long result's eviction, announced");
    let runs: (Vec<i64>, Vec<i32>) = sqlx::query_as(
        "select l.run_seqs, l.run_codes from ledger_entries l join sessions s on s.id = l.session_id
         where s.external_id = 'batched' and l.kind = 2 and l.key = 'pytest tests/test_x.py'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(runs, (vec![8], vec![1]), "the later result's exit status");
    server.stop().await;
}

/// The tables an append writes, each with the order its rows are compared in.
pub(crate) const SESSION_TABLES: [(&str, &str); 5] = [
    ("sessions", "t.id"),
    ("messages", "t.seq"),
    ("tool_calls", "t.call_id"),
    ("ledger_entries", "t.kind, t.key"),
    ("events", "t.session_seq"),
];

/// Session `id` created and given the same appends every time: tool calls answered
/// across appends and within one, usage reports after builds, task-ledger entries and a
/// result's exit status for a call of an earlier append, a result evicted and
/// announced; each append under an idempotency key when `idempotent`.
pub(crate) async fn play_mixed_appends(client: &mut Client, id: &str, idempotent: bool) {
    let usage = |input| pb::Usage {
        input_tokens: input,
        output_tokens: 20,
        cached_input_tokens: 100,
    };
    let steps: Vec<(bool, Vec<pb::Message>, Option<pb::Usage>)> = vec![
        (false, vec![user("fix the failing test")], None),
        (true, vec![call(&["c1", "c2"])], Some(usage(412))),
        (false, vec![result("c1", "3 passed, 1 failed")], None),
        (
            false,
            vec![
                result(
                    "c2",
                    &format!("diff --git a/x b/x\n{}", "+ a line\n".repeat(40)),
                ),
                user("and the docs"),
            ],
            None,
        ),
        (true, vec![assistant("done: both fixed")], Some(usage(530))),
        (
            false,
            vec![pb::Message {
                role: pb::Role::Assistant as i32,
                tool_calls: vec![pb::ToolCall {
                    id: "c3".into(),
                    name: "bash".into(),
                    arguments_json: r#"{"command":"pytest tests/test_x.py"}"#.into(),
                }],
                ..Default::default()
            }],
            None,
        ),
        (
            false,
            vec![result(
                "c3",
                "<returncode>1</returncode>\nValueError: bad value",
            )],
            None,
        ),
    ];
    let policy = pb::Policy {
        eviction_threshold_tokens: Some(50),
        ..window(100_000, 10_000)
    };
    create(client, id, policy).await;
    for (step, (build_first, messages, usage)) in steps.iter().enumerate() {
        if *build_first {
            build(client, id, pb::OutputFormat::Neutral).await.unwrap();
        }
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: id.into(),
                messages: messages.clone(),
                usage: *usage,
                idempotency_key: if idempotent {
                    format!("step-{step}")
                } else {
                    String::new()
                },
                ..Default::default()
            })
            .await
            .unwrap();
    }
}

/// `table`'s rows of each session as JSON (in `order`), without what names the session,
/// the rows' ids or the time of the write: (session name, rows), by name.
pub(crate) async fn rows_by_session(
    pool: &PgPool,
    table: &str,
    order: &str,
) -> Vec<(String, String)> {
    let sql = format!(
        "select s.external_id, coalesce(jsonb_agg(to_jsonb(t) - 'id' - 'session_id'
             - 'external_id' - 'forked_from' - 'request_hash' - 'created_at' - 'updated_at'
             - 'search' - 'tx'
             order by {order}) filter (where t.{key} is not null), '[]')::text
         from sessions s left join {table} t on t.{key} = s.id
         group by s.external_id order by s.external_id",
        key = if table == "sessions" {
            "id"
        } else {
            "session_id"
        }
    );
    sqlx::query_as::<_, (String, String)>(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await
        .unwrap()
}

/// (session id, content) of each of `writers_of`'s rows.
fn contents(written: &[(String, String, String)]) -> Vec<(&str, &str)> {
    written
        .iter()
        .map(|(id, _, content)| (id.as_str(), content.as_str()))
        .collect()
}

/// Keeps `store`'s one append writer busy: an append from `state` (session "a") written
/// while a transaction holds a lock on the messages table that every append's insert
/// waits for, until the transaction returned here ends. With the append's outcome to come.
pub(crate) async fn occupy_the_writer(
    pool: &PgPool,
    store: &ctxd::store::Store,
    state: ctxd::store::AppendState,
    note: &ctxd::message::Message,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    tokio::task::JoinHandle<ctxd::store::Appended>,
) {
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("lock table messages in share mode")
        .execute(&mut *holder)
        .await
        .unwrap();
    let busy = tokio::spawn({
        let (store, note) = (store.clone(), note.clone());
        async move { try_write_one(&store, state, &note).await.unwrap() }
    });
    wait_for_a_lock_waiter(pool).await;
    (holder, busy)
}

/// A transaction holding session `id`'s row lock.
async fn hold_row_lock(pool: &PgPool, id: &str) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("select 1 from sessions where external_id = $1 for update")
        .bind(id)
        .execute(&mut *holder)
        .await
        .unwrap();
    holder
}

/// (session id, inserting transaction id, content) of every message at `seq`, by
/// session id.
async fn writers_of(pool: &PgPool, seq: i64) -> Vec<(String, String, String)> {
    sqlx::query_as(
        "select s.external_id, m.xmin::text, m.content from messages m
         join sessions s on s.id = m.session_id where m.seq = $1 order by s.external_id",
    )
    .bind(seq)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Returns once a statement of the test's database waits for a lock (10 s at most).
async fn wait_for_a_lock_waiter(pool: &PgPool) {
    let patience = std::time::Duration::from_secs(10);
    let every = std::time::Duration::from_millis(5);
    let waited = crate::support::poll(patience, every, async || {
        let waiters: i64 = sqlx::query_scalar(
            "select count(*) from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        (waiters > 0).then_some(())
    })
    .await;
    assert!(waited.is_some(), "no statement waited for the lock");
}

/// A server, its client, a store on the same database and the default tenant, with
/// session "s" holding `first`: what the store-guard tests write against.
async fn guarded_session(
    pool: &PgPool,
    first: Vec<pb::Message>,
) -> (TestServer, Client, ctxd::store::Store, i64) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 10_000)).await;
    append(&mut client, "s", first).await.unwrap();
    let store = ctxd::store::Store::new(pool.clone());
    let tenant = store.default_tenant().await.unwrap();
    (server, client, store, tenant)
}

/// Writes `message` after what `state` holds, as making tool call "x" when it makes a
/// call, else as answering "x".
async fn write_touching_x(
    store: &ctxd::store::Store,
    state: ctxd::store::AppendState,
    message: &ctxd::message::Message,
) -> ctxd::store::Appended {
    let (batch, update) = one_more(&state.session, message, 5);
    let x = [("x".to_string(), batch[0].seq)];
    let (calls, answers): (&[_], &[_]) = if message.tool_calls.is_empty() {
        (&[], &x)
    } else {
        (&x, &[])
    };
    let write = ctxd::store::AppendWrite {
        calls,
        answers,
        ..only_messages(&batch, update)
    };
    store.append(state, write).await.unwrap()
}

/// Reads session "s" and writes `message` after it: it lands, and leaves the row in the
/// store's row cache.
async fn write_after_a_read(
    store: &ctxd::store::Store,
    tenant: i64,
    message: &ctxd::message::Message,
) {
    let read = store
        .append_state(tenant, "s", &[], None, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        write_one(store, read, message).await,
        ctxd::store::Appended::Applied { job_id: None }
    );
}

/// Writes `message` (counted as 9 tokens) after what `state` read, through the store's
/// guarded write.
async fn write_one(
    store: &ctxd::store::Store,
    state: ctxd::store::AppendState,
    message: &ctxd::message::Message,
) -> ctxd::store::Appended {
    try_write_one(store, state, message).await.unwrap()
}

/// Session `id`'s append state as `store` reads it from the table.
pub(crate) async fn read_state(
    store: &ctxd::store::Store,
    tenant: i64,
    id: &str,
) -> ctxd::store::AppendState {
    store
        .append_state(tenant, id, &[], None, false)
        .await
        .unwrap()
        .unwrap()
}

/// [`write_one`], with the store's error.
pub(crate) async fn try_write_one(
    store: &ctxd::store::Store,
    state: ctxd::store::AppendState,
    message: &ctxd::message::Message,
) -> ctxd::store::StoreResult<ctxd::store::Appended> {
    let (batch, update) = one_more(&state.session, message, 9);
    store.append(state, only_messages(&batch, update)).await
}

/// `message` appended after what `session` holds, counted as `tokens`, and the session's
/// aggregates after it (a user message starts a turn).
pub(crate) fn one_more<'a>(
    session: &ctxd::session::Session,
    message: &'a ctxd::message::Message,
    tokens: i64,
) -> ([ctxd::store::NewMessage<'a>; 1], ctxd::store::SessionUpdate) {
    let starts_turn = message.role == ctxd::message::Role::User;
    let turn = session.turn_count + i64::from(starts_turn);
    let new = ctxd::store::NewMessage {
        seq: session.message_count + 1,
        turn,
        token_count: tokens,
        view_tokens: tokens,
        view_state: ctxd::message::ViewState::Full,
        message,
    };
    let update = ctxd::store::SessionUpdate {
        version: session.version + 1,
        message_count: session.message_count + 1,
        turn_count: turn,
        log_tokens: session.log_tokens + tokens,
        content_bytes: session.content_bytes + message.counted_bytes() as i64,
        view_tokens: session.view_tokens + tokens,
        last_turn_tokens: tokens
            + if starts_turn {
                0
            } else {
                session.last_turn_tokens
            },
        evicted: 0,
        anchor: None,
        usage: (0, 0, 0),
    };
    ([new], update)
}

/// No task-ledger rows.
static NO_LEDGER: ctxd::ledger::extract::Extracted = ctxd::ledger::extract::Extracted {
    entries: Vec::new(),
    outcomes: Vec::new(),
};

/// A write of messages alone (no tool calls, events, key, job or ledger rows).
pub(crate) fn only_messages<'a>(
    batch: &'a [ctxd::store::NewMessage<'a>],
    update: ctxd::store::SessionUpdate,
) -> ctxd::store::AppendWrite<'a> {
    ctxd::store::AppendWrite {
        batch,
        calls: &[],
        answers: &[],
        update,
        events: Vec::new(),
        budget_status: None,
        idempotency: None,
        job: None,
        pending: None,
        ledger: &NO_LEDGER,
    }
}
