//! Tenants' quotas: their overrides (`tenant_quotas`, set by `ctxd tenant quota`) and
//! the text their sessions hold together (the stored-bytes quota's count).
use super::{Store, StoreError, StoreResult};
use crate::quota::QuotaOverrides;

/// A `tenant_quotas` row as read: the tenant, then each override (null: the default).
type QuotaRow = (
    i64,
    Option<f64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

/// A stored count as the core's (the table's checks keep it non-negative).
fn count(value: Option<i64>) -> Option<u64> {
    value.map(|value| u64::try_from(value).unwrap_or(0))
}

/// A count as the table stores it (quotas are bounded far below `i64::MAX`).
fn column(value: Option<u64>) -> Option<i64> {
    value.map(|value| i64::try_from(value).unwrap_or(i64::MAX))
}

fn overrides((_, rps, burst, append, live, stored): QuotaRow) -> QuotaOverrides {
    QuotaOverrides {
        requests_per_sec: rps,
        requests_burst: count(burst),
        append_bytes_per_min: count(append),
        live_sessions: count(live),
        stored_bytes: count(stored),
    }
}

impl Store {
    /// The tenant's overrides (none set: all `None`).
    pub async fn tenant_quotas(&self, tenant_id: i64) -> StoreResult<QuotaOverrides> {
        let row: Option<QuotaRow> = sqlx::query_as(include_str!("sql/quotas/select.sql"))
            .bind(tenant_id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(overrides).unwrap_or_default())
    }

    /// Sets the named tenant's overrides: those `changes` gives replace the stored ones,
    /// the others are kept, or cleared first with `reset`. The overrides now stored, or
    /// `None` when no tenant has the name.
    pub async fn set_tenant_quotas(
        &self,
        tenant_name: &str,
        changes: &QuotaOverrides,
        reset: bool,
    ) -> StoreResult<Option<QuotaOverrides>> {
        let row: Option<QuotaRow> = sqlx::query_as(include_str!("sql/quotas/set.sql"))
            .bind(tenant_name)
            .bind(changes.requests_per_sec)
            .bind(column(changes.requests_burst))
            .bind(column(changes.append_bytes_per_min))
            .bind(column(changes.live_sessions))
            .bind(column(changes.stored_bytes))
            .bind(reset)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(overrides))
    }

    /// The bytes of text the tenant's sessions hold together: each stored message once
    /// (a fork's inherited bytes are its ancestors'; a hidden session's rows are still
    /// stored).
    pub async fn tenant_stored_bytes(&self, tenant_id: i64) -> StoreResult<u64> {
        let sum: i64 = sqlx::query_scalar(
            "select coalesce(sum(content_bytes - base_bytes), 0)::bigint from sessions \
             where tenant_id = $1",
        )
        .bind(tenant_id)
        .fetch_one(self.db())
        .await
        .map_err(StoreError::from)?;
        Ok(u64::try_from(sum).unwrap_or(0))
    }
}
