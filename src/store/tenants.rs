//! Tenants and their API keys. Keys are stored as SHA-256 hashes.
use super::Store;
use super::pooler::Conn;
use super::{StoreError, StoreResult};

impl Store {
    /// The tenant of an active key with this hash.
    pub async fn tenant_for_key(&self, key_hash: &[u8]) -> StoreResult<Option<i64>> {
        sqlx::query_scalar(
            "select tenant_id from api_keys where key_hash = $1 and revoked_at is null",
        )
        .bind(key_hash)
        .fetch_optional(self.db())
        .await
        .map_err(StoreError::from)
    }

    /// Whether any active key exists: if so, every request must present one.
    pub async fn any_api_keys(&self) -> StoreResult<bool> {
        sqlx::query_scalar("select exists (select 1 from api_keys where revoked_at is null)")
            .fetch_one(self.db())
            .await
            .map_err(StoreError::from)
    }

    /// Whether any key was ever created, revoked or not: a server that has had keys
    /// never serves calls without one.
    pub async fn any_api_key_ever(&self) -> StoreResult<bool> {
        sqlx::query_scalar("select exists (select 1 from api_keys)")
            .fetch_one(self.db())
            .await
            .map_err(StoreError::from)
    }

    /// The tenant serving requests when no keys are configured.
    pub async fn default_tenant(&self) -> StoreResult<i64> {
        sqlx::query_scalar("select id from tenants where name = 'default'")
            .fetch_one(self.db())
            .await
            .map_err(StoreError::from)
    }

    /// Creates the tenant if it does not exist and adds a key for it.
    pub async fn add_api_key(
        &self,
        tenant_name: &str,
        key_hash: &[u8],
        key_prefix: &str,
    ) -> StoreResult<i64> {
        let mut tx = self.pool.begin().await?;
        let tenant_id: i64 = sqlx::query_scalar(include_str!("sql/tenants/upsert.sql"))
            .bind(tenant_name)
            .fetch_one(Conn::new(&mut tx, self.pooler))
            .await?;
        sqlx::query("insert into api_keys (tenant_id, key_hash, key_prefix) values ($1, $2, $3)")
            .bind(tenant_id)
            .bind(key_hash)
            .bind(key_prefix)
            .execute(Conn::new(&mut tx, self.pooler))
            .await?;
        tx.commit().await?;
        Ok(tenant_id)
    }
}
