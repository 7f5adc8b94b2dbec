//! Statements through a transaction pooler (PgBouncer with `pool_mode = transaction`),
//! which gives a client's next transaction to whichever server connection is free: what
//! a statement leaves on a server connection is gone, or someone else's, by the next.
//!
//! sqlx leaves two things there. It names the statements it prepares (`sqlx_s_1`, …,
//! counted per client connection) and keeps them for reuse, so through a pooler a name
//! is missing on the next server connection or already taken by another client's
//! statement; without its statement cache it still names them, and never closes them.
//! And it prepares in a round trip of its own (Parse, Sync) before it binds and
//! executes (Bind, Execute, Sync): outside a transaction the pooler may send the second
//! round trip to another server connection than the first.
//!
//! So with [`Pooler::Transaction`] every statement of the store is unnamed (nothing is
//! left behind) and runs inside a transaction (both round trips reach the same server
//! connection): the caller's, or one of its own. Without a pooler statements stay as
//! sqlx makes them, prepared once per connection and reused (decision 0012).
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt as _, TryStreamExt as _};
use serde::{Deserialize, Serialize};
use sqlx::error::BoxDynError;
use sqlx::postgres::{
    PgArguments, PgConnectOptions, PgQueryResult, PgRow, PgStatement, PgTypeInfo,
};
use sqlx::{Either, Execute, Executor, PgConnection, Postgres, SqlStr};

use super::pool::Pool;

/// What sits between ctxd's pools and PostgreSQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Pooler {
    /// Nothing, or a pooler that gives each client a server connection of its own for
    /// as long as it is connected (PgBouncer's session pooling).
    #[default]
    None,
    /// A pooler in transaction pooling mode (PgBouncer `pool_mode = transaction`):
    /// every statement unnamed, inside a transaction.
    Transaction,
}

impl Pooler {
    /// Connection settings for this mode. Through a transaction pooler: no statement
    /// cache, and no startup parameter but those PgBouncer knows (sqlx's
    /// `extra_float_digits` only matters to floats read as text; ctxd reads them in
    /// binary).
    pub(super) fn options(self, options: PgConnectOptions) -> PgConnectOptions {
        match self {
            Pooler::None => options,
            Pooler::Transaction => options.statement_cache_capacity(0).extra_float_digits(None),
        }
    }
}

/// The error of a statement sqlx would prepare and keep, through a transaction pooler.
fn not_through_pooler() -> sqlx::Error {
    sqlx::Error::Configuration(
        "statements are not kept prepared through a transaction pooler".into(),
    )
}

/// A query run as an unnamed statement: prepared, bound and executed, then gone.
struct Unnamed<E>(E);

impl<'q, E: Execute<'q, Postgres>> Execute<'q, Postgres> for Unnamed<E> {
    fn sql(self) -> SqlStr {
        self.0.sql()
    }

    fn statement(&self) -> Option<&PgStatement> {
        self.0.statement()
    }

    fn take_arguments(&mut self) -> Result<Option<PgArguments>, BoxDynError> {
        self.0.take_arguments()
    }

    fn persistent(&self) -> bool {
        false
    }
}

/// The store's statements on a pool, each on a connection from [`Pool::acquire`] (so
/// that requests waiting for one are counted): as sqlx runs them when the pool reaches
/// PostgreSQL directly; through a transaction pooler each one unnamed, in a transaction
/// of its own.
#[derive(Debug, Clone, Copy)]
pub struct Db<'p> {
    pool: &'p Pool,
    pooler: Pooler,
}

impl<'p> Db<'p> {
    pub(super) fn new(pool: &'p Pool, pooler: Pooler) -> Db<'p> {
        Db { pool, pooler }
    }
}

impl<'p> Executor<'p> for Db<'p> {
    type Database = Postgres;

    /// The results, read to the end before the first is passed on (as `fetch_all` and
    /// `execute` would), on a connection returned to the pool as soon as they are read.
    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<PgQueryResult, PgRow>, sqlx::Error>>
    where
        'p: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        let Db { pool, pooler } = self;
        let results = async move {
            let results: Vec<_> = match pooler {
                Pooler::None => {
                    let mut conn = pool.acquire().await?;
                    conn.fetch_many(query).try_collect().await?
                }
                Pooler::Transaction => {
                    let mut tx = pool.begin().await?;
                    let results = (&mut *tx).fetch_many(Unnamed(query)).try_collect().await?;
                    tx.commit().await?;
                    results
                }
            };
            Ok::<_, sqlx::Error>(futures::stream::iter(results.into_iter().map(Ok)))
        };
        futures::stream::once(results).try_flatten().boxed()
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<PgRow>, sqlx::Error>>
    where
        'p: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        let Db { pool, pooler } = self;
        Box::pin(async move {
            match pooler {
                Pooler::None => pool.acquire().await?.fetch_optional(query).await,
                Pooler::Transaction => {
                    let mut tx = pool.begin().await?;
                    let row = (&mut *tx).fetch_optional(Unnamed(query)).await?;
                    tx.commit().await?;
                    Ok(row)
                }
            }
        })
    }

    fn prepare_with<'e>(
        self,
        sql: SqlStr,
        parameters: &'e [PgTypeInfo],
    ) -> BoxFuture<'e, Result<PgStatement, sqlx::Error>>
    where
        'p: 'e,
    {
        let pool = self.pool;
        match self.pooler {
            Pooler::None => {
                Box::pin(async move { pool.acquire().await?.prepare_with(sql, parameters).await })
            }
            Pooler::Transaction => Box::pin(async { Err(not_through_pooler()) }),
        }
    }

    fn describe<'e>(
        self,
        sql: SqlStr,
    ) -> BoxFuture<'e, Result<sqlx::Describe<Postgres>, sqlx::Error>>
    where
        'p: 'e,
    {
        let pool = self.pool;
        match self.pooler {
            Pooler::None => Box::pin(async move { pool.acquire().await?.describe(sql).await }),
            Pooler::Transaction => Box::pin(async { Err(not_through_pooler()) }),
        }
    }
}

/// The store's statements on a connection inside a transaction: through a transaction
/// pooler each one unnamed (the transaction keeps its server connection until it ends,
/// and no statement outlives it).
#[derive(Debug)]
pub struct Conn<'c> {
    conn: &'c mut PgConnection,
    pooler: Pooler,
}

impl<'c> Conn<'c> {
    pub(super) fn new(conn: &'c mut PgConnection, pooler: Pooler) -> Conn<'c> {
        Conn { conn, pooler }
    }
}

impl<'c> Executor<'c> for Conn<'c> {
    type Database = Postgres;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<PgQueryResult, PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        match self.pooler {
            Pooler::None => self.conn.fetch_many(query),
            Pooler::Transaction => self.conn.fetch_many(Unnamed(query)),
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        match self.pooler {
            Pooler::None => self.conn.fetch_optional(query),
            Pooler::Transaction => self.conn.fetch_optional(Unnamed(query)),
        }
    }

    fn prepare_with<'e>(
        self,
        sql: SqlStr,
        parameters: &'e [PgTypeInfo],
    ) -> BoxFuture<'e, Result<PgStatement, sqlx::Error>>
    where
        'c: 'e,
    {
        match self.pooler {
            Pooler::None => self.conn.prepare_with(sql, parameters),
            Pooler::Transaction => Box::pin(async { Err(not_through_pooler()) }),
        }
    }

    fn describe<'e>(
        self,
        sql: SqlStr,
    ) -> BoxFuture<'e, Result<sqlx::Describe<Postgres>, sqlx::Error>>
    where
        'c: 'e,
    {
        match self.pooler {
            Pooler::None => self.conn.describe(sql),
            Pooler::Transaction => Box::pin(async { Err(not_through_pooler()) }),
        }
    }
}
