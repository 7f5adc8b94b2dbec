//! The provider endpoint's heads: for each conversation a client holds, the session it
//! continues in and a digest of the history that session holds.
use super::Store;
use super::StoreResult;

/// Where a client's conversation stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyHead {
    pub session_id: String,
    /// Messages of the client's history the session holds.
    pub message_count: i64,
    /// Their chained fingerprints.
    pub digest: Vec<u8>,
    /// The session's version after the endpoint's last append to it.
    pub session_version: i64,
}

impl Store {
    pub async fn proxy_head(&self, tenant_id: i64, key: &str) -> StoreResult<Option<ProxyHead>> {
        let row: Option<(String, i64, Vec<u8>, i64)> =
            sqlx::query_as(include_str!("sql/proxy/select.sql"))
                .bind(tenant_id)
                .bind(key)
                .fetch_optional(self.db())
                .await?;
        Ok(row.map(
            |(session_id, message_count, digest, session_version)| ProxyHead {
                session_id,
                message_count,
                digest,
                session_version,
            },
        ))
    }

    pub async fn set_proxy_head(
        &self,
        tenant_id: i64,
        key: &str,
        head: &ProxyHead,
    ) -> StoreResult<()> {
        sqlx::query(include_str!("sql/proxy/upsert.sql"))
            .bind(tenant_id)
            .bind(key)
            .bind(&head.session_id)
            .bind(head.message_count)
            .bind(&head.digest)
            .bind(head.session_version)
            .execute(self.db())
            .await?;
        Ok(())
    }
}
