//! The requests waiting for a database connection, as the metrics read them
//! (`db.client.connection.pending_requests`): a store whose main pool has one
//! connection, held by a transaction, while other requests wait for it.
use std::collections::BTreeMap;
use std::time::Duration;

use ctxd::store::{Endpoints, Pooler, Store};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// Waits (polling the sample, up to a deadline) until the main pool counts `want`
/// requests waiting for a connection.
async fn pending_reaches(store: &Store, want: usize) {
    let every = Duration::from_millis(1);
    let reached = crate::support::poll(Duration::from_secs(10), every, async || {
        (store.pool_sample().main.pending == want).then_some(())
    })
    .await;
    let pending = store.pool_sample().main.pending;
    assert!(
        reached.is_some(),
        "the main pool counted {pending} waiting requests, never {want}"
    );
}

/// One connection held by a session's write transaction; a read (a statement on the
/// pool) and a lock (a transaction) wait for it and are counted; cancelled waiters
/// are counted no more; the read is served once the transaction ends, and nothing is
/// left counted.
async fn waiters_are_counted(endpoints: Endpoints) {
    let store = Store::connect_to(endpoints, 1, ctxd::store::Migrations::Apply)
        .await
        .unwrap();
    let tenant = store.default_tenant().await.unwrap();
    store
        .create_session(
            tenant,
            "held",
            &ctxd::policy::Policy::default(),
            &BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(store.pool_sample().main.max, 1);
    assert_eq!(store.pool_sample().main.pending, 0);

    let held = store.lock_session(tenant, "held").await.unwrap().unwrap();
    let read = tokio::spawn({
        let store = store.clone();
        async move { store.session(tenant, "held").await }
    });
    pending_reaches(&store, 1).await;

    // Waiters whose futures are dropped (a cancelled RPC) leave the count.
    let lock = tokio::spawn({
        let store = store.clone();
        async move {
            store
                .lock_session(tenant, "held")
                .await
                .map(|tx| tx.is_some())
        }
    });
    pending_reaches(&store, 2).await;
    lock.abort();
    assert!(lock.await.unwrap_err().is_cancelled());
    assert_eq!(store.pool_sample().main.pending, 1);
    let dropped_read = store.session(tenant, "held");
    let timed_out = tokio::time::timeout(Duration::from_millis(1), dropped_read).await;
    assert!(timed_out.is_err(), "the connection is still held");
    assert_eq!(store.pool_sample().main.pending, 1);

    drop(held);
    let session = read.await.unwrap().unwrap().expect("the session");
    assert_eq!(session.external_id, "held");
    assert_eq!(store.pool_sample().main.pending, 0);
    // And the pool serves again.
    assert!(store.lock_session(tenant, "held").await.unwrap().is_some());
    assert_eq!(store.pool_sample().main.pending, 0);
    store.close().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn waiting_requests_are_counted_without_a_pooler(
    _: PgPoolOptions,
    options: PgConnectOptions,
) {
    waiters_are_counted(Endpoints::direct(options)).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn waiting_requests_are_counted_through_a_transaction_pooler(
    _: PgPoolOptions,
    options: PgConnectOptions,
) {
    // PostgreSQL itself stands in for the pooler: the store's statements run as they
    // would through one (unnamed, each in a transaction).
    waiters_are_counted(Endpoints {
        database: options.clone(),
        direct: Some(options),
        pooler: Pooler::Transaction,
    })
    .await;
}
