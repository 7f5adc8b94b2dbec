//! A connection pool that counts the requests waiting for a connection, which sqlx's
//! pool does not tell. Every connection the store and its listeners take comes through
//! [`Pool::acquire`], [`Pool::begin`] or [`Pool::listener`]: a request counts from
//! when it starts to wait until it has a connection or has failed, or its future is
//! dropped (a cancelled RPC).
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::pool::PoolConnection;
use sqlx::postgres::PgListener;
use sqlx::{PgPool, Postgres, Transaction};

/// A pool and the count of requests waiting on it. Clones share both.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pool: PgPool,
    pending: Arc<AtomicUsize>,
}

/// One request counted as waiting while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn start(pending: &'a AtomicUsize) -> Waiting<'a> {
        pending.fetch_add(1, Ordering::Relaxed);
        Waiting(pending)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Pool {
    pub(crate) fn new(pool: PgPool) -> Pool {
        Pool {
            pool,
            pending: Arc::default(),
        }
    }

    /// The sqlx pool, for its figures and for closing it; connections come from
    /// [`Pool::acquire`].
    pub(crate) fn inner(&self) -> &PgPool {
        &self.pool
    }

    /// Requests waiting for a connection now.
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// A connection, counted as a waiting request until it is had.
    pub(crate) async fn acquire(&self) -> Result<PoolConnection<Postgres>, sqlx::Error> {
        let _waiting = Waiting::start(&self.pending);
        self.pool.acquire().await
    }

    /// A transaction on a connection from [`Pool::acquire`] (its BEGIN is not waiting
    /// for a connection any more).
    pub(crate) async fn begin(&self) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        let connection = self.acquire().await?;
        // What `PgPool::begin` does after its own acquire (public, though left out of
        // sqlx's documentation).
        Transaction::begin(connection, None).await
    }

    /// A listener on a connection of this pool, counted as a waiting request until it
    /// has one. It does not reconnect by itself: once `try_recv` reports the connection
    /// lost (`Ok(None)`), the caller drops it and takes a new one here.
    pub(crate) async fn listener(&self) -> Result<PgListener, sqlx::Error> {
        let mut listener = {
            let _waiting = Waiting::start(&self.pending);
            PgListener::connect_with(&self.pool).await?
        };
        listener.eager_reconnect(false);
        Ok(listener)
    }
}
