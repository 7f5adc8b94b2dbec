//! Tenants: the `default` tenant of calls without a key, and the named ones API keys
//! belong to (their keys are in `keys.rs`).
use chrono::{DateTime, Utc};

use super::Store;
use super::keys::NewKey;
use super::pooler::Conn;
use super::{StoreError, StoreResult};

/// A tenant as `ctxd tenant list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantRecord {
    pub id: i64,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// Keys neither revoked nor expired.
    pub active_keys: i64,
}

impl Store {
    /// The tenant serving calls without a key, when anonymous access is on.
    pub async fn default_tenant(&self) -> StoreResult<i64> {
        sqlx::query_scalar("select id from tenants where name = 'default'")
            .fetch_one(self.db())
            .await
            .map_err(StoreError::from)
    }

    /// Creates the tenant if it does not exist and adds a key for it; the tenant's id
    /// and the key's.
    pub async fn create_tenant_with_key(
        &self,
        tenant_name: &str,
        key: &NewKey<'_>,
    ) -> StoreResult<(i64, i64)> {
        let mut tx = self.pool.begin().await?;
        let tenant_id: i64 = sqlx::query_scalar(include_str!("sql/tenants/upsert.sql"))
            .bind(tenant_name)
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?;
        let key_id =
            super::keys::insert_key(Conn::new(&mut tx, self.pooler), tenant_id, key).await?;
        tx.commit().await?;
        Ok((tenant_id, key_id))
    }

    /// Creates the tenant if it does not exist and adds a key that never expires; the
    /// tenant's id.
    pub async fn add_api_key(
        &self,
        tenant_name: &str,
        key_hash: &[u8],
        key_prefix: &str,
    ) -> StoreResult<i64> {
        let key = NewKey {
            hash: key_hash,
            prefix: key_prefix,
            expires_at: None,
        };
        let (tenant_id, _) = self.create_tenant_with_key(tenant_name, &key).await?;
        Ok(tenant_id)
    }

    /// Every tenant by name, with its count of active keys.
    pub async fn tenants(&self) -> StoreResult<Vec<TenantRecord>> {
        let rows: Vec<(i64, String, DateTime<Utc>, i64)> =
            sqlx::query_as(include_str!("sql/tenants/list.sql"))
                .fetch_all(self.db())
                .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, created_at, active_keys)| TenantRecord {
                id,
                name,
                created_at,
                active_keys,
            })
            .collect())
    }
}
