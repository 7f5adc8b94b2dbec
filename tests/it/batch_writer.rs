//! The batch writer: it keeps its connection while appends wait (the batch that queued
//! behind a busy writer runs on the backend the busy one ran on, with no pool hand-out
//! and its ping between them), it writes a burst queued behind a lone append as two
//! halves, and appends that announce events go in the batch with their events.
use ctxd::events::EventDetail;
use ctxd::message::{Message, Role};
use ctxd::store::{Appended, Store};
use sqlx::PgPool;

use crate::harness::{TestServer, append, create, user, window};
use crate::replicas::{occupy_the_writer, one_more, only_messages, read_state, try_write_one};

#[sqlx::test]
async fn the_batch_queued_behind_the_writer_runs_on_its_connection(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    for id in ["a", "b", "c"] {
        create(&mut client, id, window(100_000, 10_000)).await;
        append(&mut client, id, vec![user("start")]).await.unwrap();
    }
    // The backend that inserts each message, noted by a trigger of this test's database.
    sqlx::raw_sql(
        "create table inserted_by (session_id bigint, seq bigint, pid int);
         create function note_backend() returns trigger language plpgsql as $$
         begin
             insert into inserted_by values (new.session_id, new.seq, pg_backend_pid());
             return new;
         end $$;
         create trigger note_backend after insert on messages
             for each row execute function note_backend();",
    )
    .execute(&pool)
    .await
    .unwrap();
    let store = Store::new(pool.clone()).append_writers(1);
    let tenant = store.default_tenant().await.unwrap();
    let read = |id: &'static str| read_state(&store, tenant, id);
    let note = |id: &str| Message::text(Role::Assistant, format!("{id} 1"));

    let (holder, busy) = occupy_the_writer(&pool, &store, read("a").await, &note("a")).await;
    let (b, c) = (read("b").await, read("c").await);
    let (b_note, c_note) = (note("b"), note("c"));
    let mut queued = Box::pin(futures::future::join(
        try_write_one(&store, b, &b_note),
        try_write_one(&store, c, &c_note),
    ));
    // Polled once: both are queued behind the busy writer.
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let (b, c) = queued.await;
    assert_eq!(b.unwrap(), Appended::Applied { job_id: None });
    assert_eq!(c.unwrap(), Appended::Applied { job_id: None });

    let backends: Vec<(String, i32, String)> = sqlx::query_as(
        "select s.external_id, i.pid, m.xmin::text from inserted_by i
         join sessions s on s.id = i.session_id
         join messages m on m.session_id = i.session_id and m.seq = i.seq
         where i.seq = 2 order by s.external_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(backends.len(), 3, "{backends:?}");
    assert_ne!(backends[0].2, backends[1].2, "a's batch, then b's and c's");
    assert_eq!(backends[1].2, backends[2].2, "b and c committed together");
    assert_eq!(
        backends[0].1, backends[1].1,
        "{backends:?}: the queued batch ran on the busy writer's connection"
    );
}

/// A burst queued behind a lone append is written as two halves, not as one batch of
/// all of it: otherwise a burst settles into alternating batches of one and of all the
/// rest, whose round trips are mostly fixed (crates/server/src/store/batch/mod.rs, `balanced`).
#[sqlx::test]
async fn a_burst_behind_a_lone_append_is_written_in_halves(pool: PgPool) {
    const BURST: usize = 20;
    let (_server, ids, store, tenant, notes) = started(&pool, "s", BURST + 1).await;

    let lone = read_state(&store, tenant, &ids[0]).await;
    let (holder, busy) = occupy_the_writer(&pool, &store, lone, &notes[0]).await;
    let mut states = Vec::new();
    for id in &ids[1..] {
        states.push(read_state(&store, tenant, id).await);
    }
    let mut queued = Box::pin(futures::future::join_all(
        states
            .into_iter()
            .zip(&notes[1..])
            .map(|(state, note)| try_write_one(&store, state, note)),
    ));
    // Polled once: the whole burst is queued behind the lone append, in order.
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    for written in queued.await {
        assert_eq!(written.unwrap(), Appended::Applied { job_id: None });
    }

    // The new messages by the transaction that wrote them, in the order they began: the
    // burst's first batch takes half of the burst and the lone append's batch together.
    let first_half = (BURST + 1).div_ceil(2);
    let batches: Vec<Vec<String>> = sqlx::query_scalar(
        "select array_agg(s.external_id order by s.external_id) from messages m
         join sessions s on s.id = m.session_id
         where m.seq = 2 group by m.xmin::text::bigint order by m.xmin::text::bigint",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        batches,
        [
            ids[..1].to_vec(),
            ids[1..=first_half].to_vec(),
            ids[first_half + 1..].to_vec()
        ],
        "the lone append, the first half of the burst as queued, then the rest"
    );
}

/// Appends that announce events (a tool result evicted, the budget status crossing a
/// threshold) and enqueue a summarization job are written by the batch, not alone: each
/// append's events and job by the transaction that writes its message, the events
/// numbered on from its session's event seq, the session's budget status set, each
/// append told its job's id, and one NOTIFY for the batch's events with its newest event
/// and one for its jobs.
#[sqlx::test]
async fn appends_with_events_and_jobs_are_written_in_the_batch(pool: PgPool) {
    const QUEUED: usize = 4;
    let (server, ids, store, tenant, notes) = started(&pool, "e", QUEUED + 1).await;
    // No server's workers take the jobs (nor write events of their own) from here on.
    server.stop().await;
    // Each session's events so far, distinct and not zero, so that the batch's are seen
    // to be numbered on from each session's own.
    sqlx::query("update sessions set event_seq = 10 * id")
        .execute(&pool)
        .await
        .unwrap();
    let seqs_before: Vec<i64> =
        sqlx::query_scalar("select event_seq from sessions order by external_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    let last_before: i64 = sqlx::query_scalar("select coalesce(max(id), 0) from events")
        .fetch_one(&pool)
        .await
        .unwrap();

    // On a pool of its own, and the states read before the writer is held: the test's
    // pool is small.
    let listening = PgPool::connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    let mut listener = sqlx::postgres::PgListener::connect_with(&listening)
        .await
        .unwrap();
    listener.listen(ctxd::store::EVENTS_CHANNEL).await.unwrap();
    listener.listen(ctxd::store::JOBS_CHANNEL).await.unwrap();
    let job = ctxd::store::NewJob {
        kind: "summarize",
        args: serde_json::json!({}),
        priority: 0,
        max_attempts: 3,
        notify_done: false,
    };
    let job = &job;
    let mut states = Vec::new();
    for id in &ids[1..] {
        states.push(read_state(&store, tenant, id).await);
    }
    let lone = read_state(&store, tenant, &ids[0]).await;
    let (holder, busy) = occupy_the_writer(&pool, &store, lone, &notes[0]).await;
    let store = &store;
    let mut queued =
        Box::pin(futures::future::join_all(
            states.into_iter().zip(&notes[1..]).enumerate().map(
                |(index, (state, note))| async move {
                    let (batch, update) = one_more(&state.session, note, 9);
                    let mut write = only_messages(&batch, update);
                    // The first one's enqueue announces the jobs (the gate's choice).
                    write.job = Some((job, index == 0));
                    write.events = vec![
                        EventDetail::OutputEvicted {
                            seq: batch[0].seq,
                            tool_name: "bash".into(),
                            tokens: 9,
                            preview_tokens: 4,
                        },
                        EventDetail::BudgetThresholdCrossed {
                            previous_status: 1,
                            status: 2,
                            used_tokens: 70_000,
                            context_window: 100_000,
                        },
                    ];
                    write.budget_status = Some(ctxd::budget::Status::Warn);
                    store.append(state, write).await
                },
            ),
        ));
    // Polled once: all of them are queued behind the busy writer.
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let mut job_ids = Vec::new();
    for written in queued.await {
        match written.unwrap() {
            Appended::Applied { job_id: Some(id) } => job_ids.push(id),
            other => panic!("applied with its job's id, not {other:?}"),
        }
    }

    // Per queued session: its new events' seqs, its event seq and budget status now,
    // and the transactions that wrote its events and its new message.
    type Written = (String, Vec<i64>, i64, i16, Vec<String>, String);
    let written: Vec<Written> = sqlx::query_as(
        "select s.external_id, array_agg(e.session_seq order by e.session_seq),
             s.event_seq, s.budget_status, array_agg(distinct e.xmin::text), m.xmin::text
         from sessions s
         join messages m on m.session_id = s.id and m.seq = 2
         join events e on e.session_id = s.id and e.id > $1
         where s.external_id <> 'e00'
         group by s.external_id, s.event_seq, s.budget_status, m.xmin::text
         order by s.external_id",
    )
    .bind(last_before)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(written.len(), QUEUED, "{written:?}");
    for ((id, seqs, event_seq, status, tx, message_tx), before) in
        written.iter().zip(&seqs_before[1..])
    {
        assert_eq!(
            seqs,
            &[before + 1, before + 2],
            "{id}: numbered on from its seq"
        );
        assert_eq!(*event_seq, before + 2, "{id}: the session's event seq");
        assert_eq!(*status, 2, "{id}: its budget status");
        assert_eq!(
            tx,
            std::slice::from_ref(message_tx),
            "{id}: with its message"
        );
    }
    let batch_tx: std::collections::HashSet<&String> = written.iter().map(|row| &row.5).collect();
    assert_eq!(batch_tx.len(), 1, "one batch wrote them all: {written:?}");

    let jobs: Vec<(i64, String)> = sqlx::query_as(
        "select j.id, j.xmin::text from jobs j join sessions s on s.id = j.session_id
         order by s.external_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        jobs.iter().map(|job| job.0).collect::<Vec<_>>(),
        job_ids,
        "each append's job, as its append was told"
    );
    assert!(
        jobs.iter().all(|job| batch_tx.contains(&job.1)),
        "the jobs by the batch: {jobs:?}"
    );

    let newest: i64 = sqlx::query_scalar("select max(id) from events")
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut notified = [
        listener.recv().await.unwrap(),
        listener.recv().await.unwrap(),
    ];
    notified.sort_by_key(|n| n.channel().to_string());
    let notified: Vec<(&str, &str)> = notified
        .iter()
        .map(|n| (n.channel(), n.payload()))
        .collect();
    let newest = newest.to_string();
    assert_eq!(
        notified,
        [
            (ctxd::store::EVENTS_CHANNEL, newest.as_str()),
            (ctxd::store::JOBS_CHANNEL, "")
        ],
        "the batch's NOTIFYs"
    );
    assert!(
        listener.next_buffered().is_none(),
        "one NOTIFY for the batch's events, one for its jobs"
    );

    // Appends whose enqueues did not take the gate announce none: with those jobs
    // ended, four more enqueues without it; a NOTIFY sent after they committed is the
    // next one the listener gets.
    sqlx::query("update jobs set state = 'completed'")
        .execute(&pool)
        .await
        .unwrap();
    let mut states = Vec::new();
    for id in &ids[1..] {
        states.push(read_state(store, tenant, id).await);
    }
    let written = futures::future::join_all(states.into_iter().zip(&notes[1..]).map(
        |(state, note)| async move {
            let (batch, update) = one_more(&state.session, note, 9);
            let mut write = only_messages(&batch, update);
            write.job = Some((job, false));
            store.append(state, write).await
        },
    ))
    .await;
    for written in written {
        assert!(
            matches!(written.unwrap(), Appended::Applied { job_id: Some(_) }),
            "each enqueued its job"
        );
    }
    sqlx::query("select pg_notify($1, 'after')")
        .bind(ctxd::store::JOBS_CHANNEL)
        .execute(&pool)
        .await
        .unwrap();
    let next = listener.recv().await.unwrap();
    assert_eq!(
        (next.channel(), next.payload()),
        (ctxd::store::JOBS_CHANNEL, "after"),
        "no NOTIFY for enqueues that did not take the gate"
    );
}

/// `count` sessions (`prefix` and a number), each with a first user message, through a
/// server; a store with one append writer on `pool`, the default tenant, and a message
/// for each session to append next.
async fn started(
    pool: &PgPool,
    prefix: &str,
    count: usize,
) -> (TestServer, Vec<String>, Store, i64, Vec<Message>) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let ids: Vec<String> = (0..count)
        .map(|index| format!("{prefix}{index:02}"))
        .collect();
    for id in &ids {
        create(&mut client, id, window(100_000, 10_000)).await;
        append(&mut client, id, vec![user("start")]).await.unwrap();
    }
    let store = Store::new(pool.clone()).append_writers(1);
    let tenant = store.default_tenant().await.unwrap();
    let notes = ids
        .iter()
        .map(|id| Message::text(Role::Assistant, format!("{id} 1")))
        .collect();
    (server, ids, store, tenant, notes)
}
