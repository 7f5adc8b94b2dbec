//! The batch writer keeps its connection while appends wait: the batch that queued
//! behind a busy writer runs on the backend the busy one ran on, with no pool hand-out
//! (and its ping) between them.
use ctxd::message::{Message, Role};
use ctxd::store::Appended;
use sqlx::PgPool;

use crate::harness::{TestServer, append, create, user, window};
use crate::replicas::{occupy_the_writer, read_state, try_write_one};

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
    let store = ctxd::store::Store::new(pool.clone()).append_writers(1);
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
