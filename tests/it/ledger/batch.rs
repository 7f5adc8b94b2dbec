//! The task ledger's rows ride in the append batch: appends with ledger rows that queue
//! behind a busy writer go out in one statement and one commit, each with its own ledger
//! rows in the commit of its messages, and an item of the batch whose guard refuses it
//! writes no ledger row while the others land.
use ctxd::ledger::extract::{Extracted, extract};
use ctxd::message::{Message, Role, ToolCall};
use ctxd::store::{AppendState, Appended, Store, StoreResult};
use sqlx::PgPool;

use super::run;
use crate::harness::*;
use crate::replicas::{occupy_the_writer, one_more, only_messages};

/// A ledger row as stored, and the transaction that wrote it last.
#[derive(Debug, PartialEq, Eq, sqlx::FromRow)]
struct Row {
    kind: i16,
    key: String,
    seqs: Vec<i64>,
    run_seqs: Vec<i64>,
    run_codes: Vec<i32>,
    writer: String,
}

/// Session `id`'s ledger rows, by kind and key.
async fn rows(pool: &PgPool, id: &str) -> Vec<Row> {
    sqlx::query_as(
        "select l.kind, l.key, l.seqs, l.run_seqs, l.run_codes, l.xmin::text as writer
         from ledger_entries l join sessions s on s.id = l.session_id
         where s.external_id = $1 order by l.kind, l.key",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The transaction that wrote session `id`'s message `seq`.
async fn message_writer(pool: &PgPool, id: &str, seq: i64) -> String {
    sqlx::query_scalar(
        "select m.xmin::text from messages m join sessions s on s.id = m.session_id
         where s.external_id = $1 and m.seq = $2",
    )
    .bind(id)
    .bind(seq)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// An assistant message running `command` as tool call `id`, in the store's terms.
fn running(id: &str, command: &str) -> Message {
    let mut message = Message::text(Role::Assistant, "");
    message.tool_calls = vec![ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }];
    message
}

/// A tool result of call `id` showing exit status `code` and a Python error.
fn failed(id: &str, code: i32, error: &str) -> Message {
    let mut message = Message::text(
        Role::Tool,
        format!("<returncode>{code}</returncode>\n<output>\n{error}\n</output>"),
    );
    message.tool_call_id = id.into();
    message
}

/// Writes `message` after what `state` read, through the store's guarded write, with the
/// tool call it makes or answers and the ledger rows the engine extracts from it.
async fn write_with_ledger(
    store: &Store,
    state: AppendState,
    message: &Message,
) -> StoreResult<Appended> {
    let (batch, update) = one_more(&state.session, message, 9);
    let seq = batch[0].seq;
    let made: Vec<(String, i64)> = message
        .tool_calls
        .iter()
        .map(|call| (call.id.clone(), seq))
        .collect();
    let answered: Vec<(String, i64)> = if message.tool_call_id.is_empty() {
        Vec::new()
    } else {
        vec![(message.tool_call_id.clone(), seq)]
    };
    let ledger: Extracted = extract(&[(seq, message)]);
    assert!(
        !ledger.entries.is_empty() || !ledger.outcomes.is_empty(),
        "the append has ledger rows"
    );
    let write = ctxd::store::AppendWrite {
        calls: &made,
        answers: &answered,
        ledger: &ledger,
        ..only_messages(&batch, update)
    };
    store.append(state, write).await
}

/// Sessions `ids`, each with a user message and then (through the API) `pytest <id>`
/// run as call `<id>-run`, unanswered; a store with one append writer on the same
/// database, and the default tenant.
async fn sessions_with_a_run(pool: &PgPool, ids: &[&str]) -> (TestServer, Store, i64) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    for id in ids {
        create(&mut client, id, window(100_000, 10_000)).await;
        append(
            &mut client,
            id,
            vec![
                user("start"),
                run(&format!("{id}-run"), &format!("pytest tests/test_{id}.py")),
            ],
        )
        .await
        .unwrap();
    }
    // One writer: while its statement waits, every other append queues.
    let store = Store::new(pool.clone()).append_writers(1);
    let tenant = store.default_tenant().await.unwrap();
    (server, store, tenant)
}

async fn read(store: &Store, tenant: i64, id: &str) -> AppendState {
    store
        .append_state(tenant, id, &[format!("{id}-run")], None, false)
        .await
        .unwrap()
        .unwrap()
}

/// b's append answers its earlier run (an exit status for the command entry, an error
/// entry) and d's runs a new command on a file (command and file entries): queued behind
/// a busy writer, both go in one batch, and each one's ledger rows are written by that
/// batch's transaction, with its messages, with the seqs and runs of its own append.
#[sqlx::test]
async fn appends_with_ledger_rows_ride_in_one_batch_each_with_its_rows(pool: PgPool) {
    let (server, store, tenant) = sessions_with_a_run(&pool, &["a", "b", "d"]).await;
    let note = Message::text(Role::Assistant, "a 1");
    let b_result = failed("b-run", 1, "ValueError: bad value in b");
    let d_call = running("d-2", "cat src/d_module.py");
    let (b, d) = (
        read(&store, tenant, "b").await,
        read(&store, tenant, "d").await,
    );
    let before = (rows(&pool, "b").await, rows(&pool, "d").await);
    assert!(before.0.iter().all(|row| row.run_seqs.is_empty()));

    let (holder, busy) =
        occupy_the_writer(&pool, &store, read(&store, tenant, "a").await, &note).await;
    let mut queued = Box::pin(futures::future::join(
        write_with_ledger(&store, b, &b_result),
        write_with_ledger(&store, d, &d_call),
    ));
    // Polled once: both are queued behind the busy writer.
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let (b, d) = queued.await;
    assert_eq!(b.unwrap(), Appended::Applied { job_id: None });
    assert_eq!(d.unwrap(), Appended::Applied { job_id: None });

    let batch = message_writer(&pool, "b", 3).await;
    assert_eq!(
        message_writer(&pool, "d", 3).await,
        batch,
        "b and d committed together"
    );
    assert_ne!(
        message_writer(&pool, "a", 3).await,
        batch,
        "a was written before them"
    );

    let b_rows = rows(&pool, "b").await;
    let command = b_rows
        .iter()
        .find(|row| row.kind == 2)
        .expect("b's command entry");
    assert_eq!(command.key, "pytest tests/test_b.py");
    assert_eq!(
        (command.seqs.clone(), command.run_seqs.clone()),
        (vec![2, 3], vec![3])
    );
    assert_eq!(command.run_codes, [1], "the exit status of b's result");
    assert_eq!(command.writer, batch, "written by the batch's commit");
    let error = b_rows
        .iter()
        .find(|row| row.kind == 3)
        .expect("b's error entry");
    assert_eq!(
        (
            error.key.as_str(),
            error.seqs.as_slice(),
            error.writer.as_str()
        ),
        ("ValueError: bad value in b", &[3][..], batch.as_str())
    );
    assert_eq!(b_rows.len(), before.0.len() + 1, "one new entry for b");

    let d_rows = rows(&pool, "d").await;
    let new: Vec<(i16, &str, &[i64])> = d_rows
        .iter()
        .filter(|row| row.writer == batch)
        .map(|row| (row.kind, row.key.as_str(), row.seqs.as_slice()))
        .collect();
    assert_eq!(
        new,
        [
            (1, "src/d_module.py", &[3][..]),
            (2, "cat src/d_module.py", &[3][..])
        ],
        "d's file and command, from d's append"
    );
    assert_eq!(d_rows.len(), before.1.len() + 2);

    // And the API reads them.
    let mut client = server.client.clone();
    let ledger = super::ledger(&mut client, "d").await;
    assert!(
        ledger
            .iter()
            .any(|entry| entry.key == "src/d_module.py" && entry.seqs == [3])
    );
    server.stop().await;
}

/// c's row changes after its append read it, so the batch's guard refuses c's item: its
/// error entry is not written and its command gets no run, while e's append in the same
/// batch lands with its rows.
#[sqlx::test]
async fn a_raced_item_of_a_batch_writes_no_ledger_rows(pool: PgPool) {
    let (server, store, tenant) = sessions_with_a_run(&pool, &["a", "c", "e"]).await;
    let note = Message::text(Role::Assistant, "a 1");
    let c_result = failed("c-run", 2, "KeyError: 'missing'");
    let e_result = failed("e-run", 0, "TypeError: no good");
    let (c, e) = (
        read(&store, tenant, "c").await,
        read(&store, tenant, "e").await,
    );
    let (c_before, e_before) = (rows(&pool, "c").await, rows(&pool, "e").await);
    sqlx::query("update sessions set updated_at = now() where external_id = 'c'")
        .execute(&pool)
        .await
        .unwrap();

    let (holder, busy) =
        occupy_the_writer(&pool, &store, read(&store, tenant, "a").await, &note).await;
    let mut queued = Box::pin(futures::future::join(
        write_with_ledger(&store, c, &c_result),
        write_with_ledger(&store, e, &e_result),
    ));
    assert!(futures::poll!(&mut queued).is_pending());
    holder.commit().await.unwrap();
    assert_eq!(busy.await.unwrap(), Appended::Applied { job_id: None });
    let (c, e) = queued.await;
    assert_eq!(c.unwrap(), Appended::Raced, "c's guard refused it");
    assert_eq!(e.unwrap(), Appended::Applied { job_id: None });

    assert_eq!(rows(&pool, "c").await, c_before, "c's ledger is untouched");
    let batch = message_writer(&pool, "e", 3).await;
    let e_rows = rows(&pool, "e").await;
    let command = e_rows
        .iter()
        .find(|row| row.kind == 2)
        .expect("e's command");
    assert_eq!(
        (command.run_seqs.as_slice(), command.run_codes.as_slice()),
        (&[3][..], &[0][..])
    );
    assert_eq!(command.writer, batch);
    assert!(
        e_rows
            .iter()
            .any(|row| row.kind == 3 && row.key == "TypeError: no good" && row.writer == batch),
        "e's error entry, in e's commit: {e_rows:?}"
    );
    assert_eq!(e_rows.len(), e_before.len() + 1, "e gained its error entry");
    server.stop().await;
}
