//! API keys: only the SHA-256 of a key is stored, with its first characters (the
//! prefix) to tell keys apart in listings, when it was created, when it expires (if it
//! does) and when it was revoked (if it was). A key past its expiry is refused like a
//! revoked one.
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::Store;
use super::StoreResult;
use super::pooler::Conn;

/// A key to store: the hash of the whole key, its prefix, its expiry.
#[derive(Debug, Clone, Copy)]
pub struct NewKey<'a> {
    pub hash: &'a [u8],
    pub prefix: &'a str,
    pub expires_at: Option<DateTime<Utc>>,
}

/// An active key, as the authentication of a call needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveKey {
    pub tenant_id: i64,
    /// How long the key has left, when it expires.
    pub expires_in: Option<Duration>,
}

/// A key as `ctxd key list` shows it (never the key itself: the store does not have it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: i64,
    pub tenant_id: i64,
    pub tenant: String,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl KeyRecord {
    /// Whether the key is accepted at `now`: neither revoked nor expired.
    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// What a rotation did, or why it did nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The new key's id, and the old key's record with its new expiry.
    Rotated { new_key_id: i64, old: KeyRecord },
    /// No key has that id.
    NotFound,
    /// The key is already revoked or expired: there is nothing to rotate.
    Inactive(KeyRecord),
}

type KeyRow = (
    i64,
    i64,
    String,
    String,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
);

fn record(
    (id, tenant_id, tenant, prefix, created_at, expires_at, revoked_at): KeyRow,
) -> KeyRecord {
    KeyRecord {
        id,
        tenant_id,
        tenant,
        prefix,
        created_at,
        expires_at,
        revoked_at,
    }
}

const SELECT: &str = include_str!("sql/keys/select.sql");

impl Store {
    /// The tenant of an active key with this hash (neither revoked nor expired).
    pub async fn active_key(&self, key_hash: &[u8]) -> StoreResult<Option<ActiveKey>> {
        let row: Option<(i64, Option<f64>)> = sqlx::query_as(include_str!("sql/keys/active.sql"))
            .bind(key_hash)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(|(tenant_id, seconds_left)| ActiveKey {
            tenant_id,
            // The query only returns keys whose expiry is ahead, so this is positive;
            // a clock oddity making it not counts as expiring now.
            expires_in: seconds_left
                .map(|seconds| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)),
        }))
    }

    /// Adds a key to an existing tenant; its id, or none when no tenant has that name.
    pub async fn add_key(&self, tenant_name: &str, key: &NewKey<'_>) -> StoreResult<Option<i64>> {
        let mut tx = self.pool.begin().await?;
        let Some(tenant_id) = tenant_id(Conn::new(&mut tx, self.pooler), tenant_name).await? else {
            return Ok(None);
        };
        let id = insert_key(Conn::new(&mut tx, self.pooler), tenant_id, key).await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    /// Every key, or one tenant's, oldest first.
    pub async fn keys(&self, tenant_name: Option<&str>) -> StoreResult<Vec<KeyRecord>> {
        let rows: Vec<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "{SELECT} where $1::text is null or t.name = $1 order by k.id"
        )))
        .bind(tenant_name)
        .fetch_all(self.db())
        .await?;
        Ok(rows.into_iter().map(record).collect())
    }

    /// The key with this id.
    pub async fn key(&self, id: i64) -> StoreResult<Option<KeyRecord>> {
        let row: Option<KeyRow> =
            sqlx::query_as(sqlx::AssertSqlSafe(format!("{SELECT} where k.id = $1")))
                .bind(id)
                .fetch_optional(self.db())
                .await?;
        Ok(row.map(record))
    }

    /// The key whose hash this is.
    pub async fn key_by_hash(&self, key_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "{SELECT} where k.key_hash = $1"
        )))
        .bind(key_hash)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(record))
    }

    /// The active keys whose stored prefix starts with `prefix`.
    pub async fn active_keys_by_prefix(&self, prefix: &str) -> StoreResult<Vec<KeyRecord>> {
        let rows: Vec<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "{SELECT} where starts_with(k.key_prefix, $1) and k.revoked_at is null \
             and (k.expires_at is null or k.expires_at > now()) order by k.id"
        )))
        .bind(prefix)
        .fetch_all(self.db())
        .await?;
        Ok(rows.into_iter().map(record).collect())
    }

    /// Revokes a key (a revoked key keeps its first revocation time); none when no key
    /// has this id.
    pub async fn revoke_key(&self, id: i64) -> StoreResult<Option<KeyRecord>> {
        let row: Option<KeyRow> = sqlx::query_as(include_str!("sql/keys/revoke.sql"))
            .bind(id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(record))
    }

    /// Adds `new` to the tenant of key `id` and makes that key expire after `grace`
    /// (or keeps its earlier expiry), in one transaction; only an active key rotates.
    pub async fn rotate_key(
        &self,
        id: i64,
        new: &NewKey<'_>,
        grace: Duration,
    ) -> StoreResult<Rotation> {
        let mut tx = self.pool.begin().await?;
        let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "{SELECT} where k.id = $1 for update of k"
        )))
        .bind(id)
        .fetch_optional(Conn::new(&mut tx, self.pooler))
        .await?;
        let Some(mut old) = row.map(record) else {
            return Ok(Rotation::NotFound);
        };
        let now: DateTime<Utc> = sqlx::query_scalar("select now()")
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?;
        if !old.is_active(now) {
            return Ok(Rotation::Inactive(old));
        }
        let new_key_id = insert_key(Conn::new(&mut tx, self.pooler), old.tenant_id, new).await?;
        old.expires_at = sqlx::query_scalar(include_str!("sql/keys/rotate_old.sql"))
            .bind(id)
            .bind(grace.as_secs_f64())
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?;
        tx.commit().await?;
        Ok(Rotation::Rotated { new_key_id, old })
    }
}

/// The id of the tenant named `name`, if there is one.
async fn tenant_id(conn: Conn<'_>, name: &str) -> StoreResult<Option<i64>> {
    Ok(sqlx::query_scalar(include_str!("sql/tenants/id.sql"))
        .bind(name)
        .fetch_optional(conn)
        .await?)
}

/// Inserts `key` for tenant `tenant_id`; its id.
pub(super) async fn insert_key(
    conn: Conn<'_>,
    tenant_id: i64,
    key: &NewKey<'_>,
) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(include_str!("sql/keys/insert.sql"))
        .bind(tenant_id)
        .bind(key.hash)
        .bind(key.prefix)
        .bind(key.expires_at)
        .fetch_one(conn)
        .await?)
}
